"""The pluggy entry point: offers :class:`PostgresStorage` for the parts the config gives postgres.

Off unless the config file says so: ``[storage] memories = "postgres"`` (or
``backend = "postgres"``) with the server in ``[storage.postgres]``
(:mod:`thatch_postgres.settings`). SQLite stays the default. Memories, the
decision model and the prediction log of one installation share one
:class:`~thatch_postgres.storage.PostgresStorage` (one pool), whichever of
them the config keeps in postgres.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from thatch.plugin import hookimpl
from thatch.plugin.per_config import PerConfig

if TYPE_CHECKING:
    from thatch.plugin import (
        Config,
        ConfigTable,
        DecisionStorage,
        MemoryStorage,
        PredictionStorage,
    )

    from thatch_postgres.storage import PostgresStorage

#: The ``[storage]`` backend value this plugin answers to.
BACKEND = "postgres"


@hookimpl
def thatch_config_tables() -> tuple[ConfigTable, ...]:
    """``[storage.postgres]`` (:mod:`thatch_postgres.settings`)."""
    from thatch_postgres.settings import POSTGRES_TABLE

    return (POSTGRES_TABLE,)


@hookimpl
def thatch_memory_storage(config: Config) -> MemoryStorage | None:
    """The configured server's schema when memories are kept in ``postgres``."""
    return _storage_for(config, "memories")


@hookimpl
def thatch_decision_storage(config: Config) -> DecisionStorage | None:
    """The configured server's schema when the decision model is kept in ``postgres``."""
    return _storage_for(config, "decisions")


@hookimpl
def thatch_prediction_storage(config: Config) -> PredictionStorage | None:
    """The configured server's schema when the prediction log is kept in ``postgres``."""
    return _storage_for(config, "predictions")


def _open(config: Config) -> PostgresStorage:
    # Imported here so that loading the plugin (every thatch command, hooks
    # included) never imports psycopg unless postgres is in use.
    from thatch_postgres.settings import PostgresSettings
    from thatch_postgres.storage import PostgresStorage

    settings = PostgresSettings.of(config)
    return PostgresStorage(
        settings.dsn,
        settings.schema,
        retry_seconds=settings.retry_seconds,
        server_search=settings.server_search,
        server_search_from=settings.server_search_from,
    )


# The three parts share one object (one pool).
_storage_for: PerConfig[PostgresStorage] = PerConfig(BACKEND, _open)
