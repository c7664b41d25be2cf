"""Where ``thatch migrate`` reads and writes: ``--from`` and ``--to`` parsed and opened.

A place is a ``postgresql://`` URL (the server's backend, never with a
password, as with ``THATCH_DATABASE_URL``), ``sqlite:PATH`` or a plain file
path (an SQLite file). Every part is opened through the plugin that keeps
that backend, with a config that differs from this home's only in where
storage is: so any backend a plugin offers can be migrated, and the checks
a plugin makes of its own settings still apply.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

import attrs

from thatch.plugin.config import STORAGE_PARTS, Config, StoragePart
from thatch.plugin.database_url import PASSWORD_FIX, holds_password, scheme, without_secrets
from thatch.plugin.errors import ConfigError, InvalidInputError

if TYPE_CHECKING:
    from thatch.plugin.tables import ConfigTable

#: URL schemes of a database server, and the storage backend each selects.
SERVER_SCHEMES = {"postgresql": "postgres", "postgres": "postgres"}
SQLITE_PREFIX = "sqlite:"
#: What every SQLite database file begins with.
_SQLITE_MAGIC = b"SQLite format 3\x00"
EXAMPLES = "postgresql://user@host:5432/database, sqlite:PATH or a file path"

Role = Literal["--from", "--to"]


@attrs.frozen
class Place:
    """One backend that keeps every part: an SQLite file or a database server's schema."""

    backend: str
    #: The SQLite file (backend sqlite).
    path: Path | None = None
    #: The server's URL (a server backend), without a password.
    url: str | None = None
    #: The server's schema; None keeps this home's ``[storage.<backend>]`` one or the default.
    schema: str | None = None

    def describe(self) -> str:
        """The place as messages name it (never a password: none is accepted)."""
        if self.path is not None:
            return f"sqlite file {self.path}"
        where = f"{self.backend} server {without_secrets(self.url or '')}"
        return where + (f" (schema {self.schema})" if self.schema else "")

    def config(self, home: Config, declared: Iterable[ConfigTable] = ()) -> Config:
        """``home``'s config with every storage part kept here; ``declared``: the plugins' tables.

        Parts or stores the home sends elsewhere (``[storage] memories = ...``)
        are dropped, so that nothing stays behind in the home's backends.
        """
        sections = dict(home.sections)
        storage: dict[str, Any] = dict(_mapping(sections.get("storage")))
        # Parts and stores the home routes elsewhere: here, every one stays here.
        for key in (*STORAGE_PARTS, "stores", "db_path"):
            storage.pop(key, None)
        storage["backend"] = self.backend
        if self.url is not None:
            server = dict(_mapping(storage.get(self.backend)))
            server["dsn"] = self.url
            if self.schema is not None:
                server["schema"] = self.schema
            storage[self.backend] = server
        sections["storage"] = storage
        # Made anew rather than evolved: any routing a Config may hold keeps
        # its default (everything in storage_backend).
        config = Config(
            paths=home.paths,
            db_path=self.path if self.path is not None else home.db_path,
            storage_backend=self.backend,
            model=home.model,
            model_path=home.model_path,
            blocked_plugins=home.blocked_plugins,
            sections=sections,
        )
        return config.with_tables(declared)


def parse(text: str, role: Role, schema: str | None = None) -> Place:
    """The place ``text`` names; InvalidInputError naming ``role`` and the fix otherwise.

    Nothing is opened or created here. A ``--from`` file must exist and be
    an SQLite database; a ``--to`` file may be new, in a folder that exists.
    """
    raw = text.strip()
    if not raw:
        raise InvalidInputError(f"{role} is empty; give {EXAMPLES}")
    named = scheme(raw)
    if named in SERVER_SCHEMES:
        _refuse_password(raw, role)
        return Place(SERVER_SCHEMES[named], url=raw, schema=schema)
    if named and not raw.lower().startswith(SQLITE_PREFIX):
        raise InvalidInputError(
            f"{role} {without_secrets(raw)!r}: thatch cannot migrate to or from "
            f"{named}:// places; give {EXAMPLES}"
        )
    if schema is not None:
        raise InvalidInputError(
            f"{role}-schema is for a database server, and {role} {raw!r} names an SQLite file; "
            f"drop {role}-schema"
        )
    path = raw[len(SQLITE_PREFIX) :] if raw.lower().startswith(SQLITE_PREFIX) else raw
    if path.startswith("///"):
        path = path[2:]  # sqlite:///abs/path, as URLs spell an absolute path
    return Place("sqlite", path=_sqlite_file(path, raw, role))


