"""The receptor in the daemon's handler: recorded Claude Code payloads in, one active item out.

A real runtime (SQLite, core's builtins, the Claude Code plugin and the
receptor), started as the daemon starts its plugins; the hooks are answered
by core's handler as a hook command would be. The word-hash embedder stands
in for the model (the end-to-end test with the real model and the real hook
commands is tests/integration/test_receptor_end_to_end.py).
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import thatch_claude.plugin
import thatch_receptor.plugin
from daemon_hooks import RuntimeFactory
from recorded import recorded
from thatch.plugin import AXES
from thatch.runtime import Runtime
from thatch.testing import send_hook
from thatch_receptor.service import ReceptorService

SESSION = "receptor-session-1"
ERROR = (
    "Exit code 1\nFAILED tests/payments/test_gift_cards.py::test_partial_refund - KeyError: "
    "'ledger_account': gift cards need a ledger account before they can be refunded\n"
    "1 failed, 12 passed in 0.84s"
)
MEMORY = (
    "gift-card-ledger-accounts",
    "Gift cards get their ledger account when they are issued (LedgerService.open_account); "
    "a KeyError ledger_account in refund tests means the fixture issued the card without it.",
)
UNRELATED = (
    ("deploy-window", "Deploys happen on Tuesdays after the release review."),
    ("css-naming", "CSS classes use the BEM naming convention in the storefront."),
)


@pytest.fixture
def app(runtimes: RuntimeFactory, workdir: Path) -> Iterator[Runtime]:
    runtime = runtimes(thatch_claude.plugin, thatch_receptor.plugin)
    th = runtime.project(str(workdir))
    for label, content in (MEMORY, *UNRELATED):
        th.remember(label, content)
    runtime.plugins.daemon_started(runtime)
    yield runtime
    runtime.plugins.daemon_stopping(runtime)


def service(app: Runtime) -> ReceptorService:
    found = thatch_receptor.plugin.service_of(app)
    assert found is not None, "the receptor did not start with the daemon"
    return found


def failure(workdir: Path, n: int) -> dict[str, Any]:
    return recorded(
        "claude",
        "post_tool_use_failure",
        session_id=SESSION,
        cwd=str(workdir),
        tool_use_id=f"toolu_fail_{n}",
        error=ERROR,
    )


def edit(workdir: Path, n: int) -> dict[str, Any]:
    return recorded(
        "claude",
        "post_tool_use",
        session_id=SESSION,
        cwd=str(workdir),
        tool_name="Edit",
        tool_use_id=f"toolu_edit_{n}",
        tool_input={
            "file_path": str(workdir / "src/payments/gift_cards.py"),
            "old_string": f"attempt {n}",
            "new_string": f"attempt {n + 1}",
        },
        tool_response={"filePath": str(workdir / "src/payments/gift_cards.py")},
    )


def hook(app: Runtime, event: str, body: dict[str, Any], at: float) -> str:
    return send_hook(app, "claude", event, body, cwd=body["cwd"], received_at=at)


def streak(app: Runtime, workdir: Path, rounds: int, start: float = 1_800_000_000.0) -> list[str]:
    """edit → test fails, ``rounds`` times, 15 s apart; every answer, in order."""
    answers = []
    for n in range(rounds):
        answers.append(hook(app, "PostToolUse", edit(workdir, n), start + 30 * n))
        answers.append(hook(app, "PostToolUseFailure", failure(workdir, n), start + 30 * n + 15))
        assert service(app).wait_idle()
    return answers


def context_of(answer: str) -> str:
    return json.loads(answer)["hookSpecificOutput"]["additionalContext"] if answer else ""


def test_a_failing_streak_puts_one_relevant_memory_in_the_next_tool_answer(
    app: Runtime, workdir: Path
) -> None:
    answers = streak(app, workdir, 5)
    delivered = [context_of(answer) for answer in answers if answer]
    later = [
        context_of(hook(app, "PostToolUse", edit(workdir, 10 + n), 1_800_000_200.0 + n))
        for n in range(3)
    ]
    shown = [text for text in [*delivered, *later] if "[thatch receptor]" in text]
    assert len(shown) == 1, shown  # one item, once
    assert MEMORY[0] in shown[0]
    assert all(label not in shown[0] for label, _ in UNRELATED)
    status = service(app).status.read(SESSION)
    assert status is not None
    assert status["firings"], status
    assert any(firing["mode"] == "active" for firing in status["firings"])
    assert [item["via"] for item in status["deliveries"]] == ["tool"]


def test_nothing_is_delivered_while_flow_holds_and_it_waits_for_the_flow_to_end(
    app: Runtime, workdir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    receptor = service(app)
    monkeypatch.setattr(receptor, "in_flow", lambda session_id: True)
    answers = streak(app, workdir, 5)
    assert all("[thatch receptor]" not in context_of(answer) for answer in answers)
    pending = receptor.deliveries.pending_active(SESSION)
    assert pending is not None, "the streak made no active item"
    monkeypatch.undo()
    answer = hook(app, "PostToolUse", edit(workdir, 20), 1_800_000_300.0)
    assert context_of(answer) == pending.text


def test_the_receptor_off_delivers_nothing(runtimes: RuntimeFactory, workdir: Path) -> None:
    app = runtimes(
        thatch_claude.plugin, thatch_receptor.plugin, config="[receptor]\nenabled = false\n"
    )
    app.plugins.daemon_started(app)
    assert thatch_receptor.plugin.service_of(app) is None
    answers = [
        hook(app, "PostToolUseFailure", failure(workdir, n), 1_800_000_000.0 + n) for n in range(6)
    ]
    assert answers == [""] * 6


def test_a_steady_implementation_chain_holds_flow_and_nothing_active_is_handed_over(
    app: Runtime,
) -> None:
    from thatch_receptor.deliveries import Delivery
    from thatch_receptor.testing import Stream, implementation

    receptor = service(app)
    stream = Stream(session_id="flow-session")
    events = list(stream.events(implementation(12)))
    for event in events:
        receptor.submit(event)
    assert receptor.wait_idle()
    assert receptor.in_flow("flow-session"), "read → edit → run (pass) did not hold flow"
    # Something active waits (made earlier): deep work keeps it back, on tool and prompt hooks.
    receptor.deliveries.add(
        Delivery(
            id="r-test",
            session_id="flow-session",
            mode="active",
            text="[thatch receptor] a memory",
            rule="error-context",
            trigger="error_context",
            pattern="trial_error",
            reason="test",
            created_at=time.time(),
            at_call=receptor.calls("flow-session"),
        )
    )
    assert receptor.tool_nudges(events[-1]) == []
    assert receptor.prompt_nudges(events[-1]) == []
    assert receptor.deliveries.pending_active("flow-session") is not None
    status = receptor.status.read("flow-session")
    assert status is not None
    assert status["in_flow"] is True


def test_background_work_waits_for_the_hooks_to_pause(
    app: Runtime, workdir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from thatch_receptor import service as service_module

    monkeypatch.setitem(service_module.QUIET_SECONDS, "observe", 0.6)
    receptor = service(app)
    assert receptor.store is not None
    before = receptor.store.count()
    for n in range(8):  # a burst of tool calls, 0.1 s apart
        # Taken before the call: the quiet time runs from the event's arrival,
        # which is inside it (after it, a slow call made the gap look short).
        last = time.monotonic()
        hook(app, "PostToolUse", edit(workdir, n), 1_800_000_000.0 + n)
        time.sleep(0.1)
        # Nothing is embedded and stored while the burst goes on.
        assert receptor.store.count() == before
    assert receptor.wait_idle()
    assert time.monotonic() - last >= 0.6
    assert receptor.store.count() == before + 8


def test_the_session_page_panel_shows_the_axes_over_time_with_firings_and_deliveries(
    app: Runtime, workdir: Path
) -> None:
    streak(app, workdir, 5)
    (panel,) = app.plugins.session_panels(SESSION, app.thatch.config)
    assert panel.title.startswith("Receptor")
    # One point each time the status was written; event time, oldest first.
    assert len(panel.series) >= 5
    moments = [point.at for point in panel.series]
    assert moments == sorted(moments)
    assert moments[0] >= 1_800_000_000.0
    assert set(panel.series[-1].values) == set(panel.thresholds) == set(AXES)
    kinds = {mark.kind for mark in panel.marks}
    assert kinds == {"firing", "delivery"}
    assert dict(panel.facts)["tool calls"] == "10"
    assert app.plugins.session_panels("a session never seen", app.thatch.config) == []
