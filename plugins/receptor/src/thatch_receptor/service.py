"""The receptor in the daemon: events in off the hook path, deliveries out on the next hook.

A hook command waits for the daemon's answer, so nothing of the receptor runs
while it waits: ``thatch_ingest`` only queues the event. Two daemon threads do
the work:

- the **reader** feeds each tool event to the :class:`~thatch_receptor.receptor.Receptor`
  (embedding search queries to tell a rephrased search), interprets each
  firing composition (:class:`~thatch_receptor.interpret.Interpreter`), keeps
  the session's status file for ``thatch receptor status``, and hands work on;
- the **worker** embeds and stores observations (stage 1), runs the probe when
  an interpretation calls for knowledge (stage 2) and turns its result into a
  delivery (:class:`~thatch_receptor.deliveries.Deliveries`), and clusters
  observations into insights at session end and on a schedule.

The agent gets what is ready in the next hook's answer: ``thatch_tool_nudges``
(one active item at most, never in deep work) and the next prompt's nudges
(the active item if no tool hook took it, open offers, unread notes).
"""

from __future__ import annotations

import logging
import queue
import threading
import time
from collections import deque
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import attrs
from thatch.plugin import AXES

from thatch_receptor.actions import actions_of
from thatch_receptor.deliveries import Deliveries, Delivery
from thatch_receptor.problem import (
    Problem,
    RecentActions,
    break_text,
    delivery_text,
    note_text,
)
from thatch_receptor.receptor import Receptor, Step
from thatch_receptor.status import StatusFiles, snapshot

if TYPE_CHECKING:
    from thatch.plugin import DeliveryMode, Event, Nudge, Runtime

    from thatch_receptor.interpret import Decision, Interpreter, SessionInterpreter
    from thatch_receptor.observations import ObservationStore
    from thatch_receptor.settings import ReceptorConfig

log = logging.getLogger(__name__)

#: Events queued for the reader at most; past it an event is dropped (and logged).
MAX_QUEUED = 10_000
#: Observations embedded together.
OBSERVATION_BATCH = 64
#: Seconds between two scheduled cluster analyses of a project with new observations.
ANALYSIS_SECONDS = 900.0
#: Firings (with their decisions) kept per session for the status.
MAX_FIRINGS = 20
#: Sessions the reader keeps state for; the least recently active is forgotten first.
MAX_SESSIONS = 200
#: How often a session's status file is rewritten at most (always on a firing).
STATUS_SECONDS = 1.0
#: Points of a session's axes kept for its status, one each time the file is
#: written: at least the last ten minutes of a busy session.
MAX_SERIES = 600
#: Background work waits for the hooks to pause this long (seconds; the work of a
#: probe, embeddings and clustering, would otherwise compete with the hook commands
#: of a burst of tool calls for the two cores and the interpreter lock)...
QUIET_SECONDS = {"probe": 0.2, "observe": 1.0, "analyse": 1.0}
#: ...but no longer than this: a probe's answer is wanted by the next hook or so.
MAX_WAIT_SECONDS = {"probe": 2.0, "observe": 30.0, "analyse": 60.0}
#: The Nudge priority of an active item among a prompt's tier-2 nudges.
ACTIVE_PRIORITY = 60


@attrs.frozen
class _ProbeJob:
    session_id: str
    cwd: str | None
    harness: str
    decision: Decision
    problem: Problem
    at_call: int


@attrs.frozen
class _Firing:
    step: Step
    decision: Decision


class _Session:
    """What the reader keeps of one session."""

    def __init__(self, interpreter: SessionInterpreter) -> None:
        self.interpreter = interpreter
        self.recent = RecentActions()
        self.calls = 0
        self.cwd: str | None = None
        self.harness = ""
        self.firings: deque[_Firing] = deque(maxlen=MAX_FIRINGS)
        #: ``(at, axes)`` at each status written, oldest first.
        self.series: deque[tuple[float, dict[str, float]]] = deque(maxlen=MAX_SERIES)
        self.written = 0.0
        #: A newer status than the file's waits to be written.
        self.unwritten = False
        self.touched = time.monotonic()


