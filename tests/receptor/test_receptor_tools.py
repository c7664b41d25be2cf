"""The receptor's MCP tools in the daemon: notes read once, offers answered, dismissals learned."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import thatch_receptor.plugin
from daemon_hooks import RuntimeFactory
from thatch.plugin import InvalidInputError, ToolContext
from thatch.runtime import Runtime
from thatch_receptor.assembly import learned_path
from thatch_receptor.deliveries import Delivery
from thatch_receptor.service import ReceptorService

SESSION = "tools-session"


@pytest.fixture
def app(runtimes: RuntimeFactory) -> Iterator[Runtime]:
    runtime = runtimes(thatch_receptor.plugin)
    runtime.plugins.daemon_started(runtime)
    yield runtime
    runtime.plugins.daemon_stopping(runtime)


def service(app: Runtime) -> ReceptorService:
    found = thatch_receptor.plugin.service_of(app)
    assert found is not None
    return found


def call(app: Runtime, name: str, **arguments: Any) -> Any:
    (tool,) = [tool for tool in app.plugins.tools() if tool.name == name]
    return tool.handler(ToolContext(app=app, thatch=app.thatch, session_id=SESSION), arguments)


def ready(app: Runtime, mode: str, text: str, pattern: str = "trial_error") -> Delivery:
    receptor = service(app)
    delivery = Delivery(
        id=receptor.deliveries.new_id(),
        session_id=SESSION,
        mode=mode,  # type: ignore[arg-type]
        text=text,
        rule="error-context",
        trigger="error_context",
        pattern=pattern,
        reason="edit and run keep failing",
    )
    receptor.deliveries.add(delivery)
    return delivery


def test_notes_are_returned_once_with_the_open_offers(app: Runtime) -> None:
    ready(app, "notification", "memory gift-card-ledger: ...")
    offer = ready(app, "passive", "Search related knowledge? ...")
    first = call(app, "receptor_notes")
    assert [note["text"] for note in first["notes"]] == ["memory gift-card-ledger: ..."]
    assert first["offers"] == [{"id": offer.id, "reason": "edit and run keep failing"}]
    assert call(app, "receptor_notes")["notes"] == []


def test_accepting_an_offer_returns_what_was_found(app: Runtime) -> None:
    offer = ready(app, "passive", "Search related knowledge? found: memory X")
    before = service(app).interpreter.learned.offset("trial_error")
    answer = call(app, "receptor_offer", id=offer.id, answer="accept")
    assert answer == {"id": offer.id, "accepted": True, "found": offer.text}
    assert service(app).interpreter.learned.offset("trial_error") > before


def test_a_dismissal_lowers_the_patterns_sensitivity_and_is_kept_across_restarts(
    app: Runtime,
) -> None:
    learned = service(app).interpreter.learned
    before = learned.offset("wandering")
    offer = ready(app, "passive", "Search related knowledge?", pattern="wandering")
    assert call(app, "receptor_offer", id=offer.id, answer="dismiss")["accepted"] is False
    lowered = learned.offset("wandering")
    assert lowered < before
    assert learned.offset("trial_error") == 0.0  # other patterns keep theirs
    saved = json.loads(learned_path(app.config.paths.state_dir).read_text())
    assert saved  # written at once, not only at the daemon's stop
    app.plugins.daemon_stopping(app)
    app.plugins.daemon_started(app)
    assert service(app).interpreter.learned.offset("wandering") == lowered


def test_an_offer_answered_twice_is_a_clear_error(app: Runtime) -> None:
    offer = ready(app, "passive", "Search related knowledge?")
    call(app, "receptor_offer", id=offer.id, answer="dismiss")
    with pytest.raises(InvalidInputError, match="receptor_notes"):
        call(app, "receptor_offer", id=offer.id, answer="dismiss")


def test_the_tools_say_so_when_the_receptor_is_off(
    runtimes: RuntimeFactory, tmp_path: Path
) -> None:
    app = runtimes(thatch_receptor.plugin, config="[receptor]\nenabled = false\n")
    app.plugins.daemon_started(app)
    with pytest.raises(InvalidInputError, match="enabled = false"):
        call(app, "receptor_notes")


def test_a_prompt_mentions_each_new_note_and_offer_once(app: Runtime) -> None:
    from thatch.plugin import Event

    prompt = Event(kind="prompt", harness="claude", session_id=SESSION, prompt="go on")
    ready(app, "notification", "memory gift-card-ledger: ...")
    offer = ready(app, "passive", "Search related knowledge? ...")
    (nudge,) = service(app).prompt_nudges(prompt)
    assert offer.id in nudge.text
    assert "1 new note(s)" in nudge.text
    assert "receptor_notes" in nudge.text
    assert nudge.on_delivered is not None
    nudge.on_delivered()  # core runs it once the hook has its answer
    assert service(app).prompt_nudges(prompt) == []
    ready(app, "notification", "another")
    (again,) = service(app).prompt_nudges(prompt)
    assert "1 new note(s)" in again.text
    assert offer.id not in again.text
