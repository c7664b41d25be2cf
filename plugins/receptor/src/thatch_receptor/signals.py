"""The receptor's built-in signal sources: what its axes are read from.

Each source (:class:`thatch.plugin.SignalSource`) reads one kind of evidence
from the current event against the session's windows and says how strongly
it points at an axis (0 to 1). A reading is an impulse: the receptor adds it
to the axis, which decays between events (:mod:`thatch_receptor.receptor`),
so a source speaks when the current event adds evidence and stays silent
otherwise. Sources are free of side effects and read at most the medium
window, so each read takes microseconds. Each declares, as ``speaks_on``, the
event traits (:mod:`thatch_receptor.traits`) without which its ``read``
returns nothing, so that the receptor calls it only on the events it can
speak about (``fatigue`` speaks on every one). Each ``read`` returns a list (most
often empty): a generator would cost more than most reads.

========================  ============  =================================================
source                    axis          reads
========================  ============  =================================================
``edit-run-failures``     frustration   a failing run; more when edits and runs alternate
                                        with failures in the short window
``rephrased-search``      frustration   a query close in meaning to an earlier one of the
                                        short window but worded differently
``empty-search``          seeking       a recall (0.8) or search (0.4) that found nothing
``search-diversity``      uncertainty   the short window's queries share few words
``fatigue``               fatigue       session hours and the short window's event volume
``implementation-chain``  flow          a run of successful actions holding edits and
                                        passing runs
``delegation``            isolation     the share of the short window's actions handed
                                        to sub-agents
``path-heatmap``          uncertainty,  the short window's hot folder leaving the medium
                          seeking,      window's; a path the session never touched; one
                          frustration,  file name under different folders; the short
                          flow          window converging on one path (flow while its
                                        runs pass; frustration when they fail, off by
                                        default)
========================  ============  =================================================

A query is "the same concept in other words" when it shares some but not
most of its words with an earlier one (word overlap at least ``shared``, 0.2,
and under ``lexical``, 0.5), or, when the receptor has an ``embed`` callable
(text to a unit vector; the daemon's query embedding), when the two are close
in meaning (cosine at least ``similar``, 0.75) with overlap under ``lexical``.
The words rule holds with embeddings too: on the 40 sample runs it is the one
that fires (59 readings against 2 to 5 from meaning alone, with int8 or
float32 query products, each also caught by words), mostly on code searches
that keep a word and change the name (``def fromstring`` after ``def _pad``),
and the frustration it reads is what tells unresolved runs apart
(docs/receptor.md); meaning alone reads near chance.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Sequence
from functools import lru_cache
from typing import TYPE_CHECKING, ClassVar

import attrs
from thatch.plugin import SignalReading

from thatch_receptor import traits
from thatch_receptor.actions import Action, actions_of
from thatch_receptor.history import (
    KeyTally,
    SessionHistory,
    WindowTally,
    file_name,
    folder_of,
    tally_of,
)

if TYPE_CHECKING:
    from thatch.plugin import Event, EventHistory, SignalSource, Window

#: Text to a unit vector (an embedder's query embedding).
Embed = Callable[[str], Sequence[float]]

_WORD = re.compile(r"[a-z0-9]+")
#: Words too common in queries and commands to say what they are about.
_STOPWORDS = frozenset(
    {
        *("a", "an", "and", "are", "as", "at", "be", "by", "for", "from", "how", "in", "is"),
        *("it", "of", "on", "or", "the", "to", "what", "where", "which", "with"),
    }
)


def builtin_sources(embed: Embed | None = None) -> tuple[SignalSource, ...]:
    """The built-in sources; ``embed`` lets ``rephrased-search`` compare meanings."""
    return (
        EditRunFailures(),
        RephrasedSearch(embed=embed),
        EmptySearch(),
        SearchDiversity(),
        Fatigue(),
        ImplementationChain(),
        Delegation(),
        PathHeatmap(),
    )


def short_tally(history: EventHistory) -> WindowTally:
    """The short window's counts (kept by a SessionHistory, else counted from its events)."""
    if isinstance(history, SessionHistory):
        return history.short
    return tally_of(history.window("short"))


def earlier_folders(history: EventHistory) -> KeyTally:
    """The folders of the medium window's events before the short window's first."""
    if isinstance(history, SessionHistory):
        return history.earlier_folders
    medium, short = history.window("medium"), history.window("short")
    return tally_of(medium[: len(medium) - len(short)]).folders


