"""The reliability diagram of a calibration report, drawn with matplotlib.

matplotlib is optional (``pip install 'thatch-core[plot]'``); only
``thatch predictions calibration --plot`` needs it.
"""

from __future__ import annotations

from pathlib import Path

from thatch.decisions.calibration import CalibrationReport
from thatch.plugin.plotting import check_plot_path, pyplot, save_figure

#: The file name errors suggest.
EXAMPLE = "calib.png"


def draw_reliability(report: CalibrationReport, path: Path) -> Path:
    """Write the diagram as PNG to ``path``: mean outcome against mean confidence per bin."""
    check_plot_path(path, EXAMPLE)
    plt = pyplot("'thatch-core[plot]'")

    # (confidence, outcome, showings) of each bin with showings: only those have means.
    points = [
        (b.mean_confidence, b.mean_outcome, b.count)
        for b in report.bins
        if b.mean_confidence is not None and b.mean_outcome is not None
    ]
    figure, axes = plt.subplots(figsize=(5, 5), dpi=100)
    axes.plot([0, 1], [0, 1], linestyle="--", color="grey", label="perfectly calibrated")
    axes.plot(
        [confidence for confidence, _, _ in points],
        [outcome for _, outcome, _ in points],
        marker="o",
        label="predictions",
    )
    for confidence, outcome, count in points:
        axes.annotate(
            str(count),
            (confidence, outcome),
            textcoords="offset points",
            xytext=(4, -10),
            fontsize=8,
        )
    brier = "n/a" if report.brier is None else f"{report.brier:.3f}"
    axes.set(
        xlim=(0, 1),
        ylim=(0, 1),
        xlabel="confidence shown",
        ylabel="observed outcome",
        title=f"thatch reliability ({report.scored} scored showings, Brier {brier})",
    )
    axes.legend(loc="upper left")
    return save_figure(plt, figure, path, EXAMPLE)
