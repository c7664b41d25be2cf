"""Parity with the original's extraction loop: UC-003 (the loop must not feed itself,
a sub-agent drains its parent's queue) and UC-020 (when the nudge escalates), plus the
workflow each harness's nudge names.
"""

from __future__ import annotations

import itertools
import sqlite3
from collections.abc import Iterator
from pathlib import Path
from types import SimpleNamespace
from typing import TYPE_CHECKING, Any, cast

import attrs
import pytest
import thatch_claude.instructions
import thatch_claude.plugin
import thatch_cursor.plugin
import thatch_opencode.plugin
from recorded import recorded
from thatch.builtin import extraction as plugin
from thatch.instructions.briefing import BRIEFING
from thatch.nudges.extraction import build_extraction_nudge, extraction_nudge
from thatch.plugin.events import Event, ToolCall
from thatch.plugin.harness import Harness
from thatch.sessions import Interaction, SessionStore
from thatch.sessions.ingest import THATCH_WORKFLOWS, interactions_from, is_thatch_workflow
from thatch.sessions.schema import MIGRATIONS
from thatch.testing import plugins_with
from thatch_opencode.events import parse_event as parse_opencode

if TYPE_CHECKING:
    from thatch.plugin.nudge import Nudge
    from thatch.runtime import Runtime

SESSION = "Sess-7f3A-b2"
CHILD = "ses_child"
_ids = itertools.count(1)


@pytest.fixture
def store(tmp_path: Path) -> Iterator[SessionStore]:
    opened = SessionStore(tmp_path / "sessions.db")
    yield opened
    opened.close()


#: The shipped harnesses, as the daemon finds them (the extraction asks the event's).
SHIPPED = plugins_with(thatch_claude.plugin, thatch_cursor.plugin, thatch_opencode.plugin)


def harness(name: str | None) -> Harness | None:
    """The shipped harness called ``name``; None for none or one no plugin serves."""
    return SHIPPED.harness(name) if name else None


def make_app(store: SessionStore, budget: int = 2000) -> Runtime:
    return cast(
        "Runtime",
        SimpleNamespace(sessions=store, settings=SimpleNamespace(budget=budget), plugins=SHIPPED),
    )


def record(store: SessionStore, session: str, *calls: ToolCall, harness: str = "claude") -> None:
    event = Event(
        kind="tool_use",
        harness=harness,
        session_id=session,
        event_id=f"t{next(_ids)}",
        tool_calls=calls,
    )
    assert store.record(event, interactions_from(event, SHIPPED.harness(harness)))


def prompt(store: SessionStore, session: str = SESSION, harness: str = "claude") -> Event:
    event = Event(
        kind="prompt", harness=harness, session_id=session, event_id=f"p{next(_ids)}", prompt="go"
    )
    assert store.record(event, [])
    return event


def offer(store: SessionStore, session: str = SESSION, *, budget: int = 2000) -> list[Nudge]:
    return plugin.thatch_nudges(event=prompt(store, session), app=make_app(store, budget)) or []


def call(name: str, given: Any, got: Any = "ok") -> ToolCall:
    return ToolCall(name=name, input=given, response=got)


def item(seq: int) -> Interaction:
    return Interaction(
        seq=seq,
        session_id=SESSION,
        tool_name="Bash",
        tool_input="ls",
        tool_response="a.py",
        call_id=None,
        failed=False,
        created_at=0.0,
    )


# -- UC-003: thatch's own workflow calls are never queued -------------------------------

WORKFLOW_CALLS = [
    call("Skill", {"skill": "thatch-fact-extractor"}),
    call("Skill", {"command": "thatch-session-reflection"}),
    call("Skill", {"skill": "thatch:thatch-fact-extractor"}),
    call(
        "Task",
        {
            "description": "Save facts",
            "prompt": f"Use the thatch-fact-extractor skill; session_id={SESSION}",
            "subagent_type": "general-purpose",
        },
    ),
    call(
        "Agent",
        {"description": "x", "prompt": f"then call extraction_done with session_id={SESSION}"},
    ),
    call(
        "task", {"description": "extract", "prompt": "go", "subagent_type": "thatch-fact-extractor"}
    ),
    call("Read", {"file_path": "/home/dev/shop/.cursor/rules/thatch-fact-extractor.mdc"}),
    call("read", {"filePath": "/home/dev/shop/.opencode/agent/thatch-fact-extractor.md"}),
    call("Read", {"file_path": "/home/dev/.claude/skills/thatch-fact-extractor/SKILL.md"}),
]

USER_CALLS = [
    call("Skill", {"skill": "pdf"}),
    call(
        "Task",
        {"description": "Explore", "prompt": "Find the refund flow", "subagent_type": "Explore"},
    ),
    call("task", {"description": "review", "prompt": "Review the thatch CLI module"}),
    call("Read", {"file_path": "/home/dev/shop/.cursor/rules/style.mdc"}),
    call("Bash", {"command": "cat .cursor/rules/thatch-fact-extractor.mdc"}),
]


