"""An example harness plugin for thatch."""