def window_actions(history: EventHistory, window: Window) -> Sequence[Action]:
    """The actions of a window's events, oldest first (worked out once by a SessionHistory)."""
    if isinstance(history, SessionHistory):
        return history.actions(window)
    return [action for event in history.window(window) for action in actions_of(event)]


def window_paths(history: EventHistory, window: Window) -> Sequence[str]:
    """The paths of a window's actions, oldest first (worked out once by a SessionHistory)."""
    if isinstance(history, SessionHistory):
        return history.paths(window)
    return [path for action in window_actions(history, window) for path in action.paths]


def current_actions(event: Event, history: EventHistory) -> tuple[Action, ...]:
    """The current event's actions."""
    if isinstance(history, SessionHistory):
        return history.current
    return actions_of(event)


def current_paths(current: Sequence[Action], history: EventHistory) -> Sequence[str]:
    """The paths of the current event's actions (``current``), in order."""
    if isinstance(history, SessionHistory):
        return history.current_paths()
    return [path for action in current for path in action.paths]


@lru_cache(maxsize=4096)
def words(text: str) -> frozenset[str]:
    """The telling words of a query or command, in lower case, common endings off.

    Cached: a window's queries are read again with every search of the window.
    """
    return frozenset(_stem(w) for w in _WORD.findall(text.lower()) if w not in _STOPWORDS)


def _stem(word: str) -> str:
    """``refreshing`` and ``refreshes`` as ``refresh``: enough to match a query's rewording."""
    for ending in ("ing", "ed", "es", "s"):
        if len(word) > len(ending) + 3 and word.endswith(ending):
            return word[: -len(ending)]
    return word


def overlap(a: frozenset[str], b: frozenset[str]) -> float:
    """Jaccard overlap of two word sets (0 when both are empty)."""
    union = a | b
    return len(a & b) / len(union) if union else 0.0


@attrs.define
class EditRunFailures:
    """Frustration: failing runs, stronger when edits and runs alternate with failures."""

    speaks_on: ClassVar[int] = traits.FAILED_RUN
    name: str = "edit-run-failures"
    #: A failing run on its own.
    single: float = 0.2
    #: Edit↔run switches in the short window that make the reading 1 (at a 100 % failure rate).
    full_alternations: int = 6

    def read(self, event: Event, history: EventHistory) -> list[SignalReading]:
        failing: Action | None = None  # the last failing run (a loop: most events have none)
        for action in current_actions(event, history):
            if action.kind == "run" and action.failed:
                failing = action
        if failing is None:
            return []
        short = short_tally(history)
        switches, runs, failed = short.switches, short.ran, short.failed_runs
        failure_rate = failed / max(1, runs)
        value = max(self.single, min(1.0, switches / self.full_alternations) * failure_rate)
        detail = f"{failing.text}; {switches} edit/run switches, {failure_rate:.0%} failing"
        return [SignalReading(self.name, "frustration", value, detail)]


@attrs.define
class RephrasedSearch:
    """Frustration: the same concept searched again in other words."""

    speaks_on: ClassVar[int] = traits.SEARCH
    embed: Embed | None = None
    name: str = "rephrased-search"
    #: Cosine at or above which two queries mean the same (with ``embed``).
    similar: float = 0.75
    #: Word overlap under which two queries are worded differently.
    lexical: float = 0.5
    #: Word overlap at or above which two queries share a concept (with or without ``embed``).
    shared: float = 0.2
    _vectors: Callable[[str], tuple[float, ...]] = attrs.field(init=False, repr=False)

    def __attrs_post_init__(self) -> None:
        embed = self.embed

        @lru_cache(maxsize=512)
        def vector(text: str) -> tuple[float, ...]:
            assert embed is not None
            return tuple(float(x) for x in embed(text))

        self._vectors = vector

    def read(self, event: Event, history: EventHistory) -> list[SignalReading]:
        current = current_actions(event, history)
        if not has_search(current):
            return []  # most events, without building the list
        queries = [a.query for a in current if a.query and _is_search(a)]
        earlier = list(short_tally(history).queries)
        earlier = earlier[: len(earlier) - len(queries)]
        readings = []
        for query in queries:
            assert query is not None
            matches = [old for old in earlier if self._rephrases(query, old)]
            if matches:
                value = min(1.0, 0.5 + 0.2 * (len(matches) - 1))
                detail = f'"{query}" again in other words ({len(matches)} earlier)'
                readings.append(SignalReading(self.name, "frustration", value, detail))
        return readings

    def _rephrases(self, query: str, earlier: str) -> bool:
        same_words = overlap(words(query), words(earlier))
        if same_words >= self.lexical or query.strip() == earlier.strip():
            return False
        if same_words >= self.shared:
            return True
        return (
            self.embed is not None
            and _cosine(self._vectors(query), self._vectors(earlier)) >= self.similar
        )


