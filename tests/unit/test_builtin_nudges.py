"""Core's built-in nudge sources and delivery, over real storage and a fake embedder."""

from __future__ import annotations

import importlib
import subprocess
import uuid
from collections.abc import Iterator, Sequence
from datetime import UTC, datetime, timedelta
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import attrs
import pluggy
import pytest
import thatch_sqlite.plugin
from framed import data_lines
from thatch import hookimpl
from thatch.api import Thatch
from thatch.builtin import BUILTIN_PLUGINS
from thatch.builtin import decisions as decision_source
from thatch.builtin import recall as recall_source
from thatch.builtin import reminder as reminder_source
from thatch.config.settings import RuntimeSettings
from thatch.decisions.nudge import HEADER as DECISION_HEADER
from thatch.nudges.compose import compose
from thatch.nudges.recall import HEADER as RECALL_HEADER
from thatch.nudges.reminder import session_reminder
from thatch.plugin import specs as hookspecs
from thatch.plugin.config import Config
from thatch.plugin.events import Event
from thatch.plugin.harness import Harness, HarnessBase
from thatch.plugin.nudge import Nudge
from thatch.sessions.store import SessionStore
from thatch.testing import WordHashEmbedder, plugins_with


class _CountingEmbedder(WordHashEmbedder):
    def __init__(self) -> None:
        super().__init__()
        self.queries = 0

    def embed_query(self, text: str):  # type: ignore[no-untyped-def]
        self.queries += 1
        return super().embed_query(text)


def _open(home: Path, embedder: WordHashEmbedder, cwd: Path) -> Thatch:
    plugins = plugins_with(thatch_sqlite.plugin, embedder=embedder)
    return Thatch(Config.load(home, environ={}), plugins, cwd)


@pytest.fixture
def embedder() -> _CountingEmbedder:
    return _CountingEmbedder()


@pytest.fixture
def th(tmp_path: Path, embedder: _CountingEmbedder) -> Iterator[Thatch]:
    with _open(tmp_path / "home", embedder, tmp_path) as opened:
        yield opened


@pytest.fixture
def sessions(tmp_path: Path) -> Iterator[SessionStore]:
    store = SessionStore(tmp_path / "sessions.db")
    yield store
    store.close()


def _app(
    th: Thatch, sessions: SessionStore, *harness_plugins: object, **settings: Any
) -> SimpleNamespace:
    """The parts of thatch.runtime.Runtime the nudge sources use (``harness_plugins``: none)."""
    return SimpleNamespace(
        settings=RuntimeSettings(**settings),
        sessions=sessions,
        project=lambda cwd, env=None: th,
        plugins=plugins_with(*harness_plugins),
    )


def _prompt(text: str | None, session: str = "s1") -> Event:
    return Event(
        kind="prompt",
        harness="claude",
        session_id=session,
        cwd="/x",
        prompt=text,
        event_id=uuid.uuid4().hex,
    )


def _submit(app: SimpleNamespace, text: str, session: str = "s1") -> list[Nudge]:
    """A prompt as the daemon handles it: recorded, then asked for recall nudges."""
    event = _prompt(text, session)
    app.sessions.record(event, [])
    return recall_source.thatch_nudges(event, app)


def _seed_memories(th: Thatch) -> None:
    th.remember("tabs", "The user indents Python code with tabs", store="global")
    th.remember("db", "Sessions live in postgres behind pgbouncer", store="global")
    th.remember("ci", "CI runs on every push to main", store="global")


# -- recall ----------------------------------------------------------------------
def test_recall_nudge_shows_relevant_memories(th: Thatch, sessions: SessionStore) -> None:
    _seed_memories(th)
    nudges = recall_source.thatch_nudges(
        _prompt("how should I indent this python code?"), _app(th, sessions)
    )
    assert len(nudges) == 1
    nudge = nudges[0]
    assert nudge.text.startswith(RECALL_HEADER)
    assert data_lines(nudge.text) == ["- tabs (global): The user indents Python code with tabs"]
    assert "pgbouncer" not in nudge.text
    assert nudge.memory_ids == (th.show("tabs").id,)


@pytest.mark.parametrize("prompt", [None, "", "   ", "indent?", "  tabs   \n  "])
def test_recall_skips_missing_and_short_prompts(
    th: Thatch, embedder: _CountingEmbedder, prompt: str | None, sessions: SessionStore
) -> None:
    _seed_memories(th)
    assert recall_source.thatch_nudges(_prompt(prompt), _app(th, sessions)) == []
    assert embedder.queries == 0


def test_min_prompt_chars_is_read_from_the_settings(th: Thatch, sessions: SessionStore) -> None:
    _seed_memories(th)
    assert (
        recall_source.thatch_nudges(_prompt("indent tabs"), _app(th, sessions, min_prompt_chars=20))
        == []
    )
    assert recall_source.thatch_nudges(
        _prompt("indent tabs"), _app(th, sessions, min_prompt_chars=5)
    )


