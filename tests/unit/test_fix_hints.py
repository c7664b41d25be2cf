"""The commands error messages suggest are commands the real parser takes, doing what they say."""

from __future__ import annotations

import re
import shlex
from collections.abc import Iterator
from pathlib import Path

import pytest
import thatch_sqlite.plugin
from thatch.api import Thatch
from thatch.cli import maintenance_commands, memory_commands
from thatch.cli.parser import build_parser
from thatch.memory.transfer import ParsedLines
from thatch.plugin.config import Config
from thatch.plugin.errors import ThatchError
from thatch.testing import WordHashEmbedder, plugins_with

#: A suggested command: from "thatch " to the end, or to where the sentence goes on.
_COMMAND = re.compile(r"(thatch .*?)(?:, or |; |$)")


@pytest.fixture
def th(tmp_path: Path) -> Iterator[Thatch]:
    plugins = plugins_with(thatch_sqlite.plugin, embedder=WordHashEmbedder())
    with Thatch(Config.load(tmp_path / "home", environ={}), plugins, tmp_path) as opened:
        yield opened


def suggested(error: ThatchError) -> list[str]:
    """The words of the command ``error`` suggests, parsed as a shell would."""
    found = _COMMAND.search(str(error))
    assert found, f"no command in: {error}"
    words = shlex.split(found.group(1))
    assert words[0] == "thatch"
    return words[1:]


def test_the_archived_memory_hint_unarchives_it(th: Thatch) -> None:
    th.remember("web fact", "the site runs on vite", store="acme/web")
    th.archive("web fact", "acme/web")
    with pytest.raises(ThatchError) as caught:
        th.remember("web fact", "the site runs on webpack", store="acme/web", overwrite=True)

    args = build_parser().parse_args(suggested(caught.value))

    assert args.run is memory_commands.unarchive
    assert (args.label, args.store) == ("web fact", "acme/web")
    th.unarchive(args.label, args.store)  # and it does what the hint says
    assert not th.show("web fact", "acme/web").archived


def test_the_archived_line_hint_of_an_import_unarchives_it(th: Thatch) -> None:
    th.remember("ci", "ci on buildkite", store="global")
    th.archive("ci", "global")
    raw = ['{"label": "ci", "content": "ci on jenkins", "store": "global"}']
    with pytest.raises(ThatchError) as caught:
        th.import_lines(ParsedLines(lambda: raw, "f.jsonl"), overwrite=True)
    args = build_parser().parse_args(suggested(caught.value))
    assert args.run is memory_commands.unarchive
    assert (args.label, args.store) == ("ci", "global")


@pytest.mark.parametrize("verdict", ["different", "same"])
def test_the_two_stores_hint_of_mark_reviewed_names_a_store(
    tmp_path: Path, th: Thatch, verdict: str
) -> None:
    th.remember("pw", "passwords live in the vault", store="global")
    th.remember("tabs", "indent with tabs", store="global")
    th.remember("tabs", "indent web code with tabs", store="acme/web")
    # A view whose repository store is acme/web: 'tabs' is found there first.
    view = th.view(tmp_path)
    view.__dict__["repo_store"] = "acme/web"
    with pytest.raises(ThatchError, match="duplicate pairs are within one store") as caught:
        view.mark_reviewed("pw", "tabs", verdict=verdict)  # type: ignore[arg-type]

    args = build_parser().parse_args(suggested(caught.value))

    assert args.run is maintenance_commands.duplicates
    assert args.mark_reviewed == ["pw", "tabs"]
    assert args.verdict == verdict
    # The store it names holds both: the pair can be marked there.
    assert view.mark_reviewed("pw", "tabs", args.store, args.verdict) == args.store == "global"


def test_the_unquoted_query_hint_searches_the_whole_query(th: Thatch) -> None:
    with pytest.raises(ThatchError) as caught:
        memory_commands._refuse_query_word_as_store(th, "staging's", "database")
    args = build_parser().parse_args(suggested(caught.value))
    assert args.run is memory_commands.search
    assert (args.query, args.store) == ("staging's database", None)


def test_the_missing_memory_hint_lists_every_label(th: Thatch) -> None:
    with pytest.raises(ThatchError) as caught:
        th.show("nothing")
    words = shlex.split(re.search(r"'(thatch [^']*)'", str(caught.value)).group(1))  # type: ignore[union-attr]
    args = build_parser().parse_args(words[1:])
    assert (args.run, args.store) == (memory_commands.list_memories, "all")
