"""SourceFailures: a raising source's first failure in full, the later ones counted."""

from __future__ import annotations

import logging

import pytest
from thatch_receptor.source_failures import MAX_ERROR_TEXT, SourceFailures, error_text

LOG = logging.getLogger("test.source_failures")


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def fail(failures: SourceFailures, source: str = "broken", message: str = "boom") -> None:
    try:
        raise RuntimeError(message)
    except RuntimeError as error:
        failures.failed(source, error)


def test_the_first_failure_has_a_traceback_and_the_next_are_counted_once_a_minute(
    caplog: pytest.LogCaptureFixture,
) -> None:
    clock = Clock()
    failures = SourceFailures(LOG, interval=60.0, clock=clock)
    for _ in range(10):
        fail(failures)
        clock.now += 1.0
    assert len(caplog.records) == 1
    assert caplog.records[0].exc_info is not None
    clock.now += 60.0
    fail(failures, message="boom again\nsecond line")
    assert len(caplog.records) == 2
    counted = caplog.records[1]
    assert counted.exc_info is None  # a short line: no traceback
    assert counted.getMessage() == (
        "receptor signal source 'broken' failed 10 more time(s) in 70 s, 11 in all "
        "(last: RuntimeError: boom again); its readings are left out"
    )
    fail(failures)
    assert len(caplog.records) == 2  # the count starts again from that line
    assert failures.count("broken") == 12


def test_each_source_gets_its_own_traceback(caplog: pytest.LogCaptureFixture) -> None:
    failures = SourceFailures(LOG, clock=Clock())
    fail(failures, "one")
    fail(failures, "two")
    fail(failures, "one")
    assert [record.exc_info is not None for record in caplog.records] == [True, True]
    assert (failures.count("one"), failures.count("two"), failures.count("none")) == (2, 1, 0)


def test_an_error_text_is_one_short_line() -> None:
    assert error_text(ValueError()) == "ValueError"
    long = error_text(ValueError("x" * 1000))
    assert len(long) == MAX_ERROR_TEXT
    assert long.endswith("…")
