"""Prediction blocks: finding them in a text, telling them apart, reading their Predictions.

A Prediction block is a fenced ```` ```yaml ```` (or ``yml``) block whose first
key, after any ``# …`` comment lines, is ``prediction:``, ``predictions:`` or
``decision_<n>:``. It states one Prediction or several, in one of the shapes
of docs/prediction-log.md ("Block shapes"); a text without one may still
state a legacy Prediction with a ``Confidence: N`` line. Every Prediction is
read from its own field mapping with the same checks, and every text it keeps
is redacted (:func:`thatch.plugin.redact_secrets`): the log keeps what agents
showed, never a key they quoted.
"""

from __future__ import annotations

import base64
import json
import math
import re
from collections.abc import Iterator, Mapping, Sequence
from datetime import date, datetime, time
from typing import Any

import attrs
import yaml

from thatch.plugin.errors import InvalidInputError
from thatch.plugin.privacy import redact_secrets

#: The keys of a Prediction's mapping that are not row fields: the row's own
#: columns, and the decision texts the shapes put beside a Prediction.
ROW_COLUMNS = ("action", "toward", "confidence")
#: What a Prediction may say the user will do (``action``), as ``predlog score --actual`` does.
ACTIONS = ("accept", "correct")
NOT_FIELDS = frozenset({*ROW_COLUMNS, "decision", "choice", "ruling"})
#: The info-string languages of a YAML fence.
YAML_LANGUAGES = frozenset({"yaml", "yml"})
#: The fix every confidence error names.
CONFIDENCE_FIX = "write a whole number 0–100, such as confidence: 70"

#: A fence's opening line. A sub-agent's result may start with its fence on the
#: line of the ``<result>`` tag, so tags may stand before a fence (and after one).
_TAGS = r"(?:</?[A-Za-z][\w-]*>[ \t]*)*"
_FENCE_OPEN = re.compile(
    rf"^(?P<indent>[ \t]*){_TAGS}(?P<fence>`{{3,}}|~{{3,}})[ \t]*(?P<info>[^\n`]*)$"
)
_LANGUAGE = re.compile(r"[A-Za-z0-9_+.-]+")
_FIRST_KEY = re.compile(
    r"""^[ \t]*(?P<quote>["']?)(?P<key>predictions?|decision_\d+)(?P=quote)[ \t]*:(?:[ \t]|$)"""
)
_DECISION_KEY = re.compile(r"decision_\d+")
#: A legacy confidence: ``Confidence: 70`` (or ``70%``) anywhere in a prose line.
_CONFIDENCE_LINE = re.compile(
    r"\bconfidence[ \t]*[:=][ \t]*(?P<value>[-+]?\d+(?:\.\d+)?)(?!\d)[ \t]*%?", re.IGNORECASE
)
#: A lettered ruling's marker at the start of a line: ``A)``, ``(a)``, ``Ruling A:``.
_RULING = re.compile(
    r"^[ \t]*(?:[-*+][ \t]+)?"
    r"(?:\((?P<paren>[A-Za-z])\)|(?P<bracket>[A-Za-z])\)"
    r"|ruling[ \t]+(?P<named>[A-Za-z])\b[ \t]*[:.)–—-]?)"
    r"[ \t]*(?P<rest>.*)$",
    re.IGNORECASE,
)
#: Markdown emphasis around a legacy line (``**Confidence:** 70``), and tags before
#: it (``<result>A) ...``), ignored when reading it.
_EMPHASIS = re.compile(r"[*`]")
_LEADING_TAGS = re.compile(rf"^[ \t]*{_TAGS}")
#: How far a block's YAML may nest, and how many values it may hold, before
#: it is refused: YAML aliases can make a small block expand without end.
_MAX_DEPTH = 32
_MAX_VALUES = 10_000


class MalformedPrediction(InvalidInputError):
    """A Prediction block that does not load, or a Prediction that cannot be a row.

    ``problem`` says what is wrong and how to fix it; ``line`` is the
    transcript line of the text it was read from, when known.
    """

    def __init__(self, problem: str, line: int | None = None) -> None:
        self.problem = problem
        self.line = line
        super().__init__(problem if line is None else f"line {line}: {problem}")

    def at_line(self, line: int) -> MalformedPrediction:
        """The same problem, placed on a transcript line."""
        return MalformedPrediction(self.problem, line)