@attrs.define
class EmptySearch:
    """Seeking: a recall or a search that found nothing, the strongest gap signal."""

    speaks_on: ClassVar[int] = traits.EMPTY_RESULT
    name: str = "empty-search"
    recall: float = 0.8
    search: float = 0.4

    def read(self, event: Event, history: EventHistory) -> list[SignalReading]:
        return [
            SignalReading(
                self.name,
                "seeking",
                self.recall if action.kind == "memory_read" else self.search,
                action.text,
            )
            for action in current_actions(event, history)
            if action.result_count == 0
        ]


@attrs.define
class SearchDiversity:
    """Uncertainty: the short window's searches wander (share few words) rather than converge."""

    speaks_on: ClassVar[int] = traits.SEARCH
    name: str = "search-diversity"
    #: Searches in the short window before diversity says anything.
    minimum: int = 3
    #: Searches at which the reading reaches its full weight.
    full: int = 6

    def read(self, event: Event, history: EventHistory) -> list[SignalReading]:
        if not has_search(current_actions(event, history)):
            return []
        queries = [words(query) for query in short_tally(history).queries]
        if len(queries) < self.minimum:
            return []
        # Each pair's overlap in a loop, in the order the pairs come: no generator, no call
        # a pair, and the same sum.
        overlaps: list[float] = []
        for i, a in enumerate(queries):
            for b in queries[i + 1 :]:
                union = a | b
                overlaps.append(len(a & b) / len(union) if union else 0.0)
        similarity = sum(overlaps) / len(overlaps)
        value = (1.0 - similarity) * min(1.0, len(queries) / self.full)
        if value <= 0:
            return []
        detail = f"{len(queries)} searches sharing {similarity:.0%} of their words"
        return [SignalReading(self.name, "uncertainty", value, detail)]


@attrs.define
class Fatigue:
    """Fatigue: a little with every event, more the longer and busier the session."""

    name: str = "fatigue"
    base: float = 0.005
    #: Added per hour of session.
    per_hour: float = 0.003
    #: Events in the short window above which volume adds to the reading.
    busy: int = 30
    per_busy_event: float = 0.002
    #: The last detail: the hours from ``low`` to under ``high`` that format as its
    #: ``text``, the volume and the detail (:meth:`_detail`).
    _details: tuple[float, float, str, int, str] = attrs.field(
        init=False, repr=False, eq=False, default=(1.0, 0.0, "", -1, "")
    )

    def read(self, event: Event, history: EventHistory) -> list[SignalReading]:
        if isinstance(history, SessionHistory):
            started, volume = history.started_at, history.short_size  # size("short")
        else:
            session = history.window("session")
            started = session[0].received_at if session else history.now
            volume = len(history.window("short"))
        # Conditionals rather than max() and min(): this runs on every event.
        elapsed = history.now - started
        hours = (elapsed if elapsed > 0.0 else 0.0) / 3600
        extra = (volume - self.busy if volume > self.busy else 0) * self.per_busy_event
        value = self.base + self.per_hour * hours + extra
        value = value if value < 1.0 else 1.0
        low, high, _, last_volume, detail = self._details
        if volume != last_volume or not low <= hours < high:  # else the last detail holds
            detail = self._detail(hours, volume)
        return [SignalReading(self.name, "fatigue", value, detail)]

    def _detail(self, hours: float, volume: int) -> str:
        """``"0.4 h, 12 events in 5 min"``, the hours formatted again only past their range.

        Formatting a float costs more than the rest of a read, and the hours' tenth
        changes once in six minutes: hours from one that gave ``text`` on to under
        the next half tenth give ``text`` too (rounding never goes down as hours grow).
        """
        low, high, text, last_volume, detail = self._details
        if low <= hours < high:
            if volume == last_volume:
                return detail
        else:
            text = f"{hours:.1f}"
            low, high = hours, (round(float(text) * 10) + 0.5) / 10 - 1e-9
        detail = f"{text} h, {volume} events in 5 min"
        self._details = (low, high, text, volume, detail)
        return detail