def test_memories_shown_recently_are_left_out(th: Thatch, sessions: SessionStore) -> None:
    _seed_memories(th)
    th.remember("tabs-go", "Go code is indented with tabs by gofmt", store="global")
    tabs, tabs_go = th.show("tabs").id, th.show("tabs-go").id
    app = _app(th, sessions, repeat_window=2)
    prompt = "indent code with tabs"
    (first,) = _submit(app, prompt)
    assert set(first.memory_ids) == {tabs, tabs_go}

    sessions.mark_shown("s1", [tabs])
    (again,) = _submit(app, prompt)
    assert again.memory_ids == (tabs_go,)
    assert "- tabs (global)" not in again.text
    # Another session has seen nothing.
    (other,) = _submit(app, prompt, session="s2")
    assert set(other.memory_ids) == {tabs, tabs_go}

    sessions.mark_shown("s1", [tabs_go])
    assert _submit(app, prompt) == []
    # Two prompts after tabs was shown it is still recent; the third shows it again.
    (back,) = _submit(app, prompt)
    assert back.memory_ids == (tabs,)


def test_recall_nudge_respects_the_budget(th: Thatch, sessions: SessionStore) -> None:
    for n in range(5):
        th.remember(f"tabs{n}", f"note {n}: " + "indent tabs " * 60, store="global")
    nudges = recall_source.thatch_nudges(
        _prompt("indent tabs note"), _app(th, sessions, budget=600)
    )
    assert len(nudges) == 1
    assert len(nudges[0].text) <= 600
    assert len(nudges[0].memory_ids) == 5


def test_nothing_over_the_recall_threshold_gives_no_nudge(
    th: Thatch, sessions: SessionStore
) -> None:
    _seed_memories(th)
    assert (
        recall_source.thatch_nudges(_prompt("kubernetes helm chart values"), _app(th, sessions))
        == []
    )


# -- decision model --------------------------------------------------------------
def test_an_empty_decision_model_does_not_embed(
    th: Thatch, embedder: _CountingEmbedder, sessions: SessionStore
) -> None:
    _seed_memories(th)
    event = _prompt("write a parser for the config file")
    assert decision_source.thatch_nudges(event, _app(th, sessions)) == []
    assert embedder.queries == 0


@pytest.mark.parametrize("prompt", [None, "", "  \n"])
def test_decision_nudge_skips_empty_prompts(
    th: Thatch, embedder: _CountingEmbedder, prompt: str | None, sessions: SessionStore
) -> None:
    th.decisions.update("writing a parser", "handle errors first", "create", store="global")
    assert decision_source.thatch_nudges(_prompt(prompt), _app(th, sessions)) == []
    assert embedder.queries == 0


def test_decision_nudge_shows_the_block_and_logs_the_fire_when_delivered(
    th: Thatch, sessions: SessionStore
) -> None:
    th.decisions.update("writing a parser", "handle errors first", "create", store="global")
    th.decisions.update("naming git branches", "prefix the issue number", "create", store="global")
    nudges = decision_source.thatch_nudges(_prompt("writing a parser for toml"), _app(th, sessions))
    assert len(nudges) == 1
    nudge = nudges[0]
    assert (nudge.source, nudge.tier, nudge.priority) == ("decisions", 2, 60)
    assert nudge.text.startswith(DECISION_HEADER)
    assert 'When writing a parser: you may prefer "handle errors first"' in nudge.text
    assert "issue number" not in nudge.text
    # The fire is logged only once the nudge is delivered.
    assert th.decision_storage.fires() == []
    assert nudge.on_delivered is not None
    nudge.on_delivered()
    fires = th.decision_storage.fires()
    assert [(fire.session, fire.prediction_id) for fire in fires] == [
        ("s1", th.decisions.list()[0].id)
    ]


def test_decision_nudge_function_respects_the_budget(th: Thatch) -> None:
    for n in range(5):
        th.decisions.update(
            f"writing parser number {n}", f"choice {n} " + "because " * 20, "create", store="global"
        )
    whole = decision_source.decision_nudge(th, "writing parser number", "s9", 5000)
    assert whole is not None
    assert len(whole.text.splitlines()) == 6
    small = decision_source.decision_nudge(th, "writing parser number", "s9", 400)
    assert small is not None
    assert len(small.text) <= 400
    assert 1 < len(small.text.splitlines()) < 6


# -- reminders -------------------------------------------------------------------
def test_save_reminder_is_offered_on_prompts_only(th: Thatch, sessions: SessionStore) -> None:
    app = _app(th, sessions)
    (nudge,) = reminder_source.thatch_nudges(_prompt("hi"), app)
    assert nudge.tier == 3
    assert "memory_remember" in nudge.text
    start = Event(kind="session_start", harness="claude", session_id="s1")
    assert reminder_source.thatch_nudges(start, app) == []


