"""Reading input files named on the command line."""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from thatch.errors import InvalidInputError, ThatchError
from thatch.jsonlines import optional_text, parse_object, require_text


def read_lines(file: str) -> list[str]:
    """Lines of a UTF-8 file, or of stdin for '-'; a clear error when unreadable."""
    if file == "-":
        return sys.stdin.read().splitlines()
    path = Path(file)
    try:
        return path.read_text(encoding="utf-8").splitlines()
    except FileNotFoundError:
        raise InvalidInputError(
            f"import file {file} does not exist; give a JSON lines file"
        ) from None
    except (IsADirectoryError, UnicodeDecodeError) as exc:
        raise InvalidInputError(f"import file {file} is not a UTF-8 text file ({exc})") from None


def parse_query_line(
    line: str, default_store: str | None, default_limit: int
) -> tuple[str, str | None, int]:
    """A stdin query line: plain text, or ``{"query", "store", "limit"}``."""
    text = line.strip()
    if not text.startswith("{"):
        return text, default_store, default_limit
    data = parse_object(text, "the line", '{"query": "...", "store": "...", "limit": 5}')
    require_text(data, "the JSON object", ("query",))
    optional_text(data, "the JSON object", ("store",))
    store, limit = data.get("store", default_store), data.get("limit", default_limit)
    if isinstance(limit, bool) or not isinstance(limit, int) or limit < 1:
        raise InvalidInputError(f'"limit" {limit!r} must be a whole number of at least 1')
    return data["query"], store, limit


#: Answers one query: (query, store, limit) -> its results as JSON-ready dicts.
Answer = Callable[[str, str | None, int], list[dict[str, Any]]]


def answer_stdin_queries(answer: Answer, default_store: str | None, default_limit: int) -> int:
    """One JSON line out per query line in; a bad line gets ``{"line", "error"}``.

    Returns the exit status: 1 when any line failed, so scripts notice.
    """
    failed = 0
    for number, line in enumerate(sys.stdin, 1):
        if not line.strip():
            continue
        try:
            query, store, limit = parse_query_line(line, default_store, default_limit)
            reply: dict[str, Any] = {
                "query": query,
                "store": store or "default",
                "results": answer(query, store, limit),
            }
        except ThatchError as exc:
            failed += 1
            reply = {"line": number, "error": str(exc)}
        print(json.dumps(reply, ensure_ascii=False), flush=True)
    return 1 if failed else 0
