"""`thatch setup` through the real console script: choose, preview, apply, repeat, undo."""

from __future__ import annotations

import os
from pathlib import Path

import anyio
import pytest
from mcp import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client
from thatch.testing import tree

from .conftest import THATCH, Runner, as_json

USER_RULES = """{
  // my own hooks
  "version": 1,
  "hooks": {"stop": [{"command": "notify-send done"}]}
}
"""


@pytest.fixture
def project(tmp_path: Path) -> Path:
    folder = tmp_path / "project"
    (folder / ".cursor").mkdir(parents=True)
    (folder / ".cursor" / "hooks.json").write_text(USER_RULES)
    return folder


def test_setup_previews_applies_repeats_and_undoes(
    thatch: Runner, project: Path, user_home: Path
) -> None:
    env = {"HOME": str(user_home)}
    before = tree(project)

    preview = thatch("setup", "--cursor", "--dry-run", cwd=project, env=env)
    assert "+++ " + str(project / ".cursor" / "mcp.json") in preview.stdout
    assert tree(project) == before  # a dry run writes nothing

    applied = as_json(thatch("setup", "--cursor", "--json", cwd=project, env=env))
    assert applied[0]["harness"] == "cursor"
    hooks = (project / ".cursor" / "hooks.json").read_text()
    assert "// my own hooks" in hooks  # the user's comment and hook survive
    assert "notify-send done" in hooks
    assert "hook cursor beforeSubmitPrompt" in hooks
    assert applied[0]["backups"]  # the user's file was copied before the first change

    again = thatch("setup", "--cursor", cwd=project, env=env)
    assert "nothing to change" in again.stdout

    status = as_json(thatch("setup", "--status", "--json", cwd=project, env=env))
    assert {"claude", "cursor", "opencode"} <= set(status["plugins"])
    assert [i["harness"] for i in status["installed"]] == ["cursor"]

    thatch("setup", "--cursor", "--uninstall", cwd=project, env=env)
    assert tree(project) == before


def test_setup_without_a_choice_in_a_script_says_how(thatch: Runner, project: Path) -> None:
    completed = thatch("setup", cwd=project, check=False)
    assert completed.returncode == 2
    # One flag per installed harness, the example plugin's too.
    assert "thatch setup --claude --cursor --example --opencode" in completed.stderr


def test_uninstall_without_a_choice_names_the_uninstall_flags(
    thatch: Runner, project: Path
) -> None:
    for extra in ((), ("--yes",)):  # --yes never guesses what to remove
        completed = thatch("setup", "--uninstall", *extra, cwd=project, check=False)
        assert completed.returncode == 2
        assert "thatch setup --uninstall --claude --cursor --example --opencode" in (
            completed.stderr
        )
        assert "to set up:" not in completed.stderr


def test_a_missing_project_folder_is_named(thatch: Runner, tmp_path: Path) -> None:
    completed = thatch("setup", "--cursor", "--project", str(tmp_path / "nope"), check=False)
    assert completed.returncode == 2
    assert "nope does not exist" in completed.stderr


async def _instructions(params: StdioServerParameters) -> str:
    with open(os.devnull, "w") as quiet:
        async with (
            stdio_client(params, errlog=quiet) as (read, write),
            ClientSession(read, write) as session,
        ):
            result = await session.initialize()
            return result.instructions or ""


@pytest.mark.slow
def test_thatch_mcp_tells_the_agent_what_its_harness_lacks(
    home: Path, project: Path, user_home: Path
) -> None:
    params = StdioServerParameters(
        command=str(THATCH),
        args=["mcp", "--in-process"],
        env={
            "THATCH_HOME": str(home),
            "HOME": str(user_home),
            "THATCH_HARNESS": "claude",
            "CLAUDE_PROJECT_DIR": str(project),
            "PATH": os.environ.get("PATH", ""),
        },
        cwd=project,
    )
    instructions = anyio.run(_instructions, params)
    assert "Claude Code setup is incomplete" in instructions
    assert "thatch setup --claude" in instructions
    assert "memory_recall" in instructions  # the usual instructions follow


def test_a_refused_claude_file_leaves_every_harness_unwritten(
    thatch: Runner, project: Path, user_home: Path
) -> None:
    settings = project / ".claude" / "settings.json"
    settings.parent.mkdir()
    settings.write_text('{\n  // Claude Code ignores this whole file\n  "hooks": {}\n}\n')
    before = tree(project)
    refused = thatch(
        "setup", "--cursor", "--claude", cwd=project, env={"HOME": str(user_home)}, check=False
    )
    assert refused.returncode != 0
    assert str(settings) in refused.stderr
    assert "strict JSON" in refused.stderr
    assert tree(project) == before  # Cursor's files were planned, never written


@pytest.mark.parametrize("dry_run", [False, True], ids=["write", "dry-run"])
def test_a_link_a_cloned_repository_plants_is_not_written_through(
    thatch: Runner, tmp_path: Path, user_home: Path, dry_run: bool
) -> None:
    project, outside = tmp_path / "cloned", tmp_path / "outside"
    project.mkdir()
    outside.mkdir()
    notes = outside / "notes.md"
    notes.write_text("private notes\n")
    (project / "CLAUDE.md").symlink_to(Path("..") / "outside" / "notes.md")
    args = ["setup", "--claude", *(["--dry-run"] if dry_run else [])]
    refused = thatch(*args, cwd=project, env={"HOME": str(user_home)}, check=False)
    assert refused.returncode != 0
    assert f"{project / 'CLAUDE.md'} is a symbolic link to {notes}" in refused.stderr
    assert notes.read_text() == "private notes\n"
    assert sorted(p.name for p in project.iterdir()) == ["CLAUDE.md"]


def test_setup_writes_the_hook_table_the_hooks_read(
    thatch: Runner, home: Path, project: Path, user_home: Path
) -> None:
    from thatch import rundir
    from thatch.hookcmd import answers

    env = {"HOME": str(user_home)}
    state_dir = rundir.locate({"THATCH_HOME": str(home)}, home=str(home)).state_dir
    thatch("setup", "--cursor", "--dry-run", cwd=project, env=env)
    assert answers.load(state_dir) is None  # a dry run writes nothing
    thatch("setup", "--cursor", cwd=project, env=env)
    table = answers.load(state_dir)
    assert table is not None
    # Every installed harness, not only the one set up: Cursor runs Claude Code's hooks too.
    assert {"CLAUDE_PROJECT_DIR", "CURSOR_PROJECT_DIR"} <= set(table.environment)
