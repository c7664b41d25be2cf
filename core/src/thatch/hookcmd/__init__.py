"""The hook commands' hot path: ``thatch reminder``, ``buffer-tool`` and the rest.

Harnesses start a hook command on every prompt and every tool call, so these
commands are answered before argparse or any heavy module loads. They import
only the standard library plus thatch's standard-library modules
:mod:`thatch.rundir`, :mod:`thatch.wire`, :mod:`thatch.socketguard` (the
socket must be the user's) and :mod:`thatch.unicode_fix`, and
:mod:`thatch.private` the first time the spool folder is made, while things
go well; failure paths may import a little more.

A hook command reads the harness's JSON payload from stdin, spools it to a
file, hands it to the daemon in one round trip, prints the daemon's answer
and removes the file. Whatever goes wrong — bad stdin, no daemon, a hung
daemon — it exits 0 within a hard cap (default 300 ms;
``THATCH_HOOK_TIMEOUT_MS`` or ``[hooks] timeout_ms``; a payload of several
MB may take a little longer to spool) and leaves the file for the daemon to
take when it is back.
A session start or a prompt, whose answer the agent reads, may instead wait
for a daemon that is starting or loading its model, up to its cold-start
allowance (default 6 s; ``THATCH_HOOK_COLD_START_MS`` or ``[hooks]
cold_start_ms``; see :mod:`thatch.hookcmd.command`).
A hook the daemon did not answer prints nothing, but for a session start
or a prompt, which get the part of thatch's reminder that needs no daemon
(:mod:`thatch.hookcmd.fallback`). Which events those are, and everything
else the hooks know of the harnesses, comes from the hook table core writes
(:mod:`thatch.hookcmd.answers`); the hooks never load plugins.
``THATCH_NO_AUTOSTART=1`` stops a hook command from starting the daemon.
"""

from __future__ import annotations

from thatch.hookcmd.args import HOOK_COMMANDS, HookArgs, parse

__all__ = ["HOOK_COMMANDS", "HookArgs", "main", "parse", "run"]


def main(argv: list[str]) -> int | None:
    """Run ``argv`` if it is a hook command and return 0; None lets argparse take it.

    None also means ``-h``/``--help`` or arguments this fast path does not
    understand: argparse then prints help or its usage error.
    """
    parsed = parse(argv)
    if parsed is None:
        return None
    return run(parsed)


def run(args: HookArgs) -> int:
    """Run one parsed hook command; always returns 0 (hooks fail open).

    The argparse fallback (``thatch.cli.runtime_commands``) calls this too.
    """
    from thatch.hookcmd.command import run_hook

    return run_hook(args)
