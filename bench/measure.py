"""What the measuring scripts share: one call's time, a percentile, a process's memory."""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from pathlib import Path

import numpy as np


def timed(call: Callable[[], object]) -> float:
    """Milliseconds one call takes."""
    start = time.perf_counter()
    call()
    return (time.perf_counter() - start) * 1000


def percentile(values: Sequence[float], q: float) -> float:
    """The q-th percentile (0-100) of ``values``."""
    return float(np.percentile(np.asarray(values), q))


def proc_memory(pid: int) -> dict[str, int]:
    """VmRSS, VmHWM and the other ``Vm*`` lines of /proc/<pid>/status, in kB (Linux only)."""
    sizes: dict[str, int] = {}
    for line in Path(f"/proc/{pid}/status").read_text(encoding="ascii").splitlines():
        name, _, value = line.partition(":")
        if name.startswith(("Vm", "Rss")) and value.strip().endswith("kB"):
            sizes[name] = int(value.split()[0])
    return sizes
