"""The hook commands' time limits, each from the environment, else ``[hooks]``, else a default.

- the hard cap, ``THATCH_HOOK_TIMEOUT_MS`` or ``timeout_ms`` (default 300 ms);
- the cold-start allowance, ``THATCH_HOOK_COLD_START_MS`` or ``cold_start_ms``
  (default 6000 ms): how long a hook whose answer the agent reads (a session
  start, a prompt) waits for a daemon that is starting or loading its model.
  0 turns it off; below the cap it changes nothing.

The config file is the one :class:`thatch.paths.Paths` reads (a unit test
keeps the two in step). It is only parsed when its bytes mention the key,
so the common case costs one small file read and no tomllib. The allowance
is only read on the way to a cold start, never on the warm path.
"""

from __future__ import annotations

from collections.abc import Mapping

from thatch import rundir

DEFAULT_TIMEOUT_MS = 300
#: The lowest cap accepted (the daemon's settings check the same bound).
MIN_TIMEOUT_MS = 50
ENV_VAR = "THATCH_HOOK_TIMEOUT_MS"

#: Well under the 10 s hook timeout setup writes for Claude Code and Cursor,
#: and above a daemon's start plus model load: a first prompt with no daemon
#: was answered within 1.8 s, and within 4.8 s with no bytecode caches (the
#: first start after an install), on two busy cores (see docs/benchmarks.md).
DEFAULT_COLD_START_MS = 6000
MIN_COLD_START_MS = 0
COLD_START_ENV_VAR = "THATCH_HOOK_COLD_START_MS"


class _Setting:
    """One limit: its variable, its ``[hooks]`` key, default and lowest value."""

    def __init__(self, env_var: str, key: str, default: int, lowest: int) -> None:
        self.env_var = env_var
        self.key = key
        self.default = default
        self.lowest = lowest

    def read(self, environ: Mapping[str, str], config_path: str) -> tuple[int, str | None]:
        """The value, and a problem to log when a setting had to be ignored."""
        raw = environ.get(self.env_var, "").strip()
        if not raw:
            return self._from_config(config_path)
        value = _whole_number(raw)
        if value is not None and value >= self.lowest:
            return value, None
        return self.default, (
            f"{self.env_var}={raw[:40]!r} ignored; use a whole number of milliseconds "
            f"of at least {self.lowest} (using {self.default})"
        )

    def _from_config(self, path: str) -> tuple[int, str | None]:
        try:
            with open(path, "rb") as handle:
                data = handle.read()
        except OSError:
            return self.default, None
        if self.key.encode() not in data:
            return self.default, None
        import tomllib

        try:
            hooks = tomllib.loads(data.decode("utf-8")).get("hooks", {})
        except (UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
            return self.default, f"config file {path} is not valid TOML ({exc}); fix it"
        if not isinstance(hooks, dict) or self.key not in hooks:
            return self.default, None
        value = hooks[self.key]
        if isinstance(value, int) and not isinstance(value, bool) and value >= self.lowest:
            return value, None
        return self.default, (
            f"config file {path}: hooks.{self.key} = {value!r} ignored; use a whole number "
            f"of at least {self.lowest} (using {self.default})"
        )


_TIMEOUT = _Setting(ENV_VAR, "timeout_ms", DEFAULT_TIMEOUT_MS, MIN_TIMEOUT_MS)
_COLD_START = _Setting(
    COLD_START_ENV_VAR, "cold_start_ms", DEFAULT_COLD_START_MS, MIN_COLD_START_MS
)


def config_file(environ: Mapping[str, str], home: str | None = None) -> str:
    """The config file for ``home`` (else ``$THATCH_HOME``, else the user's)."""
    return rundir.locate(environ, home).config_file


def timeout_ms(
    environ: Mapping[str, str], home: str | None = None, *, config_path: str | None = None
) -> tuple[int, str | None]:
    """The cap in milliseconds, and a problem to log when a setting had to be ignored.

    ``config_path`` saves locating the config file again when the caller has.
    """
    return _TIMEOUT.read(environ, config_path or config_file(environ, home))


def cold_start_ms(
    environ: Mapping[str, str], home: str | None = None, *, config_path: str | None = None
) -> tuple[int, str | None]:
    """The cold-start allowance in milliseconds, and a problem to log as :func:`timeout_ms`."""
    return _COLD_START.read(environ, config_path or config_file(environ, home))


def _whole_number(raw: str) -> int | None:
    try:
        return int(raw)
    except ValueError:
        return None
