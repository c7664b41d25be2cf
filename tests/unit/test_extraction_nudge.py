"""The extraction nudge: texts per level, the budget, and the built-in plugin."""

from __future__ import annotations

import itertools
import re
from collections.abc import Iterator
from pathlib import Path
from types import SimpleNamespace
from typing import TYPE_CHECKING, cast

import pluggy
import pytest
import thatch_claude.plugin
from framed import data_lines
from thatch.builtin import extraction as plugin
from thatch.nudges.extraction import MIN_ITEM_CHARS, build_extraction_nudge, extraction_nudge
from thatch.plugin import specs as hookspecs
from thatch.plugin.events import Event, ToolCall
from thatch.plugin.nudge import Nudge
from thatch.sessions import Interaction, SessionStore
from thatch.sessions.ingest import interactions_from
from thatch.testing import plugins_with

if TYPE_CHECKING:
    from thatch.runtime import Runtime

SESSION = "Sess-7f3A-b2"  # mixed case: it must survive the capitals
GITHUB_TOKEN = "gh" + "p_" + "".join(itertools.islice(itertools.cycle("a1B2c3D4e5F6"), 36))
VERBATIM = (
    "memory_remember",
    "extraction_done",
    f'session_id="{SESSION}"',
)


def item(
    seq: int, name: str = "Bash", given: str = "ls", got: str = "a.py", *, failed: bool = False
) -> Interaction:
    return Interaction(
        seq=seq,
        session_id=SESSION,
        tool_name=name,
        tool_input=given,
        tool_response=got,
        call_id=None,
        failed=failed,
        created_at=0.0,
    )


def lead_lines(text: str) -> list[str]:
    """The header and instruction: everything before the data framing (or "Queued:")."""
    lines = text.split("\n")
    ends = ("queued:", "the text between the markers")
    return lines[: next(i for i, line in enumerate(lines) if line.lower().startswith(ends))]


# -- texts per level -------------------------------------------------------------------


def test_level_zero_is_polite_and_carries_everything_the_agent_needs() -> None:
    queue = [
        item(4, "Bash", '{"command":"pytest"}', "3 passed"),
        item(9, "Read", '{"file_path":"setup.cfg"}', "[tool]", failed=True),
    ]
    nudge = extraction_nudge(SESSION, queue, level=0, budget=2000)
    assert (nudge.source, nudge.tier, nudge.priority) == ("extraction", 1, 100)
    for word in VERBATIM:
        assert word in nudge.text
    assert "durable" in nudge.text
    assert "one-off output" in nudge.text
    assert "2 tool interactions" in nudge.text
    assert "ignored" not in nudge.text
    assert "[1] Bash" in nudge.text
    assert "[2] Read (failed)" in nudge.text
    assert '{"command":"pytest"}' in nudge.text
    assert "3 passed" in nudge.text
    assert nudge.text.index("[1] Bash") < nudge.text.index("[2] Read")
    header = lead_lines(nudge.text)[0]
    assert header != header.upper()


@pytest.mark.parametrize(
    ("level", "count"), [(2, "2 prompts."), (3, "3 prompts."), (5, "5 prompts.")]
)
def test_ignored_nudges_say_how_long_they_were_ignored(level: int, count: str) -> None:
    text = extraction_nudge(SESSION, [item(1)], level=level, budget=2000).text
    assert f"ignored for {count}".lower() in text.lower()
    assert "1 tool interaction " in text.lower()


def test_one_ignored_nudge_is_still_polite() -> None:
    polite = extraction_nudge(SESSION, [item(1)], level=0, budget=2000).text
    again = extraction_nudge(SESSION, [item(1)], level=1, budget=2000).text
    assert lead_lines(again) == lead_lines(polite)


def test_level_two_is_insistent_but_not_shouting() -> None:
    polite = extraction_nudge(SESSION, [item(1)], level=0, budget=2000).text
    insistent = extraction_nudge(SESSION, [item(1)], level=2, budget=2000).text
    assert insistent != polite
    assert "repeats on every prompt" in insistent
    assert "before you answer" in insistent.lower()
    assert any(line != line.upper() for line in lead_lines(insistent))


@pytest.mark.parametrize("level", [3, 4, 10])
def test_level_three_and_up_shout_but_keep_names_exact(level: int) -> None:
    queue = [item(1, "Bash", "echo hi", "hi there")]
    text = extraction_nudge(SESSION, queue, level=level, budget=2000).text
    lead = "\n".join(lead_lines(text))
    for word in VERBATIM:
        assert word in lead
        lead = lead.replace(word, "")
    assert lead == lead.upper()
    assert "IGNORED" in lead
    # The interactions are quoted as they were, never shouted.
    assert "hi there" in text


