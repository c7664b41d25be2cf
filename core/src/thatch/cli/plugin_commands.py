"""``thatch install`` / ``thatch uninstall``: plugin distributions in thatch's own environment,
and ``thatch prime``."""

from __future__ import annotations

import argparse
import shutil
import sys

from thatch.plugin.errors import InvalidInputError

#: thatch's own harness plugins, by the short name ``thatch install`` takes:
#: what to suggest before any harness plugin is installed.
HARNESS_PLUGINS = ("claude", "cursor", "opencode")
#: Short names users type, for thatch's own plugin distributions.
KNOWN = (*HARNESS_PLUGINS, "sqlite", "fastembed")


def distribution(name: str) -> str:
    """``claude`` → ``thatch-claude``; anything else (a full name, a path, a URL) as given."""
    if not name or name.startswith("-"):
        raise InvalidInputError(f"plugin {name!r} is not a name; e.g. 'thatch install claude'")
    return f"thatch-{name}" if name in KNOWN else name


def installer(action: str, target: str) -> list[str]:
    """The command that installs or removes ``target`` in this interpreter's environment.

    uv-made environments have no pip, so uv is used when it is on PATH.
    """
    uv = shutil.which("uv")
    if uv:
        return [uv, "pip", action, "--python", sys.executable, target]
    flags = ["-y"] if action == "uninstall" else []
    return [sys.executable, "-m", "pip", action, *flags, target]


def install(args: argparse.Namespace) -> int:
    return _run(installer("install", distribution(args.plugin)))


def uninstall(args: argparse.Namespace) -> int:
    if args.plugin in ("core", "thatch-core"):
        raise InvalidInputError(
            "thatch-core is thatch itself; uninstall thatch with your installer"
        )
    return _run(installer("uninstall", distribution(args.plugin)))


def prime(args: argparse.Namespace) -> int:
    from thatch import prime as priming
    from thatch.plugin.config import Config
    from thatch.plugins import Plugins

    harnesses = Plugins.load(Config.load(getattr(args, "home", None))).harnesses()
    command = priming.choose(args.harness, harnesses=harnesses.values())
    if args.dry_run:
        import shlex

        print(shlex.join(command))
        return 0
    print(
        f"thatch: priming memory with {command[0]} (this may take a few minutes)", file=sys.stderr
    )
    return priming.run(command)


def _run(command: list[str]) -> int:
    import subprocess

    print("thatch: running " + " ".join(command), file=sys.stderr)
    return subprocess.run(command, check=False).returncode
