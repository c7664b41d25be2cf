"""Scripted event streams for receptor tests: one core event per tool call, a step apart.

The builder is public, in :mod:`thatch_receptor.testing`, for authors of
signal sources and rules; the receptor's own tests import it from here.
"""

from __future__ import annotations

from thatch_receptor.testing import (
    SESSION,
    START,
    Stream,
    delegate,
    edit,
    grep,
    implementation,
    read,
    recall,
    run,
    trial_and_error,
)

__all__ = [
    "SESSION",
    "START",
    "Stream",
    "delegate",
    "edit",
    "grep",
    "implementation",
    "read",
    "recall",
    "run",
    "trial_and_error",
]