@attrs.frozen
class StatedPrediction:
    """One Prediction as a text states it, before it is numbered."""

    #: What the agent predicts the user will do (``accept`` / ``correct``, as stated).
    action: str
    #: The text the user will move toward.
    toward: str
    #: How sure the agent is, 0–100.
    confidence: int
    #: The Prediction's other fields (triggers, levers...), JSON-able.
    fields: Mapping[str, Any] = attrs.field(factory=dict)
    #: The ruling's letter (lower case) of a lettered legacy message, else None.
    letter: str | None = None


def predictions_in(text: str) -> list[StatedPrediction]:
    """Every Prediction of ``text`` in the order shown: each block first to last,
    inside a block each item or ``decision_<n>`` key first to last; a text with
    no Prediction block gives its legacy Prediction(s), if it has any.

    :raises MalformedPrediction: a block does not load, or a Prediction's
        confidence is not a whole number 0–100.
    """
    blocks = prediction_blocks(text)
    if not blocks:
        return legacy_predictions(text)
    return [
        stated for number, block in enumerate(blocks, 1) for stated in read_block(block, number)
    ]


def readable_predictions(text: str) -> list[StatedPrediction]:
    """:func:`predictions_in`, leaving out every block (or legacy line) it cannot read.

    How a sub-agent's result is read: its mistakes give no rows, and no error.
    """
    blocks = prediction_blocks(text)
    if not blocks:
        try:
            return legacy_predictions(text)
        except MalformedPrediction:
            return []
    stated: list[StatedPrediction] = []
    for number, block in enumerate(blocks, 1):
        try:
            stated.extend(read_block(block, number))
        except MalformedPrediction:
            continue
    return stated


def stated_confidence(text: str) -> int:
    """The confidence of the last Prediction of ``text`` (last block, last item or key).

    :raises MalformedPrediction: as :func:`predictions_in`, or ``text`` states none.
    """
    return _last_prediction(text).confidence


def stated_toward(text: str) -> str:
    """The ``toward`` text of the last Prediction of ``text``.

    :raises MalformedPrediction: as :func:`stated_confidence`.
    """
    return _last_prediction(text).toward


def _last_prediction(text: str) -> StatedPrediction:
    stated = predictions_in(text)
    if not stated:
        raise MalformedPrediction(
            "the text states no Prediction; show a ```yaml block with prediction: "
            "(action, toward, confidence) or a line Confidence: N"
        )
    return stated[-1]


# --- Finding blocks ---------------------------------------------------------------


def yaml_blocks(text: str) -> list[str]:
    """The bodies of the fenced YAML blocks of ``text``, in order.

    A fence is three or more backticks or tildes, at any indentation (so
    blocks inside list items count); its info string's first word is the
    language (```` ```yaml title="x" ```` is YAML). A YAML block nested in
    another fence (a ```` ````markdown ```` wrapper) is found too. A fence that
    never closes runs to the end of the text.
    """
    found: list[str] = []
    for language, body in _fences(text.splitlines()):
        if language in YAML_LANGUAGES:
            found.append("\n".join(body))
        else:
            found.extend(yaml_blocks("\n".join(body)))
    return found


def prediction_blocks(text: str) -> list[str]:
    """The YAML blocks of ``text`` that are Prediction blocks (:func:`is_prediction_block`)."""
    return [block for block in yaml_blocks(text) if is_prediction_block(block)]


def is_prediction_block(block: str) -> bool:
    """Whether a YAML block's first key (after ``# …`` comments) makes it a Prediction block.

    Said from the text alone, so a block that does not load is still one
    (and reading it raises). ``decision_<n>:`` blocks whose values hold
    neither a ``prediction:`` mapping nor an ``action`` (shape 5) are not.
    """
    key = _first_key(block)
    if key is None:
        return False
    if not _DECISION_KEY.fullmatch(key):
        return True
    try:
        return bool(_decision_mappings(_load(block, 0)))
    except MalformedPrediction:
        return True


def _fences(lines: Sequence[str]) -> Iterator[tuple[str, list[str]]]:
    """Each fenced block's language (lower case, "" when none) and body lines."""
    for start, end, opening in _fence_spans(lines):
        indent = len(opening["indent"])
        language = _LANGUAGE.match(opening["info"].strip())
        body = [_dedent(line, indent) for line in lines[start + 1 : end]]
        yield (language[0].lower() if language else ""), body


