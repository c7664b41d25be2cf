"""``thatch setup --claude``: the changes the target asks for, detection and problems.

The changes are checked as data against golden files (``golden/*.json``; run
with ``THATCH_UPDATE_GOLDEN=1`` to rewrite them after a deliberate change).
What the target reports as problems is in test_claude_problems.py.
"""

from __future__ import annotations

import json
import subprocess
import tomllib
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import attrs
import pytest
import thatch_claude.plugin
from claude_contexts import global_context, project_context, target
from thatch import testing
from thatch.instructions import agent as agent_instructions
from thatch.instructions.briefing import BRIEFING
from thatch.instructions.workflows import NAMES
from thatch.plugin.errors import InvalidInputError
from thatch.plugin.harness import Harness
from thatch.plugin.setup import (
    Change,
    JsonEntry,
    JsonListItem,
    OwnedFile,
    SetupContext,
    SetupTarget,
    TextBlock,
)
from thatch.setup import engine
from thatch_claude.instructions import skills
from thatch_claude.target import HOOK_EVENTS, TOOL_EVENTS

GOLDEN = Path(__file__).parent / "golden"
PLUGIN_ROOT = Path(__file__).parent.parent.parent / "plugins" / "claude"
SKILLS = {
    "thatch-project-primer",
    "thatch-fact-extractor",
    "thatch-dedup-classifier",
    "thatch-session-reflection",
    "thatch-decision-model",
}


# -- the target ---------------------------------------------------------------------
def test_the_plugin_offers_the_claude_harness() -> None:
    (offered,) = thatch_claude.plugin.thatch_harnesses()
    assert isinstance(offered, Harness)
    assert isinstance(offered.setup_target(), SetupTarget)  # type: ignore[attr-defined]
    assert (offered.name, offered.title) == ("claude", "Claude Code")


def test_the_distribution_registers_the_plugin_under_the_thatch_group() -> None:
    meta = tomllib.loads((PLUGIN_ROOT / "pyproject.toml").read_text())
    assert meta["project"]["name"] == "thatch-claude"
    assert any(dep.startswith("thatch-core") for dep in meta["project"]["dependencies"])
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
    testing.check_golden(
        GOLDEN / f"{name}.json", json.dumps(data, indent=2, ensure_ascii=False) + "\n"
    )


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
            project / ".claude" / "settings.local.json",
            ("enabledMcpjsonServers",),
            "thatch",
            strict_for="Claude Code",
        )
    ]
    # Claude Code (2.1.197) moves approvals out of ~/.claude.json when it starts, so one
    # written there would look missing to the next setup, which would write it again.
    assert not [c for c in changes if c.path == user_home / ".claude.json"]


@pytest.mark.parametrize("scope", ["project", "global"])
def test_every_json_file_is_written_as_strict_json(
    scope: str, project: Path, user_home: Path
) -> None:
    # Claude Code ignores a settings or MCP file with comments or trailing commas.
    context = (
        project_context(project, user_home) if scope == "project" else global_context(user_home)
    )
    json_changes = [c for c in target().changes(context) if isinstance(c, JsonEntry | JsonListItem)]
    assert json_changes
    assert {c.strict_for for c in json_changes} == {"Claude Code"}


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
    context = SetupContext(
        briefing=BRIEFING, scope="project", project=None, user_home=user_home, command=("t",)
    )
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
        assert change.item.get("matcher") == ("*" if event in TOOL_EVENTS else None)
    # Every tool call, the failed ones with their error, and each once.
    assert {"PostToolBatch", "PostToolUseFailure"} <= TOOL_EVENTS & set(HOOK_EVENTS)


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
    for needed in ("`mcp__thatch__*`", "MCP server", "`thatch-*` skills", "thatch doctor"):
        assert needed in block.text
    # The workflow reaches Claude Code once, in the MCP server's instructions.
    for tool in agent_instructions.TOOLS:
        assert tool not in block.text
    assert len(block.text) < 600


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


def test_the_skills_are_thatchs_workflows_with_claude_codes_front_matter() -> None:
    assert {skill.name for skill in skills(BRIEFING)} == SKILLS == set(NAMES)
    for skill in skills(BRIEFING):
        front = skill.content.split("---\n")[1]
        assert front.splitlines()[0] == f"name: {skill.name}"
        assert front.splitlines()[1].startswith("description: ")
        assert "{" not in skill.content  # every tool placeholder filled in


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


# -- skills shared by every project's setup ---------------------------------------------
def test_the_skills_stay_until_the_last_project_is_uninstalled(
    tmp_path: Path, user_home: Path
) -> None:
    state = tmp_path / "state"
    first, second = (tmp_path / name for name in ("first", "second"))
    contexts = [project_context(folder, user_home) for folder in (first, second)]
    for folder, context in zip((first, second), contexts, strict=True):
        folder.mkdir()
        testing.set_up(target(), context, state)
    skill_files = sorted((user_home / ".claude" / "skills").glob("*/SKILL.md"))
    assert {path.parent.name for path in skill_files} == SKILLS

    testing.tear_down("claude", contexts[0], state)
    assert not (first / ".claude").exists()
    assert sorted((user_home / ".claude" / "skills").glob("*/SKILL.md")) == skill_files
    assert target("thatch").problems(contexts[1]) == []
    [install] = engine.status(state)
    assert set(skill_files) <= {record.path for record in install.files}

    testing.tear_down("claude", contexts[1], state)
    assert not (user_home / ".claude").exists()
    assert engine.status(state) == []
