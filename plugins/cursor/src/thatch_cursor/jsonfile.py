"""Reading a Cursor config file the way core's setup engine reads it.

Cursor's files are JSON, but people leave comments and trailing commas in
them; core's JSONC reader accepts both, so setup and these checks never
disagree about whether a file is broken. Nothing here writes: the engine does.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from thatch.plugin.jsonc import loads

#: What :func:`load` returns for a file that does not exist or holds no value.
MISSING: Any = object()


def load(path: Path) -> Any:
    """The parsed file, or :data:`MISSING`.

    :raises ValueError: the file cannot be read or is not JSON/JSONC; the
        message names the file (and the line and column) and the fix.
    """
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return MISSING
    except (OSError, UnicodeDecodeError) as exc:
        raise ValueError(f"{path} cannot be read ({exc}); fix its permissions or encoding") from exc
    root = loads(text, str(path))
    return MISSING if root is None else root
