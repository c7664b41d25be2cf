"""The JS plugin inside the real opencode CLI, against a stand-in thatch and a fake model.

``opencode run`` needs a model: a local OpenAI-compatible server (in this
process) answers the first request with one bash call and the next with
text, and records every request, so the test sees exactly what the model
was sent. The stand-in thatch records each hook call and answers with
canned text. The CLI comes from ``.ci/install-harness-clis`` (see tests/harness_clis.py).
opencode installs ``@opencode-ai/plugin`` into ``.opencode/`` on first use,
which needs the npm registry.
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from fake_model import fake_model, isolated_env, provider_config
from harness_clis import harness_cli
from thatch_opencode.events import parse_event
from thatch_opencode.jsplugin import render

BRIEFING = "[thatch] briefing from the stand-in"
NUDGE = "[thatch] nudge from the stand-in"

ANSWERS = {"session.created": BRIEFING, "chat.message": NUDGE}

STAND_IN = """\
import json, os, sys
with open(os.environ["FAKE_RECORD"], "a", encoding="utf-8") as record:
    record.write(json.dumps({"event": sys.argv[-1], "payload": json.load(sys.stdin)}) + "\\n")
print(json.loads(os.environ["FAKE_ANSWERS"]).get(sys.argv[-1], ""))
"""


@pytest.fixture
def opencode_bin() -> str:
    return str(harness_cli("opencode"))


@pytest.fixture
def model() -> Iterator[tuple[str, list[dict[str, Any]]]]:
    """The fake model's base URL and the requests it received."""
    with fake_model() as served:
        yield served


@pytest.mark.slow
def test_opencode_runs_the_plugin_and_sends_its_text_to_the_model(
    opencode_bin: str, model: tuple[str, list[dict[str, Any]]], tmp_path: Path
) -> None:
    base_url, requests = model
    project = tmp_path / "project"
    (project / ".opencode" / "plugins").mkdir(parents=True)
    (project / "opencode.json").write_text(json.dumps(provider_config(base_url)))
    stand_in = tmp_path / "thatch.py"
    stand_in.write_text(STAND_IN)
    record = tmp_path / "record.jsonl"
    env = {"FAKE_RECORD": str(record), "FAKE_ANSWERS": json.dumps(ANSWERS)}
    plugin = render([sys.executable, str(stand_in)], env)
    (project / ".opencode" / "plugins" / "thatch.js").write_text(plugin)

    done = subprocess.run(
        [opencode_bin, "run", "--", "How", "do", "we", "deploy?"],
        cwd=project,
        # opencode takes its folder from PWD, which cwd= alone does not change.
        env=isolated_env(tmp_path / "home") | {"PWD": str(project)},
        capture_output=True,
        text=True,
        timeout=180,
        check=False,
    )
    assert done.returncode == 0, done.stderr

    calls = [json.loads(line) for line in record.read_text().splitlines()]
    assert [call["event"] for call in calls] == [
        "session.created",
        "chat.message",
        "tool.execute.after",
    ]
    events = [parse_event(call["event"], call["payload"]) for call in calls]
    assert [event.kind for event in events] == ["session_start", "prompt", "tool_use"]
    assert len({event.session_id for event in events}) == 1
    assert events[1].prompt == "How do we deploy?"
    assert events[2].tool_calls[0].name == "bash"
    assert events[2].tool_calls[0].response == "hello\n"

    main = [request for request in requests if request.get("tools")]
    assert main, "opencode sent no request with tools"
    for request in main:
        system = [m["content"] for m in request["messages"] if m["role"] == "system"]
        assert any(BRIEFING in text for text in system)
        (user,) = [m["content"] for m in request["messages"] if m["role"] == "user"]
        assert [part["text"] for part in user] == ["How do we deploy?", NUDGE]
