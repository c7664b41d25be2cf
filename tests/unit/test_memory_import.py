"""Importing memories through the API, over a real SQLite file with the word-hash embedder.

Every refusal names the file and the line, and writes nothing.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
import thatch_sqlite.plugin
from thatch.api import Thatch
from thatch.memory.transfer import EXPORT_KEYS, ParsedLines, parse_lines
from thatch.plugin.config import Config
from thatch.plugin.errors import InvalidInputError
from thatch.plugin.records import ImportResult
from thatch.testing import WordHashEmbedder, plugins_with

TOKEN = "ghp_aB3aB3aB3aB3aB3aB3aB3aB3aB3aB3aB3aB3"
PAST = datetime(2024, 5, 1, 12, 0, tzinfo=UTC)


@pytest.fixture
def th(tmp_path: Path) -> Iterator[Thatch]:
    plugins = plugins_with(thatch_sqlite.plugin, embedder=WordHashEmbedder())
    with Thatch(Config.load(tmp_path / "home", environ={}), plugins, tmp_path) as opened:
        yield opened


def lines(*rows: dict[str, Any]) -> list[str]:
    return [json.dumps(row) for row in rows]


def memory(label: str, content: str = "a fact", **more: Any) -> dict[str, Any]:
    return {"label": label, "content": content, "store": "global", **more}


def imported(th: Thatch, raw: list[str], *, overwrite: bool = False) -> ImportResult:
    return th.import_lines(ParsedLines(lambda: raw, "notes.jsonl"), overwrite=overwrite)


def counts(result: ImportResult) -> tuple[int, int, int]:
    return result.created, result.updated, result.unchanged


def refused(th: Thatch, raw: list[str], *, overwrite: bool = False) -> str:
    """The refusal's message; the import must have written nothing."""
    before = list(th.export())
    with pytest.raises(InvalidInputError) as caught:
        imported(th, raw, overwrite=overwrite)
    assert list(th.export()) == before
    return str(caught.value)


# -- labels that hold other content ------------------------------------------------


def test_a_line_whose_label_holds_other_content_is_refused_without_overwrite(th: Thatch) -> None:
    th.remember("tabs", "indent with tabs", store="global")
    th.remember("ci", "ci on buildkite", store="global")
    raw = lines(memory("new"), memory("tabs", "indent with spaces"), memory("ci", "ci on jenkins"))

    message = refused(th, raw)

    assert message.startswith("notes.jsonl: 2 lines would replace")
    assert "line 2 'tabs' in global" in message
    assert "line 3 'ci' in global" in message
    assert "--overwrite" in message
    assert th.show("tabs").content == "indent with tabs"
    with pytest.raises(Exception, match="no memory labelled 'new'"):
        th.show("new")


def test_a_refusal_names_the_first_conflicts_and_counts_the_rest(th: Thatch) -> None:
    for number in range(12):
        th.remember(f"fact-{number}", f"stored fact number {number}", store="global")
    raw = lines(*(memory(f"fact-{number}", f"other fact {number}") for number in range(12)))

    message = refused(th, raw)

    assert message.startswith("notes.jsonl: 12 lines would replace")
    assert "line 10 'fact-9' in global" in message
    assert "fact-10" not in message
    assert "and 2 more" in message


def test_overwrite_replaces_them(th: Thatch) -> None:
    th.remember("tabs", "indent with tabs", store="global")
    result = imported(th, lines(memory("tabs", "indent with spaces")), overwrite=True)
    assert counts(result) == (0, 1, 0)
    assert th.show("tabs").content == "indent with spaces"


def test_the_same_content_is_unchanged_and_a_second_import_adds_nothing(th: Thatch) -> None:
    raw = lines(memory("a", "alpha fact"), memory("b", "beta fact", store="acme/web"))
    assert counts(imported(th, raw)) == (2, 0, 0)
    assert counts(imported(th, raw)) == (0, 0, 2)


def test_a_redacted_line_imported_again_is_unchanged(th: Thatch) -> None:
    # What is stored is the redacted text: a line is compared as it would be stored.
    raw = lines(memory("bot", f"the bot token is {TOKEN}"))
    assert imported(th, raw).redactions == 1
    assert counts(imported(th, raw)) == (0, 0, 1)


def test_an_archived_memory_with_other_content_is_refused_even_with_overwrite(
    th: Thatch,
) -> None:
    th.remember("ci", "ci on buildkite", store="global")
    th.archive("ci", "global")
    message = refused(th, lines(memory("x"), memory("ci", "ci on jenkins")), overwrite=True)
    assert message.startswith("notes.jsonl line 2: memory 'ci' in store 'global' is archived")
    assert "thatch unarchive ci global" in message


# -- a file that contradicts itself -------------------------------------------------


def test_two_different_lines_for_one_label_are_refused_naming_both(th: Thatch) -> None:
    raw = [json.dumps(memory("d", "one")), "", json.dumps(memory("d", "two"))]
    message = refused(th, raw)
    assert "notes.jsonl lines 1 and 3 both give memory 'd' in store global" in message


def test_a_repeated_line_counts_once(th: Thatch) -> None:
    raw = lines(memory("d", "same"), memory("d", "same"))
    assert counts(imported(th, raw)) == (1, 0, 1)
    assert th.show("d").content == "same"


def test_the_same_label_in_two_stores_is_two_memories(th: Thatch) -> None:
    raw = lines(memory("d", "one"), memory("d", "two", store="acme/web"))
    assert counts(imported(th, raw)) == (2, 0, 0)


