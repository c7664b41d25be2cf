"""``thatch doctor``: is everything thatch needs working here, and what to do if not."""

from __future__ import annotations

import os
import shlex
import stat
from collections.abc import Callable, Iterable, Iterator, Sequence
from pathlib import Path
from typing import Any, Literal

import attrs

from thatch import rundir, socketguard, wire
from thatch.daemon.client import ANSWER_SECONDS

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
        ("kept writes", lambda: _kept_writes(located)),
        ("log", lambda: _log(located)),
    ]
    checks = [_guarded(name, check) for name, check in named]
    try:
        checks.extend(_table_checks(home))
    except Exception as exc:
        checks.append(_failed("config tables", exc))
    try:
        checks.extend(_harness_checks(home, project))
    except Exception as exc:
        checks.append(_failed("harness setup", exc))
    return checks


def _table_checks(home: str | None) -> Iterator[Check]:
    """The config tables plugins declare, each checked; tables nobody declares, as warnings."""
    from thatch.config.plugin_tables import doctor_checks

    for line in doctor_checks(home):
        yield Check(line.name, line.status, line.detail, line.fix)


def _files(paths: Iterable[Path]) -> str:
    """The harness's config files as doctor lists them, each marked when missing."""
    shown = [str(path) if path.exists() else f"{path} (missing)" for path in paths]
    return ", ".join(shown) if shown else "no config files"


def _harness_checks(home: str | None, project: Path) -> Iterator[Check]:
    """The harnesses set up for ``project`` (or globally): their problems, then their commands.

    Only what ``thatch setup`` installed is checked (its manifest says where),
    so a harness the user never chose is never warned about. A problem seen
    from two scopes (a project setup also counts user-level config) is
    reported once.
    """
    from thatch.instructions.briefing import BRIEFING
    from thatch.plugin import launcher
    from thatch.plugin.config import Config
    from thatch.plugin.setup import SetupContext
    from thatch.plugins import Plugins
    from thatch.setup import engine

    config = Config.load(home)
    # Keyed as setup keys them: the project's real path, the home as it is.
    scopes = {f"project:{project.resolve()}": project, f"global:{Path.home()}": None}
    installs = [i for i in engine.status(config.paths.state_dir) if i.scope in scopes]
    targets = Plugins.load(config).harnesses()
    if not installs:
        flags = " / ".join(f"--{name}" for name in targets)
        yield Check(
            "harness setup",
            "warn",
            f"no harness is set up for {project}, nor for all your projects",
            f"thatch setup (asks), or thatch setup {flags}" if flags else "thatch setup (asks)",
        )
        return
    command = launcher.choose().command
    env = {"THATCH_HOME": str(config.paths.home)} if config.paths.home else {}
    seen: set[str] = set()
    for install in installs:
        target = targets.get(install.target)
        title = target.title if target is not None else install.target
        launches = _launches(install)
        unfound = _unstartable(launches)
        scope, _, _ = install.scope.partition(":")
        name = f"{title} setup ({scope})"
        if target is None:
            yield Check(
                name,
                "warn",
                "set up, but its plugin is not installed",
                f"thatch install {install.target}",
            )
        else:
            folder = scopes[install.scope]
            context = SetupContext(
                scope="project" if folder else "global",
                project=folder,
                user_home=Path.home(),
                command=command,
                env=env,
                environ=dict(os.environ),
                briefing=BRIEFING,
            )
            problems = [p for p in target.problems(context) if p not in seen]
            seen.update(problems)
            for problem in problems:
                detail, _, fix = problem.partition("; fix: ")
                # A command the harness cannot start at all is no mere warning:
                # every hook and the MCP server fail with it.
                failing = any(phrase in detail for phrase in unfound.values())
                yield Check(name, "fail" if failing else "warn", detail, fix)
            if not problems:
                yield Check(name, "ok", f"set up: {_files(target.config_files(context))}")
        # A program the plugin already reported as not found is not run again.
        skip = unfound if target is not None else {}
        yield from _launch_checks(title, install, launches, seen, skip=skip)


def _launches(install: Any) -> list[Any]:
    """Each way the installation's config starts thatch."""
    from thatch.setup import probe

    values = [
        value
        for record in install.files
        for value in [*(e.value for e in record.entries), *(i.item for i in record.items)]
    ]
    return list(probe.launches(values))


def _unstartable(launches: list[Any]) -> dict[str, str]:
    """Each program a harness cannot start, with why, as the plugins phrase it."""
    from thatch.plugin import launcher

    found = {launch.program: launcher.program_problem(launch.program) for launch in launches}
    return {program: problem for program, problem in found.items() if problem is not None}


