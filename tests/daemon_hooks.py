"""Driving the daemon's hook handler in tests: a test harness plugin, requests and answers.

The ``runtimes`` fixture (tests/conftest.py) builds the runtime; these
helpers send it what hook commands send, with the recorded Claude Code
payloads (core's named hook commands read Claude's format).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from recorded import recorded
from thatch import hookimpl
from thatch.plugin import Event, EventKind, Harness, HarnessBase, Nudge, plain_text
from thatch.testing import answer_hook, hook_request

if TYPE_CHECKING:
    from thatch.runtime import Runtime

#: Builds a daemon runtime from plugins (the ``runtimes`` fixture).
RuntimeFactory = Callable[..., "Runtime"]

SESSION = "sess-1"
TEST_HARNESS = "testh"
EXTRACTION_MARK = "from this session may hold knowledge worth keeping"


class TestHarness(HarnessBase):
    """``thatch hook testh EVENT``: compact, start and prompt, answered in plain text."""

    name = TEST_HARNESS
    title = "Test harness"
    KINDS: Mapping[str, Any] = {"compact": "compact", "start": "session_start", "prompt": "prompt"}

    def __init__(self, context_kinds: frozenset[EventKind] | None = None) -> None:
        self.context_kinds = context_kinds

    def parse_event(self, hook_event: str, payload: Mapping[str, Any]) -> Event:
        return Event(
            kind=self.KINDS[hook_event],
            harness=TEST_HARNESS,
            session_id=payload["session"],
            hook_event=hook_event,
            prompt=payload.get("prompt"),
            source=payload.get("source"),
        )

    def deliver(self, nudges: Sequence[Nudge], event: Event) -> str:
        return plain_text(nudges)


class HarnessPlugin:
    """A harness plugin serving :class:`TestHarness` (``context_kinds`` as it is given)."""

    def __init__(self, context_kinds: frozenset[EventKind] | None = None) -> None:
        self.harness = TestHarness(context_kinds)

    @hookimpl
    def thatch_harnesses(self) -> list[Harness]:
        return [self.harness]


class Broken:
    """A third-party plugin whose observer and nudge source always raise."""

    @hookimpl
    def thatch_ingest(self, event: Event, app: Runtime) -> None:
        raise RuntimeError("observer boom")

    @hookimpl
    def thatch_nudges(self, event: Event, app: Runtime) -> list[Any]:
        raise RuntimeError("nudges boom")


def payload(name: str, project: Path, session: str = SESSION, **changes: Any) -> dict[str, Any]:
    """The recorded Claude Code payload ``name``, in ``session`` and ``project``."""
    return recorded("claude", name, session_id=session, cwd=str(project), **changes)


def request(command: str, body: Any, **extra: Any) -> dict[str, Any]:
    """A request as the named hook command ``command`` sends it (see thatch.wire)."""
    return hook_request(body, command=command, **extra)


def answer(app: Runtime, sent: Mapping[str, Any], *, replay: bool = False) -> str:
    """What the hook prints, then the bookkeeping the server runs once it has answered."""
    return answer_hook(app, sent, replay=replay)


def harness_request(event: str, session: str = SESSION, **fields: Any) -> dict[str, Any]:
    """``thatch hook testh EVENT`` for :class:`HarnessPlugin`."""
    return hook_request({"session": session, **fields}, harness=TEST_HARNESS, event=event)


def batch(app: Runtime, project: Path, session: str = SESSION) -> str:
    """Three tool calls (Bash, Read, Grep) queued through ``buffer-batch``."""
    return answer(app, request("buffer-batch", payload("post_tool_batch", project, session)))


def prompt(
    app: Runtime,
    project: Path,
    text: str = "Now add partial refunds for gift cards the same way",
    *,
    command: str = "flush-tools",
    session: str = SESSION,
    **extra: Any,
) -> str:
    """What a prompt hook command prints for ``text``."""
    body = payload("user_prompt_submit", project, session, prompt=text)
    return answer(app, request(command, body, **extra))


def pending(app: Runtime, session: str = SESSION) -> int:
    """How many tool calls wait in ``session``'s queue."""
    state = app.sessions.state(session)
    return state.pending if state else 0


def level(app: Runtime, session: str = SESSION) -> int:
    """How far ``session``'s extraction nudge has escalated."""
    state = app.sessions.state(session)
    assert state is not None
    return state.nudge_level
