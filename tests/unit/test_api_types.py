"""The public API's list-returning methods are annotated with the builtin ``list``.

``Thatch.list`` and ``Decisions.list`` are methods named ``list``: in their
class, an annotation that says ``list[...]`` names the method, not the
builtin, for a type checker (below the method) and for anything that
resolves annotations in the class's namespace (as ``localns`` does here).
"""

from __future__ import annotations

import builtins
import typing

import pytest
from thatch.api import StoreChoice, Thatch
from thatch.decisions.service import Decisions

LIST_METHODS = [
    (Thatch, "list"),
    (Thatch, "stores"),
    (Thatch, "duplicates"),
    (Thatch, "describe_plugins"),
    (Decisions, "list"),
    (Decisions, "details"),
    (Decisions, "import_calls"),
]


@pytest.mark.parametrize(("owner", "name"), LIST_METHODS)
def test_return_type_is_the_builtin_list(owner: type, name: str) -> None:
    # The class's own names come first, as in its body; StoreChoice is
    # imported by decisions.service for type checking only.
    names = {"StoreChoice": StoreChoice, **vars(owner)}
    hints = typing.get_type_hints(getattr(owner, name), localns=names)
    assert typing.get_origin(hints["return"]) is builtins.list
