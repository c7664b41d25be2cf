"""A JSON-with-comments reader that remembers where every value sits in the text.

Harness config files are JSON or JSONC: ``//`` and ``/* */`` comments and
trailing commas are allowed (opencode.jsonc, and users comment their .json
files too). :func:`parse` returns the value together with the character
span of each object, array, member and item, so :mod:`thatch.setup.edits`
can change one member while every other byte stays as the user wrote it.

Some harnesses read their files as strict JSON and ignore one with a
comment or a trailing comma (Claude Code); :func:`leniencies` finds those.
"""

from __future__ import annotations

import itertools
import json
import re
from typing import Any, Literal

import attrs

from thatch.plugin.errors import InvalidInputError

#: Appended to every parse error: what the user can do about it.
_FIX = (
    "fix the file (JSON, with // and /* */ comments and trailing commas allowed) "
    "or move it away, then run thatch setup again"
)

_TOKEN = re.compile(
    r"""
    (?P<space>[ \t\r\n]+)
    |(?P<comment>//[^\r\n]*|/\*.*?\*/)
    |(?P<string>"(?:[^"\\]|\\.)*")
    |(?P<number>-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?)
    |(?P<word>true|false|null)
    |(?P<punct>[{}\[\]:,])
    """,
    re.VERBOSE | re.DOTALL,
)

_WORDS = {"true": True, "false": False, "null": None}

Kind = Literal["object", "array", "scalar"]


class JsoncError(InvalidInputError):
    """A file is not valid JSON/JSONC; the message names the file, line and column."""

    def __init__(self, source: str, text: str, pos: int, problem: str) -> None:
        self.source = source
        self.line = _line(text, pos)
        self.column = pos - (text.rfind("\n", 0, pos) + 1) + 1
        self.problem = problem
        super().__init__(f"{self._where()}; {_FIX}")

    def for_strict_reader(self, reader: str) -> InvalidInputError:
        """The same error for a file ``reader`` takes as strict JSON.

        The general fix invites comments and trailing commas, which such a
        reader ignores the file for; this one says so instead.
        """
        return InvalidInputError(
            f"{self._where()}; fix the file (strict JSON: {reader} ignores a file with "
            "comments or trailing commas) or move it away, then run thatch setup again"
        )

    def _where(self) -> str:
        return f"{self.source} line {self.line} column {self.column}: {self.problem}"


@attrs.frozen
class Token:
    """One token: ``kind`` is ``string``, ``number``, ``word``, ``comment`` or the punctuation."""

    kind: str
    start: int
    end: int


@attrs.frozen
class Element:
    """A member of an object (``key`` set) or an item of an array (``key`` None)."""

    key: str | None
    #: Where the element begins: the key's opening quote, or the item's first character.
    start: int
    value: Node
    #: Position of the comma after the element, or None when there is none.
    comma: int | None


@attrs.frozen
class Node:
    """A JSON value and its span ``[start, end)`` in the text."""

    kind: Kind
    start: int
    end: int
    #: The plain Python value (dicts, lists, str, int, float, bool, None).
    data: Any
    #: Members of an object or items of an array, in text order.
    elements: tuple[Element, ...] = ()

    def member(self, key: str) -> Element | None:
        """The member named ``key`` (the last one when the key repeats, as JSON readers do)."""
        found = None
        for element in self.elements:
            if element.key == key:
                found = element
        return found


def tokens(text: str, source: str) -> list[Token]:
    """Every token of ``text`` except whitespace; comments included."""
    found: list[Token] = []
    pos = 1 if text.startswith("\ufeff") else 0
    while pos < len(text):
        match = _TOKEN.match(text, pos)
        if match is None:
            raise JsoncError(source, text, pos, _unexpected(text, pos))
        kind = match.lastgroup or ""
        if kind != "space":
            found.append(Token(match.group() if kind == "punct" else kind, pos, match.end()))
        pos = match.end()
    return found


def _unexpected(text: str, pos: int) -> str:
    """Why no token starts at ``pos``."""
    if text[pos] == '"':
        return "a string is not closed (a line ends before its closing quote)"
    if text.startswith("/*", pos):
        return "a /* comment is not closed with */"
    return f"unexpected character {text[pos]!r}"


@attrs.frozen
class Leniency:
    """Something JSONC allows and strict JSON does not, and the line it is on."""

    kind: Literal["comment", "trailing comma"]
    line: int


def leniencies(text: str, source: str) -> list[Leniency]:
    """The comments and trailing commas of ``text``, in text order.

    Raises :class:`JsoncError` when ``text`` does not even tokenize.
    """
    found = []
    significant = [token for token in tokens(text, source) if token.kind != "comment"]
    for token in tokens(text, source):
        if token.kind == "comment":
            found.append(Leniency("comment", _line(text, token.start)))
    for token, after in itertools.pairwise(significant):
        if token.kind == "," and after.kind in ("}", "]"):
            found.append(Leniency("trailing comma", _line(text, token.start)))
    return sorted(found, key=lambda leniency: leniency.line)


