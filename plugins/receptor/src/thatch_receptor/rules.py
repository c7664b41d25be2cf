"""Interpretation rules written as JSON: what a firing calls for.

A rule file is a JSON object with a list of rules; each rule is an
:class:`thatch.plugin.InterpretationRule` (:class:`JsonRule`)::

    {"rules": [
      {"name": "error-context",
       "description": "stuck on a failure and searching: find what is known about it",
       "when": {"fired": ["frustration", "seeking"], "patterns": ["trial_error"]},
       "trigger": "error_context",
       "mode": "active",
       "reason": "the same failure keeps coming back (frustration {frustration} when it fired)",
       "score": {"base": 0.55, "weights": {"frustration": 2, "seeking": 1}}}
    ]}

- ``name`` (required): unique in the file; a rule of the same name loaded
  later (plugin rules after the defaults, the user's file last) replaces the
  earlier one whole.
- ``enabled`` (default true): false switches the rule of that name off; such
  a rule needs no other field (``{"name": "break", "enabled": false}``).
- ``description``: for people; the receptor does not read it.
- ``when``: what the composition must show, every part that is given:
  ``fired`` (axes that must all have fired), ``min`` (axis → lowest value,
  0 to 1), ``patterns`` (any of these pattern labels, each one of
  :data:`thatch_receptor.patterns.LABELS`) and ``not_in_flow`` (true: the
  rule does not apply during deep work).
- ``trigger`` (required): what the probe looks for (``error_context``...).
- ``mode`` (required): one of :data:`thatch.plugin.DELIVERY_MODES`.
- ``reason`` (required): the text the agent is shown. Placeholders:
  ``{rule}``, ``{trigger}``, ``{pattern}``, ``{fired}`` (the fired axes),
  ``{signal}`` (the strongest reading's detail), ``{score}`` and each axis
  by name (``{frustration}``), numbers with two decimals unless a format is
  given (``{frustration:.0%}``). An axis is its value at the firing: the axes
  go on moving, so a reason says so (``frustration {frustration} when it fired``)
  rather than be read as the value a status shows later.
- ``score``: ``base`` (0 to 1, default 0.5) and ``weights`` (axis → weight,
  default 1 for each axis of ``when.fired`` and ``when.min``). The score is
  ``base + (1 - base) * strength``, strength the weighted mean of those
  axes' values: a composition that meets the conditions scores at least
  ``base``, and more the stronger its axes are. Without weights or axes in
  ``when``, strength is the mean of the composition's fired axes.

The shipped defaults are ``rules_default.json`` next to this module; the
user's rules are :data:`RULES_FILE_NAME` in the config folder.
"""

from __future__ import annotations

import difflib
import json
import string
import sys
from collections.abc import Iterable, Mapping
from functools import cache
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING, Any, NoReturn, cast

import attrs
from thatch.plugin import (
    AXES,
    DELIVERY_MODES,
    FiringComposition,
    Interpretation,
    InterpretationRule,
    InvalidInputError,
)

from thatch_receptor.patterns import LABELS

if TYPE_CHECKING:
    from thatch.plugin import Axis, DeliveryMode

#: The user's rule file, in the config folder.
RULES_FILE_NAME = "receptor-rules.json"
#: The shipped defaults, next to this module.
DEFAULTS_FILE_NAME = "rules_default.json"
#: What a rule's ``reason`` may name besides the axes.
PLACEHOLDERS: tuple[str, ...] = ("rule", "trigger", "pattern", "fired", "signal", "score")
DEFAULT_BASE = 0.5

_RULE_FIELDS = ("name", "enabled", "description", "when", "trigger", "mode", "reason", "score")
_WHEN_FIELDS = ("fired", "min", "patterns", "not_in_flow")
_SCORE_FIELDS = ("base", "weights")


class RuleFileError(InvalidInputError):
    """A rule file that cannot be read or does not follow the rule format."""


class _Value(float):
    """An axis value or score in a reason: two decimals unless the reason gives a format."""

    def __format__(self, spec: str) -> str:
        return format(float(self), spec or ".2f")


