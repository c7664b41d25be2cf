"""The pluggy entry point: the opencode harness."""

from __future__ import annotations

from typing import TYPE_CHECKING

from thatch.plugin import hookimpl

if TYPE_CHECKING:
    from collections.abc import Iterable

    from thatch.plugin import Harness


@hookimpl
def thatch_harnesses() -> Iterable[Harness]:
    """The one harness this plugin integrates."""
    from thatch_opencode.harness import OpencodeHarness

    return [OpencodeHarness()]
