"""A harness: one coding agent thatch works with, as its plugin describes it.

A harness plugin returns :class:`Harness` objects from ``thatch_harnesses``.
Core dispatches by :attr:`Harness.name` everywhere a harness matters: ``thatch
hook NAME EVENT`` parses with :meth:`Harness.parse_event` and answers with
:meth:`Harness.deliver`; ``thatch setup --NAME`` applies
:meth:`Harness.changes`; ``thatch doctor`` checks :meth:`Harness.problems`
and reads :meth:`Harness.config_files`; ``thatch prime`` runs
:meth:`Harness.prime_command`. Core itself knows no harness by name.

Named commands (:attr:`Harness.commands`, ``thatch flush-tools``) are parsed
with :meth:`Harness.parse_command` and answered with
:meth:`Harness.answer_command`, unless another harness's :attr:`Harness.claim`
says the payload is its own: that harness then answers, as for its own hooks.

The hook command never loads plugins (it must stay on the standard
library), so what it needs is data, in a small table core writes from the
harnesses when the daemon starts and at ``thatch setup``
(:mod:`thatch.hooktable`): :attr:`Harness.hook_answers` (the events whose
output the agent reads, so only they wait for a starting daemon),
:attr:`Harness.commands`, :attr:`Harness.claim`, :attr:`Harness.environment`
(the variables the hook forwards), and the stand-in answers printed when no
daemon answers, rendered in advance with :meth:`Harness.deliver` and
:meth:`Harness.answer_command` from the fixed reminder texts.

The extraction nudge (run in the daemon) asks the event's harness how its
events name thatch's tools (:attr:`Harness.thatch_tool_prefixes`,
:attr:`Harness.mcp_tool_marker`) and which workflow it has
(:attr:`Harness.extraction_workflow`).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, Protocol, runtime_checkable

import attrs

if TYPE_CHECKING:
    from thatch.plugin.events import Event, EventKind
    from thatch.plugin.nudge import Nudge
    from thatch.plugin.prediction_log import Candidate
    from thatch.plugin.setup import Change, Detection, Scope, SetupContext, SetupTarget

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
    #: Whether the hook prints the reminder that needs no daemon when none
    #: answers (False for a command that answers beside another that does).
    stand_in: bool = True


@attrs.frozen
class PayloadClaim:
    """How to tell a harness's payload when it runs another harness's named commands.

    Cursor runs Claude Code's hooks: a payload with one of ``keys``, or a
    command run with one of ``environ`` set, is the claiming harness's.
    Plain data, because the hook command reads it without plugins.
    """

    keys: tuple[str, ...] = ()
    environ: tuple[str, ...] = ()

    def matches(self, payload: Mapping[str, Any], environ: Mapping[str, str]) -> bool:
        """Whether ``payload``, received with ``environ``, is the claiming harness's."""
        return any(key in payload for key in self.keys) or any(
            environ.get(name) for name in self.environ
        )


@attrs.frozen
class ExtractionWorkflow:
    """The workflow a harness has for saving what tool calls taught, as the nudge names it.

    Setup installs thatch's workflows (:mod:`thatch.instructions.workflows`) as the
    harness's skills, rules or agents; the extraction nudge tells the agent
    to use this one, besides giving the steps themselves.
    """

    #: The workflow's name as installed (``thatch-fact-extractor``).
    name: str
    #: What it is in the harness: ``skill``, ``rule`` or ``agent`` (a rule is followed).
    kind: str
    #: How to hand the work to a sub-agent, when the harness has them
    #: (`` (give it this block)``; "" for none).
    handoff: str = ""