@attrs.define
class JsonRule:
    """One rule of a rule file (see the module's docstring for the fields).

    Not frozen only because the rule protocol's ``name`` is a plain attribute;
    nothing changes a rule once loaded.
    """

    name: str
    trigger: str = ""
    mode: DeliveryMode = "drop"
    reason: str = ""
    fired: frozenset[Axis] = frozenset()
    minimum: Mapping[Axis, float] = attrs.field(factory=dict)
    #: Any of these; empty: any pattern.
    patterns: frozenset[str] = frozenset()
    not_in_flow: bool = False
    base: float = DEFAULT_BASE
    weights: Mapping[Axis, float] = attrs.field(factory=dict)
    enabled: bool = True
    description: str = ""

    def applies(self, composition: FiringComposition) -> bool:
        """Whether ``composition`` meets every condition of ``when``."""
        if not self.enabled or not self.fired <= composition.fired:
            return False
        if self.patterns and composition.pattern not in self.patterns:
            return False
        if self.not_in_flow and composition.in_flow:
            return False
        return all(composition.axes.get(axis, 0.0) >= low for axis, low in self.minimum.items())

    def strength(self, composition: FiringComposition) -> float:
        """The weighted mean of the scored axes' values, 0 to 1."""
        weights = self.weights or {axis: 1.0 for axis in (*self.fired, *self.minimum)}
        if not weights:
            weights = dict.fromkeys(composition.fired, 1.0)
        total = sum(weights.values())
        if not total:
            return 0.0
        weighted = sum(w * composition.axes.get(axis, 0.0) for axis, w in weights.items())
        return min(1.0, max(0.0, weighted / total))

    def score(self, composition: FiringComposition) -> float:
        """``base + (1 - base) * strength``: how strongly the composition matches."""
        return min(1.0, self.base + (1.0 - self.base) * self.strength(composition))

    def interpret(self, composition: FiringComposition) -> Interpretation | None:
        """The rule's interpretation when it applies, else None."""
        if not self.applies(composition):
            return None
        score = self.score(composition)
        return Interpretation(
            rule=self.name,
            trigger=self.trigger,
            mode=self.mode,
            reason=self.render(composition, score),
            score=score,
        )

    def render(self, composition: FiringComposition, score: float) -> str:
        """The reason with its placeholders filled (left as written if it cannot be)."""
        try:
            return self.reason.format_map(_placeholders(self, composition, score))
        except (KeyError, ValueError, IndexError, AttributeError):
            return self.reason  # checked when loaded; a plugin-built rule may be odd


def _placeholders(rule: JsonRule, composition: FiringComposition, score: float) -> dict[str, Any]:
    signal = composition.signals[0].detail if composition.signals else ""
    values: dict[str, Any] = {axis: _Value(composition.axes.get(axis, 0.0)) for axis in AXES}
    return {
        **values,
        "rule": rule.name,
        "trigger": rule.trigger,
        "pattern": composition.pattern,
        "fired": ", ".join(axis for axis in AXES if axis in composition.fired) or "none",
        "signal": signal,
        "score": _Value(score),
    }


@cache
def default_rules() -> tuple[JsonRule, ...]:
    """The shipped rules (``rules_default.json``), read once."""
    text = resources.files("thatch_receptor").joinpath(DEFAULTS_FILE_NAME).read_text("utf-8")
    return parse_rules(json.loads(text), f"the shipped {DEFAULTS_FILE_NAME}")


def load_rules_file(path: Path) -> tuple[JsonRule, ...]:
    """The rules of a rule file; :class:`RuleFileError` naming the file, rule and field."""
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise RuleFileError(
            f"rule file {path}: no such file; give the path of a JSON rule file"
        ) from None
    except (OSError, UnicodeDecodeError) as error:
        reason = error.strerror if isinstance(error, OSError) else "not UTF-8 text"
        raise RuleFileError(
            f"rule file {path}: cannot be read ({reason}); give a readable UTF-8 JSON file"
        ) from None
    try:
        data = json.loads(text)
    except json.JSONDecodeError as error:
        raise RuleFileError(
            f"rule file {path}: not JSON at line {error.lineno} column {error.colno} "
            f"({error.msg}); fix the JSON there"
        ) from None
    return parse_rules(data, f"rule file {path}")


def user_rules_file(config_dir: Path) -> Path | None:
    """The user's rule file, :data:`RULES_FILE_NAME` in ``config_dir``; None when it is not there.

    The one place it is looked up: the daemon (:func:`rules_for`) and
    ``thatch receptor replay`` both find it here, so a replay decides as the daemon does.
    """
    candidate = config_dir / RULES_FILE_NAME
    return candidate if candidate.is_file() else None


