"""What the Cursor target reports as missing or broken, each problem with its fix."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from thatch.instructions.briefing import BRIEFING
from thatch.plugin.setup import SetupContext
from thatch.testing import set_up
from thatch_cursor.target import CursorTarget

THATCH = "/usr/local/bin/thatch"


def on_path(name: str) -> str | None:
    return THATCH if name == "thatch" else None


def target() -> CursorTarget:
    return CursorTarget(which=on_path)


def apply(context: SetupContext) -> None:
    """Make the target's changes true through core's setup engine.

    The engine's state goes next to the user home, in the test's own folder.
    """
    set_up(target(), context, context.user_home.parent / "state")


def edit(path: Path, change: Any) -> None:
    data = json.loads(path.read_text())
    change(data)
    path.write_text(json.dumps(data))


def hooks_file(context: SetupContext) -> Path:
    folder = context.project if context.scope == "project" else context.user_home
    assert folder is not None
    return folder / ".cursor" / "hooks.json"


def test_a_fresh_project_lacks_hooks_server_and_rules(project_context: SetupContext) -> None:
    problems = target().problems(project_context)
    fix = f"thatch setup --cursor --project {project_context.project}"
    assert len(problems) == 4
    assert all(fix in problem for problem in problems)
    hooks, mcp, rule, workflows = problems
    assert "hooks.json does not exist" in hooks
    assert "mcp.json does not exist" in mcp
    assert "thatch.mdc is missing" in rule
    assert "workflow rules thatch-project-primer, thatch-fact-extractor" in workflows


def test_after_a_project_setup_there_is_no_problem(project_context: SetupContext) -> None:
    apply(project_context)
    assert target().problems(project_context) == []


def test_after_a_global_setup_with_an_absolute_path_there_is_no_problem(
    user_home: Path, tmp_path: Path
) -> None:
    program = tmp_path / "venv with space" / "bin" / "thatch"
    program.parent.mkdir(parents=True)
    program.write_text("#!/bin/sh\n")
    program.chmod(0o755)
    context = SetupContext(
        briefing=BRIEFING,
        scope="global",
        project=None,
        user_home=user_home,
        command=(str(program),),
    )
    apply(context)
    assert target().problems(context) == []


def test_a_missing_hook_is_named(project_context: SetupContext) -> None:
    apply(project_context)
    path = hooks_file(project_context)
    edit(path, lambda data: (data["hooks"].pop("stop"), data["hooks"].pop("preCompact")))
    (problem,) = target().problems(project_context)
    assert f"{path} does not run thatch on stop, preCompact" in problem


def test_a_hook_installed_twice_is_reported(project_context: SetupContext) -> None:
    apply(project_context)
    path = hooks_file(project_context)
    old = {"command": "/old/venv/bin/thatch hook cursor postToolUse", "timeout": 10}
    edit(path, lambda data: data["hooks"]["postToolUse"].append(old))
    problems = target().problems(project_context)
    assert any("more than once on postToolUse" in problem for problem in problems)
    assert any("'/old/venv/bin/thatch', which is not an executable file" in p for p in problems)


def test_the_users_own_hooks_are_not_problems(project_context: SetupContext) -> None:
    apply(project_context)
    mine = {"command": "./scripts/audit.sh", "timeout": 5}
    edit(hooks_file(project_context), lambda data: data["hooks"]["postToolUse"].insert(0, mine))
    assert target().problems(project_context) == []


def test_a_command_not_on_path_is_reported(project_context: SetupContext) -> None:
    apply(project_context)
    problems = CursorTarget(which=lambda name: None).problems(project_context)
    assert len(problems) == 2
    unfound = "'thatch', which is not on the PATH harnesses run commands with"
    assert all(unfound in problem for problem in problems)
    assert all("uv tool install" in problem for problem in problems)


def test_a_file_that_is_not_json_is_reported_with_its_line(project_context: SetupContext) -> None:
    apply(project_context)
    mcp = project_context.project / ".cursor" / "mcp.json"
    mcp.write_text('{"mcpServers": {\n  "thatch": oops}}')
    problems = target().problems(project_context)
    assert len(problems) == 1
    assert str(mcp) in problems[0]
    assert "line 2" in problems[0]


def test_comments_and_trailing_commas_are_not_problems(project_context: SetupContext) -> None:
    apply(project_context)
    path = hooks_file(project_context)
    path.write_text("// my hooks\n" + path.read_text().rstrip().removesuffix("}") + ",}\n")
    assert target().problems(project_context) == []


@pytest.mark.parametrize(
    "server",
    [None, {"command": "thatch", "args": ["serve"]}, {"command": 3, "args": ["mcp"]}],
)
def test_a_missing_or_wrong_server_is_reported(project_context: SetupContext, server: Any) -> None:
    apply(project_context)
    mcp = project_context.project / ".cursor" / "mcp.json"
    mcp.write_text(
        json.dumps({"mcpServers": {"other": {}} | ({"thatch": server} if server else {})})
    )
    (problem,) = target().problems(project_context)
    assert str(mcp) in problem
    assert "thatch setup --cursor" in problem


def test_an_old_rule_is_out_of_date(project_context: SetupContext) -> None:
    apply(project_context)
    rule = project_context.project / ".cursor" / "rules" / "thatch.mdc"
    rule.write_text("---\nalwaysApply: true\n---\nan older text\n")
    (problem,) = target().problems(project_context)
    assert "out of date" in problem


def test_a_global_setup_has_no_rule_to_check(global_context: SetupContext) -> None:
    problems = target().problems(global_context)
    assert len(problems) == 2
    assert all("setup --cursor --global`" in problem for problem in problems)
    assert not any("rule" in problem for problem in problems)
