"""``thatch daemon``, ``thatch mcp``, ``thatch doctor`` and the hook commands' fallback."""

from __future__ import annotations

import argparse
from datetime import UTC, datetime
from typing import Any

from thatch.cli.output import emit, print_table

#: Exit status of ``thatch daemon status`` when no daemon runs (as ``systemctl status``).
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
    from thatch.mcp_server import main

    return main(args)


def _client(args: argparse.Namespace) -> Any:
    from thatch.daemon.client import DaemonClient

    return DaemonClient(getattr(args, "home", None))


def daemon_start(args: argparse.Namespace) -> int:
    client = _client(args)
    client.ensure_running(warm=True)
    status = client.request("status")
    print(f"daemon running (pid {status['pid']}, version {status['version']})")
    return 0


def daemon_stop(args: argparse.Namespace) -> int:
    if _client(args).stop():
        print("daemon stopped")
    else:
        print("no daemon was running")
    return 0


def daemon_status(args: argparse.Namespace) -> int:
    from thatch import wire

    client = _client(args)
    try:
        status = client.request("status", timeout=5.0)
    except (OSError, wire.WireError):
        status = {"ok": False}
    if not status.get("ok"):
        data = {"running": False, "socket": client.located.socket_path}
        emit(args.json, data, lambda _: print(f"no daemon running (socket {data['socket']})"))
        return NOT_RUNNING
    status = {"running": True, **{k: v for k, v in status.items() if k not in ("ok", "daemon")}}
    return emit(args.json, status, _show_status)


def _show_status(status: dict[str, Any]) -> None:
    started = datetime.fromtimestamp(status["started_at"], UTC).strftime("%Y-%m-%d %H:%M:%S UTC")
    print(f"daemon {status['version']} pid {status['pid']}, up since {started}")
    print(f"database {status['db_path']}; spooled events waiting: {status['spool_backlog']}")
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

    return run(getattr(args, "home", None))


def doctor(args: argparse.Namespace) -> int:
    from thatch.doctor import run_checks, show_checks

    checks = run_checks(getattr(args, "home", None))
    emit(args.json, checks, show_checks)
    return 0 if all(check.ok for check in checks) else 1
