"""thatch: memory and a user decision model for coding agents.

The Python API starts at :func:`thatch.open`. Plugin authors import from
:mod:`thatch.plugin`, the contract (``from thatch.plugin import hookimpl``),
and in tests from :mod:`thatch.testing`; every other module is internal.
``thatch.hookimpl`` still works, for plugins written before the contract
package. Everything here is imported lazily so the hook commands, which
import this package first, stay on the standard library.
"""

from __future__ import annotations

# Not ``typing.TYPE_CHECKING``: importing typing costs the hook commands ~2 ms.
TYPE_CHECKING = False

__version__ = "0.1.0"
__all__ = ["Thatch", "__version__", "hookimpl", "open"]

if TYPE_CHECKING:
    from typing import Any

    from thatch.api import Thatch, open
    from thatch.plugin.specs import hookimpl


def __getattr__(name: str) -> Any:
    if name == "hookimpl":
        from thatch.plugin.specs import hookimpl

        return hookimpl
    if name in ("open", "Thatch"):
        from thatch import api

        return getattr(api, name)
    raise AttributeError(f"module 'thatch' has no attribute {name!r}")
