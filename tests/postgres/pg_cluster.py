"""Starting and stopping a real, throw-away PostgreSQL server for tests.

``initdb`` makes a cluster in a fresh temporary folder, ``pg_ctl`` starts it
listening on a Unix socket in that folder only (no TCP), and it is stopped
and deleted when the test session ends. PostgreSQL refuses to run as root,
so as root the server runs as the ``postgres`` user, which then owns the
folder. Without the server's programs every test here is skipped, naming
the package to install.

Each test gets a schema of its own (named from the test's folder), so tests
share the one server without seeing each other's rows.

Debian's PostgreSQL has no pgvector; the tests of server-side search run on
the PostgreSQL and pgvector that the ``pgserver`` wheel (dev group) ships,
copied first into a folder the server's user can reach
(:func:`pgvector_programs`): the project's virtualenv may sit in a folder
only root may enter.
"""

from __future__ import annotations

import glob
import hashlib
import importlib.util
import os
import pwd
import shutil
import subprocess
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import attrs

#: The unprivileged account the server runs as when the tests run as root.
SERVER_USER = "postgres"
#: The superuser initdb creates; the socket accepts it without a password.
DATABASE_USER = "thatch_test"
PORT = 5432

INSTALL_HINT = (
    "PostgreSQL's server programs (initdb, pg_ctl) were not found on PATH nor in "
    "/usr/lib/postgresql/*/bin; install them with: apt-get install -y postgresql"
)


PGVECTOR_HINT = (
    "the pgvector tests run on the PostgreSQL and pgvector of the pgserver wheel, which is "
    "not installed; it is in the dev group for Linux: uv sync"
)


class ServerMissing(Exception):
    """The server's programs, or the account to run them as, are not on this machine."""


@attrs.frozen
class Server:
    """A throw-away server: its programs, and a folder holding its data, log and socket."""

    programs: Path
    root: Path

    def dsn(self, dbname: str = "postgres") -> str:
        return f"host={self.root} port={PORT} user={DATABASE_USER} dbname={dbname}"

    def start(self) -> None:
        self._pg_ctl(
            "start",
            "--wait",
            "--log",
            str(self.root / "server.log"),
            "-o",
            # No TCP at all; durability off, the data is thrown away anyway.
            f"-c listen_addresses='' -k {self.root} -p {PORT}"
            " -c fsync=off -c synchronous_commit=off -c full_page_writes=off",
        )

    def stop(self) -> None:
        self._pg_ctl("stop", "--wait", "--mode", "fast")

    def restart(self) -> None:
        """Stop and start again: every open connection is cut."""
        self.stop()
        self.start()

    def running(self) -> bool:
        done = subprocess.run(
            [*_as_server_user(), str(self.programs / "pg_ctl"), "status", "--pgdata", self._data],
            capture_output=True,
            check=False,
        )
        return done.returncode == 0

    @property
    def _data(self) -> str:
        return str(self.root / "data")

    def _pg_ctl(self, action: str, *options: str) -> None:
        _run(
            [
                *_as_server_user(),
                str(self.programs / "pg_ctl"),
                action,
                "--pgdata",
                self._data,
                *options,
            ]
        )


def server_programs() -> Path | None:
    """The folder holding initdb and pg_ctl, newest version first; None when there is none."""
    found = shutil.which("initdb")
    if found and shutil.which("pg_ctl"):
        return Path(found).resolve().parent
    for folder in sorted(glob.glob("/usr/lib/postgresql/*/bin"), reverse=True):
        if Path(folder, "initdb").exists() and Path(folder, "pg_ctl").exists():
            return Path(folder)
    return None


def _as_server_user() -> list[str]:
    """The prefix that runs a command as the server's user (empty when not root)."""
    if os.geteuid() != 0:
        return []
    return ["runuser", "-u", SERVER_USER, "--"]


def _run(command: list[str]) -> None:
    done = subprocess.run(command, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise RuntimeError(
            f"{' '.join(command)} failed ({done.returncode}):\n{done.stdout}\n{done.stderr}"
        )


def schema_for(directory: Path) -> str:
    """A schema name of its own for a test folder (the same folder, the same schema)."""
    return "t_" + hashlib.sha1(str(directory).encode()).hexdigest()[:20]


@contextmanager
def pgvector_programs() -> Iterator[Path]:
    """The folder of initdb and pg_ctl of pgserver's PostgreSQL with pgvector, for one block.

    The wheel's files are copied into a fresh folder under /tmp that every
    user may read, keeping their layout: the programs find their libraries
    by relative paths (``$ORIGIN/../../../pgserver.libs``) and their share
    and lib folders next to bin.
    """
    spec = importlib.util.find_spec("pgserver")
    if spec is None or spec.origin is None:
        raise ServerMissing(PGVECTOR_HINT)
    package = Path(spec.origin).parent
    folder = Path(tempfile.mkdtemp(prefix="thatch-pgvector-"))
    try:
        folder.chmod(0o755)
        shutil.copytree(package / "pginstall", folder / "pgserver" / "pginstall", symlinks=True)
        libs = package.parent / "pgserver.libs"
        if libs.is_dir():
            shutil.copytree(libs, folder / "pgserver.libs", symlinks=True)
        yield folder / "pgserver" / "pginstall" / "bin"
    finally:
        shutil.rmtree(folder, ignore_errors=True)


@contextmanager
def running_server(programs: Path | None = None) -> Iterator[Server]:
    """A server started in a fresh folder, stopped and deleted when the block ends.

    ``programs``: the folder of initdb and pg_ctl (default: the system's,
    :func:`server_programs`).
    """
    programs = programs or server_programs()
    if programs is None:
        raise ServerMissing(INSTALL_HINT)
    owner: pwd.struct_passwd | None = None
    if os.geteuid() == 0:
        try:
            owner = pwd.getpwnam(SERVER_USER)
        except KeyError:
            raise ServerMissing(
                f"as root the server must run as the {SERVER_USER!r} user, which is missing; "
                "apt-get install -y postgresql creates it"
            ) from None
    # Straight under /tmp, not pytest's folder: the server's user must reach it.
    root = Path(tempfile.mkdtemp(prefix="thatch-pg-"))
    try:
        if owner is not None:
            os.chown(root, owner.pw_uid, owner.pw_gid)
        _initdb(programs, root / "data")
        server = Server(programs, root)
        server.start()
        try:
            yield server
        finally:
            if server.running():
                server.stop()
    finally:
        shutil.rmtree(root, ignore_errors=True)


def _initdb(programs: Path, data: Path) -> None:
    _run(
        [
            *_as_server_user(),
            str(programs / "initdb"),
            "--pgdata",
            str(data),
            "--username",
            DATABASE_USER,
            "--auth",
            "trust",
            "--encoding",
            "UTF8",
            "--locale",
            "C",
            "--no-sync",
        ]
    )
