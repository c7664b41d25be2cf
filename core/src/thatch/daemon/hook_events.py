"""What the daemon does with one hook command's event.

Parse → resolve the project → record once (session store) → observers →
for prompts, nudges composed into the budget → the harness's delivery.
Bad payloads are logged and answered with nothing: a hook never hurts the
agent.

Core knows no harness: ``thatch hook NAME EVENT`` goes to the installed
harness called NAME (:meth:`thatch.plugins.Plugins.harness`), and a named
command (``thatch flush-tools``) to the harness that serves it
(``Harness.commands``), unless another harness claims the payload
(``Harness.claim``): that one then answers, as for its own hooks.

A harness whose prompt hook cannot carry context (Cursor) says so with
``Harness.context_kinds``. Its prompt's nudges are then held in the session
store and go out, once, with the session's next event of a kind it lists
(a tool call, a session start); the bookkeeping of delivered nudges runs
then, not when they were composed.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime
from typing import Any

import attrs

from thatch import deferred
from thatch.nudges.compose import compose
from thatch.plugin.errors import InvalidInputError
from thatch.plugin.events import Event
from thatch.plugin.harness import Harness, HookCommand
from thatch.plugin.nudge import Nudge
from thatch.runtime import Runtime
from thatch.sessions.ingest import interactions_from

log = logging.getLogger("thatch")


@attrs.frozen
class _Hook:
    """One parsed hook event and who answers it, in which format."""

    event: Event
    #: The event's harness: whose context kinds hold nudges.
    harness: Harness
    #: The harness serving the named command, when it answers in the command's
    #: own format; None for ``thatch hook`` and for a claimed payload.
    command: Harness | None = None
    #: The command line's ``--json``.
    as_json: bool = False

    def render(self, nudges: Sequence[Nudge]) -> str:
        """The exact stdout for ``nudges``."""
        if self.command is not None:
            return self.command.answer_command(nudges, self.event, as_json=self.as_json)
        return self.harness.deliver(nudges, self.event)


def handle_hook(app: Runtime, request: Mapping[str, Any], *, replay: bool = False) -> str:
    """The text the hook command prints (empty when there is nothing to say)."""
    command = str(request.get("command", ""))
    try:
        hook = _parse(app, request)
    except InvalidInputError as exc:
        log.warning("hook %s: bad payload: %s", command, exc)
        return ""
    if hook is None:
        log.warning(
            "hook %s %s: no plugin handles harness %r; install its plugin (see thatch plugins)",
            request.get("harness"),
            request.get("event"),
            request.get("harness"),
        )
        return ""
    event = hook.event
    interactions = interactions_from(event, hook.harness) if event.kind == "tool_use" else []
    if not app.sessions.record(event, interactions):
        log.info("hook %s: event %s already processed", command, event.event_id)
        return ""
    app.plugins.ingest(event, app)
    if replay:
        return ""
    if event.kind == "session_start":
        reminder = Nudge(source="reminder", text=_session_reminder(app, hook))
        # A named command's own answer is the reminder alone: held nudges
        # belong to a harness that reads them from its own hooks.
        held = _take_held(app, hook) if hook.command is None else []
        return _deliver(app, hook, [reminder, *held])
    if event.kind != "prompt":
        chosen = _take_held(app, hook)
        if event.kind == "tool_use" and _carries_context(hook) and not _compacting(app, event):
            chosen = compose([*chosen, *app.plugins.tool_nudges(event, app)], app.settings.budget)
        return _deliver(app, hook, chosen) if chosen else ""
    if _silenced(app, event):
        return ""
    if command == "flush-predictions":
        return _offer(app, hook, app.plugins.nudges(event, app, only="decision-nudge"))
    return _offer(app, hook, compose(app.plugins.nudges(event, app), app.settings.budget))


def _parse(app: Runtime, request: Mapping[str, Any]) -> _Hook | None:
    """The event and its answerer; None when no installed harness is named."""
    payload = request.get("payload")
    if not isinstance(payload, Mapping):
        raise InvalidInputError("the payload must be a JSON object")
    env = request.get("env")
    if not isinstance(env, Mapping):
        env = {}
    command = str(request.get("command"))
    if command == "hook":
        harness = app.plugins.harness(str(request.get("harness")))
        if harness is None:
            return None
        hook = _Hook(harness.parse_event(str(request.get("event")), payload), harness)
    else:
        hook = _parse_command(app, command, payload, env, as_json=bool(request.get("json")))
    event = attrs.evolve(
        hook.event,
        cwd=app.project_folder(env, hook.event.cwd) or request.get("cwd"),
        event_id=str(request.get("event_id") or ""),
        received_at=float(request.get("received_at") or 0.0),
    )
    return attrs.evolve(hook, event=event)


def _parse_command(
    app: Runtime,
    command: str,
    payload: Mapping[str, Any],
    env: Mapping[str, str],
    *,
    as_json: bool,
) -> _Hook:
    """A named command's event: parsed by the harness serving it, answered by the payload's."""
    serving, named = _serving(app, command)
    event = serving.parse_command(named, payload)
    claimant = _claimant(app, serving, payload, env)
    if claimant is None:
        return _Hook(event, serving, command=serving, as_json=as_json)
    return _Hook(attrs.evolve(event, harness=claimant.name), claimant)


def _serving(app: Runtime, command: str) -> tuple[Harness, HookCommand]:
    """The harness that serves ``command``, and the command as it declares it."""
    for harness in app.plugins.harnesses().values():
        for named in harness.commands:
            if named.name == command:
                return harness, named
    raise InvalidInputError(
        f"unknown hook command {command!r}: no installed harness serves it; "
        "install the harness plugin that wrote it (see thatch plugins)"
    )


def _claimant(
    app: Runtime, serving: Harness, payload: Mapping[str, Any], env: Mapping[str, str]
) -> Harness | None:
    """The other harness whose payload this is, by its claim; None: the serving harness's."""
    for harness in app.plugins.harnesses().values():
        claim = harness.claim
        if harness is not serving and claim is not None and claim.matches(payload, env):
            return harness
    return None


