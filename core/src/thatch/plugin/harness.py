"""A harness: one coding agent thatch works with, as its plugin describes it.

A harness plugin returns :class:`Harness` objects from ``thatch_harnesses``.
Core dispatches by :attr:`Harness.name` everywhere a harness matters: ``thatch
hook NAME EVENT`` parses with :meth:`Harness.parse_event` and answers with
:meth:`Harness.deliver`; ``thatch setup --NAME`` applies
:meth:`Harness.changes`; ``thatch doctor`` checks :meth:`Harness.problems`
and reads :meth:`Harness.config_files`; ``thatch prime`` runs
:meth:`Harness.prime_command`. Core itself knows no harness by name.

The hook command never loads plugins (it must stay on the standard
library), so what it needs when no daemon answers is data:
:attr:`Harness.hook_answers` names the events whose output the agent reads,
and core renders their stand-in answers with :meth:`Harness.deliver` into a
small table the hook reads (see ``docs/architecture.md``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, Protocol, runtime_checkable

import attrs

if TYPE_CHECKING:
    from thatch.plugin.events import Event, EventKind
    from thatch.plugin.nudge import Nudge
    from thatch.plugin.setup import Change, Detection, SetupContext, SetupTarget

#: What the agent reads a hook's answer as: the session's briefing, or context for a prompt.
AnswerKind = Literal["session_start", "prompt"]


@attrs.frozen
class HookCommand:
    """A named hook command a harness serves (``thatch flush-tools``), beside ``thatch hook``.

    Older setups wrote named commands into the harness's config; they keep
    working as aliases of ``thatch hook NAME EVENT``.
    """

    #: The command (``flush-tools``).
    name: str
    #: The harness event it stands for when the payload names none (``UserPromptSubmit``).
    event: str
    #: What ``thatch --help`` says about it.
    help: str = ""


@attrs.frozen
class PayloadClaim:
    """How to tell a harness's payload when it runs another harness's named commands.

    Cursor runs Claude Code's hooks: a payload with one of ``keys``, or a
    command run with one of ``environ`` set, is the claiming harness's.
    Plain data, because the hook command reads it without plugins.
    """

    keys: tuple[str, ...] = ()
    environ: tuple[str, ...] = ()


@runtime_checkable
class Harness(Protocol):
    """One coding agent: its events, its output format, its setup and its checks."""

    #: Short name: ``thatch hook NAME``, ``thatch setup --NAME``, ``Event.harness``.
    name: str
    #: What users call it (``Claude Code``).
    title: str
    #: Hook events whose output the agent reads, by the harness's event name
    #: (compared case-insensitively), and what each stands for. Only these
    #: wait for a starting daemon; all others spool and return at once.
    hook_answers: Mapping[str, AnswerKind]
    #: Event kinds whose hook output reaches the agent as context; None when
    #: the prompt hook carries it. Without ``prompt``, core holds a prompt's
    #: nudges and delivers them with the next event of one of these kinds.
    context_kinds: frozenset[EventKind] | None
    #: Named commands this harness serves (empty for most harnesses).
    commands: Sequence[HookCommand]
    #: How to tell this harness's payloads in another harness's named commands (None: never).
    claim: PayloadClaim | None
    #: Environment variables the harness sets that the daemon needs, forwarded
    #: from the hook and the MCP relay (its project folder variable first).
    environment: tuple[str, ...]
    #: Prefix the harness puts before thatch's MCP tool names (``mcp__thatch__``).
    tool_prefix: str

    def parse_event(self, hook_event: str, payload: Mapping[str, Any]) -> Event:
        """The core event of one raw hook payload.

        Core fills in ``event_id`` and ``received_at``. Raise
        :class:`thatch.plugin.errors.InvalidInputError` naming the field when
        the payload is malformed: the hook still exits 0 and the error is logged.
        """

    def deliver(self, nudges: Sequence[Nudge], event: Event) -> str:
        """The exact stdout the harness reads for ``nudges`` answering ``event`` ("" for none)."""

    def project_folder(self, environ: Mapping[str, str]) -> str | None:
        """The project folder the harness names in its environment, or None."""

    def running(self, environ: Mapping[str, str]) -> bool:
        """Whether this process runs under the harness (its hook or MCP environment)."""

    def detect(self, context: SetupContext) -> Detection:
        """Whether the harness is installed or configured for this user or project."""

    def changes(self, context: SetupContext) -> Sequence[Change]:
        """Everything setup must make true for this harness in ``context``."""

    def problems(self, context: SetupContext) -> Sequence[str]:
        """What is missing or broken in the current setup, each with its fix (empty: fine)."""

    def config_files(self, context: SetupContext) -> Sequence[Path]:
        """The files ``thatch doctor`` shows for this harness (they need not exist)."""

    def prime_command(self, prompt: str) -> Sequence[str] | None:
        """The non-interactive command line ``thatch prime`` runs, or None when unsupported.

        The first item is the program, looked up on PATH.
        """


class HarnessBase:
    """Defaults for the parts of :class:`Harness` most harnesses leave alone.

    Subclass it and set ``name``, ``title`` and ``hook_answers``; implement
    :meth:`parse_event`, :meth:`deliver`, :meth:`detect` and :meth:`changes`.
    """

    name: str = ""
    title: str = ""
    hook_answers: Mapping[str, AnswerKind] = {}
    context_kinds: frozenset[EventKind] | None = None
    commands: Sequence[HookCommand] = ()
    claim: PayloadClaim | None = None
    environment: tuple[str, ...] = ()
    tool_prefix: str = ""

    def parse_event(self, hook_event: str, payload: Mapping[str, Any]) -> Event:
        raise NotImplementedError(f"harness {self.name!r} does not parse events")

    def deliver(self, nudges: Sequence[Nudge], event: Event) -> str:
        raise NotImplementedError(f"harness {self.name!r} does not deliver nudges")

    def project_folder(self, environ: Mapping[str, str]) -> str | None:
        return None

    def running(self, environ: Mapping[str, str]) -> bool:
        return False

    def setup_target(self) -> SetupTarget:
        """The setup half of the harness; :meth:`detect`, :meth:`changes` and
        :meth:`problems` ask it. Override those three instead when simpler."""
        raise NotImplementedError(f"harness {self.name!r} has no setup")

    def detect(self, context: SetupContext) -> Detection:
        return self.setup_target().detect(context)

    def changes(self, context: SetupContext) -> Sequence[Change]:
        return self.setup_target().changes(context)

    def problems(self, context: SetupContext) -> Sequence[str]:
        return self.setup_target().problems(context)

    def config_files(self, context: SetupContext) -> Sequence[Path]:
        return ()

    def prime_command(self, prompt: str) -> Sequence[str] | None:
        return None