def where(config: Config, part: StoragePart) -> tuple[object, ...]:
    """Where ``config`` keeps ``part``, comparable between two configs.

    The backend and, for sqlite, the file; for another backend, its table
    (``[storage.<backend>]``, defaults filled in) with the server the
    environment names standing in for an empty ``dsn``.
    """
    backend = config.backend_for(part)
    if backend == "sqlite":
        return (backend, config.db_path.expanduser().resolve())
    table = dict(config.tables.get(f"storage.{backend}", {}))
    if not table.get("dsn") and config.database_url:
        table["dsn"] = config.database_url
    return (backend, tuple(sorted(table.items())))


def refuse_empty_home(home: Config) -> None:
    """InvalidInputError when this home keeps a part in an SQLite file that does not exist.

    Opening it would create an empty one, and there would be nothing to copy.
    """
    in_sqlite = any(home.backend_for(part) == "sqlite" for part in STORAGE_PARTS)
    if in_sqlite and not home.db_path.expanduser().is_file():
        raise InvalidInputError(
            f"this home has no data yet (no file {home.db_path}); name the data to copy "
            "with --from, or --home for another home"
        )


def refuse_same(source: Config, target: Config, shown: str) -> None:
    """InvalidInputError when the target is where the source keeps every part already.

    One part already there is not an error (copying it onto itself adds
    nothing): a home whose parts are apart may gather them in one place.
    """
    if all(where(source, part) == where(target, part) for part in STORAGE_PARTS):
        raise InvalidInputError(
            f"--to {shown} is where the source keeps its data already; "
            "name another place with --to, or the other end with --from"
        )


def _refuse_password(url: str, role: Role) -> None:
    if holds_password(url):
        raise InvalidInputError(
            f"{role} holds a password, which thatch never takes on a command line "
            f"(shells keep history, ps shows arguments); {PASSWORD_FIX}; "
            f"then give {role} {without_secrets(url)}"
        )


def _sqlite_file(path: str, raw: str, role: Role) -> Path:
    if not path:
        raise InvalidInputError(f"{role} {raw!r} names no file; give sqlite:PATH or a file path")
    file = Path(path).expanduser().resolve()
    if file.is_dir():
        raise InvalidInputError(
            f"{role} {raw!r} is a folder; name the SQLite file in it, e.g. {file / 'thatch.db'}"
        )
    if role == "--from" and not file.is_file():
        raise InvalidInputError(
            f"--from {raw!r}: there is no file {file}; name an existing thatch SQLite file "
            "(thatch doctor shows this home's)"
        )
    if role == "--to" and not file.parent.is_dir():
        raise InvalidInputError(
            f"--to {raw!r}: the folder {file.parent} does not exist; create it first"
        )
    if file.is_file() and file.stat().st_size > 0:
        with file.open("rb") as handle:
            if handle.read(len(_SQLITE_MAGIC)) != _SQLITE_MAGIC:
                raise InvalidInputError(
                    f"{role} {raw!r}: {file} is not an SQLite database; "
                    "name a thatch SQLite file, or a new file to create"
                )
    return file


def _mapping(value: object) -> Mapping[str, Any]:
    return value if isinstance(value, Mapping) else {}


def checked(place: Place, home: Config, declared: Iterable[ConfigTable], role: Role) -> Config:
    """:meth:`Place.config`, a bad value of the plugin's table named as ``role``'s."""
    try:
        return place.config(home, declared)
    except ConfigError as exc:
        raise InvalidInputError(f"{role} {place.describe()}: {exc}") from None