def fenced_lines(lines: Sequence[str]) -> set[int]:
    """The indexes of ``lines`` that open, close or stand inside a fenced block."""
    inside: set[int] = set()
    for start, end, _opening in _fence_spans(lines):
        inside.update(range(start, min(end + 1, len(lines))))
    return inside


def _fence_spans(lines: Sequence[str]) -> Iterator[tuple[int, int, re.Match[str]]]:
    """Each top-level fence: its opening line, its closing line, the opening's match."""
    start = 0
    while start < len(lines):
        opening = _FENCE_OPEN.match(lines[start])
        if opening is None:
            start += 1
            continue
        end = _closing_line(lines, start + 1, opening["fence"])
        yield start, end, opening
        start = end + 1


def _closing_line(lines: Sequence[str], start: int, fence: str) -> int:
    """The index of the line closing ``fence`` (the same character, at least as
    many, nothing else), or ``len(lines)`` when it never closes."""
    closing = re.compile(rf"^[ \t]*{re.escape(fence[0])}{{{len(fence)},}}[ \t]*{_TAGS}$")
    for index in range(start, len(lines)):
        if closing.match(lines[index]):
            return index
    return len(lines)


def _dedent(line: str, indent: int) -> str:
    """``line`` without up to ``indent`` leading blanks (the fence's own indentation)."""
    blanks = len(line) - len(line.lstrip(" \t"))
    return line[min(blanks, indent) :]


def _first_key(block: str) -> str | None:
    """The block's first key when it is a Prediction key, else None."""
    for line in block.splitlines():
        stripped = line.strip()
        if not stripped or stripped.startswith("#") or stripped == "---":
            continue
        first = _FIRST_KEY.match(line)
        return first["key"] if first else None
    return None


# --- Reading a block ----------------------------------------------------------------


def read_block(block: str, number: int = 1) -> list[StatedPrediction]:
    """The Predictions of one Prediction block (``number``: its place in the text, for errors).

    A block that is not a Prediction block (shape 5, ``plan:``...) gives none.

    :raises MalformedPrediction: the YAML does not load, a prediction is not
        a mapping, or a Prediction cannot be a row (its confidence, its action).
    """
    key = _first_key(block)
    if key is None:
        return []
    data = _load(block, number)
    if key == "prediction":
        mappings = [("prediction:", _prediction_mapping(data.get(key), "prediction:", number))]
    elif key == "predictions":
        mappings = _listed_mappings(data.get(key), number)
    else:
        mappings = _decision_mappings(data, number)
    return [_stated(fields, f"Prediction block {number}, {where}") for where, fields in mappings]


def _load(block: str, number: int) -> Mapping[Any, Any]:
    try:
        data = yaml.safe_load(block)
    except yaml.YAMLError as exc:
        raise MalformedPrediction(
            f"Prediction block {number} is not valid YAML ({_yaml_problem(exc)}); fix its YAML"
        ) from None
    except RecursionError:
        raise MalformedPrediction(f"Prediction block {number} nests too deeply") from None
    if not isinstance(data, Mapping):
        raise MalformedPrediction(
            f"Prediction block {number} is not a YAML mapping; start it with prediction:"
        )
    return data


def _yaml_problem(exc: yaml.YAMLError) -> str:
    """What PyYAML found wrong, and where in the block (line 1 = the first after the fence)."""
    problem = getattr(exc, "problem", None)
    mark = getattr(exc, "problem_mark", None)
    if not problem:
        return " ".join(str(exc).split())
    return f"{problem} at line {mark.line + 1}" if mark is not None else str(problem)


def _prediction_mapping(value: Any, where: str, number: int) -> Mapping[Any, Any]:
    if not isinstance(value, Mapping):
        raise MalformedPrediction(
            f"Prediction block {number}: {where} is not a mapping ({_shown(value)}); "
            "give it action, toward and confidence"
        )
    return value


def _listed_mappings(value: Any, number: int) -> list[tuple[str, Mapping[Any, Any]]]:
    """Shape 2 (a list of items, each with a ``prediction:``) or shape 4 (a mapping of
    ``decision_<n>`` keys holding the fields directly)."""
    if isinstance(value, list):
        return [
            (f"item {index} of predictions:", _own_mapping(item, f"item {index}", number))
            for index, item in enumerate(value, 1)
        ]
    if isinstance(value, Mapping):
        return [
            (f"predictions: {key}", _own_mapping(item, str(key), number))
            for key, item in value.items()
        ]
    raise MalformedPrediction(
        f"Prediction block {number}: predictions: is neither a list nor a mapping "
        f"({_shown(value)}); list items with a prediction: mapping each"
    )


