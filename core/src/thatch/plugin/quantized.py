"""Unit vectors as int8 codes, and the first-pass scan over them.

Shared by the storage backends that search vectors in memory (SQLite's
index, PostgreSQL's copy of each model's vectors). A large set of vectors
is scanned as one signed byte per dimension instead of a float32: a quarter
of the bytes a search must read. numpy has no fast int8 product (it loops in
C without SIMD, slower than the float32 BLAS product it would replace), so
the scan uses numkong's integer dot-product kernels. Its scores only choose
candidates: the caller scores those again exactly from float32 vectors.

numkong is imported only by a scan (:func:`dots`): a package that scans
lists it among its own dependencies, as thatch-sqlite does.
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    import numpy.typing as npt

    Codes = npt.NDArray[np.int8]

#: Largest code; -127 is the smallest, so a code and its negation both fit.
_TOP = 127
#: Rows coded per step: bounds the float32 temporaries to a few MB.
SLAB = 4096
#: Rows from which a scan is split between two threads.
SPLIT_AT = 32768
_SCANNERS = ThreadPoolExecutor(max_workers=2, thread_name_prefix="thatch-scan")


def scale_for(matrix: npt.NDArray[np.float32]) -> float:
    """Codes per unit that map the largest component of ``matrix`` to the largest code.

    Later rows are coded with the same scale (clipped if they reach
    further): the scores of one store must be comparable with each other.
    """
    # max and min, not abs(): no temporary the size of the matrix.
    largest = max(float(matrix.max()), -float(matrix.min())) if matrix.size else 0.0
    # A unit vector's component never exceeds 1; an empty or all-zero
    # matrix gets the scale that codes any unit vector without clipping.
    return _TOP / largest if largest > 0 else float(_TOP)


def encode(vectors: npt.NDArray[np.float32], scale: float) -> Codes:
    """``vectors`` (one or many) as int8 codes at ``scale``."""
    scaled = np.asarray(vectors, np.float32) * np.float32(scale)
    np.rint(scaled, out=scaled)
    np.clip(scaled, -_TOP, _TOP, out=scaled)
    return scaled.astype(np.int8)


def encode_into(codes: Codes, vectors: npt.NDArray[np.float32], scale: float) -> None:
    """Fill ``codes`` with the codes of ``vectors``, a slab at a time.

    Coding 100k vectors at once would need two float32 temporaries the size
    of the vectors themselves; slabs keep the extra memory to a few MB.
    """
    for start in range(0, len(vectors), SLAB):
        codes[start : start + SLAB] = encode(vectors[start : start + SLAB], scale)


def dots(query: Codes, codes: Codes) -> npt.NDArray[np.float64]:
    """Integer dot product of ``query`` with each row of ``codes`` (exact, as float64)."""
    if not len(codes):
        return np.empty(0, np.float64)
    # Imported here: only a store past the quantizing size needs the kernels.
    import numkong

    one = query[None, :]
    if len(codes) < SPLIT_AT:
        return np.asarray(numkong.cdist(one, codes, metric="dot")).reshape(-1)
    # A large scan reads more memory than one core can pull in: the second
    # half goes to another thread (the kernel releases the GIL) while this
    # one scans the first.
    half = len(codes) // 2
    later = _SCANNERS.submit(numkong.cdist, one, codes[half:], metric="dot")
    first = np.asarray(numkong.cdist(one, codes[:half], metric="dot")).reshape(-1)
    return np.concatenate([first, np.asarray(later.result()).reshape(-1)])
