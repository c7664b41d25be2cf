"""``thatch doctor``: is everything thatch needs working here, and what to do if not."""

from __future__ import annotations

import json
import os
import re
import shutil
import stat
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Literal

import attrs

from thatch import rundir, wire

Status = Literal["ok", "warn", "fail"]


@attrs.frozen
class Check:
    """One finding: what was checked, how it went, and the fix when it did not."""

    name: str
    status: Status
    detail: str
    fix: str = ""

    @property
    def ok(self) -> bool:
        return self.status != "fail"


def run_checks(home: str | None = None, cwd: Path | None = None) -> list[Check]:
    """Every check, each isolated: one failing never hides the others."""
    located = rundir.locate(home=home)
    project = cwd or Path.cwd()
    named: list[tuple[str, Callable[[], Check]]] = [
        ("plugins", lambda: _plugins(home)),
        ("database", lambda: _database(home)),
        ("model", lambda: _model(home)),
        ("socket permissions", lambda: _runtime_dir(located)),
        ("daemon", lambda: _daemon(located)),
        ("spool", lambda: _spool(located)),
        ("log", lambda: _log(located)),
    ]
    checks = [_guarded(name, check) for name, check in named]
    for name, found in (
        ("harness configs", lambda: list(_harness_configs(project))),
        ("harness setups", lambda: list(_harness_setups(home, project))),
    ):
        try:
            checks.extend(found())
        except Exception as exc:
            checks.append(_failed(name, exc))
    return checks


def _harness_setups(home: str | None, project: Path) -> Iterator[Check]:
    """Each harness plugin's own verdict on its setup, for the harnesses in use here."""
    from thatch.config import Config
    from thatch.plugins import Plugins
    from thatch.setup.model import SetupContext

    config = Config.load(home)
    for target in Plugins.load(config).setup_targets():
        context = SetupContext(
            scope="project", project=project, user_home=Path.home(), command=("thatch",)
        )
        if not target.detect(context).found:
            continue
        problems = list(target.problems(context))
        if problems:
            fix = f"thatch setup --{target.name} (or --{target.name} --global)"
            yield Check(f"{target.title} setup", "warn", "; ".join(problems), fix)
        else:
            yield Check(f"{target.title} setup", "ok", "set up")


def show_checks(checks: list[Check]) -> None:
    """One line per check, and the fix under each problem."""
    marks = {"ok": "ok  ", "warn": "warn", "fail": "FAIL"}
    for check in checks:
        print(f"[{marks[check.status]}] {check.name}: {check.detail}")
        if check.fix:
            print(f"       fix: {check.fix}")


def _guarded(name: str, check: Callable[[], Check]) -> Check:
    try:
        return check()
    except Exception as exc:
        return _failed(name, exc)


def _failed(name: str, exc: Exception) -> Check:
    return Check(
        name,
        "fail",
        f"{type(exc).__name__}: {exc}",
        "reinstall thatch, or remove the plugin named above (THATCH_PLUGIN_MODULES, "
        "[plugins] blocked); 'thatch daemon run' shows the full error",
    )


def _open(home: str | None):  # type: ignore[no-untyped-def]
    import thatch

    return thatch.open(home)


def _plugins(home: str | None) -> Check:
    from thatch.errors import ThatchError

    try:
        with _open(home) as th:
            names = [info.name for info in th.describe_plugins()]
    except ThatchError as exc:
        return Check("plugins", "fail", str(exc), "fix the config file or reinstall thatch")
    return Check("plugins", "ok", ", ".join(names))


def _database(home: str | None) -> Check:
    from thatch.errors import ThatchError

    try:
        with _open(home) as th:
            problems = th.storage.integrity_problems()
            where = str(th.config.db_path)
    except ThatchError as exc:
        return Check("database", "fail", str(exc), "check the [storage] table of the config file")
    if problems:
        return Check(
            "database",
            "fail",
            f"{where}: {'; '.join(problems[:3])}",
            "restore from 'thatch export' output or a backup; then 'thatch import'",
        )
    return Check("database", "ok", f"{where} passes the integrity check")


def _model(home: str | None) -> Check:
    from thatch.errors import ThatchError

    try:
        with _open(home) as th:
            vector = th.embedder.embed_query("doctor")
            model = th.embedder.model_id
    except ThatchError as exc:
        return Check("model", "fail", str(exc), "reinstall thatch-fastembed or fix [embedder]")
    return Check("model", "ok", f"{model} loads ({len(vector)} dimensions)")


def _runtime_dir(located: rundir.RunDir) -> Check:
    folder = os.path.dirname(located.socket_path)
    problems = []
    for path, wanted in ((folder, 0o700), (located.socket_path, 0o600)):
        try:
            info = os.stat(path)
        except FileNotFoundError:
            continue
        mode = stat.S_IMODE(info.st_mode)
        if info.st_uid != os.getuid():
            problems.append(f"{path} belongs to uid {info.st_uid}")
        elif mode & ~wanted:
            problems.append(f"{path} has mode {mode:o}, not {wanted:o}")
    if problems:
        return Check(
            "socket permissions",
            "fail",
            "; ".join(problems),
            f"stop the daemon ('thatch daemon stop'), then remove {folder}",
        )
    return Check("socket permissions", "ok", f"{folder} is private to you")


