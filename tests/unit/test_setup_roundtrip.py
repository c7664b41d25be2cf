"""Setup then uninstall leaves realistic projects byte for byte as they were.

Each scenario is a harness's changes (shaped like what the harness plugins
ask for) applied to an empty project and to one with the user's own config
(comments, other tools' hooks, user text). Golden strings pin what setup
writes next to the user's config.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from thatch.plugin.jsonc import loads
from thatch.plugin.setup import Change, JsonEntry, JsonListItem, OwnedFile, TextBlock
from thatch.setup import engine
from thatch.testing import tree

CLAUDE_SETTINGS = """{
  "$schema": "https://json.schemastore.org/claude-code-settings.json",
  "permissions": {
    "allow": ["Bash(npm run lint)", "Read(~/.zshrc)"],
    "deny": []
  },
  // format after every edit
  "hooks": {
    "PostToolUse": [
      {
        "matcher": "Edit|Write",
        "hooks": [
          { "type": "command", "command": "prettier --write \\"$CLAUDE_FILE_PATHS\\"" }
        ]
      }
    ],
    "Stop": [
      {"hooks": [{"type": "command", "command": "notify-send done"}]}
    ]
  }
}
"""

CLAUDE_MD = "# Shop\n\n- Use pnpm.\n- Run `make test` before committing."

OPENCODE_JSONC = """{
  "$schema": "https://opencode.ai/config.json",
  // the model everyone on the team uses
  "model": "anthropic/claude-sonnet-4-5",
  "mcp": {
    /* docs for our internal libraries */
    "docs": {
      "type": "local",
      "command": ["docs-mcp", "--stdio"],
      "enabled": true,
    },
  },
}
"""

CURSOR_HOOKS = """{
  "version": 1,
  "hooks": {
    "afterFileEdit": [{ "command": "./hooks/format.sh" }],
    "stop": [{ "command": "./hooks/audit.sh", "timeout": 5 }]
  }
}
"""


def claude(project: Path) -> list[Change]:
    settings = project / ".claude" / "settings.json"
    events = ["SessionStart", "UserPromptSubmit", "PostToolBatch", "Stop", "PreCompact"]
    return [
        JsonEntry(
            project / ".mcp.json",
            ("mcpServers", "thatch"),
            {"type": "stdio", "command": "thatch", "args": ["mcp"]},
        ),
        *(
            JsonListItem(
                settings,
                ("hooks", event),
                {"hooks": [{"type": "command", "command": f"thatch hook claude {event}"}]},
            )
            for event in events
        ),
        TextBlock(project / "CLAUDE.md", "thatch", "Use thatch.\n\nRecall before you answer."),
        OwnedFile(project / ".claude" / "skills" / "thatch-primer" / "SKILL.md", "# Primer\n"),
    ]


def opencode(project: Path) -> list[Change]:
    return [
        JsonEntry(
            project / "opencode.jsonc",
            ("mcp", "thatch"),
            {
                "type": "local",
                "command": ["thatch", "mcp"],
                "enabled": True,
                "environment": {"THATCH_HOME": "/h"},
            },
        ),
        TextBlock(project / "AGENTS.md", "thatch", "Use thatch."),
        OwnedFile(project / ".opencode" / "plugins" / "thatch.js", "export const Thatch = 1;\n"),
    ]


def cursor(project: Path) -> list[Change]:
    hooks = project / ".cursor" / "hooks.json"
    return [
        JsonEntry(hooks, ("version",), 1),
        *(
            JsonListItem(hooks, ("hooks", event), {"command": f"thatch hook cursor {event}"})
            for event in ("sessionStart", "stop")
        ),
        JsonEntry(
            project / ".cursor" / "mcp.json",
            ("mcpServers", "thatch"),
            {"command": "thatch", "args": ["mcp"]},
        ),
        OwnedFile(project / ".cursor" / "rules" / "thatch.mdc", "---\nalwaysApply: true\n---\n"),
        OwnedFile(project / ".cursor" / "thatch-hook.sh", "#!/bin/sh\n", executable=True),
    ]


SCENARIOS: dict[str, tuple[Callable[[Path], list[Change]], dict[str, str]]] = {
    "claude": (claude, {".claude/settings.json": CLAUDE_SETTINGS, "CLAUDE.md": CLAUDE_MD}),
    "claude-crlf": (
        claude,
        {
            ".claude/settings.json": CLAUDE_SETTINGS.replace("\n", "\r\n"),
            "CLAUDE.md": CLAUDE_MD.replace("\n", "\r\n") + "\r\n",
        },
    ),
    "opencode": (opencode, {"opencode.jsonc": OPENCODE_JSONC, "AGENTS.md": "# Agents\n"}),
    "cursor": (cursor, {".cursor/hooks.json": CURSOR_HOOKS, ".cursor/mcp.json": "{}"}),
}


def write(project: Path, files: dict[str, str]) -> None:
    for name, text in files.items():
        path = project / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(text.encode())


@pytest.mark.parametrize("existing", [False, True], ids=["empty", "existing"])
@pytest.mark.parametrize("scenario", sorted(SCENARIOS))
def test_setup_then_uninstall_restores_every_byte(
    tmp_path: Path, scenario: str, existing: bool
) -> None:
    changes_for, files = SCENARIOS[scenario]
    project, state = tmp_path / "project", tmp_path / "state"
    project.mkdir()
    if existing:
        write(project, files)
    before = tree(project)
    scope = f"project:{project}"
    changes = changes_for(project)

    report = engine.apply(engine.plan(changes), state_dir=state, target=scenario, scope_key=scope)
    assert report.written
    assert len(report.backups) == (len(files) if existing else 0)
    after = tree(project)

    # Idempotent: the second plan has nothing to do.
    again = engine.plan(changes, engine.installed(state, scenario, scope))
    assert [edit for edit in again if edit.changed] == []

    engine.uninstall(state, scenario, scope)
    assert tree(project) == before
    # Setting up again after an uninstall gives the same files as the first time.
    engine.apply(engine.plan(changes), state_dir=state, target=scenario, scope_key=scope)
    assert tree(project) == after


@pytest.mark.parametrize("skill_there", [False, True], ids=["new-skill", "users-skill"])
@pytest.mark.parametrize("first", ["a", "b"])
@pytest.mark.parametrize("scenario", sorted(SCENARIOS))
def test_two_projects_sharing_a_file_restore_every_byte_in_either_order(
    tmp_path: Path, scenario: str, first: str, skill_there: bool
) -> None:
    changes_for, files = SCENARIOS[scenario]
    home, state = tmp_path / "home", tmp_path / "state"
    skill = home / ".claude" / "skills" / "thatch-shared" / "SKILL.md"
    if skill_there:
        write(home, {".claude/skills/thatch-shared/SKILL.md": "the user's own skill\n"})
    projects = {name: tmp_path / name for name in ("a", "b")}
    for project in projects.values():
        project.mkdir()
        write(project, files)
    before = tree(tmp_path)
    for name, project in projects.items():
        # The second setup is a newer thatch: the shared file's text changed.
        shared = OwnedFile(skill, f"# Shared, as written for {name}\n")
        changes = [*changes_for(project), shared]
        scope = f"project:{project}"
        engine.apply(
            engine.plan(changes, engine.installed(state, scenario, scope)),
            state_dir=state,
            target=scenario,
            scope_key=scope,
        )
    order = ["a", "b"] if first == "a" else ["b", "a"]
    engine.uninstall(state, scenario, f"project:{projects[order[0]]}")
    assert skill.read_text() == "# Shared, as written for b\n"
    engine.uninstall(state, scenario, f"project:{projects[order[1]]}")
    after = tree(tmp_path)
    backups = [name for name in after if name.startswith("state/")]
    assert {name: after[name] for name in after if name not in backups} == before


def test_claude_settings_golden(tmp_path: Path) -> None:
    project, state = tmp_path / "p", tmp_path / "s"
    project.mkdir()
    write(project, {".claude/settings.json": CLAUDE_SETTINGS, "CLAUDE.md": CLAUDE_MD})
    changes = claude(project)
    changes = [
        c for c in changes if isinstance(c, JsonListItem) and c.keys[1] in ("Stop", "PreCompact")
    ]
    engine.apply(engine.plan(changes), state_dir=state, target="claude", scope_key="x")
    text = (project / ".claude" / "settings.json").read_text()
    head, tail = CLAUDE_SETTINGS.split(
        '      {"hooks": [{"type": "command", "command": "notify-send done"}]}\n'
    )
    assert text == (
        head
        + '      {"hooks": [{"type": "command", "command": "notify-send done"}]},\n'
        + "      {\n"
        + '        "hooks": [\n'
        + "          {\n"
        + '            "type": "command",\n'
        + '            "command": "thatch hook claude Stop"\n'
        + "          }\n"
        + "        ]\n"
        + "      }\n"
        + "    ],\n"
        + '    "PreCompact": [\n'
        + "      {\n"
        + '        "hooks": [\n'
        + "          {\n"
        + '            "type": "command",\n'
        + '            "command": "thatch hook claude PreCompact"\n'
        + "          }\n"
        + "        ]\n"
        + "      }\n"
        + tail
    )


def test_opencode_jsonc_golden(tmp_path: Path) -> None:
    project, state = tmp_path / "p", tmp_path / "s"
    project.mkdir()
    write(project, {"opencode.jsonc": OPENCODE_JSONC})
    engine.apply(
        engine.plan(opencode(project)[:1]), state_dir=state, target="opencode", scope_key="x"
    )
    assert (project / "opencode.jsonc").read_text() == OPENCODE_JSONC.replace(
        """      "enabled": true,
    },
  },""",
        """      "enabled": true,
    },
    "thatch": {
      "type": "local",
      "command": [
        "thatch",
        "mcp"
      ],
      "enabled": true,
      "environment": {
        "THATCH_HOME": "/h"
      }
    },
  },""",
    )


def test_cursor_hooks_golden(tmp_path: Path) -> None:
    project, state = tmp_path / "p", tmp_path / "s"
    project.mkdir()
    write(project, {".cursor/hooks.json": CURSOR_HOOKS})
    engine.apply(engine.plan(cursor(project)[:3]), state_dir=state, target="cursor", scope_key="x")
    text = (project / ".cursor" / "hooks.json").read_text()
    assert text == (
        "{\n"
        '  "version": 1,\n'
        '  "hooks": {\n'
        '    "afterFileEdit": [{ "command": "./hooks/format.sh" }],\n'
        '    "stop": [{ "command": "./hooks/audit.sh", "timeout": 5 }, '
        '{"command": "thatch hook cursor stop"}],\n'
        '    "sessionStart": [\n'
        "      {\n"
        '        "command": "thatch hook cursor sessionStart"\n'
        "      }\n"
        "    ]\n"
        "  }\n"
        "}\n"
    )
    # "version": 1 was the user's: thatch does not claim it.
    [install] = engine.status(state)
    assert [entry.keys for record in install.files for entry in record.entries] == []
    assert loads(text, "hooks.json")["version"] == 1
