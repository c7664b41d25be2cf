"""The private cattrs converter that turns thatch's records into JSON-ready data."""

from __future__ import annotations

from datetime import UTC, datetime
from functools import cache
from typing import Any

import cattrs


@cache
def converter() -> cattrs.Converter:
    """thatch's own converter (never cattrs' global one): datetimes as ISO 8601 UTC."""
    conv = cattrs.Converter()
    conv.register_unstructure_hook(datetime, lambda value: value.astimezone(UTC).isoformat())
    conv.register_structure_hook(datetime, lambda value, _: _parse_time(value))
    return conv


def _parse_time(value: Any) -> datetime:
    parsed = datetime.fromisoformat(value) if isinstance(value, str) else value
    return parsed if parsed.tzinfo else parsed.replace(tzinfo=UTC)


def to_json_data(record: Any) -> Any:
    """Any thatch record (or list of them) as dicts, lists, strings and numbers."""
    return converter().unstructure(record)
