"""The pluggy entry point of the receptor (its hooks are added as the receptor is built)."""
