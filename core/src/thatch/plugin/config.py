"""thatch's settings: the TOML config file, then environment overrides.

Precedence, highest first: environment variables (``THATCH_DB_PATH``,
``THATCH_MODEL``, ``THATCH_MODEL_PATH``, ``THATCH_RECALL_THRESHOLD``,
``THATCH_PREDICTION_THRESHOLD``; ``THATCH_DATABASE_URL`` selects its
server's backend where ``[storage] backend`` is not set), the config file
(``<config dir>/config.toml``), built-in defaults. Plugins read the tables
they declare with :meth:`Config.table`.
"""

from __future__ import annotations

import os
import re
import tomllib
from collections.abc import Iterable, Mapping
from fnmatch import fnmatchcase
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

import attrs

from thatch.paths import Paths
from thatch.plugin import database_url
from thatch.plugin.errors import ConfigError

if TYPE_CHECKING:
    from thatch.plugin.tables import ConfigTable

DEFAULT_MODEL = "sentence-transformers/all-MiniLM-L6-v2"
DEFAULT_BACKEND = "sqlite"

#: The separable parts of storage, each kept by the backend :meth:`Config.backend_for` names.
StoragePart = Literal["memories", "decisions", "predictions"]
STORAGE_PARTS: tuple[StoragePart, ...] = ("memories", "decisions", "predictions")
#: The top-level tables core reads itself; a plugin may declare a sub-table of one
#: (``storage.postgres``), never one of them.
CORE_TABLES = frozenset(
    {"plugins", "storage", "embedder", "thresholds", "nudges", "hooks", "daemon", "predictions"}
)

EXAMPLE = """\
# thatch config (TOML). Every key is optional.
[plugins]
blocked = []            # plugin names never loaded, e.g. ["receptor"]

[storage]
backend = "sqlite"      # keeps every part below unless that part names its own
# memories = "sqlite"
# decisions = "sqlite"
# predictions = "sqlite"
# db_path = "/path/to/thatch.db"

[embedder]
model = "sentence-transformers/all-MiniLM-L6-v2"
# model_path = "/path/to/a/local/model/folder"

[thresholds]
# recall = 0.36          # override the calibrated cosine thresholds (also THATCH_RECALL_THRESHOLD)
# dedup = 0.74
# prediction = 0.45      # decision-model firing (also THATCH_PREDICTION_THRESHOLD)
"""


@attrs.frozen
class StoreRoute:
    """One ``[storage.stores]`` entry: the stores a pattern matches, and where they are kept."""

    pattern: str
    backend: str
    #: What differs for these stores from the rest of the config: ``db_path`` (the
    #: SQLite file) and keys of the backend's own table ``[storage.BACKEND]``
    #: (``dsn``, ``schema``). Empty: the backend as the config sets it up anyway.
    settings: Mapping[str, Any] = attrs.field(factory=dict)

    @property
    def place(self) -> str:
        """The place's name: the backend, with the route's own settings (never a password)."""
        if not self.settings:
            return self.backend
        shown = ", ".join(
            f"{key} {database_url.without_secrets(str(value)) if key == 'dsn' else value}"
            for key, value in sorted(self.settings.items())
        )
        return f"{self.backend} ({shown})"


