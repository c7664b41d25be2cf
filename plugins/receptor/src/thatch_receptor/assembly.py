"""The daemon's receptor, put together from the config, the plugins and the user's files.

- signal sources: every plugin's (``thatch_receptor_signals``), the built-in
  ones given the daemon's embedder so a rephrased search is told by meaning;
- rules: the shipped defaults, every plugin's (``thatch_receptor_rules``) and
  the user's rule file (``receptor-rules.json`` in the config folder); a rule
  file with a mistake is reported in the daemon's log and the defaults serve;
- the learned delta: ``receptor/learned.json`` in the state folder;
- observations: ``receptor.db`` in the data folder (``[receptor] observations``);
- status files: ``receptor/sessions/`` in the state folder.
"""

from __future__ import annotations

import json
import logging
from pathlib import Path
from typing import TYPE_CHECKING

from thatch.plugin import InvalidInputError

if TYPE_CHECKING:
    from collections.abc import Sequence

    from thatch.plugin import InterpretationRule, Runtime, SignalSource

    from thatch_receptor.interpret import LearnedDelta
    from thatch_receptor.service import ReceptorService
    from thatch_receptor.settings import ReceptorConfig

log = logging.getLogger(__name__)

#: The observation store's file, in the data folder.
OBSERVATIONS_FILE = "receptor.db"


def learned_path(state_dir: Path) -> Path:
    """Where the learned delta is kept."""
    return state_dir / "receptor" / "learned.json"


def build_service(app: Runtime, config: ReceptorConfig) -> ReceptorService:
    """A service for the daemon ``app``, not started."""
    from thatch_receptor.interpret import Interpreter
    from thatch_receptor.observations import ObservationStore
    from thatch_receptor.receptor import Receptor, Settings
    from thatch_receptor.service import ReceptorService
    from thatch_receptor.status import StatusFiles, status_dir

    paths = app.config.paths
    status = StatusFiles(status_dir(paths.state_dir))
    status.prune()
    store = None
    if config.observations:
        store = ObservationStore(paths.data_dir / OBSERVATIONS_FILE)
        store.prune(config.max_observations)
    learned = learned_path(paths.state_dir)
    return ReceptorService(
        app,
        config,
        receptor=Receptor(sources(app), Settings(step_seconds=config.step_seconds)),
        interpreter=Interpreter(rules(app), learned=load_learned(learned)),
        store=store,
        status=status,
        learned_path=learned,
    )


def sources(app: Runtime) -> list[SignalSource]:
    """Every plugin's sources, the built-in ones with the daemon's query embedding."""
    from thatch_receptor.signals import builtin_sources

    def embed(text: str) -> Sequence[float]:
        vector: list[float] = app.thatch.embedder.embed_query(text).tolist()
        return vector

    embedded = {source.name: source for source in builtin_sources(embed=embed)}
    return [embedded.get(name, source) for name, source in app.plugins.receptor_signals().items()]


def rules(app: Runtime) -> tuple[InterpretationRule, ...]:
    """The defaults, the plugins' rules and the user's file (the defaults alone if it is wrong)."""
    from thatch_receptor.rules import rules_for

    config_dir = app.config.paths.config_dir
    plugin_rules = tuple(app.plugins.receptor_rules().values())
    try:
        return rules_for(config_dir, plugin_rules)
    except InvalidInputError as exc:
        log.error("receptor: %s; the default rules are used until it is fixed", exc)
        return rules_for(None, plugin_rules)


def load_learned(path: Path) -> LearnedDelta:
    """The learned delta saved by an earlier daemon (a fresh one when none or unreadable)."""
    from thatch_receptor.interpret import LearnedDelta

    try:
        return LearnedDelta.from_dict(json.loads(path.read_text(encoding="utf-8")))
    except FileNotFoundError:
        return LearnedDelta()
    except (OSError, ValueError, TypeError, KeyError) as exc:
        log.warning("receptor: %s unreadable (%s); learning starts afresh", path, exc)
        return LearnedDelta()
