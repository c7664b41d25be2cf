"""The reliability diagram of a calibration report, drawn with matplotlib.

matplotlib is optional (``pip install 'thatch-core[plot]'``); only
``thatch predictions calibration --plot`` needs it.
"""

from __future__ import annotations

from pathlib import Path

from thatch.decisions.calibration import CalibrationReport
from thatch.errors import InvalidInputError, PluginMissingError


def draw_reliability(report: CalibrationReport, path: Path) -> Path:
    """Write the diagram as PNG to ``path``: mean outcome against mean confidence per bin."""
    if path.suffix.lower() != ".png":
        raise InvalidInputError(f"plot file {path} does not end in .png; name it like calib.png")
    try:
        import matplotlib

        matplotlib.use("Agg")  # no screen needed
        import matplotlib.pyplot as plt
    except ImportError:
        raise PluginMissingError(
            "drawing the plot needs matplotlib; install it: pip install 'thatch-core[plot]'"
        ) from None

    filled = [b for b in report.bins if b.count]
    figure, axes = plt.subplots(figsize=(5, 5), dpi=100)
    axes.plot([0, 1], [0, 1], linestyle="--", color="grey", label="perfectly calibrated")
    axes.plot(
        [b.mean_confidence for b in filled],
        [b.mean_outcome for b in filled],
        marker="o",
        label="predictions",
    )
    for b in filled:
        axes.annotate(
            str(b.count),
            (b.mean_confidence or 0, b.mean_outcome or 0),
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
    path.parent.mkdir(parents=True, exist_ok=True)
    figure.savefig(path)
    plt.close(figure)
    return path
