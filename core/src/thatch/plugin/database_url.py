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
from urllib.parse import parse_qsl

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

# A URL cut into its parts as RFC 3986 (appendix B) does. Unlike urlsplit it
# never fails: a URL libpq cannot read (``postgresql://u:pw@[db``) must still
# be refused for its password, and shown without it, rather than crash.
_URL = re.compile(
    r"(?P<scheme>[A-Za-z][A-Za-z0-9+.-]*)://(?P<netloc>[^/?#]*)(?P<path>[^?#]*)"
    r"(?:\?(?P<query>[^#]*))?(?:#(?P<fragment>.*))?",
    re.DOTALL,
)


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
    backend = _BACKENDS.get(scheme(raw))
    if backend is None:
        raise ConfigError(
            f"{DATABASE_URL_VARIABLE}={without_secrets(raw)!r} is not a database URL; "
            "set it to postgresql://user@host:5432/database, or unset it"
        )
    if holds_password(raw):
        raise ConfigError(
            f"{DATABASE_URL_VARIABLE} holds a password, which thatch never reads from there; "
            f"{PASSWORD_FIX}; then set {DATABASE_URL_VARIABLE}={without_secrets(raw)}"
        )
    return DatabaseUrl(raw, backend)


def scheme(dsn: str) -> str:
    """The lower-cased scheme of a URL (``postgresql``); "" for ``key=value`` words."""
    url = _URL.match(dsn.strip())
    return url["scheme"].lower() if url else ""


def holds_password(dsn: str) -> bool:
    """Whether ``dsn`` (a URL or ``key=value`` words) holds a password, read or not by libpq."""
    url = _URL.match(dsn.strip())
    if url is None:
        return _KEYWORD_PASSWORD.search(dsn) is not None
    user_info, at, _ = url["netloc"].rpartition("@")
    return bool(at and ":" in user_info) or any(
        key.lower() == "password" for key, _ in parse_qsl(url["query"] or "")
    )


def without_secrets(dsn: str) -> str:
    """``dsn`` (a URL or ``key=value`` words) with any password taken out."""
    url = _URL.match(dsn.strip())
    if url is None:
        return " ".join(_KEYWORD_PASSWORD.sub("", dsn).split())
    user_info, at, host = url["netloc"].rpartition("@")
    user = user_info.partition(":")[0]
    netloc = (f"{user}@{host}" if user else host) if at else url["netloc"]
    # Kept as written (not re-encoded), but for the password.
    query = "&".join(
        item
        for item in (url["query"] or "").split("&")
        if item and item.partition("=")[0].lower() != "password"
    )
    fragment = url["fragment"]
    return (
        f"{url['scheme']}://{netloc}{url['path']}"
        + (f"?{query}" if query else "")
        + (f"#{fragment}" if fragment else "")
    )
