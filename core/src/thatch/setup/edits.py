"""Minimal text edits to JSON/JSONC files: every byte thatch does not touch stays put.

Each function takes the file's text and returns the new text. New members
and items go after the last existing one, indented like their neighbours
(or one indent unit, detected from the file, deeper than their container),
and a ``// comment`` at the end of the previous line stays on that line.
Removing what was inserted gives back the original text, which is what
lets ``thatch setup --uninstall`` restore files byte for byte.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from typing import Any

import attrs

from thatch.plugin.errors import InvalidInputError
from thatch.plugin.jsonc import Node, find, parse

KeyPath = tuple[str, ...]

_KINDS = {"object": "an object", "array": "a list", "scalar": "a single value"}


@attrs.frozen
class Layout:
    """How a file is written: its line break and one level of indentation."""

    newline: str
    unit: str

    @classmethod
    def of(cls, text: str, root: Node | None) -> Layout:
        """The layout of ``text``; two spaces when nothing is indented yet."""
        newline = "\r\n" if "\r\n" in text else "\n"
        return cls(newline, _indent_unit(text, root) or "  ")

    def render(self, value: Any, base: str, inline: bool) -> str:
        """``value`` as JSON; multi-line text continues at indentation ``base``."""
        if inline:
            return json.dumps(value, ensure_ascii=False)
        rendered = json.dumps(value, indent=self.unit, ensure_ascii=False)
        return rendered.replace("\n", self.newline + base)


def set_value(text: str, keys: KeyPath, value: Any, source: str) -> tuple[str, tuple[KeyPath, ...]]:
    """Make ``keys`` hold ``value``; returns the new text and the objects created on the way."""
    text, root, made = _object_root(text, source)
    parent, depth = _walk(text, root, keys, source)
    if depth == len(keys):
        element = parent.member(keys[-1])
        assert element is not None
        layout = Layout.of(text, root)
        rendered = layout.render(value, _line_indent(text, element.start), _inline(text, parent))
        return _splice(text, [(element.value.start, element.value.end, rendered)]), ()
    nested = value
    for key in reversed(keys[depth + 1 :]):
        nested = {key: nested}
    created = made + tuple(keys[:size] for size in range(depth + 1, len(keys)))
    return _insert(text, root, parent, keys[depth], nested), created


def append_item(
    text: str, keys: KeyPath, item: Any, source: str
) -> tuple[str, tuple[KeyPath, ...]]:
    """Append ``item`` to the list at ``keys``; returns the new text and what was created.

    A missing list (and missing objects on the way) is created; the created
    key paths include the list's own.
    """
    text, root, made = _object_root(text, source)
    parent, depth = _walk(text, root, keys, source)
    if depth == len(keys):
        node = find(root, keys)
        assert node is not None
        if node.kind != "array":
            raise _not_a(source, keys, node, "a list", "add thatch's entry to")
        return _insert(text, root, node, None, item), made
    nested: Any = [item]
    for key in reversed(keys[depth + 1 :]):
        nested = {key: nested}
    created = made + tuple(keys[:size] for size in range(depth + 1, len(keys) + 1))
    return _insert(text, root, parent, keys[depth], nested), created


def replace_raw(text: str, keys: KeyPath, raw: str, source: str) -> str:
    """Put the JSON text ``raw`` back as the value at ``keys`` (undoing :func:`set_value`)."""
    node = find(parse(text, source), keys)
    if node is None:
        return text
    return _splice(text, [(node.start, node.end, raw)])


def replace_item(text: str, keys: KeyPath, index: int, value: Any, source: str) -> str:
    """Item number ``index`` of the list at ``keys`` becomes ``value``, laid out like the file."""
    root = parse(text, source)
    node = find(root, keys)
    if node is None or node.kind != "array" or not 0 <= index < len(node.elements):
        return text
    element = node.elements[index].value
    layout = Layout.of(text, root)
    inline = "\n" not in text[element.start : element.end]
    rendered = layout.render(value, _line_indent(text, element.start), inline)
    return _splice(text, [(element.start, element.end, rendered)])


def remove_member(text: str, keys: KeyPath, source: str) -> str:
    """Remove the member at ``keys`` (the undo of inserting it); missing: no change."""
    parent = find(parse(text, source), keys[:-1])
    if parent is None or parent.kind != "object":
        return text
    indexes = [i for i, element in enumerate(parent.elements) if element.key == keys[-1]]
    if not indexes:
        return text
    return _collapse(_remove_element(text, parent, indexes[-1]), keys[:-1], source)


def remove_item(text: str, keys: KeyPath, index: int, source: str) -> str:
    """Remove item number ``index`` of the list at ``keys``."""
    node = find(parse(text, source), keys)
    if node is None or node.kind != "array" or not 0 <= index < len(node.elements):
        return text
    return _collapse(_remove_element(text, node, index), keys, source)


def prune(text: str, containers: Sequence[KeyPath], source: str) -> str:
    """Remove the objects and lists at ``containers`` that are now empty (deepest first).

    A container holding a comment is not empty: the comment is the user's.
    The empty path stands for a top-level object added to a file that held
    no value; it goes with the line break after it.
    """
    for path in sorted(set(containers), key=len, reverse=True):
        node = find(parse(text, source), path)
        if (
            node is None
            or node.kind == "scalar"
            or node.elements
            or text[node.start + 1 : node.end - 1].strip()
        ):
            continue
        if path:
            text = remove_member(text, path, source)
        else:
            end = node.end
            if text.startswith("\r\n", end):
                end += 2
            elif text.startswith("\n", end):
                end += 1
            text = text[: node.start] + text[end:]
    return text


# -- finding the place ---------------------------------------------------------------------


def _object_root(text: str, source: str) -> tuple[str, Node, tuple[KeyPath, ...]]:
    """The text and its top-level object; ``{}`` is appended when the text holds no value.

    The last part is ``((),)`` when the object was added, else ``()``.
    """
    root = parse(text, source)
    made: tuple[KeyPath, ...] = ()
    if root is None:
        made = ((),)
        newline = "\r\n" if "\r\n" in text else "\n"
        prefix = text if not text or text.endswith("\n") else text + newline
        text = prefix + "{}" + newline
        root = parse(text, source)
        assert root is not None
    if root.kind != "object":
        raise InvalidInputError(
            f"{source} holds {_KINDS[root.kind]} at the top, not an object, so thatch cannot add "
            "its settings to it; make the top level an object or move the file away, "
            "then run thatch setup again"
        )
    return text, root, made


def _walk(text: str, root: Node, keys: KeyPath, source: str) -> tuple[Node, int]:
    """The deepest existing object on the way to ``keys`` and how many keys exist."""
    if not keys:
        raise ValueError("a JSON change needs at least one key")
    node = root
    for depth, key in enumerate(keys):
        element = node.member(key)
        if element is None:
            return node, depth
        if depth == len(keys) - 1:
            return node, len(keys)
        if element.value.kind != "object":
            raise _not_a(
                source, keys[: depth + 1], element.value, "an object", "add settings inside"
            )
        node = element.value
    raise AssertionError("unreachable")


def _not_a(source: str, keys: KeyPath, node: Node, wanted: str, action: str) -> InvalidInputError:
    dotted = ".".join(keys)
    return InvalidInputError(
        f"{source}: {dotted!r} is {_KINDS[node.kind]}, not {wanted}, so thatch cannot "
        f"{action} it; change it to {wanted} or remove it, then run thatch setup again"
    )


def _indent_unit(text: str, root: Node | None) -> str | None:
    """One level of indentation, from the first element that starts its own line."""
    queue = [root] if root is not None else []
    while queue:
        node = queue.pop(0)
        base = _line_indent(text, node.start)
        for element in node.elements:
            if _starts_line(text, element.start):
                indent = _line_indent(text, element.start)
                if indent.startswith(base) and len(indent) > len(base):
                    return indent[len(base) :]
            if element.value.kind != "scalar":
                queue.append(element.value)
    return None


# -- inserting -------------------------------------------------------------------------------


def _insert(text: str, root: Node, container: Node, key: str | None, value: Any) -> str:
    """Add a member (``key`` set) or an item after the last element of ``container``."""
    layout = Layout.of(text, root)
    nl = layout.newline
    outer = _line_indent(text, container.start)
    if not container.elements:
        interior = text[container.start + 1 : container.end - 1]
        minified = bool(root.elements) and "\n" not in text[root.start : root.end]
        if interior.strip():
            # Only comments inside: keep them, and start a line after the last one.
            at = container.start + 1 + len(interior.rstrip())
            element = _element(layout, key, value, outer + layout.unit, inline=False)
            return _splice(text, [(at, at, nl + outer + layout.unit + element)])
        if minified:
            return _splice(
                text,
                [(container.start + 1, container.end - 1, _element(layout, key, value, "", True))],
            )
        element = _element(layout, key, value, outer + layout.unit, inline=False)
        body = nl + outer + layout.unit + element + nl + outer
        return _splice(text, [(container.start + 1, container.end - 1, body)])
    last = container.elements[-1]
    if _inline(text, container):
        element = _element(layout, key, value, "", inline=True)
        if last.comma is not None:
            return _splice(text, [(last.comma + 1, last.comma + 1, " " + element + ",")])
        return _splice(text, [(last.value.end, last.value.end, ", " + element)])
    indent = _member_indent(text, container) or outer + layout.unit
    element = _element(layout, key, value, indent, inline=False)
    if last.comma is not None:
        # The file uses trailing commas: so does the new element.
        at = _line_end_after(text, last.comma + 1)
        return _splice(text, [(at, at, nl + indent + element + ",")])
    at = _line_end_after(text, last.value.end)
    return _splice(text, [(last.value.end, last.value.end, ","), (at, at, nl + indent + element)])


def _element(layout: Layout, key: str | None, value: Any, indent: str, inline: bool) -> str:
    rendered = layout.render(value, indent, inline)
    return rendered if key is None else json.dumps(key, ensure_ascii=False) + ": " + rendered


def _member_indent(text: str, container: Node) -> str | None:
    """The indentation of the container's elements that start their own line."""
    for element in reversed(container.elements):
        if _starts_line(text, element.start):
            return _line_indent(text, element.start)
    return None