@attrs.frozen
class Config:
    """Everything a plugin or the engine needs to know about this installation."""

    paths: Paths
    db_path: Path
    storage_backend: str = DEFAULT_BACKEND
    #: Parts kept by another backend than :attr:`storage_backend`, part → backend.
    storage_parts: Mapping[StoragePart, str] = attrs.field(factory=dict)
    #: ``[storage.stores]`` in file order: the first route whose pattern matches a
    #: store says where that store's memories are kept.
    store_routes: tuple[StoreRoute, ...] = ()
    model: str = DEFAULT_MODEL
    model_path: Path | None = None
    blocked_plugins: tuple[str, ...] = ()
    recall_threshold: float | None = None
    dedup_threshold: float | None = None
    prediction_threshold: float | None = None
    #: The server ``THATCH_DATABASE_URL`` names, for the backend that keeps data there
    #: (:mod:`thatch.plugin.database_url`); None when the variable is unset.
    database_url: str | None = None
    #: The whole parsed config file, for plugins' own tables.
    sections: Mapping[str, Any] = attrs.field(factory=dict)
    #: The tables loaded plugins declare, checked and with defaults (see :meth:`with_tables`).
    tables: Mapping[str, Mapping[str, Any]] = attrs.field(factory=dict)

    def table(self, name: str) -> Mapping[str, Any]:
        """A plugin's own table (``config.table("receptor")``): checked, defaults filled in.

        Only tables a loaded plugin declares through ``thatch_config_tables``
        are here; see :mod:`thatch.plugin.tables`.
        """
        try:
            return self.tables[name]
        except KeyError:
            declared = ", ".join(sorted(self.tables)) or "none"
            raise ConfigError(
                f"no loaded plugin declares the config table [{name}] (declared: {declared}); "
                "return a ConfigTable for it from the plugin's thatch_config_tables"
            ) from None

    def with_tables(self, declared: Iterable[ConfigTable]) -> Config:
        """This config with each declared table read from the file (a bad value raises)."""
        source = self.paths.config_file
        tables = {table.name: table.read(self.sections, source) for table in declared}
        return attrs.evolve(self, tables=tables)

    def backend_for(self, part: StoragePart) -> str:
        """The backend that keeps ``part``: ``memories``, ``decisions`` or ``predictions``.

        ``[storage] PART = "..."`` when the config file names one, else
        ``[storage] backend``.
        """
        if part not in STORAGE_PARTS:
            raise ValueError(f"no storage part {part!r}; the parts are: {', '.join(STORAGE_PARTS)}")
        return self.storage_parts.get(part, self.storage_backend)

    def memory_place_for_store(self, store: str) -> str:
        """Where the memories of ``store`` are kept, as :attr:`StoreRoute.place` names it.

        The first ``[storage.stores]`` route whose pattern matches the name
        (``*`` matches any run of characters, ``/`` included), else the
        memories' backend, ``backend_for("memories")``.
        """
        for route in self.store_routes:
            if fnmatchcase(store, route.pattern):
                return route.place
        return self.backend_for("memories")

    def memory_places(self) -> tuple[str, ...]:
        """Every place that keeps some store's memories: the memories' backend first.

        The others follow by name, so that the order (which tags memory ids,
        see :mod:`thatch.memory.routing`) does not change when the file's
        patterns are reordered.
        """
        default = self.backend_for("memories")
        others = {route.place for route in self.store_routes} - {default}
        return (default, *sorted(others))

    def memory_place_config(self, place: str) -> Config:
        """The config a storage plugin opens ``place``'s memories with.

        This config for the memories' own backend; for a route's place, this
        one with memories kept in the route's backend and the route's settings
        in place of the home's (``db_path``; the keys of ``[storage.BACKEND]``,
        in :attr:`sections` and :attr:`tables` alike: re-read the tables with
        :meth:`with_tables` to check them).
        """
        if place == self.backend_for("memories"):
            return self
        route = next((r for r in self.store_routes if r.place == place), None)
        if route is None:
            raise ValueError(f"no [storage.stores] route keeps memories in {place!r}")
        placed = attrs.evolve(self, storage_parts={**self.storage_parts, "memories": route.backend})
        settings = dict(route.settings)
        db_path = settings.pop("db_path", None)
        if db_path is not None:
            placed = attrs.evolve(placed, db_path=Path(db_path).expanduser())
        if not settings:
            return placed
        storage = dict(self.sections.get("storage", {}))
        storage[route.backend] = {**storage.get(route.backend, {}), **settings}
        name = f"storage.{route.backend}"
        tables = dict(self.tables)
        if name in tables:
            tables[name] = {**tables[name], **settings}
        return attrs.evolve(placed, sections={**self.sections, "storage": storage}, tables=tables)

    @classmethod
    def load(
        cls,
        home: str | os.PathLike[str] | None = None,
        environ: Mapping[str, str] | None = None,
    ) -> Config:
        """Read the config file under ``home`` (or the user's) and apply the environment."""
        env = os.environ if environ is None else environ
        paths = Paths.resolve(home, env)
        _check_home(paths)
        server = database_url.from_environ(env)
        data = _read_toml(paths.config_file)
        plugins = _table(data, "plugins", paths.config_file)
        storage = _table(data, "storage", paths.config_file)
        embedder = _table(data, "embedder", paths.config_file)
        thresholds = _table(data, "thresholds", paths.config_file)

        db_path = env.get("THATCH_DB_PATH") or storage.get("db_path")
        model_path = env.get("THATCH_MODEL_PATH") or embedder.get("model_path")
        return cls(
            paths=paths,
            db_path=Path(db_path).expanduser() if db_path else paths.default_db_path,
            # A server in the environment keeps what the file leaves to the default.
            storage_backend=_backend(storage, "backend", paths.config_file)
            or (server.backend if server else DEFAULT_BACKEND),
            storage_parts=_part_backends(storage, paths.config_file),
            store_routes=_store_routes(storage, paths.config_file),
            model=env.get("THATCH_MODEL") or str(embedder.get("model", DEFAULT_MODEL)),
            model_path=Path(model_path).expanduser() if model_path else None,
            blocked_plugins=tuple(_string_list(plugins, "blocked", paths.config_file)),
            recall_threshold=_threshold(env, "recall", thresholds, paths.config_file),
            dedup_threshold=_unit_float(thresholds, "dedup", paths.config_file),
            prediction_threshold=_threshold(env, "prediction", thresholds, paths.config_file),
            database_url=server.url if server else None,
            sections=data,
        )


