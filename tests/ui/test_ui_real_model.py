"""The page over a home opened as the CLI opens it: real SQLite, real embedding model."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
import thatch
from starlette.testclient import TestClient

pytestmark = pytest.mark.slow


@pytest.fixture
def th(home: Path) -> Iterator[thatch.Thatch]:
    """Overrides the word-hash home: the installed plugins, the real model."""
    with thatch.open(home, cwd=home) as opened:
        yield opened


def test_search_and_try_a_prompt_with_the_real_model(th: thatch.Thatch, client: TestClient) -> None:
    th.remember("pkg-manager", "The project installs Python packages with uv", store="global")
    th.remember("lunch", "The team orders pizza on Fridays", store="global")
    # No word in common with the memory: only meaning finds it, first.
    page = client.get("/memories", params={"q": "which dependency tool do we use"}).text
    assert "pkg-manager" in page
    assert "lunch" not in page or page.index("pkg-manager") < page.index("lunch")

    th.decisions.update(
        "reviewing a pull request that touches old tech debt",
        "leave the debt alone unless it blocks the change",
        "create",
        store="global",
    )
    tried = client.get(
        "/decisions", params={"prompt": "Please review this pull request; it touches old debt"}
    ).text
    would_fire = tried.split("<h2>Predictions</h2>")[0]
    assert "Would fire for this prompt" in would_fire
    assert "leave the debt alone unless it blocks the change" in would_fire
