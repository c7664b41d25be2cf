"""Which command `thatch setup` writes: the bare name only when the user's own PATH finds us."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from thatch.plugin import launcher


def script(path: Path, text: str = "#!/bin/sh\n") -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    path.chmod(0o755)
    return path


@pytest.fixture
def ours(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """This installation's console script, in a virtualenv-like folder of its own."""
    found = script(tmp_path / "tool-env" / "bin" / "thatch")
    monkeypatch.setattr(launcher, "this_installation", lambda: found)
    return found


def environ(*folders: Path, virtual_env: Path | None = None) -> dict[str, str]:
    env = {"PATH": os.pathsep.join([*map(str, folders), "/usr/bin", "/bin"])}
    if virtual_env is not None:
        env["VIRTUAL_ENV"] = str(virtual_env)
    return env


def test_a_link_on_the_users_path_gives_the_bare_name(ours: Path, tmp_path: Path) -> None:
    bin_dir = tmp_path / "local-bin"
    bin_dir.mkdir()
    (bin_dir / "thatch").symlink_to(ours)
    chosen = launcher.choose(environ(bin_dir))
    assert chosen.command == ("thatch",)
    assert chosen.bare
    assert str(bin_dir / "thatch") in chosen.reason


def test_the_virtualenv_on_path_does_not_count(ours: Path, tmp_path: Path) -> None:
    # `uv run` (and an activated venv) put the venv's bin first; a harness never has it.
    chosen = launcher.choose(environ(ours.parent, virtual_env=ours.parent.parent))
    assert chosen.command == (str(ours),)
    assert "not on your PATH" in chosen.reason
    assert "uv tool install" in chosen.reason
    assert json.dumps(chosen.command)  # plain strings, for JSON configs


def test_another_installation_on_path_gives_our_absolute_path(ours: Path, tmp_path: Path) -> None:
    other = script(tmp_path / "other" / "thatch", "#!/opt/other/bin/python\n")
    chosen = launcher.choose(environ(other.parent))
    assert chosen.command == (str(ours),)
    assert f"({other}) is another installation" in chosen.reason


def test_a_copied_script_naming_our_interpreter_is_this_installation(
    ours: Path, tmp_path: Path
) -> None:
    copy = script(tmp_path / "copies" / "thatch", f"#!{ours.parent / 'python'}\nimport sys\n")
    assert launcher.same_installation(copy, ours)
    assert launcher.choose(environ(copy.parent)).bare


def test_user_path_drops_only_the_virtualenv(tmp_path: Path) -> None:
    venv = tmp_path / "venv"
    env = environ(venv / "bin", tmp_path / "mine", virtual_env=venv)
    kept = launcher.user_path(env).split(os.pathsep)
    assert str(venv / "bin") not in kept
    assert kept[0] == str(tmp_path / "mine")
    assert "/usr/bin" in kept
