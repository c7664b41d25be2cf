"""``thatch setup --claude``: the changes the target asks for, detection and problems.

The changes are checked as data against golden files (``golden/*.json``; run
with ``THATCH_UPDATE_GOLDEN=1`` to rewrite them after a deliberate change).
Problems are checked against files written by :func:`apply`, a stand-in for
core's setup engine that knows just enough to write JSON entries.
"""

from __future__ import annotations

import json
import os
import subprocess
import tomllib
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import attrs
import pytest
import thatch_claude.plugin
from thatch.decisions.nudge import INSTRUCTIONS as DECISION_INSTRUCTIONS
from thatch.errors import InvalidInputError
from thatch.setup.model import (
    Change,
    JsonEntry,
    JsonListItem,
    OwnedFile,
    SetupContext,
    SetupTarget,
    TextBlock,
)
from thatch_claude.instructions import SKILL_NAMES
from thatch_claude.target import HOOK_EVENTS, ClaudeTarget

GOLDEN = Path(__file__).parent / "golden"
PLUGIN_ROOT = Path(__file__).parent.parent.parent / "plugins" / "claude"
SKILLS = {
    "thatch-project-primer",
    "thatch-fact-extractor",
    "thatch-dedup-classifier",
    "thatch-session-reflection",
    "thatch-decision-model",
}


@pytest.fixture
def user_home(tmp_path: Path) -> Path:
    folder = tmp_path.resolve() / "user"
    folder.mkdir()
    return folder


@pytest.fixture
def project(tmp_path: Path) -> Path:
    folder = tmp_path.resolve() / "shop"
    folder.mkdir()
    return folder


def on_path(*names: str) -> Any:
    """A fake ``shutil.which`` that finds only ``names``."""
    return lambda name: f"/usr/local/bin/{name}" if name in names else None


def target(*on: str) -> ClaudeTarget:
    return ClaudeTarget(which=on_path(*on))


def project_context(project: Path, user_home: Path, **fields: Any) -> SetupContext:
    defaults: dict[str, Any] = {"command": ("thatch",)}
    return SetupContext(
        scope="project", project=project, user_home=user_home, **(defaults | fields)
    )


def global_context(user_home: Path, **fields: Any) -> SetupContext:
    defaults: dict[str, Any] = {
        "command": ("/opt/thatch venv/bin/thatch",),
        "env": {"THATCH_HOME": "/data/thatch home"},
    }
    return SetupContext(scope="global", project=None, user_home=user_home, **(defaults | fields))


# -- the target ---------------------------------------------------------------------
def test_the_plugin_offers_the_claude_target() -> None:
    (offered,) = thatch_claude.plugin.thatch_setup_targets()
    assert isinstance(offered, SetupTarget)
    assert (offered.name, offered.title) == ("claude", "Claude Code")


def test_the_distribution_registers_the_plugin_under_the_thatch_group() -> None:
    meta = tomllib.loads((PLUGIN_ROOT / "pyproject.toml").read_text())
    assert meta["project"]["name"] == "thatch-claude"
    assert "thatch-core" in meta["project"]["dependencies"]
    assert meta["project"]["entry-points"]["thatch"] == {"claude": "thatch_claude.plugin"}
    assert (PLUGIN_ROOT / "src" / "thatch_claude" / "py.typed").exists()


# -- changes as data --------------------------------------------------------------
def as_data(changes: Sequence[Change], **places: Path) -> Any:
    """The changes as JSON data, folders replaced by ``<name>`` so the golden is stable."""
    data = []
    for change in changes:
        item: dict[str, Any] = {"type": type(change).__name__}
        if isinstance(change, OwnedFile):
            item |= {
                "path": str(change.path),
                "executable": change.executable,
                "front_matter": front_matter(change.content),
            }
        else:
            item |= {
                name: list(value) if isinstance(value, tuple) else value
                for name, value in attrs.asdict(change, recurse=False).items()
            }
            item["path"] = str(change.path)
        data.append(item)
    text = json.dumps(data, indent=1, ensure_ascii=False)
    for name, folder in places.items():
        text = text.replace(str(folder), f"<{name}>")
    return json.loads(text)


