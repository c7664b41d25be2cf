"""Homes that stand for machines sharing one server: real ``thatch`` commands and daemons.

Each home has a ``HOME`` and ``THATCH_HOME`` of its own and a config file
that keeps every part on the test's server and schema. The embedder is the
word-hash one from :mod:`thatch.testing` (no model to load), registered from
PYTHONPATH, so a daemon starts in about a second.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import attrs
from thatch.daemon.client import DaemonClient

THATCH = Path(sys.executable).with_name("thatch")

EMBEDDER_PLUGIN = """\
from thatch.plugin import hookimpl
from thatch.testing import WordHashEmbedder


@hookimpl
def thatch_embedder(config):
    return WordHashEmbedder()
"""


@attrs.frozen
class Machine:
    """One home on the shared server, with the environment its commands run in."""

    root: Path
    env: dict[str, str]

    @property
    def home(self) -> Path:
        return self.root / "thatch"

    @property
    def outside_git(self) -> Path:
        """A working folder outside any repository: memories go to the global store."""
        return self.root / "work"

    def thatch(self, *args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
        """``thatch ARGS`` as this machine's user runs it."""
        done = subprocess.run(
            [str(THATCH), *args],
            cwd=self.outside_git,
            env=self.env,
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )
        if check and done.returncode != 0:
            raise AssertionError(
                f"thatch {' '.join(args)} exited {done.returncode}:\n{done.stderr}"
            )
        return done

    def daemon(self) -> DaemonClient:
        return DaemonClient(str(self.home), self.env)

    def tool(self, name: str, **arguments: Any) -> Any:
        """A tool run by this machine's daemon, as an MCP session would run it."""
        answer = self.daemon().call(
            "call", tool=name, arguments=arguments, cwd=str(self.outside_git), env={}
        )
        assert answer["ok"], answer
        assert not answer["is_error"], answer
        return answer["result"]


def machine(root: Path, dsn: str, schema: str, *, postgres: str = "") -> Machine:
    """A fresh home under ``root`` whose config keeps everything on ``schema`` at ``dsn``.

    ``postgres``: more lines of its ``[storage.postgres]`` table.
    """
    modules = root / "modules"
    for folder in (root / "user", root / "thatch" / "config", root / "work", modules):
        folder.mkdir(parents=True, exist_ok=True)
    (modules / "word_hash_embedder.py").write_text(EMBEDDER_PLUGIN)
    (root / "thatch" / "config" / "config.toml").write_text(
        '[storage]\nbackend = "postgres"\n\n'
        f'[storage.postgres]\ndsn = "{dsn}"\nschema = "{schema}"\n{postgres}'
    )
    kept = {k: v for k, v in os.environ.items() if not k.startswith(("THATCH_", "XDG_"))}
    env = {
        **kept,
        "HOME": str(root / "user"),
        "THATCH_HOME": str(root / "thatch"),
        "PYTHONPATH": os.pathsep.join(filter(None, [str(modules), os.environ.get("PYTHONPATH")])),
        "THATCH_LOAD_PLUGINS": "sqlite,postgres",
        "THATCH_PLUGIN_MODULES": "word_hash_embedder",
    }
    return Machine(root, env)