def test_short_text_is_header_instruction_and_count_only() -> None:
    queue = [item(1, "Bash", "echo unique-input", "unique-output")]
    nudge = extraction_nudge(SESSION, queue, level=0, budget=2000, total=7)
    assert nudge.short_text is not None
    for word in VERBATIM:
        assert word in nudge.short_text
    assert "7 interactions" in nudge.short_text
    assert "unique-input" not in nudge.short_text
    assert "unique-output" not in nudge.short_text
    assert len(nudge.short_text) < len(nudge.text)


# -- the budget ------------------------------------------------------------------------


def huge_queue(count: int) -> list[Interaction]:
    return [item(seq, f"Tool{seq}", "i" * 5_000, "r" * 50_000) for seq in range(1, count + 1)]


@pytest.mark.parametrize("budget", [1, 50, 300, 600, 900, 1200, 2000, 5000])
@pytest.mark.parametrize("level", [0, 2, 3])
def test_texts_never_exceed_the_budget(budget: int, level: int) -> None:
    nudge = extraction_nudge(SESSION, huge_queue(12), level=level, budget=budget, total=400)
    assert len(nudge.text) <= budget
    assert nudge.short_text is not None
    assert len(nudge.short_text) <= budget


@pytest.mark.parametrize("budget", [900, 1200, 2000, 5000])
def test_the_count_is_shown_even_when_items_are_cut(budget: int) -> None:
    built = build_extraction_nudge(SESSION, huge_queue(12), 0, budget, total=400)
    text = built.nudge.text
    assert "400 tool interactions" in text
    assert 0 < built.shown <= 12
    assert f"the oldest {built.shown} are shown" in text
    assert f"[{built.shown}] Tool{built.shown}" in text
    assert f"[{built.shown + 1}]" not in text
    assert built.through_seq == built.shown  # seqs 1..12 here
    assert "characters cut" in text


def test_the_room_is_shared_among_items() -> None:
    queue = [item(1, "Bash", "ls", "tiny"), *huge_queue(3)[1:]]
    text = extraction_nudge(SESSION, queue, level=0, budget=1500).text
    assert "input: ls\nresponse: tiny\n" in text
    items = "\n".join(data_lines(text))
    sizes = [len(block) for block in re.split(r"\n\[\d\] ", items)[1:]]
    assert len(sizes) == 2
    # Both big items get a fair share of what the small one left.
    assert abs(sizes[0] - sizes[1]) <= 2
    assert min(sizes) > MIN_ITEM_CHARS


def test_with_too_little_room_for_any_item_the_short_text_is_the_text() -> None:
    queue = huge_queue(3)
    built = build_extraction_nudge(SESSION, queue, 0, 500)
    assert built.shown == 0
    assert built.nudge.text == built.nudge.short_text
    assert built.through_seq == queue[-1].seq


def test_secrets_in_queued_text_never_reach_the_nudge() -> None:
    queue = [item(1, "Bash", "cat .env", f"GITHUB_TOKEN={GITHUB_TOKEN}\nok")]
    text = extraction_nudge(SESSION, queue, level=0, budget=2000).text
    assert GITHUB_TOKEN not in text
    assert "[REDACTED:" in text


def test_nothing_to_nudge_about_or_no_room_is_an_error() -> None:
    with pytest.raises(ValueError, match=SESSION):
        extraction_nudge(SESSION, [], level=0, budget=2000)
    with pytest.raises(ValueError, match="budget"):
        extraction_nudge(SESSION, [item(1)], level=0, budget=0)


# -- the plugin ------------------------------------------------------------------------


@pytest.fixture
def store(tmp_path: Path) -> Iterator[SessionStore]:
    opened = SessionStore(tmp_path / "sessions.db")
    yield opened
    opened.close()


def make_app(store: SessionStore, budget: int = 2000) -> Runtime:
    """A stand-in for the daemon's runtime: the session store, the budget, Claude's harness."""
    return cast(
        "Runtime",
        SimpleNamespace(
            sessions=store,
            settings=SimpleNamespace(budget=budget),
            plugins=plugins_with(thatch_claude.plugin),
        ),
    )


def offer(event: Event, app: Runtime) -> list[Nudge]:
    """What the plugin offers, [] for nothing (so a test can unpack it)."""
    return plugin.thatch_nudges(event=event, app=app) or []


_ids = itertools.count(1)


def tool_batch(session: str, *names: str) -> Event:
    return Event(
        kind="tool_use",
        harness="claude",
        session_id=session,
        event_id=f"e{next(_ids)}",
        tool_calls=tuple(ToolCall(name=n, input={"arg": n}, response=f"{n} ok") for n in names),
    )