def check_golden(name: str, data: Any) -> None:
    path = GOLDEN / f"{name}.json"
    if os.environ.get("THATCH_UPDATE_GOLDEN") == "1":
        path.parent.mkdir(exist_ok=True)
        path.write_text(json.dumps(data, indent=2, ensure_ascii=False) + "\n")
    assert data == json.loads(path.read_text())


def test_project_changes(project: Path, user_home: Path) -> None:
    changes = target().changes(project_context(project, user_home))
    check_golden("changes_project", as_data(changes, project=project, home=user_home))


def test_global_changes(user_home: Path) -> None:
    changes = target().changes(global_context(user_home))
    check_golden("changes_global", as_data(changes, home=user_home))


def test_a_project_setup_registers_and_approves_the_server(project: Path, user_home: Path) -> None:
    context = project_context(project, user_home, env={"THATCH_HOME": "/t"})
    changes = target().changes(context)
    (entry,) = [c for c in changes if isinstance(c, JsonEntry)]
    assert (entry.path, entry.keys) == (project / ".mcp.json", ("mcpServers", "thatch"))
    assert entry.value == {
        "type": "stdio",
        "command": "thatch",
        "args": ["mcp"],
        "env": {"THATCH_HOME": "/t", "THATCH_HARNESS": "claude"},
    }
    approvals = [c for c in changes if isinstance(c, JsonListItem) and c.keys[0] != "hooks"]
    assert approvals == [
        JsonListItem(
            project / ".claude" / "settings.local.json", ("enabledMcpjsonServers",), "thatch"
        )
    ]
    # Claude Code (2.1.197) moves approvals out of ~/.claude.json when it starts, so one
    # written there would look missing to the next setup, which would write it again.
    assert not [c for c in changes if c.path == user_home / ".claude.json"]


def test_a_global_setup_registers_the_server_at_user_scope(user_home: Path) -> None:
    context = global_context(user_home, command=("/venv/bin/python", "-m", "thatch"), env={})
    changes = target().changes(context)
    (entry,) = [c for c in changes if isinstance(c, JsonEntry)]
    assert (entry.path, entry.keys) == (user_home / ".claude.json", ("mcpServers", "thatch"))
    assert entry.value["command"] == "/venv/bin/python"
    assert entry.value["args"] == ["-m", "thatch", "mcp"]
    # User-scope servers need no approval.
    assert not [c for c in changes if isinstance(c, JsonListItem) and c.keys[0] != "hooks"]
    assert all(user_home in c.path.parents for c in changes)


def test_a_project_setup_needs_a_project(user_home: Path) -> None:
    context = SetupContext(scope="project", project=None, user_home=user_home, command=("t",))
    with pytest.raises(InvalidInputError, match="--project DIR or use --global"):
        target().changes(context)


@pytest.mark.parametrize("scope", ["project", "global"])
def test_one_hook_per_event_and_never_post_tool_use(
    scope: str, project: Path, user_home: Path
) -> None:
    context = (
        project_context(project, user_home) if scope == "project" else global_context(user_home)
    )
    settings = (project if scope == "project" else user_home) / ".claude" / "settings.json"
    hooks = [c for c in target().changes(context) if isinstance(c, JsonListItem)]
    hooks = [c for c in hooks if c.keys[0] == "hooks"]
    assert [c.keys[1] for c in hooks] == list(HOOK_EVENTS)
    assert "PostToolUse" not in HOOK_EVENTS
    for change in hooks:
        event = change.keys[1]
        assert change.path == settings
        (hook,) = change.item["hooks"]
        assert hook["type"] == "command"
        assert hook["timeout"] == 10
        assert hook["command"].endswith(f" hook claude {event}")
        assert ("matcher" in change.item) == (event == "PostToolBatch")
    batch = next(c for c in hooks if c.keys[1] == "PostToolBatch")
    assert batch.item["matcher"] == "*"


def test_the_hook_command_runs_thatch_with_its_environment(tmp_path: Path, user_home: Path) -> None:
    # A stand-in for thatch that prints what it was given, in a folder with a space.
    folder = tmp_path / "my tools"
    folder.mkdir()
    fake = folder / "thatch"
    fake.write_text('#!/bin/sh\nprintf "%s|%s" "$THATCH_HOME" "$*"\n')
    fake.chmod(0o755)
    context = global_context(user_home, command=(str(fake),), env={"THATCH_HOME": "/a b/it's"})
    hooks = [c for c in target().changes(context) if isinstance(c, JsonListItem)]
    command = hooks[0].item["hooks"][0]["command"]
    ran = subprocess.run(["/bin/sh", "-c", command], capture_output=True, text=True, check=True)
    assert ran.stdout == "/a b/it's|hook claude SessionStart"


