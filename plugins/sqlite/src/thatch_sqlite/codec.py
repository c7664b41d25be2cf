"""How values are stored: vectors as little-endian float32 BLOBs, times as
REAL epoch seconds, id lists as one JSON parameter for ``json_each``."""

from __future__ import annotations

import json
from collections.abc import Iterable
from datetime import UTC, datetime
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    from thatch.plugin import Vector


def to_time(epoch: float) -> datetime:
    """A stored REAL timestamp as an aware UTC datetime."""
    return datetime.fromtimestamp(epoch, tz=UTC)


def as_vector(value: object) -> Vector:
    """``value`` as a float32 vector; refuses anything but a non-empty 1-D one."""
    vector = np.asarray(value, dtype=np.float32)
    if vector.ndim != 1 or vector.size == 0:
        raise ValueError(f"an embedding must be a non-empty 1-D vector, got shape {vector.shape}")
    return vector


def to_blob(vector: Vector) -> bytes:
    # Little-endian float32 whatever the machine, so the file is portable.
    return np.asarray(vector, dtype="<f4").tobytes()


def from_blob(blob: bytes) -> Vector:
    return np.frombuffer(blob, dtype="<f4").astype(np.float32)


def json_ids(ids: Iterable[int]) -> str:
    return json.dumps([int(row_id) for row_id in ids])
