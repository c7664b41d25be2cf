"""Plugins import only the plugin contract (``thatch.plugin``) and ``thatch.testing``.

Every import counts, those under ``TYPE_CHECKING`` and inside functions too:
an annotation naming an internal class ties a plugin to it as surely as a call.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
#: Where plugin packages live: the shipped ones and the examples.
PLUGIN_FOLDERS = (ROOT / "plugins", ROOT / "examples")
ALLOWED = ("thatch.plugin", "thatch.testing")


def imported_modules(source: str) -> list[tuple[int, str]]:
    """Every absolute module an import statement in ``source`` names, with its line."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            found += [(node.lineno, alias.name) for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            if node.module == "thatch":
                found += [(node.lineno, f"thatch.{alias.name}") for alias in node.names]
            else:
                found.append((node.lineno, node.module))
    return found


def outside_the_contract(source: str) -> list[str]:
    """The thatch modules ``source`` imports that are not part of the plugin contract."""
    return [
        f"line {line}: {module}"
        for line, module in imported_modules(source)
        if (module == "thatch" or module.startswith("thatch."))
        and not any(module == allowed or module.startswith(allowed + ".") for allowed in ALLOWED)
    ]


def plugin_modules() -> list[Path]:
    return sorted(
        path
        for folder in PLUGIN_FOLDERS
        for path in folder.glob("*/src/*/**/*.py")
        if "__pycache__" not in path.parts
    )


def test_the_check_catches_an_internal_import() -> None:
    source = (
        "from thatch.memory.writer import MemoryWriter\nfrom thatch import api\nimport thatch\n"
    )
    assert outside_the_contract(source) == [
        "line 1: thatch.memory.writer",
        "line 2: thatch.api",
        "line 3: thatch",
    ]
    typed = "if TYPE_CHECKING:\n    from thatch.runtime import Runtime\n"
    assert outside_the_contract(typed) == ["line 2: thatch.runtime"]


def test_the_check_allows_the_contract() -> None:
    source = (
        "from thatch.plugin import Event, hookimpl\n"
        "from thatch.plugin.jsonc import loads\n"
        "from thatch.testing import WordHashEmbedder\n"
        "from thatch_sqlite.storage import SQLiteStorage\n"
    )
    assert outside_the_contract(source) == []


def test_every_plugin_has_modules() -> None:
    packages = {path.relative_to(ROOT).parts[:2] for path in plugin_modules()}
    assert len(packages) >= 6, packages


@pytest.mark.parametrize("path", plugin_modules(), ids=lambda p: str(p.relative_to(ROOT)))
def test_plugin_module_imports_only_the_contract(path: Path) -> None:
    problems = outside_the_contract(path.read_text())
    assert not problems, (
        f"{path.relative_to(ROOT)} imports thatch outside the plugin contract: "
        f"{', '.join(problems)}; import from thatch.plugin (or thatch.testing in tests), "
        "or ask for the name to be added to the contract"
    )
