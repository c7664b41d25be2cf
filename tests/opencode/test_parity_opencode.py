"""opencode parity: the memory workflows as subagents (UC-005, UC-014), and a
compaction that keeps thatch's briefing (UC-013)."""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

from test_opencode_jsplugin import DRIVER, drive, fake_thatch, records, write_plugin
from thatch.instructions.agent import TOOLS
from thatch.instructions.workflows import NAMES
from thatch.plugin.setup import SetupContext
from thatch.testing import BRIEFING as CORE_BRIEFING
from thatch.testing import plan_set_up, set_up, tear_down
from thatch_opencode.instructions import instructions_text
from thatch_opencode.target import OpencodeTarget, global_config_folder


def thatch_on_path(name: str) -> str | None:
    return f"/usr/local/bin/{name}" if name in ("thatch", "opencode") else None


TARGET = OpencodeTarget(which=thatch_on_path, environ={})

BRIEFING = "[thatch] Memory for this session: deploys go through make release"


def front_matter(text: str) -> dict[str, str]:
    _, front, _ = text.split("---\n", 2)
    return dict(line.split(": ", 1) for line in front.splitlines())


def bare_tools(text: str) -> list[str]:
    return [tool for tool in TOOLS if re.search(rf"(?<!thatch_)\b{tool}\b", text)]


# -- UC-005: setup writes, shows, checks and removes the workflow agents --------------
def test_uc005_a_project_setup_writes_one_subagent_per_workflow(
    project_context: SetupContext, state: Path
) -> None:
    set_up(TARGET, project_context, state)
    assert project_context.project is not None
    folder = project_context.project / ".opencode" / "agents"
    for name in NAMES:
        fields = front_matter((folder / f"{name}.md").read_text(encoding="utf-8"))
        assert fields["mode"] == "subagent"
        assert json.loads(fields["description"])  # a quoted scalar opencode reads
    assert TARGET.problems(project_context) == []


def test_uc005_a_global_setup_writes_them_in_opencodes_config_folder(
    global_context: SetupContext, state: Path
) -> None:
    set_up(TARGET, global_context, state)
    folder = global_config_folder(global_context.user_home, {}) / "agents"
    assert sorted(path.stem for path in folder.iterdir()) == sorted(NAMES)


def test_uc005_dry_run_shows_the_agents_and_uninstall_removes_them(
    project_context: SetupContext, state: Path
) -> None:
    planned = {edit.path.name for edit in plan_set_up(TARGET, project_context, state)}
    assert {f"{name}.md" for name in NAMES} <= planned
    set_up(TARGET, project_context, state)
    tear_down(TARGET, project_context, state)
    assert project_context.project is not None
    assert not (project_context.project / ".opencode").exists()


def test_uc005_missing_and_stale_agents_are_problems(
    project_context: SetupContext, state: Path
) -> None:
    set_up(TARGET, project_context, state)
    assert project_context.project is not None
    folder = project_context.project / ".opencode" / "agents"
    (folder / "thatch-fact-extractor.md").unlink()
    (folder / "thatch-session-reflection.md").write_text("---\nmode: subagent\n---\nold\n")
    missing, stale = TARGET.problems(project_context)
    assert "thatch-fact-extractor" in missing
    assert "missing" in missing
    assert "thatch-session-reflection" in stale
    assert "out of date" in stale


# -- UC-014: every tool named as opencode shows it -------------------------------------
def test_uc014_the_agents_and_instructions_name_every_tool_with_its_prefix(
    project_context: SetupContext,
) -> None:
    agents = [
        change.content  # type: ignore[union-attr]
        for change in TARGET.changes(project_context)
        if change.path.parent.name == "agents"
    ]
    assert len(agents) == len(NAMES)
    for text in [*agents, instructions_text(CORE_BRIEFING)]:
        assert bare_tools(text) == []
    assert "`thatch-fact-extractor`" in instructions_text(CORE_BRIEFING)


# -- UC-013: compaction keeps the briefing -----------------------------------------------
def test_uc013_the_briefing_is_pushed_into_the_compaction_context(
    node: str, tmp_path: Path, project: Path
) -> None:
    # As thatch answers: the briefing at a session's start, nothing when it compacts.
    script = fake_thatch(tmp_path)
    record = tmp_path / "record.jsonl"
    answers = {"session.created": BRIEFING}
    env = {"FAKE_RECORD": str(record), "FAKE_ANSWERS": json.dumps(answers)}
    plugin = write_plugin(tmp_path, [sys.executable, str(script)], env)
    out = drive(node, tmp_path, plugin, project, DRIVER)
    assert out["context"] == [BRIEFING]
    # The compaction is still reported, so thatch holds its nudges meanwhile.
    events = [call["argv"][-1] for call in records(record)]
    assert "experimental.session.compacting" in events
