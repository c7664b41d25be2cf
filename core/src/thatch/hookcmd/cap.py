"""The hook commands' hard cap: ``THATCH_HOOK_TIMEOUT_MS``, else ``[hooks] timeout_ms``.

The config file is the one :class:`thatch.paths.Paths` reads (a unit test
keeps the two in step). It is only parsed when its bytes mention
``timeout_ms``, so the common case costs one small file read and no tomllib.
"""

from __future__ import annotations

from collections.abc import Mapping

from thatch import rundir

DEFAULT_TIMEOUT_MS = 300
#: The lowest cap accepted (the daemon's settings check the same bound).
MIN_TIMEOUT_MS = 50
ENV_VAR = "THATCH_HOOK_TIMEOUT_MS"


def config_file(environ: Mapping[str, str], home: str | None = None) -> str:
    """The config file for ``home`` (else ``$THATCH_HOME``, else the user's)."""
    return rundir.locate(environ, home).config_file


def timeout_ms(
    environ: Mapping[str, str], home: str | None = None, *, config_path: str | None = None
) -> tuple[int, str | None]:
    """The cap in milliseconds, and a problem to log when a setting had to be ignored.

    ``config_path`` saves locating the config file again when the caller has.
    """
    raw = environ.get(ENV_VAR, "").strip()
    if raw:
        value = _whole_number(raw)
        if value is not None:
            return value, None
        return DEFAULT_TIMEOUT_MS, (
            f"{ENV_VAR}={raw[:40]!r} ignored; use a whole number of milliseconds "
            f"of at least {MIN_TIMEOUT_MS} (using {DEFAULT_TIMEOUT_MS})"
        )
    return _from_config(config_path or config_file(environ, home))


def _from_config(path: str) -> tuple[int, str | None]:
    try:
        with open(path, "rb") as handle:
            data = handle.read()
    except OSError:
        return DEFAULT_TIMEOUT_MS, None
    if b"timeout_ms" not in data:
        return DEFAULT_TIMEOUT_MS, None
    import tomllib

    try:
        hooks = tomllib.loads(data.decode("utf-8")).get("hooks", {})
    except (UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        return DEFAULT_TIMEOUT_MS, f"config file {path} is not valid TOML ({exc}); fix it"
    if not isinstance(hooks, dict) or "timeout_ms" not in hooks:
        return DEFAULT_TIMEOUT_MS, None
    value = hooks["timeout_ms"]
    if isinstance(value, int) and not isinstance(value, bool) and value >= MIN_TIMEOUT_MS:
        return value, None
    return DEFAULT_TIMEOUT_MS, (
        f"config file {path}: hooks.timeout_ms = {value!r} ignored; use a whole number "
        f"of at least {MIN_TIMEOUT_MS} (using {DEFAULT_TIMEOUT_MS})"
    )


def _whole_number(raw: str) -> int | None:
    try:
        value = int(raw)
    except ValueError:
        return None
    return value if value >= MIN_TIMEOUT_MS else None
