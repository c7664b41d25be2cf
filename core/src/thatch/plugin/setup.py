"""What a harness plugin asks ``thatch setup`` to do, as data.

A :class:`~thatch.plugin.harness.Harness` describes, for a
:class:`SetupContext`, the changes it wants — never writing files itself —
so that core can apply them idempotently, show them as a diff, back files
up, and undo exactly what it did. The context also carries what core wants
every agent told (:class:`Briefing`), for the harness to install in its own
form: a rule file, a block in an instructions file, skills.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, Literal, Protocol, runtime_checkable

import attrs

Scope = Literal["project", "global"]


@attrs.frozen
class Workflow:
    """One of thatch's memory workflows, rendered for a harness."""

    name: str
    #: One line: what it does and when to use it.
    description: str
    #: One line for a caller that hands the workflow to another agent.
    handoff: str
    #: The procedure, in Markdown, without front matter.
    body: str


@runtime_checkable
class Briefing(Protocol):
    """What core wants every agent told: its instructions and its workflows.

    Harnesses show MCP tools under different names, so both name each tool
    with the ``prefix`` the harness puts before it (``"thatch_"``).
    """

    def instructions(self, prefix: str = "", level: int = 1) -> str:
        """The instructions as Markdown, under a heading of ``level``."""

    def workflows(self, prefix: str = "", kind: str = "skill") -> Sequence[Workflow]:
        """Every workflow, each calling itself a ``kind`` (skill, rule, agent)."""


@attrs.frozen
class SetupContext:
    """Where and how thatch is being set up, and what the agent is to be told."""

    scope: Scope
    #: The project folder (project scope); None for a global setup.
    project: Path | None
    #: The user's home folder (``~``); tests point it at a temporary folder.
    user_home: Path
    #: How a harness runs thatch: ``("thatch",)`` when it is on PATH, else the absolute path.
    command: tuple[str, ...]
    #: Environment the MCP server and hooks need (``THATCH_HOME`` when one is in use).
    env: Mapping[str, str] = attrs.field(factory=dict)
    #: The environment setup runs in, for settings a harness takes from it
    #: (``CLAUDE_CONFIG_DIR``); empty in tests that do not set one.
    environ: Mapping[str, str] = attrs.field(factory=dict)
    #: The instructions and workflows to install; core fills them in
    #: (tests: :data:`thatch.testing.BRIEFING`).
    briefing: Briefing = attrs.field(kw_only=True)

    def run(self, *args: str) -> str:
        """A shell command line running thatch with ``args`` (quoted where needed)."""
        import shlex

        return shlex.join([*self.command, *args])

    def hook_command(self, *args: str) -> str:
        """The command line a harness's hook runs: :meth:`run` after ``env``'s assignments.

        Hook configs have no place for environment variables, so a
        ``THATCH_HOME`` in use is set on the command line itself.
        """
        import shlex

        assignments = [f"{name}={shlex.quote(value)}" for name, value in sorted(self.env.items())]
        return " ".join([*assignments, self.run(*args)])

    def mcp_env(self, harness: str) -> dict[str, str]:
        """Environment of the MCP registration: ``env``, and which harness starts the server.

        ``THATCH_HARNESS`` lets ``thatch mcp`` check that harness's setup and
        tell the agent what is missing.
        """
        return {**self.env, "THATCH_HARNESS": harness}


@attrs.frozen
class JsonEntry:
    """The JSON (or JSONC) file ``path`` holds ``value`` under the key path ``keys``.

    Missing objects on the way are created. Uninstall removes the key (and
    objects that became empty because of it).
    """

    path: Path
    keys: tuple[str, ...]
    value: Any
    #: Who reads the file as strict JSON (``"Claude Code"``) and ignores it
    #: whole when it has comments or trailing commas; setup then refuses to
    #: edit such a file, naming this reader. None: comments are fine (JSONC).
    strict_for: str | None = None


