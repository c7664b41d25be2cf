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

import functools
import importlib
import importlib.metadata
import logging
import os
import sys
from collections.abc import Callable, Iterator, Mapping, Sequence
from importlib.metadata import Distribution
from typing import TYPE_CHECKING, Any

import attrs
import pluggy

from thatch.plugin import specs as hookspecs
from thatch.plugin.errors import PluginConflictError, PluginMissingError

if TYPE_CHECKING:
    from thatch.plugin.commands import Command
    from thatch.plugin.config import Config, StoragePart
    from thatch.plugin.decision_storage import DecisionStorage
    from thatch.plugin.embedder import Embedder
    from thatch.plugin.events import Event
    from thatch.plugin.harness import Harness
    from thatch.plugin.nudge import Nudge
    from thatch.plugin.panels import SessionPanel
    from thatch.plugin.prediction_log import PredictionStorage
    from thatch.plugin.receptor import InterpretationRule, SignalSource
    from thatch.plugin.storage import MemoryStorage
    from thatch.plugin.tables import ConfigTable
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
        return f"install it: pip install thatch-{name} (or 'pip install \"thatch[all]\"')"


class ThatchPluginManager(pluggy.PluginManager):
    """pluggy's manager, with the isolated hooks' implementations guarded as they register.

    A hook marked isolated in :mod:`thatch.plugin.specs` still runs through
    pluggy (wrappers, tracing and ``subset_hook_caller`` see it), but each
    plain implementation's failure is logged and skipped instead of ending the
    call. Wrappers are not guarded: a wrapper takes on the call it wraps.
    """

    def __init__(self) -> None:
        super().__init__(hookspecs.PROJECT)
        self.add_hookspecs(hookspecs)

    def register(self, plugin: object, name: str | None = None) -> str | None:
        registered = super().register(plugin, name)
        if registered is not None:
            for caller in self.get_hookcallers(plugin) or ():
                if caller.name in hookspecs.ISOLATED_HOOKS:
                    for impl in caller.get_hookimpls():
                        if impl.plugin is plugin and not (impl.wrapper or impl.hookwrapper):
                            # pluggy types HookImpl.function Final and offers no
                            # way to wrap an implementation as it registers;
                            # guarding it in place keeps the implementation's
                            # plugin, name and options exactly as registered.
                            impl.function = _isolated(  # type: ignore[misc]
                                impl.function, registered, caller.name
                            )
        return registered


def _isolated(function: Callable[..., Any], plugin: str, hook: str) -> Callable[..., Any]:
    """``function`` failing alone: an exception is logged and the call answers None.

    A generator is drained inside the guard, so one that fails half-way is
    skipped whole rather than breaking whoever iterates the results.
    """
    if getattr(function, "_thatch_isolated", False):
        return function

    @functools.wraps(function)
    def guarded(*args: Any) -> Any:
        try:
            result = function(*args)
            return list(result) if isinstance(result, Iterator) else result
        except Exception:
            log.exception("plugin %s failed in %s", plugin, hook)
            return None

    guarded._thatch_isolated = True  # type: ignore[attr-defined]
    return guarded


