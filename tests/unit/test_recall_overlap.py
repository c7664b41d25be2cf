"""Hybrid recall searches by words on a worker thread beside the embedding, with the same answer.

The overlap is only a matter of time: the hits are those of the two searches
made one after the other, a words search's error reaches the caller, and the
single-list modes make no words search on another thread.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import thatch_sqlite.plugin
from thatch.api import Thatch
from thatch.memory import recall as recall_module
from thatch.plugin.config import Config
from thatch.testing import WordHashEmbedder, plugins_with

FACTS = {
    "deploy": "deploys run from the release branch after the staging check passes",
    "tokens": "the auth service refreshes tokens five minutes before they expire",
    "retries": "the billing export retries a failed upload three times with backoff",
    "schema": "schema migrations are written by hand and reviewed by two people",
    "cache": "the asset cache is cleared by the deploy script, never by hand",
}
QUERIES = ("how do deploys work", "token refresh before expiry", "billing upload retries", "cache")


class _InLine:
    """A pool that runs what it is given at once, on the caller's thread."""

    def submit(self, fn: Any, *args: Any, **kwargs: Any) -> Any:
        class Done:
            def __init__(self) -> None:
                self.value = fn(*args, **kwargs)

            def result(self) -> Any:
                return self.value

        return Done()


@pytest.fixture
def th(tmp_path: Path) -> Iterator[Thatch]:
    plugins = plugins_with(thatch_sqlite.plugin, embedder=WordHashEmbedder())
    with Thatch(Config.load(tmp_path / "home", environ={}), plugins, tmp_path) as opened:
        for label, fact in FACTS.items():
            opened.remember(label, fact)
        yield opened


def _answers(th: Thatch) -> list[list[tuple[str, float, float, int | None]]]:
    return [
        [
            (hit.memory.label, hit.score, hit.cosine, hit.text_rank)
            for hit in th.recall(query, record=False, min_cosine=-1)
        ]
        for query in QUERIES
    ]


def test_hybrid_recall_answers_as_the_searches_made_in_turn(
    th: Thatch, monkeypatch: pytest.MonkeyPatch
) -> None:
    overlapped = _answers(th)
    monkeypatch.setattr(recall_module, "_WORKERS", _InLine())
    assert _answers(th) == overlapped
    assert any(hit[3] is not None for hits in overlapped for hit in hits)


def test_the_words_search_runs_on_another_thread_only_in_hybrid_mode(
    th: Thatch, monkeypatch: pytest.MonkeyPatch
) -> None:
    storage = th.memory_storage
    searched_on: list[tuple[str, bool]] = []
    text_search = storage.text_search

    def watched(*args: Any, **kwargs: Any) -> Any:
        searched_on.append((mode, threading.current_thread() is threading.main_thread()))
        return text_search(*args, **kwargs)

    monkeypatch.setattr(storage, "text_search", watched)
    for mode in ("hybrid", "words", "vector"):
        th.recall("deploy", mode=mode, record=False)  # type: ignore[arg-type]
    assert searched_on == [("hybrid", False), ("words", True)]


def test_an_error_of_the_words_search_reaches_the_caller(
    th: Thatch, monkeypatch: pytest.MonkeyPatch
) -> None:
    def broken(*args: Any, **kwargs: Any) -> Any:
        raise RuntimeError("full-text index is corrupt")

    monkeypatch.setattr(th.memory_storage, "text_search", broken)
    with pytest.raises(RuntimeError, match="full-text index is corrupt"):
        th.recall("deploy", record=False)
