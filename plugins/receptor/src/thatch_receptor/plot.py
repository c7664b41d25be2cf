"""``thatch receptor replay --plot``: each session's axes over time, firings and deliveries marked.

One panel per session (at most :data:`MAX_SESSIONS` in one figure): every
axis's value after each event, against minutes since the session's first
event; a dotted line at each firing, and a marker above the axes for each
decision that reached the agent, one shape per mode.

matplotlib is optional (``pip install 'thatch-receptor[plot]'``) and imported
only when a figure is drawn.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import attrs
from thatch.plugin import AXES, InvalidInputError
from thatch.plugin.plotting import check_plot_path, pyplot, save_figure

if TYPE_CHECKING:
    from thatch.plugin import Axis, DeliveryMode

#: Sessions one figure holds; more are refused before anything is replayed.
MAX_SESSIONS = 12
#: How each delivered mode is marked: (marker, colour).
MARKS: Mapping[DeliveryMode, tuple[str, str]] = {
    "active": ("v", "tab:red"),
    "notification": ("s", "tab:orange"),
    "passive": ("o", "tab:blue"),
}
#: The file name errors suggest.
EXAMPLE = "receptor.png"


@attrs.frozen
class SessionTrace:
    """What one session's panel shows."""

    session_id: str
    #: Each event's time (seconds since the epoch, or nominal).
    at: tuple[float, ...]
    #: Each axis's value after each event, aligned with ``at``.
    axes: Mapping[Axis, tuple[float, ...]]
    #: The times of the events that fired.
    firings: tuple[float, ...] = ()
    #: (time, final mode) of each decision.
    decisions: tuple[tuple[float, DeliveryMode], ...] = ()


def check_plot_target(path: Path, sessions: int) -> Path:
    """Return ``path`` if a figure of ``sessions`` panels may be written there; else a clear error.

    Checked before anything is replayed; nothing is created.
    """
    if sessions > MAX_SESSIONS:
        raise InvalidInputError(
            f"--plot draws at most {MAX_SESSIONS} sessions in one figure and the input has "
            f"{sessions}; replay a smaller file or folder, or leave out --plot"
        )
    return check_plot_path(path, EXAMPLE)


def draw_sessions(traces: Sequence[SessionTrace], path: Path) -> Path:
    """Write the figure of ``traces`` (one panel each) as PNG to ``path``."""
    check_plot_target(path, len(traces))
    plt = pyplot("'thatch-receptor[plot]'")
    panels = max(1, len(traces))
    figure, grid = plt.subplots(
        panels, 1, figsize=(11, 2.6 * panels), dpi=100, squeeze=False, sharex=False
    )
    for trace, panel in zip(traces, grid[:, 0], strict=False):
        _draw_panel(panel, trace)
    if not traces:
        grid[0, 0].set_title("no events")
    figure.tight_layout()
    return save_figure(plt, figure, path, EXAMPLE)


def _draw_panel(panel: Any, trace: SessionTrace) -> None:
    start = trace.at[0] if trace.at else 0.0
    minutes = [(at - start) / 60.0 for at in trace.at]
    for axis in AXES:
        panel.plot(minutes, trace.axes.get(axis, ()), label=axis, linewidth=1.2)
    for index, at in enumerate(trace.firings):
        label = "firing" if index == 0 else None
        panel.axvline((at - start) / 60.0, color="grey", linestyle=":", linewidth=0.8, label=label)
    for mode, (marker, colour) in MARKS.items():
        times = [(at - start) / 60.0 for at, decided in trace.decisions if decided == mode]
        if times:
            panel.scatter(times, [1.06] * len(times), marker=marker, color=colour, label=mode)
    panel.set(ylim=(0, 1.12), xlabel="minutes", ylabel="axis value", title=trace.session_id)
    # Outside the panel, so the delivery markers along its top stay visible.
    panel.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), fontsize=7)
