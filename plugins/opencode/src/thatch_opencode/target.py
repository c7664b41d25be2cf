"""``thatch setup --opencode``: what opencode needs, as changes core applies.

Project scope writes into the project, global scope into opencode's config
folder (``~/.config/opencode``):

- ``opencode.json`` (an existing ``opencode.jsonc`` is used instead): the
  ``thatch`` MCP server under ``"mcp"``;
- the instructions: a block in the project's ``AGENTS.md``, or, globally, a
  file of thatch's own listed under ``"instructions"``;
- the JS plugin ``thatch.js`` in ``.opencode/plugins/`` or the global
  ``plugins/`` folder;
- the memory workflows as subagents, one ``<name>.md`` each in
  ``.opencode/agents/`` or the global ``agents/`` folder.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

import attrs
from thatch.plugin import (
    Change,
    Detection,
    JsonEntry,
    JsonListItem,
    OwnedFile,
    SetupContext,
    TextBlock,
)
from thatch.plugin.launcher import harness_which
from thatch.plugin.setup import Briefing

from thatch_opencode import HARNESS
from thatch_opencode.agents import AGENTS_FOLDER, agent_files
from thatch_opencode.instructions import BLOCK_NAME, INSTRUCTIONS_FILE_NAME, instructions_text
from thatch_opencode.jsplugin import PLUGIN_FILE_NAME, render

#: The config file names opencode reads in one folder; the first that exists is edited.
CONFIG_NAMES = ("opencode.jsonc", "opencode.json")

#: The program whose presence on PATH shows opencode is installed.
BINARY = "opencode"


@attrs.frozen
class OpencodePaths:
    """The files an opencode setup touches for one context."""

    #: The folder holding the config file: the project, or opencode's config folder.
    config_folder: Path
    config: Path
    plugin: Path
    #: AGENTS.md (project scope) or thatch's own instructions file (global scope).
    instructions: Path
    #: The folder of agent files: ``.opencode/agents`` or the global ``agents``.
    agents: Path

    def workflow_agents(self, briefing: Briefing) -> dict[Path, str]:
        """Each of ``briefing``'s workflow agents: its path and text."""
        return {self.agents / name: text for name, text in agent_files(briefing).items()}

    @classmethod
    def of(cls, context: SetupContext, environ: Mapping[str, str] | None = None) -> OpencodePaths:
        """The paths for ``context``; raises ValueError for a project setup without a project."""
        if context.scope == "project":
            if context.project is None:
                raise ValueError(
                    "a project setup for opencode needs the project folder; pass --project DIR"
                )
            folder = context.project
            opencode_folder = folder / ".opencode"
            instructions = folder / "AGENTS.md"
        else:
            folder = global_config_folder(context.user_home, environ)
            opencode_folder = folder
            instructions = folder / INSTRUCTIONS_FILE_NAME
        return cls(
            config_folder=folder,
            config=config_file(folder),
            plugin=opencode_folder / "plugins" / PLUGIN_FILE_NAME,
            instructions=instructions,
            agents=opencode_folder / AGENTS_FOLDER,
        )


def global_config_folder(user_home: Path, environ: Mapping[str, str] | None = None) -> Path:
    """opencode's own config folder: ``$XDG_CONFIG_HOME/opencode``, else ``~/.config/opencode``.

    ``XDG_CONFIG_HOME`` counts only when ``user_home`` is the real home
    folder: a setup for another home (a test's temporary one) must never
    reach into the config of the user running it.
    """
    environ = os.environ if environ is None else environ
    xdg = environ.get("XDG_CONFIG_HOME", "")
    if xdg and os.path.isabs(xdg) and user_home == Path.home():
        return Path(xdg) / "opencode"
    return user_home / ".config" / "opencode"


def config_file(folder: Path) -> Path:
    """The file to edit in ``folder``: ``opencode.jsonc`` if it exists, else ``opencode.json``."""
    jsonc = folder / CONFIG_NAMES[0]
    return jsonc if jsonc.is_file() else folder / CONFIG_NAMES[1]


def mcp_server(context: SetupContext) -> dict[str, Any]:
    """The ``mcp.thatch`` entry: opencode starts ``thatch mcp`` with ``environment`` added."""
    return {
        "type": "local",
        "command": [*context.command, "mcp"],
        "enabled": True,
        "environment": dict(context.env),
    }


@attrs.frozen
class OpencodeTarget:
    """opencode, as ``thatch setup`` sees it."""

    name: str = HARNESS
    title: str = "opencode"
    #: Finds a program on PATH; tests replace it.
    which: Callable[[str], str | None] = attrs.field(default=harness_which, repr=False)
    #: The environment read for ``XDG_CONFIG_HOME`` (None: the process's own).
    environ: Mapping[str, str] | None = attrs.field(default=None, repr=False)

    def paths(self, context: SetupContext) -> OpencodePaths:
        """The files a setup in ``context`` touches."""
        return OpencodePaths.of(context, self.environ)

    def detect(self, context: SetupContext) -> Detection:
        """opencode's config folder, the project's opencode files, and ``opencode`` on PATH."""
        candidates = [global_config_folder(context.user_home, self.environ)]
        if context.project is not None:
            candidates.extend(context.project / name for name in CONFIG_NAMES)
            candidates.append(context.project / ".opencode")
        evidence = [str(path) for path in candidates if path.exists()]
        found = self.which(BINARY)
        if found:
            evidence.append(f"{BINARY} on PATH ({found})")
        return Detection(found=bool(evidence), evidence=tuple(evidence))

    def changes(self, context: SetupContext) -> Sequence[Change]:
        """The MCP server, the instructions, the JS plugin and the workflow agents."""
        paths = self.paths(context)
        changes: list[Change] = [JsonEntry(paths.config, ("mcp", "thatch"), mcp_server(context))]
        text = instructions_text(context.briefing)
        if context.scope == "project":
            changes.append(TextBlock(paths.instructions, BLOCK_NAME, text))
        else:
            changes.append(OwnedFile(paths.instructions, text))
            changes.append(JsonListItem(paths.config, ("instructions",), str(paths.instructions)))
        changes.append(OwnedFile(paths.plugin, render(context.command, context.env)))
        agents = paths.workflow_agents(context.briefing)
        changes.extend(OwnedFile(path, text) for path, text in agents.items())
        return changes

    def problems(self, context: SetupContext) -> Sequence[str]:
        """What is missing or broken in this scope's opencode setup, each with its fix."""
        from thatch_opencode.problems import find_problems

        return find_problems(context, self.paths(context), self.which)
