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

The windows are kept, not searched: as time moves on, each window's left edge
moves past the events that fall out of it, and a :class:`WindowTally` of the
short window (its action counts, edit/run cycle, queries, unbroken chain,
paths, folders and file names) and a :class:`KeyTally` of the folders of the
medium window's earlier part (the medium window without the short one) are
updated with the events that enter and leave them. A source reads a count in
constant time instead of a pass over the window's events on every event.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterable, Sequence
from functools import lru_cache
from typing import TYPE_CHECKING

from thatch.plugin import WINDOW_SECONDS

from thatch_receptor.actions import Action, action_of, actions_of

if TYPE_CHECKING:
    from thatch.plugin import Event, Window

#: The time an event without one is placed after the one before, in seconds.
DEFAULT_STEP_SECONDS = 20.0
#: How many of a session's events the session window keeps.
DEFAULT_MAX_EVENTS = 10_000

_SHORT = WINDOW_SECONDS["short"] or 0.0
_MEDIUM = WINDOW_SECONDS["medium"] or 0.0
#: What ``SessionHistory._pathed`` keeps for an event without paths: no paths, no folders.
_NO_PATHS: tuple[Sequence[str], Sequence[str]] = ((), ())
#: The kinds of action that look rather than change (:mod:`thatch_receptor.patterns`).
LOOKING = frozenset({"read", "search", "memory_read"})


class KeyTally:
    """How often each key (a path, a folder) is in a window, and where it first is.

    Keys enter at the window's right end and leave at its left end, in the
    order they entered; each key keeps the positions of its entries, so that
    its count and its first place in the window are read without a pass.

    The positions are lists, not deques: a key is in a window a few times, so
    taking the first off a list moves a few items, while a new deque (one for
    every key that enters) allocates a block of 64.
    """

    __slots__ = ("_next", "_positions", "total")

    def __init__(self) -> None:
        self._positions: dict[str, list[int]] = {}
        self._next = 0
        #: How many keys the window holds, repeats included.
        self.total = 0

    def add(self, keys: Iterable[str]) -> None:
        """Keys entering at the window's right end, in order."""
        positions = self._positions
        at = self._next
        for key in keys:
            found = positions.get(key)
            if found is None:
                positions[key] = [at]
            else:
                found.append(at)
            at += 1
        self.total += at - self._next
        self._next = at

    def remove(self, keys: Iterable[str]) -> None:
        """The keys leaving at the window's left end: the oldest ones, in order."""
        positions = self._positions
        for key in keys:
            found = positions[key]
            del found[0]
            if not found:
                del positions[key]
            self.total -= 1

    def count(self, key: str) -> int:
        """How often ``key`` is in the window."""
        found = self._positions.get(key)
        return len(found) if found else 0

    def top(self, minus: Sequence[str] = ()) -> int:
        """The count of the most frequent key (0 if none); ``minus`` as in :meth:`hottest`."""
        if not minus:
            return max(map(len, self._positions.values()), default=0)
        return max(
            (len(found) - minus.count(key) for key, found in self._positions.items()), default=0
        )

    def counts(self) -> dict[str, int]:
        """Each key's count, in the order the keys first entered."""
        return {key: len(found) for key, found in self._positions.items()}

    def hottest(self, minus: Sequence[str] = ()) -> str | None:
        """The most frequent key, the first in the window of equals; None in an empty window.

        ``minus``: keys taken off the window's right end first (the current event's), so
        that this is the hottest key of the window as it was before them.
        """
        best: str | None = None
        best_count = 0
        best_at = 0
        for key, found in self._positions.items():
            count = len(found)
            if minus:
                count -= minus.count(key)
                if count <= 0:
                    continue
            if count > best_count or (count == best_count and found[0] < best_at):
                best, best_count, best_at = key, count, found[0]
        return best


