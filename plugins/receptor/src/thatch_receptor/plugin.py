"""The pluggy entry point of the receptor.

Importing this module is cheap: the receptor's modules are imported only when
a hook is called. In the daemon, ``thatch_daemon_started`` starts one
:class:`~thatch_receptor.service.ReceptorService` per runtime, and the event,
nudge and tool hooks reach it; anywhere else (a CLI command, a test's runtime
that never started) they do nothing.
"""

from __future__ import annotations

import logging
import threading
from typing import TYPE_CHECKING

from thatch.plugin import hookimpl

if TYPE_CHECKING:
    from thatch.plugin import (
        Command,
        Config,
        ConfigTable,
        Event,
        Nudge,
        Runtime,
        SessionPanel,
        SignalSource,
        Tool,
        ToolContext,
    )

    from thatch_receptor.service import ReceptorService

log = logging.getLogger(__name__)

#: The running service of each daemon runtime, by ``id(app)``.
_services: dict[int, ReceptorService] = {}
_lock = threading.Lock()


def service_of(app: object) -> ReceptorService | None:
    """The receptor running for ``app``, or None (not a daemon, or the receptor is off)."""
    return _services.get(id(app))


@hookimpl
def thatch_receptor_signals() -> tuple[SignalSource, ...]:
    """The built-in signal sources (:mod:`thatch_receptor.signals`), without embeddings."""
    from thatch_receptor.signals import builtin_sources

    return builtin_sources()


@hookimpl
def thatch_session_panels(session_id: str, config: Config) -> list[SessionPanel] | None:
    """The session's axes over time on ``thatch ui``'s session page, from its status file."""
    from thatch_receptor.panel import panel_of
    from thatch_receptor.status import StatusFiles, status_dir

    status = StatusFiles(status_dir(config.paths.state_dir)).read(session_id)
    if status is None:
        return None
    try:
        return [panel_of(status)]
    except (KeyError, TypeError, ValueError) as exc:
        # A file written by another release: the page shows the rest.
        log.warning("receptor: the status of %s cannot be shown: %s", session_id, exc)
        return None


@hookimpl
def thatch_config_tables() -> tuple[ConfigTable, ...]:
    """``[receptor]`` (:mod:`thatch_receptor.settings`)."""
    from thatch_receptor.settings import RECEPTOR_TABLE

    return (RECEPTOR_TABLE,)


@hookimpl
def thatch_daemon_started(app: Runtime) -> None:
    """Start the receptor's reader and worker for this daemon (unless ``enabled = false``)."""
    from thatch_receptor.assembly import build_service
    from thatch_receptor.settings import ReceptorConfig

    config = ReceptorConfig.of(app.config)
    if not config.enabled:
        log.info("receptor: off ([receptor] enabled = false)")
        return
    service = build_service(app, config)
    with _lock:
        _services[id(app)] = service
    service.start()


@hookimpl
def thatch_daemon_stopping(app: Runtime) -> None:
    """Finish the queued work and save what was learned."""
    with _lock:
        service = _services.pop(id(app), None)
    if service is not None:
        service.stop()


@hookimpl
def thatch_ingest(event: Event, app: Runtime) -> None:
    """Queue the event for the receptor's reader: nothing else on the hook's path."""
    service = service_of(app)
    if service is not None:
        service.submit(event)


@hookimpl
def thatch_tool_nudges(event: Event, app: Runtime) -> list[Nudge] | None:
    """The session's one active item, if the receptor has one ready and no deep work holds."""
    service = service_of(app)
    return service.tool_nudges(event) if service is not None else None


@hookimpl
def thatch_nudges(event: Event, app: Runtime) -> list[Nudge] | None:
    """For the prompt: an active item no tool hook took, open offers, unread notes."""
    service = service_of(app)
    return service.prompt_nudges(event) if service is not None else None


@hookimpl
def thatch_tools() -> tuple[Tool, ...]:
    """``receptor_notes`` and ``receptor_offer`` (:mod:`thatch_receptor.tools`)."""
    from thatch_receptor.tools import tools

    def service_for(ctx: ToolContext) -> ReceptorService | None:
        return service_of(ctx.app)

    return tools(service_for)


@hookimpl
def thatch_commands() -> tuple[Command, ...]:
    """``thatch receptor replay`` and ``thatch receptor status``."""
    from thatch.plugin import Command

    from thatch_receptor import cli

    return (
        Command(
            name="receptor",
            help="the emotion receptor: replay recorded events through it, a live session's status",
            run=cli.run,
            arguments=cli.add_arguments,
        ),
    )
