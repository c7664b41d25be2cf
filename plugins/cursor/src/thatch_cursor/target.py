"""``thatch setup --cursor``: what Cursor needs, as changes core applies.

Project scope writes into ``PROJECT/.cursor/``, global scope into
``~/.cursor/``:

- ``hooks.json``: one ``thatch hook cursor EVENT`` command per event thatch
  reads, appended next to the user's own hooks;
- ``mcp.json``: the ``thatch`` MCP server;
- ``rules/thatch.mdc`` (project scope only): the instructions, and one
  ``rules/<workflow>.mdc`` per memory workflow, which the agent pulls in by
  its description. Cursor keeps global "User Rules" in its settings, not in
  a file it reads from ``~/.cursor``, so a global setup relies on the MCP
  server's instructions.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path

import attrs
from thatch.plugin import (
    Change,
    Detection,
    InvalidInputError,
    JsonEntry,
    JsonListItem,
    OwnedFile,
    SetupContext,
)
from thatch.plugin.launcher import harness_which
from thatch.plugin.setup import Briefing

from thatch_cursor import HARNESS, jsonfile
from thatch_cursor.rules import RULE_FILE_NAME, rule_text, workflow_rules

#: The Cursor hooks setup installs, in the order they fire. sessionEnd is
#: parsed when a user hooks it but not installed: nothing happens on it that
#: the next session start does not cover.
HOOKED_EVENTS = (
    "sessionStart",
    "beforeSubmitPrompt",
    "postToolUse",
    "postToolUseFailure",
    "stop",
    "preCompact",
)

#: Seconds Cursor gives each hook; thatch's hook commands answer within their
#: own cap (300 ms by default), so this only bounds a stuck process.
HOOK_TIMEOUT = 10

#: The ``version`` of hooks.json that these entries are written for.
HOOKS_VERSION = 1

#: Programs whose presence on PATH shows Cursor is installed.
BINARIES = ("cursor", "cursor-agent")


@attrs.frozen
class CursorPaths:
    """The files a Cursor setup touches for one context."""

    folder: Path
    hooks: Path
    mcp: Path
    #: None for a global setup: Cursor reads no global rule files.
    rule: Path | None

    def workflow_rules(self, briefing: Briefing) -> dict[Path, str]:
        """Each workflow rule's path and text (none for a global setup)."""
        if self.rule is None:
            return {}
        rules = workflow_rules(briefing)
        return {self.rule.parent / name: text for name, text in rules.items()}

    @classmethod
    def of(cls, context: SetupContext) -> CursorPaths:
        """The paths for ``context``; raises InvalidInputError for a project setup without one."""
        if context.scope == "project":
            if context.project is None:
                raise InvalidInputError(
                    "a project setup for Cursor needs the project folder; pass --project DIR"
                )
            folder = context.project / ".cursor"
            rule: Path | None = folder / "rules" / RULE_FILE_NAME
        else:
            folder = context.user_home / ".cursor"
            rule = None
        return cls(folder=folder, hooks=folder / "hooks.json", mcp=folder / "mcp.json", rule=rule)


def hook_item(context: SetupContext, event: str) -> dict[str, object]:
    """The hooks.json entry that runs thatch for ``event``.

    hooks.json has no place for environment variables, so a ``THATCH_HOME``
    in use is set on the command line (``context.hook_command``).
    """
    return {"command": context.hook_command("hook", HARNESS, event), "timeout": HOOK_TIMEOUT}


def mcp_server(context: SetupContext) -> dict[str, object]:
    """The ``mcpServers.thatch`` entry of mcp.json.

    Its environment names the harness (``THATCH_HARNESS``), so ``thatch mcp``
    checks Cursor's setup even where Cursor sets no variable of its own.
    """
    return {
        "command": context.command[0],
        "args": [*context.command[1:], "mcp"],
        "env": context.mcp_env(HARNESS),
    }


@attrs.frozen
class CursorTarget:
    """Cursor, as ``thatch setup`` sees it."""

    name: str = HARNESS
    title: str = "Cursor"
    #: Finds a program on PATH; tests replace it.
    which: Callable[[str], str | None] = attrs.field(default=harness_which, repr=False)

    def detect(self, context: SetupContext) -> Detection:
        """Cursor's folders (``~/.cursor``, the project's ``.cursor``) and programs on PATH."""
        evidence: list[str] = []
        folders = [context.user_home / ".cursor"]
        if context.project is not None:
            folders.append(context.project / ".cursor")
        evidence.extend(str(folder) for folder in folders if folder.is_dir())
        for binary in BINARIES:
            found = self.which(binary)
            if found:
                evidence.append(f"{binary} on PATH ({found})")
        return Detection(found=bool(evidence), evidence=tuple(evidence))

    def changes(self, context: SetupContext) -> Sequence[Change]:
        """hooks.json entries, the MCP server, and (project scope) the rule files."""
        paths = CursorPaths.of(context)
        changes: list[Change] = []
        if _may_set_version(paths.hooks):
            changes.append(JsonEntry(paths.hooks, ("version",), HOOKS_VERSION))
        changes.extend(
            JsonListItem(paths.hooks, ("hooks", event), hook_item(context, event))
            for event in HOOKED_EVENTS
        )
        changes.append(JsonEntry(paths.mcp, ("mcpServers", "thatch"), mcp_server(context)))
        if paths.rule is not None:
            changes.append(OwnedFile(paths.rule, rule_text(context.briefing)))
        rules = paths.workflow_rules(context.briefing)
        changes.extend(OwnedFile(path, text) for path, text in rules.items())
        return changes

    def problems(self, context: SetupContext) -> Sequence[str]:
        """What is missing or broken in this scope's Cursor files, each with its fix."""
        from thatch_cursor.problems import find_problems

        return find_problems(context, CursorPaths.of(context), self.which)


def _may_set_version(hooks: Path) -> bool:
    """Whether setup may write ``"version": 1``: only where there is none, or it is already 1.

    The setup model has no "only if absent" entry, so the file is read here:
    a user's other version is left alone (the entry is not asked for), and
    an equal value makes the entry a no-op. A file that cannot be read is
    reported by the engine when it tries to merge into it.
    """
    try:
        data = jsonfile.load(hooks)
    except ValueError:
        return True
    if not isinstance(data, dict) or "version" not in data:
        return True
    version = data["version"]
    # type() and not isinstance(): true == 1 in Python, but not in hooks.json.
    return type(version) is int and version == HOOKS_VERSION
