"""``[storage.postgres]``: which server and schema keep the parts set to ``postgres``.

The connection string never carries a password: the config file is plain
text that people copy between machines and paste into issues. libpq finds
the secret itself, in ``PGPASSWORD``, ``~/.pgpass`` or a service file
(``~/.pg_service.conf``), and an empty ``dsn`` lets the ``PG*`` environment
variables name the whole server.
"""

from __future__ import annotations

import re
from typing import Literal

import attrs
from thatch.plugin import Config, ConfigKey, ConfigTable
from thatch.plugin.database_url import holds_password, without_secrets

DEFAULT_SCHEMA = "thatch"

#: Seconds a call keeps trying after the connection is lost, unless the config says otherwise.
#: Longer than a server takes to restart (a few seconds), short enough that someone at a
#: prompt hears of an outage soon; the waits between tries are thatch_postgres.retry's.
DEFAULT_RETRY_SECONDS = 10.0

#: ``server_search``: "auto" searches large stores on the server where it has pgvector,
#: "off" never (thatch_postgres.server_search).
Mode = Literal["auto", "off"]
MODES: tuple[Mode, ...] = ("auto", "off")

#: ``server_search_from``: vectors of one model in the searched stores from which the
#: server searches. Measured at 100k (bench/postgres_recall.py --server-search, random
#: unit vectors of 384 dimensions), the copy is exact and faster warm (p50 8.5 ms
#: against 39 ms), and the HNSW index's R@20 only 0.21 at ef_search 200, 0.34 at 400;
#: the server wins only the first search (115 ms against 690 ms) and the copy's memory
#: (190 MB a process). So the server takes over only past what was measured; a team
#: whose real vectors show a good recall there may lower it.
DEFAULT_FROM = 1_000_000

# A plain lower-case identifier: it goes into the connection's search_path
# unquoted, so nothing that needs quoting is accepted.
_SCHEMA = re.compile(r"[a-z_][a-z0-9_]{0,62}")


_PASSWORD = "it holds a password; keep the password in ~/.pgpass, a service file or PGPASSWORD"


def _no_password(dsn: str) -> str | None:
    from psycopg.conninfo import conninfo_to_dict

    # Before libpq parses it: its parse errors quote the text they stopped at,
    # which may be the password (invalid percent-encoded token: "pw%zz").
    if holds_password(dsn):
        return _PASSWORD
    try:
        parts = conninfo_to_dict(dsn)
    except Exception as exc:  # psycopg raises ProgrammingError; any parse failure is the answer
        return f"not a connection string ({str(exc).strip()})"
    if parts.get("password"):
        return _PASSWORD
    return None


def _not_negative(seconds: float) -> str | None:
    return None if seconds >= 0 else "use 0 (never wait) or more seconds"


def _search_mode(mode: str) -> str | None:
    if mode in MODES:
        return None
    return 'use "auto" (the server searches large stores where it has pgvector) or "off"'


def _count(vectors: int) -> str | None:
    return None if vectors >= 0 else "use 0 (always, where pgvector is) or more vectors"


def _plain_schema(name: str) -> str | None:
    if _SCHEMA.fullmatch(name):
        return None
    return "use lower-case letters, digits and _ (at most 63), starting with a letter or _"


POSTGRES_TABLE = ConfigTable(
    name="storage.postgres",
    keys=(
        ConfigKey(
            "dsn",
            str,
            "",
            "libpq connection string or postgresql:// URL, without a password",
            check=_no_password,
            shown=without_secrets,
        ),
        ConfigKey(
            "schema",
            str,
            DEFAULT_SCHEMA,
            "schema that holds thatch's tables (one per team or person sharing a database)",
            check=_plain_schema,
        ),
        ConfigKey(
            "retry_seconds",
            float,
            DEFAULT_RETRY_SECONDS,
            "seconds a read or write keeps trying while the server is unreachable",
            check=_not_negative,
        ),
        ConfigKey(
            "server_search",
            str,
            "auto",
            'search by meaning on the server where it has pgvector ("auto"), or never ("off")',
            check=_search_mode,
        ),
        ConfigKey(
            "server_search_from",
            int,
            DEFAULT_FROM,
            "vectors of the model in the searched stores from which the server searches",
            check=_count,
        ),
    ),
    help="the PostgreSQL server of the storage parts set to postgres",
)


@attrs.frozen
class PostgresSettings:
    """Where to connect, resolved from the config file and the environment."""

    dsn: str
    schema: str = DEFAULT_SCHEMA
    retry_seconds: float = DEFAULT_RETRY_SECONDS
    server_search: Mode = "auto"
    server_search_from: int = DEFAULT_FROM

    @classmethod
    def of(cls, config: Config) -> PostgresSettings:
        """The table of ``config`` (checked), with ``THATCH_DATABASE_URL`` for an empty dsn."""
        # Read from the file rather than config.table(): a config loaded
        # without the plugins' tables (as in tests and scripts) works too.
        # Config.load has refused a password in the environment's URL.
        table = POSTGRES_TABLE.read(config.sections, config.paths.config_file)
        return cls(
            dsn=table["dsn"] or config.database_url or "",
            schema=table["schema"],
            retry_seconds=table["retry_seconds"],
            server_search=table["server_search"],
            server_search_from=table["server_search_from"],
        )