@attrs.define
class ImplementationChain:
    """Flow: an unbroken run of successful actions that edits and passes its runs."""

    speaks_on: ClassVar[int] = traits.CLEAN
    name: str = "implementation-chain"
    #: The reading of a chain that holds an edit and a passing run ...
    start: float = 0.3
    #: ... growing with each action of the chain.
    per_action: float = 0.1
    #: The reading of a chain with an edit but no passing run yet.
    editing: float = 0.15

    def read(self, event: Event, history: EventHistory) -> list[SignalReading]:
        # current_actions and short_tally, and the test for a failure, without the calls:
        # this runs on nearly every event.
        if isinstance(history, SessionHistory):
            current, short = history.current, history.short
        else:
            current, short = actions_of(event), short_tally(history)
        if not current:
            return []
        for action in current:
            if action.failed:
                return []
        length, edits, passes = short.chain, short.chain_edits, short.chain_runs
        if edits and passes:
            value = self.start + self.per_action * length
            value = value if value < 1.0 else 1.0  # min(1, value), without the call
            detail = f"{length} actions without a failure: {edits} edits, {passes} passing runs"
            return [SignalReading(self.name, "flow", value, detail)]
        if edits:
            detail = f"{edits} edits, nothing failing"
            return [SignalReading(self.name, "flow", self.editing, detail)]
        return []


@attrs.define
class Delegation:
    """Isolation: work handed to sub-agents, as a share of the short window's actions."""

    speaks_on: ClassVar[int] = traits.DELEGATION
    name: str = "delegation"

    def read(self, event: Event, history: EventHistory) -> list[SignalReading]:
        if not has_delegation(current_actions(event, history)):
            return []
        short = short_tally(history)
        share = short.delegated / short.actions
        detail = f"{share:.0%} of the last 5 minutes' actions delegated"
        return [SignalReading(self.name, "isolation", min(1.0, 0.2 + share), detail)]