@pytest.mark.parametrize("scope", ["project", "global"])
def test_the_instructions_block(scope: str, project: Path, user_home: Path) -> None:
    context = (
        project_context(project, user_home) if scope == "project" else global_context(user_home)
    )
    (block,) = [c for c in target().changes(context) if isinstance(c, TextBlock)]
    expected = project / "CLAUDE.md" if scope == "project" else user_home / ".claude" / "CLAUDE.md"
    assert (block.path, block.name) == (expected, "thatch")
    for needed in ("memory_recall", "memory_remember", "extraction_done", *SKILLS):
        assert needed in block.text
    assert block.text.endswith(DECISION_INSTRUCTIONS)
    assert len(block.text) < 3000  # read on every session: keep it tight


# -- skills ------------------------------------------------------------------------
def front_matter(content: str) -> dict[str, str]:
    """The ``key: value`` lines between the opening ``---`` lines of a skill file."""
    lines = content.splitlines()
    assert lines[0] == "---", "a skill starts with front matter"
    end = lines.index("---", 1)
    fields = {}
    for line in lines[1:end]:
        key, _, value = line.partition(":")
        fields[key.strip()] = value.strip()
    return fields


@pytest.mark.parametrize("scope", ["project", "global"])
def test_the_skills_go_to_the_users_claude_folder(
    scope: str, project: Path, user_home: Path
) -> None:
    context = (
        project_context(project, user_home) if scope == "project" else global_context(user_home)
    )
    files = [c for c in target().changes(context) if isinstance(c, OwnedFile)]
    assert {f.path.parent.name for f in files} == SKILLS
    for skill in files:
        assert skill.path == user_home / ".claude" / "skills" / skill.path.parent.name / "SKILL.md"
        assert not skill.executable


def test_every_skill_has_front_matter_naming_it(project: Path, user_home: Path) -> None:
    files = [
        c for c in target().changes(project_context(project, user_home)) if isinstance(c, OwnedFile)
    ]
    for skill in files:
        fields = front_matter(skill.content)
        assert set(fields) == {"name", "description"}
        assert fields["name"] == skill.path.parent.name
        # Claude Code's limits: a lowercase-hyphen name, a description under 1024 characters.
        assert fields["name"].replace("-", "").isalnum()
        assert fields["name"].islower()
        assert 40 < len(fields["description"]) < 1024
        assert len(skill.content.splitlines()) > 15, "a skill has a body, not only front matter"


def test_the_skill_files_in_the_package_are_exactly_the_installed_ones() -> None:
    shipped = PLUGIN_ROOT / "src" / "thatch_claude" / "skills"
    assert {path.stem for path in shipped.glob("*")} == SKILLS == set(SKILL_NAMES)


def test_the_fact_extractor_answers_to_the_name_the_extraction_nudge_uses() -> None:
    from thatch.extraction import EXTRACTION_SKILL

    shipped = PLUGIN_ROOT / "src" / "thatch_claude" / "skills" / "thatch-fact-extractor.md"
    assert front_matter(shipped.read_text())["name"] == EXTRACTION_SKILL


# -- detection ---------------------------------------------------------------------
def test_nothing_detected_in_a_bare_home(project: Path, user_home: Path) -> None:
    found = target().detect(project_context(project, user_home))
    assert (found.found, found.evidence) == (False, ())


def test_detects_config_folders_and_the_binary(project: Path, user_home: Path) -> None:
    (user_home / ".claude").mkdir()
    (project / ".claude").mkdir()
    found = target("claude").detect(project_context(project, user_home))
    assert found.found
    assert found.evidence == (
        f"{user_home / '.claude'}/",
        f"{project / '.claude'}/",
        "claude on PATH (/usr/local/bin/claude)",
    )


@pytest.mark.parametrize("evidence", ["home", "project", "binary"])
def test_any_one_sign_is_enough(evidence: str, project: Path, user_home: Path) -> None:
    if evidence == "home":
        (user_home / ".claude").mkdir()
    elif evidence == "project":
        (project / ".claude").mkdir()
    on = ("claude",) if evidence == "binary" else ()
    found = target(*on).detect(project_context(project, user_home))
    assert found.found
    assert len(found.evidence) == 1


