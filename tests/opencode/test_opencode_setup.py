"""``thatch setup --opencode``: detection and the changes the opencode target asks for.

The changes are compared with golden files in ``tests/data/opencode/setup/``.
After a deliberate change, rewrite them with ``THATCH_UPDATE_GOLDEN=1`` and
review the diff.
"""

from __future__ import annotations

from pathlib import Path

import attrs
import pytest
import setup_changes
import thatch_opencode.plugin
from thatch import testing
from thatch.instructions.briefing import BRIEFING
from thatch.plugin.setup import (
    Change,
    JsonEntry,
    JsonListItem,
    OwnedFile,
    SetupContext,
    SetupTarget,
    TextBlock,
)
from thatch.testing import plugins_with
from thatch.tools import ToolRegistry
from thatch_opencode.instructions import instructions_text
from thatch_opencode.jsplugin import render
from thatch_opencode.target import OpencodeTarget, global_config_folder

GOLDEN = Path(__file__).parent.parent / "data" / "opencode" / "setup"


def target(**found: str) -> OpencodeTarget:
    """The target with a PATH holding exactly ``found`` (program → path) and no XDG folders."""
    return OpencodeTarget(which=found.get, environ={})


def check_golden(name: str, text: str) -> None:
    testing.check_golden(GOLDEN / name, text)


def changes_json(context: SetupContext) -> str:
    return setup_changes.changes_json(target().changes(context), context)


# -- the changes, against golden files ---------------------------------------------
def test_project_changes_match_the_golden_file(project_context: SetupContext) -> None:
    check_golden("changes-project.json", changes_json(project_context))


def test_global_changes_match_the_golden_file(global_context: SetupContext) -> None:
    check_golden("changes-global.json", changes_json(global_context))


def test_the_instructions_match_the_golden_file() -> None:
    check_golden("instructions.md", instructions_text(BRIEFING))


def test_the_plugin_file_matches_the_golden_file(project_context: SetupContext) -> None:
    (plugin,) = [
        change
        for change in target().changes(project_context)
        if isinstance(change, OwnedFile) and change.path.suffix == ".js"
    ]
    check_golden("thatch.js", plugin.content)


# -- the changes, one by one -------------------------------------------------------
def changes_of(context: SetupContext) -> list[Change]:
    return list(target().changes(context))


def test_the_mcp_server_runs_the_setup_command_with_its_environment(
    global_context: SetupContext,
) -> None:
    context = attrs.evolve(global_context, env={"THATCH_HOME": "/srv/h"})
    (server,) = [c for c in changes_of(context) if isinstance(c, JsonEntry)]
    assert server.keys == ("mcp", "thatch")
    assert server.value == {
        "type": "local",
        "command": ["/opt/thatch tools/bin/thatch", "mcp"],
        "enabled": True,
        "environment": {"THATCH_HOME": "/srv/h"},
    }


def test_the_plugin_is_rendered_with_the_command_and_environment(
    project_context: SetupContext, project: Path
) -> None:
    (plugin,) = [
        c
        for c in changes_of(project_context)
        if isinstance(c, OwnedFile) and c.path.name == "thatch.js"
    ]
    assert plugin.path == project / ".opencode" / "plugins" / "thatch.js"
    assert plugin.content == render(("thatch",), {"THATCH_HOME": "/srv/thatch-home"})
    assert not plugin.executable


def test_a_project_gets_an_agents_md_block(project_context: SetupContext, project: Path) -> None:
    (block,) = [c for c in changes_of(project_context) if isinstance(c, TextBlock)]
    assert (block.path, block.name, block.text) == (
        project / "AGENTS.md",
        "thatch",
        instructions_text(BRIEFING),
    )