def rules_for(
    config_dir: Path | None,
    plugin_rules: Iterable[InterpretationRule] = (),
    rules_file: Path | None = None,
) -> tuple[InterpretationRule, ...]:
    """The rules in force: the defaults, then plugin rules, then the user's file.

    The user's file is ``rules_file`` if given, else ``config_dir``'s
    (:func:`user_rules_file`) when it exists. A later rule replaces an earlier
    one of its name (in the earlier one's place); a disabled rule switches its
    name off and is left out.
    """
    if rules_file is None and config_dir is not None:
        rules_file = user_rules_file(config_dir)
    user = load_rules_file(rules_file) if rules_file is not None else ()
    by_name: dict[str, InterpretationRule] = {}
    chain: list[InterpretationRule] = [*default_rules(), *plugin_rules, *user]
    for rule in chain:
        by_name[rule.name] = rule
    return tuple(rule for rule in by_name.values() if getattr(rule, "enabled", True))


def parse_rules(data: object, source: str) -> tuple[JsonRule, ...]:
    """The rules of a parsed rule file; ``source`` names it in errors."""
    if not isinstance(data, dict) or set(data) != {"rules"}:
        raise RuleFileError(
            f'{source}: must be a JSON object with one key, "rules", a list of rules '
            f'(like {{"rules": [{{"name": "my-rule", ...}}]}})'
        )
    items = data["rules"]
    if not isinstance(items, list):
        raise RuleFileError(f'{source}: "rules" must be a list of rule objects')
    rules: list[JsonRule] = []
    seen: set[str] = set()
    for index, item in enumerate(items, start=1):
        rule = _RuleParser(source, index, item).rule()
        if rule.name in seen:
            raise RuleFileError(
                f"{source}: rule {rule.name!r} (#{index}): field 'name' repeats an earlier "
                "rule's; give each rule of a file its own name"
            )
        seen.add(rule.name)
        rules.append(rule)
    return tuple(rules)


