"""A prediction's timeline page and the calibration page with its reliability diagram."""

from __future__ import annotations

import re

from starlette.testclient import TestClient
from thatch.api import Thatch

SITUATION, PREFERENCE = "naming a new module", "prefer a short noun <b>bold</b>"


def test_the_timeline_replays_each_signal_and_lists_showings(
    th: Thatch, client: TestClient
) -> None:
    created = th.decisions.update(SITUATION, PREFERENCE, "create", store="global")
    hits = th.decisions.query(SITUATION, stores="global", session="s1", record=True)
    assert [hit.prediction.id for hit in hits] == [created.prediction.id]
    confirmed = th.decisions.update(
        SITUATION, PREFERENCE, "confirm", store="global", session="s1", detail="kept the name"
    )
    softened = th.decisions.update(SITUATION, PREFERENCE, "soft", store="global")
    page = client.get("/prediction", params={"id": created.prediction.id}).text
    # Newest first: soft, confirm, the showing, create, each with the confidence it left.
    rows = re.findall(r'<tr class="entry-(\w+)">.*?class="num">(\d+)%', page, re.S)
    assert rows == [
        ("soft", f"{softened.confidence * 100:.0f}"),
        ("confirm", f"{confirmed.confidence * 100:.0f}"),
        ("shown", f"{created.confidence * 100:.0f}"),
        ("create", f"{created.confidence * 100:.0f}"),
    ]
    assert "kept the name" in page
    assert "&lt;b&gt;bold&lt;/b&gt;" in page
    assert "<b>bold</b>" not in page
    assert "<polyline" in page  # the confidence line
    assert "Its counts were set" not in page  # the replay matches the stored counts


def test_a_prediction_id_that_is_not_a_number_or_unknown_says_so(client: TestClient) -> None:
    answer = client.get("/prediction", params={"id": "x"})
    assert answer.status_code == 400
    assert "/decisions" in answer.text
    assert client.get("/prediction", params={"id": "999"}).status_code == 404


def test_calibration_scores_showings_and_draws_the_bins(th: Thatch, client: TestClient) -> None:
    empty = client.get("/calibration").text
    assert "none yet" in empty
    assert "<circle" not in empty
    th.decisions.update(SITUATION, PREFERENCE, "create", store="global")
    for session, signal in (("s1", "confirm"), ("s2", "confirm"), ("s3", "disconfirm")):
        th.decisions.query(SITUATION, stores="global", session=session, record=True)
        th.decisions.update(SITUATION, PREFERENCE, signal, store="global", session=session)
    report = th.decisions.calibration("all")
    assert report.scored == 3
    page = client.get("/calibration").text
    brier = re.search(r'class="num brier">([\d.]+)<', page)
    assert brier is not None
    assert brier.group(1) == f"{report.brier:.3f}"
    dots = re.findall(r'<circle class="bin" cx="([\d.]+)" cy="([\d.]+)"', page)
    assert len(dots) == sum(1 for b in report.bins if b.count)
    # The decision page links each prediction to its timeline, and to this page.
    decisions = client.get("/decisions").text
    assert 'href="/prediction?id=' in decisions
    assert 'href="/calibration?store=' in decisions