class StrictJsonError(InvalidInputError):
    """A file its reader takes as strict JSON has comments or trailing commas."""

    def __init__(self, source: str, found: list[Leniency], reader: str) -> None:
        self.source = source
        self.found = tuple(found)
        kinds = [
            _at_lines(kind, [item.line for item in found if item.kind == kind])
            for kind in ("comment", "trailing comma")
        ]
        has = " and ".join(kind for kind in kinds if kind)
        super().__init__(
            f"{source} has {has}; {reader} reads this file as strict JSON and ignores it "
            f"whole when it has them (your own settings in it too); remove them and run "
            "thatch setup again (nothing was changed)"
        )


def _at_lines(kind: str, lines: list[int]) -> str:
    """``a comment at line 3``, ``comments at lines 3, 8 and 9``; "" for none."""
    if not lines:
        return ""
    what = f"a {kind}" if len(lines) == 1 else f"{kind}s"
    unique = sorted(set(lines))
    if len(unique) == 1:
        return f"{what} at line {unique[0]}"
    shown = [str(line) for line in unique[:5]] + (["more"] if len(unique) > 5 else [])
    return f"{what} at lines {', '.join(shown[:-1])} and {shown[-1]}"


def _line(text: str, pos: int) -> int:
    return text.count("\n", 0, pos) + 1


def parse(text: str, source: str) -> Node | None:
    """The value ``text`` holds, or None when it holds none (blank or only comments).

    ``source`` names the file in errors. Raises :class:`JsoncError` with the
    line and column of the first problem.
    """
    significant = [token for token in tokens(text, source) if token.kind != "comment"]
    if not significant:
        return None
    parser = _Parser(text, source, significant)
    try:
        root = parser.value()
    except RecursionError:
        raise JsoncError(source, text, 0, "values are nested too deeply") from None
    if parser.index < len(significant):
        extra = significant[parser.index]
        raise JsoncError(source, text, extra.start, "unexpected text after the top-level value")
    return root


def loads(text: str, source: str) -> Any:
    """The plain value of a JSON/JSONC text (None when it holds no value)."""
    root = parse(text, source)
    return None if root is None else root.data


def find(root: Node | None, keys: tuple[str, ...]) -> Node | None:
    """The value under the key path ``keys``, or None when some key is missing.

    Raises nothing for a path through a non-object; it is simply not there.
    """
    node = root
    for key in keys:
        if node is None or node.kind != "object":
            return None
        element = node.member(key)
        node = element.value if element else None
    return node


class _Parser:
    """Recursive descent over the significant tokens."""

    def __init__(self, text: str, source: str, significant: list[Token]) -> None:
        self.text = text
        self.source = source
        self.tokens = significant
        self.index = 0

    def fail(self, token: Token | None, problem: str) -> JsoncError:
        return JsoncError(
            self.source, self.text, len(self.text) if token is None else token.start, problem
        )

    def peek(self) -> Token | None:
        return self.tokens[self.index] if self.index < len(self.tokens) else None

    def take(self, wanted: str) -> Token:
        token = self.peek()
        if token is None:
            raise self.fail(None, f"the file ends where {wanted} was expected")
        self.index += 1
        return token

    def value(self) -> Node:
        token = self.take("a value")
        if token.kind == "{":
            return self.container(token, "object", "}")
        if token.kind == "[":
            return self.container(token, "array", "]")
        if token.kind in ("string", "number"):
            return Node("scalar", token.start, token.end, self.decode(token))
        if token.kind == "word":
            return Node(
                "scalar", token.start, token.end, _WORDS[self.text[token.start : token.end]]
            )
        raise self.fail(token, f"expected a value, found {self.text[token.start]!r}")

    def decode(self, token: Token) -> Any:
        raw = self.text[token.start : token.end]
        try:
            # strict=False: the harnesses' own readers accept tabs inside strings.
            return json.loads(raw, strict=False)
        except json.JSONDecodeError as exc:
            raise self.fail(token, f"bad string or number {raw[:40]!r} ({exc.msg})") from None

    def container(self, opening: Token, kind: Kind, closer: str) -> Node:
        elements: list[Element] = []
        while True:
            token = self.peek()
            if token is None:
                raise self.fail(opening, f"this {opening.kind} is never closed with {closer}")
            if token.kind == closer:
                break
            key, start = None, token.start
            if kind == "object":
                if token.kind != "string":
                    raise self.fail(token, "expected a member name in double quotes or '}'")
                self.index += 1
                key = self.decode(token)
                colon = self.take("':'")
                if colon.kind != ":":
                    raise self.fail(colon, f"expected ':' after the member name {key!r}")
            value = self.value()
            after = self.peek()
            if after is not None and after.kind == ",":
                self.index += 1
                elements.append(Element(key, start, value, after.start))
                continue
            elements.append(Element(key, start, value, None))
            if after is None:
                raise self.fail(opening, f"this {opening.kind} is never closed with {closer}")
            if after.kind != closer:
                what = f"member {key!r}" if key is not None else "an item"
                raise self.fail(after, f"expected ',' or '{closer}' after {what}")
        closing = self.take(closer)
        if kind == "object":
            data: Any = {element.key: element.value.data for element in elements}
        else:
            data = [element.value.data for element in elements]
        return Node(kind, opening.start, closing.end, data, tuple(elements))
