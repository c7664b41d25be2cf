"""Hook payloads as a harness sends them: the recorded Claude Code payloads, made new."""

from __future__ import annotations

import json
import uuid
from pathlib import Path

from data_sets import ROOT

PAYLOADS = ROOT / "tests" / "data" / "claude"
#: Answered by real memories of acme/web and by the "flaky-test" decision situation.
#: Until 2026-12-07 it read "test_checkout_total fails about one run in five on CI; can
#: you look into it and tell me how to run the frontend unit tests locally?", which the
#: learnt firing maps no longer fire the situation on (the look-up joined on pulls it
#: under the bar; docs/benchmarks.md, "Learnt firing maps"): a flush with no decision
#: nudge would time less than the hook's full work.
PROMPT = (
    "test_checkout_total is flaky on CI, it fails about one run in five; fix the flaky "
    "test. The unit tests run with pnpm test, right?"
)


def payload(name: str, project: Path, **fields: str) -> dict[str, object]:
    """A recorded Claude Code payload with ``cwd`` set to the project and ``fields`` replaced."""
    data = json.loads((PAYLOADS / name).read_text(encoding="utf-8"))
    return {**data, "cwd": str(project), **fields}


def prompt_payload(project: Path, prompt: str, number: int) -> str:
    """A UserPromptSubmit payload of a new session, its prompt tagged with ``number``."""
    return json.dumps(
        payload(
            "user_prompt_submit.json",
            project,
            session_id=str(uuid.uuid4()),
            prompt=f"{prompt} (run {number})",
        )
    )


def tool_payload(project: Path, session: str, number: int) -> str:
    """A PostToolUse payload of ``session`` with its own tool-use id."""
    return json.dumps(
        payload("post_tool_use.json", project, session_id=session, tool_use_id=f"toolu_{number}")
    )
