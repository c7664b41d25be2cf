"""One open storage per live config, handed out by all of a backend's storage hooks.

The memories, the decision model and the prediction log of one installation
are three hooks, but a backend keeping more than one of them should open its
database once: :class:`PerConfig` remembers the object opened for each config
(by identity) and hands it back to every hook that asks for a part the config
keeps in that backend.
"""

from __future__ import annotations

import weakref
from collections.abc import Callable
from typing import TYPE_CHECKING, Generic, Protocol, TypeVar

if TYPE_CHECKING:
    from thatch.plugin.config import Config, StoragePart


class _Closable(Protocol):
    @property
    def closed(self) -> bool: ...


S = TypeVar("S", bound=_Closable)


class PerConfig(Generic[S]):
    """Each config's storage for the parts it keeps in ``backend``, made by ``opener``.

    An entry goes when its config is collected, so a config made for one
    command (or one test) does not keep its database open; a storage closed
    by core is opened again on the next call.
    """

    def __init__(self, backend: str, opener: Callable[[Config], S]) -> None:
        self._backend = backend
        self._open = opener
        self._opened: dict[int, S] = {}

    def __call__(self, config: Config, part: StoragePart) -> S | None:
        """The open storage of ``config`` if ``part`` is kept in this backend, else None."""
        if config.backend_for(part) != self._backend:
            return None
        key = id(config)
        storage = self._opened.get(key)
        if storage is None or storage.closed:
            storage = self._open(config)
            if key not in self._opened:
                weakref.finalize(config, self._opened.pop, key, None)
            self._opened[key] = storage
        return storage
