"""From a firing composition to a decision: which rule, which delivery mode, and why.

An :class:`Interpreter` holds the rules (:func:`thatch_receptor.rules.rules_for`),
the :class:`InterpretSettings` and the :class:`LearnedDelta`, shared by every
session; each session decides through its own :class:`SessionInterpreter`
(``interpreter.session()``), which remembers when it last delivered actively.
``decide(composition, tool_calls=N)``:

1. every rule interprets the composition; the best score wins (the first of
   equals); a rule that raises is logged and left out;
2. the pattern's learned offset is added to the score (bounded to 0..1);
3. at or over ``deliver_threshold``: the rule's mode; at or over
   ``silent_threshold``: ``silent`` (the probe runs and its result is cached);
   under both, or no rule applies, or the rule's mode is ``drop``: ``drop``,
   recorded in the :class:`LearnedDelta`;
4. the delivery discipline: during deep work (``composition.in_flow``)
   ``active`` and ``passive`` become ``silent``; an ``active`` fewer than
   ``active_cooldown_calls`` tool calls after the session's last active one
   becomes ``notification``.

``decide`` never raises: a composition it cannot decide is dropped, recorded.
"""

from __future__ import annotations

import logging
import math
import threading
from collections import Counter, deque
from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any

import attrs
from thatch.plugin import Interpretation, InvalidInputError, redact_secrets

if TYPE_CHECKING:
    from thatch.plugin import DeliveryMode, FiringComposition, InterpretationRule

log = logging.getLogger(__name__)

#: The rule key under which a composition no rule applied to is counted.
NO_RULE = "(no rule)"
#: The modes that reach the agent.
DELIVERED: frozenset[DeliveryMode] = frozenset({"passive", "notification", "active"})


def _unit(instance: object, attribute: attrs.Attribute[float], value: float) -> None:
    if not 0.0 <= value <= 1.0:
        raise ValueError(f"{attribute.name} must be between 0 and 1, got {value}")


@attrs.frozen
class InterpretSettings:
    """The interpretation's thresholds and delivery discipline; the defaults are tuned.

    The defaults hold the goals of ``bench/receptor_delivery.py`` on the 40
    sample runs (at most 5 active deliveries per 100 tool calls, none during
    deep work); see docs/receptor.md.
    """

    #: A score at or over it is delivered in the rule's mode.
    deliver_threshold: float = attrs.field(default=0.6, validator=_unit)
    #: A score at or over it (and under the delivery threshold) is ``silent``;
    #: under it the composition is dropped.
    silent_threshold: float = attrs.field(default=0.35, validator=_unit)
    #: Fewest tool calls between two active deliveries of one session; an active
    #: one sooner becomes a notification.
    active_cooldown_calls: int = attrs.field(default=10, validator=attrs.validators.ge(0))

    def __attrs_post_init__(self) -> None:
        if self.silent_threshold > self.deliver_threshold:
            raise ValueError(
                f"silent_threshold {self.silent_threshold} is above deliver_threshold "
                f"{self.deliver_threshold}; make it at most the delivery threshold"
            )


@attrs.frozen
class Decision:
    """What became of one composition."""

    composition: FiringComposition
    #: The winning rule's interpretation (its own mode and unadjusted score), or None.
    interpretation: Interpretation | None
    #: The final mode, after thresholds and discipline.
    mode: DeliveryMode
    #: The winning score plus the pattern's learned offset, 0 to 1 (0 without a rule).
    score: float
    #: One line: why this mode.
    why: str

    @property
    def rule(self) -> str:
        """The winning rule's name, or :data:`NO_RULE`."""
        return self.interpretation.rule if self.interpretation else NO_RULE

    @property
    def delivered(self) -> bool:
        """Whether it reaches the agent (passive, notification or active)."""
        return self.mode in DELIVERED


@attrs.frozen
class DroppedComposition:
    """A dropped composition as :class:`LearnedDelta` keeps it."""

    session_id: str
    event_id: str
    at: float
    pattern: str
    rule: str
    score: float
    why: str

    @classmethod
    def of(cls, decision: Decision) -> DroppedComposition:
        composition = decision.composition
        return cls(
            session_id=composition.session_id,
            event_id=composition.event_id,
            at=composition.at,
            pattern=composition.pattern,
            rule=decision.rule,
            score=round(decision.score, 4),
            why=decision.why,
        )


