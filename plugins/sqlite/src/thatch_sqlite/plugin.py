"""The pluggy entry point: offers :class:`SQLiteStorage` when the config asks for sqlite."""

from __future__ import annotations

from typing import TYPE_CHECKING

from thatch.plugin import hookimpl

if TYPE_CHECKING:
    from thatch.plugin import Config, Storage

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

    return SQLiteStorage(config.db_path, mmap_bytes=_mmap_bytes(config))


def _mmap_bytes(config: Config) -> int:
    """``[storage] mmap_mb`` in bytes (default: thatch_sqlite.connect.DEFAULT_MMAP_BYTES)."""
    from thatch.plugin import ConfigError

    from thatch_sqlite.connect import DEFAULT_MMAP_BYTES

    table = config.sections.get("storage", {})
    value = table.get("mmap_mb") if isinstance(table, dict) else None
    if value is None:
        return DEFAULT_MMAP_BYTES
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise ConfigError(
            f"config file {config.paths.config_file}: storage.mmap_mb = {value!r}; "
            "use a whole number of megabytes, 0 to read without a memory map"
        )
    return value * 1024 * 1024
