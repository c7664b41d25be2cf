from __future__ import annotations

import shutil
import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest
from thatch.memory.names import validate_branch, validate_label, validate_store
from thatch.plugin.errors import InvalidInputError


@pytest.mark.parametrize("name", ["global", "acme/web", "owner.name/repo_1", "all/web"])
def test_good_store_names(name: str) -> None:
    assert validate_store(name) == name


@pytest.mark.parametrize(
    "name",
    [
        "",
        "a/../b",
        "../x",
        "a/b/c",
        "/abs",
        "a/",
        "a\nb",
        ".hidden",
        "a/.b",
        "x" * 101,
        "sp ace/x",
        "solo",
        "all",
    ],
)
def test_bad_store_names_name_input_and_fix(name: str) -> None:
    with pytest.raises(InvalidInputError) as caught:
        validate_store(name)
    message = str(caught.value)
    assert "store name" in message
    assert "use 'global' or 'owner/name'" in message


def test_store_names_that_reads_would_take_for_something_else_are_refused() -> None:
    with pytest.raises(InvalidInputError, match="'all' is reserved: it means every store"):
        validate_store("all")
    with pytest.raises(InvalidInputError, match="'solo' has no owner part"):
        validate_store("solo")


@pytest.mark.parametrize("label", ["tabs", "build command", "ci:deploy-step", "über-config"])
def test_good_labels(label: str) -> None:
    assert validate_label(label) == label


@pytest.mark.parametrize(
    "label", ["", "  ", " x", "a/b", "..", "a\\b", "bell\x07", "x" * 121, "zero\u200bwidth"]
)
def test_bad_labels(label: str) -> None:
    with pytest.raises(InvalidInputError, match="label"):
        validate_label(label)


def test_branches() -> None:
    assert validate_branch(None) is None
    assert validate_branch("feature/login") == "feature/login"
    for bad in ("", "a..b", "has space", "x" * 201):
        with pytest.raises(InvalidInputError, match="branch"):
            validate_branch(bad)


#: Branch names and whether git takes them (``git check-ref-format --branch``).
GIT_BRANCHES = {
    "main": True,
    "feature/login": True,
    "fix#123": True,
    "a=b": True,
    "feat/ü": True,
    "a,b": True,
    "x'y": True,
    "semi;colon": True,
    "release-1.2": True,
    "a@b": True,
    "@a": True,
    "a{b}": True,
    "a/-b": True,
    "refs/heads/x": True,
    "x/HEAD": True,
    "HEAD": False,
    "-x": False,
    "a@{b": False,
    "a..b": False,
    ".a": False,
    "a/.b": False,
    "a.lock": False,
    "a.lock/b": False,
    "a/b.lock/c": False,
    "a/": False,
    "/a": False,
    "a//b": False,
    "a.": False,
    "a b": False,
    "a~b": False,
    "a^b": False,
    "a:b": False,
    "a?b": False,
    "a*b": False,
    "a[b": False,
    "a\\b": False,
    "a\x01b": False,
    "a\x7fb": False,
    "a\tb": False,
}


@pytest.mark.parametrize(("branch", "valid"), GIT_BRANCHES.items())
def test_branch_names_follow_git(branch: str, valid: bool) -> None:
    if valid:
        assert validate_branch(branch) == branch
    else:
        with pytest.raises(InvalidInputError, match="is not a valid branch name: "):
            validate_branch(branch)


@pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")
def test_the_branch_table_agrees_with_git(tmp_path: Path) -> None:
    # Outside a repository: git answers on the name alone.
    verdicts = {
        branch: subprocess.run(
            ["git", "check-ref-format", "--branch", branch],
            cwd=tmp_path,
            capture_output=True,
            check=False,
        ).returncode
        == 0
        for branch in GIT_BRANCHES
    }
    assert verdicts == GIT_BRANCHES


@pytest.mark.parametrize("branch", ["zero\u200bwidth", "bidi\u202eflip"])
def test_branches_with_invisible_characters_are_refused_though_git_takes_them(
    branch: str,
) -> None:
    with pytest.raises(InvalidInputError, match="control character"):
        validate_branch(branch)


@pytest.mark.parametrize(
    ("check", "name"),
    [
        (validate_branch, "ghp_aB3aB3aB3aB3aB3aB3aB3aB3aB3aB3aB3aB3"),
        (validate_branch, "fix/ghp_aB3aB3aB3aB3aB3aB3aB3aB3aB3aB3aB3aB3"),
        (validate_label, "ghp_aB3aB3aB3aB3aB3aB3aB3aB3aB3aB3aB3aB3"),
        (validate_store, "acme/ghp_aB3aB3aB3aB3aB3aB3aB3aB3aB3aB3aB3aB3"),
    ],
)
def test_names_that_hold_a_secret_are_refused_and_the_error_redacts_it(
    check: Callable[[str], object], name: str
) -> None:
    with pytest.raises(InvalidInputError, match="looks like it holds a secret") as caught:
        check(name)
    assert "ghp_aB3" not in str(caught.value)
    assert "[REDACTED" in str(caught.value)