@attrs.frozen
class JsonListItem:
    """The list under ``keys`` in the JSON (or JSONC) file ``path`` contains ``item``.

    Appended once (an equal item already there counts); the list and the
    objects on the way are created when missing. Uninstall removes the item.
    """

    path: Path
    keys: tuple[str, ...]
    item: Any
    #: As :attr:`JsonEntry.strict_for`.
    strict_for: str | None = None


@attrs.frozen
class TextBlock:
    """A block of ``text`` between marker lines in a text file (CLAUDE.md, AGENTS.md).

    The markers are ``<!-- thatch:begin NAME -->`` and ``<!-- thatch:end NAME -->``;
    a second setup replaces the block, uninstall removes it with its markers.
    """

    path: Path
    name: str
    text: str


@attrs.frozen
class OwnedFile:
    """A whole file thatch writes and owns (a skill, a rule, the opencode JS plugin)."""

    path: Path
    content: str
    executable: bool = False


#: Why a retired change is made, as ``--dry-run`` and the report show it.
MIGRATED = "migrated from an older thatch setup"


@attrs.frozen
class RetiredItem:
    """An item an older thatch setup put in the list under ``keys``: taken out for good.

    When the item also holds things that are not thatch's (other hooks in
    the same entry), it becomes ``keep`` instead. Nothing is recorded, so
    uninstall does not put it back.
    """

    path: Path
    keys: tuple[str, ...]
    item: Any
    keep: Any = None
    #: What the dry-run and the report say about it.
    reason: str = MIGRATED
    strict_for: str | None = None


@attrs.frozen
class RetiredEntry:
    """The value ``value`` an older thatch setup put under ``keys``: removed for good.

    A change setting ``keys`` anew may follow; it then replaces nothing the
    user had, so its uninstall removes the key rather than restoring the old value.
    """

    path: Path
    keys: tuple[str, ...]
    value: Any
    reason: str = MIGRATED
    strict_for: str | None = None


@attrs.frozen
class RetiredBlock:
    """Lines ``begin`` to ``end`` (both included, compared stripped) an older setup wrote."""

    path: Path
    begin: str
    end: str
    reason: str = MIGRATED


@attrs.frozen
class RetiredFile:
    """A whole file thatch wrote once and no longer ships: deleted while it holds ``content``."""

    path: Path
    content: str
    reason: str


Retired = RetiredItem | RetiredEntry | RetiredBlock | RetiredFile
Change = JsonEntry | JsonListItem | TextBlock | OwnedFile | Retired


@attrs.frozen
class Detection:
    """Whether a harness seems to be in use here, and what showed it."""

    found: bool
    #: What was seen: config folders, binaries on PATH.
    evidence: tuple[str, ...] = ()


@runtime_checkable
class SetupTarget(Protocol):
    """The setup half of a harness: what :class:`~thatch.plugin.harness.HarnessBase`
    asks for :meth:`detect`, :meth:`changes` and :meth:`problems`."""

    # Read-only, so a frozen class or a class attribute provides them.
    @property
    def name(self) -> str:
        """Short name, used on the command line (``--claude``) and in ``thatch hook NAME ...``."""

    @property
    def title(self) -> str:
        """What users call it (``Claude Code``)."""

    def detect(self, context: SetupContext) -> Detection:
        """Whether the harness is installed or configured for this user or project."""

    def changes(self, context: SetupContext) -> Sequence[Change]:
        """Everything setup must make true for this harness in ``context``."""

    def problems(self, context: SetupContext) -> Sequence[str]:
        """What is missing or broken in the current setup, each with its fix (empty: fine)."""


def compare_installed(files: Mapping[Path, str]) -> tuple[list[str], list[str]]:
    """The workflows whose file is missing, and those whose file differs, by name.

    ``files`` maps each installed workflow's path (named ``<workflow>.<ext>``)
    to the text setup writes there. A file that cannot be read counts as
    differing: setup rewrites it.
    """
    missing: list[str] = []
    stale: list[str] = []
    for path, wanted in files.items():
        try:
            text: str | None = path.read_text(encoding="utf-8")
        except FileNotFoundError:
            missing.append(path.stem)
            continue
        except (OSError, UnicodeDecodeError):
            text = None
        if text != wanted:
            stale.append(path.stem)
    return missing, stale
