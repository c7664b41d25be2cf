"""``thatch setup --storage``: which backend keeps the data, written into thatch's config file.

Only thatch's own config file changes (``[storage] backend`` and, for a
server, ``[storage.<backend>] dsn`` and ``schema``), never a harness's. A
connection string is refused when it holds a password: the config file is
plain text people copy and paste; libpq finds the password in ``~/.pgpass``,
``PGPASSWORD`` or a service file.

The file is edited line by line, so its comments and other tables stay as
they are; the result is read back, and a file whose form this cannot edit
safely (an inline ``storage = {...}`` table, say) is left unchanged with the
lines to add by hand.
"""

from __future__ import annotations

import json
import re
import tomllib
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import attrs

from thatch.plugin.database_url import PASSWORD_FIX, holds_password, without_secrets
from thatch.plugin.errors import ConfigError, InvalidInputError
from thatch.setup import files

#: The backend that needs no server, and the server backends setup knows how to name.
LOCAL = "sqlite"
SERVERS = ("postgres",)
BACKENDS = (LOCAL, *SERVERS)

_HEADER = re.compile(r"^\s*\[\s*([A-Za-z0-9_.\-\s]+?)\s*\]\s*(?:#.*)?$")
_ANY_HEADER = re.compile(r"^\s*\[")


@attrs.frozen
class StorageChoice:
    """A backend for every storage part, and its server when it needs one."""

    backend: str
    #: The server's connection string (``postgresql://`` URL or libpq words), no password.
    dsn: str | None = None
    #: The server's schema; None leaves the file's (or the backend's default).
    schema: str | None = None

    def describe(self) -> str:
        if self.backend == LOCAL:
            return "SQLite on this machine"
        where = f"{self.backend} at {without_secrets(self.dsn or '')}"
        return where + (f", schema {self.schema}" if self.schema else "")


def choose(backend: str, dsn: str | None, schema: str | None) -> StorageChoice:
    """The choice the flags make; InvalidInputError naming the flag and its fix."""
    name = backend.strip().lower()
    if name == "postgresql":
        name = "postgres"
    if name not in BACKENDS:
        raise InvalidInputError(
            f"--storage {backend!r} is not a backend setup can choose; use one of "
            f"{', '.join(BACKENDS)}"
        )
    if name == LOCAL:
        if dsn is not None or schema is not None:
            flag = "--dsn" if dsn is not None else "--schema"
            raise InvalidInputError(
                f"{flag} is for a database server; drop it with --storage {LOCAL}"
            )
        return StorageChoice(LOCAL)
    if dsn is not None:
        refuse_password(dsn)
    # The backend's plugin checks the rest (a schema's name, the dsn's form)
    # with its own config table: see thatch.cli.setup_commands.
    return StorageChoice(name, dsn, schema)


def refuse_password(dsn: str) -> None:
    """InvalidInputError when ``dsn`` holds a password, naming where the password goes."""
    if holds_password(dsn):
        raise InvalidInputError(
            "--dsn holds a password, which thatch never writes into its config file; "
            f"{PASSWORD_FIX}; then give --dsn {without_secrets(dsn)!r}"
        )


def current(sections: Mapping[str, Any]) -> StorageChoice:
    """The choice a parsed config file holds now (``sqlite`` when it names none)."""
    storage = _lookup(sections, "storage")
    backend = str(storage.get("backend", LOCAL))
    server = _lookup(sections, f"storage.{backend}") if backend != LOCAL else {}
    dsn, schema = server.get("dsn"), server.get("schema")
    return StorageChoice(
        backend,
        dsn if isinstance(dsn, str) else None,
        schema if isinstance(schema, str) else None,
    )


