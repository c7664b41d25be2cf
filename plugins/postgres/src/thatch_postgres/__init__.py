"""thatch-postgres: thatch's memories on a PostgreSQL server, shared by machines or a team.

Selected by configuration only (``[storage] memories = "postgres"``); SQLite
stays the embedded default. See the package README for the settings.
"""
