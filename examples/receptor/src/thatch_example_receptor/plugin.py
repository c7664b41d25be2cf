"""The example receptor's entry point (being written)."""
