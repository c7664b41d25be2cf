"""The memory workflows, written once in core for every harness (UC-005, UC-014)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from thatch.instructions import workflows
from thatch.instructions.agent import TOOLS
from thatch.instructions.workflows import NAMES
from thatch.plugin.setup import compare_installed


def bare_tool_names(text: str, prefix: str) -> list[str]:
    """Tool names in ``text`` that lack ``prefix``."""
    return [
        match.group(0)
        for tool in TOOLS
        for match in re.finditer(rf"(?<![\w]){tool}\b", text)
        if not text[: match.start()].endswith(prefix)
    ]


def test_uc005_every_workflow_the_nudges_name_is_there() -> None:
    rendered = workflows.workflows()
    assert [workflow.name for workflow in rendered] == list(NAMES)
    assert "thatch-fact-extractor" in NAMES
    assert all(workflow.description and workflow.handoff for workflow in rendered)
    assert all(workflow.body.startswith("# ") for workflow in rendered)


def test_uc014_every_tool_gets_the_harness_prefix() -> None:
    for workflow in workflows.workflows("thatch_", "agent"):
        text = f"{workflow.description}\n{workflow.handoff}\n{workflow.body}"
        assert bare_tool_names(text, "thatch_") == [], workflow.name
        assert "{" not in text.replace("{ ", "")  # no placeholder left unfilled
    texts = "".join(w.body for w in workflows.workflows("thatch_", "agent"))
    assert "thatch_extraction_done" in texts
    assert "thatch_prediction_update" in texts


def test_uc014_the_workflows_call_themselves_by_the_harness_word() -> None:
    (decisions,) = [w for w in workflows.workflows(kind="rule") if w.name.endswith("model")]
    assert "This rule is the procedure" in decisions.body
    assert "skill" not in decisions.body


def test_a_misspelt_placeholder_cannot_reach_an_agent(monkeypatch: pytest.MonkeyPatch) -> None:
    def broken(name: str) -> str:
        return f"---\nname: {name}\ndescription: d\nhandoff: h\n---\nCall `{{memory_recal}}`.\n"

    monkeypatch.setattr(workflows, "_source", broken)
    with pytest.raises(KeyError, match="memory_recal"):
        workflows.workflows()


def test_installed_files_are_compared_by_workflow_name(tmp_path: Path) -> None:
    (tmp_path / "thatch-a.md").write_text("old")
    (tmp_path / "thatch-b.md").write_text("same")
    files = {
        tmp_path / "thatch-a.md": "new",
        tmp_path / "thatch-b.md": "same",
        tmp_path / "thatch-c.md": "x",
    }
    assert compare_installed(files) == (["thatch-c"], ["thatch-a"])
