"""Two saves of one new label at once, each through its own API object on one SQLite file.

Exactly as if they ran one after the other: the first creates the memory,
the second is refused as a duplicate without overwrite.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import numpy.typing as npt
import pytest
import thatch_sqlite.plugin
from thatch.api import Thatch
from thatch.plugin.config import Config
from thatch.plugin.errors import InvalidInputError, LabelTakenError
from thatch.testing import WordHashEmbedder, plugins_with


class MeetingEmbedder(WordHashEmbedder):
    """Embeds once every writer has come this far: each looked the label up and found none."""

    def __init__(self, meeting: threading.Barrier) -> None:
        super().__init__()
        self._meeting = meeting

    def embed_passages(self, texts: Sequence[str]) -> npt.NDArray[np.float32]:
        self._meeting.wait(timeout=30)
        return super().embed_passages(texts)


def _open(home: Path, cwd: Path, meeting: threading.Barrier) -> Thatch:
    plugins = plugins_with(thatch_sqlite.plugin, embedder=MeetingEmbedder(meeting))
    return Thatch(Config.load(home, environ={}), plugins, cwd)


@pytest.mark.parametrize("overwrite", [False, True])
def test_racing_saves_of_a_new_label_are_as_if_one_after_the_other(
    tmp_path: Path, overwrite: bool
) -> None:
    home = tmp_path / "home"
    contents = ["alpha content", "beta different content"]
    meeting = threading.Barrier(len(contents))
    opened = [_open(home, tmp_path, meeting) for _ in contents]
    outcomes: dict[str, str] = {}

    def save(th: Thatch, content: str) -> None:
        try:
            outcomes[content] = th.remember(
                "r1-x", content, store="global", overwrite=overwrite
            ).action
        except InvalidInputError as exc:
            outcomes[content] = f"refused: {exc}"

    threads = [
        threading.Thread(target=save, args=(th, content))
        for th, content in zip(opened, contents, strict=True)
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    try:
        stored = opened[0].show("r1-x", "global")
    finally:
        for th in opened:
            th.close()

    actions = sorted(outcome.partition(":")[0] for outcome in outcomes.values())
    if overwrite:
        assert actions == ["created", "updated"]
        return
    assert actions == ["created", "refused"]
    [winner] = [content for content, outcome in outcomes.items() if outcome == "created"]
    [loser] = [content for content in contents if content != winner]
    assert stored.content == winner
    # The very refusal a save made after the other gets.
    assert outcomes[loser] == f"refused: {LabelTakenError(stored)}"
