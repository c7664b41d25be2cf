"""A PostToolBatch with a malformed call: that call is left out, the turn's others kept."""

from __future__ import annotations

import logging
from typing import Any

import pytest
import thatch_claude.plugin
from recorded import recorded
from thatch.plugin.errors import InvalidInputError
from thatch.plugin.events import Event, shared_identity
from thatch.testing import plugins_with


def batch(calls: list[Any], **changes: Any) -> dict[str, Any]:
    return recorded("claude", "post_tool_batch", tool_calls=calls, **changes)


def parse(payload: dict[str, Any]) -> Event:
    harness = plugins_with(thatch_claude.plugin).harness("claude")
    assert harness is not None
    return harness.parse_event("PostToolBatch", payload)


def twenty_calls() -> list[dict[str, Any]]:
    first = recorded("claude", "post_tool_batch")["tool_calls"][0]
    return [{**first, "tool_use_id": f"toolu_{n}"} for n in range(20)]


@pytest.mark.parametrize(
    ("change", "named"),
    [
        (lambda call: "Bash", "tool_calls[7] must be a JSON object"),
        (lambda call: {**call, "tool_name": None}, "'tool_calls[7].tool_name'"),
        (lambda call: {**call, "tool_use_id": 7}, "'tool_calls[7].tool_use_id'"),
    ],
)
def test_one_malformed_call_of_twenty_costs_that_call_only(
    change: Any, named: str, caplog: pytest.LogCaptureFixture
) -> None:
    calls = twenty_calls()
    calls[7] = change(calls[7])
    with caplog.at_level(logging.WARNING, logger="thatch"):
        event = parse(batch(calls))
    assert [call.call_id for call in event.tool_calls] == [
        f"toolu_{n}" for n in range(20) if n != 7
    ]
    (warning,) = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    assert named in warning


def test_a_cursor_batch_is_identified_by_the_calls_it_kept() -> None:
    calls = twenty_calls()[:3]
    calls[1] = "Bash"
    event = parse(batch(calls, conversation_id="conv-1"))
    assert event.identity == shared_identity("tool_use", "conv-1", "toolu_0,toolu_2")


def test_a_batch_whose_every_call_is_malformed_is_a_bad_payload() -> None:
    with pytest.raises(InvalidInputError, match=r"tool_calls\[0\] must be a JSON object"):
        parse(batch(["Bash", 3]))