@runtime_checkable
class Harness(Protocol):
    """One coding agent: its events, its output format, its setup and its checks.

    The data members are read-only: a class attribute (as :class:`HarnessBase`
    has them), a property or a frozen field provides each.
    """

    @property
    def name(self) -> str:
        """Short name: ``thatch hook NAME``, ``thatch setup --NAME``, ``Event.harness``."""

    @property
    def title(self) -> str:
        """What users call it (``Claude Code``)."""

    @property
    def hook_answers(self) -> Mapping[str, AnswerKind]:
        """Hook events whose output the agent reads, by the harness's event name
        (compared case-insensitively), and what each stands for. Only these
        wait for a starting daemon; all others spool and return at once.
        """

    @property
    def context_kinds(self) -> frozenset[EventKind] | None:
        """Event kinds whose hook output reaches the agent as context; None when
        the prompt hook carries it. Without ``prompt``, core holds a prompt's
        nudges and delivers them with the next event of one of these kinds.
        """

    @property
    def context_events(self) -> frozenset[str] | None:
        """The harness's event names (compared case-insensitively) whose hook output
        reaches the agent as context; None: every event whose kind is in
        ``context_kinds``. Core puts held nudges and tool-call context
        (``thatch_tool_nudges``) only in the answers of these events.
        """

    @property
    def commands(self) -> Sequence[HookCommand]:
        """Named commands this harness serves (empty for most harnesses)."""

    @property
    def claim(self) -> PayloadClaim | None:
        """How to tell this harness's payloads in another harness's named commands (None: never)."""

    @property
    def environment(self) -> tuple[str, ...]:
        """Environment variables the harness sets that the daemon needs, forwarded
        from the hook and the MCP relay (its project folder variable first).
        """

    @property
    def tool_prefix(self) -> str:
        """What thatch's texts (reminders, nudges, the stand-in answers) put
        before a tool's bare name (``memory_recall``) so the agent finds it:
        opencode ``thatch_``; "" for the bare name. Not how the harness's
        events report the tools (:attr:`thatch_tool_prefixes`): Claude Code
        reports ``mcp__thatch__memory_recall``, but its agents find the tool
        by the bare name, which keeps the texts short, so its prefix is "".
        """

    @property
    def thatch_tool_prefixes(self) -> tuple[str, ...]:
        """How the harness's events name the tools of thatch's MCP server: a
        name starting with one of these is thatch's, plugins' tools included
        (Claude Code ``mcp__thatch__``, opencode ``thatch_``). A bare name of
        one of thatch's own tools is always thatch's. The extraction leaves
        thatch's tool calls out of the queue.
        """

    @property
    def mcp_tool_marker(self) -> str:
        """What the harness's events may put before the name of any MCP tool
        (Cursor ``MCP:``); taken off before the name is compared ("" for none).
        """

    @property
    def extraction_workflow(self) -> ExtractionWorkflow | None:
        """The workflow the extraction nudge names, or None: the steps alone."""

    @property
    def install_hint(self) -> str:
        """How to install the program :meth:`prime_command` runs, for ``thatch prime``'s
        error when none is on PATH (``npm install -g opencode-ai``; "" when unknown).
        """

    @property
    def instruction_scopes(self) -> frozenset[Scope]:
        """Setup scopes whose files carry thatch's whole instructions (a rule file,
        AGENTS.md): once such a setup is complete, the MCP server sends only a pointer.
        """

    def parse_event(self, hook_event: str, payload: Mapping[str, Any]) -> Event:
        """The core event of one raw hook payload.

        Core fills in ``event_id`` and ``received_at``. Raise
        :class:`thatch.plugin.errors.InvalidInputError` naming the field when
        the payload is malformed: the hook still exits 0 and the error is logged.
        """

    def read_transcript(self, path: Path) -> Iterable[Candidate] | None:
        """The texts of a transcript file of this harness that may state Predictions.

        In transcript order: the agent's own texts and sub-agents' results
        handed back to it. None when the harness has no transcript reader.

        :raises InvalidInputError: the file is missing or not in the
            harness's format (the message names the path and the line).
        """

    def transcript_session(self, path: Path) -> str | None:
        """The session a transcript file of this harness belongs to; None when it cannot tell."""

    def deliver(self, nudges: Sequence[Nudge], event: Event) -> str:
        """The exact stdout the harness reads for ``nudges`` answering ``event`` ("" for none).

        Core also calls it when it writes the hook table, for the stand-in
        reminder of each of :attr:`hook_answers` (an event with no session):
        the format must depend on the event's name and kind alone.
        """

    def parse_command(self, command: HookCommand, payload: Mapping[str, Any]) -> Event:
        """The core event of a payload one of :attr:`commands` received.

        Also called for another harness's payload that :attr:`claim` gave to
        that harness; core then sets ``Event.harness`` to the claimant.
        Raise :class:`thatch.plugin.errors.InvalidInputError` as
        :meth:`parse_event` does.
        """

    def answer_command(self, nudges: Sequence[Nudge], event: Event, *, as_json: bool) -> str:
        """The stdout of one of :attr:`commands` answering ``event`` ("" for none).

        ``as_json``: the command line had ``--json``. A claimed payload is
        answered with the claimant's :meth:`deliver` instead.
        """

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
    context_events: frozenset[str] | None = None
    commands: Sequence[HookCommand] = ()
    claim: PayloadClaim | None = None
    environment: tuple[str, ...] = ()
    tool_prefix: str = ""
    thatch_tool_prefixes: tuple[str, ...] = ()
    mcp_tool_marker: str = ""
    extraction_workflow: ExtractionWorkflow | None = None
    install_hint: str = ""
    instruction_scopes: frozenset[Scope] = frozenset()

    def parse_event(self, hook_event: str, payload: Mapping[str, Any]) -> Event:
        raise NotImplementedError(f"harness {self.name!r} does not parse events")

    def read_transcript(self, path: Path) -> Iterable[Candidate] | None:
        return None

    def transcript_session(self, path: Path) -> str | None:
        return None

    def deliver(self, nudges: Sequence[Nudge], event: Event) -> str:
        raise NotImplementedError(f"harness {self.name!r} does not deliver nudges")

    def parse_command(self, command: HookCommand, payload: Mapping[str, Any]) -> Event:
        """The command's event, read as :meth:`parse_event` reads it."""
        return self.parse_event(command.event, payload)

    def answer_command(self, nudges: Sequence[Nudge], event: Event, *, as_json: bool) -> str:
        """What :meth:`deliver` prints, with or without ``--json``."""
        return self.deliver(nudges, event)

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