def _own_mapping(item: Any, where: str, number: int) -> Mapping[Any, Any]:
    """An item's Prediction: its ``prediction:`` mapping, else the item's own fields."""
    if isinstance(item, Mapping) and "prediction" in item:
        return _prediction_mapping(item["prediction"], f"{where}'s prediction:", number)
    return _prediction_mapping(item, where, number)


def _decision_mappings(
    data: Mapping[Any, Any], number: int = 0
) -> list[tuple[str, Mapping[Any, Any]]]:
    """Shape 3: the ``decision_<n>`` keys whose value has a ``prediction:`` mapping (or
    the fields directly, with an ``action``). Keys with neither (shape 5) give none."""
    found: list[tuple[str, Mapping[Any, Any]]] = []
    for key, value in data.items():
        if not (isinstance(key, str) and _DECISION_KEY.fullmatch(key)):
            continue
        if not isinstance(value, Mapping):
            continue
        if "prediction" in value:
            found.append(
                (key, _prediction_mapping(value["prediction"], f"{key}.prediction:", number))
            )
        elif "action" in value:
            found.append((key, value))
    return found


def _stated(mapping: Mapping[Any, Any], where: str) -> StatedPrediction:
    confidence = checked_confidence(mapping.get("confidence"), where, "confidence" in mapping)
    given = mapping.get("action")
    action = _text(given)
    if not action.strip():
        raise MalformedPrediction(f"{where} has no action; write action: accept or action: correct")
    if not isinstance(given, str) or action.strip().lower() not in ACTIONS:
        raise MalformedPrediction(
            f"action {_shown(given)} is not accept or correct ({where}); "
            "write action: accept or action: correct"
        )
    return StatedPrediction(
        action=action.strip().lower(),
        toward=_text(mapping.get("toward")),
        confidence=confidence,
        fields=_row_fields(mapping),
    )


def checked_confidence(value: Any, where: str, given: bool = True) -> int:
    """``value`` when it is a whole number 0–100 (never a boolean), else MalformedPrediction."""
    if not given:
        raise MalformedPrediction(f"{where} has no confidence; {CONFIDENCE_FIX}")
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= 100:
        raise MalformedPrediction(
            f"confidence {_shown(value)} is not a whole number 0–100 ({where}); {CONFIDENCE_FIX}"
        )
    return value


def _shown(value: Any) -> str:
    """``value`` as an error quotes it: short, and with any secret redacted."""
    shown = redact_secrets(repr(value))
    return shown if len(shown) <= 60 else shown[:57] + "..."


def _text(value: Any) -> str:
    """A row column as text: strings as stated, nothing as "", anything else as JSON-able text."""
    if value is None:
        return ""
    if isinstance(value, str):
        return redact_secrets(value)
    return json.dumps(_JsonAble().convert(value), ensure_ascii=False)


def _row_fields(mapping: Mapping[Any, Any]) -> dict[str, Any]:
    converter = _JsonAble()
    return {
        converter.key(key): converter.convert(value)
        for key, value in mapping.items()
        if key not in NOT_FIELDS
    }


class _JsonAble:
    """Turns loaded YAML into JSON values: dates as ISO text, sets and tuples as
    lists, binary as base64, strings redacted; refuses alias bombs and cycles."""

    def __init__(self) -> None:
        self.values_left = _MAX_VALUES

    def key(self, key: Any) -> str:
        return key if isinstance(key, str) else str(self.convert(key))

    def convert(self, value: Any, depth: int = 0) -> Any:
        self.values_left -= 1
        if self.values_left < 0 or depth > _MAX_DEPTH:
            raise MalformedPrediction(
                "a Prediction's fields are too large or nest too deeply; keep them small"
            )
        if isinstance(value, str):
            return redact_secrets(value)
        if value is None or isinstance(value, (bool, int)):
            return value
        if isinstance(value, float):
            return value if math.isfinite(value) else str(value)
        if isinstance(value, (datetime, date, time)):
            return value.isoformat()
        if isinstance(value, bytes):
            return base64.b64encode(value).decode("ascii")
        if isinstance(value, Mapping):
            return {self.key(key): self.convert(item, depth + 1) for key, item in value.items()}
        if isinstance(value, (set, frozenset)):
            return [self.convert(item, depth + 1) for item in sorted(value, key=repr)]
        if isinstance(value, (list, tuple)):
            return [self.convert(item, depth + 1) for item in value]
        return redact_secrets(str(value))


