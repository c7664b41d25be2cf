"""``thatch setup --cursor``: detection and the changes the Cursor target asks for.

The changes are compared with golden files in ``tests/data/cursor/setup/``.
After a deliberate change, rewrite them with ``THATCH_UPDATE_GOLDEN=1`` and
review the diff.
"""

from __future__ import annotations

import shlex
from pathlib import Path

import pytest
import setup_changes
import thatch_cursor.plugin
from thatch import testing
from thatch.instructions import agent as agent_instructions
from thatch.instructions.briefing import BRIEFING
from thatch.plugin.setup import (
    JsonEntry,
    JsonListItem,
    OwnedFile,
    SetupContext,
    SetupTarget,
)
from thatch.testing import plugins_with
from thatch_cursor.target import CursorTarget

GOLDEN = Path(__file__).parent.parent / "data" / "cursor" / "setup"
EVENTS = [
    "sessionStart",
    "beforeSubmitPrompt",
    "postToolUse",
    "postToolUseFailure",
    "stop",
    "preCompact",
]


def target(**found: str) -> CursorTarget:
    """The target with a PATH holding exactly ``found`` (program → path)."""
    return CursorTarget(which=found.get)


def check_golden(name: str, text: str) -> None:
    testing.check_golden(GOLDEN / name, text)


def changes_json(context: SetupContext) -> str:
    return setup_changes.changes_json(target().changes(context), context)


# -- the changes, against golden files ---------------------------------------------
def test_project_changes_match_the_golden_file(project_context: SetupContext) -> None:
    check_golden("changes-project.json", changes_json(project_context))


def test_global_changes_match_the_golden_file(global_context: SetupContext) -> None:
    check_golden("changes-global.json", changes_json(global_context))


def test_the_rule_file_matches_the_golden_file(project_context: SetupContext) -> None:
    rule = always_applied_rule(project_context)
    assert rule.path == project_context.project / ".cursor" / "rules" / "thatch.mdc"
    check_golden("thatch.mdc", rule.content)


def test_the_rule_always_applies_and_teaches_every_tool(project_context: SetupContext) -> None:
    rule = always_applied_rule(project_context)
    front, body = rule.content.removeprefix("---\n").split("\n---\n", 1)
    keys = dict(line.split(":", 1) for line in front.splitlines())
    assert sorted(keys) == ["alwaysApply", "description", "globs"]
    assert (keys["alwaysApply"].strip(), keys["globs"].strip()) == ("true", "")
    description = keys["description"].strip()
    # A plain YAML scalar: ": " or a leading indicator would need quoting.
    assert description
    assert ": " not in description
    assert description[0] not in "'\"[]{}&*!|>%@`#,?-"
    # The rule is Cursor's one channel: the whole workflow, not a pointer to skills.
    assert agent_instructions.memory_workflow() in body
    assert agent_instructions.decision_model() in body
    for tool in ("memory_recall", "memory_remember", "extraction_done", "prediction_update"):
        assert f"`{tool}`" in body
    # The longer procedures are rules of their own, which this one names.
    for workflow in ("thatch-project-primer", "thatch-dedup-classifier", "thatch-decision-model"):
        assert f"- `{workflow}`" in body


def always_applied_rule(context: SetupContext) -> OwnedFile:
    (rule,) = [
        c
        for c in target().changes(context)
        if isinstance(c, OwnedFile) and c.path.name == "thatch.mdc"
    ]
    return rule


def test_every_event_gets_one_hook_running_thatch(project_context: SetupContext) -> None:
    items = [c for c in target().changes(project_context) if isinstance(c, JsonListItem)]
    assert [item.keys for item in items] == [("hooks", event) for event in EVENTS]
    for item, event in zip(items, EVENTS, strict=True):
        assert item.path == project_context.project / ".cursor" / "hooks.json"
        # hooks.json has no env: THATCH_HOME in use is set on the command line.
        assert item.item == {
            "command": f"THATCH_HOME=/srv/thatch-home thatch hook cursor {event}",
            "timeout": 10,
        }


