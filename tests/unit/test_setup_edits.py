"""Minimal JSON/JSONC text edits: golden results, and removal giving back the original."""

from __future__ import annotations

from typing import Any

import pytest
from thatch.plugin.errors import InvalidInputError
from thatch.plugin.jsonc import JsoncError, find, loads, parse
from thatch.setup import edits

SOURCE = "/p/settings.json"


def set_and_undo(text: str, keys: tuple[str, ...], value: Any) -> str:
    """Set ``keys``, check that removing it (and what was created) restores ``text``."""
    new, created = edits.set_value(text, keys, value, SOURCE)
    back = edits.prune(edits.remove_member(new, keys, SOURCE), created, SOURCE)
    assert back == text
    return new


def append_and_undo(text: str, keys: tuple[str, ...], item: Any) -> str:
    """Append to the list at ``keys``, check that removing the item restores ``text``."""
    new, created = edits.append_item(text, keys, item, SOURCE)
    node = find(parse(new, SOURCE), keys)
    assert node is not None
    back = edits.remove_item(new, keys, len(node.elements) - 1, SOURCE)
    assert edits.prune(back, created, SOURCE) == text
    return new


def test_member_added_to_a_pretty_file_with_comments() -> None:
    text = '{\n  // mine\n  "model": "opus", // keep this here\n  "theme": "dark"\n}\n'
    new = set_and_undo(text, ("mcp", "thatch"), {"type": "local", "enabled": True})
    assert new == (
        "{\n"
        "  // mine\n"
        '  "model": "opus", // keep this here\n'
        '  "theme": "dark",\n'
        '  "mcp": {\n'
        '    "thatch": {\n'
        '      "type": "local",\n'
        '      "enabled": true\n'
        "    }\n"
        "  }\n"
        "}\n"
    )


def test_comment_after_the_last_member_stays_on_its_line() -> None:
    text = '{\n  "a": 1 // why a is 1\n}'
    assert set_and_undo(text, ("b",), 2) == '{\n  "a": 1, // why a is 1\n  "b": 2\n}'


def test_block_comment_after_the_last_member() -> None:
    text = '{\n  "a": 1 /* one */\n}'
    assert set_and_undo(text, ("b",), 2) == '{\n  "a": 1, /* one */\n  "b": 2\n}'


def test_trailing_comma_style_is_followed() -> None:
    text = '{\n  "a": 1,\n}\n'
    assert set_and_undo(text, ("b",), [1]) == '{\n  "a": 1,\n  "b": [\n    1\n  ],\n}\n'


def test_one_line_objects_stay_on_one_line() -> None:
    assert set_and_undo('{"a": 1}', ("b",), {"c": 2}) == '{"a": 1, "b": {"c": 2}}'
    assert set_and_undo('{ "a": 1, }', ("b",), 2) == '{ "a": 1, "b": 2, }'


def test_empty_object_opens_up() -> None:
    assert set_and_undo("{}", ("a",), 1) == '{\n  "a": 1\n}'
    text = '{\n  "mcp": {}\n}\n'
    assert set_and_undo(text, ("mcp", "thatch"), {"x": 1}) == (
        '{\n  "mcp": {\n    "thatch": {\n      "x": 1\n    }\n  }\n}\n'
    )


def test_object_holding_only_a_comment_keeps_it() -> None:
    text = '{\n  "mcp": {\n    // add servers here\n  }\n}'
    assert set_and_undo(text, ("mcp", "t"), 1) == (
        '{\n  "mcp": {\n    // add servers here\n    "t": 1\n  }\n}'
    )


def test_indentation_is_detected() -> None:
    text = '{\n    "a": {\n        "b": 1\n    }\n}'
    assert set_and_undo(text, ("a", "c"), [1]) == (
        '{\n    "a": {\n        "b": 1,\n        "c": [\n            1\n        ]\n    }\n}'
    )


def test_tabs_and_crlf_are_kept() -> None:
    text = '{\r\n\t"a": 1\r\n}\r\n'
    assert set_and_undo(text, ("b",), {"c": 1}) == (
        '{\r\n\t"a": 1,\r\n\t"b": {\r\n\t\t"c": 1\r\n\t}\r\n}\r\n'
    )


def test_crlf_with_a_comment_after_the_last_member() -> None:
    text = '{\r\n  "a": 1 // note\r\n}\r\n'
    assert set_and_undo(text, ("b",), 2) == '{\r\n  "a": 1, // note\r\n  "b": 2\r\n}\r\n'


def test_minified_file_gets_compact_text() -> None:
    text = '{"a":1,"b":{}}'
    assert set_and_undo(text, ("b", "c"), [1, 2]) == '{"a":1,"b":{"c": [1, 2]}}'


def test_closing_brace_on_the_last_members_line() -> None:
    assert set_and_undo('{\n  "a": 1}', ("b",), 2) == '{\n  "a": 1,\n  "b": 2}'


def test_existing_value_is_replaced_in_place() -> None:
    text = '{\n  "a": 1, // one\n  "b": "old" // two\n}'
    new, created = edits.set_value(text, ("a",), {"x": 1}, SOURCE)
    assert created == ()
    assert new == '{\n  "a": {\n    "x": 1\n  }, // one\n  "b": "old" // two\n}'
    assert edits.replace_raw(new, ("a",), "1", SOURCE) == text


