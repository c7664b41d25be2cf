"""Parity with the original's setup use cases: older setups (UC-005), drift (UC-014, UC-018).

Also ``CLAUDE_CONFIG_DIR``, which moves Claude Code's user-level files.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import thatch_claude.plugin
import thatch_cursor.plugin
from claude_contexts import global_context, project_context, target
from thatch.instructions.briefing import BRIEFING
from thatch.instructions.workflows import NAMES
from thatch.plugin.setup import SetupContext
from thatch.setup import engine
from thatch.setup.notice import harness_of
from thatch.testing import plugins_with
from thatch_claude.instructions import instructions_block, skills
from thatch_claude.target import HOOK_EVENTS

OLD_BLOCK = "<!-- thatch -->\n## thatch\nUse thatch_remember to save facts.\n<!-- /thatch -->\n"


@pytest.fixture
def project(tmp_path: Path) -> Path:
    folder = tmp_path / "project"
    (folder / ".claude").mkdir(parents=True)
    return folder


@pytest.fixture
def user_home(tmp_path: Path) -> Path:
    folder = tmp_path / "home"
    folder.mkdir()
    return folder


def write_json(path: Path, data: Any) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data, indent=2) + "\n")


def command_hook(command: str) -> dict[str, Any]:
    return {"hooks": [{"type": "command", "command": command}]}


def setup(context: SetupContext, state: Path) -> list[engine.FileEdit]:
    """Plan and apply ``thatch setup --claude`` for ``context``; returns the plan."""
    key = engine.scope_key(context)
    installed = engine.installed(state, "claude", key)
    edits = engine.plan(target("thatch").changes(context), installed, inside=context.project)
    engine.apply(edits, state_dir=state, target="claude", scope_key=key)
    return edits


def uninstall(context: SetupContext, state: Path) -> None:
    key = engine.scope_key(context)
    retired = engine.retired_of(target("thatch").changes(context))
    engine.uninstall(state, "claude", key, retired)


def hook_commands(settings: Path) -> dict[str, list[str]]:
    data = json.loads(settings.read_text())
    return {
        event: [hook["command"] for entry in entries for hook in entry["hooks"]]
        for event, entries in data.get("hooks", {}).items()
    }


def notes(edits: list[engine.FileEdit]) -> list[str]:
    return [note for edit in edits for note in edit.notes]


# -- UC-005: an older setup's entries ----------------------------------------------------------
def test_uc005_setup_migrates_the_hooks_of_an_older_setup(
    project: Path, user_home: Path, tmp_path: Path
) -> None:
    settings = project / ".claude" / "settings.json"
    write_json(
        settings,
        {
            "hooks": {
                "UserPromptSubmit": [
                    {
                        "hooks": [
                            {"type": "command", "command": "thatch echo"},
                            {"type": "command", "command": "notify-send prompt"},
                        ]
                    }
                ],
                "Stop": [command_hook("/usr/local/bin/thatch reminder")],
                "Notification": [command_hook("uv run --project /opt/t thatch notify")],
            }
        },
    )
    context = project_context(project, user_home)
    assert any("older thatch setup" in p for p in target("thatch").problems(context))

    edits = setup(context, tmp_path / "state")

    commands = hook_commands(settings)
    for event in HOOK_EVENTS:  # one hook per event, today's
        thatch_hooks = [c for c in commands[event] if "thatch" in c]
        assert thatch_hooks == [f"thatch hook claude {event}"], event
    assert "notify-send prompt" in commands["UserPromptSubmit"]  # the user's hook stays
    assert "Notification" not in commands  # only the old thatch hook was there
    said = notes(edits)
    assert any("`thatch echo`" in n and "migrated from an older thatch setup" in n for n in said)
    assert not any("older thatch setup" in p for p in target("thatch").problems(context))


def test_uc005_an_older_mcp_server_is_replaced_and_uninstall_does_not_bring_it_back(
    project: Path, user_home: Path, tmp_path: Path
) -> None:
    mcp = project / ".mcp.json"
    write_json(mcp, {"mcpServers": {"thatch": {"command": "thatch", "args": ["serve"]}}})
    context = project_context(project, user_home)

    edits = setup(context, tmp_path / "state")
    server = json.loads(mcp.read_text())["mcpServers"]["thatch"]
    assert server["args"] == ["mcp"]
    assert any("`thatch serve`" in n for n in notes(edits))

    uninstall(context, tmp_path / "state")
    assert not mcp.exists() or "thatch" not in json.loads(mcp.read_text()).get("mcpServers", {})


def test_uc005_an_older_claude_md_block_is_replaced_in_place(
    project: Path, user_home: Path, tmp_path: Path
) -> None:
    claude_md = project / "CLAUDE.md"
    claude_md.write_text("# My project\n\n" + OLD_BLOCK + "\nmy notes after\n")
    context = project_context(project, user_home)

    edits = setup(context, tmp_path / "state")
    text = claude_md.read_text()
    assert "<!-- thatch -->" not in text
    assert "thatch_remember" not in text
    assert text.index("<!-- thatch:begin thatch -->") < text.index("my notes after")
    assert text.startswith("# My project\n")
    assert text.count("thatch:begin") == 1
    assert any("migrated from an older thatch setup" in n for n in notes(edits))


def test_uc005_uninstall_removes_an_older_setups_entries_too(
    project: Path, user_home: Path, tmp_path: Path
) -> None:
    settings = project / ".claude" / "settings.json"
    write_json(settings, {"hooks": {"Stop": [command_hook("thatch echo")]}, "model": "opus"})
    (project / "CLAUDE.md").write_text("mine\n\n" + OLD_BLOCK)
    context = project_context(project, user_home)

    uninstall(context, tmp_path / "state")

    assert json.loads(settings.read_text()) == {"model": "opus"}
    assert (project / "CLAUDE.md").read_text() == "mine\n\n"


def test_uc005_an_unclosed_older_block_is_left_alone(
    project: Path, user_home: Path, tmp_path: Path
) -> None:
    claude_md = project / "CLAUDE.md"
    claude_md.write_text("<!-- thatch -->\nwho wrote this?\n")
    setup(project_context(project, user_home), tmp_path / "state")
    assert claude_md.read_text().startswith("<!-- thatch -->\nwho wrote this?\n")


# -- UC-014: CLAUDE.md drift -------------------------------------------------------------------
def test_uc014_a_block_that_lost_its_end_line_is_reported_and_mended_keeping_user_text(
    project: Path, user_home: Path, tmp_path: Path
) -> None:
    context = project_context(project, user_home)
    state = tmp_path / "state"
    claude_md = project / "CLAUDE.md"
    claude_md.write_text("# Mine\n")
    setup(context, state)
    text = claude_md.read_text().replace("<!-- thatch:end thatch -->\n", "")
    claude_md.write_text(text + "\nmy later notes\n")

    problems = target("thatch").problems(context)
    assert any("lost its end line" in p for p in problems)

    edits = setup(context, state)
    mended = claude_md.read_text()
    assert mended.count("<!-- thatch:end thatch -->") == 1
    assert mended.startswith("# Mine\n")
    assert mended.rstrip().endswith("my later notes")
    assert mended.index("<!-- thatch:end thatch -->") < mended.index("my later notes")
    assert any("lost its end line" in n for n in notes(edits))
    assert not target("thatch").problems(context)


def test_uc014_an_edited_block_is_reported_and_rewritten(
    project: Path, user_home: Path, tmp_path: Path
) -> None:
    context = project_context(project, user_home)
    state = tmp_path / "state"
    setup(context, state)
    claude_md = project / "CLAUDE.md"
    claude_md.write_text(claude_md.read_text().replace("long-term memory", "some memory"))

    assert any(
        "differs from what this version writes" in p for p in target("thatch").problems(context)
    )
    setup(context, state)
    assert instructions_block().strip() in claude_md.read_text()


# -- UC-018: stale skills ----------------------------------------------------------------------
def test_uc018_stale_and_retired_skills_are_reported_and_repaired(
    project: Path, user_home: Path, tmp_path: Path
) -> None:
    context = project_context(project, user_home)
    state = tmp_path / "state"
    setup(context, state)
    skill_dir = user_home / ".claude" / "skills"
    primer = skill_dir / NAMES[0] / "SKILL.md"
    primer.write_text("an older primer\n")
    retired = skill_dir / "thatch-old-helper" / "SKILL.md"
    retired.parent.mkdir()
    retired.write_text("---\nname: thatch-old-helper\n---\n")
    kept = skill_dir / "thatch-mine" / "notes.txt"
    kept.parent.mkdir()
    kept.write_text("the user's")

    problems = target("thatch").problems(context)
    assert any(NAMES[0] in p and "differs" in p for p in problems)
    assert any("thatch-old-helper" in p and "no longer ships" in p for p in problems)

    edits = setup(context, state)
    assert primer.read_text() == skills(BRIEFING)[0].content
    assert not retired.parent.exists()
    assert kept.read_text() == "the user's"  # not only a SKILL.md: not attributable to thatch
    assert any("thatch-old-helper" in n for n in notes(edits))


def test_uc014_cursor_is_recognised_from_cursor_project_dir() -> None:
    installed = plugins_with(thatch_claude.plugin, thatch_cursor.plugin).harnesses()
    assert harness_of({"CURSOR_PROJECT_DIR": "/work/app"}, installed) == "cursor"
    # Cursor runs Claude Code's hooks too: its own variable wins over Claude Code's.
    both = {"CURSOR_VERSION": "1.7", "CLAUDE_PROJECT_DIR": "/work/app"}
    assert harness_of(both, installed) == "cursor"


# -- CLAUDE_CONFIG_DIR -------------------------------------------------------------------------
def test_claude_config_dir_moves_every_user_level_file(user_home: Path, tmp_path: Path) -> None:
    config = tmp_path / "claude-config"
    environ = {"CLAUDE_CONFIG_DIR": str(config)}
    context = global_context(user_home, command=("thatch",), environ=environ)

    setup(context, tmp_path / "state")

    assert "thatch" in json.loads((config / ".claude.json").read_text())["mcpServers"]
    assert hook_commands(config / "settings.json")["Stop"]
    assert "thatch:begin thatch" in (config / "CLAUDE.md").read_text()
    assert (config / "skills" / NAMES[0] / "SKILL.md").exists()
    assert not (user_home / ".claude").exists()
    assert not (user_home / ".claude.json").exists()
    assert not target("thatch").problems(context)
    plain = global_context(user_home, command=("thatch",))
    assert target("thatch").problems(plain)  # ~/.claude has nothing
