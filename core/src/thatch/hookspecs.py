"""thatch's hook specifications: the whole contract between core and plugins.

A plugin is a module (or object) with functions named after these specs and
marked with :data:`hookimpl`, registered under the ``thatch`` entry-point
group::

    [project.entry-points.thatch]
    myplugin = "my_package.plugin"

Each hook is documented for plugin authors in ``docs/plugins.md``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import pluggy

if TYPE_CHECKING:
    from collections.abc import Iterable, Mapping, Sequence
    from typing import Any

    from thatch.config import Config
    from thatch.embedding import Embedder
    from thatch.events import Event, EventKind
    from thatch.nudges.model import Nudge
    from thatch.runtime import Runtime
    from thatch.setup.model import SetupTarget
    from thatch.storage import Storage
    from thatch.tools.spec import Tool

PROJECT = "thatch"

hookspec = pluggy.HookspecMarker(PROJECT)
hookimpl = pluggy.HookimplMarker(PROJECT)


@hookspec(firstresult=True)
def thatch_storage(config: Config) -> Storage | None:
    """Open the storage backend that keeps memories.

    The first plugin that returns an object wins, so a backend returns None
    unless ``config.storage_backend`` names it.

    :param config: the loaded settings; ``config.db_path`` is where an
        embedded backend keeps its file.
    :return: an object that implements :class:`thatch.storage.Storage`, or None.
    """


@hookspec(firstresult=True)
def thatch_embedder(config: Config) -> Embedder | None:
    """Provide the embedder that turns text into vectors.

    The first plugin that returns an object wins. Load the model lazily, on
    the first call that needs it: commands such as ``thatch list`` never embed.

    :param config: the loaded settings; ``config.model`` and
        ``config.model_path`` name the model the user chose.
    :return: an object that implements :class:`thatch.embedding.Embedder`, or None.
    """


@hookspec(firstresult=True)
def thatch_parse_event(harness: str, hook_event: str, payload: Mapping[str, Any]) -> Event | None:
    """Turn one raw hook payload of a harness into a core event.

    Called by ``thatch hook HARNESS EVENT`` in the daemon. Return None unless
    ``harness`` is yours; core fills in ``event_id`` and ``received_at``.
    Raise ``thatch.errors.InvalidInputError`` naming the field when the
    payload is malformed: the hook still exits 0 and the error is logged.

    :param harness: the harness name given on the command line (``claude``).
    :param hook_event: the event name given on the command line.
    :param payload: the JSON object the harness wrote to stdin.
    :return: the :class:`thatch.events.Event`, or None.
    """


@hookspec
def thatch_ingest(event: Event, app: Runtime) -> None:
    """Observe an event: every plugin sees every event once.

    Runs in the daemon for each event a hook command delivers (tool calls,
    prompts, session starts and ends). Keep it quick; an exception is logged
    and does not stop the other observers.

    :param event: the event, already deduplicated across harnesses.
    :param app: the daemon's runtime (config, session store, projects).
    """


@hookspec
def thatch_nudges(event: Event, app: Runtime) -> Iterable[Nudge] | None:
    """Offer nudges for the prompt the user just submitted.

    Every plugin may contribute; core orders them by tier and priority and
    fits them into the character budget. Return nothing to stay silent.

    :param event: the ``prompt`` event (``event.prompt`` is the user's text,
        ``event.session_id`` the session).
    :param app: the daemon's runtime.
    :return: zero or more :class:`thatch.nudges.model.Nudge`.
    """


@hookspec(firstresult=True)
def thatch_deliver(nudges: Sequence[Nudge], event: Event, harness: str) -> str | None:
    """Format the chosen nudges as the hook command's output for a harness.

    Core's own delivery (plain text, nudges separated by blank lines) runs
    last, so a harness plugin returns None for harnesses that are not its own.

    :param nudges: the nudges that fit the budget, in order.
    :param event: the event being answered.
    :param harness: the harness that will read the output.
    :return: the exact text to print on stdout, or None.
    """


@hookspec(firstresult=True)
def thatch_context_kinds(harness: str) -> Iterable[EventKind] | None:
    """Name the event kinds whose hook output reaches a harness's agent as context.

    Only a harness whose prompt hook cannot carry context needs it. When
    ``prompt`` is not among the kinds, core holds the nudges composed for a
    prompt in the session store and delivers them, once, through
    ``thatch_deliver`` with the session's next event of one of these kinds
    from the same harness; a newer prompt's nudges replace a set still
    waiting. Return None for other harnesses: when no plugin answers, core
    delivers nudges with the prompt itself.

    :param harness: the harness that sent the event (``event.harness``).
    :return: event kinds such as ``session_start`` and ``tool_use``, or None.
    """


@hookspec
def thatch_tools() -> Iterable[Tool] | None:
    """Contribute MCP tools served by ``thatch mcp``.

    Tools run in the daemon. Names must not clash with core's tools.

    :return: zero or more :class:`thatch.tools.spec.Tool`.
    """


@hookspec
def thatch_setup_targets() -> Iterable[SetupTarget] | None:
    """Offer the harnesses ``thatch setup`` can configure.

    Each target describes its changes as data; core applies them, keeps a
    backup, shows a diff on ``--dry-run`` and undoes them on ``--uninstall``.

    :return: zero or more :class:`thatch.setup.model.SetupTarget`.
    """