def test_unicode_is_written_as_is() -> None:
    assert set_and_undo("{}", ("name",), "café ✓") == '{\n  "name": "café ✓"\n}'


def test_created_objects_are_reported_and_pruned() -> None:
    text = '{\n  "a": 1\n}'
    new, created = edits.set_value(text, ("x", "y", "z"), 1, SOURCE)
    assert created == (("x",), ("x", "y"))
    assert loads(new, SOURCE) == {"a": 1, "x": {"y": {"z": 1}}}


def test_prune_keeps_containers_that_are_not_empty_or_hold_a_comment() -> None:
    text = '{\n  "a": {},\n  "b": {"c": 1},\n  "d": [\n    // keep me\n  ]\n}'
    assert edits.prune(text, [("b",), ("d",)], SOURCE) == text
    assert (
        edits.prune(text, [("a",)], SOURCE)
        == '{\n  "b": {"c": 1},\n  "d": [\n    // keep me\n  ]\n}'
    )


def test_item_appended_to_a_pretty_list() -> None:
    text = '{\n  "plugin": [\n    "one", // first\n    "two"\n  ]\n}\n'
    assert append_and_undo(text, ("plugin",), "three") == (
        '{\n  "plugin": [\n    "one", // first\n    "two",\n    "three"\n  ]\n}\n'
    )


def test_item_appended_to_one_line_lists() -> None:
    assert append_and_undo('{"a": ["x"]}', ("a",), "y") == '{"a": ["x", "y"]}'
    assert append_and_undo('{"a": ["x",]}', ("a",), "y") == '{"a": ["x", "y",]}'
    assert append_and_undo('{\n  "a": []\n}', ("a",), {"k": 1}) == (
        '{\n  "a": [\n    {\n      "k": 1\n    }\n  ]\n}'
    )


def test_missing_list_is_created_with_its_objects() -> None:
    text = '{\n  "version": 1\n}\n'
    new, created = edits.append_item(text, ("hooks", "stop"), {"command": "x"}, SOURCE)
    assert created == (("hooks",), ("hooks", "stop"))
    assert new == (
        '{\n  "version": 1,\n  "hooks": {\n    "stop": [\n      {\n'
        '        "command": "x"\n      }\n    ]\n  }\n}\n'
    )
    removed = edits.remove_item(new, ("hooks", "stop"), 0, SOURCE)
    assert edits.prune(removed, created, SOURCE) == text


def test_empty_or_comment_only_text_gets_an_object() -> None:
    new, created = edits.set_value("", ("a",), 1, SOURCE)
    assert new == '{\n  "a": 1\n}\n'
    assert created == ((),)
    text = "// settings go here\n"
    new = set_and_undo(text, ("a",), 1)
    assert new == '// settings go here\n{\n  "a": 1\n}\n'


def test_removing_the_middle_member_of_a_one_line_object() -> None:
    assert edits.remove_member('{"a": 1, "b": 2, "c": 3}', ("b",), SOURCE) == '{"a": 1, "c": 3}'
    assert edits.remove_member('{"b": 2, "c": 3}', ("b",), SOURCE) == '{"c": 3}'
    assert edits.remove_member('{ "b": 2, "c": 3 }', ("b",), SOURCE) == '{ "c": 3 }'


def test_removing_a_member_that_is_not_there_changes_nothing() -> None:
    text = '{"a": 1}'
    assert edits.remove_member(text, ("b",), SOURCE) == text
    assert edits.remove_member(text, ("x", "y"), SOURCE) == text
    assert edits.remove_item(text, ("a",), 0, SOURCE) == text


def test_removal_order_does_not_matter() -> None:
    text = '{\n  "l": [\n    "u"\n  ]\n}'
    one, _ = edits.append_item(text, ("l",), "x", SOURCE)
    two, _ = edits.append_item(one, ("l",), "y", SOURCE)
    first_x = edits.remove_item(edits.remove_item(two, ("l",), 1, SOURCE), ("l",), 1, SOURCE)
    first_y = edits.remove_item(edits.remove_item(two, ("l",), 2, SOURCE), ("l",), 1, SOURCE)
    assert first_x == first_y == text


def test_path_through_a_non_object_is_refused() -> None:
    with pytest.raises(InvalidInputError, match=r"'mcp' is a single value, not an object"):
        edits.set_value('{"mcp": "off"}', ("mcp", "thatch"), 1, SOURCE)
    with pytest.raises(InvalidInputError, match=r"'hooks.stop' is an object, not a list"):
        edits.append_item('{"hooks": {"stop": {}}}', ("hooks", "stop"), 1, SOURCE)
    with pytest.raises(InvalidInputError, match=r"holds a list at the top, not an object"):
        edits.set_value("[]", ("a",), 1, SOURCE)


def test_invalid_text_is_refused_with_its_place() -> None:
    with pytest.raises(JsoncError, match=r"^/p/settings.json line 2 column 10: "):
        edits.set_value('{\n  "a": 1 "b": 2\n}', ("c",), 1, SOURCE)