def test_a_global_detection_ignores_the_working_folder(user_home: Path) -> None:
    assert not target().detect(global_context(user_home)).found


# -- problems ----------------------------------------------------------------------
def apply(changes: Sequence[Change]) -> None:
    """Write JSON changes the simple way (no backup, no manifest)."""
    for change in changes:
        if not isinstance(change, JsonEntry | JsonListItem):
            continue
        data = json.loads(change.path.read_text()) if change.path.exists() else {}
        node = data
        for key in change.keys[:-1]:
            node = node.setdefault(key, {})
        if isinstance(change, JsonEntry):
            node[change.keys[-1]] = change.value
        else:
            items = node.setdefault(change.keys[-1], [])
            if change.item not in items:
                items.append(change.item)
        change.path.parent.mkdir(parents=True, exist_ok=True)
        change.path.write_text(json.dumps(data, indent=2))


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
    apply(target().changes(context))
    assert target("thatch").problems(context) == []


def test_a_project_counts_what_the_user_level_provides(project: Path, user_home: Path) -> None:
    apply(target().changes(global_context(user_home, command=("thatch",))))
    assert target("thatch").problems(project_context(project, user_home)) == []


def test_a_global_setup_does_not_count_the_project(project: Path, user_home: Path) -> None:
    apply(target().changes(project_context(project, user_home)))
    context = global_context(user_home, command=("thatch",))
    server, hooks = target("thatch").problems(context)
    assert f"no 'thatch' MCP server in {user_home / '.claude.json'} (user scope)" in server
    assert server.endswith("fix: run `thatch setup --claude --global`")
    assert str(user_home / ".claude" / "settings.json") in hooks


def set_up_without_approval(context: SetupContext) -> None:
    """Apply the project setup, then take back the approval it wrote."""
    apply(target().changes(context))
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
    apply([c for c in hooks if c.keys[0] == "hooks"])
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
    apply(target().changes(context))
    edit(project / ".claude" / "settings.json", lambda data: data["hooks"].pop("Stop"))
    (problem,) = target("thatch").problems(context)
    assert "runs no thatch hook for Stop (looked in" in problem


def test_hooks_in_the_local_settings_count(project: Path, user_home: Path) -> None:
    context = project_context(project, user_home)
    apply(target().changes(context))
    shared = project / ".claude" / "settings.json"
    hooks = json.loads(shared.read_text())["hooks"]
    shared.unlink()
    assert len(target("thatch").problems(context)) == 1
    # The local file already holds the approval; the hooks join it.
    edit(shared.with_name("settings.local.json"), lambda data: data.update(hooks=hooks))
    assert target("thatch").problems(context) == []


def test_thatch_not_on_path_is_reported_once_per_file(project: Path, user_home: Path) -> None:
    context = project_context(project, user_home)
    apply(target().changes(context))
    server, hooks = target().problems(context)
    assert f"MCP server in {project / '.mcp.json'} runs 'thatch', which is not found" in server
    assert "the thatch hooks for " + ", ".join(HOOK_EVENTS) in hooks
    assert "run 'thatch', which is not found" in hooks


def test_an_absolute_command_is_checked_on_disk(
    tmp_path: Path, project: Path, user_home: Path
) -> None:
    program = tmp_path / "bin" / "thatch"
    context = project_context(project, user_home, command=(str(program),))
    apply(target().changes(context))
    assert len(target().problems(context)) == 2  # the server and the hooks
    program.parent.mkdir()
    program.write_text("#!/bin/sh\n")
    assert len(target().problems(context)) == 2  # not executable yet
    program.chmod(0o755)
    assert target().problems(context) == []


def test_post_tool_use_next_to_post_tool_batch_is_reported(project: Path, user_home: Path) -> None:
    context = project_context(project, user_home)
    apply(target().changes(context))
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
    apply(target().changes(context))
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
    apply(target().changes(context))
    (project / ".mcp.json").write_text(text)
    problems = target("thatch").problems(context)
    assert str(project / ".mcp.json") in problems[0]
    assert "fix it by hand" in problems[0] or "fix the file by hand" in problems[0]
    assert any("no 'thatch' MCP server" in problem for problem in problems[1:])
