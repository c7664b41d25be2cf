"""The command line's shared input checks, and the MCP tools that meet the same limits."""

from __future__ import annotations

import argparse
import io
import os
from collections.abc import Iterator
from pathlib import Path

import pytest
import thatch_sqlite.plugin
from thatch.cli.inputs import (
    MAX_LINE_BYTES,
    ImportSource,
    batches,
    finite_number,
    open_import_file,
    whole_number,
)
from thatch.plugin.config import Config
from thatch.plugin.errors import InvalidInputError
from thatch.runtime import Runtime
from thatch.testing import plugins_with
from thatch.tools import ToolContext, ToolRegistry


@pytest.mark.parametrize("text", ["0", "1001", "-1", "1e20", "inf", "nan", "10" * 40, "", "2.5"])
def test_whole_numbers_out_of_range_or_not_whole_are_refused_with_the_range(text: str) -> None:
    with pytest.raises(argparse.ArgumentTypeError, match="give a whole number from 1 to 1000"):
        whole_number(1, 1000)(text)


def test_whole_numbers_in_range_are_taken() -> None:
    assert [whole_number(1, 1000)(text) for text in ("1", " 7 ", "1000")] == [1, 7, 1000]


@pytest.mark.parametrize("text", ["nan", "inf", "-inf", "1.5", "-2", "x", "1e400"])
def test_numbers_must_be_finite_and_in_range(text: str) -> None:
    with pytest.raises(argparse.ArgumentTypeError, match="give a number from -1 to 1"):
        finite_number(-1, 1)(text)
    assert finite_number(-1, 1)("0.25") == 0.25


def test_batches_are_taken_only_as_they_are_needed() -> None:
    pulled: list[int] = []

    def items() -> Iterator[int]:
        for n in range(7):
            pulled.append(n)
            yield n

    stream = batches(items(), 3)
    assert next(stream) == [0, 1, 2]
    assert pulled == [0, 1, 2]
    assert list(stream) == [[3, 4, 5], [6]]


def test_a_pipe_is_copied_so_its_lines_can_be_read_twice(monkeypatch: pytest.MonkeyPatch) -> None:
    reader, writer = os.pipe()
    os.write(writer, b'{"a": 1}\n\xe2\x80\xa8 line two\n')
    os.close(writer)
    with open(reader, "rb") as pipe:
        monkeypatch.setattr("sys.stdin", io.TextIOWrapper(pipe))
        with open_import_file("-") as source:
            first, second = list(source.lines()), list(source.lines())
    # Only "\n" ends a line: a raw U+2028 in a JSON string stays inside it.
    assert first == second == ['{"a": 1}\n', "\u2028 line two\n"]
    assert source.name == "stdin"


def test_a_line_over_the_limit_is_named(tmp_path: Path) -> None:
    big = tmp_path / "big.jsonl"
    big.write_bytes(b"{}\n" + b"x" * (MAX_LINE_BYTES + 5) + b"\n")
    with big.open("rb") as handle, pytest.raises(InvalidInputError, match="line 2 is over 1024"):
        list(ImportSource(str(big), handle).lines())


def test_a_folder_or_missing_file_is_named(tmp_path: Path) -> None:
    for file, words in ((tmp_path, "is a folder"), (tmp_path / "none.jsonl", "does not exist")):
        with pytest.raises(InvalidInputError, match=words), open_import_file(str(file)):
            pass


# -- the MCP tools meet the same store names and day limits --------------------------------
@pytest.fixture
def tools(tmp_path: Path) -> Iterator[tuple[ToolRegistry, ToolContext]]:
    app = Runtime(Config.load(tmp_path / "home", environ={}), plugins_with(thatch_sqlite.plugin))
    outside = tmp_path / "outside-git"
    outside.mkdir()
    yield ToolRegistry(), ToolContext(app, app.project(str(outside)))
    app.close()


def test_tools_refuse_reserved_store_names_and_huge_day_counts(
    tools: tuple[ToolRegistry, ToolContext],
) -> None:
    registry, ctx = tools
    for store, words in (("all", "is reserved"), ("solo", "has no owner part")):
        arguments = {"label": "x", "content": "y", "store": store}
        outcome = registry.call("memory_remember", arguments, ctx)
        assert outcome.is_error
        assert words in outcome.text
    saved = {"label": "x", "content": "deploy with make ship", "store": "global"}
    assert not registry.call("memory_remember", saved, ctx).is_error
    outcome = registry.call("hygiene_report", {"days": 10**12}, ctx)
    assert outcome.is_error
    assert "from 1 to 36500" in outcome.text
