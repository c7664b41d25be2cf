"""No bench module imports a runnable bench script.

The scripts of bench/ run with bench/ first on ``sys.path``, so they import
each other by bare name. What they share lives in library modules (no
``if __name__ == "__main__":``); a script that imports another script is how
the old import cycle began. Every import counts, those inside functions too.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

BENCH = Path(__file__).resolve().parents[2] / "bench"


def runs_as_script(tree: ast.Module) -> bool:
    """Whether the module has a top-level ``if __name__ == "__main__":`` block."""
    for node in tree.body:
        if isinstance(node, ast.If) and isinstance(node.test, ast.Compare):
            sides = [node.test.left, *node.test.comparators]
            names = {side.id for side in sides if isinstance(side, ast.Name)}
            texts = {side.value for side in sides if isinstance(side, ast.Constant)}
            if names == {"__name__"} and texts == {"__main__"}:
                return True
    return False


def imported_names(tree: ast.Module) -> list[tuple[int, str]]:
    """The top-level module of every absolute import in ``tree``, with its line."""
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found += [(node.lineno, alias.name.partition(".")[0]) for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.append((node.lineno, node.module.partition(".")[0]))
    return found


def script_imports(sources: dict[str, str]) -> list[str]:
    """``module line N: script`` for every import of a runnable script by another module."""
    trees = {name: ast.parse(source) for name, source in sources.items()}
    scripts = {name for name, tree in trees.items() if runs_as_script(tree)}
    return [
        f"{name} line {line}: {imported}"
        for name, tree in sorted(trees.items())
        for line, imported in imported_names(tree)
        if imported in scripts and imported != name
    ]


def bench_sources() -> dict[str, str]:
    return {path.stem: path.read_text(encoding="utf-8") for path in sorted(BENCH.glob("*.py"))}


def test_the_check_catches_a_script_import() -> None:
    script = 'def main() -> int:\n    return 0\n\n\nif __name__ == "__main__":\n    main()\n'
    library = "def helper() -> int:\n    return 1\n"
    sources = {
        "tool": script,
        "helpers": library,
        "other": "from helpers import helper\n\n\ndef f():\n    from tool import main\n",
        "direct": "import tool.sub\n",
    }
    assert script_imports(sources) == ["direct line 1: tool", "other line 5: tool"]


@pytest.mark.parametrize(
    "source",
    [
        'if "__main__" == __name__:\n    pass\n',
        'if __name__ == "__main__":\n    raise SystemExit(0)\n',
    ],
)
def test_a_main_block_marks_a_script(source: str) -> None:
    assert runs_as_script(ast.parse(source))


def test_a_nested_or_other_test_is_no_main_block() -> None:
    assert not runs_as_script(ast.parse('def f():\n    if __name__ == "__main__":\n        pass\n'))
    assert not runs_as_script(ast.parse('if __name__ == "thatch":\n    pass\n'))


def test_bench_has_scripts_and_libraries() -> None:
    trees = {name: ast.parse(source) for name, source in bench_sources().items()}
    scripts = {name for name, tree in trees.items() if runs_as_script(tree)}
    assert "hook_latency" in scripts
    assert "data_sets" in set(trees) - scripts


def test_no_bench_module_imports_a_script() -> None:
    assert script_imports(bench_sources()) == []
