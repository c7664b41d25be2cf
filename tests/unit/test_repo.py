from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
from thatch.memory.repo import branch_names, current_branch, repo_store, store_from_remote


@pytest.mark.parametrize(
    ("url", "store"),
    [
        ("git@github.com:acme/web.git", "acme/web"),
        ("https://github.com/acme/web", "acme/web"),
        ("https://gitlab.example.com/group/sub/api.git/", "sub/api"),
        ("ssh://git@host:2222/acme/web.git", "acme/web"),
        ("file:///srv/git/acme/tools.git", "acme/tools"),
        ("not a url", None),
        ("https://host/../..", None),
    ],
)
def test_store_from_remote(url: str, store: str | None) -> None:
    assert store_from_remote(url) == store


def _git(cwd: Path, *args: str) -> None:
    subprocess.run(["git", "-C", str(cwd), *args], check=True, capture_output=True)


def test_repository_facts(tmp_path: Path) -> None:
    assert repo_store(tmp_path) is None
    assert branch_names(tmp_path) is None
    _git(tmp_path, "init", "-q", "-b", "main")
    _git(tmp_path, "remote", "add", "origin", "git@github.com:acme/web.git")
    _git(
        tmp_path,
        "-c",
        "user.name=t",
        "-c",
        "user.email=t@t",
        "commit",
        "-q",
        "--allow-empty",
        "-m",
        "init",
    )
    _git(tmp_path, "branch", "feature/x")
    assert repo_store(tmp_path) == "acme/web"
    assert current_branch(tmp_path) == "main"
    assert branch_names(tmp_path) == {"main", "feature/x"}
