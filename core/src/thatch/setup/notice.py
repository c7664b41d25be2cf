"""What ``thatch mcp`` learns of its harness's setup: the notice for the agent, the scope."""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, NamedTuple

if TYPE_CHECKING:
    from thatch.plugin.setup import Scope, SetupTarget


class SetupCheck(NamedTuple):
    """The setup of the harness that started ``thatch mcp``."""

    #: The harness, or None when none was recognised.
    harness: str | None
    #: For the agent: what is missing or broken and the command that fixes it; empty when fine.
    notice: str
    #: The first scope (project, then global) whose setup has no problem; None if neither.
    complete_scope: Scope | None


def harness_of(environ: Mapping[str, str]) -> str | None:
    """The harness that started this process, from its environment."""
    named = environ.get("THATCH_HARNESS")
    if named:
        return named
    # Cursor sets CURSOR_PROJECT_DIR for its hooks and CURSOR_VERSION elsewhere.
    if environ.get("CURSOR_VERSION") or environ.get("CURSOR_PROJECT_DIR"):
        return "cursor"
    if environ.get("CLAUDE_PROJECT_DIR") or environ.get("CLAUDECODE"):
        return "claude"
    if environ.get("OPENCODE"):
        return "opencode"
    return None


def check(
    home: str | None,
    environ: Mapping[str, str],
    *,
    cwd: str | None = None,
    targets: Iterable[SetupTarget] | None = None,
) -> SetupCheck:
    """Check the setup of the harness named by ``environ`` (nothing to check when unknown).

    ``cwd`` is the caller's working directory (default: this process's), the
    project when ``environ`` names none. ``targets`` are the setup targets of
    plugins loaded already (the daemon's); by default the plugins of
    ``home`` are loaded here.
    """
    name = harness_of(environ)
    if name is None:
        return SetupCheck(None, "", None)
    if targets is None:
        from thatch.plugin.config import Config
        from thatch.plugins import Plugins

        targets = Plugins.load(Config.load(home, environ), environ).setup_targets()
    target = {target.name: target for target in targets}.get(name)
    if target is None:
        notice = (
            f"thatch: the {name} plugin is not installed, so hooks and nudges for this "
            f"harness do not work. Tell the user to run: thatch install {name} && "
            f"thatch setup --{name}"
        )
        return SetupCheck(name, notice, None)
    scope, problems = _problems(target, environ, cwd)
    if not problems:
        return SetupCheck(name, "", scope)
    listed = "\n".join(f"- {problem}" for problem in problems)
    notice = (
        f"thatch: the {target.title} setup is incomplete; memory tools work, but:\n{listed}\n"
        f"Tell the user to run: thatch setup --{name}"
    )
    return SetupCheck(name, notice, None)


def _problems(
    target: SetupTarget, environ: Mapping[str, str], cwd: str | None
) -> tuple[Scope | None, list[str]]:
    """The complete scope, or the project setup's problems (either scope suffices)."""
    from thatch.plugin.setup import SetupContext
    from thatch.runtime import project_folder

    project = Path(project_folder(environ, cwd) or os.getcwd())
    user_home = Path(environ.get("HOME") or Path.home())
    found: list[str] = []
    scopes: tuple[tuple[Scope, Path | None], ...] = (("project", project), ("global", None))
    for scope, folder in scopes:
        context = SetupContext(
            scope=scope,
            project=folder,
            user_home=user_home,
            command=("thatch",),
            environ=dict(environ),
        )
        problems = list(target.problems(context))
        if not problems:
            return scope, []
        found = found or problems
    return None, found
