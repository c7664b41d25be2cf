"""Marker-delimited blocks in Markdown files."""

from __future__ import annotations

import pytest
from thatch.plugin import blocks
from thatch.plugin.errors import InvalidInputError

SOURCE = "/p/CLAUDE.md"
BLOCK = "<!-- thatch:begin memory -->\nUse thatch.\n<!-- thatch:end memory -->\n"


@pytest.mark.parametrize(
    ("before", "separator"),
    [
        ("# Notes\n\nBe brief.\n", "\n"),
        ("# Notes\n\nBe brief.", "\n\n"),
        ("# Notes\n\n", ""),
        ("", ""),
    ],
)
def test_block_goes_at_the_end_after_a_blank_line(before: str, separator: str) -> None:
    after, added = blocks.put(before, "memory", "Use thatch.", SOURCE)
    assert added == separator
    assert after == before + separator + BLOCK
    assert blocks.remove(after, "memory", added, SOURCE) == before


def test_missing_file_gets_just_the_block() -> None:
    assert blocks.put(None, "memory", "Use thatch.\n", SOURCE) == (BLOCK, "")


def test_existing_block_is_replaced_in_place() -> None:
    text = "# A\n\n" + BLOCK + "\n# B, written later\n"
    after, added = blocks.put(text, "memory", "Use thatch.\nRecall first.", SOURCE)
    assert added == ""
    assert after == (
        "# A\n\n<!-- thatch:begin memory -->\nUse thatch.\nRecall first.\n"
        "<!-- thatch:end memory -->\n\n# B, written later\n"
    )
    assert blocks.put(after, "memory", "Use thatch.\nRecall first.", SOURCE) == (after, "")


def test_removing_a_block_in_the_middle_keeps_the_text_around_it() -> None:
    text = "# A\n\n" + BLOCK + "\n# B\n"
    assert blocks.remove(text, "memory", "\n", SOURCE) == "# A\n\n\n# B\n"


def test_other_blocks_are_separate() -> None:
    text, _ = blocks.put("", "one", "1", SOURCE)
    text, added = blocks.put(text, "two", "2", SOURCE)
    assert blocks.find(text, "one", SOURCE) == (0, len(blocks.render("one", "1")))
    assert blocks.remove(text, "two", added, SOURCE) == blocks.render("one", "1")


def test_crlf_files_get_crlf_blocks() -> None:
    before = "# Notes\r\n"
    after, added = blocks.put(before, "memory", "a\nb", SOURCE)
    assert after == (
        "# Notes\r\n\r\n<!-- thatch:begin memory -->\r\na\r\nb\r\n<!-- thatch:end memory -->\r\n"
    )
    assert blocks.remove(after, "memory", added, SOURCE) == before


def test_begin_without_end_is_refused() -> None:
    with pytest.raises(InvalidInputError, match=r"^/p/CLAUDE.md has the line .* but no"):
        blocks.put("<!-- thatch:begin memory -->\ntext\n", "memory", "x", SOURCE)


def test_markers_are_matched_as_whole_lines() -> None:
    text = "see `<!-- thatch:begin memory -->` in the docs\n"
    assert blocks.find(text, "memory", SOURCE) is None
