"""thatch-sqlite: thatch's default storage backend, one SQLite file.

Memories live in one WAL-mode SQLite database with an FTS5 index for word
search and an in-memory float32 matrix per embedding model for exact vector
search. :mod:`thatch_sqlite.plugin` registers it under the ``thatch``
entry-point group; :class:`thatch_sqlite.storage.SQLiteStorage` is the backend
itself. Nothing heavy is imported here.
"""
