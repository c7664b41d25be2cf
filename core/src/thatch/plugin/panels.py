"""Session panels: what a plugin shows of a live session on ``thatch ui``'s session page.

A panel is data, not HTML: a few named values over time (drawn as lines on
a 0..1 scale, with a dashed line where a value counts as high), moments
marked on that time line (a firing, a delivery), and short facts. The page
draws and escapes it; a plugin never writes markup.
"""

from __future__ import annotations

from collections.abc import Mapping

import attrs


@attrs.frozen
class PanelPoint:
    """The panel's values at one moment (epoch seconds); each value from 0 to 1."""

    at: float
    values: Mapping[str, float]


@attrs.frozen
class PanelMark:
    """A moment worth marking on the time line, e.g. ``kind="firing"``, ``label="frustration"``."""

    at: float
    kind: str
    label: str


@attrs.frozen
class SessionPanel:
    """One plugin's view of one session."""

    title: str
    #: Oldest first; the page draws one line per value name.
    series: tuple[PanelPoint, ...] = ()
    #: Where a value counts as high, by value name (drawn dashed).
    thresholds: Mapping[str, float] = attrs.field(factory=dict)
    marks: tuple[PanelMark, ...] = ()
    #: ``(label, value)`` rows shown under the chart.
    facts: tuple[tuple[str, str], ...] = ()
    #: When the plugin last changed what the panel shows (epoch seconds); the
    #: page updates itself when it moves.
    updated_at: float = 0.0
