"""A spooled hook request redacted: the payload's strings only, the envelope left whole."""

from __future__ import annotations

import json

from thatch.redact import redact
from thatch.redact.payload import redacted_payload, redacted_request

# Built by concatenation so the repository holds no string that looks like a live key.
AWS_KEY = "AKIA" + "IOSFODNN7EXAMPLE"
GITHUB_TOKEN = "ghp_" + "ZyXwVuTsRqZyXwVuTsRqZyXwVuTsRqpOnMlK"


def request(payload: object) -> dict[str, object]:
    return {
        "protocol": 1,
        "op": "hook",
        "command": "hook",
        "harness": "claude",
        "event": "PostToolBatch",
        "event_id": "0123abcd",
        "received_at": 1.5,
        "cwd": "/work",
        "env": {"CLAUDE_PROJECT_DIR": "/work"},
        "json": False,
        "payload": payload,
    }


def test_the_payloads_strings_are_redacted_and_the_envelope_kept() -> None:
    payload = {
        "session_id": "3f1c2a9e-7b4d-4c1e-9a55-0d2f6e8b1c47",
        "tool_calls": [
            {
                "tool_name": f"Bash-{GITHUB_TOKEN}",
                "tool_input": {"command": "env", "timeout": 30, "background": False},
                "tool_response": {"stdout": f"AWS_KEY={AWS_KEY} GITHUB={GITHUB_TOKEN}"},
            }
        ],
    }
    original = json.loads(json.dumps(payload))
    clean, changed = redacted_request(request(payload))
    assert payload == original  # not modified in place
    assert changed == 2
    assert {k: v for k, v in clean.items() if k != "payload"} == {
        k: v for k, v in request(None).items() if k != "payload"
    }
    text = json.dumps(clean)
    assert AWS_KEY not in text
    assert GITHUB_TOKEN not in text
    (call,) = clean["payload"]["tool_calls"]
    assert call["tool_name"] == "Bash-[REDACTED:github-token]"
    assert call["tool_input"] == {"command": "env", "timeout": 30, "background": False}
    assert call["tool_response"]["stdout"] == (
        "AWS_KEY=[REDACTED:aws-access-key-id] GITHUB=[REDACTED:github-token]"
    )
    assert clean["payload"]["session_id"] == payload["session_id"]


def test_a_value_named_a_secret_by_its_key_is_redacted_as_the_daemon_sees_the_pair() -> None:
    # The value alone is no secret; as the JSON pair the daemon queues, it is.
    assert redact("hunter2hunter2").count == 0
    clean = redacted_payload({"tool_input": {"password": "hunter2hunter2", "user": "bob"}})
    assert clean == {"tool_input": {"password": "[REDACTED:secret-assignment]", "user": "bob"}}


def test_keys_and_list_items_are_redacted_too() -> None:
    clean = redacted_payload({GITHUB_TOKEN: [f"key {AWS_KEY}", 3, None, True]})
    assert clean == {"[REDACTED:github-token]": ["key [REDACTED:aws-access-key-id]", 3, None, True]}


def test_redacting_again_changes_nothing() -> None:
    payload = {
        "a": f"AWS_KEY={AWS_KEY}",
        "password": "hunter2hunter2",
        "n": [GITHUB_TOKEN, {"token": "abc123def456ghi789"}],
    }
    once, changed = redacted_request(request(payload))
    assert changed > 0
    twice, changed_again = redacted_request(once)
    assert twice == once
    assert changed_again == 0
    # The daemon redacts each text again on ingest: nothing more comes off.
    assert all(redact(text).count == 0 for text in _strings(once["payload"]))


def test_a_payload_without_secrets_comes_back_equal_with_nothing_changed() -> None:
    payload = {"session_id": "s1", "prompt": "café ✓ fix the refund test", "n": 1.5}
    clean, changed = redacted_request(request(payload))
    assert changed == 0
    assert clean == request(payload)


def _strings(value: object) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        return [s for k, v in value.items() for s in (*_strings(k), *_strings(v))]
    if isinstance(value, list):
        return [s for item in value for s in _strings(item)]
    return []
