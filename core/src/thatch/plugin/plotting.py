"""PNG figures drawn with matplotlib (optional): checked paths, a clear error without it.

``thatch predictions calibration --plot`` and ``thatch receptor replay --plot``
draw with these; a plugin's own ``--plot`` may too.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from thatch.plugin.errors import InvalidInputError, PluginMissingError


def _fix(example: str) -> str:
    return f"name a .png file in a folder you can write, like {example}"


def check_plot_path(path: Path, example: str = "plot.png") -> Path:
    """Return ``path`` if a PNG may be written there; a clear error otherwise.

    Checked before anything is computed, and nothing is created: a missing
    folder is the user's to make. ``example`` is the file name the error
    suggests.
    """
    fix = _fix(example)
    if path.suffix.lower() != ".png":
        raise InvalidInputError(f"plot file {path} does not end in .png; {fix}")
    if path.is_dir():
        raise InvalidInputError(f"plot file {path} is a folder; {fix}")
    folder = path.parent
    if not folder.is_dir():
        raise InvalidInputError(f"the folder of plot file {path} does not exist; {fix}")
    if not os.access(folder, os.W_OK | os.X_OK):
        raise InvalidInputError(f"the folder of plot file {path} is not writable; {fix}")
    return path


def pyplot(install: str) -> Any:
    """``matplotlib.pyplot`` drawing off screen; ``install`` names what to install without it.

    :raises PluginMissingError: matplotlib is not installed (``install``: the
        pip argument that brings it, such as ``'thatch-core[plot]'``).
    """
    try:
        import matplotlib

        matplotlib.use("Agg")  # no screen needed
        import matplotlib.pyplot as plt
    except ImportError:
        raise PluginMissingError(
            f"drawing the plot needs matplotlib; install it: pip install {install}"
        ) from None
    return plt


def save_figure(plt: Any, figure: Any, path: Path, example: str = "plot.png") -> Path:
    """Write ``figure`` as PNG to ``path`` and close it; a write that fails is a clear error."""
    try:
        figure.savefig(path)
    except OSError as exc:
        # What the folder's mode does not tell: /proc, a full disk, a read-only mount.
        raise InvalidInputError(
            f"cannot write plot file {path} ({exc.strerror}); {_fix(example)}"
        ) from None
    finally:
        plt.close(figure)
    return path
