"""A hook's request with the secrets in its payload redacted, for the spool file it leaves.

A hook command writes its request to the spool before it sends it (see
:mod:`thatch.hookcmd.spool`). When the daemon does not take the event, the
file stays on disk until a daemon replays it, so the hook writes it again
through :func:`redacted_request` first. Only the payload's strings change:
the envelope (event id, command, harness, event, times, cwd, forwarded
variables) is what the replay needs, and holds no tool output.

Each string is redacted as :func:`thatch.redact.redact` redacts any text;
a string under a key is then redacted once more with its key, as the JSON
pair the daemon sees when it queues a tool's input (``"password": "..."``
names the secret that the value alone does not). Dict keys are redacted too.
The daemon redacts again on ingest; redacting is idempotent, so the replayed
event is stored as the live one would have been.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from thatch.redact import redact

__all__ = ["redacted_payload", "redacted_request"]


def redacted_request(request: Mapping[str, Any]) -> tuple[dict[str, Any], int]:
    """``request`` with its ``payload`` redacted, and how many strings changed.

    The request itself is not modified; every field but ``payload`` is kept as it is.
    """
    counter = _Counter()
    payload = _value(request.get("payload"), counter)
    return {**request, "payload": payload}, counter.changed


def redacted_payload(value: Any) -> Any:
    """``value`` (parsed JSON) with every string and key in it redacted."""
    return _value(value, _Counter())


class _Counter:
    __slots__ = ("changed",)

    def __init__(self) -> None:
        self.changed = 0


def _value(value: Any, counter: _Counter) -> Any:
    # One frame a level: a hook's payload nests at most 500 (thatch.hookcmd.stdin.MAX_NESTING).
    if isinstance(value, str):
        return _text(value, counter)
    if isinstance(value, Mapping):
        result: dict[str, Any] = {}
        for key, item in value.items():
            clean_key = _text(key, counter) if isinstance(key, str) else key
            clean = _value(item, counter)
            if isinstance(clean, str) and isinstance(clean_key, str):
                clean = _in_pair(clean_key, clean, counter)
            result[clean_key] = clean
        return result
    if isinstance(value, list | tuple):
        return [_value(item, counter) for item in value]
    return value


def _text(text: str, counter: _Counter) -> str:
    cleaned = redact(text).text
    if cleaned != text:
        counter.changed += 1
    return cleaned


def _in_pair(key: str, value: str, counter: _Counter) -> str:
    """``value`` redacted as part of the JSON pair ``{key: value}`` (kept if that cannot parse)."""
    pair = json.dumps({key: value}, ensure_ascii=False)
    cleaned = redact(pair).text
    if cleaned == pair:
        return value
    try:
        parsed = json.loads(cleaned)
    except ValueError:
        return value
    if not isinstance(parsed, dict) or list(parsed) != [key] or not isinstance(parsed[key], str):
        return value
    counter.changed += 1
    return str(parsed[key])
