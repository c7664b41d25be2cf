"""What git says about the working directory: its store name, branch and branches.

Only the standard library and the ``git`` command; a folder outside git, or
no git at all, simply has no repository store.
"""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

from thatch.memory.names import validate_store
from thatch.plugin.errors import InvalidInputError

_GIT_TIMEOUT = 5.0
# The last two path parts of any remote URL form: https, ssh, scp-like, file.
_OWNER_NAME = re.compile(r"[:/]([^/:]+)/([^/]+?)(?:\.git)?/?$")


def _git(cwd: Path, *args: str) -> str | None:
    try:
        completed = subprocess.run(
            ["git", "-C", str(cwd), *args],
            capture_output=True,
            text=True,
            timeout=_GIT_TIMEOUT,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired):
        return None
    return completed.stdout.strip() if completed.returncode == 0 else None


def store_from_remote(url: str) -> str | None:
    """``owner/name`` from a git remote URL, or None when it has no such shape."""
    match = _OWNER_NAME.search(url.strip())
    if not match:
        return None
    try:
        return validate_store(f"{match.group(1)}/{match.group(2)}")
    except InvalidInputError:
        return None


def repo_store(cwd: Path) -> str | None:
    """The store of the repository at ``cwd`` (from ``origin``), if any."""
    url = _git(cwd, "remote", "get-url", "origin")
    return store_from_remote(url) if url else None


def current_branch(cwd: Path) -> str | None:
    """The checked-out branch, or None when detached or outside git."""
    name = _git(cwd, "symbolic-ref", "--quiet", "--short", "HEAD")
    return name or None


def branch_names(cwd: Path) -> set[str] | None:
    """Local and remote-tracking branch names (remote prefix removed); None outside git."""
    listing = _git(cwd, "for-each-ref", "--format=%(refname)", "refs/heads", "refs/remotes")
    if listing is None:
        return None
    names = set()
    for ref in listing.splitlines():
        if ref.startswith("refs/heads/"):
            names.add(ref.removeprefix("refs/heads/"))
        elif ref.startswith("refs/remotes/"):
            remote_branch = ref.removeprefix("refs/remotes/").partition("/")[2]
            if remote_branch and remote_branch != "HEAD":
                names.add(remote_branch)
    return names
