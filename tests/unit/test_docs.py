"""The plugin author's guide cannot drift from the hook specs."""

from __future__ import annotations

import inspect
import re
from pathlib import Path

from thatch.plugin import specs as hookspecs

GUIDE = Path(__file__).parents[2] / "docs" / "plugins.md"


def _hook_functions() -> dict[str, object]:
    return {
        name: function
        for name, function in vars(hookspecs).items()
        if name.startswith("thatch_") and inspect.isfunction(function)
    }


def _signature(name: str, function: object) -> str:
    text = str(inspect.signature(function))  # type: ignore[arg-type]
    return name + text.replace("'", "")


def test_every_hook_is_prefixed_typed_and_has_a_docstring() -> None:
    hooks = _hook_functions()
    assert hooks, "hookspecs defines no hook"
    for name, function in hooks.items():
        signature = inspect.signature(function)  # type: ignore[arg-type]
        assert signature.return_annotation is not inspect.Signature.empty, name
        assert all(p.annotation is not p.empty for p in signature.parameters.values()), name
        assert (function.__doc__ or "").strip(), f"{name} has no docstring"


def test_every_hook_has_a_section_headed_by_its_signature() -> None:
    guide = GUIDE.read_text()
    headings = set(re.findall(r"^### (.+)$", guide, flags=re.MULTILINE))
    for name, function in _hook_functions().items():
        signature = _signature(name, function)
        assert signature in headings, f"docs/plugins.md has no section '### {signature}'"


def test_every_hook_section_has_an_example() -> None:
    guide = GUIDE.read_text()
    sections = re.split(r"^### ", guide, flags=re.MULTILINE)[1:]
    for name in _hook_functions():
        section = next(s for s in sections if s.startswith(name + "("))
        assert "```python" in section, name
        assert f"def {name}(" in section, name
