"""Hybrid recall keeps an exact identifier on top when meaning cannot tell near misses apart."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import numpy.typing as npt
import pytest
import thatch_sqlite.plugin
from thatch.api import Thatch
from thatch.plugin.config import Config
from thatch.testing import WordHashEmbedder, plugins_with


class DigitBlindEmbedder(WordHashEmbedder):
    """A word-hash embedder blind to digits: a sentence model barely tells 9086 from 9087."""

    def _vector(self, text: str) -> npt.NDArray[np.float32]:
        return super()._vector(re.sub(r"\d", "", text))


@pytest.fixture
def th(tmp_path: Path) -> Iterator[Thatch]:
    plugins = plugins_with(thatch_sqlite.plugin, embedder=DigitBlindEmbedder())
    with Thatch(Config.load(tmp_path / "home", environ={}), plugins, tmp_path) as opened:
        yield opened


def test_exact_ticket_id_beats_closer_meanings(th: Thatch) -> None:
    # The answer is the longest text, so by meaning alone it ranks last.
    th.remember(
        "answer", "ticket BIL-9086 rounds refunds for the billing export of partner invoices"
    )
    th.remember("near-1", "ticket BIL-9087 rounds refunds", store="global")
    th.remember("near-2", "ticket BIL-9088 rounds refunds in billing", store="global")
    by_meaning = [hit.memory.label for hit in th.recall("BIL-9086", mode="vector", record=False)]
    assert by_meaning[-1] == "answer"
    hits = th.recall("BIL-9086", record=False)
    assert hits[0].memory.label == "answer"
    assert hits[0].text_rank == 1


def test_words_and_vector_modes_keep_their_own_order(th: Thatch) -> None:
    th.remember(
        "answer", "ticket BIL-9086 rounds refunds for the billing export of partner invoices"
    )
    th.remember("near-1", "ticket BIL-9087 rounds refunds", store="global")
    words = [hit.memory.label for hit in th.recall("BIL-9086", mode="words", record=False)]
    vector = [hit.memory.label for hit in th.recall("BIL-9086", mode="vector", record=False)]
    assert words[0] == "answer"
    assert vector[0] == "near-1"