def keeps_server(
    choice: StorageChoice, sections: Mapping[str, Any], environ: Mapping[str, str]
) -> None:
    """InvalidInputError when a server backend is chosen and nothing names the server.

    No ``--dsn`` keeps the file's; with none there, ``THATCH_DATABASE_URL``
    (or ``--dsn ''`` for the ``PG*`` variables) must name it.
    """
    if choice.backend == LOCAL or choice.dsn is not None:
        return
    if isinstance(_lookup(sections, f"storage.{choice.backend}").get("dsn"), str):
        return
    if environ.get("THATCH_DATABASE_URL", "").strip():
        return
    raise InvalidInputError(
        f"--storage {choice.backend} needs the server: add --dsn postgresql://user@host/database "
        "(no password), or --dsn '' to let the PG* environment variables name it"
    )


def edited(text: str, choice: StorageChoice, config_file: Path) -> str:
    """``text`` with the choice's keys set, each in its table, the rest as it was."""
    _parse(text, config_file)
    wanted: dict[str, dict[str, str]] = {"storage": {"backend": choice.backend}}
    if choice.backend != LOCAL:
        server: dict[str, str] = {}
        if choice.dsn is not None:
            server["dsn"] = choice.dsn
        if choice.schema is not None:
            server["schema"] = choice.schema
        if server:
            wanted[f"storage.{choice.backend}"] = server
    result = text
    for table, keys in wanted.items():
        result = _set_keys(result, table, keys)
    try:
        data = _parse(result, config_file)
        ok = all(
            _lookup(data, table).get(key) == value
            for table, keys in wanted.items()
            for key, value in keys.items()
        )
    except ConfigError:
        ok = False
    if not ok:
        lines = "\n".join(
            f"[{table}]\n"
            + "\n".join(f"{key} = {json.dumps(value)}" for key, value in keys.items())
            for table, keys in wanted.items()
        )
        raise ConfigError(
            f"config file {config_file} is in a form thatch setup cannot edit safely "
            f"(an inline or dotted [storage] table?); nothing was changed. Set these by hand:\n"
            f"{lines}"
        )
    return result


def _set_keys(text: str, table: str, keys: Mapping[str, str]) -> str:
    """``text`` with ``keys`` set in ``[table]``, each line replaced or added after the header."""
    lines = text.splitlines()
    start = next(
        (i for i, line in enumerate(lines) if (m := _HEADER.match(line)) and _name(m) == table),
        None,
    )
    if start is None:
        body = "\n".join(f"{key} = {json.dumps(value)}" for key, value in keys.items())
        separator = "" if not text.strip() else "\n" if text.endswith("\n") else "\n\n"
        return f"{text}{separator}[{table}]\n{body}\n"
    end = next((i for i in range(start + 1, len(lines)) if _ANY_HEADER.match(lines[i])), len(lines))
    added = []
    for key, value in keys.items():
        line = f"{key} = {json.dumps(value)}"
        pattern = re.compile(rf"^\s*{re.escape(key)}\s*=")
        found = next((i for i in range(start + 1, end) if pattern.match(lines[i])), None)
        if found is None:
            added.append(line)
        else:
            lines[found] = line
    lines[start + 1 : start + 1] = added
    return "\n".join(lines) + "\n"


def _name(match: re.Match[str]) -> str:
    return ".".join(part.strip() for part in match.group(1).split("."))


def _parse(text: str, config_file: Path) -> dict[str, Any]:
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(
            f"config file {config_file} is not valid TOML ({exc}); fix it, then run setup again"
        ) from None


def _lookup(data: Mapping[str, Any], table: str) -> dict[str, Any]:
    found: Any = data
    for part in table.split("."):
        found = found.get(part, {}) if isinstance(found, Mapping) else {}
    return dict(found) if isinstance(found, Mapping) else {}


def read_file(config_file: Path) -> str:
    """The config file's text ("" when there is none yet)."""
    return files.read(config_file).text or ""


def write_file(config_file: Path, text: str) -> None:
    """Replace the config file with ``text`` (its folder made private when new)."""
    from thatch.private import make_private_dirs

    make_private_dirs(config_file.parent)
    files.write_atomic(config_file, text)
