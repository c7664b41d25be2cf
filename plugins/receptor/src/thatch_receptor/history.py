"""One session's events in time: the :class:`thatch.plugin.EventHistory` the receptor keeps.

Each event is placed at its :attr:`Event.received_at`; an event without a
time (0, as in a replayed trajectory) is placed ``step_seconds`` after the one
before (20 s by default, ``[receptor] step_seconds``), and time never runs
backwards: an event stamped before the last one is placed at the last one's
time. The windows are :data:`thatch.plugin.WINDOW_SECONDS`: the short one
reaches 5 minutes back from the current event, the medium one 30 minutes, and
the session window to the session's first event (the session keeps its last
``max_events``, 10,000 by default, so a day-long session stays small).

The history also keeps each event's actions (:mod:`thatch_receptor.actions`),
worked out once when the event is added, and how often each path was touched,
so that the built-in sources read them without parsing payloads again.
"""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Sequence
from functools import lru_cache
from typing import TYPE_CHECKING, TypeVar

from thatch.plugin import WINDOW_SECONDS

from thatch_receptor.actions import Action, actions_of

if TYPE_CHECKING:
    from thatch.plugin import Event, Window

#: The time an event without one is placed after the one before, in seconds.
DEFAULT_STEP_SECONDS = 20.0
#: How many of a session's events the session window keeps.
DEFAULT_MAX_EVENTS = 10_000

_Item = TypeVar("_Item")


class SessionHistory:
    """A session's events, their times and their actions; add each event once, then read."""

    def __init__(
        self,
        session_id: str,
        *,
        step_seconds: float = DEFAULT_STEP_SECONDS,
        max_events: int = DEFAULT_MAX_EVENTS,
    ) -> None:
        if step_seconds <= 0:
            raise ValueError(f"step_seconds must be above 0, got {step_seconds}")
        if max_events < 1:
            raise ValueError(f"max_events must be at least 1, got {max_events}")
        self.session_id = session_id
        self.now = 0.0
        #: When the session's first event happened (0.0 before one has).
        self.started_at = 0.0
        #: Events seen in the session, those the window no longer keeps included.
        self.count = 0
        self._step = step_seconds
        self._max = max_events
        self._times: list[float] = []
        self._events: list[Event] = []
        self._actions: list[tuple[Action, ...]] = []
        #: Every kept event's actions in one list and their paths in another, with the
        #: index of each event's first, so that a window's actions or paths are one slice.
        self._flat_actions: list[Action] = []
        self._action_starts: list[int] = []
        self._flat_paths: list[str] = []
        #: Each path's folder, in step with ``_flat_paths``.
        self._flat_folders: list[str] = []
        self._path_starts: list[int] = []
        self._path_counts: dict[str, int] = {}
        self._new_paths: tuple[str, ...] = ()
        #: Each window's start, actions, paths and folders for the current event, worked
        #: out on first read.
        self._window_starts: dict[Window, int] = {}
        self._window_actions: dict[Window, list[Action]] = {}
        self._window_paths: dict[Window, list[str]] = {}
        self._window_folders: dict[Window, list[str]] = {}

    def add(self, event: Event) -> float:
        """Place ``event`` as the current one and return its time."""
        at = self.place(event)
        if not self._events:
            self.started_at = at
        self.now = at
        self.count += 1
        actions = actions_of(event)
        paths = [path for action in actions for path in action.paths]
        self._path_starts.append(len(self._flat_paths))
        if paths:
            self._new_paths = self._count_paths(paths)
            self._flat_paths += paths
            self._flat_folders += map(folder_of, paths)
        else:
            self._new_paths = ()
        self._window_starts.clear()
        self._window_actions.clear()
        self._window_paths.clear()
        self._window_folders.clear()
        self._times.append(at)
        self._events.append(event)
        self._actions.append(actions)
        self._action_starts.append(len(self._flat_actions))
        self._flat_actions += actions
        if len(self._events) > self._max:
            self._trim()
        return at

    def _count_paths(self, paths: list[str]) -> tuple[str, ...]:
        """Count the current event's paths; those no earlier event touched, in order."""
        counts = self._path_counts
        new: list[str] = []
        for path in paths:
            seen = counts.get(path, 0)
            if not seen and path not in new:
                new.append(path)
            counts[path] = seen + 1
        return tuple(new)

    def _trim(self) -> None:
        """Drop the oldest tenth of the kept events at a time, so trimming stays rare."""
        cut = max(1, self._max // 10)
        del self._times[:cut], self._events[:cut], self._actions[:cut]
        dropped = self._action_starts[cut]
        del self._flat_actions[:dropped], self._action_starts[:cut]
        self._action_starts[:] = [start - dropped for start in self._action_starts]
        dropped = self._path_starts[cut]
        del self._flat_paths[:dropped], self._flat_folders[:dropped], self._path_starts[:cut]
        self._path_starts[:] = [start - dropped for start in self._path_starts]

    def place(self, event: Event) -> float:
        """The time ``event`` would be placed at, were it added now (nothing changes)."""
        if not self._events:
            return event.received_at if event.received_at > 0 else 0.0
        if event.received_at <= 0:
            return self.now + self._step
        return max(event.received_at, self.now)

    def window(self, window: Window) -> Sequence[Event]:
        """The events of one window, oldest first, the current one last."""
        return self._events[self._start(window) :]

    def actions(self, window: Window) -> Sequence[Action]:
        """The actions of one window's events, oldest first (the same list until the next event)."""
        found = self._window_actions.get(window)
        if found is None:
            found = self._tail(self._flat_actions, self._action_starts, window)
            self._window_actions[window] = found
        return found

    def paths(self, window: Window) -> Sequence[str]:
        """The paths of one window's actions, oldest first (the same list until the next event)."""
        found = self._window_paths.get(window)
        if found is None:
            found = self._tail(self._flat_paths, self._path_starts, window)
            self._window_paths[window] = found
        return found

    def folders(self, window: Window) -> Sequence[str]:
        """The folder of each of :meth:`paths` (:func:`folder_of`), in the same order."""
        found = self._window_folders.get(window)
        if found is None:
            found = self._tail(self._flat_folders, self._path_starts, window)
            self._window_folders[window] = found
        return found

    def size(self, window: Window) -> int:
        """How many events one window holds: ``len(window(window))`` without the list."""
        return len(self._events) - self._start(window)

    def current_actions(self) -> tuple[Action, ...]:
        """The current event's actions."""
        return self._actions[-1] if self._actions else ()

    def path_count(self, path: str) -> int:
        """How many times the session's actions touched ``path``, the current event's included."""
        return self._path_counts.get(path, 0)

    def new_paths(self) -> tuple[str, ...]:
        """The current event's paths that no earlier event of the session touched."""
        return self._new_paths

    def _tail(self, flat: list[_Item], starts: list[int], window: Window) -> list[_Item]:
        """The items of ``flat`` from the window's first event on."""
        start = self._start(window)
        return flat[starts[start] :] if start < len(starts) else []

    def _start(self, window: Window) -> int:
        """The index of the window's first kept event (worked out once per event)."""
        start = self._window_starts.get(window)
        if start is None:
            reach = WINDOW_SECONDS[window]
            start = 0 if reach is None else bisect_left(self._times, self.now - reach)
            self._window_starts[window] = start
        return start


@lru_cache(maxsize=4096)
def folder_of(path: str) -> str:
    """The folder a path is in (``.`` for a bare name); cached, as paths repeat."""
    head, _, _ = path.rstrip("/").rpartition("/")
    return head or "."