class _RuleParser:
    """Checks one rule object and builds its :class:`JsonRule`; errors name rule and field."""

    def __init__(self, source: str, index: int, item: object) -> None:
        self.source = source
        self.index = index
        self.label = f"rule #{index}"
        if not isinstance(item, dict):
            self.fail("", "must be a JSON object", 'write it as {"name": ..., ...}')
        self.item: dict[str, Any] = cast("dict[str, Any]", item)
        name = self.item.get("name")
        if isinstance(name, str) and name.strip():
            self.label = f"rule {name!r} (#{index})"

    def fail(self, field: str, problem: str, fix: str) -> NoReturn:
        where = f"field '{field}' " if field else ""
        raise RuleFileError(f"{self.source}: {self.label}: {where}{problem}; {fix}")

    def rule(self) -> JsonRule:
        self.check_keys(self.item, "", _RULE_FIELDS)
        name = self.text("name", required=True)
        enabled = self.flag(self.item, "enabled", default=True)
        description = self.text("description")
        if not enabled:
            return JsonRule(name=name, enabled=False, description=description)
        when = self.section(self.item, "when")
        self.check_keys(when, "when.", _WHEN_FIELDS)
        score = self.section(self.item, "score")
        self.check_keys(score, "score.", _SCORE_FIELDS)
        rule = JsonRule(
            name=name,
            trigger=self.text("trigger", required=True),
            mode=self.mode(),
            reason=self.text("reason", required=True),
            fired=frozenset(self.axes(when.get("fired"), "when.fired")),
            minimum=self.axis_numbers(when.get("min"), "when.min", unit=True),
            patterns=frozenset(self.patterns(when.get("patterns"))),
            not_in_flow=self.flag(when, "not_in_flow", default=False, prefix="when."),
            base=self.base(score.get("base")),
            weights=self.axis_numbers(score.get("weights"), "score.weights", unit=False),
            description=description,
        )
        if rule.weights and not sum(rule.weights.values()):
            self.fail("score.weights", "are all 0", "give at least one axis a weight above 0")
        self.check_reason(rule)
        return rule

    def check_keys(self, obj: Mapping[str, Any], prefix: str, allowed: tuple[str, ...]) -> None:
        for key in obj:
            if key not in allowed:
                self.fail(
                    f"{prefix}{key}", "is not a rule field", f"use one of {', '.join(allowed)}"
                )

    def section(self, obj: Mapping[str, Any], field: str) -> dict[str, Any]:
        value = obj.get(field, {})
        if not isinstance(value, dict):
            self.fail(field, f"must be a JSON object, got {_shown(value)}", "write it as {...}")
        return cast("dict[str, Any]", value)

    def text(self, field: str, *, required: bool = False) -> str:
        value = self.item.get(field)
        if value is None and not required:
            return ""
        if not isinstance(value, str) or (required and not value.strip()):
            got = "nothing (the field is missing)" if value is None else _shown(value)
            self.fail(field, f"must be a non-empty string, got {got}", f'add "{field}": "..."')
        return value

    def flag(self, obj: Mapping[str, Any], field: str, *, default: bool, prefix: str = "") -> bool:
        value = obj.get(field, default)
        if not isinstance(value, bool):
            self.fail(f"{prefix}{field}", f"must be true or false, got {_shown(value)}", "fix it")
        return value

    def mode(self) -> DeliveryMode:
        value = self.item.get("mode")
        if value not in DELIVERY_MODES:
            got = "nothing (the field is missing)" if value is None else _shown(value)
            self.fail("mode", f"must be a delivery mode, got {got}", f"use one of {_modes()}")
        return cast("DeliveryMode", value)

    def axes(self, value: object, field: str) -> list[Axis]:
        if value is None:
            return []
        if not isinstance(value, list) or not all(axis in AXES for axis in value):
            self.fail(field, f"must be a list of axes, got {_shown(value)}", _axes_fix())
        return cast("list[Axis]", value)

    def axis_numbers(self, value: object, field: str, *, unit: bool) -> dict[Axis, float]:
        if value is None:
            return {}
        if not isinstance(value, dict):
            self.fail(field, f"must be an object of axis to number, got {_shown(value)}", "fix it")
        numbers: dict[Axis, float] = {}
        for axis, number in cast("dict[str, Any]", value).items():
            if axis not in AXES:
                self.fail(f"{field}.{axis}", "is not an axis", _axes_fix())
            # A weight has no top, but an infinite one (JSON's 1e999) would make every
            # strength NaN, read as 0: the rule would score its base, silently.
            top = 1.0 if unit else sys.float_info.max
            if isinstance(number, bool) or not isinstance(number, int | float):
                number = None
            if number is None or not 0.0 <= number <= top:
                span = "between 0 and 1" if unit else "0 or more, finite"
                self.fail(f"{field}.{axis}", f"must be a number {span}", "fix the value")
            numbers[axis] = float(number)
        return numbers

    def patterns(self, value: object) -> list[str]:
        if value is None:
            return []
        if not isinstance(value, list) or not all(isinstance(p, str) and p for p in value):
            self.fail(
                "when.patterns",
                f"must be a list of pattern labels, got {_shown(value)}",
                'write them like ["trial_error", "wandering"]',
            )
        # A pattern the receptor never gives would make the rule never apply, without a
        # word. Only the receptor's own pattern_of labels a composition (the plugin
        # contract lets sources add readings, not patterns), so its labels are all there are.
        for pattern in cast("list[str]", value):
            if pattern not in LABELS:
                close = difflib.get_close_matches(pattern, LABELS, n=1)
                hint = f" (did you mean {close[0]!r}?)" if close else ""
                self.fail(
                    "when.patterns",
                    f"names the pattern {pattern!r}, which the receptor never gives{hint}",
                    f"use patterns from {', '.join(LABELS)}",
                )
        return cast("list[str]", value)

    def base(self, value: object) -> float:
        if value is None:
            return DEFAULT_BASE
        if isinstance(value, bool) or not isinstance(value, int | float) or not 0 <= value <= 1:
            self.fail(
                "score.base", f"must be a number between 0 and 1, got {_shown(value)}", "fix it"
            )
        return float(cast("float", value))

    def check_reason(self, rule: JsonRule) -> None:
        known = (*PLACEHOLDERS, *AXES)
        try:
            names = [field for _, field, _, _ in string.Formatter().parse(rule.reason) if field]
        except ValueError as error:
            self.fail("reason", f"is not a valid template ({error})", "write braces as {{ and }}")
        unknown = [name for name in names if name not in known]
        if unknown:
            self.fail(
                "reason",
                f"names an unknown placeholder {{{unknown[0]}}}",
                f"use {', '.join('{' + name + '}' for name in known)}",
            )
        try:
            rule.reason.format_map(_placeholders(rule, _SAMPLE, 0.5))
        except (ValueError, IndexError, KeyError) as error:
            self.fail("reason", f"cannot be filled ({error})", "give numbers a format like :.2f")


#: A composition to try a rule's reason on when it is loaded.
_SAMPLE = FiringComposition(
    session_id="sample",
    axes=dict.fromkeys(AXES, 0.5),
    fired=frozenset(AXES),
    signals=(),
    deltas={},
    pattern="trial_error",
)


def _shown(value: object) -> str:
    text = json.dumps(value) if not isinstance(value, float) else repr(value)
    return text if len(text) <= 40 else text[:39] + "…"


def _modes() -> str:
    return ", ".join(DELIVERY_MODES)


def _axes_fix() -> str:
    return f"use axes from {', '.join(AXES)}"