def _launch_checks(
    title: str, install: Any, launches: list[Any], seen: set[str], *, skip: dict[str, str]
) -> Iterator[Check]:
    """Each of ``launches`` run as the harness would, but the programs in ``skip``."""
    from thatch.setup import probe

    for launch in launches:
        if launch.program in skip:
            continue
        failure = probe.problem(launch)
        if failure is None:
            continue
        detail = f"{title} starts thatch as `{launch}`, which {failure}"
        if detail in seen:
            continue
        seen.add(detail)
        yield Check(f"{title} commands", "fail", detail, _rerun(install))


def _rerun(install: Any) -> str:
    from thatch.plugin import launcher

    scope, _, folder = install.scope.partition(":")
    where = "--global" if scope == "global" else f"--project {shlex.quote(folder)}"
    setup = shlex.join([*launcher.choose().command, "setup", f"--{install.target}"])
    return launcher.unrunnable_fix(f"{setup} {where}")


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
    from thatch.plugin.errors import ThatchError

    try:
        with _open(home) as th:
            names = [info.name for info in th.describe_plugins()]
    except ThatchError as exc:
        return Check("plugins", "fail", str(exc), "fix the config file or reinstall thatch")
    return Check("plugins", "ok", ", ".join(names))


def _database(home: str | None) -> Check:
    from thatch.plugin.errors import ThatchError

    try:
        with _open(home) as th:
            problems = th.integrity_problems()
            routed = len(th.config.memory_places()) > 1
            stores = [info.name for info in th.stores()] if routed else []
            where = _storage_places(th.config, stores)
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


def _storage_places(config: Any, stores: Sequence[str] = ()) -> str:
    """Where the storage parts are kept: the SQLite file, or a backend and its server.

    Parts kept in one place are named once; apart, each place lists its parts.
    Memories routed by ``[storage.stores]`` are listed per place, with the
    patterns it keeps and the ``stores`` that hold memories there now.
    """
    from thatch.plugin.config import STORAGE_PARTS

    places: dict[str, list[str]] = {}
    for part in STORAGE_PARTS:
        if part == "memories":
            kept = _memory_places(config, stores)
        else:
            kept = [(_storage_place(config, config.backend_for(part)), part)]
        for place, what in kept:
            places.setdefault(place, []).append(what)
    if len(places) == 1:
        return next(iter(places))
    return "; ".join(f"{' and '.join(parts)} in {place}" for place, parts in places.items())


def _memory_places(config: Any, stores: Sequence[str]) -> list[tuple[str, str]]:
    """(where, "memories of ...") for each place that keeps some stores' memories."""
    names = config.memory_places()
    if len(names) == 1:
        return [(_storage_place(config, config.backend_for("memories")), "memories")]
    found = []
    for name in names:
        placed = config.memory_place_config(name)
        patterns = [route.pattern for route in config.store_routes if route.place == name]
        if name == names[0]:
            patterns.append("every other store")
        held = [
            store
            for store in stores
            if config.memory_place_for_store(store) == name and store not in patterns
        ]
        now = f" ({', '.join(held)})" if held else ""
        where = _storage_place(placed, placed.backend_for("memories"))
        found.append((where, f"memories of {', '.join(patterns)}{now}"))
    return found


def _storage_place(config: Any, backend: str) -> str:
    """One backend's place; a server's connection string is shown without its password."""
    from thatch.plugin import database_url

    if backend == "sqlite":
        return str(config.db_path)
    # A server backend's own table, [storage.<backend>], names it (see docs/team.md).
    table = config.tables.get(f"storage.{backend}", {})
    dsn = str(table.get("dsn") or config.database_url or "")
    shown = database_url.without_secrets(dsn) if dsn else "the backend's default server"
    schema = table.get("schema")
    return f"{backend} at {shown}" + (f", schema {schema}" if schema else "")


def _model(home: str | None) -> Check:
    from thatch.plugin.errors import ThatchError

    try:
        with _open(home) as th:
            vector = th.embedder.embed_query("doctor")
            model = th.embedder.model_id
    except ThatchError as exc:
        return Check("model", "fail", str(exc), "reinstall thatch-fastembed or fix [embedder]")
    return Check("model", "ok", f"{model} loads ({len(vector)} dimensions)")


