"""Hostile input through the real command line: bad bytes, huge numbers, bad paths, big files.

Each is refused with one clear line (exit 2) that changes nothing, or taken
with its bad characters made U+FFFD; never a traceback.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from thatch.testing import tree

from integration.conftest import THATCH, Runner, as_json

#: What Python hands the program for the argv byte 0xff: a lone surrogate.
BAD = os.fsdecode(b"\xff")
#: An import line for the store ``global``.
LINE = '{{"label": "{label}", "content": "{content}", "store": "global"}}\n'


def run_bytes(
    home: Path, *args: str, stdin: bytes, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[bytes]:
    """``thatch ARGS`` with raw bytes on stdin (the text runner cannot send undecodable ones)."""
    return subprocess.run(
        [str(THATCH), *args],
        input=stdin,
        capture_output=True,
        env={**os.environ, "THATCH_HOME": str(home), **(env or {})},
        timeout=300,
        check=False,
    )


def refused(completed: subprocess.CompletedProcess[str], *fragments: str) -> None:
    """Exit 2 with every fragment on stderr and no traceback."""
    assert completed.returncode == 2, completed
    assert "Traceback" not in completed.stderr
    for fragment in fragments:
        assert fragment in completed.stderr, completed.stderr


# -- undecodable bytes and lone surrogates ------------------------------------------------
def test_undecodable_bytes_in_arguments_become_replacement_characters(thatch: Runner) -> None:
    thatch("remember", f"deploy{BAD}", f"Deploys {BAD} go through staging", "--store", "global")
    shown = as_json(thatch("show", "deploy\ufffd", "global", "--json"))
    assert shown["content"] == "Deploys \ufffd go through staging"
    found = as_json(thatch("search", f"how do deploys {BAD} go", "--json"))
    assert [hit["label"] for hit in found] == ["deploy\ufffd"]
    thatch(
        "predictions", "update", "--matcher", f"reviewing {BAD} a PR",
        "--prediction", f"asks {BAD} for tests", "--signal", "create", "--store", "global",
    )  # fmt: skip
    listed = as_json(thatch("predictions", "list", "--json"))
    assert [p["statement"] for p in listed] == ["asks \ufffd for tests"]


@pytest.mark.parametrize("io_encoding", [None, "utf-8:strict"])
def test_undecodable_bytes_on_stdin_become_replacement_characters(
    home: Path, io_encoding: str | None
) -> None:
    env = {"PYTHONIOENCODING": io_encoding} if io_encoding else {}
    saved = run_bytes(
        home, "remember", "notes", "-", "--store", "global", stdin=b"a \xff b", env=env
    )
    assert saved.returncode == 0, saved.stderr.decode(errors="replace")
    shown = run_bytes(home, "show", "notes", "global", "--json", stdin=b"")
    assert json.loads(shown.stdout)["content"] == "a \ufffd b"

    queries = b'what \xff notes\n{"query": "a \\ud800 b", "store": "global"}\n'
    answered = run_bytes(home, "search", "-", "--json", stdin=queries, env=env)
    assert answered.returncode == 0, answered.stderr.decode(errors="replace")
    replies = [json.loads(line) for line in answered.stdout.splitlines()]
    assert [reply["query"] for reply in replies] == ["what \ufffd notes", "a \ufffd b"]
    assert replies[1]["results"][0]["label"] == "notes"


def test_import_takes_lone_surrogate_escapes_and_a_non_utf8_file_name(
    thatch: Runner, tmp_path: Path
) -> None:
    source = Path(os.fsdecode(bytes(tmp_path) + b"/caf\xe9.jsonl"))
    source.write_text(LINE.format(label="odd", content="half a pair \\ud83c here"))
    thatch("import", str(source))
    assert as_json(thatch("show", "odd", "global", "--json"))["content"] == (
        "half a pair \ufffd here"
    )


def test_an_import_file_starting_with_a_byte_order_mark_is_read(
    thatch: Runner, tmp_path: Path
) -> None:
    source = tmp_path / "from-windows.jsonl"
    source.write_bytes(b"\xef\xbb\xbf" + LINE.format(label="bom", content="after a BOM").encode())
    thatch("import", str(source))
    assert as_json(thatch("show", "bom", "global", "--json"))["content"] == "after a BOM"


def test_import_of_undecodable_bytes_names_the_line_and_changes_nothing(home: Path) -> None:
    text = LINE.format(label="fine", content="ok") + LINE.format(label="bad", content="x")
    data = text.encode().replace(b'"x"', b'"\xff"')
    completed = run_bytes(home, "import", "-", stdin=data)
    assert completed.returncode == 2
    stderr = completed.stderr.decode()
    assert "stdin line 2 is not UTF-8 text" in stderr
    assert "Traceback" not in stderr
    listed = run_bytes(home, "list", "all", "--json", stdin=b"")
    assert json.loads(listed.stdout) == []


# -- numbers and paths ------------------------------------------------------------------
NUMBER_CASES = [
    *((("search", "x", "--limit", value), "--limit") for value in ("1e20", "inf", "nan", "-1")),
    (("search", "x", "--limit", str(10**30)), "--limit"),
    (("search", "x", "--min-cosine", "nan"), "--min-cosine"),
    (("search", "x", "--min-cosine", "inf"), "--min-cosine"),
    (("search", "x", "--min-cosine", "2"), "--min-cosine"),
    (("hygiene", "--days", "1e12"), "--days"),
    (("hygiene", "--days", str(10**12)), "--days"),
    (("predictions", "query", "x", "--limit", str(10**30)), "--limit"),
    (("predictions", "show", str(10**30)), "id"),
    (("predictions", "delete", "0"), "id"),
]


def test_huge_and_non_finite_numbers_are_refused_and_change_nothing(
    thatch: Runner, home: Path
) -> None:
    thatch("remember", "tabs", "The user indents with tabs", "--store", "global")
    before = tree(home)
    for args, option in NUMBER_CASES:
        completed = thatch(*args, check=False)
        refused(completed, f"argument {option}:", "give")
    stdin_limit = json.dumps({"query": "tabs", "limit": 10**30})
    answered = thatch("search", "-", input=stdin_limit + "\n", check=False)
    assert answered.returncode == 1
    assert "Traceback" not in answered.stderr
    assert "must be a whole number from 1 to" in json.loads(answered.stdout)["error"]
    assert tree(home) == before


def test_an_unwritable_plot_path_is_refused_and_changes_nothing(
    thatch: Runner, home: Path, tmp_path: Path
) -> None:
    folder = tmp_path / "folder.png"
    folder.mkdir()
    missing = tmp_path / "missing" / "calib.png"
    thatch("predictions", "list")
    before = tree(home)
    for plot, fragment in [
        ("/proc/x.png", "cannot write"),
        (str(folder), "is a folder"),
        (str(missing), "does not exist"),
        (str(tmp_path / "calib.jpg"), "does not end in .png"),
    ]:
        completed = thatch("predictions", "calibration", "--plot", plot, check=False)
        refused(completed, "--plot", fragment)
    assert not missing.parent.exists()
    assert tree(home) == before


# -- store names ------------------------------------------------------------------------
def test_reserved_and_one_part_store_names_are_refused(thatch: Runner, tmp_path: Path) -> None:
    for store, fragment in (("all", "reserved"), ("solo", "'owner/name'")):
        refused(thatch("remember", "x", "y", "--store", store, check=False), fragment)
        refused(thatch("show", "x", store, check=False), fragment)
    source = tmp_path / "all.jsonl"
    source.write_text('{"label": "x", "content": "y", "store": "all"}\n')
    refused(thatch("import", str(source), check=False), "line 1", "reserved")
    assert as_json(thatch("list", "all", "--json")) == []


# -- results on stdout ------------------------------------------------------------------
def test_results_go_to_stdout_and_notes_to_stderr(thatch: Runner, tmp_path: Path) -> None:
    saved = thatch("remember", "tabs", "The user indents with tabs", "--store", "global")
    assert "created memory 'tabs' in global" in saved.stdout
    assert saved.stderr == ""
    warned = thatch("remember", "indent", "The user indents with tabs", "--store", "global")
    assert "created memory 'indent'" in warned.stdout
    assert "similar to 'tabs'" in warned.stderr
    updated = thatch(
        "predictions", "update", "--matcher", "reviewing a PR",
        "--prediction", "asks for tests", "--signal", "create", "--store", "global",
    )  # fmt: skip
    assert updated.stdout.startswith("created: prediction ")
    deleted = thatch("predictions", "delete", "1")
    assert deleted.stdout.startswith("deleted prediction 1 ")
    assert "forgot 'indent' in global" in thatch("forget", "indent", "global").stdout
    assert "archived 'tabs' in global" in thatch("archive", "tabs", "global").stdout
    source = tmp_path / "one.jsonl"
    source.write_text(LINE.format(label="db", content="Uses PostgreSQL"))
    assert "imported 1 lines: 1 created" in thatch("import", str(source)).stdout


# -- big files --------------------------------------------------------------------------
#: Runs a command and prints the peak resident size of its process tree, in KiB.
PEAK_RSS = (
    "import resource, subprocess, sys\n"
    "done = subprocess.run(sys.argv[1:], capture_output=True, text=True)\n"
    "print(done.returncode, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)\n"
    "sys.stderr.write(done.stderr)\n"
)


def _import_peak_kib(home: Path, source: Path) -> tuple[int, int, str]:
    completed = subprocess.run(
        [sys.executable, "-c", PEAK_RSS, str(THATCH), "import", str(source)],
        capture_output=True,
        text=True,
        env={**os.environ, "THATCH_HOME": str(home)},
        timeout=600,
        check=True,
    )
    status, peak = completed.stdout.split()
    return int(status), int(peak), completed.stderr


def test_import_reads_a_big_file_in_bounded_memory(home: Path, tmp_path: Path) -> None:
    # The last line is bad, so the whole file is read and checked, and nothing is written.
    content = "Fact: the service logs every request to the audit table. " * 17  # ~1 kB
    bad_end = '{"label": "last", "store": "global"}\n'
    small, big = tmp_path / "small.jsonl", tmp_path / "big.jsonl"
    for path, count in ((small, 100), (big, 50_000)):
        with path.open("w") as handle:
            for n in range(count):
                handle.write(LINE.format(label=f"fact-{n}", content=content))
            handle.write(bad_end)
    assert big.stat().st_size > 50_000_000

    small_status, small_peak, _ = _import_peak_kib(home, small)
    big_status, big_peak, stderr = _import_peak_kib(home, big)
    assert (small_status, big_status) == (2, 2)
    assert f'{big} line 50001 has no "content" text' in stderr
    # Reading the file whole took three times its size; streaming takes a line.
    assert big_peak - small_peak < 20_000, (small_peak, big_peak)


def test_import_from_stdin_still_checks_every_line_first(thatch: Runner) -> None:
    lines = LINE.format(label="a", content="first fact") + LINE.format(label="b", content="x")
    imported = thatch("import", "-", "--json", input=lines)
    assert [json.loads(line).get("saved") for line in imported.stdout.splitlines()] == [
        "a",
        "b",
        None,
    ]
    bad = LINE.format(label="c", content="third fact") + "{not json\n"
    refused(thatch("import", "-", input=bad, check=False), "stdin line 2 is not JSON")
    assert {m["label"] for m in as_json(thatch("list", "all", "--json"))} == {"a", "b"}
