"""The plugins and doctor page: ``thatch plugins``' rows, and doctor's findings on demand."""

from __future__ import annotations

from pathlib import Path

import pytest
from starlette.testclient import TestClient
from thatch.api import Thatch
from thatch.ui.doctor_run import Finding
from thatch.ui.guard import CSRF_FIELD, Secrets

FAKE_EMBEDDER_MODULE = "thatch_ui_test_embedder"


def test_the_loaded_plugins_with_their_hooks(th: Thatch, client: TestClient) -> None:
    page = client.get("/plugins").text
    for info in th.describe_plugins():
        assert f"<td>{info.name}</td>" in page
        assert ", ".join(info.hooks) in page
    assert "thatch_memory_storage" in page


def test_doctor_runs_only_when_asked(client: TestClient, keys: Secrets) -> None:
    runs: list[int] = []

    def doctor() -> list[Finding]:
        runs.append(1)
        return [
            Finding("database", "ok", "passes the integrity check"),
            Finding("daemon", "fail", "hung: <b>pid 7</b>", "'thatch daemon stop'"),
        ]

    client.app.state.ui.doctor = doctor  # type: ignore[attr-defined]
    page = client.get("/plugins").text
    assert runs == []
    assert "Run thatch doctor" in page
    page = client.post("/doctor", data={CSRF_FIELD: keys.csrf}).text
    assert runs == [1]
    assert "1 failing of 2 checks" in page
    assert "&lt;b&gt;pid 7&lt;/b&gt;" in page
    assert "&#39;thatch daemon stop&#39;" in page


def test_doctor_needs_the_csrf_token(client: TestClient) -> None:
    def doctor() -> list[Finding]:
        raise AssertionError("doctor ran without the CSRF token")

    client.app.state.ui.doctor = doctor  # type: ignore[attr-defined]
    assert client.post("/doctor").status_code == 403


def test_the_real_doctor_of_the_page_s_home(
    monkeypatch: pytest.MonkeyPatch, home: Path, client: TestClient, keys: Secrets
) -> None:
    """The page runs the real `thatch doctor` on the home it was opened on."""
    # Storage only: the doctor process needs no model to check the database.
    monkeypatch.setenv("THATCH_LOAD_PLUGINS", "sqlite")
    page = client.post("/doctor", data={CSRF_FIELD: keys.csrf}).text
    assert "passes the integrity check" in page
    assert str(home) in page
    assert "not running (hooks and" in page