@pytest.mark.parametrize("workflow", WORKFLOW_CALLS, ids=lambda c: f"{c.name}:{c.input}")
def test_uc003_thatch_workflow_calls_are_not_queued(workflow: ToolCall) -> None:
    event = Event(kind="tool_use", harness="claude", session_id=SESSION, tool_calls=(workflow,))
    assert is_thatch_workflow(workflow)
    assert interactions_from(event) == []


@pytest.mark.parametrize("own", USER_CALLS, ids=lambda c: f"{c.name}:{c.input}")
def test_uc003_the_users_own_skill_and_task_calls_are_queued(own: ToolCall) -> None:
    event = Event(kind="tool_use", harness="claude", session_id=SESSION, tool_calls=(own,))
    assert not is_thatch_workflow(own)
    assert [queued.tool_name for queued in interactions_from(event)] == [own.name]


def test_each_shipped_harness_names_a_workflow_setup_installs() -> None:
    for shipped in SHIPPED.harnesses().values():
        assert shipped.extraction_workflow is not None, shipped.name
        assert shipped.extraction_workflow.name in THATCH_WORKFLOWS


def test_uc003_the_workflow_names_are_the_skills_setup_installs() -> None:
    installed = [skill.name for skill in thatch_claude.instructions.skills(BRIEFING)]
    assert sorted(THATCH_WORKFLOWS) == sorted(installed)


def test_uc003_following_the_nudge_does_not_trigger_the_next(store: SessionStore) -> None:
    record(store, SESSION, call("Bash", {"command": "pytest -q"}, "3 passed"))
    (nudge,) = offer(store)
    assert "pytest -q" in nudge.text
    # The agent follows it: loads the skill, hands it to a sub-agent, which saves.
    record(store, SESSION, call("Skill", {"skill": "thatch-fact-extractor"}))
    record(
        store,
        SESSION,
        call("mcp__thatch__memory_remember", {"label": "test-command"}),
        call("mcp__thatch__extraction_done", {"session_id": SESSION}),
    )
    assert store.extraction_done(SESSION) == 1
    record(
        store,
        SESSION,
        call(
            "Task",
            {
                "description": "x",
                "prompt": "Run thatch-fact-extractor",
                "subagent_type": "general-purpose",
            },
        ),
    )
    assert offer(store) == []


# -- UC-003: a sub-agent's extraction_done drains the parent's queue --------------------


def test_uc003_a_subagent_given_the_session_id_drains_exactly_what_was_shown(
    store: SessionStore,
) -> None:
    names = [f"Tool{n}" for n in range(1, 13)]
    record(store, SESSION, *(call(name, {"arg": name}, "x" * 400) for name in names))
    (nudge,) = offer(store, budget=1500)
    shown = [name for name in names if f"] {name}\n" in nudge.text]
    assert 0 < len(shown) < len(names)
    # Claude Code reports the sub-agent's calls under the parent's session id:
    # what it reads while extracting arrives after the nudge.
    record(store, SESSION, call("Read", {"file_path": "src/refund.py"}, "def refund(): ..."))
    assert store.extraction_done(SESSION) == len(shown)
    left = [queued.tool_name for queued in store.pending(SESSION)]
    assert left == [*names[len(shown) :], "Read"]


def opencode_subagent(store: SessionStore, child: str = CHILD, parent: str = SESSION) -> None:
    body = recorded("opencode", "session_created", session_id=child, parent_id=parent)
    event = attrs.evolve(parse_opencode("session.created", body), event_id=f"s{next(_ids)}")
    assert store.record(event, [])


def test_uc003_an_opencode_subagent_session_knows_its_parent(store: SessionStore) -> None:
    body = recorded("opencode", "session_created", session_id=CHILD, parent_id=SESSION)
    assert parse_opencode("session.created", body).parent_session_id == SESSION
    opencode_subagent(store)
    state = store.state(CHILD)
    assert state is not None
    assert state.parent_id == SESSION


def test_uc003_a_subagent_passing_its_own_session_id_drains_the_parent(
    store: SessionStore,
) -> None:
    record(store, SESSION, call("bash", {"command": "make test"}), harness="opencode")
    assert len(offer(store)) == 1
    opencode_subagent(store)
    record(store, CHILD, call("read", {"filePath": "Makefile"}), harness="opencode")
    assert store.extraction_done(CHILD) == 2  # its own read and the parent's bash
    assert store.pending(SESSION) == []
    parent = store.state(SESSION)
    assert parent is not None
    assert parent.nudge_level == 0


def test_uc003_a_subagent_answering_its_own_nudge_leaves_the_parent_alone(
    store: SessionStore,
) -> None:
    record(store, SESSION, call("bash", {"command": "make test"}), harness="opencode")
    offer(store)
    opencode_subagent(store)
    record(store, CHILD, call("read", {"filePath": "Makefile"}), harness="opencode")
    offer(store, CHILD)
    assert store.extraction_done(CHILD) == 1
    assert [queued.tool_name for queued in store.pending(SESSION)] == ["bash"]


# -- UC-020: polite for 0-1 ignored nudges, insistent at 2, capitals from 3 ------------