def test_the_save_reminder_names_the_tools_as_the_events_harness_shows_them(
    th: Thatch, sessions: SessionStore
) -> None:
    import thatch_opencode.plugin

    app = _app(th, sessions, thatch_opencode.plugin)
    opencode = attrs.evolve(_prompt("hi"), harness="opencode")
    (nudge,) = reminder_source.thatch_nudges(opencode, app)
    assert "thatch_memory_remember" in nudge.text
    # A harness no plugin serves gets the bare names.
    (bare,) = reminder_source.thatch_nudges(_prompt("hi"), app)
    assert "thatch_memory_remember" not in bare.text
    assert "memory_remember" in bare.text


def test_all_sources_compose_within_the_budget(th: Thatch, sessions: SessionStore) -> None:
    _seed_memories(th)
    th.decisions.update("indenting python code", "use tabs", "confirm", store="global")
    app = _app(th, sessions, budget=300)
    event = _prompt("how should I indent this python code with tabs?")
    offered: list[Nudge] = []
    for source in (recall_source, decision_source, reminder_source):
        offered.extend(source.thatch_nudges(event, app))
    assert {n.source for n in offered} == {"recall", "decisions", "reminder"}
    chosen = compose(offered, app.settings.budget)
    assert len("\n\n".join(n.text for n in chosen)) <= 300
    assert chosen[0].source == "decisions"
    assert "reminder" not in {n.source for n in chosen}


def test_session_reminder_without_a_repository(th: Thatch) -> None:
    text = session_reminder(th)
    assert "no repository store" in text
    assert "global" in text
    for tool in ("memory_recall", "memory_remember", "extraction_done"):
        assert tool in text
    assert "Hygiene" not in text
    assert len(text) < 1200


def _git(cwd: Path, *args: str) -> None:
    subprocess.run(["git", "-C", str(cwd), *args], check=True, capture_output=True)


def test_session_reminder_names_the_store_and_the_hygiene_work(
    tmp_path: Path, embedder: _CountingEmbedder
) -> None:
    repo = tmp_path / "repo"
    repo.mkdir()
    _git(repo, "init", "-q", "-b", "main")
    _git(repo, "remote", "add", "origin", "git@github.com:acme/web.git")
    _git(
        repo,
        "-c",
        "user.name=t",
        "-c",
        "user.email=t@t",
        "commit",
        "-q",
        "--allow-empty",
        "-m",
        "i",
    )
    with _open(tmp_path / "home", embedder, repo) as th:
        th.remember("tabs", "indent with tabs")
        th.remember("gone", "feature flag for the old checkout", branch="old-checkout")
        th.remember("dup-a", "deploys run from the release branch every friday")
        th.remember("dup-b", "deploys run from the release branch every friday afternoon")
        fresh = session_reminder(th)
        assert "acme/web" in fresh
        assert "1 tied to a deleted branch" in fresh
        assert "1 near-duplicate pair to review" in fresh
        assert "untouched" not in fresh
        assert "hygiene_report" in fresh

        later = session_reminder(th, now=datetime.now(UTC) + timedelta(days=400))
        assert "4 memories untouched for 90 days" in later
        assert len(later) < 1200


def test_session_reminder_stays_short_with_long_store_names(
    tmp_path: Path, embedder: _CountingEmbedder
) -> None:
    repo = tmp_path / "repo"
    repo.mkdir()
    _git(repo, "init", "-q", "-b", "main")
    _git(repo, "remote", "add", "origin", f"git@github.com:{'o' * 45}/{'r' * 45}.git")
    with _open(tmp_path / "home", embedder, repo) as th:
        for n in range(3):
            th.remember(f"m{n}", f"fact number {n}", branch=f"gone-{n}")
        text = session_reminder(th, now=datetime.now(UTC) + timedelta(days=4000))
        assert "r" * 45 in text
        assert "3 tied to deleted branches" in text
        assert len(text) < 1200


# -- delivery and registration ------------------------------------------------------
class _Custom(HarnessBase):
    name = "custom"

    def deliver(self, nudges: Sequence[Nudge], event: Event) -> str:
        return f"custom:{len(nudges)}"


class _HarnessPlugin:
    @hookimpl
    def thatch_harnesses(self) -> list[Harness]:
        return [_Custom()]


def test_builtins_register_and_only_harnesses_format_the_output() -> None:
    manager = pluggy.PluginManager(hookspecs.PROJECT)
    manager.add_hookspecs(hookspecs)
    for name, module in BUILTIN_PLUGINS.items():
        if name == "extraction-nudge":
            continue  # written separately
        manager.register(importlib.import_module(module), name=name)
    manager.check_pending()
    # Core's builtins serve no harness: no format of core's own answers anyone.
    assert [harness for found in manager.hook.thatch_harnesses() for harness in found] == []
    manager.register(_HarnessPlugin(), name="harness")
    nudges = [Nudge(source="a", text="one"), Nudge(source="b", text="two")]
    (found,) = manager.hook.thatch_harnesses()
    (custom,) = found
    assert custom.deliver(nudges, _prompt("x")) == "custom:2"
