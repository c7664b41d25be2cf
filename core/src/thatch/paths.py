"""Where thatch keeps its files.

``THATCH_HOME`` (or ``--home``) puts everything under one folder; otherwise
the user's config, data, state, cache and runtime folders are used, each
moved by its XDG base directory variable (see :func:`thatch.rundir.user_dirs`,
which the hook commands share).
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

import attrs

from thatch import rundir

APP_NAME = "thatch"


@attrs.frozen
class Paths:
    """The folders thatch writes to. Nothing is created until it is needed."""

    config_dir: Path
    data_dir: Path
    state_dir: Path
    cache_dir: Path
    runtime_dir: Path
    #: The THATCH_HOME folder, when one is in use.
    home: Path | None = None

    @property
    def config_file(self) -> Path:
        return self.config_dir / "config.toml"

    @property
    def default_db_path(self) -> Path:
        return self.data_dir / "thatch.db"

    @classmethod
    def under_home(cls, home: Path) -> Paths:
        home = home.expanduser().resolve()
        return cls(
            config_dir=home / "config",
            data_dir=home / "data",
            state_dir=home / "state",
            cache_dir=home / "cache",
            runtime_dir=home / "run",
            home=home,
        )

    @classmethod
    def for_user(cls, environ: Mapping[str, str] | None = None) -> Paths:
        """The user's folders, placed by the XDG variables of ``environ`` (default: os.environ).

        platformdirs knows each platform's folders, but reads only this
        process's environment; for another mapping (a caller's, a test's) the
        standard-library twin the hook commands use places them (a unit test
        keeps the two in step). The runtime folder always comes from the
        twin, so hooks and the daemon agree on the socket.
        """
        located = rundir.user_dirs(environ)
        folders: tuple[str, str, str, str] = (
            located.config_dir,
            located.data_dir,
            located.state_dir,
            located.cache_dir,
        )
        if environ is None or environ is os.environ:
            import platformdirs

            dirs = platformdirs.PlatformDirs(APP_NAME, appauthor=False)
            folders = (
                dirs.user_config_dir,
                dirs.user_data_dir,
                dirs.user_state_dir,
                dirs.user_cache_dir,
            )
        config, data, state, cache = (Path(folder) for folder in folders)
        return cls(
            config_dir=config,
            data_dir=data,
            state_dir=state,
            cache_dir=cache,
            runtime_dir=Path(located.runtime_dir),
        )

    @classmethod
    def resolve(
        cls, home: str | os.PathLike[str] | None = None, environ: Mapping[str, str] | None = None
    ) -> Paths:
        """``home`` if given, else ``THATCH_HOME`` if set, else the user's folders.

        ``environ`` (default: this process's) holds THATCH_HOME and the XDG variables.
        """
        env = os.environ if environ is None else environ
        chosen = home if home is not None else env.get("THATCH_HOME") or None
        return cls.under_home(Path(chosen)) if chosen else cls.for_user(env)