def lead(text: str) -> str:
    return text.split("\nQueued:")[0].split("\nThe text between the markers")[0].split("\n[1]")[0]


def test_uc020_escalation_follows_the_originals_steps(store: SessionStore) -> None:
    record(store, SESSION, call("Bash", {"command": "ls"}, "a.py"))
    texts = [offer(store)[0].text for _ in range(5)]
    polite, still_polite, insistent, shouting, still_shouting = (lead(t) for t in texts)
    assert "ignored" not in polite.lower()
    assert "ignored" not in still_polite.lower()
    assert still_polite != still_polite.upper()
    assert "ignored for 2 prompts" in insistent
    assert "before you answer" in insistent.lower()
    assert insistent != insistent.upper()
    assert "IGNORED FOR 3 PROMPTS" in shouting
    assert "IGNORED FOR 4 PROMPTS" in still_shouting


@pytest.mark.parametrize(("level", "shouts"), [(0, False), (1, False), (2, False), (3, True)])
def test_uc020_capitals_start_after_three_ignored_nudges(level: int, shouts: bool) -> None:
    text = lead(extraction_nudge(SESSION, [item(1)], level=level, budget=2000).text)
    plain = text.replace(f'session_id="{SESSION}"', "")
    for name in ("memory_remember", "extraction_done"):
        plain = plain.replace(name, "")
    assert (plain == plain.upper()) is shouts


# -- the workflow each harness has -------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "named"),
    [
        ("claude", "thatch-fact-extractor skill"),
        ("cursor", "thatch-fact-extractor rule"),
        ("opencode", "thatch-fact-extractor agent"),
    ],
)
@pytest.mark.parametrize("level", [0, 2, 3])
def test_the_nudge_names_the_harness_workflow(name: str, named: str, level: int) -> None:
    text = extraction_nudge(SESSION, [item(1)], level, 2000, harness=harness(name)).text
    assert named.lower() in text.lower()
    assert "thatch-fact-extractor" in text  # never shouted
    assert f'session_id="{SESSION}"' in text


def test_opencode_names_the_tools_as_it_shows_them() -> None:
    text = extraction_nudge(SESSION, [item(1)], 3, 2000, harness=harness("opencode")).text
    assert "thatch_memory_remember" in text
    assert "thatch_extraction_done" in text


@pytest.mark.parametrize("name", [None, "", "zed"])
def test_an_unknown_harness_gets_the_steps_without_a_workflow(name: str | None) -> None:
    text = extraction_nudge(SESSION, [item(1)], 0, 2000, harness=harness(name)).text
    assert "thatch-fact-extractor" not in text
    assert "save each durable" in text
    assert "thatch_" not in text


@pytest.mark.parametrize("name", ["claude", "cursor", "opencode", None])
@pytest.mark.parametrize("budget", [1, 50, 300, 600, 900, 1200, 2000])
@pytest.mark.parametrize("level", [0, 2, 3])
def test_every_harness_form_fits_the_budget(name: str | None, budget: int, level: int) -> None:
    queue = [
        Interaction(
            seq=n,
            session_id=SESSION,
            tool_name=f"Tool{n}",
            tool_input="i" * 5000,
            tool_response="r" * 50_000,
            call_id=None,
            failed=False,
            created_at=0.0,
        )
        for n in range(1, 13)
    ]
    built = build_extraction_nudge(SESSION, queue, level, budget, total=400, harness=harness(name))
    assert len(built.nudge.text) <= budget
    assert built.nudge.short_text is not None
    assert len(built.nudge.short_text) <= budget
    if budget >= 2000 * plugin.BUDGET_SHARE:  # the default budget's share
        assert built.shown > 0


def test_the_plugin_names_the_workflow_of_the_sessions_harness(store: SessionStore) -> None:
    record(store, SESSION, call("bash", {"command": "ls"}), harness="opencode")
    event = prompt(store, harness="opencode")
    (nudge,) = plugin.thatch_nudges(event=event, app=make_app(store)) or []
    assert "thatch-fact-extractor agent" in nudge.text
    assert "thatch_extraction_done" in nudge.text


def test_uc003_a_session_file_of_the_second_version_gains_the_parent_link(
    tmp_path: Path,
) -> None:
    path = tmp_path / "sessions.db"
    with sqlite3.connect(path) as conn:
        for step in MIGRATIONS[:2]:
            for statement in step:
                conn.execute(statement)
        conn.execute("INSERT INTO sessions (session_id, last_seen) VALUES ('s1', 1.0)")
        conn.execute(
            "INSERT INTO interactions (session_id, tool_name, tool_input, tool_response, "
            "created_at) VALUES ('s1', 'Shell', 'in', 'out', 1.0)"
        )
        conn.execute("PRAGMA user_version = 2")
    conn.close()
    opened = SessionStore(path)
    try:
        assert [queued.tool_name for queued in opened.pending("s1")] == ["Shell"]
        opencode_subagent(opened, child="s2", parent="s1")
        state = opened.state("s2")
        assert state is not None
        assert state.parent_id == "s1"
    finally:
        opened.close()
