"""Firing compositions built by hand, for tests of rules and interpretation."""

from __future__ import annotations

from thatch.plugin import AXES, FiringComposition, SignalReading


def composition(
    *fired: str,
    pattern: str = "trial_error",
    in_flow: bool = False,
    session_id: str = "rules-session",
    event_id: str = "e1",
    **values: float,
) -> FiringComposition:
    """A composition where ``fired`` fired; each fired axis at 0.5 unless given in ``values``."""
    axes = {axis: values.get(axis, 0.5 if axis in fired else 0.0) for axis in AXES}
    return FiringComposition(
        session_id=session_id,
        axes=axes,
        fired=frozenset(fired),
        signals=tuple(SignalReading("test-source", a, axes[a], f"{a} read") for a in fired),
        deltas={},
        pattern=pattern,
        in_flow=in_flow,
        event_id=event_id,
        at=1_800_000_000.0,
    )