@attrs.define
class PathHeatmap:
    """Where the agent works: hot-folder shifts, unknown paths, scattered names, convergence."""

    speaks_on: ClassVar[int] = traits.PATHS
    name: str = "path-heatmap"
    #: Path accesses the medium window needs before its hot folder means anything.
    settled: int = 8
    #: Session events before a path the session never touched counts as unknown.
    warm_up: int = 5
    shift: float = 0.5
    unknown: float = 0.3
    scattered: float = 0.4
    #: Path accesses the short window needs before it can converge on one path ...
    focus_accesses: int = 6
    #: ... and the share of them the hot path must hold.
    focus_share: float = 0.5
    #: Share of the short window's runs failing above which convergence is stuck, not flow.
    failing: float = 0.4
    #: Flow when the window converges and its runs pass ...
    converged: float = 0.25
    #: ... and frustration when they fail: off (0), as it lowered the early-warning
    #: AUC on the sample runs; edit-run-failures reads failing runs already.
    converged_stuck: float = 0.0

    def read(self, event: Event, history: EventHistory) -> list[SignalReading]:
        if isinstance(history, SessionHistory):  # current_actions, short_tally, earlier_folders
            current, paths = history.current, history.event_paths  # current_paths()
            if not paths:
                return []
            short, earlier = history.short, history.earlier_folders
        else:
            current = actions_of(event)
            paths = current_paths(current, history)
            if not paths:
                return []
            short, earlier = short_tally(history), earlier_folders(history)
        found: list[SignalReading] = []
        # _shift and _unknown are called only past the first tests they make, which
        # most events fail: the call costs more than the test.
        if earlier.total >= self.settled:
            shift = self._shift(paths, short, history)
            if shift is not None:
                found.append(shift)
        if (
            isinstance(history, SessionHistory)
            and history.count > self.warm_up
            and history.event_new_paths  # new_paths(), without the call
        ):
            unknown = self._unknown(current, history)
            if unknown is not None:
                found.append(unknown)
        # The file names _scattered speaks of, found here: most events have none, and
        # need no call then (a loop, not a comprehension).
        names = short.names
        scattered = set()
        for name in map(file_name, paths):
            if "." in name and len(names.get(name, ())) >= 3:
                scattered.add(name)
        if scattered:
            found += self._scattered(scattered, short, history)
        # _converging's first two tests, here: most events fail one and need no call then.
        tally = short.paths
        total = tally.total
        if total >= self.focus_accesses:
            most = 0
            for path in paths:  # max(map(tally.count, paths)), without max's parse
                count = tally.count(path)
                most = count if count > most else most
            if most / total >= self.focus_share:
                converging = self._converging(paths, short)
                if converging is not None:
                    found.append(converging)
        return found

    def _shift(
        self, paths: Sequence[str], short: WindowTally, history: EventHistory
    ) -> SignalReading | None:
        """Uncertainty when the current event moves the short window's hot folder elsewhere."""
        earlier = earlier_folders(history)
        if earlier.total < self.settled:
            return None
        after = short.folders.hottest()
        folders = list(map(folder_of, paths))
        if after not in folders:
            # Only this event's folders gained: a hot folder not among them was the
            # hottest before too (same count, same first place), so nothing moved.
            return None
        # The window before this event: its folders come last, so taking them off
        # leaves the others where they first came.
        before = short.folders.hottest(minus=folders)
        if after == before:
            return None  # no move: the settled folder cannot matter
        settled = earlier.hottest()
        if before not in (None, settled) or after == settled:
            return None
        detail = f"hot folder moved from {settled} to {after}"
        return SignalReading(self.name, "uncertainty", self.shift, detail)

    def _unknown(self, current: Sequence[Action], history: EventHistory) -> SignalReading | None:
        """Seeking when a read or search reaches a path the session never touched."""
        if not isinstance(history, SessionHistory) or history.count <= self.warm_up:
            return None
        new = history.new_paths()
        if not new:
            return None
        looking = {p for a in current if a.kind in ("read", "search") for p in a.paths}
        for path in new:
            if path in looking:
                return SignalReading(self.name, "seeking", self.unknown, f"first look at {path}")
        return None

    def _scattered(
        self, scattered: set[str], short: WindowTally, history: EventHistory
    ) -> list[SignalReading]:
        """Frustration when one file name turns up under different folders in the short window.

        ``scattered``: the current event's file names under three folders or more
        (:meth:`read` finds them).
        """
        names = short.names
        # Each name in the order the window first touched one of its paths.
        ordered = dict.fromkeys(
            name for name in map(file_name, window_paths(history, "short")) if name in scattered
        )
        return [
            SignalReading(
                self.name, "frustration", self.scattered, f"{name} under {len(names[name])} folders"
            )
            for name in ordered
        ]

    def _converging(self, paths: Sequence[str], short: WindowTally) -> SignalReading | None:
        """Flow or frustration when the short window comes to converge on one path.

        It speaks on the event that makes one path hold ``focus_share`` of the
        window's path accesses. Convergence alone says the agent is focused,
        not whether that goes well: the window's runs tell (failing more than
        ``failing``: stuck on one file, ``converged_stuck``; else working one
        through, ``converged``).
        """
        tally = short.paths
        total = tally.total
        # read tested already that the window has enough path accesses and that one of
        # this event's paths could hold the share (the hot path must be one of them).
        hot = tally.hottest()
        assert hot is not None
        share = tally.count(hot) / total
        if hot not in paths or share < self.focus_share:
            return None
        before = total - len(paths)  # the window before this event: its paths come last
        if before and tally.top(minus=paths) / before >= self.focus_share:
            return None  # converged already: this event adds no new evidence
        runs, failed = short.ran, short.failed_runs
        stuck = runs > 0 and failed / runs > self.failing
        value = self.converged_stuck if stuck else self.converged
        if value <= 0:
            return None
        detail = f"{share:.0%} of the last 5 minutes' path accesses on {hot}"
        return SignalReading(self.name, "frustration" if stuck else "flow", value, detail)


def _is_search(action: Action) -> bool:
    return action.kind in ("search", "memory_read") and bool(action.query)


# Loops rather than any() over a generator (SIM110): these run on every event, mostly on one
# action, where the generator costs more than the test.


def has_search(actions: Sequence[Action]) -> bool:
    """Whether one of ``actions`` is a search or a recall with a query."""
    for action in actions:  # noqa: SIM110
        if action.query and _is_search(action):
            return True
    return False


def has_delegation(actions: Sequence[Action]) -> bool:
    for action in actions:  # noqa: SIM110
        if action.kind == "delegation":
            return True
    return False


def _cosine(a: Sequence[float], b: Sequence[float]) -> float:
    dot = sum(x * y for x, y in zip(a, b, strict=False))
    norm = math.sqrt(sum(x * x for x in a)) * math.sqrt(sum(y * y for y in b))
    return dot / norm if norm else 0.0
