"""``THATCH_DATABASE_URL``: a shared database server named in the environment.

Set to a ``postgresql://`` URL, it selects that server's backend for every
storage part the config file leaves to ``[storage] backend`` (a part named
on its own still wins), and the backend's plugin reads the URL from
:class:`~thatch.plugin.config.Config`. Like the config file, the variable
never holds a password: environments are printed by CI logs and ``env`` as
readily as config files are pasted into issues.

:func:`without_secrets` renders any connection string for messages and
``thatch doctor``.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from urllib.parse import parse_qsl, urlsplit, urlunsplit

import attrs

from thatch.plugin.errors import ConfigError

DATABASE_URL_VARIABLE = "THATCH_DATABASE_URL"

#: The URL schemes libpq accepts, and the storage backend each selects.
_BACKENDS = {"postgresql": "postgres", "postgres": "postgres"}

#: Where libpq finds a password instead, for the error that refuses one.
PASSWORD_FIX = (
    "put the password in ~/.pgpass (mode 0600: host:port:database:user:password), "
    "in PGPASSWORD, or in a service file (~/.pg_service.conf, then service=NAME in the URL)"
)

# ``password=...`` in a keyword connection string, quoted or not.
_KEYWORD_PASSWORD = re.compile(r"\bpassword\s*=\s*(?:'(?:[^'\\]|\\.)*'|\S+)", re.IGNORECASE)


@attrs.frozen
class DatabaseUrl:
    """The server ``THATCH_DATABASE_URL`` names, and the backend that keeps data there."""

    url: str
    backend: str


def from_environ(environ: Mapping[str, str]) -> DatabaseUrl | None:
    """The variable's server (None when unset); ConfigError naming the fix for a bad one."""
    raw = environ.get(DATABASE_URL_VARIABLE, "").strip()
    if not raw:
        return None
    parts = urlsplit(raw)
    backend = _BACKENDS.get(parts.scheme.lower())
    if backend is None:
        raise ConfigError(
            f"{DATABASE_URL_VARIABLE}={without_secrets(raw)!r} is not a database URL; "
            "set it to postgresql://user@host:5432/database, or unset it"
        )
    if parts.password is not None or any(
        key.lower() == "password" for key, _ in parse_qsl(parts.query)
    ):
        raise ConfigError(
            f"{DATABASE_URL_VARIABLE} holds a password, which thatch never reads from there; "
            f"{PASSWORD_FIX}; then set {DATABASE_URL_VARIABLE}={without_secrets(raw)}"
        )
    return DatabaseUrl(raw, backend)


def without_secrets(dsn: str) -> str:
    """``dsn`` (a URL or ``key=value`` words) with any password taken out."""
    if "://" not in dsn:
        return " ".join(_KEYWORD_PASSWORD.sub("", dsn).split())
    parts = urlsplit(dsn)
    netloc = parts.netloc.rpartition("@")
    if netloc[1]:
        user = netloc[0].partition(":")[0]
        host = f"{user}@{netloc[2]}" if user else netloc[2]
    else:
        host = parts.netloc
    # Kept as written (not re-encoded), but for the password.
    query = "&".join(
        item
        for item in parts.query.split("&")
        if item and item.partition("=")[0].lower() != "password"
    )
    return urlunsplit((parts.scheme, host, parts.path, query, parts.fragment))
