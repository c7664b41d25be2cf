"""The hook table, read: which hook commands print an answer the agent reads, and the harnesses.

Only session starts and prompts wait for a daemon that is starting or
warming up (see :mod:`thatch.hookcmd.cap`, the cold-start allowance); the
others — tool calls, stops, compaction — answer nothing, so they spool and
exit at once.

The hot path cannot ask the harness plugins (importing them costs every
hook far more than this lookup), so core writes what it needs of them into
a small JSON file (:mod:`thatch.hooktable`, when the daemon starts and at
``thatch setup``), which this module reads: each harness's answered events
and the stand-in answers printed when no daemon answers
(:mod:`thatch.hookcmd.fallback`), its claim on other harnesses' payloads,
the named commands, and the environment variables the hook forwards.

Without the table (never set up, removed, unreadable or not this user's)
the event is still spooled and sent, but nothing is known to be answered:
the hook does not wait for a cold daemon and prints no stand-in. The daemon
it starts writes the table for the next hook. An unknown event name is
treated the same way: it loses at most a reply, never the event.
"""

from __future__ import annotations

import json
import os

# Not typing.TYPE_CHECKING: a hook command does not import typing.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping
    from typing import Any

    from thatch.hookcmd.args import HookArgs

#: The table's file, in the state folder (:attr:`thatch.rundir.RunDir.state_dir`).
TABLE_NAME = "hook-table.json"
#: The table's format; a table of another version is not read.
VERSION = 1
#: Larger than any table of a few harnesses: a bigger file is not read.
MAX_TABLE_BYTES = 1024 * 1024

#: :meth:`HookTable.kind`'s answers (``Harness.hook_answers`` values).
SESSION_START = "session_start"
PROMPT = "prompt"


def table_path(state_dir: str) -> str:
    """Where the hook table of the state folder ``state_dir`` lives."""
    return os.path.join(state_dir, TABLE_NAME)


class HookTable:
    """The harnesses as the hook commands see them (see :mod:`thatch.hooktable` for the format)."""

    __slots__ = ("commands", "environment", "harnesses")

    def __init__(self, data: dict[str, Any]) -> None:
        """Raises TypeError (or KeyError) when ``data`` is not a table's shape."""
        self.harnesses: dict[str, Any] = _mapping(data["harnesses"])
        for harness in self.harnesses.values():
            _mapping(harness["answers"])
            _mapping(harness["stand_in"])
            _mapping(harness["by_kind"])
            if harness["claim"] is not None:
                _strings(_mapping(harness["claim"])["keys"])
                _strings(harness["claim"]["environ"])
        self.commands: dict[str, Any] = _mapping(data["commands"])
        for command in self.commands.values():
            _mapping(command)
            if command["stand_in"] is not None:
                _mapping(command["stand_in"])
        #: The variables a hook and ``thatch mcp`` forward to the daemon.
        self.environment: tuple[str, ...] = _strings(data["environment"])

    def kind(self, args: HookArgs) -> str | None:
        """:data:`SESSION_START`, :data:`PROMPT`, or None for an event whose answer nobody reads."""
        if args.command == "hook":
            harness = self.harnesses.get((args.harness or "").lower())
            return harness["answers"].get((args.event or "").lower()) if harness else None
        command = self.commands.get(args.command)
        return command["answer"] if command else None

    def claimant(self, serving: str, payload: Mapping[str, Any], environ: Mapping[str, str]) -> str:
        """The harness whose payload a named command of ``serving`` got (``Harness.claim``).

        As the daemon tells it: the first other harness whose claim matches,
        else ``serving``.
        """
        for name, harness in self.harnesses.items():
            claim = harness["claim"]
            if name != serving and claim and _claims(claim, payload, environ):
                return name
        return serving


def _mapping(value: Any) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise TypeError("the hook table holds a value of the wrong type")
    return value


def _strings(value: Any) -> tuple[str, ...]:
    if not isinstance(value, list) or not all(isinstance(item, str) for item in value):
        raise TypeError("the hook table holds a value of the wrong type")
    return tuple(value)


def _claims(
    claim: Mapping[str, Any], payload: Mapping[str, Any], environ: Mapping[str, str]
) -> bool:
    """``PayloadClaim.matches``, on the table's copy of the claim."""
    return any(key in payload for key in claim["keys"]) or any(
        environ.get(name) for name in claim["environ"]
    )


def load(state_dir: str) -> HookTable | None:
    """The table of ``state_dir``, or None when it is missing, unreadable or not to be trusted.

    Its stand-ins are printed to the agent, so a file another user owns or
    may write is ignored.
    """
    try:
        fd = os.open(table_path(state_dir), os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0))
    except OSError:
        return None
    try:
        info = os.fstat(fd)
        if info.st_uid != os.getuid() or info.st_mode & 0o022 or info.st_size > MAX_TABLE_BYTES:
            return None
        data = json.loads(os.read(fd, MAX_TABLE_BYTES + 1))
        if not isinstance(data, dict) or data.get("version") != VERSION:
            return None
        return HookTable(data)
    except (OSError, ValueError, KeyError, TypeError, AttributeError, RecursionError):
        return None
    finally:
        os.close(fd)
