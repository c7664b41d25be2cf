"""The pluggy entry point: offers :class:`SQLiteStorage` for the parts the config gives sqlite.

Memories, the decision model and the prediction log of one installation
share one :class:`~thatch_sqlite.storage.SQLiteStorage` (one file, one
connection) whichever of them the config keeps in sqlite: the three hooks
hand back the same open object for the same config, and core closes it once.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from thatch.plugin import hookimpl
from thatch.plugin.per_config import PerConfig

if TYPE_CHECKING:
    from thatch.plugin import (
        Config,
        DecisionStorage,
        MemoryStorage,
        PredictionStorage,
    )

    from thatch_sqlite.storage import SQLiteStorage

#: The ``[storage]`` backend value this plugin answers to.
BACKEND = "sqlite"


@hookimpl
def thatch_memory_storage(config: Config) -> MemoryStorage | None:
    """The database at ``config.db_path`` when memories are kept in ``sqlite``."""
    return _storage_for(config, "memories")


@hookimpl
def thatch_decision_storage(config: Config) -> DecisionStorage | None:
    """The database at ``config.db_path`` when the decision model is kept in ``sqlite``."""
    return _storage_for(config, "decisions")


@hookimpl
def thatch_prediction_storage(config: Config) -> PredictionStorage | None:
    """The database at ``config.db_path`` when the prediction log is kept in ``sqlite``."""
    return _storage_for(config, "predictions")


def _open(config: Config) -> SQLiteStorage:
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


# The three parts of one installation share one object (one file).
_storage_for: PerConfig[SQLiteStorage] = PerConfig(BACKEND, _open)