def _inline(text: str, container: Node) -> bool:
    return "\n" not in text[container.start : container.end]


# -- removing -------------------------------------------------------------------------------


def _remove_element(text: str, container: Node, index: int) -> str:
    """Delete one element with its comma and line, mirroring :func:`_insert`."""
    element = container.elements[index]
    own_line = _starts_line(text, element.start) and _break_before(text, element.start) is not None
    if element.comma is not None:
        if own_line:
            start = _break_before(text, element.start)
            assert start is not None
            return _splice(text, [(start, element.comma + 1, "")])
        before = _spaces_before(text, element.start)
        if before < element.start:
            return _splice(text, [(before, element.comma + 1, "")])
        return _splice(text, [(element.start, _spaces_after(text, element.comma + 1), "")])
    start = _break_before(text, element.start) if own_line else None
    cuts = [
        (start if start is not None else _spaces_before(text, element.start), element.value.end, "")
    ]
    if index > 0:
        comma = container.elements[index - 1].comma
        assert comma is not None
        cuts.insert(0, (comma, comma + 1, ""))
    return _splice(text, cuts)


def _collapse(text: str, keys: KeyPath, source: str) -> str:
    """An object or list left with only whitespace inside becomes ``{}`` / ``[]``."""
    node = find(parse(text, source), keys)
    if node is None or node.kind == "scalar" or node.elements:
        return text
    if text[node.start + 1 : node.end - 1].strip(" \t\r\n"):
        return text
    return _splice(text, [(node.start + 1, node.end - 1, "")])


