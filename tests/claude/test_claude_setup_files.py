"""The files ``thatch setup --claude`` writes, through core's setup engine, against golden trees.

Each case builds a user home and a project in a temporary folder, applies
the Claude target's changes with :mod:`thatch.setup.engine`, and compares
every file under both with ``golden/files/<case>/`` (the temporary folder
written as ``<root>``). The skills are compared with the package's own files
instead, so their text lives in one place. ``THATCH_UPDATE_GOLDEN=1``
rewrites the trees after a deliberate change.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest
from thatch.cli import main
from thatch.instructions.briefing import BRIEFING
from thatch.plugin.jsonc import StrictJsonError
from thatch.plugin.setup import SetupContext
from thatch.setup import engine
from thatch.testing import check_golden_tree, plan_set_up, set_up, text_tree
from thatch_claude.instructions import skills
from thatch_claude.target import ClaudeTarget

GOLDEN = Path(__file__).parent / "golden" / "files"
SKILLS_FOLDER = Path("user") / ".claude" / "skills"

Snapshot = dict[str, str]


def snapshot(root: Path) -> Snapshot:
    """Every file under ``root`` but the state folder: relative path → text, ``<root>`` marked."""
    return text_tree(root, skip=("state",))


def written_skills(root: Path) -> Snapshot:
    folder = root / SKILLS_FOLDER
    return {path.parent.name: path.read_text() for path in sorted(folder.glob("*/SKILL.md"))}


def without_skills(files: Snapshot) -> Snapshot:
    prefix = SKILLS_FOLDER.as_posix() + "/"
    return {path: text for path, text in files.items() if not path.startswith(prefix)}


# -- existing, unrelated configuration ------------------------------------------------
def existing_project(root: Path) -> None:
    """A project and home whose Claude Code config thatch must keep intact."""
    project = root / "shop"
    (project / ".claude").mkdir(parents=True)
    (project / ".mcp.json").write_text(
        '{\n    "mcpServers": {\n        "postgres": {\n'
        '            "command": "npx",\n'
        '            "args": ["-y", "@modelcontextprotocol/server-postgres"]\n'
        "        }\n    }\n}\n"
    )
    settings = {
        "permissions": {"allow": ["Bash(make lint)"]},
        "hooks": {
            "PostToolUse": [
                {
                    "matcher": "Edit|Write",
                    "hooks": [{"type": "command", "command": "make format"}],
                }
            ],
            "Stop": [{"hooks": [{"type": "command", "command": "notify-send done"}]}],
        },
    }
    (project / ".claude" / "settings.json").write_text(json.dumps(settings, indent=2) + "\n")
    # The user's own approval of the postgres server: thatch's joins it.
    local = {"permissions": {"allow": ["Bash(npm test)"]}, "enabledMcpjsonServers": ["postgres"]}
    (project / ".claude" / "settings.local.json").write_text(json.dumps(local, indent=2) + "\n")
    (project / "CLAUDE.md").write_text("# Shop\n\nMoney is in cents. Run `make lint`.\n")
    home = root / "user"
    (home / ".claude").mkdir(parents=True)
    user_config = {
        "numStartups": 12,
        "projects": {"/home/dev/other": {"allowedTools": [], "enabledMcpjsonServers": ["db"]}},
    }
    (home / ".claude.json").write_text(json.dumps(user_config, indent=2) + "\n")
    (home / ".claude" / "settings.json").write_text('{"model": "opus"}\n')
    (home / ".claude" / "CLAUDE.md").write_text("Answer briefly.\n")


def empty(root: Path) -> None:
    (root / "shop").mkdir()
    (root / "user").mkdir()


def project_context(root: Path) -> SetupContext:
    return SetupContext(
        briefing=BRIEFING,
        scope="project",
        project=root / "shop",
        user_home=root / "user",
        command=("thatch",),
    )


def global_context(root: Path) -> SetupContext:
    return SetupContext(
        briefing=BRIEFING,
        scope="global",
        project=None,
        user_home=root / "user",
        command=(str(root / "venv" / "bin" / "thatch"),),
        env={"THATCH_HOME": str(root / "thatch home")},
    )


CASES: dict[str, tuple[Callable[[Path], None], Callable[[Path], SetupContext]]] = {
    "project_empty": (empty, project_context),
    "project_existing": (existing_project, project_context),
    "global_empty": (empty, global_context),
    "global_existing": (existing_project, global_context),
}


def setup(root: Path, context: SetupContext) -> engine.ApplyReport:
    """What ``thatch setup --claude`` does: plan against the manifest, then apply."""
    return set_up(ClaudeTarget(), context, root / "state")


@pytest.fixture
def root(tmp_path: Path) -> Path:
    return tmp_path.resolve()


@pytest.mark.parametrize("case", list(CASES))
def test_setup_writes_the_golden_files(case: str, root: Path) -> None:
    prepare, make_context = CASES[case]
    prepare(root)
    assert setup(root, make_context(root)).changed
    files = snapshot(root)
    check_golden_tree(GOLDEN / case, without_skills(files))
    assert written_skills(root) == {skill.name: skill.content for skill in skills(BRIEFING)}


@pytest.mark.parametrize("case", list(CASES))
def test_a_second_run_changes_nothing(case: str, root: Path) -> None:
    prepare, make_context = CASES[case]
    prepare(root)
    setup(root, make_context(root))
    after_first = snapshot(root)
    context = make_context(root)
    edits = plan_set_up(ClaudeTarget(), context, root / "state")
    assert not any(edit.changed for edit in edits)
    assert not setup(root, context).changed
    assert snapshot(root) == after_first


@pytest.mark.parametrize("case", list(CASES))
def test_uninstall_leaves_everything_as_it_was(case: str, root: Path) -> None:
    prepare, make_context = CASES[case]
    prepare(root)
    before = snapshot(root)
    context = make_context(root)
    setup(root, context)
    assert snapshot(root) != before
    report = engine.uninstall(root / "state", "claude", engine.scope_key(context))
    assert report.changed
    assert snapshot(root) == before
    # Folders thatch created are gone too; the ones that were there stay.
    assert not (root / SKILLS_FOLDER).exists()
    assert (root / "shop").is_dir()
    assert (root / "user").is_dir()


def test_a_project_setup_leaves_the_users_own_settings_alone(root: Path) -> None:
    existing_project(root)
    # ~/.claude.json included: Claude Code moves project approvals out of it when it
    # starts, so an approval written there would be written again by every setup.
    user_files = [
        root / "user" / ".claude" / "settings.json",
        root / "user" / ".claude" / "CLAUDE.md",
        root / "user" / ".claude.json",
    ]
    before = [path.read_text() for path in user_files]
    setup(root, project_context(root))
    assert [path.read_text() for path in user_files] == before


def test_a_project_setup_approves_the_server_in_the_local_settings(root: Path) -> None:
    existing_project(root)
    setup(root, project_context(root))
    local = json.loads((root / "shop" / ".claude" / "settings.local.json").read_text())
    assert local["enabledMcpjsonServers"] == ["postgres", "thatch"]
    assert local["permissions"] == {"allow": ["Bash(npm test)"]}


@pytest.mark.parametrize("make_context", [project_context, global_context])
def test_after_setup_the_target_reports_no_problems(
    make_context: Callable[[Path], SetupContext], root: Path
) -> None:
    existing_project(root)
    context = make_context(root)
    setup(root, context)
    program = root / "venv" / "bin" / "thatch"
    program.parent.mkdir(parents=True)
    program.write_text("#!/bin/sh\n")
    program.chmod(0o755)
    target = ClaudeTarget(which=lambda name: "/usr/bin/thatch" if name == "thatch" else None)
    assert target.problems(context) == []


# -- files Claude Code would ignore ---------------------------------------------------
LENIENT = {
    "shop/.claude/settings.json": '{\n  // the team\'s hooks\n  "hooks": {}\n}\n',
    "shop/.claude/settings.local.json": '{"enabledMcpjsonServers": ["db",]}\n',
    "shop/.mcp.json": '{\n  "mcpServers": {}, /* mine */\n}\n',
    "user/.claude.json": '{\n  "numStartups": 3,\n}\n',
    "user/.claude/settings.json": '{"model": "opus"} // mine\n',
}


@pytest.mark.parametrize("relative", list(LENIENT))
def test_a_file_claude_code_would_ignore_is_refused_before_any_write(
    relative: str, root: Path
) -> None:
    empty(root)
    path = root / relative
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(LENIENT[relative])
    context = global_context(root) if relative.startswith("user/") else project_context(root)
    before = snapshot(root)
    # --dry-run refuses the same way as the setup itself.
    for attempt in (plan_set_up, set_up):
        with pytest.raises(StrictJsonError) as caught:
            attempt(ClaudeTarget(), context, root / "state")
        message = str(caught.value)
        assert message.startswith(f"{path} has a")
        assert "Claude Code reads this file as strict JSON and ignores it whole" in message
        assert "remove them and run thatch setup again" in message
    assert snapshot(root) == before
    assert not (root / "state").exists()


@pytest.mark.parametrize("dry_run", [True, False], ids=["dry-run", "setup"])
def test_the_command_refuses_with_the_reason_and_exits_non_zero(
    dry_run: bool,
    root: Path,
    home: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    empty(root)
    settings = root / "shop" / ".claude" / "settings.json"
    settings.parent.mkdir()
    settings.write_text(LENIENT["shop/.claude/settings.json"])
    monkeypatch.setenv("HOME", str(root / "user"))
    before = snapshot(root)
    args = ["setup", "--claude", "--project", str(root / "shop")]
    status = main([*args, "--dry-run"] if dry_run else args)
    assert status != 0
    error = capsys.readouterr().err
    assert f"{settings} has a comment at line 2; Claude Code reads this file" in error
    assert snapshot(root) == before
