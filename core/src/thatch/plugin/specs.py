"""thatch's hook specifications: the hooks a plugin may implement.

A plugin is a module (or object) with functions named after these specs and
marked with :data:`hookimpl`, registered under the ``thatch`` entry-point
group::

    [project.entry-points.thatch]
    myplugin = "my_package.plugin"

Hooks marked :func:`isolated` run each implementation on its own: one that
raises (or yields a failing generator) is logged and skipped, and the others
still run. Every hook, isolated or not, is called through pluggy, so
``wrapper=True`` implementations and ``THATCH_TRACE_PLUGINS=1`` see every
call. Each hook is documented for plugin authors in ``docs/plugins.md``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any, TypeVar

import pluggy

if TYPE_CHECKING:
    from collections.abc import Iterable

    from thatch.plugin.commands import Command
    from thatch.plugin.config import Config
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

PROJECT = "thatch"

hookspec = pluggy.HookspecMarker(PROJECT)
hookimpl = pluggy.HookimplMarker(PROJECT)

_Spec = TypeVar("_Spec", bound=Callable[..., Any])
#: Set on the spec function of every isolated hook.
ISOLATED_ATTRIBUTE = "thatch_isolated"


def isolated(spec: _Spec) -> _Spec:
    """Mark a hook whose implementations fail alone: logged and skipped, never fatal."""
    setattr(spec, ISOLATED_ATTRIBUTE, True)
    return spec


# -- storage and the embedder: the first plugin that answers wins -------------


@hookspec(firstresult=True)
def thatch_memory_storage(config: Config) -> MemoryStorage | None:
    """Open the backend that keeps memories.

    Return None unless ``config.backend_for("memories")`` names your backend.

    :param config: the loaded settings; ``config.db_path`` is where an
        embedded backend keeps its file.
    :return: an object that implements :class:`thatch.plugin.MemoryStorage`, or None.
    """


@hookspec(firstresult=True)
def thatch_decision_storage(config: Config) -> DecisionStorage | None:
    """Open the backend that keeps the user decision model.

    Return None unless ``config.backend_for("decisions")`` names your backend.
    A backend that keeps memories too may return the same object as
    :func:`thatch_memory_storage`; core closes each object once.

    :param config: the loaded settings.
    :return: an object that implements :class:`thatch.plugin.DecisionStorage`, or None.
    """


@hookspec(firstresult=True)
def thatch_prediction_storage(config: Config) -> PredictionStorage | None:
    """Open the backend that keeps the prediction log.

    Return None unless ``config.backend_for("predictions")`` names your backend.

    :param config: the loaded settings.
    :return: an object that implements :class:`thatch.plugin.PredictionStorage`, or None.
    """


@hookspec(firstresult=True)
def thatch_embedder(config: Config) -> Embedder | None:
    """Provide the embedder that turns text into vectors.

    The first plugin that returns an object wins. Load the model lazily, on
    the first call that needs it: commands such as ``thatch list`` never embed.

    :param config: the loaded settings; ``config.model`` and
        ``config.model_path`` name the model the user chose.
    :return: an object that implements :class:`thatch.plugin.Embedder`, or None.
    """


# -- harnesses ----------------------------------------------------------------


@hookspec
def thatch_harnesses() -> Iterable[Harness] | None:
    """Offer the harnesses (coding agents) this plugin integrates.

    Core dispatches by :attr:`Harness.name`: ``thatch hook NAME EVENT``,
    ``thatch setup --NAME``, doctor's checks and ``thatch prime``. Two
    plugins offering one name is an error at load time naming both.

    :return: zero or more :class:`thatch.plugin.Harness` objects.
    """


# -- the daemon's event flow --------------------------------------------------


@isolated
@hookspec
def thatch_ingest(event: Event, app: Runtime) -> None:
    """Observe an event: every plugin sees every event once. Isolated.

    Runs in the daemon for each event a hook command delivers (tool calls,
    prompts, session starts and ends). Keep it quick; an exception is logged
    and does not stop the other observers.

    :param event: the event, already deduplicated across harnesses.
    :param app: the daemon's runtime (config, session store, projects).
    """


@isolated
@hookspec
def thatch_nudges(event: Event, app: Runtime) -> Iterable[Nudge] | None:
    """Offer nudges for the prompt the user just submitted. Isolated.

    Every plugin may contribute; core orders them by tier and priority and
    fits them into the character budget. Return nothing to stay silent.

    :param event: the ``prompt`` event (``event.prompt`` is the user's text,
        ``event.session_id`` the session).
    :param app: the daemon's runtime.
    :return: zero or more :class:`thatch.plugin.Nudge`.
    """


@isolated
@hookspec
def thatch_tool_nudges(event: Event, app: Runtime) -> Iterable[Nudge] | None:
    """Offer context for the agent right after a tool call. Isolated.

    Called for each ``tool_use`` event, after every plugin has ingested it;
    what is returned goes out in that hook's answer (Claude Code's
    PostToolUse, PostToolUseFailure and PostToolBatch ``additionalContext``,
    Cursor's postToolUse ``additional_context``, opencode's tool output),
    fitted into the character budget with any nudges held for the session.
    The hook command is waiting: return what is ready, never compute here
    (do the work in ``thatch_ingest``'s background and keep the result).
    Nothing is asked while the session compacts.

    :param event: the ``tool_use`` event (``event.tool_calls`` the calls).
    :param app: the daemon's runtime.
    :return: zero or more :class:`thatch.plugin.Nudge`; their
        ``on_delivered`` runs once the hook has its answer.
    """


@isolated
@hookspec
def thatch_daemon_started(app: Runtime) -> None:
    """The daemon is up: start background work (a schedule, a warm cache). Isolated.

    Runs once, after the socket listens and before the first event. Start
    threads as daemon threads and return quickly; stop them in
    :func:`thatch_daemon_stopping`.

    :param app: the daemon's runtime.
    """


@isolated
@hookspec
def thatch_daemon_stopping(app: Runtime) -> None:
    """The daemon is shutting down: stop background work and flush it. Isolated.

    Runs once, after the last event is handled and before storage closes.
    Return within a few seconds: the daemon's stop waits for all plugins together at most
    5 s (``thatch.daemon.lifecycle.PLUGIN_HOOK_SECONDS``), then goes on without them.

    :param app: the daemon's runtime.
    """


# -- what plugins add to the surfaces -----------------------------------------


@hookspec
def thatch_tools() -> Iterable[Tool] | None:
    """Contribute MCP tools served by ``thatch mcp``.

    Tools run in the daemon. Names must not clash with core's tools.

    :return: zero or more :class:`thatch.plugin.Tool`.
    """


@hookspec
def thatch_commands() -> Iterable[Command] | None:
    """Contribute ``thatch`` subcommands (``thatch receptor replay ...``).

    Names must not clash with core's commands or another plugin's.

    :return: zero or more :class:`thatch.plugin.Command`.
    """


@hookspec
def thatch_config_tables() -> Iterable[ConfigTable] | None:
    """Declare the config-file tables this plugin reads (``[receptor]``).

    Core validates them when the config loads and ``thatch doctor`` lists them.

    :return: zero or more :class:`thatch.plugin.ConfigTable`.
    """


@hookspec
@isolated
def thatch_session_panels(session_id: str, config: Config) -> Iterable[SessionPanel] | None:
    """Show what this plugin knows of a live session on ``thatch ui``'s session page. Isolated.

    Called in the page's process, not the daemon's, every second or so
    while the page is open: read what the plugin keeps on disk under
    ``config.paths``, cheaply, and return None for a session it knows nothing of.

    :param session_id: the harness's session id.
    :param config: the user's configuration (paths, settings).
    :return: zero or more :class:`thatch.plugin.SessionPanel`.
    """


# -- the receptor -------------------------------------------------------------


@hookspec
def thatch_receptor_signals() -> Iterable[SignalSource] | None:
    """Contribute signal sources: readers of the receptor's axes from events.

    :return: zero or more :class:`thatch.plugin.SignalSource`.
    """


@hookspec
def thatch_receptor_rules() -> Iterable[InterpretationRule] | None:
    """Contribute interpretation rules: what a firing composition calls for.

    :return: zero or more :class:`thatch.plugin.InterpretationRule`.
    """


#: The hooks whose implementations fail alone (see :func:`isolated`).
ISOLATED_HOOKS = frozenset(
    name
    for name, spec in list(globals().items())
    if name.startswith("thatch_") and getattr(spec, ISOLATED_ATTRIBUTE, False)
)
