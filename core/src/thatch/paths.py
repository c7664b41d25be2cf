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
        """The user's folders, placed by the XDG variables of ``environ`` (default: os.environ)."""
        dirs = rundir.user_dirs(environ)
        return cls(
            config_dir=Path(dirs.config_dir),
            data_dir=Path(dirs.data_dir),
            state_dir=Path(dirs.state_dir),
            cache_dir=Path(dirs.cache_dir),
            runtime_dir=Path(dirs.runtime_dir),
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