def prompt(store: SessionStore, session: str = SESSION) -> Event:
    event = Event(
        kind="prompt", harness="claude", session_id=session, event_id=f"p{next(_ids)}", prompt="go"
    )
    assert store.record(event, [])
    return event


def queue(store: SessionStore, session: str, *names: str) -> None:
    event = tool_batch(session, *names)
    claude = plugins_with(thatch_claude.plugin).harness("claude")
    assert store.record(event, interactions_from(event, claude))


def level(store: SessionStore, session: str = SESSION) -> int:
    state = store.state(session)
    assert state is not None
    return state.nudge_level


def test_plugin_is_silent_without_a_queue(store: SessionStore) -> None:
    app = make_app(store)
    assert offer(prompt(store), app) == []
    assert offer(prompt(store, "unknown"), app) == []
    assert level(store) == 0


def test_plugin_escalates_until_extraction_done(store: SessionStore) -> None:
    app = make_app(store)
    queue(store, SESSION, "Bash", "mcp__thatch__memory_recall", "Read", "Grep")
    texts = []
    for expected_level in (1, 2, 3, 4):
        (nudge,) = offer(prompt(store), app)
        texts.append(nudge.text)
        assert len(nudge.text) <= int(2000 * plugin.BUDGET_SHARE)
        assert level(store) == expected_level
    assert "3 tool interactions" in texts[0]
    assert all(name in texts[0] for name in ("Bash", "Read", "Grep"))
    assert "memory_recall" not in texts[0]
    assert "ignored" not in texts[1]
    assert "ignored for 2 prompts" in texts[2]
    assert "IGNORED FOR 3 PROMPTS" in texts[3]

    assert store.extraction_done(SESSION) == 3
    assert level(store) == 0
    assert offer(prompt(store), app) == []


def test_plugin_keeps_sessions_apart(store: SessionStore) -> None:
    app = make_app(store)
    queue(store, "one", "Bash")
    assert offer(prompt(store, "two"), app) == []
    (nudge,) = offer(prompt(store, "one"), app)
    assert 'session_id="one"' in nudge.text
    assert level(store, "one") == 1
    assert level(store, "two") == 0


def test_plugin_is_silent_and_patient_while_compacting(store: SessionStore) -> None:
    app = make_app(store)
    queue(store, SESSION, "Bash")
    store.record(Event(kind="compact", harness="claude", session_id=SESSION, event_id="c1"), [])
    assert offer(prompt(store), app) == []
    assert level(store) == 0
    store.record(
        Event(
            kind="session_start",
            harness="claude",
            session_id=SESSION,
            event_id="c2",
            source="compact",
        ),
        [],
    )
    assert offer(prompt(store), app) != []


def test_interactions_that_did_not_fit_stay_queued(store: SessionStore) -> None:
    app = make_app(store, budget=1500)  # 900 characters for the nudge
    names = [f"Tool{n}" for n in range(1, 13)]
    queue(store, SESSION, *names)
    (nudge,) = offer(prompt(store), app)
    shown = [name for name in names if f"] {name}\n" in nudge.text]
    assert 0 < len(shown) < len(names)
    assert shown == names[: len(shown)]
    assert "12 tool interactions" in nudge.text

    assert store.extraction_done(SESSION) == len(shown)
    (later,) = offer(prompt(store), app)
    assert f"[1] {names[len(shown)]}\n" in later.text
    assert f"{12 - len(shown)} tool interactions" in later.text


def test_plugin_leaves_no_room_for_nothing(store: SessionStore) -> None:
    queue(store, SESSION, "Bash")
    assert offer(prompt(store), make_app(store, budget=0)) == []
    assert level(store) == 0


def test_plugin_answers_through_the_hook_spec(store: SessionStore) -> None:
    manager = pluggy.PluginManager(hookspecs.PROJECT)
    manager.add_hookspecs(hookspecs)
    manager.register(plugin, name="extraction-nudge")
    queue(store, SESSION, "Bash")
    results = manager.hook.thatch_nudges(event=prompt(store), app=make_app(store))
    assert [[nudge.source for nudge in result] for result in results] == [["extraction"]]
    assert "extraction_done" in results[0][0].text


@pytest.mark.parametrize("level", [0, 2, 3])
def test_the_nudge_gives_the_steps_and_names_no_skill_a_harness_may_lack(level: int) -> None:
    text = extraction_nudge(SESSION, [item(1)], level=level, budget=2000).text
    assert "skill" not in text.lower()
    assert "save each durable".lower() in text.lower()
    assert f'extraction_done WITH session_id="{SESSION}"'.lower() in text.lower()
