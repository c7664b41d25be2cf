"""The decision-model page in Chromium: it shows what the CLI records, as it records it."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

import pytest

if TYPE_CHECKING:
    from browser.conftest import Machine
    from browser.pages import Browser

pytestmark = pytest.mark.slow

MATCHER = "reviewing a pull request that touches old tech debt"
PREDICTION = "leave the debt alone unless it blocks the change"


@pytest.fixture(scope="module")
def prediction_id(machine: Machine) -> int:
    created = machine.thatch(
        "predictions", "update", "--matcher", MATCHER, "--prediction", PREDICTION,
        "--signal", "create", "--store", "global", "--json",
    )  # fmt: skip
    return int(json.loads(created)["prediction"]["id"])


@pytest.fixture
def page(prediction_id: int, browser: Browser) -> Browser:
    return browser


def percent(text: str) -> int:
    assert text.endswith("%"), text
    return int(text.removesuffix("%"))


def test_a_confirm_from_the_cli_raises_the_confidence_the_page_shows(
    page: Browser, machine: Machine, prediction_id: int
) -> None:
    row = f"#prediction-{prediction_id}"
    page.open("/decisions")
    assert PREDICTION in page.find(row).text
    before = percent(page.find(f"{row} .confidence").text)

    machine.thatch(
        "predictions", "update", "--matcher", MATCHER, "--prediction-id", str(prediction_id),
        "--signal", "confirm", "--store", "global",
    )  # fmt: skip
    listed = json.loads(machine.thatch("predictions", "list", "--json"))
    (cli,) = [p for p in listed if p["id"] == prediction_id]

    page.open("/decisions")
    after = percent(page.find(f"{row} .confidence").text)
    assert after > before
    assert after == round(cli["confidence"] * 100)
    confirm, disconfirm, tests = page.cells(f"{row} td.num")[2:5]
    assert (confirm, disconfirm, tests) == ("1", "0", "1")


def test_a_prediction_saved_while_the_page_runs_fires_for_a_prompt_tried_there(
    page: Browser, machine: Machine
) -> None:
    # Recorded by the CLI after the server loaded the decision model.
    machine.thatch(
        "predictions", "update", "--matcher", "choosing a name for a database table",
        "--prediction", "plural snake_case table names", "--signal", "create", "--store", "global",
    )  # fmt: skip
    page.open("/decisions")
    page.find("input[name=prompt]").send_keys("What should I call the new table for invoices?")
    page.click_and_wait(page.find("form.filters button[type=submit]"))
    assert "Would fire for this prompt" in page.text, page.text
    fired = page.cells("table.hits tbody tr td:nth-child(2)")
    assert fired[:1] == ["plural snake_case table names"], page.text
