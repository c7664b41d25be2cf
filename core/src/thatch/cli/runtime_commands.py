"""``thatch daemon``, ``thatch mcp``, ``thatch doctor`` and the hook commands' fallback."""

from __future__ import annotations

import argparse
from datetime import UTC, datetime
from typing import Any

from thatch.cli.output import emit, print_table

#: Exit status of ``thatch daemon status`` when no daemon runs (as ``systemctl status``),
#: or one runs that does not answer (it cannot serve either).
NOT_RUNNING = 3


def run_hook_command(args: argparse.Namespace) -> int:
    """Only reached when the fast path declined the arguments; run it anyway."""
    from thatch.hookcmd import main

    argv = [
        args.command,
        *(getattr(args, name) for name in ("harness", "event") if hasattr(args, name)),
    ]
    if getattr(args, "json", False):
        argv.append("--json")
    if getattr(args, "home", None):
        argv += ["--home", args.home]
    return main(argv) or 0


def mcp(args: argparse.Namespace) -> int:
    """``thatch mcp [--in-process]`` as argparse parsed it: the same as the fast path."""
    from thatch.mcp_relay import main

    return main(args)


def _client(args: argparse.Namespace) -> Any:
    from thatch.daemon.client import DaemonClient

    return DaemonClient(getattr(args, "home", None))


def daemon_start(args: argparse.Namespace) -> int:
    from thatch.daemon.client import DaemonUnavailableError

    client = _client(args)
    client.ensure_running(warm=True)
    found = client.probe()
    if not (found.answer and found.answer.get("ok")):
        # It answered pings a moment ago: stopped since, or its status fails.
        error = found.answer.get("error") if found.answer else found.problem
        raise DaemonUnavailableError(
            f"the daemon started but its status failed ({error}); see {client.located.log_path}"
        )
    print(f"daemon running (pid {found.pid or '?'}, version {found.answer.get('version', '?')})")
    return 0


def daemon_stop(args: argparse.Namespace) -> int:
    stopped = _client(args).stop()
    if stopped is None:
        print("no daemon was running")
    elif stopped.signal is None:
        print("daemon stopped")
    else:
        print(
            f"the daemon (pid {stopped.pid}) was running but not answering "
            f"({stopped.problem}); ended it with {stopped.signal}"
        )
    return 0


def daemon_status(args: argparse.Namespace) -> int:
    client = _client(args)
    found = client.probe()
    answer = found.answer
    if answer is not None and answer.get("ok"):
        kept = {k: v for k, v in answer.items() if k not in ("ok", "daemon")}
        return emit(args.json, {"running": True, "answering": True, **kept}, _show_status)
    data: dict[str, Any] = {
        "running": found.held,
        "answering": False,
        "pid": found.pid,
        "socket": client.located.socket_path,
        "problem": found.problem,
        "refused": found.refused,
    }
    if answer is not None:
        data["problem"] = f"its status failed ({answer.get('error')})"
    emit(args.json, data, _show_not_answering)
    return NOT_RUNNING


def _show_not_answering(data: dict[str, Any]) -> None:
    if not data["running"]:
        print(f"no daemon running (socket {data['socket']})")
        if data["refused"]:
            print(f"refused: {data['problem']}")
        return
    print(f"daemon running (pid {data['pid'] or '?'}) but not answering: {data['problem']}")
    print("'thatch daemon stop' ends it; the next hook starts a new one")


def _show_status(status: dict[str, Any]) -> None:
    started = datetime.fromtimestamp(status["started_at"], UTC).strftime("%Y-%m-%d %H:%M:%S UTC")
    print(f"daemon {status['version']} pid {status['pid']}, up since {started}")
    print(f"database {status['db_path']}; spooled events waiting: {status['spool_backlog']}")
    if status.get("spool_failed"):
        print(
            f"spooled events that could not be replayed: {status['spool_failed']} "
            "('thatch doctor' says where; the log says why)"
        )
    waiting = status.get("deferred_writes") or {}
    if waiting.get("waiting"):
        last = waiting.get("last_error")
        print(
            f"writes waiting for the storage: {waiting['waiting']}"
            + (f" (last error: {last})" if last else "")
            + "; they are tried again until the storage takes them"
        )
    sessions = status["sessions"]
    if not sessions:
        print("no sessions yet")
        return
    rows = [
        [s["session_id"], s["harness"], str(s["pending"]), str(s["nudge_level"]), str(s["prompts"])]
        for s in sessions
    ]
    print_table(rows, ["session", "harness", "queued", "nudge level", "prompts"])


def daemon_run(args: argparse.Namespace) -> int:
    from thatch.daemon.lifecycle import run

    return run(getattr(args, "home", None), replacing=bool(getattr(args, "replacing", False)))


def doctor(args: argparse.Namespace) -> int:
    from thatch.doctor import run_checks, show_checks

    checks = run_checks(getattr(args, "home", None))
    emit(args.json, checks, show_checks)
    return 0 if all(check.ok for check in checks) else 1