# -- text helpers ---------------------------------------------------------------------------


def _splice(text: str, cuts: Sequence[tuple[int, int, str]]) -> str:
    """Replace non-overlapping spans; insertions at one position keep their order."""
    pieces, cursor = [], 0
    for start, end, replacement in sorted(cuts, key=lambda cut: cut[0]):
        pieces += [text[cursor:start], replacement]
        cursor = end
    pieces.append(text[cursor:])
    return "".join(pieces)


def _line_start(text: str, pos: int) -> int:
    return text.rfind("\n", 0, pos) + 1


def _line_indent(text: str, pos: int) -> str:
    start = _line_start(text, pos)
    match = re.compile(r"[ \t]*").match(text, start, pos)
    return match.group() if match else ""


def _starts_line(text: str, pos: int) -> bool:
    return not text[_line_start(text, pos) : pos].strip(" \t\ufeff")


def _break_before(text: str, pos: int) -> int | None:
    """Where the line break ending the previous line begins (``\\r\\n`` counted whole)."""
    start = _line_start(text, pos)
    if start == 0:
        return None
    brk = start - 1
    return brk - 1 if brk > 0 and text[brk - 1] == "\r" else brk


def _spaces_before(text: str, pos: int) -> int:
    while pos > 0 and text[pos - 1] in " \t":
        pos -= 1
    return pos


def _spaces_after(text: str, pos: int) -> int:
    while pos < len(text) and text[pos] in " \t":
        pos += 1
    return pos


def _line_end_after(text: str, pos: int) -> int:
    """Where to start a new line after ``pos``: past comments on the same line."""
    last = pos
    while True:
        at = _spaces_after(text, pos)
        if text.startswith("//", at):
            ends = [i for i in (text.find("\r", at), text.find("\n", at)) if i >= 0]
            return min(ends) if ends else len(text)
        if text.startswith("/*", at):
            pos = last = text.index("*/", at + 2) + 2
            continue
        if at >= len(text) or text[at] in "\r\n":
            return at
        return last
