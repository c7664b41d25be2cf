"""A setup target's changes as JSON text, to compare with golden files.

Temporary folders become ``<home>`` and ``<project>``; file contents and
text blocks are only named (their text has golden files of its own).
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import Any

from thatch.plugin.setup import Change, JsonEntry, JsonListItem, OwnedFile, SetupContext, TextBlock


def change_as_data(change: Change, context: SetupContext) -> dict[str, Any]:
    """One change as JSON data, with the context's folders replaced by placeholders."""

    def placed(text: str) -> str:
        text = text.replace(str(context.user_home), "<home>")
        if context.project is not None:
            text = text.replace(str(context.project), "<project>")
        return text

    path = placed(str(change.path))
    if isinstance(change, JsonEntry):
        return {"set": path, "keys": list(change.keys), "value": change.value}
    if isinstance(change, JsonListItem):
        item = placed(change.item) if isinstance(change.item, str) else change.item
        return {"append": path, "keys": list(change.keys), "item": item}
    if isinstance(change, TextBlock):
        return {"block": path, "name": change.name, "text": f"<{change.name} block>"}
    if isinstance(change, OwnedFile):
        return {"own": path, "content": f"<{change.path.name}>", "executable": change.executable}
    raise AssertionError(f"unexpected change {change!r}")


def changes_json(changes: Iterable[Change], context: SetupContext) -> str:
    """All ``changes`` as indented JSON text, one object each (see :func:`change_as_data`)."""
    return json.dumps([change_as_data(change, context) for change in changes], indent=2) + "\n"
