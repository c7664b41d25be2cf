"""An example harness plugin: a fourth coding agent for thatch, with no change to core.

The agent is a made-up CLI, ``example-agent``. Its hooks send one JSON line
on stdin and read one JSON line back; its config is one JSON file. See
``README.md`` for how this plugin is put together.
"""

#: The harness's name: ``thatch hook example EVENT``, ``thatch setup --example``.
HARNESS = "example"
