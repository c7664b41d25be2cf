"""Testing a receptor's parts: scripted event streams and the ``receptor_replay`` fixture.

thatch-receptor registers this module under the ``pytest11`` entry point, so
pytest loads it in any environment where the receptor is installed. It gives

- a stream builder: tool calls as a harness reports them (:func:`edit`,
  :func:`read`, :func:`run`, :func:`grep`, :func:`recall`, :func:`delegate`),
  made into one session's events a step apart by :class:`Stream`, and two
  scripted shapes of work (:func:`trial_and_error`, :func:`implementation`);
- the ``receptor_replay`` fixture: a :class:`ReceptorReplay` that runs a
  stream through a fresh receptor and returns a :class:`Replay` of its steps
  and firings.

By default a replay reads with the built-in sources plus those of every
installed plugin (the ``thatch`` entry-point group), so a plugin's test can
compare a replay with and without it::

    def test_my_source_changes_the_firings(receptor_replay):
        calls = trial_and_error(4)
        assert receptor_replay(calls).fired_axes() != receptor_replay(
            calls, without=("my-plugin",)
        ).fired_axes()

Importing this module is cheap (pytest imports it in every run): the
receptor itself and the installed plugins are loaded when a replay runs.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from importlib import metadata
from typing import TYPE_CHECKING, Any

import attrs
import pytest
from thatch.plugin import Event, ToolCall

if TYPE_CHECKING:
    from thatch.plugin import Axis, FiringComposition, SignalSource

    from thatch_receptor.receptor import Settings, Step

#: The session a :class:`Stream`'s events belong to unless it is given another.
SESSION = "receptor-session"
#: When a stream starts (epoch seconds), far from 0 so that "no time" stays apart.
START = 1_800_000_000.0
#: The entry-point group thatch loads plugins from.
GROUP = "thatch"
#: The receptor's own module: its sources are the built-in ones.
_RECEPTOR_MODULE = "thatch_receptor."


# -- the stream builder ------------------------------------------------------------
def edit(path: str = "src/auth/token.py") -> ToolCall:
    """An edit of one file."""
    return ToolCall("Edit", {"file_path": path, "old_string": "a", "new_string": "b"}, {})


def read(path: str = "src/auth/token.py") -> ToolCall:
    """A read of one file."""
    return ToolCall("Read", {"file_path": path}, "1\timport time\n")


def run(command: str = "pytest tests/test_auth.py", *, error: str | None = None) -> ToolCall:
    """A shell call, passing, or failing with Claude Code's ``Exit code 1`` message."""
    if error is None:
        return ToolCall("Bash", {"command": command}, {"stdout": "3 passed", "stderr": ""})
    return ToolCall("Bash", {"command": command}, None, failed=True, error=f"Exit code 1\n{error}")


def grep(pattern: str, path: str = "src/", *, found: int = 2) -> ToolCall:
    """A search that found ``found`` files."""
    files = [f"{path}file{i}.py" for i in range(found)]
    return ToolCall(
        "Grep", {"pattern": pattern, "path": path}, {"filenames": files, "numFiles": found}
    )


def recall(query: str, *, found: int = 0) -> ToolCall:
    """A recall of thatch's memories that found ``found`` of them."""
    hits = [{"label": f"m{i}", "relevant": True} for i in range(found)]
    return ToolCall("mcp__thatch__memory_recall", {"query": query}, hits)


def delegate(prompt: str = "find where tokens are refreshed") -> ToolCall:
    """Work handed to a sub-agent."""
    return ToolCall("Task", {"prompt": prompt, "subagent_type": "explore"}, "done")


@attrs.define
class Stream:
    """Builds events of one session, ``step`` seconds apart (0: events without a time)."""

    session_id: str = SESSION
    step: float = 20.0
    at: float = START
    count: int = 0

    def event(self, *calls: ToolCall, **fields: Any) -> Event:
        """The next event: Claude Code's PostToolUse carrying ``calls``."""
        self.count += 1
        received_at = self.at if self.step else 0.0
        self.at += self.step
        return Event(
            kind="tool_use",
            harness="claude",
            session_id=self.session_id,
            hook_event="PostToolUse",
            tool_calls=calls,
            event_id=f"{self.session_id}-{self.count}",
            received_at=received_at,
            **fields,
        )

    def events(self, calls: Iterable[ToolCall | Event]) -> Iterator[Event]:
        """One event per call; an event is passed on as it is."""
        for call in calls:
            yield call if isinstance(call, Event) else self.event(call)


def trial_and_error(cycles: int) -> list[ToolCall]:
    """edit → run (fail) → edit → run (fail) ..."""
    calls: list[ToolCall] = []
    for i in range(cycles):
        calls += [edit(), run(error=f"E   AssertionError: token expired ({i})")]
    return calls


def implementation(cycles: int) -> list[ToolCall]:
    """read → edit → run (pass) ..."""
    calls: list[ToolCall] = []
    for i in range(cycles):
        path = f"src/feature/part{i % 3}.py"
        calls += [read(path), edit(path), run("pytest tests/test_feature.py")]
    return calls


