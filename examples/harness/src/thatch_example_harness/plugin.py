"""The pluggy entry point of the example harness."""
