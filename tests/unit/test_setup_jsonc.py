"""The JSONC reader: values, spans and errors that name the place."""

from __future__ import annotations

import json

import pytest
from thatch.plugin.errors import InvalidInputError
from thatch.plugin.jsonc import (
    JsoncError,
    Leniency,
    StrictJsonError,
    find,
    leniencies,
    loads,
    parse,
    tokens,
)


def test_plain_json_reads_like_the_json_module() -> None:
    text = '{"a": [1, 2.5, -3e2, true, false, null], "b": {"c": "d\\u00e9\\n"}, "e": {}}'
    assert loads(text, "x.json") == json.loads(text)


def test_comments_and_trailing_commas_are_allowed() -> None:
    text = """// leading
    {
      /* block
         over lines */
      "a": 1, // after a value
      "b": [1, 2, /* inside */ 3,],
    } // trailing
    """
    assert loads(text, "x.jsonc") == {"a": 1, "b": [1, 2, 3]}


def test_comment_markers_inside_strings_are_text() -> None:
    text = '{"url": "http://example.com/*x*/", "path": "a//b", "q": "say \\"hi\\" // no"}'
    assert loads(text, "x.json") == {
        "url": "http://example.com/*x*/",
        "path": "a//b",
        "q": 'say "hi" // no',
    }


def test_escaped_backslash_before_the_closing_quote() -> None:
    assert loads('{"dir": "C:\\\\", "next": 1}', "x.json") == {"dir": "C:\\", "next": 1}


def test_comment_tokens_keep_their_positions() -> None:
    text = '{"a": 1 /* one */, // two\n"b": 2}'
    comments = [text[t.start : t.end] for t in tokens(text, "x") if t.kind == "comment"]
    assert comments == ["/* one */", "// two"]


def test_line_comment_stops_before_a_crlf() -> None:
    text = '{\r\n  "a": 1 // note\r\n}\r\n'
    [comment] = [t for t in tokens(text, "x") if t.kind == "comment"]
    assert text[comment.start : comment.end] == "// note"
    assert loads(text, "x") == {"a": 1}


def test_spans_point_at_the_values() -> None:
    text = '{\n  "a": {"b": [10, "x"]},\n  "c": null\n}'
    root = parse(text, "x")
    assert root is not None
    node = find(root, ("a", "b"))
    assert node is not None
    assert text[node.start : node.end] == '[10, "x"]'
    assert [text[e.value.start : e.value.end] for e in node.elements] == ["10", '"x"']
    member = root.member("a")
    assert member is not None
    assert text[member.start : member.comma] == '"a": {"b": [10, "x"]}'
    last = root.member("c")
    assert last is not None
    assert last.comma is None


def test_trailing_comma_is_recorded() -> None:
    root = parse("[1, 2,]", "x")
    assert root is not None
    assert [e.comma for e in root.elements] == [2, 5]


def test_empty_containers() -> None:
    assert loads("{}", "x") == {}
    assert loads("[ ]", "x") == []
    assert loads('{"a": {}, "b": [], "c": {/* nothing */}}', "x") == {"a": {}, "b": [], "c": {}}


def test_repeated_key_last_one_wins() -> None:
    root = parse('{"a": 1, "a": 2}', "x")
    assert root is not None
    assert root.data == {"a": 2}
    member = root.member("a")
    assert member is not None
    assert member.value.data == 2


def test_no_value_is_none() -> None:
    assert parse("", "x") is None
    assert parse("  // only a comment\n /* and this */ ", "x") is None


def test_byte_order_mark_is_skipped() -> None:
    assert loads('\ufeff{"a": 1}', "x") == {"a": 1}


def test_find_through_a_non_object_is_none() -> None:
    root = parse('{"a": [1], "b": 2}', "x")
    assert find(root, ("a", "0")) is None
    assert find(root, ("b", "c")) is None
    assert find(root, ("missing",)) is None
    assert find(root, ()) is root