def _runtime_dir(located: rundir.RunDir) -> Check:
    """The folders and the socket: ours, private, and what the clients will talk to."""
    address = located.socket_path
    bound = socketguard.linked_socket(address) or address
    # The runtime folder and the socket's: one and the same unless the socket is linked.
    folders = list(dict.fromkeys((located.runtime_dir, os.path.dirname(bound))))
    found = [(_private_problem(f, 0o700), f) for f in folders]
    found.append((_private_problem(bound, 0o600), os.path.dirname(bound)))
    if not any(problem for problem, _ in found):
        found.append((_refusal(address), os.path.dirname(bound)))
    problems = {problem: folder for problem, folder in found if problem}
    if problems:
        remove = " and ".join(dict.fromkeys(problems.values()))
        return Check(
            "socket permissions",
            "fail",
            "; ".join(problems),
            f"stop the daemon ('thatch daemon stop'), then remove {remove}",
        )
    return Check("socket permissions", "ok", f"{os.path.dirname(bound)} is private to you")


def _refusal(address: str) -> str | None:
    """Why the clients would refuse to talk to the socket at ``address`` (None: they would not)."""
    try:
        socketguard.socket_file(address)
    except socketguard.UnsafeSocketError as exc:
        return str(exc)
    except OSError:
        pass  # no socket yet: the daemon makes it
    return None


def _private_problem(path: str, wanted: int) -> str | None:
    try:
        info = os.stat(path)
    except FileNotFoundError:
        return None
    mode = stat.S_IMODE(info.st_mode)
    if info.st_uid != os.getuid():
        return f"{path} belongs to uid {info.st_uid}"
    if mode & ~wanted:
        return f"{path} has mode {mode:o}, not {wanted:o}"
    return None


#: Seconds doctor waits for the daemon's answer before calling it hung.
DAEMON_ANSWER_SECONDS = ANSWER_SECONDS


def _daemon(located: rundir.RunDir) -> Check:
    import thatch
    from thatch.daemon.handlers import version_tuple

    message = {"protocol": wire.PROTOCOL, "client": "0", "op": "status"}
    pid = _daemon_pid(located)
    # 'daemon stop' signals a daemon that does not answer (SIGTERM, then SIGKILL).
    kill = (
        f"'thatch daemon stop' ends it (or kill {pid or '<pid of thatch daemon run>'}); "
        "the next hook starts a new daemon"
    )
    try:
        status = wire.request(located.socket_path, message, timeout=DAEMON_ANSWER_SECONDS)
    except TimeoutError:
        return Check(
            "daemon",
            "fail",
            f"hung: the daemon (pid {pid or '?'}) accepts connections but did not answer "
            f"within {DAEMON_ANSWER_SECONDS} s (stopped, or stuck); hooks get no nudges",
            kill,
        )
    except socketguard.UnsafeSocketError as exc:
        return Check(
            "daemon",
            "fail",
            f"not asked: {exc}",
            "see 'socket permissions' above; the next hook starts a new daemon",
        )
    except (OSError, wire.WireError):
        if pid is None:
            return Check(
                "daemon",
                "warn",
                "not running (hooks and 'thatch mcp' start it on demand)",
                "'thatch daemon start' starts it now; 'thatch daemon run' shows why it fails to",
            )
        return Check(
            "daemon",
            "fail",
            f"the daemon (pid {pid or '?'}) is running but nothing answers on "
            f"{located.socket_path} (the socket is gone); hooks get no nudges",
            kill,
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


def _daemon_pid(located: rundir.RunDir) -> int | None:
    """The daemon's pid while one holds the lock (a dead daemon's pid file does not count)."""
    from thatch import daemon_lock as lock

    if not lock.is_held(located.lock_path):
        return None
    try:
        with open(located.pid_path, encoding="ascii") as handle:
            return int(handle.read().strip())
    except (OSError, ValueError):
        return 0


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


def _kept_writes(located: rundir.RunDir) -> Check:
    """Writes the storage refused after a hook was answered, which the daemon tries again."""
    if not os.path.exists(located.sessions_db):
        return Check("kept writes", "ok", "none waiting")
    from thatch.sessions import SessionStore

    store = SessionStore(Path(located.sessions_db))
    try:
        waiting = store.pending_writes()
    finally:
        store.close()
    if not waiting:
        return Check("kept writes", "ok", "none waiting")
    oldest = waiting[0]
    return Check(
        "kept writes",
        "warn",
        f"{len(waiting)} writes wait for the storage (recall counts, fires, the prediction "
        f"log), the oldest tried {oldest.tries} times; last error: {oldest.last_error}",
        "make the storage reachable (the daemon tries them again, and 'thatch daemon status' "
        "shows the count)",
    )


def _log(located: rundir.RunDir) -> Check:
    return Check("log", "ok", located.log_path)
