"""The pluggy entry point: offers :class:`SQLiteStorage` when the config asks for sqlite."""

from __future__ import annotations

from typing import TYPE_CHECKING

from thatch import hookimpl

if TYPE_CHECKING:
    from thatch.config import Config
    from thatch.storage import Storage

#: The ``[storage] backend`` value this plugin answers to.
BACKEND = "sqlite"


@hookimpl
def thatch_storage(config: Config) -> Storage | None:
    """Open the database at ``config.db_path`` when the backend is ``sqlite``."""
    if config.storage_backend != BACKEND:
        return None
    # Imported here so that loading the plugin (every thatch command, hooks
    # included) does not pay for numpy and sqlite3 until storage is needed.
    from thatch_sqlite.storage import SQLiteStorage

    return SQLiteStorage(config.db_path)