class WindowTally:
    """The counts of one window's actions and paths, kept as its events enter and leave.

    What the built-in sources and the pattern read (:mod:`thatch_receptor.signals`,
    :mod:`thatch_receptor.patterns`): counts of action kinds, the switches between
    edits and runs, the search queries, the unbroken chain of successful actions at
    the window's end, and :class:`KeyTally` of its paths and folders, with the
    folders each file name is under.
    """

    def __init__(self) -> None:
        self.actions = 0
        #: Reads and searches (:data:`LOOKING`).
        self.looked = 0
        self.edited = 0
        self.ran = 0
        self.failed_runs = 0
        self.delegated = 0
        #: Switches between edits and runs, in the order they came.
        self.switches = 0
        self._cycle: deque[str] = deque()
        #: The queries of the window's searches and recalls, oldest first.
        self.queries: deque[str] = deque()
        #: The window's last actions without a failure among them: how many, how
        #: many of them edits, how many runs (all passing).
        self.chain = 0
        self.chain_edits = 0
        self.chain_runs = 0
        self._chain: deque[str] = deque()
        self.paths = KeyTally()
        self.folders = KeyTally()
        #: Each file name's folders in the window, with how many of its paths each holds.
        self.names: dict[str, dict[str, int]] = {}

    def add(self, actions: Sequence[Action], paths: Sequence[str], folders: Sequence[str]) -> None:
        """One event entering at the window's right end."""
        for action in actions:  # each action's counts, inline: one call fewer an action
            self.actions += 1
            kind = action.kind
            if kind in LOOKING:
                self.looked += 1
                if action.query and kind != "read":
                    self.queries.append(action.query)
            elif kind == "edit" or kind == "run":
                if kind == "edit":
                    self.edited += 1
                else:
                    self.ran += 1
                    self.failed_runs += action.failed
                cycle = self._cycle
                if cycle and cycle[-1] != kind:
                    self.switches += 1
                cycle.append(kind)
            elif kind == "delegation":
                self.delegated += 1
            if action.failed:
                self._chain.clear()
                self.chain = self.chain_edits = self.chain_runs = 0
            else:
                self._chain.append(kind)
                self.chain += 1
                if kind == "edit":
                    self.chain_edits += 1
                elif kind == "run":
                    self.chain_runs += 1
        if paths:
            self.paths.add(paths)
            self.folders.add(folders)
            names = self.names
            for path, folder in zip(paths, folders):  # noqa: B905 (one folder a path)
                name = file_name(path)
                if "." in name:
                    seen = names.get(name)
                    if seen is None:
                        names[name] = {folder: 1}
                    else:
                        seen[folder] = seen.get(folder, 0) + 1

    def remove(
        self, actions: Sequence[Action], paths: Sequence[str], folders: Sequence[str]
    ) -> None:
        """The oldest event leaving at the window's left end."""
        for action in actions:  # each action's counts, inline
            # The chain is the window's last actions: the oldest one is in it when it
            # is as long as the window.
            if self.chain == self.actions:
                kind = self._chain.popleft()
                self.chain -= 1
                if kind == "edit":
                    self.chain_edits -= 1
                elif kind == "run":
                    self.chain_runs -= 1
            self.actions -= 1
            kind = action.kind
            if kind in LOOKING:
                self.looked -= 1
                if action.query and kind != "read":
                    self.queries.popleft()
            elif kind == "edit" or kind == "run":
                if kind == "edit":
                    self.edited -= 1
                else:
                    self.ran -= 1
                    self.failed_runs -= action.failed
                cycle = self._cycle
                cycle.popleft()
                if cycle and cycle[0] != kind:
                    self.switches -= 1
            elif kind == "delegation":
                self.delegated -= 1
        if paths:
            self.paths.remove(paths)
            self.folders.remove(folders)
            names = self.names
            for path, folder in zip(paths, folders):  # noqa: B905 (one folder a path)
                name = file_name(path)
                if "." in name:
                    seen = names[name]
                    left = seen[folder] - 1
                    if left:
                        seen[folder] = left
                    elif len(seen) == 1:
                        del names[name]
                    else:
                        del seen[folder]