# -- times ------------------------------------------------------------------------


def test_an_export_imported_elsewhere_keeps_its_times(th: Thatch, tmp_path: Path) -> None:
    raw = lines(memory("old", created_at=PAST.isoformat(), updated_at="2024-06-01T00:00:00Z"))
    imported(th, raw)
    exported = list(th.export())
    plugins = plugins_with(thatch_sqlite.plugin, embedder=WordHashEmbedder())
    with Thatch(Config.load(tmp_path / "other", environ={}), plugins, tmp_path) as other:
        assert counts(imported(other, exported)) == (1, 0, 0)
        moved = other.show("old")
    assert moved.created_at == PAST
    assert moved.updated_at == datetime(2024, 6, 1, tzinfo=UTC)
    assert list(th.export()) == exported


def test_absent_times_are_the_time_of_the_import(th: Thatch) -> None:
    before = datetime.now(UTC)
    imported(th, lines(memory("now"), memory("changed", updated_at=PAST.isoformat())))
    fresh = th.show("now")
    assert fresh.created_at >= before - timedelta(seconds=1)
    # Changed in the past: made then at the latest.
    assert (th.show("changed").created_at, th.show("changed").updated_at) == (PAST, PAST)


@pytest.mark.parametrize(
    ("fields", "fragment"),
    [
        ({"created_at": "yesterday"}, '"created_at" "yesterday" is not a time'),
        ({"updated_at": 1700000000}, '"updated_at" 1700000000 is not a time'),
        ({"created_at": "2024-05-01T12:00:00"}, "has no time zone offset"),
        ({"created_at": "2999-01-01T00:00:00Z"}, "is in the future"),
        (
            {"created_at": "2024-05-02T00:00:00Z", "updated_at": "2024-05-01T00:00:00Z"},
            '"updated_at" 2024-05-01T00:00:00Z is before "created_at"',
        ),
    ],
)
def test_a_bad_time_is_refused_naming_file_and_line(
    th: Thatch, fields: dict[str, Any], fragment: str
) -> None:
    message = refused(th, lines(memory("fine"), memory("bad", **fields)))
    assert message.startswith("notes.jsonl line 2: ")
    assert fragment in message


def test_a_time_a_little_ahead_is_another_clock_and_taken() -> None:
    now = datetime(2025, 1, 1, tzinfo=UTC)
    ahead = (now + timedelta(minutes=2)).isoformat()
    [line] = parse_lines(lines(memory("x", created_at=ahead)), "f", now=now)
    assert line.memory.created_at == now + timedelta(minutes=2)


# -- fields -------------------------------------------------------------------------


@pytest.mark.parametrize("value", ["yes", 1, 0, "true"])
def test_archived_must_be_a_boolean(th: Thatch, value: Any) -> None:
    message = refused(th, lines(memory("a", archived=value)))
    assert message == (
        f'notes.jsonl line 1: "archived" must be true or false, not {json.dumps(value)}'
    )


def test_an_unknown_key_is_refused_naming_it_and_the_known_keys(th: Thatch) -> None:
    message = refused(th, lines(memory("a", brnach="main")))
    assert message.startswith('notes.jsonl line 1: unknown key "brnach"; did you mean "branch"?')
    assert ", ".join(EXPORT_KEYS) in message


def test_every_key_of_an_export_is_taken(th: Thatch) -> None:
    th.remember("a", "alpha fact", store="global", branch="main")
    [line] = th.export()
    assert set(json.loads(line)) == set(EXPORT_KEYS)
    th.forget("a", "global")
    assert counts(imported(th, [line])) == (1, 0, 0)


def test_re_archiving_a_memory_the_user_unarchived_is_an_update(th: Thatch) -> None:
    raw = lines(memory("b", "beta fact", archived=True))
    assert counts(imported(th, raw)) == (1, 0, 0)
    assert th.show("b").archived
    th.unarchive("b", "global")
    assert counts(imported(th, raw)) == (0, 1, 0)
    assert th.show("b").archived
    assert counts(imported(th, raw)) == (0, 0, 1)


@pytest.mark.parametrize(
    ("row", "fragment"),
    [
        (memory("empty", "   "), "content of memory 'empty' is empty"),
        (memory("long", "x" * 20_001), "content of memory 'long' has 20001 characters"),
        (memory(TOKEN), "label '[REDACTED:github-token]' looks like it holds a secret"),
        (memory("b", branch=TOKEN), "branch '[REDACTED:github-token]' looks like it holds"),
        (memory("b", branch="a..b"), "branch 'a..b' is not a valid branch name"),
        (memory("../x"), "label '../x' looks like a path"),
    ],
)
def test_every_bad_line_names_the_file_and_line(
    th: Thatch, row: dict[str, Any], fragment: str
) -> None:
    message = refused(th, lines(memory("fine"), row))
    assert message.startswith("notes.jsonl line 2: ")
    assert fragment in message
    assert TOKEN not in message


def test_a_git_branch_name_of_any_form_git_takes_is_imported(th: Thatch) -> None:
    raw = lines(*(memory(f"m{n}", branch=b) for n, b in enumerate(["fix#123", "a=b", "feat/ü"])))
    assert counts(imported(th, raw)) == (3, 0, 0)
    assert th.show("m2").branch == "feat/ü"


def test_an_iterator_of_lines_is_checked_and_written(th: Thatch) -> None:
    parsed = parse_lines(lines(memory("a"), memory("b")), "f")
    assert counts(th.import_lines(parsed)) == (2, 0, 0)
