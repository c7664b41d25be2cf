"""The ``[receptor]`` table of the config file, and the daemon's receptor settings read from it.

```toml
[receptor]
enabled = true            # false: the daemon's receptor reads nothing and delivers nothing
step_seconds = 20.0       # where an event without a time is placed after the one before
active = true             # false: no item is placed in the agent's context; notes and offers stay
probe = "consensus"       # or "baseline": the predictive probe's method
observations = true       # false: tool events are not embedded and stored (stage 1 off)
max_observations = 50000  # the observation store keeps this many, newest first
```

The interpretation's thresholds and the cooldown between active deliveries
are :class:`thatch_receptor.interpret.InterpretSettings`; rules are in the
rule file (``receptor-rules.json`` in the config folder).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import attrs
from thatch.plugin import ConfigKey, ConfigTable

if TYPE_CHECKING:
    from collections.abc import Mapping

    from thatch.plugin import Config

TABLE = "receptor"
PROBES = ("consensus", "baseline")


def _positive(value: float) -> str | None:
    return None if value > 0 else "must be above 0"


def _probe(value: str) -> str | None:
    return None if value in PROBES else f"must be one of {', '.join(PROBES)}"


RECEPTOR_TABLE = ConfigTable(
    name=TABLE,
    help="the emotion receptor: what it reads and how it delivers",
    keys=(
        ConfigKey("enabled", bool, True, "false turns the daemon's receptor off"),
        ConfigKey(
            "step_seconds",
            float,
            20.0,
            "seconds an event without a time is placed after the one before",
            check=_positive,
        ),
        ConfigKey("active", bool, True, "false: never place an item in the agent's context"),
        ConfigKey("probe", str, "consensus", "the probe's method: consensus or baseline", _probe),
        ConfigKey("observations", bool, True, "false: tool events are not embedded and stored"),
        ConfigKey(
            "max_observations",
            int,
            50_000,
            "observations kept, newest first",
            check=lambda value: None if value >= 100 else "must be at least 100",
        ),
    ),
)


@attrs.frozen
class ReceptorConfig:
    """The ``[receptor]`` table, read."""

    enabled: bool = True
    step_seconds: float = 20.0
    active: bool = True
    probe: str = "consensus"
    observations: bool = True
    max_observations: int = 50_000

    @classmethod
    def of(cls, config: Config) -> ReceptorConfig:
        """The table of ``config`` (its defaults when the file leaves it out)."""
        # A config loaded without the plugins' tables (a test's) has no table: the defaults.
        table: Mapping[str, Any] = config.tables.get(TABLE) or RECEPTOR_TABLE.defaults()
        return cls(**{field.name: table[field.name] for field in attrs.fields(cls)})
