"""An example receptor plugin (being written)."""
