"""Loading plugins, and the typed facade core uses to call them.

Plugins come only from the ``thatch`` entry-point group: the default ones
(sqlite, fastembed) register exactly as a third party would. Two switches
choose among the installed ones:

- ``THATCH_LOAD_PLUGINS``: a comma-separated allow-list of entry-point names;
  set but empty loads none.
- ``[plugins] blocked = [...]`` in the config file: names never loaded.

``THATCH_TRACE_PLUGINS=1`` prints every hook call and result to stderr.
"""

from __future__ import annotations

import importlib.metadata
import os
import sys
from collections.abc import Mapping
from importlib.metadata import Distribution
from typing import TYPE_CHECKING, Any

import attrs
import pluggy

from thatch import hookspecs
from thatch.errors import PluginMissingError

if TYPE_CHECKING:
    from thatch.config import Config
    from thatch.embedding import Embedder
    from thatch.storage import Storage

ENTRY_POINT_GROUP = "thatch"
DEFAULT_PLUGINS = ("sqlite", "fastembed")


@attrs.frozen
class PluginInfo:
    """One loaded plugin, as ``thatch plugins`` shows it."""

    name: str
    distribution: str | None
    version: str | None
    hooks: tuple[str, ...]


@attrs.frozen
class PluginSelection:
    """Which entry points to load: an optional allow-list and a block-list."""

    allowed: frozenset[str] | None = None
    blocked: frozenset[str] = frozenset()

    @classmethod
    def from_environment(
        cls, blocked: tuple[str, ...] = (), environ: Mapping[str, str] | None = None
    ) -> PluginSelection:
        env = os.environ if environ is None else environ
        raw = env.get("THATCH_LOAD_PLUGINS")
        allowed = None if raw is None else frozenset(n.strip() for n in raw.split(",") if n.strip())
        return cls(allowed=allowed, blocked=frozenset(blocked))

    def admits(self, name: str) -> bool:
        if name in self.blocked:
            return False
        return self.allowed is None or name in self.allowed

    def why_not(self, name: str) -> str:
        """How to turn plugin ``name`` back on, for error messages."""
        if name in self.blocked:
            return f"remove '{name}' from [plugins] blocked in the config file"
        if self.allowed is not None:
            return f"add '{name}' to THATCH_LOAD_PLUGINS or unset it"
        return f"install it: pip install thatch-{name} (or plain 'pip install thatch')"


def create_manager(
    selection: PluginSelection, *, trace: bool | None = None
) -> tuple[pluggy.PluginManager, dict[str, Distribution | None]]:
    """A plugin manager with the selected entry points registered and checked.

    Also returns the distribution each plugin came from, for ``thatch plugins``.
    """
    manager = pluggy.PluginManager(hookspecs.PROJECT)
    manager.add_hookspecs(hookspecs)
    origins: dict[str, Distribution | None] = {}
    for entry_point in importlib.metadata.entry_points(group=ENTRY_POINT_GROUP):
        if not selection.admits(entry_point.name) or manager.has_plugin(entry_point.name):
            continue
        manager.register(entry_point.load(), name=entry_point.name)
        origins[entry_point.name] = entry_point.dist
    # A misspelled hook name in a plugin fails here, loudly, not silently later.
    manager.check_pending()
    if trace if trace is not None else os.environ.get("THATCH_TRACE_PLUGINS") == "1":
        _enable_tracing(manager)
    return manager, origins


def _enable_tracing(manager: pluggy.PluginManager) -> None:
    def before(hook_name: str, hook_impls: list[Any], kwargs: Mapping[str, Any]) -> None:
        names = ", ".join(impl.plugin_name for impl in hook_impls)
        print(f"[thatch trace] {hook_name}({', '.join(kwargs)}) -> [{names}]", file=sys.stderr)

    def after(outcome: Any, hook_name: str, hook_impls: list[Any], kwargs: Any) -> None:
        exception = outcome.exception
        shown = f"raised {exception!r}" if exception else f"returned {outcome.get_result()!r}"
        print(f"[thatch trace] {hook_name} {shown}", file=sys.stderr)

    manager.add_hookcall_monitoring(before, after)


class Plugins:
    """Typed calls into the loaded plugins; core never touches ``pm.hook`` itself."""

    def __init__(
        self,
        manager: pluggy.PluginManager,
        selection: PluginSelection | None = None,
        origins: Mapping[str, Distribution | None] | None = None,
    ) -> None:
        self.manager = manager
        self.selection = selection or PluginSelection()
        self.origins = dict(origins or {})

    @classmethod
    def load(cls, config: Config, environ: Mapping[str, str] | None = None) -> Plugins:
        """Load the entry points that the environment and config file allow."""
        selection = PluginSelection.from_environment(config.blocked_plugins, environ)
        manager, origins = create_manager(selection)
        return cls(manager, selection, origins)

    def storage(self, config: Config) -> Storage:
        backend = self.manager.hook.thatch_storage(config=config)
        if backend is None:
            raise PluginMissingError(
                f"no storage plugin is loaded for backend '{config.storage_backend}'; "
                f"{self.selection.why_not(config.storage_backend)}"
            )
        return backend  # type: ignore[no-any-return]

    def embedder(self, config: Config) -> Embedder:
        embedder = self.manager.hook.thatch_embedder(config=config)
        if embedder is None:
            raise PluginMissingError(
                f"no embedder plugin is loaded; {self.selection.why_not('fastembed')}"
            )
        return embedder  # type: ignore[no-any-return]

    def describe(self) -> list[PluginInfo]:
        """The loaded plugins, by name, with the hooks each implements."""
        infos = []
        for name, plugin in self.manager.list_name_plugin():
            if plugin is None:
                continue
            hooks = tuple(
                sorted(caller.name for caller in self.manager.get_hookcallers(plugin) or [])
            )
            dist = self.origins.get(name)
            infos.append(
                PluginInfo(
                    name=name,
                    distribution=dist.metadata["Name"] if dist else None,
                    version=dist.version if dist else None,
                    hooks=hooks,
                )
            )
        return sorted(infos, key=lambda info: info.name)