# -- the replay --------------------------------------------------------------------
@attrs.frozen
class Firing:
    """One step at which layer B fired, with the composition it produced."""

    #: The step's place in the replay, from 0 (the stream's ``index``-th event).
    index: int
    step: Step
    composition: FiringComposition

    @property
    def fired(self) -> frozenset[Axis]:
        """The axes that fired at this step (their hold began)."""
        return self.step.fired

    @property
    def sources(self) -> frozenset[str]:
        """The sources whose readings the composition holds."""
        return frozenset(reading.source for reading in self.composition.signals)


@attrs.frozen
class Replay:
    """What a receptor did with a stream: every step, and the firings among them."""

    steps: tuple[Step, ...]
    #: The names of the sources the receptor read with, in order.
    sources: tuple[str, ...]

    @property
    def firings(self) -> tuple[Firing, ...]:
        """Every composition of the replay, in order, with the step it came from."""
        return tuple(
            Firing(index, step, composition)
            for index, step in enumerate(self.steps)
            for composition in step.compositions
        )

    def fired_axes(self) -> frozenset[Axis]:
        """Every axis that fired at some step."""
        return frozenset(axis for step in self.steps for axis in step.fired)

    def patterns(self) -> tuple[str, ...]:
        """Each firing's pattern label, in order."""
        return tuple(firing.composition.pattern for firing in self.firings)

    def first(self, axis: Axis) -> Firing | None:
        """The first firing of ``axis``, or None when it never fired."""
        return next((firing for firing in self.firings if axis in firing.fired), None)

    def peak(self, axis: Axis) -> float:
        """The highest value ``axis`` reached (0 for an empty stream)."""
        return max((step.axes[axis] for step in self.steps), default=0.0)


class ReceptorReplay:
    """Replays a scripted stream through a fresh receptor: the ``receptor_replay`` fixture."""

    def __call__(
        self,
        stream: Iterable[Event | ToolCall],
        *,
        sources: Iterable[SignalSource] | None = None,
        without: Iterable[str] = (),
        settings: Settings | None = None,
    ) -> Replay:
        """Feed ``stream`` to a new receptor, one event per tool call, and return what it did.

        ``stream``: events, or tool calls that a :class:`Stream` makes into one
        session's events 20 seconds apart (the two may be mixed).
        ``sources``: read with these alone; by default the built-in sources
        plus every installed plugin's (:meth:`installed_sources`), leaving out
        the plugins named in ``without`` (entry-point names: ``receptor`` is
        the built-in sources). ``settings``: the receptor's parameters.
        """
        from thatch_receptor.receptor import Receptor

        without = tuple(without)
        if sources is not None and without:
            raise TypeError("pass sources= or without=, not both: without= leaves out plugins")
        chosen = self.installed_sources(without=without) if sources is None else tuple(sources)
        receptor = Receptor(sources=chosen, settings=settings)
        steps = tuple(receptor.feed(event) for event in Stream().events(stream))
        return Replay(steps=steps, sources=tuple(source.name for source in chosen))

    def installed_sources(self, *, without: Iterable[str] = ()) -> tuple[SignalSource, ...]:
        """The built-in sources, then each installed plugin's, by entry-point name.

        Every plugin in the ``thatch`` entry-point group that implements
        ``thatch_receptor_signals`` counts, except those named in ``without``.
        """
        from thatch_receptor.signals import builtin_sources

        plugins = {point.name: point for point in metadata.entry_points(group=GROUP)}
        left_out = set(without)
        unknown = sorted(left_out - set(plugins))
        if unknown:
            raise ValueError(
                f"without= names {', '.join(unknown)}, not installed thatch plugins; "
                f"installed: {', '.join(sorted(plugins))}"
            )
        owners: dict[str, str] = {}
        chosen: list[SignalSource] = []
        for name, point in sorted(plugins.items(), key=_receptor_first):
            if name in left_out:
                continue
            for source in builtin_sources() if _is_receptor(point) else _plugin_sources(point):
                if source.name in owners:
                    raise ValueError(
                        f"plugins '{owners[source.name]}' and '{name}' both provide the receptor "
                        f"signal source '{source.name}'; rename one, or leave one out (without=)"
                    )
                owners[source.name] = name
                chosen.append(source)
        return tuple(chosen)


def _is_receptor(point: metadata.EntryPoint) -> bool:
    """The receptor's own entry point: its sources are the built-in ones."""
    return point.value.startswith(_RECEPTOR_MODULE)


def _receptor_first(item: tuple[str, metadata.EntryPoint]) -> tuple[bool, str]:
    name, point = item
    return (not _is_receptor(point), name)


def _plugin_sources(point: metadata.EntryPoint) -> Sequence[SignalSource]:
    """What an installed plugin's ``thatch_receptor_signals`` offers (nothing without one)."""
    hook = getattr(point.load(), "thatch_receptor_signals", None)
    return tuple(hook() or ()) if callable(hook) else ()


@pytest.fixture
def receptor_replay() -> ReceptorReplay:
    """Replays a scripted stream through a fresh receptor and returns its firings."""
    return ReceptorReplay()
