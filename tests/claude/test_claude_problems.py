"""What the Claude Code target reports as missing or broken, each problem with its fix.

The setups checked are written through core's setup engine; :func:`edit`
then changes them the way a user or Claude Code would.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest
from claude_contexts import global_context, project_context, target
from thatch.plugin.setup import Change, JsonListItem, SetupContext
from thatch.setup import engine
from thatch.testing import apply_changes
from thatch_claude.target import HOOK_EVENTS


def apply(context: SetupContext, changes: Sequence[Change] | None = None) -> None:
    """Make the target's changes for ``context`` (or only ``changes``) true through the engine.

    The engine's state goes next to the user home, in the test's own folder.
    """
    wanted = target().changes(context) if changes is None else changes
    state = context.user_home.parent / "state"
    apply_changes(wanted, state, target="claude", scope_key=engine.scope_key(context))


def edit(path: Path, change: Any) -> None:
    data = json.loads(path.read_text()) if path.exists() else {}
    change(data)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data))


def test_nothing_set_up_means_no_server_and_no_hooks(project: Path, user_home: Path) -> None:
    context = project_context(project, user_home)
    server, hooks = target("thatch").problems(context)
    fix = f"fix: run `thatch setup --claude --project {project}`"
    assert "no 'thatch' MCP server for this project" in server
    assert str(project / ".mcp.json") in server
    assert "runs no thatch hook for " + ", ".join(HOOK_EVENTS) in hooks
    assert server.endswith(fix)
    assert hooks.endswith(fix)


@pytest.mark.parametrize("scope", ["project", "global"])
def test_a_complete_setup_has_no_problems(scope: str, project: Path, user_home: Path) -> None:
    context = (
        project_context(project, user_home)
        if scope == "project"
        else global_context(user_home, command=("thatch",))
    )
    apply(context)
    assert target("thatch").problems(context) == []


def test_a_project_counts_what_the_user_level_provides(project: Path, user_home: Path) -> None:
    apply(global_context(user_home, command=("thatch",)))
    assert target("thatch").problems(project_context(project, user_home)) == []


def test_a_global_setup_does_not_count_the_project(project: Path, user_home: Path) -> None:
    apply(project_context(project, user_home))
    context = global_context(user_home, command=("thatch",))
    server, hooks = target("thatch").problems(context)
    assert f"no 'thatch' MCP server in {user_home / '.claude.json'} (user scope)" in server
    assert server.endswith("fix: run `thatch setup --claude --global`")
    assert str(user_home / ".claude" / "settings.json") in hooks


def set_up_without_approval(context: SetupContext) -> None:
    """Apply the project setup, then take back the approval it wrote."""
    apply(context)
    assert context.project is not None
    local = context.project / ".claude" / "settings.local.json"
    edit(local, lambda data: data.pop("enabledMcpjsonServers"))


def test_an_unapproved_project_server_is_pending(project: Path, user_home: Path) -> None:
    context = project_context(project, user_home)
    set_up_without_approval(context)
    (problem,) = target("thatch").problems(context)
    assert f"server in {project / '.mcp.json'} waits for approval" in problem
    # It names every place an approval counts, so the user can check each.
    assert str(project / ".claude" / "settings.local.json") in problem
    assert str(project / ".claude" / "settings.json") in problem
    assert f"{user_home / '.claude.json'} under projects.{project}.enabledMcpjsonServers" in problem
    assert problem.endswith(f"fix: run `thatch setup --claude --project {project}`")


def old_approval(project: Path, servers: Any) -> Any:
    """An edit of ``~/.claude.json`` approving ``servers`` where older Claude Code kept it."""
    return lambda data: data.setdefault("projects", {}).update(
        {str(project): {"enabledMcpjsonServers": servers}}
    )


@pytest.mark.parametrize(
    ("where", "value"),
    [
        ("settings.local.json", {"enabledMcpjsonServers": ["thatch"]}),
        ("settings.local.json", {"enableAllProjectMcpServers": True}),
        ("settings.json", {"enabledMcpjsonServers": ["other", "thatch"]}),
        ("settings.json", {"enableAllProjectMcpServers": True}),
        ("~/.claude.json", ["thatch"]),
    ],
)
def test_an_approval_counts_wherever_claude_code_reads_it(
    where: str, value: Any, project: Path, user_home: Path
) -> None:
    context = project_context(project, user_home)
    set_up_without_approval(context)
    assert len(target("thatch").problems(context)) == 1
    if where == "~/.claude.json":
        edit(user_home / ".claude.json", old_approval(project, value))
    else:
        edit(project / ".claude" / where, lambda data: data.update(value))
    assert target("thatch").problems(context) == []


@pytest.mark.parametrize(
    ("where", "value"),
    [
        ("settings.local.json", {"enabledMcpjsonServers": ["postgres"]}),
        ("settings.local.json", {"enabledMcpjsonServers": "thatch"}),
        ("settings.local.json", {"enableAllProjectMcpServers": False}),
        ("settings.json", {"disabledMcpjsonServers": ["thatch"]}),
        ("~/.claude.json", ["postgres"]),
    ],
)
def test_what_is_not_an_approval(where: str, value: Any, project: Path, user_home: Path) -> None:
    context = project_context(project, user_home)
    set_up_without_approval(context)
    if where == "~/.claude.json":
        edit(user_home / ".claude.json", old_approval(project, value))
    else:
        edit(project / ".claude" / where, lambda data: data.update(value))
    (problem,) = target("thatch").problems(context)
    assert "waits for approval" in problem


def test_an_old_approval_is_looked_up_under_the_real_path(tmp_path: Path, user_home: Path) -> None:
    # Claude Code keys ~/.claude.json projects by the real path of its working folder.
    real = tmp_path.resolve() / "real"
    real.mkdir()
    link = tmp_path / "link"
    link.symlink_to(real)
    context = project_context(link, user_home)
    set_up_without_approval(context)
    edit(user_home / ".claude.json", old_approval(link, ["thatch"]))
    assert len(target("thatch").problems(context)) == 1
    edit(user_home / ".claude.json", old_approval(real, ["thatch"]))
    assert target("thatch").problems(context) == []


def test_a_local_scope_server_needs_no_approval(project: Path, user_home: Path) -> None:
    context = project_context(project, user_home)
    hooks = [c for c in target().changes(context) if isinstance(c, JsonListItem)]
    apply(context, [c for c in hooks if c.keys[0] == "hooks"])
    server = {"type": "stdio", "command": "thatch", "args": ["mcp"]}
    edit(
        user_home / ".claude.json",
        lambda data: data.setdefault("projects", {}).update(
            {str(project): {"mcpServers": {"thatch": server}}}
        ),
    )
    assert target("thatch").problems(context) == []


def test_missing_hooks_are_listed(project: Path, user_home: Path) -> None:
    context = project_context(project, user_home)
    apply(context)
    edit(project / ".claude" / "settings.json", lambda data: data["hooks"].pop("Stop"))
    (problem,) = target("thatch").problems(context)
    assert "runs no thatch hook for Stop (looked in" in problem


def test_hooks_in_the_local_settings_count(project: Path, user_home: Path) -> None:
    context = project_context(project, user_home)
    apply(context)
    shared = project / ".claude" / "settings.json"
    hooks = json.loads(shared.read_text())["hooks"]
    shared.unlink()
    assert len(target("thatch").problems(context)) == 1
    # The local file already holds the approval; the hooks join it.
    edit(shared.with_name("settings.local.json"), lambda data: data.update(hooks=hooks))
    assert target("thatch").problems(context) == []


def test_thatch_not_on_path_is_reported_once(project: Path, user_home: Path) -> None:
    context = project_context(project, user_home)
    apply(context)
    (problem,) = target().problems(context)  # one cause, one problem
    unfound = "'thatch', which is not on the PATH harnesses run commands with"
    assert f"the 'thatch' MCP server in {project / '.mcp.json'} and " in problem
    assert "the thatch hooks for " + ", ".join(HOOK_EVENTS) in problem
    assert f"run {unfound}" in problem
    # The fix: setup again (it writes the absolute path), or the daily-use install.
    assert "setup --claude --project" in problem
    assert "uv tool install" in problem


def test_an_absolute_command_is_checked_on_disk(
    tmp_path: Path, project: Path, user_home: Path
) -> None:
    program = tmp_path / "bin" / "thatch"
    context = project_context(project, user_home, command=(str(program),))
    apply(context)
    (missing,) = target().problems(context)  # the server and the hooks, one cause
    assert "not an executable file" in missing
    program.parent.mkdir()
    program.write_text("#!/bin/sh\n")
    assert len(target().problems(context)) == 1  # not executable yet
    program.chmod(0o755)
    assert target().problems(context) == []


def test_post_tool_use_next_to_post_tool_batch_is_reported(project: Path, user_home: Path) -> None:
    context = project_context(project, user_home)
    apply(context)
    extra = {
        "matcher": "*",
        "hooks": [{"type": "command", "command": "thatch hook claude PostToolUse"}],
    }
    user_settings = user_home / ".claude" / "settings.json"
    edit(user_settings, lambda data: data.setdefault("hooks", {}).update(PostToolUse=[extra]))
    (problem,) = target("thatch").problems(context)
    assert "queued twice" in problem
    assert str(user_settings) in problem


def test_unrelated_hooks_and_broken_commands_are_ignored(project: Path, user_home: Path) -> None:
    context = project_context(project, user_home)
    apply(context)
    others = [
        {"hooks": [{"type": "command", "command": "echo 'unbalanced"}]},
        {"hooks": [{"type": "command", "command": "missing-tool --flag"}]},
        {"hooks": "not a list"},
        "not an object",
    ]
    settings = project / ".claude" / "settings.json"
    edit(settings, lambda data: data["hooks"]["Stop"].extend(others))
    assert target("thatch").problems(context) == []


@pytest.mark.parametrize("text", ["{not json", "[1, 2]"])
def test_an_unreadable_config_file_is_a_problem(text: str, project: Path, user_home: Path) -> None:
    context = project_context(project, user_home)
    apply(context)
    (project / ".mcp.json").write_text(text)
    problems = target("thatch").problems(context)
    assert str(project / ".mcp.json") in problems[0]
    assert "fix it by hand" in problems[0] or "fix the file by hand" in problems[0]
    assert any("no 'thatch' MCP server" in problem for problem in problems[1:])