class LearnedDelta:
    """What the interpretation learned: per-pattern sensitivity, and what it dropped.

    A pattern's offset is added to every score of a composition of that
    pattern. :meth:`dismiss` (the agent turned a delivery down) lowers it by
    ``dismiss_step``, :meth:`accept` raises it by ``accept_step``; it stays
    between ``lowest`` and ``highest``. Every dropped composition is counted
    by pattern and by rule, and the last ``keep_recent`` are kept. Safe to
    share between threads. :meth:`to_dict` and :meth:`from_dict` persist it
    as JSON.
    """

    def __init__(
        self,
        *,
        dismiss_step: float = 0.1,
        accept_step: float = 0.03,
        lowest: float = -0.5,
        highest: float = 0.15,
        keep_recent: int = 50,
    ) -> None:
        if not lowest <= 0.0 <= highest:
            raise ValueError(f"lowest {lowest} and highest {highest} must hold 0 between them")
        self.dismiss_step = dismiss_step
        self.accept_step = accept_step
        self.lowest = lowest
        self.highest = highest
        self._lock = threading.Lock()
        self._offsets: dict[str, float] = {}
        self._dropped_by_pattern: Counter[str] = Counter()
        self._dropped_by_rule: Counter[str] = Counter()
        self._recent: deque[DroppedComposition] = deque(maxlen=keep_recent)

    def offset(self, pattern: str) -> float:
        """The pattern's sensitivity offset (0 until it is dismissed or accepted)."""
        with self._lock:
            return self._offsets.get(pattern, 0.0)

    @property
    def offsets(self) -> dict[str, float]:
        with self._lock:
            return dict(self._offsets)

    def dismiss(self, pattern: str) -> float:
        """The agent dismissed a delivery of ``pattern``: lower its sensitivity; the new offset."""
        return self._move(pattern, -self.dismiss_step)

    def accept(self, pattern: str) -> float:
        """The agent accepted a delivery of ``pattern``: raise its sensitivity a little."""
        return self._move(pattern, self.accept_step)

    def _move(self, pattern: str, step: float) -> float:
        with self._lock:
            moved = min(self.highest, max(self.lowest, self._offsets.get(pattern, 0.0) + step))
            self._offsets[pattern] = round(moved, 6)
            return self._offsets[pattern]

    def record_drop(self, decision: Decision) -> None:
        """Count a dropped composition and keep it among the recent ones."""
        dropped = DroppedComposition.of(decision)
        with self._lock:
            self._dropped_by_pattern[dropped.pattern] += 1
            self._dropped_by_rule[dropped.rule] += 1
            self._recent.append(dropped)

    @property
    def dropped_by_pattern(self) -> dict[str, int]:
        with self._lock:
            return dict(self._dropped_by_pattern)

    @property
    def dropped_by_rule(self) -> dict[str, int]:
        """Drops by winning rule; :data:`NO_RULE` for those no rule applied to."""
        with self._lock:
            return dict(self._dropped_by_rule)

    @property
    def recent_drops(self) -> tuple[DroppedComposition, ...]:
        """The last dropped compositions, oldest first."""
        with self._lock:
            return tuple(self._recent)

    def to_dict(self) -> dict[str, Any]:
        """Everything learned, as JSON data."""
        with self._lock:
            return {
                "offsets": dict(self._offsets),
                "dropped": {
                    "by_pattern": dict(self._dropped_by_pattern),
                    "by_rule": dict(self._dropped_by_rule),
                },
                "recent": [attrs.asdict(dropped) for dropped in self._recent],
            }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any], **policy: Any) -> LearnedDelta:
        """What :meth:`to_dict` gave; ``policy``: the constructor's steps and bounds.

        Offsets are clamped to the bounds. Data of another shape raises
        :class:`thatch.plugin.InvalidInputError`.
        """
        learned = cls(**policy)
        try:
            offsets = {str(p): float(v) for p, v in dict(data.get("offsets", {})).items()}
            dropped = data.get("dropped", {})
            by_pattern = {str(k): int(v) for k, v in dict(dropped.get("by_pattern", {})).items()}
            by_rule = {str(k): int(v) for k, v in dict(dropped.get("by_rule", {})).items()}
            recent = [DroppedComposition(**item) for item in data.get("recent", [])]
        except (AttributeError, TypeError, ValueError) as error:
            raise InvalidInputError(
                f"the receptor's learned state cannot be read ({error}); "
                "delete the file to start afresh"
            ) from None
        for pattern, value in offsets.items():
            learned._offsets[pattern] = min(learned.highest, max(learned.lowest, value))
        learned._dropped_by_pattern.update(by_pattern)
        learned._dropped_by_rule.update(by_rule)
        learned._recent.extend(recent)
        return learned