#: The ``[thresholds]`` keys an environment variable overrides, and an example value.
THRESHOLD_VARIABLES = {
    "recall": ("THATCH_RECALL_THRESHOLD", "0.36"),
    "prediction": ("THATCH_PREDICTION_THRESHOLD", "0.45"),
}


def _threshold(
    env: Mapping[str, str], key: str, thresholds: Mapping[str, Any], path: Path
) -> float | None:
    """``thresholds.KEY``, unless its environment variable (which wins) is set."""
    variable, example = THRESHOLD_VARIABLES[key]
    raw = env.get(variable, "").strip()
    if not raw:
        return _unit_float(thresholds, key, path)
    try:
        value = float(raw)
    except ValueError:
        value = float("nan")
    if not -1.0 <= value <= 1.0:
        raise ConfigError(
            f"{variable}={raw!r} is not a cosine; "
            f"set a number between -1 and 1, e.g. {example}, or unset it"
        )
    return value


def _check_home(paths: Paths) -> None:
    """A home that exists must be a folder: everything thatch keeps goes under it."""
    home = paths.home
    if home is not None and home.exists() and not home.is_dir():
        raise ConfigError(
            f"thatch home {home} (--home or THATCH_HOME) is a file, not a folder; "
            "give a folder (it is made if missing), or move the file away"
        )


def _read_toml(path: Path) -> dict[str, Any]:
    try:
        with path.open("rb") as handle:
            return tomllib.load(handle)
    except FileNotFoundError:
        return {}
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(
            f"config file {path} is not valid TOML ({exc}); fix or delete it"
        ) from exc


def _table(data: Mapping[str, Any], key: str, path: Path) -> Mapping[str, Any]:
    value = data.get(key, {})
    if not isinstance(value, Mapping):
        raise ConfigError(f"config file {path}: [{key}] must be a table, like:\n{EXAMPLE}")
    return value