def _silenced(app: Runtime, event: Event) -> bool:
    """No nudges while the session compacts, nor for prompts the harness made up."""
    return event.synthetic or _compacting(app, event)


def _compacting(app: Runtime, event: Event) -> bool:
    state = app.sessions.state(event.session_id)
    return state is not None and state.compacting


def _offer(app: Runtime, hook: _Hook, chosen: list[Nudge]) -> str:
    """A prompt's nudges delivered, or held when the harness's prompt hook cannot carry them."""
    event = hook.event
    kinds = hook.harness.context_kinds
    if kinds is not None and event.kind not in kinds:
        # Held even when empty: this prompt's (lack of) nudges replaces an
        # older prompt's set, which answers a question no longer asked.
        app.sessions.hold(event.session_id, event.harness, chosen)
        return ""
    if not chosen:
        return ""
    return _deliver(app, hook, chosen)


def _take_held(app: Runtime, hook: _Hook) -> list[Nudge]:
    """The nudges held for the event's session, if its hook can carry them (taken: once only).

    Only an event of the harness that held them takes them, so when Cursor
    reports a tool call through Claude Code's hook too, the Claude-format
    answer, which Cursor may not read, never uses them up; nor is anything
    delivered while the session compacts.
    """
    event = hook.event
    if hook.harness.context_kinds is None or not _carries_context(hook) or _compacting(app, event):
        return []
    return app.sessions.take_held(event.session_id, event.harness)


def _carries_context(hook: _Hook) -> bool:
    """Whether the agent reads this event's hook output as context (``Harness.context_kinds``
    and ``context_events``): Cursor reads postToolUse's, not postToolUseFailure's."""
    harness, event = hook.harness, hook.event
    kinds, names = harness.context_kinds, harness.context_events
    if kinds is not None and event.kind not in kinds:
        return False
    return names is None or event.hook_event.lower() in {name.lower() for name in names}


def _deliver(app: Runtime, hook: _Hook, chosen: list[Nudge]) -> str:
    """The harness's output for ``chosen``, their bookkeeping deferred past the answer."""
    app.defer(lambda: _delivered(app, hook.event, chosen))
    return hook.render(chosen)


def _delivered(app: Runtime, event: Event, chosen: list[Nudge]) -> None:
    """Bookkeeping for delivered nudges, done after the hook has its answer."""
    # What the agent was told, for the session's page (thatch ui).
    app.sessions.note_delivered(event.session_id, event.hook_event or event.kind, chosen)
    shown = [memory_id for nudge in chosen for memory_id in nudge.memory_ids]
    if shown:
        app.sessions.mark_shown(event.session_id, shown)
        # Only memories the agent was shown count as recalled (staleness);
        # kept and tried again while the storage fails.
        deferred.make(app, deferred.recall_counts(shown, datetime.now(UTC)))
    for nudge in chosen:
        if nudge.on_delivered is not None:
            try:
                nudge.on_delivered()
            except Exception:
                # One source's bookkeeping failing leaves the others' to run.
                log.exception("the %s nudge's delivery bookkeeping failed", nudge.source)


def _session_reminder(app: Runtime, hook: _Hook) -> str:
    from thatch.nudges.reminder import session_reminder

    th = app.project(hook.event.cwd)
    return session_reminder(th, hygiene=app.hygiene(th), tool_prefix=hook.harness.tool_prefix)
