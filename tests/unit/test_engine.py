"""The memory engine over the real SQLite backend with a fake (word-hash) embedder."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
import thatch_sqlite.plugin
from thatch.api import Thatch
from thatch.memory.hygiene import hygiene_report
from thatch.memory.writer import MemoryInput
from thatch.plugin.config import Config
from thatch.plugin.errors import ArchivedMemoryError, InvalidInputError, NotFoundError
from thatch.plugin.records import Memory
from thatch.testing import WordHashEmbedder, plugins_with


def _open(home: Path, embedder: WordHashEmbedder, cwd: Path) -> Thatch:
    plugins = plugins_with(thatch_sqlite.plugin, embedder=embedder)
    return Thatch(Config.load(home, environ={}), plugins, cwd)


@pytest.fixture
def th(tmp_path: Path) -> Iterator[Thatch]:
    with _open(tmp_path / "home", WordHashEmbedder(), tmp_path) as opened:
        yield opened


def test_default_store_outside_git_is_global(th: Thatch) -> None:
    result = th.remember("tabs", "indent with tabs")
    assert result.memory.store == "global"
    assert result.action == "created"
    assert th.stores_for(None) == ("global",)


def test_recall_fuses_meaning_and_words(th: Thatch) -> None:
    th.remember("tabs", "indent code with tabs", store="global")
    th.remember("db", "sessions live in postgres", store="global")
    hits = th.recall("tabs indent")
    assert hits[0].memory.label == "tabs"
    assert hits[0].text_rank == 1
    assert hits[0].score == pytest.approx(1.0)
    words_only = th.recall("postgres", mode="words")
    assert [hit.memory.label for hit in words_only] == ["db"]
    assert th.recall("indent tabs", min_cosine=0.99) == []


def test_recall_counts_only_when_recorded(th: Thatch) -> None:
    th.remember("tabs", "indent code with tabs", store="global")
    th.recall("tabs", record=False)
    assert th.show("tabs").recall_count == 0
    th.recall("tabs")
    assert th.show("tabs").recall_count == 1


def test_secrets_redacted_and_counted(th: Thatch) -> None:
    token = "ghp_" + "x" * 36
    result = th.remember("bot", f"the bot token is {token}", store="global")
    assert result.redactions == 1
    assert token not in th.show("bot").content


def test_archived_memory_refuses_update_and_hides(th: Thatch) -> None:
    th.remember("ci", "ci on buildkite", store="global")
    th.archive("ci")
    assert th.recall("buildkite") == []
    with pytest.raises(ArchivedMemoryError, match="unarchive"):
        th.remember("ci", "ci on jenkins", store="global", overwrite=True)
    assert th.show("ci").content == "ci on buildkite"
    th.unarchive("ci")
    assert th.remember("ci", "ci on jenkins", store="global", overwrite=True).action == "updated"


def test_forget_and_missing(th: Thatch) -> None:
    th.remember("x", "something", store="global")
    th.forget("x")
    with pytest.raises(NotFoundError, match="thatch list all"):
        th.show("x")


def test_import_lines_is_idempotent_and_validates_first(th: Thatch) -> None:
    from thatch.memory.transfer import parse_lines

    lines = [
        '{"label": "a", "content": "alpha fact", "store": "global"}',
        '{"label": "b", "content": "beta fact", "store": "acme/web", "archived": true}',
    ]
    first = th.import_lines(list(parse_lines(lines, "f")))
    assert (first.created, first.unchanged) == (2, 0)
    assert th.show("b", "acme/web").archived
    second = th.import_lines(list(parse_lines(lines, "f")))
    assert (second.created, second.updated, second.unchanged) == (0, 0, 2)
    with pytest.raises(InvalidInputError, match="f line 1"):
        list(parse_lines(['{"label": "../x", "content": "c", "store": "global"}'], "f"))


def test_reembed_moves_memories_to_the_current_model(tmp_path: Path) -> None:
    home = tmp_path / "home"
    with _open(home, WordHashEmbedder(model_id="test/old"), tmp_path) as old:
        old.remember("a", "alpha fact", store="global")
        old.remember("b", "beta fact", store="global")
        old.decisions.update("writing a parser", "handle errors first", "create", store="global")
    with _open(home, WordHashEmbedder(model_id="test/new"), tmp_path) as new:
        assert new.recall("alpha") == []  # vectors of another model are never compared
        assert new.decisions.query("writing a parser", stores=["global"]) == []
        assert new.reembed() == 4  # two memories, one matcher, one prediction
        assert new.memory_storage.models_in_use() == {"test/new": 2}
        assert new.recall("alpha")[0].memory.label == "a"
        fired = new.decisions.query("writing a parser", stores=["global"])
        assert [hit.prediction.statement for hit in fired] == ["handle errors first"]
        assert new.reembed() == 0


def test_duplicates_and_review(th: Thatch) -> None:
    th.remember("one", "deploy with make release", store="global")
    similar = th.remember("two", "deploy with make release please", store="global").similar
    assert [s.label for s in similar] == ["one"]
    pairs = th.duplicates()
    assert [(p.first.label, p.second.label) for p in pairs] == [("one", "two")]
    th.mark_reviewed("two", "one")
    assert th.duplicates() == []
    th.remember("two", "deploy with make release now", store="global", overwrite=True)
    assert len(th.duplicates()) == 1  # the review was of the old text


def _memory(
    label: str,
    updated_days_ago: int,
    recalled_days_ago: int | None,
    branch: str | None = None,
    store: str = "acme/web",
) -> Memory:
    now = datetime(2026, 11, 30, tzinfo=UTC)
    updated = now - timedelta(days=updated_days_ago)
    return Memory(
        id=hash(label) % 1000,
        store=store,
        label=label,
        content="c",
        branch=branch,
        archived=False,
        model="m",
        created_at=updated,
        updated_at=updated,
        last_recalled_at=None
        if recalled_days_ago is None
        else now - timedelta(days=recalled_days_ago),
    )


def test_hygiene_classification() -> None:
    now = datetime(2026, 11, 30, tzinfo=UTC)
    memories = [
        _memory("fresh", 10, None),
        _memory("old-unused", 120, None),
        _memory("old-but-recalled", 200, 5),
        _memory("old-recall", 200, 95),
        _memory("gone-branch", 1, None, branch="feature/gone"),
        _memory("live-branch", 1, None, branch="main"),
        _memory("other-repo", 1, None, branch="feature/gone", store="acme/api"),
    ]
    report = hygiene_report(memories, [], now=now, repo_store="acme/web", branches={"main"})
    assert {m.label for m in report.stale} == {"old-unused", "old-recall"}
    assert {m.label for m in report.orphaned} == {"gone-branch"}
    outside = hygiene_report(memories, [], now=now, repo_store=None, branches=None)
    assert outside.orphaned == ()


def test_remember_many_reports_after_commit(th: Thatch) -> None:
    seen: list[str] = []

    def on_saved(result: object) -> None:
        label = result.memory.label  # type: ignore[attr-defined]
        assert th.memory_storage.get_memory("global", label) is not None
        seen.append(label)

    items = [MemoryInput(label=f"m{n}", content=f"fact {n}", store="global") for n in range(70)]
    th.remember_many(items, on_saved=on_saved)
    assert len(seen) == 70


class _CountingEmbedder(WordHashEmbedder):
    def __init__(self) -> None:
        super().__init__()
        self.queries = 0

    def embed_query(self, text: str):  # type: ignore[no-untyped-def]
        self.queries += 1
        return super().embed_query(text)


def test_an_empty_decision_model_answers_without_embedding(tmp_path: Path) -> None:
    embedder = _CountingEmbedder()
    with _open(tmp_path / "home", embedder, tmp_path) as th:
        assert th.decisions.query("Write a parser for the config file") == []
        assert embedder.queries == 0
        th.decisions.update("writing a parser", "handle errors first", "create", store="global")
        assert th.decisions.query("writing a parser") != []
        assert embedder.queries == 1