def create_manager(
    selection: PluginSelection, *, trace: bool | None = None
) -> tuple[pluggy.PluginManager, dict[str, Distribution | None]]:
    """A plugin manager with the selected entry points registered and checked.

    Also returns the distribution each plugin came from, for ``thatch plugins``.
    """
    from thatch.builtin import BUILTIN_PLUGINS

    manager = ThatchPluginManager()
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
    def before(
        hook_name: str, hook_impls: Sequence[pluggy.HookImpl], kwargs: Mapping[str, Any]
    ) -> None:
        names = ", ".join(impl.plugin_name for impl in hook_impls)
        print(f"[thatch trace] {hook_name}({', '.join(kwargs)}) -> [{names}]", file=sys.stderr)

    def after(
        outcome: pluggy.Result[Any],
        hook_name: str,
        hook_impls: Sequence[pluggy.HookImpl],
        kwargs: Mapping[str, Any],
    ) -> None:
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
        self._harnesses: dict[str, Harness] | None = None

    @classmethod
    def load(cls, config: Config, environ: Mapping[str, str] | None = None) -> Plugins:
        """Load the entry points that the environment and config file allow."""
        selection = PluginSelection.from_environment(config.blocked_plugins, environ)
        manager, origins = create_manager(selection)
        return cls(manager, selection, origins)

    # -- storage and the embedder: the first plugin that answers wins -------
    def memory_storage(self, config: Config) -> MemoryStorage:
        """The backend that keeps memories, as ``config.backend_for("memories")`` names it."""
        return self._storage_part(  # type: ignore[no-any-return]
            self.manager.hook.thatch_memory_storage, config, "memories"
        )

    def decision_storage(self, config: Config) -> DecisionStorage:
        """The backend that keeps the decision model (``config.backend_for("decisions")``)."""
        return self._storage_part(  # type: ignore[no-any-return]
            self.manager.hook.thatch_decision_storage, config, "decisions"
        )

    def prediction_storage(self, config: Config) -> PredictionStorage:
        """The backend that keeps the prediction log (``config.backend_for("predictions")``)."""
        return self._storage_part(  # type: ignore[no-any-return]
            self.manager.hook.thatch_prediction_storage, config, "predictions"
        )

    def _storage_part(self, hook: Any, config: Config, part: StoragePart) -> Any:
        backend = hook(config=config)
        if backend is None:
            name = config.backend_for(part)
            raise PluginMissingError(
                f"no storage plugin is loaded that keeps {part} in backend '{name}'; "
                f"{self.selection.why_not(name)}"
            )
        return backend

    def embedder(self, config: Config) -> Embedder:
        embedder = self.manager.hook.thatch_embedder(config=config)
        if embedder is None:
            raise PluginMissingError(
                f"no embedder plugin is loaded; {self.selection.why_not('fastembed')}"
            )
        return embedder  # type: ignore[no-any-return]

    # -- harnesses: core dispatches by name ---------------------------------
    def harnesses(self) -> dict[str, Harness]:
        """Every installed harness by name; two plugins claiming one name is an error."""
        if self._harnesses is None:
            self._harnesses = self._named("thatch_harnesses", "harness")
        return dict(self._harnesses)

    def harness(self, name: str) -> Harness | None:
        """The harness called ``name`` (compared in lower case), or None when none is installed."""
        return self.harnesses().get(name.lower())

    # -- the daemon's event flow: isolated hooks (see thatch.plugin.specs) ---
    def ingest(self, event: Event, app: Runtime) -> None:
        """Show ``event`` to every observer; a failing observer is logged and skipped."""
        self.manager.hook.thatch_ingest(event=event, app=app)

    def nudges(self, event: Event, app: Runtime, *, only: str | None = None) -> list[Nudge]:
        """Every plugin's nudges for a prompt; a failing plugin is logged and skipped.

        ``only`` asks one plugin alone (``decision-nudge`` for
        ``flush-predictions``): through pluggy still, so a wrapper, tracing and
        the block-list hold; a blocked or absent plugin gives no nudges.
        """
        hook = self.manager.hook.thatch_nudges
        if only is not None:
            if self.manager.get_plugin(only) is None:
                return []
            # Wrappers stay: they wrap the one source's nudges as they wrap all.
            others = {
                impl.plugin
                for impl in hook.get_hookimpls()
                if impl.plugin_name != only and not (impl.wrapper or impl.hookwrapper)
            }
            hook = self.manager.subset_hook_caller("thatch_nudges", remove_plugins=others)
        results = hook(event=event, app=app)
        return [nudge for result in results if result is not None for nudge in result]

    def tool_nudges(self, event: Event, app: Runtime) -> list[Nudge]:
        """Every plugin's context for a tool call's answer (a failing plugin is logged, skipped)."""
        results = self.manager.hook.thatch_tool_nudges(event=event, app=app)
        return [nudge for result in results if result is not None for nudge in result]

    def daemon_started(self, app: Runtime) -> None:
        """Tell every plugin the daemon is up (failures logged, not fatal)."""
        self.manager.hook.thatch_daemon_started(app=app)

    def daemon_stopping(self, app: Runtime) -> None:
        """Tell every plugin the daemon is stopping (failures logged, not fatal)."""
        self.manager.hook.thatch_daemon_stopping(app=app)

    def session_panels(self, session_id: str, config: Config) -> list[SessionPanel]:
        """Every plugin's panels for a session's page (a failing plugin is logged, skipped)."""
        results = self.manager.hook.thatch_session_panels(session_id=session_id, config=config)
        return [panel for result in results if result is not None for panel in result]

    # -- what plugins add: tools, commands, config tables, receptor parts ---
    def tools(self) -> list[Tool]:
        """MCP tools contributed by plugins."""
        return [tool for result in self.manager.hook.thatch_tools() for tool in result or ()]

    def commands(self) -> dict[str, Command]:
        """``thatch`` subcommands contributed by plugins, by name (a clash is an error)."""
        return self._named("thatch_commands", "command")

    def config_tables(self) -> dict[str, ConfigTable]:
        """Config tables plugins declare, by name (two declaring one table is an error)."""
        return self._named("thatch_config_tables", "config table")

    def receptor_signals(self) -> dict[str, SignalSource]:
        """The receptor's signal sources, by name (a clash is an error)."""
        return self._named("thatch_receptor_signals", "receptor signal source")

    def receptor_rules(self) -> dict[str, InterpretationRule]:
        """The receptor's interpretation rules, by name (a clash is an error)."""
        return self._named("thatch_receptor_rules", "receptor rule")

    def _named(self, hook: str, what: str) -> dict[str, Any]:
        """Every plugin's named parts from ``hook`` in one mapping; a name two plugins use fails.

        Harness names are compared in lower case: ``thatch hook Claude`` is ``claude``.
        """
        found: dict[str, Any] = {}
        for result in getattr(self.manager.hook, hook)():
            for item in result or ():
                name = item.name.lower() if hook == "thatch_harnesses" else item.name
                if name in found:
                    owners = sorted(self.providers(hook, name))
                    listed = " and ".join(f"'{owner}'" for owner in owners)
                    raise PluginConflictError(
                        f"plugins {listed} {'both' if len(owners) == 2 else 'all'} provide "
                        f"the {what} '{name}'; "
                        f"uninstall one, or add it to [plugins] blocked in the config file"
                    )
                found[name] = item
        return dict(sorted(found.items()))

    def providers(self, hook: str, name: str) -> list[str]:
        """Every plugin whose ``hook`` (a hook without arguments) offers a part called ``name``.

        Parts are often of the contract's own classes (:class:`Command`,
        :class:`ConfigTable`), which do not tell whose they are; so each plugin
        is asked alone, through pluggy (wrappers and tracing included). That
        costs a call per plugin: it is for error messages and ``thatch doctor``.
        """
        wanted = name.lower() if hook == "thatch_harnesses" else name
        named = [(plugin_name, plugin) for plugin_name, plugin in self.manager.list_name_plugin()]
        found = []
        for plugin_name, plugin in named:
            if plugin is None:
                continue
            others = [other for _, other in named if other is not None and other is not plugin]
            alone = self.manager.subset_hook_caller(hook, remove_plugins=others)
            names = [item.name for result in alone() for item in result or ()]
            if wanted in (n.lower() if hook == "thatch_harnesses" else n for n in names):
                found.append(plugin_name)
        return found

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
