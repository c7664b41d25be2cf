"""The daemon: one process per user and database that holds the model and answers hooks.

:mod:`~thatch.daemon.lifecycle` starts and stops it, :mod:`~thatch.daemon.server`
listens on the Unix socket, :mod:`~thatch.daemon.handlers` answers requests,
:mod:`~thatch.daemon.hook_events` turns hook payloads into nudges,
:mod:`~thatch.daemon.mcp_session` serves the MCP sessions ``thatch mcp``
relays, :mod:`~thatch.daemon.spool` replays events that arrived while it was
away, and :mod:`~thatch.daemon.client` is how the CLI reaches it.
"""
