"""The daemon's shared state: one :class:`Runtime` per daemon process.

Plugins receive it as ``app`` in ``thatch_ingest`` and ``thatch_nudges``.
It holds what every session shares — config, plugins, storage, the loaded
model, the local session store — and hands out a :class:`thatch.api.Thatch`
view for each project, so a project's calls reuse the one open database
and the one loaded model.
"""

from __future__ import annotations

import logging
import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Iterable, Mapping, Sequence
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Any

import attrs

from thatch.api import Thatch
from thatch.config.settings import RuntimeSettings
from thatch.plugin.config import Config
from thatch.plugins import Plugins

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

    from thatch.deferred import Write
    from thatch.plugin.embedder import Embedder, Thresholds
    from thatch.plugin.harness import Harness
    from thatch.plugin.records import HygieneReport
    from thatch.sessions.store import SessionStore

#: How long a project's git store and branch are trusted before asking git again.
PROJECT_TTL_SECONDS = 2.0
#: How long a project's hygiene report (for the session-start reminder) is reused.
HYGIENE_TTL_SECONDS = 600.0

log = logging.getLogger("thatch")


def project_folder(
    env: Mapping[str, str], cwd: str | None, harnesses: Iterable[Harness] | None = None
) -> str | None:
    """The caller's project: the folder a harness names in ``env``, else ``cwd``.

    The harnesses are asked by name, in order, so the answer does not depend
    on the order plugins load in. ``harnesses``: None asks the installed ones.
    """
    if harnesses is None:
        harnesses = installed_harnesses()
    for harness in sorted(harnesses, key=lambda harness: harness.name):
        folder = harness.project_folder(env)
        if folder:
            return folder
    return cwd


def installed_harnesses() -> list[Harness]:
    """The harnesses of the plugins the user's config allows (for callers without a runtime)."""
    config = Config.load()
    return list(Plugins.load(config).harnesses().values())


class Runtime:
    """Everything the daemon shares between sessions and projects."""

    def __init__(self, config: Config, plugins: Plugins) -> None:
        self.config = config
        self.plugins = plugins
        self.settings = RuntimeSettings.from_config(config)
        #: The daemon's warm-up; requests that need the model wait for it.
        self.warming = WarmUp()
        # Recall and the decision model embed the same prompt: embed it once.
        memo = QueryMemo(plugins.embedder(config), before_use=self.warming.wait)
        self._base = Thatch(config, plugins, Path.cwd(), embedder=memo)
        self._views: dict[str, tuple[float, Thatch]] = {}
        self._lock = threading.Lock()
        self._deferred = threading.local()
        # project folder -> (made at, report); folders whose report is being made.
        self._hygiene: dict[str, tuple[float, HygieneReport]] = {}
        self._hygiene_running: set[str] = set()
        self._write_hook_table()

    def _write_hook_table(self) -> None:
        """Keep the hook commands' table (:mod:`thatch.hooktable`) in step with these plugins.

        Without it a hook still sends its event, but waits for no cold
        daemon and prints no stand-in answer: it is worth a log line, never
        a daemon that does not start.
        """
        from thatch.hooktable import hook_table_path, write_hook_table
        from thatch.plugin.errors import PluginConflictError

        path = hook_table_path(self.config)
        try:
            write_hook_table(self.plugins.harnesses().values(), path)
        except (OSError, PluginConflictError) as exc:
            log.warning("the hook table %s could not be written: %s", path, exc)

    @cached_property
    def sessions(self) -> SessionStore:
        """The local store of session queues and nudge state."""
        from thatch import rundir
        from thatch.sessions.store import SessionStore

        located = rundir.locate(
            home=str(self.config.paths.home) if self.config.paths.home else None
        )
        return SessionStore(Path(located.sessions_db))

    @property
    def thatch(self) -> Thatch:
        """The shared API object (its working directory is the daemon's)."""
        return self._base

    def project(self, cwd: str | None, env: Mapping[str, str] | None = None) -> Thatch:
        """A :class:`Thatch` view for the caller's project, sharing storage and model.

        The project folder is the one a harness names in ``env``, else ``cwd``
        (:meth:`project_folder`).
        """
        folder = self.project_folder(env or {}, cwd) or str(self._base.cwd)
        now = time.monotonic()
        with self._lock:
            cached = self._views.get(folder)
            if cached and now - cached[0] < PROJECT_TTL_SECONDS:
                return cached[1]
            view = self._base.view(Path(folder))
            self._views[folder] = (now, view)
            return view

    def project_folder(self, env: Mapping[str, str], cwd: str | None) -> str | None:
        """The caller's project folder, as the installed harnesses read ``env``, else ``cwd``."""
        return project_folder(env, cwd, self.plugins.harnesses().values())

    def hygiene(self, th: Thatch) -> HygieneReport | None:
        """The project's last hygiene report, refreshed in the background when old.

        A near-duplicate scan of a large store takes longer than a hook may
        run, so the session-start reminder uses the report made earlier (and
        none the very first time).
        """
        key = str(th.cwd)
        with self._lock:
            made = self._hygiene.get(key)
            fresh = made is not None and time.monotonic() - made[0] < HYGIENE_TTL_SECONDS
            if not fresh and key not in self._hygiene_running:
                self._hygiene_running.add(key)
                threading.Thread(target=self._make_hygiene, args=(th,), daemon=True).start()
        return made[1] if made else None

    def _make_hygiene(self, th: Thatch) -> None:
        key = str(th.cwd)
        # A session start answered during the warm-up asks for the report;
        # the scan must not slow the model load the first prompt waits for.
        self.warming.wait()
        try:
            report = th.hygiene()
        except Exception:
            log.exception("hygiene report for %s failed", key)
            return
        finally:
            with self._lock:
                self._hygiene_running.discard(key)
        with self._lock:
            self._hygiene[key] = (time.monotonic(), report)

    def defer(self, work: Callable[[], None]) -> None:
        """Run ``work`` once the current request is answered (writes off the hot path)."""
        pending = getattr(self._deferred, "work", None)
        if pending is None:
            pending = self._deferred.work = []
        pending.append(work)

    def defer_write(self, write: Write) -> None:
        """Make ``write`` once the current request is answered, and until the storage takes it.

        A write that fails with StorageError is kept in the session store and
        tried again by the daemon's loop (:mod:`thatch.deferred`).
        """
        from thatch import deferred

        self.defer(lambda: deferred.make(self, write))

    def retry_writes(self) -> None:
        """Try again the kept writes that are due (the daemon's loop, each tick)."""
        from thatch import deferred

        deferred.retry_due(self)

    def run_deferred(self) -> None:
        """Run what this thread deferred; a failure is logged and skips only that step.

        Work deferred as a closure is not tried again: what must not be lost
        is deferred with :meth:`defer_write`.
        """
        pending = getattr(self._deferred, "work", None) or []
        self._deferred.work = []
        for work in pending:
            try:
                work()
            except Exception:
                log.exception("deferred bookkeeping failed")

    def warm_up(self) -> None:
        """Open storage, load the model and fill the vector caches before the first prompt.

        Requests that need the model meanwhile wait for this to end (see
        :class:`WarmUp`); those that do not, such as the session-start
        reminder, are answered at once.
        """
        self.warming.run(self._warm_up)

    def _warm_up(self) -> None:
        th = self._base
        with self._lock:
            # project() opens the storage under this lock too: never twice.
            th.memory_storage  # noqa: B018
        th.recall("warm up", stores="all", record=False)
        if th.decision_storage.has_matchers(th.stores_for("all")):
            th.decisions.query("warm up", stores="all")

    def close(self) -> None:
        """Close the storage and the session store."""
        self._base.close()
        if "sessions" in self.__dict__:
            self.sessions.close()

    def describe(self) -> dict[str, Any]:
        """Settings for ``thatch daemon status``."""
        return attrs.asdict(self.settings)


