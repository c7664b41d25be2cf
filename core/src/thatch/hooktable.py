"""The hook table: what the hook commands need to know of the harnesses, written as data.

The hook commands never load plugins (:mod:`thatch.hookcmd`), so core
writes what they need of the installed harnesses into one small JSON file,
owner-only, in the state folder (:func:`hook_table_path`), and the hook
reads it with the standard library (:mod:`thatch.hookcmd.answers`). It is
written when the daemon's :class:`~thatch.runtime.Runtime` starts and by
``thatch setup``, so it follows the plugins installed and allowed.

The format (``version`` 1)::

    {
      "version": 1,
      "environment": ["CLAUDECODE", "CLAUDE_PROJECT_DIR", ...],
      "harnesses": {
        "cursor": {
          "answers": {"sessionstart": "session_start", "beforesubmitprompt": "prompt"},
          "stand_in": {"sessionstart": "{\\"additional_context\\": ...}", "beforesubmitprompt": ""},
          "by_kind": {"session_start": "...", "prompt": ""},
          "claim": {"keys": ["conversation_id"], "environ": ["CURSOR_VERSION"]}
        }, ...
      },
      "commands": {
        "flush-tools": {"harness": "claude", "answer": "prompt",
                        "stand_in": {"plain": "...", "json": "..."}},
        "buffer-tool": {"harness": "claude", "answer": null, "stand_in": null}, ...
      }
    }

``answers`` is ``Harness.hook_answers`` with the event names lower-cased;
``stand_in`` is, for each, the harness's own delivery
(``Harness.deliver``) of the fixed reminder of :mod:`thatch.instructions.reminders`
(the session-start reminder's static part, or the save reminder), with
the harness's tool names; ``by_kind`` the same for the first event of each
kind, which answers a named command's payload the harness claims
(``Harness.claim``). A named command's ``stand_in`` is the serving
harness's ``Harness.answer_command`` without and with ``--json`` (null
when it answers nothing or ``HookCommand.stand_in`` is false).
``environment`` is every harness's ``Harness.environment``.
"""

from __future__ import annotations

import json
import logging
import os
from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from thatch import rundir
from thatch.hookcmd import answers
from thatch.instructions import reminders as reminder_text
from thatch.plugin.events import Event
from thatch.plugin.nudge import Nudge
from thatch.private import make_private_dirs

if TYPE_CHECKING:
    from thatch.plugin.config import Config
    from thatch.plugin.harness import AnswerKind, Harness, HookCommand

log = logging.getLogger("thatch")

#: The fixed text that stands in for the daemon's answer, by the kind of event answered.
STAND_IN_TEXTS: dict[str, str] = {
    answers.SESSION_START: reminder_text.SESSION_REMINDER_STATIC,
    answers.PROMPT: reminder_text.SAVE_REMINDER,
}


def hook_table_path(config: Config) -> Path:
    """Where the hook commands of ``config``'s home (or the user's folders) read the table."""
    home = config.paths.home
    located = rundir.locate(home=str(home) if home else None)
    return Path(answers.table_path(located.state_dir))


def write_hook_table(harnesses: Iterable[Harness], path: str | os.PathLike[str]) -> None:
    """Write the table of ``harnesses`` to ``path``, owner-only, replacing the old one at once.

    Raises OSError when the file cannot be written; an unchanged table is
    not written again.
    """
    data = (json.dumps(build_hook_table(harnesses), indent=1, sort_keys=True) + "\n").encode()
    target = Path(path)
    try:
        if target.read_bytes() == data:
            return
    except OSError:
        pass
    make_private_dirs(target.parent)
    partial = target.with_name(f".{target.name}.{os.getpid()}.tmp")
    fd = os.open(partial, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    try:
        with os.fdopen(fd, "wb") as file:
            file.write(data)
        # Hooks read it without locking: they see the old table or the new one.
        os.replace(partial, target)
    except BaseException:
        partial.unlink(missing_ok=True)
        raise


def build_hook_table(harnesses: Iterable[Harness]) -> dict[str, Any]:
    """The table of ``harnesses`` as JSON data (see the module's doc for the format)."""
    chosen = list(harnesses)
    commands: dict[str, Any] = {}
    for harness in chosen:
        for command in harness.commands:
            # The daemon gives a command to the first harness serving it; so does the table.
            commands.setdefault(command.name, _command(harness, command))
    return {
        "version": answers.VERSION,
        "environment": sorted({name for harness in chosen for name in harness.environment}),
        "harnesses": {harness.name.lower(): _harness(harness) for harness in chosen},
        "commands": commands,
    }


def _harness(harness: Harness) -> dict[str, Any]:
    stand_in: dict[str, str] = {}
    by_kind: dict[str, str] = {}
    for event, kind in harness.hook_answers.items():
        text = _stand_in(harness, event, kind)
        stand_in[event.lower()] = text
        by_kind.setdefault(kind, text)
    claim = harness.claim
    return {
        "answers": {event.lower(): kind for event, kind in harness.hook_answers.items()},
        "stand_in": stand_in,
        "by_kind": by_kind,
        "claim": None if claim is None else {"keys": [*claim.keys], "environ": [*claim.environ]},
    }


def _command(harness: Harness, command: HookCommand) -> dict[str, Any]:
    kind = _kind_of(harness, command.event)
    stand_in = None
    if kind is not None and command.stand_in:
        stand_in = {
            "plain": _stand_in(harness, command.event, kind, command=command, as_json=False),
            "json": _stand_in(harness, command.event, kind, command=command, as_json=True),
        }
    return {"harness": harness.name.lower(), "answer": kind, "stand_in": stand_in}


def _kind_of(harness: Harness, event: str) -> AnswerKind | None:
    """What ``event`` stands for among ``harness.hook_answers`` (compared without case)."""
    for name, kind in harness.hook_answers.items():
        if name.lower() == event.lower():
            return kind
    return None


def _stand_in(
    harness: Harness,
    event: str,
    kind: AnswerKind,
    *,
    command: HookCommand | None = None,
    as_json: bool = False,
) -> str:
    """The harness's own output of the fixed reminder answering ``event`` ("" when it fails)."""
    text = reminder_text.named(STAND_IN_TEXTS[kind], harness.tool_prefix)
    nudges = [Nudge(source="reminder", text=text)]
    answered = Event(kind=kind, harness=harness.name, session_id="", hook_event=event)
    try:
        if command is not None:
            return harness.answer_command(nudges, answered, as_json=as_json)
        return harness.deliver(nudges, answered)
    except Exception:
        # One harness's bug costs its own stand-in, never the table.
        log.exception("harness %s: no stand-in answer for %s", harness.name, event)
        return ""