def test_an_absolute_command_with_a_space_is_quoted_in_hooks_only(
    global_context: SetupContext,
) -> None:
    changes = target().changes(global_context)
    hook = next(c for c in changes if isinstance(c, JsonListItem))
    assert shlex.split(hook.item["command"]) == [
        "/opt/thatch tools/bin/thatch",
        "hook",
        "cursor",
        "sessionStart",
    ]
    server = next(c for c in changes if isinstance(c, JsonEntry) and c.keys[0] == "mcpServers")
    assert server.value == {
        "command": "/opt/thatch tools/bin/thatch",
        "args": ["mcp"],
        "env": {"THATCH_HARNESS": "cursor"},
    }


def test_a_global_setup_writes_into_the_users_cursor_folder_and_no_rule(
    global_context: SetupContext,
) -> None:
    changes = target().changes(global_context)
    folder = global_context.user_home / ".cursor"
    assert {change.path for change in changes} == {folder / "hooks.json", folder / "mcp.json"}


def test_a_project_setup_needs_a_project(user_home: Path) -> None:
    context = SetupContext(
        briefing=BRIEFING, scope="project", project=None, user_home=user_home, command=("thatch",)
    )
    with pytest.raises(ValueError, match="--project DIR"):
        target().changes(context)


# -- "version": 1 only where the user has none ---------------------------------------
def version_entries(context: SetupContext) -> list[JsonEntry]:
    return [
        c for c in target().changes(context) if isinstance(c, JsonEntry) and c.keys == ("version",)
    ]


@pytest.mark.parametrize(
    ("existing", "asked"),
    [
        (None, True),
        ('{"hooks": {}}', True),
        ('{"version": 1, "hooks": {}}', True),
        ('{"version": 2, "hooks": {}}', False),
        ('{"version": "1"}', False),
        ('{"version": true}', False),
        ('// mine\n{"version": 2, /* keep */ "hooks": {},}\n', False),
        ("{not json", True),
        ("", True),
    ],
)
def test_the_version_is_asked_for_only_where_absent_or_already_one(
    project_context: SetupContext, existing: str | None, asked: bool
) -> None:
    if existing is not None:
        hooks = project_context.project / ".cursor" / "hooks.json"
        hooks.parent.mkdir()
        hooks.write_text(existing)
    entries = version_entries(project_context)
    assert [entry.value for entry in entries] == ([1] if asked else [])


# -- detection ---------------------------------------------------------------------
def test_nothing_of_cursor_is_detected_as_absent(project_context: SetupContext) -> None:
    detection = target().detect(project_context)
    assert (detection.found, detection.evidence) == (False, ())


def test_cursor_folders_and_programs_are_the_evidence(project_context: SetupContext) -> None:
    (project_context.user_home / ".cursor").mkdir()
    (project_context.project / ".cursor").mkdir()
    detection = target(**{"cursor-agent": "/usr/local/bin/cursor-agent"}).detect(project_context)
    assert detection.found
    assert detection.evidence == (
        str(project_context.user_home / ".cursor"),
        str(project_context.project / ".cursor"),
        "cursor-agent on PATH (/usr/local/bin/cursor-agent)",
    )


@pytest.mark.parametrize("program", ["cursor", "cursor-agent"])
def test_a_program_on_path_alone_is_enough(global_context: SetupContext, program: str) -> None:
    detection = target(**{program: f"/bin/{program}"}).detect(global_context)
    assert detection.found
    assert detection.evidence == (f"{program} on PATH (/bin/{program})",)


def test_a_global_context_ignores_project_folders(global_context: SetupContext) -> None:
    assert not target().detect(global_context).found


# -- the plugin offers the target --------------------------------------------------
def test_the_plugin_offers_the_cursor_harness() -> None:
    (offered,) = plugins_with(thatch_cursor.plugin).harnesses().values()
    assert isinstance(offered.setup_target(), SetupTarget)  # type: ignore[attr-defined]
    assert (offered.name, offered.title) == ("cursor", "Cursor")
