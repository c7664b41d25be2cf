"""The receptor's panel on ``thatch ui``'s session page, made from the session's status file.

The daemon's reader writes the file (:mod:`thatch_receptor.status`); the page
runs in its own process and reads it here: the six axes over time with
their thresholds, the firings and deliveries marked, and the state in words.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from thatch.plugin import AXES, PanelMark, PanelPoint, SessionPanel

TITLE = "Receptor: how the work is going"


def panel_of(status: Mapping[str, Any]) -> SessionPanel:
    """The panel for one session's status (as :func:`thatch_receptor.status.snapshot` wrote it)."""
    series = tuple(
        PanelPoint(float(point["at"]), {axis: float(point["axes"][axis]) for axis in AXES})
        for point in status.get("series", ())
    )
    if not series:
        # A status from before the series was kept: its latest axes alone.
        series = (PanelPoint(float(status["updated_at"]), _axes(status["axes"])),)
    marks = tuple(
        PanelMark(float(f["at"]), "firing", f"{', '.join(f['fired'])} → {f['mode']}: {f['why']}")
        for f in status.get("firings", ())
    ) + tuple(
        PanelMark(float(d["at"]), "delivery", f"{d['mode']} via {d['via']} ({d['rule']})")
        for d in status.get("deliveries", ())
    )
    held = ", ".join(status.get("held", ())) or "none"
    facts = (
        ("tool calls", str(status.get("tool_calls", 0))),
        ("pattern", str(status.get("pattern", ""))),
        ("deep work", "yes: nothing interrupts it" if status.get("in_flow") else "no"),
        ("axes held", held),
        ("waiting for the next tool call", "one active item" if status.get("pending") else "none"),
        ("open offers", str(len(status.get("offers", ())))),
        ("unread notes", str(status.get("unread_notes", 0))),
    )
    return SessionPanel(
        title=TITLE,
        series=series,
        thresholds=_axes(status.get("thresholds", {})),
        marks=tuple(sorted(marks, key=lambda mark: mark.at)),
        facts=facts,
        updated_at=float(status.get("updated_at", 0.0)),
    )


def _axes(values: Mapping[str, Any]) -> dict[str, float]:
    return {axis: float(values[axis]) for axis in AXES if axis in values}
