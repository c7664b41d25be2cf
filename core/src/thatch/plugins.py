"""Loading plugins, and the typed facade core uses to call them.

Plugins come only from the ``thatch`` entry-point group: the default ones
(sqlite, fastembed) register exactly as a third party would. Two switches
choose among the installed ones:

- ``THATCH_LOAD_PLUGINS``: a comma-separated allow-list of entry-point names;
  set but empty loads none.
- ``[plugins] blocked = [...]`` in the config file: names never loaded.

``THATCH_TRACE_PLUGINS=1`` prints every hook call and result to stderr.
``THATCH_PLUGIN_MODULES`` (comma-separated module names) registers modules
that are not installed as distributions, e.g. a plugin under development.

Core's own nudge sources and delivery (:mod:`thatch.builtin`) register
first, under their names, and the block-list switches them off too.
"""

from __future__ import annotations

import importlib
import importlib.metadata
import logging
import os
import sys
from collections.abc import Mapping, Sequence
from importlib.metadata import Distribution
from typing import TYPE_CHECKING, Any

import attrs
import pluggy

from thatch.plugin import specs as hookspecs
from thatch.plugin.errors import PluginMissingError

if TYPE_CHECKING:
    from thatch.plugin.config import Config
    from thatch.plugin.embedder import Embedder
    from thatch.plugin.events import Event
    from thatch.plugin.nudge import Nudge
    from thatch.plugin.setup import SetupTarget
    from thatch.plugin.storage import Storage
    from thatch.plugin.tool import Tool
    from thatch.runtime import Runtime

log = logging.getLogger("thatch")

ENTRY_POINT_GROUP = "thatch"
DEFAULT_PLUGINS = ("sqlite", "fastembed")


@attrs.frozen
class PluginInfo:
    """One loaded plugin, as ``thatch plugins`` shows it."""

    name: str
    distribution: str | None
    version: str | None
    hooks: tuple[str, ...]
    #: Part of thatch-core (:mod:`thatch.builtin`), not an installed plugin.
    builtin: bool = False


@attrs.frozen
class PluginSelection:
    """Which entry points to load: an optional allow-list and a block-list."""

    allowed: frozenset[str] | None = None
    blocked: frozenset[str] = frozenset()
    #: Importable modules registered as plugins (``THATCH_PLUGIN_MODULES``).
    modules: tuple[str, ...] = ()

    @classmethod
    def from_environment(
        cls, blocked: tuple[str, ...] = (), environ: Mapping[str, str] | None = None
    ) -> PluginSelection:
        env = os.environ if environ is None else environ
        raw = env.get("THATCH_LOAD_PLUGINS")
        allowed = None if raw is None else frozenset(n.strip() for n in raw.split(",") if n.strip())
        modules = tuple(
            m.strip() for m in env.get("THATCH_PLUGIN_MODULES", "").split(",") if m.strip()
        )
        return cls(allowed=allowed, blocked=frozenset(blocked), modules=modules)

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
    from thatch.builtin import BUILTIN_PLUGINS

    manager = pluggy.PluginManager(hookspecs.PROJECT)
    manager.add_hookspecs(hookspecs)
    origins: dict[str, Distribution | None] = {}
    for name, module in BUILTIN_PLUGINS.items():
        if name not in selection.blocked:
            manager.register(importlib.import_module(module), name=name)
            origins[name] = None
    for module in selection.modules:
        if not manager.has_plugin(module):
            manager.register(importlib.import_module(module), name=module)
            origins[module] = None
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

    # -- runtime hooks: one plugin's failure never stops the others --------
    def parse_event(
        self, harness: str, hook_event: str, payload: Mapping[str, Any]
    ) -> Event | None:
        """The core event for a harness's raw payload, or None if no plugin knows the harness."""
        return self.manager.hook.thatch_parse_event(  # type: ignore[no-any-return]
            harness=harness, hook_event=hook_event, payload=payload
        )

    def ingest(self, event: Event, app: Runtime) -> None:
        """Show ``event`` to every observer; a failing observer is logged and skipped."""
        self._each("thatch_ingest", event=event, app=app)

    def nudges(self, event: Event, app: Runtime) -> list[Nudge]:
        """Every plugin's nudges for a prompt; a failing plugin is logged and skipped."""
        return [
            nudge
            for result in self._each("thatch_nudges", event=event, app=app)
            for nudge in result
        ]

    def deliver(self, nudges: Sequence[Nudge], event: Event, harness: str) -> str:
        """The hook output for ``harness`` (core's plain text when no plugin claims it)."""
        text = self.manager.hook.thatch_deliver(nudges=list(nudges), event=event, harness=harness)
        return text or ""

    def context_kinds(self, harness: str) -> frozenset[str] | None:
        """The event kinds whose output reaches ``harness``'s agent (None: not declared).

        Undeclared means the harness reads context from every hook core
        answers with nudges, the prompt hook first of all.
        """
        kinds = self.manager.hook.thatch_context_kinds(harness=harness)
        return None if kinds is None else frozenset(kinds)

    def setup_targets(self) -> list[SetupTarget]:
        """The harnesses ``thatch setup`` can configure, by name."""
        targets = [t for result in self.manager.hook.thatch_setup_targets() for t in result or ()]
        return sorted(targets, key=lambda target: target.name)

    def tools(self) -> list[Tool]:
        """MCP tools contributed by plugins."""
        return [tool for result in self.manager.hook.thatch_tools() for tool in result or ()]

    def _each(self, hook_name: str, **kwargs: Any) -> list[list[Any]]:
        """What each implementation returned, as a list (None: nothing).

        pluggy stops at the first exception; for observers and nudge sources
        each implementation runs on its own. Results are drained inside the
        guard, so a generator that fails half-way is skipped like any failure.
        """
        caller = getattr(self.manager.hook, hook_name)
        results = []
        for impl in reversed(caller.get_hookimpls()):
            try:
                result = impl.function(**{name: kwargs[name] for name in impl.argnames})
                if result is not None:
                    results.append(list(result))
            except Exception:
                log.exception("plugin %s failed in %s", impl.plugin_name, hook_name)
        return results

    def describe(self) -> list[PluginInfo]:
        """The loaded plugins, by name, with the hooks each implements."""
        from thatch.builtin import BUILTIN_PLUGINS

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
                    builtin=name in BUILTIN_PLUGINS,
                )
            )
        return sorted(infos, key=lambda info: info.name)