def test_a_global_setup_lists_its_own_instructions_file(
    global_context: SetupContext, user_home: Path
) -> None:
    changes = changes_of(global_context)
    folder = user_home / ".config" / "opencode"
    (listed,) = [c for c in changes if isinstance(c, JsonListItem)]
    assert (listed.path, listed.keys, listed.item) == (
        folder / "opencode.json",
        ("instructions",),
        str(folder / "thatch-instructions.md"),
    )
    owned = {c.path: c.content for c in changes if isinstance(c, OwnedFile)}
    assert owned[folder / "thatch-instructions.md"] == instructions_text(BRIEFING)
    assert folder / "plugins" / "thatch.js" in owned
    assert not any(isinstance(c, TextBlock) for c in changes)


def test_an_existing_opencode_jsonc_is_edited_instead(
    project_context: SetupContext, project: Path
) -> None:
    (project / "opencode.jsonc").write_text('{\n  // mine\n  "theme": "dark"\n}\n')
    (server,) = [c for c in changes_of(project_context) if isinstance(c, JsonEntry)]
    assert server.path == project / "opencode.jsonc"


def test_a_global_opencode_jsonc_is_edited_instead(
    global_context: SetupContext, user_home: Path
) -> None:
    # opencode writes this file itself on its first run.
    folder = user_home / ".config" / "opencode"
    folder.mkdir(parents=True)
    (folder / "opencode.jsonc").write_text('{\n  "$schema": "https://opencode.ai/config.json"\n}\n')
    paths = {c.path for c in changes_of(global_context) if isinstance(c, JsonEntry | JsonListItem)}
    assert paths == {folder / "opencode.jsonc"}


def test_a_project_setup_needs_a_project(project_context: SetupContext) -> None:
    with pytest.raises(ValueError, match="--project DIR"):
        target().changes(attrs.evolve(project_context, project=None))


def test_xdg_config_home_counts_only_for_the_real_home(tmp_path: Path) -> None:
    environ = {"XDG_CONFIG_HOME": str(tmp_path / "xdg")}
    assert global_config_folder(Path.home(), environ) == tmp_path / "xdg" / "opencode"
    assert global_config_folder(tmp_path, environ) == tmp_path / ".config" / "opencode"
    assert global_config_folder(Path.home(), {"XDG_CONFIG_HOME": "relative"}) == (
        Path.home() / ".config" / "opencode"
    )


# -- detection ---------------------------------------------------------------------
def test_nothing_is_detected_in_an_empty_home(project_context: SetupContext) -> None:
    detection = target().detect(project_context)
    assert (detection.found, detection.evidence) == (False, ())


def test_the_binary_on_path_is_evidence(project_context: SetupContext) -> None:
    detection = target(opencode="/usr/bin/opencode").detect(project_context)
    assert detection.found
    assert detection.evidence == ("opencode on PATH (/usr/bin/opencode)",)


@pytest.mark.parametrize("name", ["opencode.json", "opencode.jsonc", ".opencode"])
def test_project_files_are_evidence(
    project_context: SetupContext, project: Path, name: str
) -> None:
    if name.startswith("."):
        (project / name).mkdir()
    else:
        (project / name).write_text("{}")
    assert target().detect(project_context).evidence == (str(project / name),)


def test_the_config_folder_is_evidence(global_context: SetupContext, user_home: Path) -> None:
    folder = user_home / ".config" / "opencode"
    folder.mkdir(parents=True)
    assert target().detect(global_context).evidence == (str(folder),)


def test_a_global_context_ignores_project_folders(
    global_context: SetupContext, project: Path
) -> None:
    (project / ".opencode").mkdir()
    assert not target().detect(global_context).found


def test_the_plugin_offers_the_opencode_harness() -> None:
    (offered,) = plugins_with(thatch_opencode.plugin).harnesses().values()
    assert isinstance(offered.setup_target(), SetupTarget)  # type: ignore[attr-defined]
    assert (offered.name, offered.title) == ("opencode", "opencode")


def test_the_instructions_name_every_tool_as_opencode_shows_it() -> None:
    text = instructions_text(BRIEFING)
    named = [tool["name"] for tool in ToolRegistry().describe() if tool["name"] in text]
    assert {"memory_recall", "memory_remember", "extraction_done", "prediction_update"} <= set(
        named
    )
    for tool in named:
        assert text.count(tool) == text.count(f"`thatch_{tool}`"), tool
