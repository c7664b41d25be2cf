"""``thatch mcp``: the stdio MCP server a harness starts for each session, as a relay.

The MCP server itself (the official SDK's) runs in the daemon, one session
per connection (:mod:`thatch.daemon.mcp_session`); this process only opens
that session (:mod:`~thatch.mcp_relay.connect`, starting the daemon when
none runs) and copies bytes between its stdin/stdout and the socket
(:mod:`~thatch.mcp_relay.pump`), reconnecting when the daemon goes away.
A harness waits for this server before its first turn, and the SDK alone
takes about a second to import, so nothing here imports it: while things go
well this path loads only the standard library, :mod:`thatch.rundir` and
:mod:`thatch.wire` (a test checks it).

With ``--in-process``, or when no daemon can be started (``THATCH_NO_AUTOSTART``,
a runtime folder that is not private, a daemon that fails to start), the
SDK's server runs here instead, with the tools on a runtime of its own
(:func:`thatch.mcp.server.serve_in_process`).

stdout carries only protocol bytes; notes go to stderr and thatch's log file.
"""

from __future__ import annotations

import os
import sys

from thatch import rundir

# Not typing.TYPE_CHECKING: this start-up path does not import typing.
TYPE_CHECKING = False
if TYPE_CHECKING:
    import argparse
    from collections.abc import Sequence


class ServerArgs:
    """``thatch mcp``'s options, as :func:`parse_args` reads them."""

    __slots__ = ("home", "in_process")

    def __init__(self, home: str | None = None, in_process: bool = False) -> None:
        self.home = home
        self.in_process = in_process

    def __eq__(self, other: object) -> bool:
        return isinstance(other, ServerArgs) and (self.home, self.in_process) == (
            other.home,
            other.in_process,
        )

    def __hash__(self) -> int:
        return hash((self.home, self.in_process))

    def __repr__(self) -> str:
        return f"ServerArgs(home={self.home!r}, in_process={self.in_process!r})"


def parse_args(argv: Sequence[str]) -> ServerArgs | None:
    """``argv`` (without the program name) as ``thatch mcp``, or None for argparse.

    The console script serves ``thatch mcp`` without building the whole
    command line's parser, which imports every command's module. Only the
    plain forms are read here: ``-h``, abbreviations, unknown options and
    other commands return None, and argparse answers them.
    """
    home: str | None = None
    in_process = False
    seen_command = False
    tokens = iter(argv)
    for token in tokens:
        if token == "--home":
            home = next(tokens, None)
            if home is None or home.startswith("-"):
                return None
        elif token.startswith("--home="):
            home = token.partition("=")[2]
        elif token == "--in-process" and seen_command:
            in_process = True
        elif token == "mcp" and not seen_command:
            seen_command = True
        else:
            return None
    return ServerArgs(home or None, in_process) if seen_command else None


def main(args: argparse.Namespace | ServerArgs) -> int:
    """Relay ``thatch mcp`` to a session in the daemon, or serve it here; returns 0."""
    home = getattr(args, "home", None) or None
    if getattr(args, "in_process", False):
        return _in_process(home, None)
    from thatch.mcp_relay.connect import Opener, Unavailable

    located = rundir.locate(os.environ, home=home)
    opener = Opener(located, os.environ, home, _cwd())
    try:
        first = opener.open()
    except Exception as exc:
        # Nothing was read from stdin yet: the server here starts from scratch.
        reason = str(exc) if isinstance(exc, Unavailable) else f"{type(exc).__name__}: {exc}"
        why = f"the daemon is unavailable ({reason}); running tools in this process"
        return _in_process(home, why)
    if first.notice:
        note(located, first.notice)
    from thatch.mcp_relay.pump import Relay

    Relay(opener.open, lambda text: note(located, text)).run(first)
    return 0


def note(located: rundir.RunDir, text: str) -> None:
    """One warning on stderr (harnesses show an MCP server's stderr) and in the log file."""
    from thatch import logfile

    logfile.append(located.log_path, "mcp", text)
    try:
        sys.stderr.write(f"thatch mcp: WARNING {text}\n")
        sys.stderr.flush()
    except (OSError, ValueError):
        pass  # no stderr to write to: the log file has it


def _in_process(home: str | None, why: str | None) -> int:
    from thatch.mcp.server import serve_in_process

    return serve_in_process(home, why=why)


def _cwd() -> str:
    try:
        return os.getcwd()
    except OSError:
        # The folder was deleted under the harness; its last known name still helps.
        return os.environ.get("PWD", "")