def _daemon(located: rundir.RunDir) -> Check:
    import thatch
    from thatch.daemon.handlers import version_tuple

    message = {"protocol": wire.PROTOCOL, "client": "0", "op": "status"}
    try:
        status = wire.request(located.socket_path, message, timeout=5.0)
    except (OSError, wire.WireError):
        return Check(
            "daemon",
            "warn",
            "not running (hooks and 'thatch mcp' start it on demand)",
            "'thatch daemon start' starts it now; 'thatch daemon run' shows why it fails to",
        )
    version = str(status.get("version", "?"))
    if version_tuple(version) < version_tuple(thatch.__version__):
        return Check(
            "daemon",
            "warn",
            f"pid {status.get('pid')} runs {version}, older than this thatch",
            "'thatch daemon stop'; the next hook starts the new version",
        )
    return Check("daemon", "ok", f"pid {status.get('pid')}, version {version}")


def _spool(located: rundir.RunDir) -> Check:
    try:
        names = os.listdir(located.spool_dir)
    except FileNotFoundError:
        names = []
    waiting = sum(name.endswith(".json") for name in names)
    failed = sum(name.endswith(".failed") for name in names)
    if failed:
        return Check(
            "spool",
            "warn",
            f"{failed} spooled events could not be replayed ({located.spool_dir})",
            f"see {located.log_path}; delete the .failed files once read",
        )
    if waiting:
        return Check(
            "spool",
            "warn",
            f"{waiting} events wait for the daemon",
            "'thatch daemon start' replays them",
        )
    return Check("spool", "ok", "no events waiting")


def _log(located: rundir.RunDir) -> Check:
    return Check("log", "ok", located.log_path)


#: Harness config files that can run thatch, relative to the project (or ~ with "~/").
HARNESS_FILES = (
    ("Claude Code hooks", ".claude/settings.json"),
    ("Claude Code hooks", ".claude/settings.local.json"),
    ("Claude Code hooks", "~/.claude/settings.json"),
    ("Claude Code MCP", ".mcp.json"),
    ("Claude Code MCP", "~/.claude.json"),
    ("Cursor hooks", ".cursor/hooks.json"),
    ("Cursor hooks", "~/.cursor/hooks.json"),
    ("Cursor MCP", ".cursor/mcp.json"),
    ("Cursor MCP", "~/.cursor/mcp.json"),
    ("opencode", "opencode.json"),
    ("opencode", "~/.config/opencode/opencode.json"),
)


def _harness_configs(project: Path) -> Iterator[Check]:
    found = False
    for harness, relative in HARNESS_FILES:
        path = Path(relative).expanduser() if relative.startswith("~") else project / relative
        try:
            text = path.read_text(encoding="utf-8")
        except (FileNotFoundError, IsADirectoryError, PermissionError, UnicodeDecodeError):
            continue
        if "thatch" not in text:
            continue
        found = True
        yield _harness_file(harness, path, text)
    if not found:
        yield Check(
            "harness configs",
            "warn",
            f"no Claude Code, Cursor or opencode config mentions thatch for {project}",
            "register 'thatch mcp' and the hook commands (see docs/user-guide.md, Harnesses)",
        )


def _harness_file(harness: str, path: Path, text: str) -> Check:
    try:
        data = json.loads(text)
    except ValueError as exc:
        if path.name.endswith(".jsonc") or path.name == "opencode.json":
            return Check(harness, "ok", f"{path} mentions thatch (JSONC, not parsed)")
        return Check(harness, "fail", f"{path} is not valid JSON: {exc}", f"fix {path}")
    missing = sorted({cmd for cmd in _commands(data) if not _runnable(cmd)})
    if missing:
        return Check(
            harness,
            "fail",
            f"{path} runs {', '.join(missing)}, which is not on PATH",
            "use the absolute path of thatch (see 'which thatch') in that file",
        )
    return Check(harness, "ok", f"{path} runs thatch")


def _commands(data: object) -> Iterator[str]:
    """Every executable named in a "command" that mentions thatch, at any depth."""
    if isinstance(data, dict):
        for key, value in data.items():
            if key == "command" and isinstance(value, str) and "thatch" in value:
                program = _program(value)
                if program:
                    yield program
            elif key == "command" and isinstance(value, list) and value:
                if any("thatch" in str(part) for part in value):
                    yield str(value[0])
            else:
                yield from _commands(value)
    elif isinstance(data, list):
        for item in data:
            yield from _commands(item)


def _program(command_line: str) -> str | None:
    """The program a shell command line runs, after any ``NAME=value`` assignments."""
    import shlex

    try:
        words = shlex.split(command_line)
    except ValueError:
        return None
    return next((w for w in words if not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*=.*", w)), None)


def _runnable(command: str) -> bool:
    if os.sep in command:
        return os.access(command, os.X_OK)
    return shutil.which(command) is not None