# --- Legacy messages ----------------------------------------------------------------


def legacy_predictions(text: str) -> list[StatedPrediction]:
    """The legacy Predictions of a text with no Prediction block.

    Prose lines (outside fenced blocks) are read with markdown emphasis
    ignored. When lettered rulings hold ``Confidence: N`` lines, each such
    ruling is one Prediction (its letter, lower case); otherwise the last
    ``Confidence: N`` line of the text is one Prediction. A legacy Prediction
    predicts ``accept``: the line says how sure the agent is that the user
    takes what it proposes. ``toward`` is the ruling's text (or the
    paragraph of the Confidence line, else the one before it), the
    confidence clause left out.

    :raises MalformedPrediction: a confidence is not a whole number 0–100, or
        two rulings share a letter.
    """
    prose = _prose_lines(text)
    rulings = _rulings(prose)
    if rulings:
        return rulings
    found = [
        (index, match) for index, line in enumerate(prose) if (match := _last_confidence(line))
    ]
    if not found:
        return []
    index, match = found[-1]
    confidence = _legacy_confidence(match, "the Confidence line")
    return [StatedPrediction("accept", _paragraph_toward(prose, index), confidence, {})]


def _prose_lines(text: str) -> list[str]:
    """The text's lines with fenced blocks blanked, leading tags and emphasis marks removed."""
    lines = text.splitlines()
    fenced = fenced_lines(lines)
    return [
        "" if index in fenced else _EMPHASIS.sub("", _LEADING_TAGS.sub("", line))
        for index, line in enumerate(lines)
    ]


def _last_confidence(line: str) -> re.Match[str] | None:
    matches = list(_CONFIDENCE_LINE.finditer(line))
    return matches[-1] if matches else None


def _legacy_confidence(match: re.Match[str], where: str) -> int:
    raw = match["value"]
    number: int | float = float(raw) if "." in raw else int(raw)
    return checked_confidence(number, where)


def _rulings(prose: Sequence[str]) -> list[StatedPrediction]:
    """One Prediction per lettered ruling that holds a Confidence line.

    A ruling is its marker line and the lines after it, up to the next
    marker or blank line.
    """
    stated: list[StatedPrediction] = []
    for letter, lines in _ruling_spans(prose):
        confidences = [match for line in lines if (match := _last_confidence(line))]
        if not confidences:
            continue
        if any(earlier.letter == letter for earlier in stated):
            raise MalformedPrediction(
                f"ruling {letter.upper()} appears twice; give each ruling its own letter"
            )
        confidence = _legacy_confidence(confidences[-1], f"ruling {letter.upper()}")
        stated.append(StatedPrediction("accept", _toward_of(lines), confidence, {}, letter))
    return stated


def _ruling_spans(prose: Sequence[str]) -> Iterator[tuple[str, list[str]]]:
    letter: str | None = None
    lines: list[str] = []
    for line in prose:
        marker = _RULING.match(line)
        if marker is not None or not line.strip():
            if letter is not None:
                yield letter, lines
            letter, lines = None, []
        if marker is not None:
            letter = (marker["paren"] or marker["bracket"] or marker["named"]).lower()
            lines = [marker["rest"]]
        elif letter is not None:
            lines.append(line)
    if letter is not None:
        yield letter, lines


def _paragraph_toward(prose: Sequence[str], index: int) -> str:
    """The paragraph holding line ``index`` without its confidence clause, else the one before."""
    start, end = _paragraph(prose, index)
    toward = _toward_of(prose[start:end])
    before = start - 1
    while not toward and before >= 0 and not prose[before].strip():
        before -= 1
    if toward or before < 0:
        return toward
    start, end = _paragraph(prose, before)
    return _toward_of(prose[start:end])


def _paragraph(prose: Sequence[str], index: int) -> tuple[int, int]:
    """The slice of the non-blank lines around line ``index``."""
    start, end = index, index + 1
    while start > 0 and prose[start - 1].strip():
        start -= 1
    while end < len(prose) and prose[end].strip():
        end += 1
    return start, end


def _toward_of(lines: Sequence[str]) -> str:
    words = " ".join(_CONFIDENCE_LINE.sub(" ", line) for line in lines).split()
    return redact_secrets(" ".join(words).strip(" .,;:–—-()"))