@pytest.mark.parametrize(
    ("text", "line", "column", "problem"),
    [
        ('{\n  "a": 1\n  "b": 2\n}', 3, 3, "expected ',' or '}' after member 'a'"),
        ('{"a": 1,,}', 1, 9, "expected a member name"),
        ("[1,,2]", 1, 4, "expected a value"),
        ('{"a" 1}', 1, 6, "expected ':'"),
        ('{"a": 1', 1, 1, "never closed"),
        ('{"a": "unterminated\n}', 1, 7, "string is not closed"),
        ('{"a": 1} /* open', 1, 10, "comment is not closed"),
        ('{"a": 1,', 1, 1, "this { is never closed with }"),
        ("[1, 2", 1, 1, "this [ is never closed with ]"),
        ("{a: 1}", 1, 2, "unexpected character 'a'"),
        ("{1: 1}", 1, 2, "expected a member name in double quotes"),
        ('{"a": tru}', 1, 7, "unexpected character 't'"),
        ('{"a": 1} {"b": 2}', 1, 10, "unexpected text after the top-level value"),
        ("{'a': 1}", 1, 2, "unexpected character"),
        ('{"a": "\\q"}', 1, 7, "bad string"),
        ('{"a":', 1, 6, "the file ends"),
    ],
)
def test_errors_name_file_line_and_column(text: str, line: int, column: int, problem: str) -> None:
    with pytest.raises(JsoncError) as caught:
        parse(text, "/p/.claude/settings.json")
    error = caught.value
    assert isinstance(error, InvalidInputError)
    assert (error.line, error.column) == (line, column)
    message = str(error)
    assert message.startswith(f"/p/.claude/settings.json line {line} column {column}: ")
    assert problem in message
    assert "run thatch setup again" in message


# -- what strict JSON does not allow ------------------------------------------------------
@pytest.mark.parametrize(
    ("text", "found"),
    [
        ('{"a": [1, 2], "b": {"c": null}}\n', []),
        ('{"url": "http://x//y", "glob": "/* not a comment */"}', []),
        ('{\n  // mine\n  "a": 1\n}', [Leniency("comment", 2)]),
        ('{"a": 1}\n/* a\nlong\nnote */\n', [Leniency("comment", 2)]),
        (
            '{\n  "a": [1, 2,],\n  "b": 2,\n}',
            [Leniency("trailing comma", 2), Leniency("trailing comma", 3)],
        ),
        (
            '{\n  "a": 1, // one\n  "b": [\n    2,\n  ],\n}\n',
            [
                Leniency("comment", 2),
                Leniency("trailing comma", 4),
                Leniency("trailing comma", 5),
            ],
        ),
        ("// only a comment\n", [Leniency("comment", 1)]),
        ("", []),
    ],
)
def test_leniencies_are_comments_and_trailing_commas(text: str, found: list[Leniency]) -> None:
    assert leniencies(text, "f.json") == found


def test_the_strict_refusal_names_the_file_the_lines_and_the_reader() -> None:
    text = '{\n  // mine\n  "a": [1,],\n  /* more */\n  "b": 2\n}\n'
    error = StrictJsonError("/p/.mcp.json", leniencies(text, "/p/.mcp.json"), "Claude Code")
    assert isinstance(error, InvalidInputError)
    assert str(error).startswith(
        "/p/.mcp.json has comments at lines 2 and 4 and a trailing comma at line 3; "
        "Claude Code reads this file as strict JSON and ignores it whole"
    )
    assert "remove them and run thatch setup again" in str(error)


def test_many_leniencies_are_summed_up() -> None:
    text = "{\n" + "".join(f'  // {n}\n  "k{n}": {n},\n' for n in range(7)) + '  "z": 0\n}'
    message = str(StrictJsonError("f.json", leniencies(text, "f.json"), "Claude Code"))
    assert "comments at lines 2, 4, 6, 8, 10 and more;" in message
