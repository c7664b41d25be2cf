"""The reliability diagram of a calibration report, drawn with matplotlib.

matplotlib is optional (``pip install 'thatch-core[plot]'``); only
``thatch predictions calibration --plot`` needs it.
"""

from __future__ import annotations

import os
from pathlib import Path

from thatch.decisions.calibration import CalibrationReport
from thatch.plugin.errors import InvalidInputError, PluginMissingError

_FIX = "name a .png file in a folder you can write, like calib.png"


def check_plot_path(path: Path) -> Path:
    """Return ``path`` if a PNG may be written there; a clear error otherwise.

    Checked before anything is computed, and nothing is created: a missing
    folder is the user's to make.
    """
    if path.suffix.lower() != ".png":
        raise InvalidInputError(f"plot file {path} does not end in .png; {_FIX}")
    if path.is_dir():
        raise InvalidInputError(f"plot file {path} is a folder; {_FIX}")
    folder = path.parent
    if not folder.is_dir():
        raise InvalidInputError(f"the folder of plot file {path} does not exist; {_FIX}")
    if not os.access(folder, os.W_OK | os.X_OK):
        raise InvalidInputError(f"the folder of plot file {path} is not writable; {_FIX}")
    return path


def draw_reliability(report: CalibrationReport, path: Path) -> Path:
    """Write the diagram as PNG to ``path``: mean outcome against mean confidence per bin."""
    check_plot_path(path)
    try:
        import matplotlib

        matplotlib.use("Agg")  # no screen needed
        import matplotlib.pyplot as plt
    except ImportError:
        raise PluginMissingError(
            "drawing the plot needs matplotlib; install it: pip install 'thatch-core[plot]'"
        ) from None

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
    try:
        figure.savefig(path)
    except OSError as exc:
        # What the folder's mode does not tell: /proc, a full disk, a read-only mount.
        raise InvalidInputError(f"cannot write plot file {path} ({exc.strerror}); {_FIX}") from None
    finally:
        plt.close(figure)
    return path
