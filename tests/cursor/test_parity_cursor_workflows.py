"""``thatch setup --cursor`` gives Cursor the memory workflows as rules (UC-005, UC-014)."""

from __future__ import annotations

from pathlib import Path

from thatch.instructions.agent import TOOLS
from thatch.instructions.workflows import NAMES
from thatch.plugin.setup import SetupContext
from thatch.testing import plan_set_up, set_up, tear_down
from thatch_cursor.target import CursorTarget


def thatch_on_path(name: str) -> str | None:
    return "/usr/local/bin/thatch" if name == "thatch" else None


TARGET = CursorTarget(which=thatch_on_path)


def rules_folder(context: SetupContext) -> Path:
    assert context.project is not None
    return context.project / ".cursor" / "rules"


def front_matter(text: str) -> dict[str, str]:
    _, front, _ = text.split("---\n", 2)
    return dict(line.split(":", 1) for line in front.splitlines())


def test_uc005_a_project_setup_writes_one_rule_per_workflow(
    project_context: SetupContext, state: Path
) -> None:
    set_up(TARGET, project_context, state)
    folder = rules_folder(project_context)
    for name in NAMES:
        text = (folder / f"{name}.mdc").read_text(encoding="utf-8")
        fields = front_matter(text)
        # Agent-requested: Cursor shows the description and the agent pulls the rule in.
        assert fields["alwaysApply"].strip() == "false"
        assert fields["description"].strip()
        assert fields["globs"].strip() == ""
    assert TARGET.problems(project_context) == []


def test_uc005_dry_run_shows_the_rules_and_uninstall_removes_them(
    project_context: SetupContext, state: Path
) -> None:
    planned = {edit.path.name for edit in plan_set_up(TARGET, project_context, state)}
    assert {f"{name}.mdc" for name in NAMES} <= planned
    set_up(TARGET, project_context, state)
    tear_down(TARGET, project_context, state)
    assert not rules_folder(project_context).exists()


def test_uc005_missing_and_stale_rules_are_problems(
    project_context: SetupContext, state: Path
) -> None:
    set_up(TARGET, project_context, state)
    folder = rules_folder(project_context)
    (folder / "thatch-fact-extractor.mdc").unlink()
    (folder / "thatch-decision-model.mdc").write_text("---\nalwaysApply: false\n---\nold\n")
    problems = TARGET.problems(project_context)
    assert len(problems) == 2
    missing, stale = problems
    assert "thatch-fact-extractor" in missing
    assert "missing" in missing
    assert "thatch-decision-model" in stale
    assert "out of date" in stale
    assert all("thatch setup --cursor --project" in problem for problem in problems)


def test_uc005_a_global_setup_has_no_rules_cursor_would_not_read(
    global_context: SetupContext, state: Path
) -> None:
    set_up(TARGET, global_context, state)
    assert not (global_context.user_home / ".cursor" / "rules").exists()


def test_uc014_the_rules_name_tools_as_cursor_shows_them(project_context: SetupContext) -> None:
    paths = {change.path.name: change for change in TARGET.changes(project_context)}
    extractor = paths["thatch-fact-extractor.mdc"].content  # type: ignore[union-attr]
    assert "`extraction_done`" in extractor
    assert "thatch_extraction_done" not in extractor
    always = paths["thatch.mdc"].content  # type: ignore[union-attr]
    assert all(f"`- {name}`" not in always and f"`{name}`" in always for name in NAMES)
    assert all(f"`{tool}`" in always for tool in TOOLS)
