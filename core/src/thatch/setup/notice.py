"""What ``thatch mcp`` learns of its harness's setup: the notice for the agent, the scope."""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, NamedTuple

if TYPE_CHECKING:
    from thatch.plugin.harness import Harness
    from thatch.plugin.setup import Scope


class SetupCheck(NamedTuple):
    """The setup of the harness that started ``thatch mcp``."""

    #: The harness, or None when none was recognised.
    harness: str | None
    #: For the agent: what is missing or broken and the command that fixes it; empty when fine.
    notice: str
    #: The first scope (project, then global) whose setup has no problem; None if neither.
    complete_scope: Scope | None
    #: The scopes whose setup writes thatch's instructions to the harness's own files.
    instruction_scopes: frozenset[Scope] = frozenset()


def harness_of(
    environ: Mapping[str, str], harnesses: Mapping[str, Harness] | None = None
) -> str | None:
    """The harness that started this process: named by ``THATCH_HARNESS``, else recognised.

    Recognised among ``harnesses`` (the installed ones; none given: only the
    name counts) by :meth:`~thatch.plugin.harness.Harness.running`. A
    harness that claims others' payloads runs their commands in an
    environment much like theirs, so it is asked first.
    """
    named = environ.get("THATCH_HARNESS")
    if named:
        return named
    candidates = sorted((harnesses or {}).values(), key=lambda harness: harness.claim is None)
    return next((h.name for h in candidates if h.running(environ)), None)


def check(
    home: str | None,
    environ: Mapping[str, str],
    *,
    cwd: str | None = None,
    targets: Iterable[Harness] | None = None,
) -> SetupCheck:
    """Check the setup of the harness named by ``environ`` (nothing to check when unknown).

    ``cwd`` is the caller's working directory (default: this process's), the
    project when ``environ`` names none. ``targets`` are the harnesses of
    plugins loaded already (the daemon's); by default the plugins of
    ``home`` are loaded here.
    """
    if targets is None:
        harnesses = _installed(home, environ)
    else:
        harnesses = {harness.name: harness for harness in targets}
    name = harness_of(environ, harnesses)
    if name is None:
        return SetupCheck(None, "", None)
    harness = harnesses.get(name)
    if harness is None:
        notice = (
            f"thatch: the {name} plugin is not installed, so hooks and nudges for this "
            f"harness do not work. Tell the user to run: thatch install {name} && "
            f"thatch setup --{name}"
        )
        return SetupCheck(name, notice, None)
    scope, problems = _problems(harness, environ, cwd)
    if not problems:
        return SetupCheck(name, "", scope, harness.instruction_scopes)
    listed = "\n".join(f"- {problem}" for problem in problems)
    notice = (
        f"thatch: the {harness.title} setup is incomplete; memory tools work, but:\n{listed}\n"
        f"Tell the user to run: thatch setup --{name}"
    )
    return SetupCheck(name, notice, None, harness.instruction_scopes)


def _installed(home: str | None, environ: Mapping[str, str]) -> dict[str, Harness]:
    from thatch.plugin.config import Config
    from thatch.plugins import Plugins

    return Plugins.load(Config.load(home, environ), environ).harnesses()


def _problems(
    harness: Harness, environ: Mapping[str, str], cwd: str | None
) -> tuple[Scope | None, list[str]]:
    """The complete scope, or the project setup's problems (either scope suffices)."""
    from thatch.instructions.briefing import BRIEFING
    from thatch.plugin.setup import SetupContext

    project = Path(harness.project_folder(environ) or cwd or os.getcwd())
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
            briefing=BRIEFING,
        )
        problems = list(harness.problems(context))
        if not problems:
            return scope, []
        found = found or problems
    return None, found
