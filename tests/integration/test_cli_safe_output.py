"""Stored escape sequences never reach the terminal through the real command line."""

from __future__ import annotations

import json
import re
from pathlib import Path

from integration.conftest import Runner, as_json

#: Retitles the terminal, clears it, then a C1 CSI (U+009B) turns text red.
CONTENT = "Deploys \x1b]0;pwned\x07 go \x9b31m through staging\x1b[2J first\nsecond\tline"
#: Raw controls a terminal acts on: C0 but newline and tab, DEL, C1.
RAW_CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f]")


def test_show_list_and_search_print_controls_visibly(thatch: Runner) -> None:
    thatch("remember", "deploys", "-", "--store", "global", input=CONTENT)
    printed = {
        "show": thatch("show", "deploys", "global"),
        "list": thatch("list", "global"),
        "search": thatch("search", "how do deploys go through staging"),
    }
    for command, completed in printed.items():
        for stream in (completed.stdout, completed.stderr):
            assert not RAW_CONTROL.search(stream), (command, stream)
        assert "\\x1b]0;pwned\\x07" in completed.stdout, command
        assert "\\u009b31m" in completed.stdout, command
    shown = printed["show"].stdout
    assert "\\x1b[2J" in shown
    assert shown.endswith("first\nsecond\tline\n")  # newline and tab kept


def test_json_keeps_the_content_exact(thatch: Runner) -> None:
    thatch("remember", "deploys", "-", "--store", "global", input=CONTENT)
    outputs = [
        thatch("show", "deploys", "global", "--json"),
        thatch("list", "global", "--json"),
        thatch("search", "how do deploys go through staging", "--json"),
    ]
    for completed in outputs:
        assert not RAW_CONTROL.search(completed.stdout)
    shown, (listed,), (found,) = (as_json(completed) for completed in outputs)
    assert shown["content"] == listed["content"] == found["content"] == CONTENT


def test_batch_search_and_export_print_no_raw_control_and_keep_the_data(
    thatch: Runner, tmp_path: Path
) -> None:
    thatch("remember", "deploys", "-", "--store", "global", input=CONTENT)
    batch = thatch("search", "-", input='{"query": "how do deploys go through staging"}\n')
    exported = thatch("export")
    for completed in (batch, exported):
        assert not RAW_CONTROL.search(completed.stdout)
    (answer,) = [json.loads(line) for line in batch.stdout.splitlines()]
    assert answer["results"][0]["content"] == CONTENT
    # An export read back is the same memory, controls and all.
    dump = tmp_path / "export.jsonl"
    dump.write_text(exported.stdout)
    thatch("forget", "deploys", "global")
    thatch("import", str(dump))
    assert as_json(thatch("show", "deploys", "global", "--json"))["content"] == CONTENT
