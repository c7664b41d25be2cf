"""The opencode target through core's setup engine: what lands on disk, and what problems see.

Golden files in ``tests/data/opencode/setup/engine/`` hold the files before
and after a setup; rewrite them with ``THATCH_UPDATE_GOLDEN=1`` after a
deliberate change and review the diff.
"""

from __future__ import annotations

import json
from pathlib import Path

import attrs
import pytest
from thatch import testing
from thatch.instructions.briefing import BRIEFING
from thatch.instructions.workflows import NAMES
from thatch.plugin.setup import SetupContext
from thatch.setup import engine
from thatch.testing import check_golden, tree
from thatch_opencode.instructions import instructions_text
from thatch_opencode.jsplugin import render
from thatch_opencode.target import OpencodeTarget

GOLDEN = Path(__file__).parent.parent / "data" / "opencode" / "setup" / "engine"

#: How ``which`` sees PATH in these tests: thatch and opencode are installed.
ON_PATH = {"thatch": "/usr/local/bin/thatch", "opencode": "/usr/local/bin/opencode"}


def opencode() -> OpencodeTarget:
    return OpencodeTarget(which=ON_PATH.get, environ={})


def set_up(context: SetupContext, state: Path) -> engine.ApplyReport:
    """``thatch setup --opencode`` for ``context``, as the CLI drives the engine."""
    return testing.set_up(opencode(), context, state)


def tear_down(context: SetupContext, state: Path) -> engine.ApplyReport:
    """``thatch setup --opencode --uninstall`` for ``context``."""
    return testing.tear_down("opencode", context, state)


def golden(name: str, text: str) -> None:
    check_golden(GOLDEN / name, text)


@pytest.fixture
def existing(project: Path) -> dict[str, object]:
    """A project with a commented opencode.jsonc holding another MCP server, and an AGENTS.md."""
    (project / "opencode.jsonc").write_text(
        (GOLDEN / "existing" / "opencode.jsonc.before").read_text(encoding="utf-8")
    )
    (project / "AGENTS.md").write_text("# Shop\n\nRun `make test` before each commit.\n")
    return tree(project)


# -- an empty project ----------------------------------------------------------------
def test_an_empty_project_gets_the_golden_files(
    project_context: SetupContext, project: Path, state: Path
) -> None:
    set_up(project_context, state)
    golden("empty/opencode.json", (project / "opencode.json").read_text())
    golden("empty/AGENTS.md", (project / "AGENTS.md").read_text())
    plugin = project / ".opencode" / "plugins" / "thatch.js"
    assert plugin.read_text() == render(("thatch",), {"THATCH_HOME": "/srv/thatch-home"})
    assert sorted(tree(project)) == [
        ".opencode/",
        ".opencode/agents/",
        *(f".opencode/agents/{name}.md" for name in sorted(NAMES)),
        ".opencode/plugins/",
        ".opencode/plugins/thatch.js",
        "AGENTS.md",
        "opencode.json",
    ]


def test_a_second_run_changes_nothing(
    project_context: SetupContext, project: Path, state: Path
) -> None:
    set_up(project_context, state)
    before = tree(project)
    report = set_up(project_context, state)
    assert not report.changed
    assert tree(project) == before


def test_uninstall_leaves_an_empty_project_empty(
    project_context: SetupContext, project: Path, state: Path
) -> None:
    set_up(project_context, state)
    tear_down(project_context, state)
    assert tree(project) == {}


# -- a project with its own opencode config ------------------------------------------------
def test_existing_config_is_kept_with_its_comments(
    project_context: SetupContext, project: Path, state: Path, existing: dict[str, object]
) -> None:
    set_up(project_context, state)
    assert not (project / "opencode.json").exists()
    golden("existing/opencode.jsonc", (project / "opencode.jsonc").read_text())
    golden("existing/AGENTS.md", (project / "AGENTS.md").read_text())