class ReceptorService:
    """The daemon's receptor: start it, submit events, ask it for deliveries."""

    def __init__(
        self,
        app: Runtime,
        config: ReceptorConfig,
        *,
        receptor: Receptor,
        interpreter: Interpreter,
        store: ObservationStore | None,
        status: StatusFiles,
        learned_path: Path | None = None,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.app = app
        self.config = config
        self.receptor = receptor
        self.interpreter = interpreter
        self.store = store
        self.status = status
        self.deliveries = Deliveries(clock)
        self._learned_path = learned_path
        self._clock = clock
        self._events: queue.Queue[Event | None] = queue.Queue(MAX_QUEUED)
        self._jobs: queue.Queue[tuple[str, Callable[[], None]] | None] = queue.Queue()
        #: When the last event came in (monotonic): background work waits for a pause.
        self._last_event = 0.0
        self._stopping = threading.Event()
        self._observations: deque[tuple[Event, str | None]] = deque()
        self._sessions: dict[str, _Session] = {}
        self._lock = threading.Lock()
        self._threads: list[threading.Thread] = []
        self._idle = threading.Condition()
        self._busy = 0
        self._analysed: dict[str | None, float] = {}

    # -- life ----------------------------------------------------------------
    def start(self) -> None:
        """Start the reader and the worker (daemon threads)."""
        for name, loop in (("receptor-reader", self._read_loop), ("receptor-worker", self._work)):
            thread = threading.Thread(target=loop, name=name, daemon=True)
            thread.start()
            self._threads.append(thread)

    def stop(self, timeout: float = 3.0) -> None:
        """Finish what is queued (within ``timeout``), then save the learned delta."""
        self._stopping.set()
        self._events.put(None)
        deadline = time.monotonic() + timeout
        self._threads[0].join(max(0.0, deadline - time.monotonic()))
        self._jobs.put(None)
        self._threads[1].join(max(0.0, deadline - time.monotonic()))
        self._save_learned()
        if self.store is not None:
            self.store.close()

    def submit(self, event: Event) -> None:
        """Queue ``event`` for the reader (``thatch_ingest``: returns at once)."""
        if event.kind not in ("tool_use", "session_start", "session_end"):
            return
        self._last_event = time.monotonic()
        self._begin()
        try:
            self._events.put_nowait(event)
        except queue.Full:
            self._end()
            log.warning("receptor: %d events queued; event %s dropped", MAX_QUEUED, event.event_id)

    def wait_idle(self, timeout: float = 30.0) -> bool:
        """Wait until every queued event and job is done; False on timeout (tests, the demo)."""
        deadline = time.monotonic() + timeout
        with self._idle:
            while self._busy:
                left = deadline - time.monotonic()
                if left <= 0:
                    return False
                self._idle.wait(left)
        return True

    def _begin(self) -> None:
        with self._idle:
            self._busy += 1

    def _end(self) -> None:
        with self._idle:
            self._busy -= 1
            if not self._busy:
                self._idle.notify_all()

    # -- the reader ----------------------------------------------------------
    def _read_loop(self) -> None:
        while (event := self._events.get()) is not None:
            try:
                self._read(event)
                if self._events.empty():
                    self._write_unwritten()
            except Exception:
                log.exception("receptor: event %s could not be read", event.event_id)
            finally:
                self._end()

    def _read(self, event: Event) -> None:
        session = self._session(event)
        if event.kind == "session_end":
            self._end_session(event)
            return
        if event.kind == "session_start":
            self._queue("observe", lambda: self._deliver_insights(event.session_id, event.cwd))
            return
        step = self.receptor.feed(event)
        actions = actions_of(event)
        session.recent.add(actions)
        session.calls += len(event.tool_calls)
        if self.store is not None and self.config.observations:
            self._observe(event)
        for composition in step.compositions:
            decision = session.interpreter.decide(composition, tool_calls=session.calls)
            session.firings.append(_Firing(step, decision))
            self._act(session, event, decision)
        self._write_status(event.session_id, session, step, force=bool(step.compositions))

    def _session(self, event: Event) -> _Session:
        with self._lock:
            session = self._sessions.get(event.session_id)
            if session is None:
                session = self._sessions[event.session_id] = _Session(self.interpreter.session())
                self._forget_oldest()
            session.touched = time.monotonic()
            session.cwd = event.cwd or session.cwd
            session.harness = event.harness or session.harness
            return session

    def _forget_oldest(self) -> None:
        while len(self._sessions) > MAX_SESSIONS:
            oldest = min(self._sessions, key=lambda key: self._sessions[key].touched)
            self._sessions.pop(oldest)
            self.receptor.forget(oldest)
            self.deliveries.forget(oldest)

    def _end_session(self, event: Event) -> None:
        with self._lock:
            session = self._sessions.pop(event.session_id, None)
        self.receptor.forget(event.session_id)
        self.deliveries.forget(event.session_id)
        if session is not None and self.store is not None:
            cwd = session.cwd
            self._queue("analyse", lambda: self._analyse(cwd))

    def _act(self, session: _Session, event: Event, decision: Decision) -> None:
        """Hand a decision that calls for knowledge to the worker."""
        if decision.mode == "drop" or decision.interpretation is None:
            return
        problem = session.recent.problem()
        if problem is None:
            return
        job = _ProbeJob(
            session_id=event.session_id,
            cwd=session.cwd,
            harness=session.harness,
            decision=decision,
            problem=problem,
            at_call=session.calls,
        )
        self._queue("probe", lambda: self._answer(job))

    def _write_status(self, session_id: str, session: _Session, step: Step, *, force: bool) -> None:
        """Write the session's status, at most every :data:`STATUS_SECONDS` unless ``force``.

        A status held back is written once the reader has caught up
        (:meth:`_write_unwritten`), so the file never stays behind for long.
        """
        now = time.monotonic()
        if not force and now - session.written < STATUS_SECONDS:
            session.unwritten = True
            return
        session.written = now
        session.unwritten = False
        session.series.append((step.at, {axis: round(step.axes[axis], 3) for axis in AXES}))
        self.status.write(session_id, self.status_of(session_id, session, step))

    def _write_unwritten(self) -> None:
        with self._lock:
            behind = [(key, s) for key, s in self._sessions.items() if s.unwritten]
        for session_id, session in behind:
            step = self.receptor.last(session_id)
            if step is not None:
                self._write_status(session_id, session, step, force=True)

    def status_of(self, session_id: str, session: _Session, step: Step) -> dict[str, Any]:
        """The session's status as ``thatch receptor status`` shows it."""
        return snapshot(
            step,
            firings=[(firing.step, firing.decision) for firing in session.firings],
            handed=self.deliveries.handed(session_id),
            pending=self.deliveries.pending_active(session_id),
            offers=self.deliveries.offers(session_id),
            unread=self.deliveries.unread(session_id),
            calls=session.calls,
            at=self._clock(),
            series=session.series,
        )

    def _refresh_status(self, session_id: str) -> None:
        """Rewrite the session's status after a delivery (best effort: it is only shown)."""
        with self._lock:
            session = self._sessions.get(session_id)
        step = self.receptor.last(session_id)
        if session is None or step is None:
            return
        try:
            self.status.write(session_id, self.status_of(session_id, session, step))
        except OSError as exc:
            log.warning("receptor: the status of %s could not be written: %s", session_id, exc)

    # -- the worker ----------------------------------------------------------
    def _queue(self, kind: str, job: Callable[[], None]) -> None:
        """Hand ``job`` to the worker; its ``kind`` (``probe``, ``observe``, ``analyse``)
        says how long it waits for the hooks to pause (:data:`QUIET_SECONDS`)."""
        self._begin()
        self._jobs.put((kind, job))

    def _work(self) -> None:
        while True:
            try:
                queued = self._jobs.get(timeout=ANALYSIS_SECONDS / 10)
            except queue.Empty:
                self._wait_for_a_pause("analyse")
                self._scheduled_analyses()
                continue
            if queued is None:
                return
            kind, job = queued
            try:
                self._wait_for_a_pause(kind)
                job()
            except Exception:
                log.exception("receptor: background work failed")
            finally:
                self._end()

    def _wait_for_a_pause(self, kind: str) -> None:
        """Return once no event came for ``QUIET_SECONDS[kind]``, or ``MAX_WAIT_SECONDS[kind]``."""
        quiet, longest = QUIET_SECONDS[kind], MAX_WAIT_SECONDS[kind]
        waited_until = time.monotonic() + longest
        while not self._stopping.is_set():
            now = time.monotonic()
            left = quiet - (now - self._last_event)
            if left <= 0 or now >= waited_until:
                return
            self._stopping.wait(min(left, waited_until - now))

    def _observe(self, event: Event) -> None:
        with self._lock:
            self._observations.append((event, self._sessions[event.session_id].cwd))
            first = len(self._observations) == 1
        if first:
            self._queue("observe", self._store_observations)

    def _store_observations(self) -> None:
        """Embed and store the queued observations, a batch at a time."""
        from thatch_receptor.observations import observations_of

        assert self.store is not None
        while True:
            with self._lock:
                batch = [
                    self._observations.popleft()
                    for _ in range(min(OBSERVATION_BATCH, len(self._observations)))
                ]
            if not batch:
                return
            rows = [
                observation
                for event, cwd in batch
                for observation in observations_of(
                    event,
                    repo=self.app.project(cwd).repo_store,
                    at=event.received_at or self._clock(),
                )
            ]
            if rows:
                vectors = self.app.thatch.embedder.embed_passages([row.text for row in rows])
                self.store.add(rows, vectors)

    def _answer(self, job: _ProbeJob) -> None:
        """Run the probe for a decision and keep what it found, as the decision's mode says."""
        decision = job.decision
        interpretation = decision.interpretation
        assert interpretation is not None
        prefix = self._tool_prefix(job.harness)
        base = Delivery(
            id=self.deliveries.new_id(),
            session_id=job.session_id,
            mode=decision.mode,
            text="",
            rule=interpretation.rule,
            trigger=interpretation.trigger,
            pattern=decision.composition.pattern,
            reason=interpretation.reason,
            created_at=self._clock(),
            at_call=job.at_call,
        )
        if interpretation.trigger == "break":
            text = break_text(interpretation, tool_prefix=prefix)
            self._keep(attrs.evolve(base, text=text))
            return
        from thatch_receptor.knowledge import probe_world

        found = probe_world(
            self.app,
            job.problem,
            session_id=job.session_id,
            cwd=job.cwd,
            store=self.store,
            method=self.config.probe,
        )
        memory = found.best_memory()
        if decision.mode == "active" and memory is not None:
            text = delivery_text(
                interpretation, job.problem, memory.label, memory.content, tool_prefix=prefix
            )
            self._keep(attrs.evolve(base, text=text, memory_ids=(memory.id,)))
            return
        texts = found.resonant_texts()
        if not texts:
            return
        # No memory to place in the context: what was found waits as a note.
        mode: DeliveryMode = "notification" if decision.mode == "active" else decision.mode
        text = note_text(interpretation, job.problem, texts)
        if mode == "passive":
            text = f"Search related knowledge? Reason: {interpretation.reason}\n{text}"
        self._keep(attrs.evolve(base, text=text, mode=mode))

    def _keep(self, delivery: Delivery) -> None:
        """Keep a delivery for its session, and show it in the session's status."""
        self.deliveries.add(delivery)
        self._refresh_status(delivery.session_id)

    def _tool_prefix(self, harness: str) -> str:
        found = self.app.plugins.harness(harness) if harness else None
        return found.tool_prefix if found is not None else ""

    def _scheduled_analyses(self) -> None:
        """Cluster the projects of live sessions not analysed for :data:`ANALYSIS_SECONDS`."""
        if self.store is None:
            return
        with self._lock:
            folders = {session.cwd for session in self._sessions.values()}
        now = time.monotonic()
        for cwd in folders:
            if now - self._analysed.get(cwd, 0.0) >= ANALYSIS_SECONDS:
                self._analyse(cwd)

    def _analyse(self, cwd: str | None) -> None:
        """Cluster a project's observations; new insights become notes of its live sessions."""
        from thatch_receptor.insights import find_insights

        assert self.store is not None
        self._analysed[cwd] = time.monotonic()
        repo = self.app.project(cwd).repo_store
        observations, vectors = self.store.for_clustering(repo, since=None)
        for insight in find_insights(observations, vectors):
            self.store.save_insight(insight)
        with self._lock:
            live = [key for key, session in self._sessions.items() if session.cwd == cwd]
        for session_id in live:
            self._deliver_insights(session_id, cwd)

    def _deliver_insights(self, session_id: str, cwd: str | None) -> None:
        """The project's insights not yet offered, as notes of ``session_id``."""
        if self.store is None:
            return
        repo = self.app.project(cwd).repo_store
        for insight in self.store.insights(repo=repo, pending_only=True):
            self._keep(
                Delivery(
                    id=self.deliveries.new_id(),
                    session_id=session_id,
                    mode="notification",
                    text=insight.text,
                    rule="insight",
                    trigger=insight.kind,
                    pattern="",
                    reason="what you worked out earlier",
                    created_at=self._clock(),
                )
            )
            self.store.mark_delivered(insight.key)

    # -- learned delta -------------------------------------------------------
    def _save_learned(self) -> None:
        if self._learned_path is None:
            return
        import json

        from thatch.plugin import make_private_dirs

        try:
            make_private_dirs(self._learned_path.parent)
            temporary = self._learned_path.with_suffix(".tmp")
            temporary.write_text(json.dumps(self.interpreter.learned.to_dict()), encoding="utf-8")
            temporary.replace(self._learned_path)
        except OSError as exc:
            log.warning("receptor: the learned delta could not be saved: %s", exc)

    # -- what the hooks and tools ask ----------------------------------------
    def in_flow(self, session_id: str) -> bool:
        """Whether the session was in deep work at its last event the reader read."""
        step = self.receptor.last(session_id)
        return step is not None and step.in_flow

    def latest_session(self) -> str | None:
        """The session with the most recent event, or None before any."""
        with self._lock:
            if not self._sessions:
                return None
            return max(self._sessions, key=lambda key: self._sessions[key].touched)

    def calls(self, session_id: str) -> int:
        with self._lock:
            session = self._sessions.get(session_id)
            return session.calls if session else 0

    def tool_nudges(self, event: Event) -> list[Nudge]:
        """The session's one active item, for the tool hook's answer (none in deep work)."""
        return self._active(event.session_id, via="tool")

    def prompt_nudges(self, event: Event) -> list[Nudge]:
        """For the prompt's nudges: an active item no tool hook took, and new offers and notes.

        Each offer and note is mentioned once, by the first prompt after it
        came; offers not while flow holds.
        """
        from thatch.plugin import Nudge

        session_id = event.session_id
        nudges = self._active(session_id, via="prompt")
        offers, notes = self.deliveries.untold(session_id)
        if self.in_flow(session_id):
            offers = []
        prefix = self._tool_prefix(event.harness)
        lines: list[str] = []
        if offers:
            lines.append(
                f"Search related knowledge? Accept or dismiss with `{prefix}receptor_offer`:"
            )
            lines += [f"- {offer.id}: {offer.reason}" for offer in offers[-3:]]
        if notes:
            lines.append(
                f"{len(notes)} new note(s) from your recent work: read them with "
                f"`{prefix}receptor_notes`."
            )
        if lines:
            told = [*offers, *notes]
            nudges.append(
                Nudge(
                    source="receptor",
                    tier=2,
                    priority=10,
                    text="[thatch receptor] " + "\n".join(lines),
                    on_delivered=lambda: self.deliveries.mark_told(session_id, told),
                )
            )
        return nudges

    def _active(self, session_id: str, *, via: str) -> list[Nudge]:
        if not self.config.active:
            return []
        from thatch.plugin import Nudge

        item = self.deliveries.take_active(
            session_id, calls=self.calls(session_id), in_flow=self.in_flow(session_id), via=via
        )
        if item is None:
            return []
        self._refresh_status(session_id)
        return [
            Nudge(
                source="receptor",
                tier=2,
                priority=ACTIVE_PRIORITY,
                text=item.text,
                memory_ids=item.memory_ids,
            )
        ]

    def notes(self, session_id: str) -> list[Delivery]:
        """The session's unread notes (now read)."""
        notes = self.deliveries.take_notes(session_id)
        self._refresh_status(session_id)
        return notes

    def answer_offer(self, offer_id: str, *, accept: bool) -> Delivery | None:
        """Close an offer; a dismissal lowers its pattern's sensitivity."""
        offer = self.deliveries.answer(offer_id)
        if offer is None:
            return None
        self._refresh_status(offer.session_id)
        if accept:
            self.interpreter.learned.accept(offer.pattern)
        else:
            self.interpreter.learned.dismiss(offer.pattern)
        self._save_learned()
        return offer
