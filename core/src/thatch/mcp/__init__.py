"""thatch's MCP server (:mod:`.server`, in the daemon or in process) and the standard-library relay
``thatch mcp`` runs (:mod:`.relay`).

Nothing is imported here: the relay must stay on the standard library.
"""
