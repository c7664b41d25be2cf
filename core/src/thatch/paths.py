"""Where thatch keeps its files.

``THATCH_HOME`` (or ``--home``) puts everything under one folder; otherwise
platformdirs picks the user's config, data, state, cache and runtime folders.
"""

from __future__ import annotations

import os
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
    def for_user(cls) -> Paths:
        import platformdirs

        dirs = platformdirs.PlatformDirs(APP_NAME, appauthor=False)
        # The hook commands find the daemon without platformdirs, so the
        # runtime folder comes from the standard-library twin. Without
        # XDG_RUNTIME_DIR it is inside the user's own state dir, never a
        # shared /tmp folder.
        located = rundir.locate(os.environ, home=None)
        state = Path(dirs.user_state_dir)
        runtime = Path(located.runtime_dir)
        return cls(
            config_dir=Path(dirs.user_config_dir),
            data_dir=Path(dirs.user_data_dir),
            state_dir=state,
            cache_dir=Path(dirs.user_cache_dir),
            runtime_dir=runtime,
        )

    @classmethod
    def resolve(cls, home: str | os.PathLike[str] | None = None) -> Paths:
        """``home`` if given, else ``$THATCH_HOME`` if set, else the user's folders."""
        chosen = home if home is not None else os.environ.get("THATCH_HOME") or None
        return cls.under_home(Path(chosen)) if chosen else cls.for_user()