def tally_of(events: Iterable[Event]) -> WindowTally:
    """A :class:`WindowTally` of ``events`` (for a history that keeps none)."""
    tally = WindowTally()
    for event in events:
        actions = actions_of(event)
        paths = [path for action in actions for path in action.paths]
        tally.add(actions, paths, [folder_of(path) for path in paths])
    return tally


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
        #: The current event's actions (:meth:`current_actions`, read without a call).
        self.current: tuple[Action, ...] = ()
        #: Each kept event's paths and their folders (:func:`folder_of`), one pair an
        #: event in step with ``_events``: what a window's edge takes off as it moves.
        self._pathed: list[tuple[Sequence[str], Sequence[str]]] = []
        self._path_counts: dict[str, int] = {}
        #: The current event's paths, and those of them no earlier event touched
        #: (:meth:`current_paths` and :meth:`new_paths`, read without a call).
        self.event_paths: Sequence[str] = []
        self.event_new_paths: tuple[str, ...] = ()
        #: How many events the short window holds (:meth:`size`, read without a call).
        self.short_size = 0
        #: The index of the short and the medium window's first event, moved on as
        #: events fall out of them.
        self._short_start = 0
        self._medium_start = 0
        #: The short window's counts, and the folders of the medium window's events
        #: before the short window's first.
        self.short = WindowTally()
        self.earlier_folders = KeyTally()
        #: Each window's actions, paths and folders for the current event, worked out
        #: on first read.
        self._window_actions: dict[Window, list[Action]] = {}
        self._window_paths: dict[Window, list[str]] = {}
        self._window_folders: dict[Window, list[str]] = {}
        self._window_lists = (self._window_actions, self._window_paths, self._window_folders)
        self._windows_read = False

    def add(self, event: Event) -> float:
        """Place ``event`` as the current one and return its time."""
        # place(), without the call: this runs on every event.
        received = event.received_at
        if not self._events:
            at = received if received > 0 else 0.0
            self.started_at = at
        elif received <= 0:
            at = self.now + self._step
        else:
            at = self.now if self.now > received else received  # max(received, now)
        self.now = at
        self.count += 1
        calls = event.tool_calls
        paths: Sequence[str]
        if len(calls) == 1:  # most events: actions_of's answer, without its call
            action = action_of(calls[0])
            actions: tuple[Action, ...] = (action,)
            paths = action.paths  # a tuple, kept as it is: nothing changes it
        else:
            actions = actions_of(event)
            paths = [path for action in actions for path in action.paths]
        self.event_paths = paths
        if paths:
            # The session's count of each path, and the paths no earlier event touched (in
            # order), worked out here rather than in a call: nearly every event has paths.
            counts = self._path_counts
            new: list[str] = []
            for path in paths:
                seen = counts.get(path, 0)
                if not seen and path not in new:
                    new.append(path)
                counts[path] = seen + 1
            self.event_new_paths = tuple(new)
            folders: Sequence[str] = tuple(map(folder_of, paths))
            self._pathed.append((paths, folders))
        else:
            self.event_new_paths = ()
            folders = paths
            self._pathed.append(_NO_PATHS)
        if self._windows_read:  # a source read a window's lists (few events): drop them
            for cached in self._window_lists:
                cached.clear()
            self._windows_read = False
        self._times.append(at)
        self._events.append(event)
        self._actions.append(actions)
        self.current = actions
        self.short.add(actions, paths, folders)
        if len(self._events) > self._max:
            self._trim()
        self._move_edges(at)
        self.short_size = len(self._events) - self._short_start
        return at

    def _move_edges(self, now: float) -> None:
        """Move the windows' left edges past the events older than their reach."""
        times, pathed = self._times, self._pathed
        start = self._short_start
        if times[start] < now - _SHORT:
            earlier = self.earlier_folders
            while times[start] < now - _SHORT:
                paths, folders = pathed[start]
                self.short.remove(self._actions[start], paths, folders)
                earlier.add(folders)
                start += 1
            self._short_start = start
        start = self._medium_start
        if times[start] < now - _MEDIUM:
            while times[start] < now - _MEDIUM:
                self.earlier_folders.remove(pathed[start][1])
                start += 1
            self._medium_start = start

    def _trim(self) -> None:
        """Drop the oldest tenth of the kept events at a time, so trimming stays rare.

        The windows lose the dropped events too, as a search of the kept ones would.
        """
        cut = max(1, self._max // 10)
        for index in range(self._medium_start, min(cut, self._short_start)):
            self.earlier_folders.remove(self._pathed[index][1])
        for index in range(self._short_start, cut):
            self.short.remove(self._actions[index], *self._pathed[index])
        self._medium_start = max(0, self._medium_start - cut)
        self._short_start = max(0, self._short_start - cut)
        del self._times[:cut], self._events[:cut], self._actions[:cut], self._pathed[:cut]

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
            found = [
                action for actions in self._actions[self._start(window) :] for action in actions
            ]
            self._window_actions[window] = found
            self._windows_read = True
        return found

    def paths(self, window: Window) -> Sequence[str]:
        """The paths of one window's actions, oldest first (the same list until the next event)."""
        found = self._window_paths.get(window)
        if found is None:
            found = [path for paths, _ in self._pathed[self._start(window) :] for path in paths]
            self._window_paths[window] = found
            self._windows_read = True
        return found

    def folders(self, window: Window) -> Sequence[str]:
        """The folder of each of :meth:`paths` (:func:`folder_of`), in the same order."""
        found = self._window_folders.get(window)
        if found is None:
            kept = self._pathed[self._start(window) :]
            found = [folder for _, folders in kept for folder in folders]
            self._window_folders[window] = found
            self._windows_read = True
        return found

    def size(self, window: Window) -> int:
        """How many events one window holds: ``len(window(window))`` without the list."""
        if window == "short":
            return self.short_size
        return len(self._events) - self._start(window)

    def current_actions(self) -> tuple[Action, ...]:
        """The current event's actions."""
        return self.current

    def current_paths(self) -> Sequence[str]:
        """The paths of the current event's actions, in order."""
        return self.event_paths

    def path_count(self, path: str) -> int:
        """How many times the session's actions touched ``path``, the current event's included."""
        return self._path_counts.get(path, 0)

    def new_paths(self) -> tuple[str, ...]:
        """The current event's paths that no earlier event of the session touched."""
        return self.event_new_paths

    def _start(self, window: Window) -> int:
        """The index of the window's first kept event."""
        if window == "short":
            return self._short_start
        if window == "medium":
            return self._medium_start
        return 0


@lru_cache(maxsize=4096)
def folder_of(path: str) -> str:
    """The folder a path is in (``.`` for a bare name); cached, as paths repeat."""
    head, _, _ = path.rstrip("/").rpartition("/")
    return head or "."


@lru_cache(maxsize=4096)
def file_name(path: str) -> str:
    """The last part of a path (``token.py`` of ``src/auth/token.py``); cached, as paths repeat."""
    return path.rstrip("/").rpartition("/")[2]