def test_a_second_run_on_existing_config_changes_nothing(
    project_context: SetupContext, project: Path, state: Path, existing: dict[str, object]
) -> None:
    set_up(project_context, state)
    before = tree(project)
    assert not set_up(project_context, state).changed
    assert tree(project) == before


def test_uninstall_restores_the_existing_config(
    project_context: SetupContext, project: Path, state: Path, existing: dict[str, object]
) -> None:
    set_up(project_context, state)
    tear_down(project_context, state)
    assert tree(project) == existing


def test_a_new_command_replaces_the_server_and_plugin(
    project_context: SetupContext, project: Path, state: Path
) -> None:
    set_up(project_context, state)
    moved = attrs.evolve(project_context, command=("/opt/venv/bin/thatch",))
    set_up(moved, state)
    config = json.loads((project / "opencode.json").read_text())
    assert config["mcp"]["thatch"]["command"] == ["/opt/venv/bin/thatch", "mcp"]
    plugin = (project / ".opencode" / "plugins" / "thatch.js").read_text()
    assert plugin == render(("/opt/venv/bin/thatch",), {"THATCH_HOME": "/srv/thatch-home"})
    tear_down(moved, state)
    assert tree(project) == {}


# -- global ------------------------------------------------------------------------
def test_a_global_setup_writes_the_golden_files(
    global_context: SetupContext, user_home: Path, state: Path
) -> None:
    set_up(global_context, state)
    folder = user_home / ".config" / "opencode"
    config = (folder / "opencode.json").read_text().replace(str(user_home), "<home>")
    golden("global/opencode.json", config)
    assert (folder / "thatch-instructions.md").read_text() == instructions_text(BRIEFING)
    assert (folder / "plugins" / "thatch.js").read_text() == render(
        ("/opt/thatch tools/bin/thatch",), {}
    )
    before = tree(user_home)
    assert not set_up(global_context, state).changed
    assert tree(user_home) == before
    tear_down(global_context, state)
    assert tree(user_home) == {}


def test_a_global_setup_keeps_the_config_opencode_wrote(
    global_context: SetupContext, user_home: Path, state: Path
) -> None:
    folder = user_home / ".config" / "opencode"
    folder.mkdir(parents=True)
    (folder / "opencode.jsonc").write_text('{\n  "$schema": "https://opencode.ai/config.json"\n}\n')
    before = tree(user_home)
    set_up(global_context, state)
    assert not (folder / "opencode.json").exists()
    config = (folder / "opencode.jsonc").read_text().replace(str(user_home), "<home>")
    golden("global/opencode.jsonc", config)
    tear_down(global_context, state)
    assert tree(user_home) == before


# -- problems ------------------------------------------------------------------------
def problems(context: SetupContext, **on_path: str | None) -> list[str]:
    path = {**ON_PATH, **on_path}
    return list(OpencodeTarget(which=path.get, environ={}).problems(context))


def test_a_fresh_project_setup_has_no_problems(project_context: SetupContext, state: Path) -> None:
    set_up(project_context, state)
    assert problems(project_context) == []
    # thatch mcp asks with the bare command and no environment: still fine.
    assert problems(attrs.evolve(project_context, env={})) == []


def test_a_fresh_global_setup_has_no_problems(
    global_context: SetupContext, state: Path, tmp_path: Path
) -> None:
    program = tmp_path / "bin" / "thatch"
    program.parent.mkdir()
    program.write_text("#!/bin/sh\n")
    program.chmod(0o755)
    context = attrs.evolve(global_context, command=(str(program),))
    set_up(context, state)
    assert problems(context) == []


def test_nothing_set_up_lists_each_missing_piece(project_context: SetupContext) -> None:
    found = problems(project_context)
    assert len(found) == 4
    assert "does not register the thatch MCP server" in found[0]
    assert "thatch.js is missing" in found[1]
    assert "has no thatch instructions block" in found[2]
    assert "workflow agents thatch-project-primer, thatch-fact-extractor" in found[3]
    assert all("thatch setup --opencode --project" in problem for problem in found)