def _part_backends(storage: Mapping[str, Any], path: Path) -> dict[StoragePart, str]:
    """The ``[storage]`` parts that name a backend of their own."""
    chosen = {part: _backend(storage, part, path) for part in STORAGE_PARTS}
    return {part: name for part, name in chosen.items() if name is not None}


#: What a ``[storage.stores]`` pattern may hold: a store name's characters, ``*`` and ``?``.
_STORE_PATTERN = re.compile(r"[A-Za-z0-9._/*?-]+")
_ROUTES_EXAMPLE = (
    '[storage.stores]\n"acme/*" = "postgres"\n'
    '"beta/*" = { backend = "postgres", schema = "beta" }\n"global" = "sqlite"'
)


def _store_routes(storage: Mapping[str, Any], path: Path) -> tuple[StoreRoute, ...]:
    """``[storage.stores]`` as routes, in the file's order."""
    table = storage.get("stores")
    if table is None:
        return ()
    if not isinstance(table, Mapping):
        raise ConfigError(
            f"config file {path}: storage.stores = {table!r} is not a table; "
            f"name where each store-name pattern's memories are kept, like:\n{_ROUTES_EXAMPLE}"
        )
    return tuple(_store_route(pattern, value, path) for pattern, value in table.items())


def _store_route(pattern: str, value: object, path: Path) -> StoreRoute:
    key = f'storage.stores."{pattern}"'
    if not _STORE_PATTERN.fullmatch(pattern):
        raise ConfigError(
            f"config file {path}: {key} is not a store-name pattern; use 'global' or "
            "'owner/name', made of letters, digits, '.', '_', '-', with '*' or '?' "
            f"standing for any characters, like:\n{_ROUTES_EXAMPLE}"
        )
    fix = (
        f'name the storage plugin\'s backend, e.g. "{pattern}" = "postgres", or a table '
        f'with it and the settings that differ, e.g. "{pattern}" = '
        '{ backend = "postgres", schema = "team" }'
    )
    settings = dict(value) if isinstance(value, Mapping) else {"backend": value}
    backend = settings.pop("backend", None)
    if not isinstance(backend, str) or not backend.strip():
        where = f"{key}.backend" if isinstance(value, Mapping) else key
        raise ConfigError(f"config file {path}: {where} = {backend!r} is not a backend name; {fix}")
    for name, setting in settings.items():
        nested = isinstance(setting, Mapping | list)
        if nested or (name == "db_path" and not isinstance(setting, str)):
            raise ConfigError(
                f"config file {path}: {key}.{name} = {setting!r}: a route's setting is a "
                f"string, a number or true/false (db_path: a file path); {fix}"
            )
    return StoreRoute(pattern, backend.strip(), settings)


def _backend(storage: Mapping[str, Any], key: str, path: Path) -> str | None:
    """``storage.KEY`` as a backend name; None when the key is not set."""
    value = storage.get(key)
    if value is None:
        return None
    if not isinstance(value, str) or not value.strip():
        raise ConfigError(
            f"config file {path}: storage.{key} = {value!r} is not a backend name; "
            f'name the storage plugin\'s backend as a string, e.g. {key} = "{DEFAULT_BACKEND}"'
        )
    return value.strip()


def _string_list(table: Mapping[str, Any], key: str, path: Path) -> list[str]:
    value = table.get(key, [])
    if not isinstance(value, list) or not all(isinstance(item, str) for item in value):
        raise ConfigError(f'config file {path}: {key} must be a list of names, e.g. {key} = ["x"]')
    return value


def _unit_float(table: Mapping[str, Any], key: str, path: Path) -> float | None:
    value = table.get(key)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float) or not -1.0 <= value <= 1.0:
        raise ConfigError(
            f"config file {path}: thresholds.{key} = {value!r} is not a cosine; "
            "use a number between -1 and 1, e.g. 0.35"
        )
    return float(value)