class Interpreter:
    """The rules, settings and learned state every session decides with."""

    def __init__(
        self,
        rules: Iterable[InterpretationRule],
        settings: InterpretSettings | None = None,
        learned: LearnedDelta | None = None,
    ) -> None:
        self.rules: tuple[InterpretationRule, ...] = tuple(rules)
        self.settings = settings or InterpretSettings()
        self.learned = learned if learned is not None else LearnedDelta()

    def session(self) -> SessionInterpreter:
        """A fresh session's interpreter (no active delivery yet)."""
        return SessionInterpreter(self)

    def best(self, composition: FiringComposition) -> Interpretation | None:
        """The best-scoring interpretation (the first of equals); a failing rule is skipped."""
        best: Interpretation | None = None
        for rule in self.rules:
            try:
                found = rule.interpret(composition)
            except Exception:
                log.exception("receptor rule %r failed; it is left out", rule.name)
                continue
            if isinstance(found, Interpretation) and (best is None or found.score > best.score):
                best = found
        return best


class SessionInterpreter:
    """One session's decisions; it remembers the session's last active delivery."""

    def __init__(self, interpreter: Interpreter) -> None:
        self.interpreter = interpreter
        #: The session's tool-call count at its last active delivery.
        self.last_active_calls: int | None = None
        self._lock = threading.Lock()

    def decide(self, composition: FiringComposition, *, tool_calls: int) -> Decision:
        """The decision on ``composition``; ``tool_calls``: the session's calls so far."""
        try:
            with self._lock:
                decision = self._decide(composition, tool_calls)
        except Exception:
            log.exception("the receptor could not decide on a composition; it is dropped")
            decision = Decision(composition, None, "drop", 0.0, "the interpretation failed: drop")
        if decision.mode == "drop":
            self.interpreter.learned.record_drop(decision)
        return decision

    def _decide(self, composition: FiringComposition, tool_calls: int) -> Decision:
        settings = self.interpreter.settings
        found = self.interpreter.best(composition)
        if found is None:
            return Decision(composition, None, "drop", 0.0, "no rule applies: drop")
        # A reason may quote a reading's detail (``{signal}``: the failing command and its
        # error), which can hold a token; it is shown to the agent, stored in the status
        # file and printed by replay, so any secret goes before the decision leaves here.
        reason = redact_secrets(found.reason)
        if reason != found.reason:
            found = attrs.evolve(found, reason=reason)
        offset = self.interpreter.learned.offset(composition.pattern)
        score = min(1.0, max(0.0, found.score + offset))
        shown = f"score {_shown(score)}" + (f" (learned {offset:+.2f})" if offset else "")
        mode: DeliveryMode
        if found.mode == "drop":
            mode, why = "drop", f"rule {found.rule} drops it"
        elif score >= settings.deliver_threshold:
            mode = found.mode
            why = f"{shown} at or over the delivery threshold {settings.deliver_threshold:.2f}"
        elif score >= settings.silent_threshold:
            mode = "silent"
            why = f"{shown} under the delivery threshold {settings.deliver_threshold:.2f}"
        else:
            mode = "drop"
            why = f"{shown} under the silent threshold {settings.silent_threshold:.2f}"
        mode, held_back = self._discipline(mode, composition, tool_calls)
        if mode == "active":
            self.last_active_calls = tool_calls
        return Decision(composition, found, mode, score, f"{why}: {mode}{held_back}")

    def _discipline(
        self, mode: DeliveryMode, composition: FiringComposition, tool_calls: int
    ) -> tuple[DeliveryMode, str]:
        """Deep work and the active cooldown; the mode and why it was held back."""
        if composition.in_flow and mode in ("active", "passive"):
            return "silent", f" (deep work: {mode} held back)"
        cooldown = self.interpreter.settings.active_cooldown_calls
        last = self.last_active_calls
        if mode == "active" and last is not None and tool_calls - last < cooldown:
            return "notification", (
                f" (active {tool_calls - last} tool calls after the last, cooldown {cooldown})"
            )
        return mode, ""


def _shown(score: float) -> str:
    """Two decimals, cut rather than rounded: 0.596 under a threshold of 0.60 shows as 0.59."""
    return f"{math.floor(score * 100 + 1e-9) / 100:.2f}"