class WarmUp:
    """The daemon's warm-up, which loads the model once while other users of it wait.

    The daemon listens before it warms up, so a request can arrive while the
    model loads; it waits for the warm-up rather than load the model a
    second time beside it (an embedder need not guard against two loads at
    once). Outside the daemon nothing is expected and nothing waits.
    """

    def __init__(self) -> None:
        self._done = threading.Event()
        self._expected = False
        self._thread: int | None = None

    @property
    def done(self) -> bool:
        """Whether the warm-up has ended (loaded, or failed and logged)."""
        return self._done.is_set()

    def expect(self) -> None:
        """Make model users wait from now on until :meth:`run` ends (call before listening)."""
        self._expected = True

    def run(self, work: Callable[[], None]) -> None:
        """Run ``work`` as the warm-up; users in other threads wait until it returns or raises."""
        self._expected = True
        self._thread = threading.get_ident()
        try:
            work()
        finally:
            self._thread = None
            self._done.set()

    def wait(self) -> None:
        """Return once the warm-up is over, or at once outside it or in its own thread."""
        if self._expected and threading.get_ident() != self._thread:
            self._done.wait()


class QueryMemo:
    """An embedder that remembers its last few query vectors.

    On each prompt the recall nudge and the decision-model nudge embed the
    same text; the second one costs nothing. ``before_use`` runs before
    every embedding (the daemon's runtime waits there for its warm-up).
    """

    def __init__(
        self, inner: Embedder, size: int = 32, before_use: Callable[[], None] = lambda: None
    ) -> None:
        self.inner = inner
        self._size = size
        self._before_use = before_use
        self._vectors: OrderedDict[str, npt.NDArray[np.float32]] = OrderedDict()
        self._lock = threading.Lock()

    @property
    def model_id(self) -> str:
        return self.inner.model_id

    @property
    def dim(self) -> int:
        return self.inner.dim

    def embed_query(self, text: str) -> npt.NDArray[np.float32]:
        with self._lock:
            vector = self._vectors.get(text)
            if vector is not None:
                self._vectors.move_to_end(text)
                return vector
        self._before_use()
        vector = self.inner.embed_query(text)
        vector.setflags(write=False)
        with self._lock:
            self._vectors[text] = vector
            while len(self._vectors) > self._size:
                self._vectors.popitem(last=False)
        return vector

    def embed_passages(self, texts: Sequence[str]) -> npt.NDArray[np.float32]:
        self._before_use()
        return self.inner.embed_passages(texts)

    def thresholds(self) -> Thresholds:
        return self.inner.thresholds()
