"""Nothing saved is lost: concurrent writers and a killed import."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from integration.conftest import THATCH, Runner, as_json

WRITERS = 8
PER_WRITER = 200

WRITER_SCRIPT = textwrap.dedent(
    """
    import sys, thatch
    writer = int(sys.argv[1])
    count = int(sys.argv[2])
    with thatch.open() as th:
        for n in range(count):
            th.remember(f"w{writer}-m{n}", f"Writer {writer} noted fact number {n}: "
                        f"module {n % 17} depends on service {writer * 1000 + n}.",
                        store="global")
    print("done", writer)
    """
)


def _integrity(home: Path) -> list[str]:
    import thatch

    with thatch.open(home) as th:
        return th.integrity_problems()


@pytest.mark.slow
def test_eight_processes_writing_at_once_lose_nothing(home: Path) -> None:
    writers = [
        subprocess.Popen(
            [sys.executable, "-c", WRITER_SCRIPT, str(n), str(PER_WRITER)],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env={**os.environ, "THATCH_HOME": str(home)},
        )
        for n in range(WRITERS)
    ]
    for writer in writers:
        out, err = writer.communicate(timeout=600)
        assert writer.returncode == 0, err
        assert out.startswith("done")

    import thatch

    with thatch.open(home) as th:
        labels = {memory.label for memory in th.list("global")}
        assert th.integrity_problems() == []
    expected = {f"w{w}-m{n}" for w in range(WRITERS) for n in range(PER_WRITER)}
    assert labels == expected


@pytest.mark.slow
def test_kill_during_import_keeps_every_reported_memory(home: Path, tmp_path: Path) -> None:
    source = tmp_path / "big.jsonl"
    lines = [
        json.dumps(
            {
                "label": f"fact-{n}",
                "content": f"Fact {n}: the service on port {8000 + n} logs to /var/log/s{n}.log",
                "store": "global",
            }
        )
        for n in range(3000)
    ]
    source.write_text("\n".join(lines) + "\n")
    importer = subprocess.Popen(
        [str(THATCH), "import", str(source), "--json"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "THATCH_HOME": str(home)},
    )
    assert importer.stdout is not None
    reported: list[str] = []
    deadline = time.monotonic() + 300
    while len(reported) < 300 and time.monotonic() < deadline:
        line = importer.stdout.readline()
        if not line:
            break
        reported.append(json.loads(line)["saved"])
    os.kill(importer.pid, signal.SIGKILL)
    importer.wait(timeout=30)
    importer.stdout.close()
    assert importer.stderr is not None
    importer.stderr.close()
    assert importer.returncode == -signal.SIGKILL
    assert len(reported) >= 300, "the import finished or stalled before it could be killed"

    import thatch

    with thatch.open(home) as th:
        saved = {memory.label for memory in th.list("global")}
        assert th.integrity_problems() == []
    assert set(reported) <= saved
    assert len(saved) < 3000


def test_import_twice_adds_nothing_and_bad_files_change_nothing(
    thatch: Runner, tmp_path: Path
) -> None:
    good = tmp_path / "good.jsonl"
    good.write_text(
        "\n".join(
            json.dumps(line)
            for line in (
                {"label": "tabs", "content": "Indent with tabs", "store": "global"},
                {"label": "db", "content": "Uses PostgreSQL 16", "store": "acme/web"},
                {
                    "label": "flag",
                    "content": "Behind NEW_UI",
                    "store": "acme/web",
                    "branch": "feature/ui",
                },
            )
        )
        + "\n"
    )
    first = thatch("import", str(good))
    assert "3 created, 0 updated, 0 unchanged" in first.stdout
    second = thatch("import", str(good))
    assert "0 created, 0 updated, 3 unchanged" in second.stdout
    exported = thatch("export").stdout
    assert len(exported.splitlines()) == 3

    bad = tmp_path / "bad.jsonl"
    bad.write_text(
        json.dumps({"label": "new", "content": "fine", "store": "global"}) + "\n{not json\n"
    )
    refused = thatch("import", str(bad), check=False)
    assert refused.returncode == 2
    assert f"{bad} line 2 is not JSON" in refused.stderr
    assert {m["label"] for m in as_json(thatch("list", "all", "--json"))} == {"tabs", "db", "flag"}

    # An export imports into an empty home as it is.
    round_trip = tmp_path / "export.jsonl"
    round_trip.write_text(exported)
    other_home = tmp_path / "other"
    thatch("import", str(round_trip), env={"THATCH_HOME": str(other_home)})
    again = thatch("export", env={"THATCH_HOME": str(other_home)}).stdout
    strip = ("created_at", "updated_at")
    assert [
        {k: v for k, v in json.loads(line).items() if k not in strip} for line in again.splitlines()
    ] == [
        {k: v for k, v in json.loads(line).items() if k not in strip}
        for line in exported.splitlines()
    ]


def test_import_shows_a_progress_bar_on_a_terminal(home: Path, tmp_path: Path) -> None:
    import pty

    source = tmp_path / "few.jsonl"
    source.write_text(
        "\n".join(
            json.dumps({"label": f"f{n}", "content": f"fact number {n}", "store": "global"})
            for n in range(5)
        )
        + "\n"
    )
    controller, terminal = pty.openpty()
    try:
        completed = subprocess.run(
            [str(THATCH), "import", str(source)],
            stderr=terminal,
            stdout=subprocess.PIPE,
            env={**os.environ, "THATCH_HOME": str(home)},
            timeout=300,
            check=False,
        )
        os.close(terminal)
        terminal = -1
        chunks = []
        while True:
            try:
                chunk = os.read(controller, 4096)
            except OSError:  # the terminal side is closed and drained
                break
            if not chunk:
                break
            chunks.append(chunk)
    finally:
        os.close(controller)
        if terminal != -1:
            os.close(terminal)
    shown = b"".join(chunks).decode(errors="replace")
    assert completed.returncode == 0
    assert "importing" in shown
    assert "5/5" in shown
    assert "5 created" in completed.stdout.decode()
