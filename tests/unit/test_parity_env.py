"""Parity with the original's environment overrides (UC-015), and the list of every variable.

``THATCH_RECALL_THRESHOLD`` sets the recall threshold; each XDG base
directory variable moves its own folder, in the hook commands' lookup and in
the CLI's alike; under ``THATCH_HOME`` the model libraries' caches stay in
it; docs/user-guide.md lists every environment variable the code reads.
"""

from __future__ import annotations

import ast
import os
import re
import sys
from pathlib import Path
from typing import Any

import pytest
from thatch import rundir
from thatch.plugin.config import Config
from thatch.plugin.errors import ConfigError
from thatch_fastembed import embedder as fastembed_embedder

ROOT = Path(__file__).parents[2]
SOURCES = [ROOT / "core" / "src", *sorted((ROOT / "plugins").glob("*/src"))]
GUIDE = ROOT / "docs" / "user-guide.md"

#: Names that are environment variables wherever they appear as a whole string.
ENV_NAME = re.compile(r"^(?:(?:THATCH|XDG|CLAUDE|CURSOR|HF)_[A-Z0-9_]+|CLAUDECODE|OPENCODE)$")
#: Any variable name, for a string read from an environment mapping.
ANY_NAME = re.compile(r"^[A-Z][A-Z0-9_]+$")


def write_config(home: Path, text: str) -> None:
    (home / "config").mkdir(parents=True, exist_ok=True)
    (home / "config" / "config.toml").write_text(text)


def test_uc015_thatch_recall_threshold_overrides_the_config_file(tmp_path: Path) -> None:
    write_config(tmp_path, "[thresholds]\nrecall = 0.5\n")
    assert Config.load(tmp_path, environ={}).recall_threshold == 0.5
    loaded = Config.load(tmp_path, environ={"THATCH_RECALL_THRESHOLD": "0.2"})
    assert loaded.recall_threshold == 0.2


@pytest.mark.parametrize("raw", ["high", "1.5", "nan"])
def test_uc015_a_bad_recall_threshold_is_refused_with_the_fix(tmp_path: Path, raw: str) -> None:
    with pytest.raises(ConfigError, match=r"THATCH_RECALL_THRESHOLD=.* between -1 and 1"):
        Config.load(tmp_path, environ={"THATCH_RECALL_THRESHOLD": raw})


@pytest.mark.skipif(sys.platform == "darwin", reason="XDG folders are Linux's")
def test_uc015_each_xdg_variable_moves_its_own_folder(tmp_path: Path) -> None:
    names = ("XDG_CONFIG_HOME", "XDG_DATA_HOME", "XDG_STATE_HOME", "XDG_CACHE_HOME")
    env = {name: str(tmp_path / name.lower()) for name in (*names, "XDG_RUNTIME_DIR")}
    paths = Config.load(environ=env).paths
    assert paths.config_dir == tmp_path / "xdg_config_home" / "thatch"
    assert paths.data_dir == tmp_path / "xdg_data_home" / "thatch"
    assert paths.state_dir == tmp_path / "xdg_state_home" / "thatch"
    assert paths.cache_dir == tmp_path / "xdg_cache_home" / "thatch"
    assert paths.runtime_dir == tmp_path / "xdg_runtime_dir" / "thatch"
    assert Config.load(environ=env).db_path == paths.data_dir / "thatch.db"
    # The hook commands find the very same folders without platformdirs.
    located = rundir.locate(env)
    assert (located.config_dir, located.state_dir, located.runtime_dir) == (
        str(paths.config_dir),
        str(paths.state_dir),
        str(paths.runtime_dir),
    )


def test_uc015_under_thatch_home_the_model_libraries_cache_inside_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    for name in ("XDG_CACHE_HOME", "HF_HOME"):
        monkeypatch.delenv(name, raising=False)
    seen: dict[str, Any] = {}

    class Recording:
        """Stands in for fastembed: notes the environment the model is loaded in."""

        def __init__(self, *args: object, **kwargs: Any) -> None:
            seen.update({name: os.environ.get(name) for name in ("XDG_CACHE_HOME", "HF_HOME")})
            seen["cache_dir"] = kwargs["cache_dir"]

    monkeypatch.setattr(fastembed_embedder, "_import_text_embedding", lambda: Recording)
    model_folder = tmp_path / "model"
    config = Config.load(
        tmp_path / "home",
        environ={"THATCH_MODEL_PATH": str(model_folder)},
    )
    made = fastembed_embedder.FastEmbedder.from_config(config)
    made._load_local(model_folder, threads=None)
    cache = config.paths.cache_dir
    assert seen == {
        "XDG_CACHE_HOME": str(cache),  # onnxruntime's device id file
        "HF_HOME": str(cache / "huggingface"),
        "cache_dir": str(cache / "fastembed"),
    }
    # Only for the load: set for good, they would reach every later child process.
    assert "XDG_CACHE_HOME" not in os.environ
    assert "HF_HOME" not in os.environ


def read_variables() -> dict[str, set[str]]:
    """Every environment variable name the code reads or sets, and the files naming it."""
    found: dict[str, set[str]] = {}
    for root in SOURCES:
        for path in root.rglob("*.py"):
            tree = ast.parse(path.read_text())
            for name in _env_names(tree):
                found.setdefault(name, set()).add(str(path.relative_to(ROOT)))
    return found


def _env_names(tree: ast.AST) -> set[str]:
    exported = {
        element.value
        for node in ast.walk(tree)
        if isinstance(node, ast.Assign)
        and any(isinstance(t, ast.Name) and t.id == "__all__" for t in node.targets)
        for element in ast.walk(node.value)
        if isinstance(element, ast.Constant)
    }
    names = {
        node.value
        for node in ast.walk(tree)
        if isinstance(node, ast.Constant)
        and isinstance(node.value, str)
        and ENV_NAME.match(node.value)
        and node.value not in exported  # a Python name, not a variable
    }
    return names | _read_from_environ(tree)


def _read_from_environ(tree: ast.AST) -> set[str]:
    """Names read as ``env.get("X")``, ``os.getenv("X")``, ``environ["X"]`` and the like."""
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.args:
            key, receiver = node.args[0], node.func.value
            if node.func.attr == "getenv" or (
                node.func.attr in ("get", "pop", "setdefault") and _is_environ(receiver)
            ):
                names |= _name_in(key)
        elif isinstance(node, ast.Subscript) and _is_environ(node.value):
            names |= _name_in(node.slice)
    return names


def _is_environ(node: ast.expr) -> bool:
    text = ast.unparse(node).lower()
    return "env" in text.rsplit(".", 1)[-1]


def _name_in(node: ast.expr) -> set[str]:
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return {node.value} if ANY_NAME.match(node.value) else set()
    return set()


def documented_variables() -> set[str]:
    text = GUIDE.read_text()
    section = text.split("\n## Environment variables\n", 1)[1].split("\n## ", 1)[0]
    return set(re.findall(r"^\| `([A-Z][A-Z0-9_]*)`", section, flags=re.MULTILINE))


def test_uc015_every_environment_variable_is_documented() -> None:
    read = read_variables()
    documented = documented_variables()
    missing = {name: sorted(files) for name, files in read.items() if name not in documented}
    assert missing == {}, "add a line for each to 'Environment variables' in docs/user-guide.md"
    assert documented - set(read) == set(), "the guide lists variables no code reads"
    # The scan finds the variables read through a constant too.
    assert {"THATCH_NO_AUTOSTART", "THATCH_RECALL_THRESHOLD", "XDG_DATA_HOME"} <= set(read)
