"""Core's own hook implementations, registered in the daemon like any plugin.

Each can be switched off by name with ``[plugins] blocked`` in the config
file (for instance ``blocked = ["recall-nudge"]``).
"""

from __future__ import annotations

#: Plugin name -> module holding its hookimpls.
BUILTIN_PLUGINS: dict[str, str] = {
    "extraction-nudge": "thatch.builtin.extraction",
    "recall-nudge": "thatch.builtin.recall",
    "decision-nudge": "thatch.builtin.decisions",
    "save-reminder": "thatch.builtin.reminder",
    "prediction-log": "thatch.builtin.predlog",
    "ui": "thatch.builtin.ui",
}
