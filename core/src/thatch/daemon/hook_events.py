"""What the daemon does with one hook command's event.

Parse → resolve the project → record once (session store) → observers →
for prompts, nudges composed into the budget → the harness's delivery.
Bad payloads are logged and answered with nothing: a hook never hurts the
agent.

A harness whose prompt hook cannot carry context (Cursor) says so with
``thatch_context_kinds``. Its prompt's nudges are then held in the session
store and go out, once, with the session's next event of a kind it lists
(a tool call, a session start); the bookkeeping of delivered nudges runs
then, not when they were composed.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from datetime import UTC, datetime
from typing import Any

import attrs

from thatch.extraction import interactions_from
from thatch.nudges.compose import compose
from thatch.nudges.delivery import hook_json
from thatch.payloads import COMMAND_EVENTS, parse_command_payload
from thatch.plugin.errors import InvalidInputError
from thatch.plugin.events import Event
from thatch.plugin.nudge import Nudge
from thatch.runtime import Runtime, project_folder

log = logging.getLogger("thatch")

#: The harness whose format the named commands print by default (plain text,
#: or ``--json``'s hookSpecificOutput); any other harness's payload is
#: answered through that harness's plugin.
NAMED_COMMANDS_HARNESS = "claude"

#: Background results Claude Code hands back as prompts; they get no nudges.
SYNTHETIC_PROMPT_PREFIX = "<task-notification>"


def handle_hook(app: Runtime, request: Mapping[str, Any], *, replay: bool = False) -> str:
    """The text the hook command prints (empty when there is nothing to say)."""
    command = str(request.get("command", ""))
    try:
        event = _parse(app, request)
    except InvalidInputError as exc:
        log.warning("hook %s: bad payload: %s", command, exc)
        return ""
    if event is None:
        log.warning(
            "hook %s %s: no plugin handles harness %r; install its plugin (see thatch plugins)",
            request.get("harness"),
            request.get("event"),
            request.get("harness"),
        )
        return ""
    interactions = interactions_from(event) if event.kind == "tool_use" else []
    if not app.sessions.record(event, interactions):
        log.info("hook %s: event %s already processed", command, event.event_id)
        return ""
    app.plugins.ingest(event, app)
    if replay:
        return ""
    # A named command given another harness's payload answers in that
    # harness's format, through its plugin, like `thatch hook` does.
    claude_format = command != "hook" and event.harness == NAMED_COMMANDS_HARNESS
    if event.kind == "session_start" and claude_format:
        return _format(_session_reminder(app, event), event, request)
    if event.kind == "session_start":
        # The harness plugin decides how its harness reads the reminder.
        reminder = Nudge(source="reminder", text=_session_reminder(app, event))
        return _deliver(app, event, [reminder, *_take_held(app, event)])
    if event.kind != "prompt":
        held = _take_held(app, event)
        return _deliver(app, event, held) if held else ""
    if _silenced(app, event):
        return ""
    if command == "flush-predictions":
        return _prediction_output(app, event, request, claude_format=claude_format)
    if claude_format:
        return _format(_prompt_output(app, event), event, request)
    return _prompt_output(app, event)


def _parse(app: Runtime, request: Mapping[str, Any]) -> Event | None:
    payload = request.get("payload")
    if not isinstance(payload, Mapping):
        raise InvalidInputError("the payload must be a JSON object")
    env = request.get("env") if isinstance(request.get("env"), Mapping) else {}
    command = request.get("command")
    if command in COMMAND_EVENTS:
        event: Event | None = parse_command_payload(str(command), payload, env)
    elif command == "hook":
        event = app.plugins.parse_event(
            str(request.get("harness")), str(request.get("event")), payload
        )
    else:
        raise InvalidInputError(f"unknown hook command {command!r}")
    if event is None:
        return None
    return attrs.evolve(
        event,
        cwd=project_folder(env, event.cwd) or request.get("cwd"),
        event_id=str(request.get("event_id") or ""),
        received_at=float(request.get("received_at") or 0.0),
    )


def _silenced(app: Runtime, event: Event) -> bool:
    """No nudges while the session compacts, nor for background results posing as prompts."""
    if (event.prompt or "").lstrip().startswith(SYNTHETIC_PROMPT_PREFIX):
        return True
    return _compacting(app, event)


def _compacting(app: Runtime, event: Event) -> bool:
    state = app.sessions.state(event.session_id)
    return state is not None and state.compacting


def _prompt_output(app: Runtime, event: Event) -> str:
    return _offer(app, event, compose(app.plugins.nudges(event, app), app.settings.budget))


def _offer(app: Runtime, event: Event, chosen: list[Nudge]) -> str:
    """A prompt's nudges delivered, or held when the harness's prompt hook cannot carry them."""
    kinds = app.plugins.context_kinds(event.harness)
    if kinds is not None and event.kind not in kinds:
        # Held even when empty: this prompt's (lack of) nudges replaces an
        # older prompt's set, which answers a question no longer asked.
        app.sessions.hold(event.session_id, event.harness, chosen)
        return ""
    if not chosen:
        return ""
    return _deliver(app, event, chosen)


def _prediction_output(
    app: Runtime, event: Event, request: Mapping[str, Any], *, claude_format: bool
) -> str:
    """``flush-predictions``: the decision-model nudge alone, in the harness's format."""
    from thatch.builtin.decisions import decision_nudge

    th = app.project(event.cwd)
    nudge = decision_nudge(th, event.prompt or "", event.session_id, app.settings.budget)
    if nudge is None:
        return ""
    if not claude_format:
        return _offer(app, event, [nudge])
    app.defer(lambda: _delivered(app, event, [nudge]))
    return _format(nudge.text, event, request)


def _take_held(app: Runtime, event: Event) -> list[Nudge]:
    """The nudges held for ``event``'s session, if its hook can carry them (taken: once only).

    Only an event of the harness that held them takes them, so when Cursor
    reports a tool call through Claude Code's hook too, the Claude-format
    answer, which Cursor may not read, never uses them up; nor is anything
    delivered while the session compacts.
    """
    kinds = app.plugins.context_kinds(event.harness)
    if kinds is None or event.kind not in kinds or _compacting(app, event):
        return []
    return app.sessions.take_held(event.session_id, event.harness)


def _deliver(app: Runtime, event: Event, chosen: list[Nudge]) -> str:
    """The harness's output for ``chosen``, their bookkeeping deferred past the answer."""
    app.defer(lambda: _delivered(app, event, chosen))
    return app.plugins.deliver(chosen, event, event.harness)


def _delivered(app: Runtime, event: Event, chosen: list[Nudge]) -> None:
    """Bookkeeping for delivered nudges, done after the hook has its answer."""
    shown = [memory_id for nudge in chosen for memory_id in nudge.memory_ids]
    if shown:
        app.sessions.mark_shown(event.session_id, shown)
        # Only memories the agent was shown count as recalled (staleness).
        app.thatch.storage.record_recall(shown, datetime.now(UTC))
    for nudge in chosen:
        if nudge.on_delivered is not None:
            nudge.on_delivered()


def _session_reminder(app: Runtime, event: Event) -> str:
    from thatch.nudges.reminder import session_reminder
    from thatch.reminder_text import tool_prefix

    th = app.project(event.cwd)
    return session_reminder(th, hygiene=app.hygiene(th), tool_prefix=tool_prefix(event.harness))


def _format(text: str, event: Event, request: Mapping[str, Any]) -> str:
    if not text:
        return ""
    return hook_json(text, event.hook_event) if request.get("json") else text
