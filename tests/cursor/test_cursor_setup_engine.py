"""What ``thatch setup --cursor`` writes, through core's setup engine, against golden trees.

Each case builds a user home and a project in a temporary folder, applies
the Cursor target's changes with :mod:`thatch.setup.engine`, and compares
every file under both with ``tests/data/cursor/setup/files/<case>/`` (the
temporary folder written as ``<root>``). The rule files are compared with
the text the plugin renders instead, so their text lives in one place.
``THATCH_UPDATE_GOLDEN=1`` rewrites the trees after a deliberate change.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest
from thatch.instructions.briefing import BRIEFING
from thatch.plugin.setup import SetupContext
from thatch.setup import engine
from thatch.testing import check_golden_tree, plan_set_up, set_up, tear_down, text_tree, tree
from thatch_cursor.rules import rule_text, workflow_rules
from thatch_cursor.target import CursorTarget

GOLDEN = Path(__file__).parent.parent / "data" / "cursor" / "setup" / "files"
RULE = Path("shop") / ".cursor" / "rules" / "thatch.mdc"

Snapshot = dict[str, str]


def thatch_on_path(name: str) -> str | None:
    return "/usr/local/bin/thatch" if name == "thatch" else None


TARGET = CursorTarget(which=thatch_on_path)


def snapshot(root: Path) -> Snapshot:
    """Every file under ``root`` but the state folder: relative path → text, ``<root>`` marked."""
    return text_tree(root, skip=("state",))


# -- the cases ---------------------------------------------------------------------
def existing_project(root: Path) -> None:
    """A project whose own Cursor hooks, MCP servers and rules thatch must keep intact."""
    cursor = root / "shop" / ".cursor"
    (cursor / "rules").mkdir(parents=True)
    (cursor / "hooks.json").write_text(
        "{\n"
        '  "version": 1,\n'
        '  "hooks": {\n'
        '    "afterFileEdit": [{"command": "./scripts/format.sh"}],\n'
        '    "postToolUse": [{"command": "./scripts/audit.sh", "timeout": 5}]\n'
        "  }\n"
        "}\n"
    )
    (cursor / "mcp.json").write_text(
        json.dumps({"mcpServers": {"postgres": {"command": "npx", "args": ["-y", "pg-mcp"]}}})
        + "\n"
    )
    (cursor / "rules" / "style.mdc").write_text("---\nalwaysApply: true\n---\nTabs, not spaces.\n")


def existing_global(root: Path) -> None:
    """A user whose hooks.json holds a version thatch must not overwrite, with comments."""
    cursor = root / "user" / ".cursor"
    cursor.mkdir(parents=True)
    (cursor / "hooks.json").write_text(
        "// my hooks\n"
        "{\n"
        '  "version": 2,\n'
        '  "hooks": {\n'
        '    "stop": [{"command": "notify-send done"}], // ping me\n'
        "  },\n"
        "}\n"
    )


def nothing(root: Path) -> None:
    (root / "shop").mkdir()


CASES: dict[str, tuple[str, Callable[[Path], None]]] = {
    "project_empty": ("project", nothing),
    "project_existing": ("project", existing_project),
    "global_empty": ("global", nothing),
    "global_existing": ("global", existing_global),
}


@pytest.fixture(params=sorted(CASES))
def case(request: pytest.FixtureRequest, tmp_path: Path) -> tuple[str, Path, SetupContext]:
    """A case's name, its root folder (user home, project, state) and its setup context."""
    name = request.param
    scope, build = CASES[name]
    root = tmp_path / "root"
    (root / "user").mkdir(parents=True)
    build(root)
    context = SetupContext(
        briefing=BRIEFING,
        scope=scope,
        project=root / "shop" if scope == "project" else None,
        user_home=root / "user",
        command=("thatch",),
        env={"THATCH_HOME": str(root / "thatch home")},
    )
    return name, root, context


def setup(root: Path, context: SetupContext) -> engine.ApplyReport:
    """What ``thatch setup --cursor`` does for ``context``."""
    return set_up(TARGET, context, root / "state")


# -- tests -------------------------------------------------------------------------
def test_setup_writes_the_golden_files(case: tuple[str, Path, SetupContext]) -> None:
    name, root, context = case
    assert setup(root, context).changed
    files = snapshot(root)
    if context.scope == "project":
        assert files.pop(RULE.as_posix()) == rule_text(BRIEFING)
        for file_name, text in workflow_rules(BRIEFING).items():
            assert files.pop((RULE.parent / file_name).as_posix()) == text
    check_golden_tree(GOLDEN / name, files)


def test_setup_keeps_everything_the_user_had(case: tuple[str, Path, SetupContext]) -> None:
    _, root, context = case
    before = {
        path: json.loads(text)
        for path, text in snapshot(root).items()
        if path.endswith(".json") and not text.lstrip().startswith("//")
    }
    setup(root, context)
    for path, data in before.items():
        after = json.loads((root / path).read_text())
        for key, value in data.get("mcpServers", {}).items():
            assert after["mcpServers"][key] == value
        if path.endswith("hooks.json"):
            assert after.get("version") == data.get("version", 1)
        for event, entries in data.get("hooks", {}).items():
            assert after["hooks"][event][: len(entries)] == entries


def test_a_version_the_user_chose_is_left_alone(tmp_path: Path) -> None:
    root = tmp_path / "root"
    (root / "user").mkdir(parents=True)
    existing_global(root)
    context = SetupContext(
        briefing=BRIEFING, scope="global", project=None, user_home=root / "user", command=("t",)
    )
    setup(root, context)
    text = (root / "user" / ".cursor" / "hooks.json").read_text()
    assert '"version": 2' in text
    assert '"version": 1' not in text


def test_a_second_run_changes_nothing(case: tuple[str, Path, SetupContext]) -> None:
    _, root, context = case
    setup(root, context)
    first = snapshot(root)
    edits = plan_set_up(TARGET, context, root / "state")
    assert not any(edit.changed for edit in edits)
    assert not setup(root, context).changed
    assert snapshot(root) == first


def test_uninstall_leaves_the_folders_as_they_were(case: tuple[str, Path, SetupContext]) -> None:
    _, root, context = case
    before = tree(root, skip=("state",))
    setup(root, context)
    report = tear_down(TARGET, context, root / "state")
    assert report.changed
    assert tree(root, skip=("state",)) == before


def test_after_setup_the_target_reports_no_problem(case: tuple[str, Path, SetupContext]) -> None:
    _, root, context = case
    assert TARGET.problems(context)
    setup(root, context)
    assert TARGET.problems(context) == []


def test_dry_run_shows_each_hook_it_would_add(tmp_path: Path) -> None:
    project = tmp_path / "shop"
    project.mkdir()
    context = SetupContext(
        briefing=BRIEFING, scope="project", project=project, user_home=tmp_path, command=("thatch",)
    )
    edits = engine.plan(TARGET.changes(context))
    shown = engine.diff(edits)
    for event in ("sessionStart", "beforeSubmitPrompt", "postToolUse", "stop"):
        assert f"thatch hook cursor {event}" in shown
    assert not (project / ".cursor").exists()