def edit_config(project: Path, edit: dict[str, object]) -> None:
    path = project / "opencode.json"
    config = json.loads(path.read_text())
    config["mcp"]["thatch"].update(edit)
    path.write_text(json.dumps(config))


@pytest.mark.parametrize(
    ("edit", "expected"),
    [
        ({"enabled": False}, "the thatch MCP server is disabled"),
        ({"command": ["thatch", "serve"]}, "does not run 'thatch mcp'"),
        ({"type": "remote"}, "does not run 'thatch mcp'"),
    ],
)
def test_a_changed_server_entry_is_a_problem(
    project_context: SetupContext,
    project: Path,
    state: Path,
    edit: dict[str, object],
    expected: str,
) -> None:
    set_up(project_context, state)
    edit_config(project, edit)
    (problem,) = problems(project_context)
    assert expected in problem
    assert str(project / "opencode.json") in problem


def test_thatch_missing_from_path_is_a_problem_twice(
    project_context: SetupContext, state: Path
) -> None:
    set_up(project_context, state)
    found = problems(project_context, thatch=None)
    assert len(found) == 2  # the MCP server and the plugin both run it
    unfound = "'thatch', which is not on the PATH harnesses run commands with"
    assert all(unfound in problem for problem in found)


def test_an_absolute_command_that_is_gone_is_a_problem(
    global_context: SetupContext, state: Path
) -> None:
    set_up(global_context, state)
    found = problems(global_context)
    assert len(found) == 2
    assert all(
        "'/opt/thatch tools/bin/thatch', which is not an executable file" in p for p in found
    )
    assert all("setup --opencode --global`" in p for p in found)


def test_a_plugin_from_another_version_is_a_problem(
    project_context: SetupContext, project: Path, state: Path
) -> None:
    set_up(project_context, state)
    plugin = project / ".opencode" / "plugins" / "thatch.js"
    text = plugin.read_text()
    first, rest = text.split("\n", 1)
    plugin.write_text(first.replace("(template ", "(template 0") + "\n" + rest)
    (problem,) = problems(project_context)
    assert "another version of thatch-opencode" in problem


def test_a_removed_block_is_a_problem(
    project_context: SetupContext, project: Path, state: Path
) -> None:
    set_up(project_context, state)
    (project / "AGENTS.md").write_text("# Shop\n")
    (problem,) = problems(project_context)
    assert "AGENTS.md has no thatch instructions block" in problem


def test_a_broken_config_names_the_place(
    project_context: SetupContext, project: Path, state: Path
) -> None:
    set_up(project_context, state)
    (project / "opencode.jsonc").write_text('{\n  "theme": "dark",,\n}\n')
    found = problems(project_context)
    assert any("opencode.jsonc line 2" in problem for problem in found)


def test_the_server_in_opencode_jsonc_wins(
    project_context: SetupContext, project: Path, state: Path
) -> None:
    # opencode reads opencode.jsonc over opencode.json: a disabled server there counts.
    set_up(project_context, state)
    server = {"type": "local", "command": ["thatch", "mcp"], "enabled": False}
    (project / "opencode.jsonc").write_text(json.dumps({"mcp": {"thatch": server}}))
    (problem,) = problems(project_context)
    assert "opencode.jsonc: the thatch MCP server is disabled" in problem


def test_global_instructions_must_be_listed_and_present(
    global_context: SetupContext, user_home: Path, state: Path
) -> None:
    context = attrs.evolve(global_context, command=("thatch",))
    set_up(context, state)
    folder = user_home / ".config" / "opencode"
    (folder / "thatch-instructions.md").unlink()
    (problem,) = problems(context)
    assert "thatch-instructions.md is missing" in problem
    config = json.loads((folder / "opencode.json").read_text())
    config["instructions"] = []
    (folder / "opencode.json").write_text(json.dumps(config))
    (problem,) = problems(context)
    assert "does not list" in problem
    assert '"instructions"' in problem
