"""Giving freed memory back to the system after a large, one-off allocation.

glibc keeps freed heap for reuse, so a long-lived process (the daemon) that
once loaded a model or a vector index stays at its peak. ``malloc_trim``
returns what is free; elsewhere it is a no-op.
"""

from __future__ import annotations

import ctypes


def release_free_memory() -> None:
    """Return freed heap pages to the system (glibc only; silently nothing elsewhere)."""
    try:
        libc = ctypes.CDLL("libc.so.6")
    except OSError:
        return
    libc.malloc_trim(0)
