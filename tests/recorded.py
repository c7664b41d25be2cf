"""Recorded harness payloads (``tests/data/HARNESS/NAME.json``), with fields changed per test."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

DATA = Path(__file__).parent / "data"

#: A payload loader: a name, then the fields to replace (None removes one).
Payload = Callable[..., dict[str, Any]]


def recorded(harness: str, name: str, **changes: Any) -> dict[str, Any]:
    """``tests/data/HARNESS/NAME.json``; ``changes`` replace fields (None removes one)."""
    data: dict[str, Any] = json.loads((DATA / harness / f"{name}.json").read_text())
    for key, value in changes.items():
        if value is None:
            data.pop(key, None)
        else:
            data[key] = value
    return data
