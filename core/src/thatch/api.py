"""The Python API: ``thatch.open()`` and the :class:`Thatch` it returns.

The CLI is a thin layer over this class, so everything the CLI does can be
done from Python::

    import thatch

    with thatch.open(home="/tmp/th") as th:
        th.remember("tabs", "The user indents with tabs", store="global")
        for hit in th.recall("indentation preference"):
            print(hit.memory.label, hit.score)
"""

from __future__ import annotations

import builtins
import os
import shlex
import threading
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from datetime import UTC, datetime
from functools import cached_property
from pathlib import Path
from types import TracebackType
from typing import TYPE_CHECKING, Any, TypeVar

from thatch.memory.duplicates import duplicate_pairs
from thatch.memory.hygiene import STALE_DAYS, hygiene_report
from thatch.memory.importing import ImportPlan, check_import, write_import
from thatch.memory.names import validate_label, validate_store
from thatch.memory.recall import RecallMode, recall
from thatch.memory.repo import branch_names, current_branch, repo_store
from thatch.memory.routing import StoreRouter
from thatch.memory.transfer import ImportLine, export_line
from thatch.memory.writer import MemoryInput, MemoryWriter
from thatch.plugin.config import Config, StoragePart, StoreRoute
from thatch.plugin.decision_storage import DecisionStorage
from thatch.plugin.embedder import Embedder, Thresholds
from thatch.plugin.errors import (
    ConfigError,
    InvalidInputError,
    NotFoundError,
    PluginMissingError,
)
from thatch.plugin.prediction_log import PredictionStorage
from thatch.plugin.records import (
    GLOBAL_STORE,
    DuplicatePair,
    HygieneReport,
    ImportResult,
    Memory,
    RecallHit,
    RememberResult,
    Scope,
    StoreInfo,
)
from thatch.plugin.storage import VERDICTS, MemoryStorage, Verdict
from thatch.plugins import PluginInfo, Plugins

if TYPE_CHECKING:
    from thatch.decisions.service import Decisions

#: ``stores`` argument of reads: None = the repository's store and global;
#: "all" = every store; or explicit names.
StoreChoice = str | Sequence[str] | None
ALL = "all"

_Part = TypeVar("_Part")


def open(
    home: str | os.PathLike[str] | None = None,
    *,
    cwd: str | os.PathLike[str] | None = None,
    environ: Mapping[str, str] | None = None,
) -> Thatch:
    """Open thatch for the user (or for the isolated folder ``home``).

    ``cwd`` decides the repository store and branch (default: the current
    directory). Nothing heavy happens here: storage opens and the model
    loads on first use.
    """
    from thatch.config import plugin_tables as plugin_parts

    config, plugins = plugin_parts.load(home, environ)
    return Thatch(config, plugins, Path(cwd or Path.cwd()))


class StorageParts:
    """The storage of one installation: each part opened through its hook on first use.

    Memories, the decision model and the prediction log may live in one
    backend or in three; a backend that keeps several parts may hand back one
    object for them, which is closed once. When ``[storage.stores]`` gives
    some stores' memories to other places, the memories are a
    :class:`~thatch.memory.routing.StoreRouter` over one storage per place.
    Safe to share between threads and between the views of one :class:`Thatch`.
    """

    def __init__(self, config: Config, plugins: Plugins) -> None:
        self._config = config
        self._plugins = plugins
        self._lock = threading.Lock()
        self._opened: dict[StoragePart, Any] = {}
        #: Store names a read found to exist. Listing the stores reads every
        #: memory (12 ms at 100k), too much for each recall that names one; a
        #: store emptied since then reads as empty rather than as unknown.
        self.seen_stores: set[str] = set()

    @property
    def memories(self) -> MemoryStorage:
        """The backend that keeps memories."""
        return self._open("memories", self._open_memories)

    @property
    def decisions(self) -> DecisionStorage:
        """The backend that keeps the decision model."""
        return self._open("decisions", self._plugins.decision_storage)

    @property
    def predictions(self) -> PredictionStorage:
        """The backend that keeps the prediction log."""
        return self._open("predictions", self._plugins.prediction_storage)

    def _open_memories(self, config: Config) -> MemoryStorage:
        """The memories' backend, or a router over each place a store is routed to."""
        names = config.memory_places()
        if len(names) == 1:
            return self._plugins.memory_storage(config)
        # The memories' own backend opens on this config, so a backend that
        # also keeps other parts hands back the object it shares with them.
        places = {names[0]: self._plugins.memory_storage(config)}
        for name in names[1:]:
            places[name] = self._open_place(config, name)
        return StoreRouter(places, config.memory_place_for_store)

    def _open_place(self, config: Config, place: str) -> MemoryStorage:
        """A routed place's memories, through its backend's plugin, on the route's settings."""
        routes = [route for route in config.store_routes if route.place == place]
        patterns = ", ".join(route.pattern for route in routes)
        where = f"config file {config.paths.config_file}: [storage.stores] sends {patterns}"
        route = routes[0]
        placed = config.memory_place_config(place)
        try:
            if set(route.settings) - {"db_path"}:
                placed = self._checked_settings(placed, route)
            return self._plugins.memory_storage(placed)
        except PluginMissingError as exc:
            raise PluginMissingError(
                f"{where} to backend '{route.backend}', but {exc}; "
                "or route the pattern to another backend"
            ) from None
        except ConfigError as exc:
            problem = str(exc).removeprefix(f"config file {config.paths.config_file}: ")
            raise ConfigError(f"{where} to {place}: {problem}") from None

    def _checked_settings(self, placed: Config, route: StoreRoute) -> Config:
        """``placed`` with its tables read again: the backend's own checks apply to a route's."""
        declared = self._plugins.config_tables()
        name = f"storage.{route.backend}"
        unknown = sorted(set(route.settings) - {"db_path"})
        if name not in declared and unknown:
            raise ConfigError(
                f"backend '{route.backend}' has no table [{name}], so {', '.join(unknown)} "
                "is no setting of it; a route may set db_path, and a backend's own keys"
            )
        return placed.with_tables(declared.values())

    def _open(self, part: StoragePart, opener: Callable[[Config], _Part]) -> _Part:
        found = self._opened.get(part)
        if found is not None:
            return found  # type: ignore[no-any-return]
        # Under the lock: two threads asking at once must not open the part twice.
        with self._lock:
            if part not in self._opened:
                self._opened[part] = opener(self._config)
            return self._opened[part]  # type: ignore[no-any-return]

    def integrity_problems(self) -> list[str]:
        """Every part's integrity problems (each part opened), named by part when apart."""
        memories = self.memories
        parts: dict[str, MemoryStorage | DecisionStorage | PredictionStorage] = (
            {f"memories in {name}": place for name, place in memories.places.items()}
            if isinstance(memories, StoreRouter)
            else {"memories": memories}
        )
        parts.update(decisions=self.decisions, predictions=self.predictions)
        owners: dict[int, list[str]] = {}
        for part, backend in parts.items():
            owners.setdefault(id(backend), []).append(part)
        shared = len(owners) == 1
        problems: list[str] = []
        for names in owners.values():
            backend = parts[names[0]]
            prefix = "" if shared else f"{' and '.join(names)}: "
            problems += [prefix + problem for problem in backend.integrity_problems()]
        if isinstance(memories, StoreRouter):
            problems += memories.routing_problems()
        return problems

    def close(self) -> None:
        """Close each distinct opened object once; a later use opens the parts again."""
        with self._lock:
            opened, self._opened = self._opened, {}
        # A router's places may be the very objects that keep the other parts.
        backends = [
            backend
            for part in opened.values()
            for backend in (part.places.values() if isinstance(part, StoreRouter) else [part])
        ]
        for backend in {id(backend): backend for backend in backends}.values():
            backend.close()


class Thatch:
    """Memories of one installation, seen from one working directory."""

    def __init__(
        self,
        config: Config,
        plugins: Plugins,
        cwd: Path,
        *,
        storage: StorageParts | None = None,
        embedder: Embedder | None = None,
    ) -> None:
        """``storage``: the parts of the object this one is a view of (see :meth:`view`).

        ``embedder``: one to use instead of the plugins' (the daemon's, which
        embeds a prompt once for recall and the decision model).
        """
        self.config = config
        self.plugins = plugins
        self.cwd = cwd
        #: The storage parts; a view shares its origin's.
        self.storage_parts = storage or StorageParts(config, plugins)
        self._is_view = storage is not None
        self._embedder = embedder

    # -- lifecycle ---------------------------------------------------------
    def __enter__(self) -> Thatch:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.close()

    def view(self, cwd: Path) -> Thatch:
        """The same installation seen from another folder: shares storage and model.

        Closing a view closes nothing; close the object it came from.
        """
        return Thatch(
            self.config, self.plugins, cwd, storage=self.storage_parts, embedder=self.embedder
        )

    def close(self) -> None:
        """Close the storage parts that were opened (each object once)."""
        if not self._is_view:
            self.storage_parts.close()

    # -- parts -------------------------------------------------------------
    @property
    def memory_storage(self) -> MemoryStorage:
        """The backend that keeps memories (opened on first use)."""
        return self.storage_parts.memories

    @property
    def decision_storage(self) -> DecisionStorage:
        """The backend that keeps the decision model (opened on first use)."""
        return self.storage_parts.decisions

    @property
    def prediction_storage(self) -> PredictionStorage:
        """The backend that keeps the prediction log (opened on first use)."""
        return self.storage_parts.predictions

    def integrity_problems(self) -> list[str]:
        """What the integrity check of every storage part finds; empty when all are sound."""
        return self.storage_parts.integrity_problems()

    @property
    def embedder(self) -> Embedder:
        """The embedder (its model loads on the first embedding)."""
        if self._embedder is None:
            self._embedder = self.plugins.embedder(self.config)
        return self._embedder

    @cached_property
    def decisions(self) -> Decisions:
        """The user decision model (``thatch predictions``)."""
        from thatch.decisions.service import Decisions

        return Decisions(self)

    @cached_property
    def repo_store(self) -> str | None:
        """The store of the git repository at ``cwd``, if it has an origin remote."""
        return repo_store(self.cwd)

    @cached_property
    def branch(self) -> str | None:
        """The git branch checked out at ``cwd``."""
        return current_branch(self.cwd)

    @property
    def default_store(self) -> str:
        """Where a memory goes when no store is named: the repository's, else global."""
        return self.repo_store or GLOBAL_STORE

    def thresholds(self) -> Thresholds:
        """The embedder's calibrated thresholds with the config file's overrides."""
        calibrated = self.embedder.thresholds()
        config = self.config
        overrides = (config.recall_threshold, config.dedup_threshold, config.prediction_threshold)
        return Thresholds(
            recall=calibrated.recall if overrides[0] is None else overrides[0],
            dedup=calibrated.dedup if overrides[1] is None else overrides[1],
            prediction=calibrated.prediction if overrides[2] is None else overrides[2],
            source=calibrated.source if overrides == (None, None, None) else "config",
        )

    def stores_for(self, stores: StoreChoice) -> tuple[str, ...]:
        """Resolve a store choice to names: None → repository + global; 'all' → every store.

        A named store must exist (hold a memory or a prediction, or be global
        or this repository's): reading a mistyped one would find nothing and
        look like an empty result.
        """
        if stores is None:
            return tuple(dict.fromkeys(s for s in (self.repo_store, GLOBAL_STORE) if s))
        if stores == ALL:
            # Not list_stores alone: a store may hold predictions and no memory.
            return tuple(self.known_stores())
        names = [stores] if isinstance(stores, str) else list(stores)
        return tuple(self._existing_store(name) for name in names)

    def known_stores(self) -> list[str]:
        """Names a read may ask for: global, this repository's, and every store holding data."""
        names = {GLOBAL_STORE, *(info.name for info in self.memory_storage.list_stores())}
        names.update(p.store for p in self.decision_storage.list_predictions())
        if self.repo_store:
            names.add(self.repo_store)
        return sorted(names)

    def stores_listed(self) -> str:
        """The known stores in words, for an error about a store name."""
        return f"the stores are: {', '.join(self.known_stores())} (or 'all')"

    def _existing_store(self, name: str) -> str:
        try:
            validate_store(name)
        except InvalidInputError as exc:
            raise InvalidInputError(f"{exc}; {self.stores_listed()}") from None
        seen = self.storage_parts.seen_stores
        if name in (GLOBAL_STORE, self.repo_store) or name in seen:
            return name
        if name in self.known_stores():
            seen.add(name)
            return name
        raise NotFoundError(f"no store named {name!r}; {self.stores_listed()}")

    # -- writes ------------------------------------------------------------
    @property
    def _writer(self) -> MemoryWriter:
        return MemoryWriter(self.memory_storage, self.embedder, lambda: self.thresholds().dedup)

    def remember(
        self,
        label: str,
        content: str,
        *,
        store: str | None = None,
        branch: str | None = None,
        overwrite: bool = False,
    ) -> RememberResult:
        """Save a fact under ``label``.

        A label that already holds other content is refused (InvalidInputError
        quoting it) unless ``overwrite``: an agent must not clobber a memory
        by reusing its label by accident.
        """
        item = MemoryInput(
            label=label, content=content, store=store or self.default_store, branch=branch
        )
        return self._writer.remember(item, overwrite=overwrite)

    def remember_many(
        self,
        items: Iterable[MemoryInput],
        *,
        overwrite: bool = False,
        on_saved: Callable[[RememberResult], None] | None = None,
    ) -> list[RememberResult]:
        """Save many memories in batched transactions; see :meth:`MemoryWriter.remember_many`."""
        return self._writer.remember_many(items, overwrite=overwrite, on_saved=on_saved)

    def check_import(self, lines: Iterable[ImportLine], *, overwrite: bool = False) -> ImportPlan:
        """Check every line of an import against the file and the storage; writes nothing.

        Raises :class:`InvalidInputError` naming the file and lines: see
        :func:`thatch.memory.importing.check_import`.
        """
        return check_import(self.memory_storage, lines, overwrite=overwrite)

    def import_lines(
        self,
        lines: Iterable[ImportLine],
        *,
        overwrite: bool = False,
        on_saved: Callable[[RememberResult], None] | None = None,
        plan: ImportPlan | None = None,
    ) -> ImportResult:
        """Import parsed lines (see :mod:`thatch.memory.transfer`): all checked, then written.

        Like :meth:`remember`, a line whose label holds other content is
        refused unless ``overwrite``, and then nothing is written; importing
        the same lines twice adds nothing. ``lines`` is read twice (an
        iterator is first made a list); ``plan``, what :meth:`check_import`
        said of these very lines, saves the first reading.
        """
        if iter(lines) is lines:
            lines = builtins.list(lines)
        if plan is None:
            plan = self.check_import(lines, overwrite=overwrite)
        return write_import(
            self._writer,
            self.memory_storage,
            lines,
            plan,
            overwrite=overwrite,
            on_saved=on_saved,
        )

    def forget(self, label: str, store: str | None = None) -> Memory:
        """Delete a memory for good; returns what was deleted."""
        memory = self.show(label, store)
        self.memory_storage.delete_memory(memory.store, memory.label)
        return memory

    def archive(self, label: str, store: str | None = None) -> Memory:
        """Hide a memory from recall without deleting it."""
        return self._set_archived(label, store, archived=True)

    def unarchive(self, label: str, store: str | None = None) -> Memory:
        """Bring an archived memory back into recall."""
        return self._set_archived(label, store, archived=False)

    def _set_archived(self, label: str, store: str | None, *, archived: bool) -> Memory:
        memory = self.show(label, store)
        updated = self.memory_storage.set_archived(memory.store, memory.label, archived)
        if updated is None:
            raise NotFoundError(f"memory {label!r} was deleted meanwhile in store {memory.store}")
        return updated

    def stale_vectors(self) -> list[tuple[str, int, str]]:
        """(kind, id, text) of every memory, matcher and prediction of another model."""
        model = self.embedder.model_id
        memories, decisions = self.memory_storage, self.decision_storage
        return [
            *(
                ("memory", m.id, m.content)
                for m in memories.list_memories(include_archived=True)
                if m.model != model
            ),
            *(
                ("matcher", m.id, m.description)
                for m in decisions.list_matchers()
                if m.model != model
            ),
            *(
                ("prediction", p.id, p.statement)
                for p in decisions.list_predictions()
                if p.model != model
            ),
        ]

    def reembed(self, *, progress: Callable[[int], None] | None = None) -> int:
        """Re-embed everything whose vector is of another model; returns how many."""
        model = self.embedder.model_id
        stale = self.stale_vectors()
        batch = 64
        for start in range(0, len(stale), batch):
            chunk = stale[start : start + batch]
            vectors = self.embedder.embed_passages([text for _, _, text in chunk])
            for kind in ("memory", "matcher", "prediction"):
                rows = [
                    (row_id, v)
                    for (k, row_id, _), v in zip(chunk, vectors, strict=True)
                    if k == kind
                ]
                if not rows:
                    continue
                if kind == "memory":
                    self.memory_storage.set_embeddings(model, rows)
                else:
                    self.decision_storage.set_decision_embeddings(kind, model, rows)  # type: ignore[arg-type]
            if progress is not None:
                progress(len(chunk))
        return len(stale)

    def mark_reviewed(
        self, first: str, second: str, store: str | None = None, verdict: Verdict = "different"
    ) -> str:
        """Record a person's verdict on two memories of one store; returns the store.

        'different' (two facts that both stay) stops the pair being reported;
        'same' (one fact twice) keeps it listed as a confirmed duplicate until
        one of them is merged away.
        """
        if verdict not in VERDICTS:
            raise InvalidInputError(f"verdict {verdict!r} is not one of: {', '.join(VERDICTS)}")
        one, other = self.show(first, store), self.show(second, store)
        if one.store != other.store:
            # Without a store, labels are looked up in this repository's store
            # first: the other store is the one that may hold both.
            both = other.store if one.store == self.repo_store else one.store
            words = ["thatch", "duplicates", both, "--mark-reviewed", first, second]
            command = shlex.join(words + (["--verdict", verdict] if verdict == "same" else []))
            raise InvalidInputError(
                f"{first!r} is in store {one.store} and {second!r} in {other.store}; "
                f"duplicate pairs are within one store: name the store of both, e.g. {command}"
            )
        if one.id == other.id:
            raise InvalidInputError(
                f"{first!r} and {second!r} are the same memory; name two different labels"
            )
        self.memory_storage.mark_reviewed(one.id, other.id, verdict)
        return one.store

    def review_verdicts(self, stores: StoreChoice = ALL) -> dict[tuple[int, int], Verdict]:
        """The verdict of each reviewed pair, keyed by (smaller id, larger id)."""
        return {
            pair: verdict
            for store in self.stores_for(stores)
            for pair, verdict in self.memory_storage.review_verdicts(store).items()
        }

    # -- reads -------------------------------------------------------------
    def recall(
        self,
        query: str,
        *,
        stores: StoreChoice = None,
        limit: int = 5,
        mode: RecallMode = "hybrid",
        min_cosine: float | None = None,
        record: bool = True,
        include_archived: bool = False,
        on_branch: str | None = None,
    ) -> list[RecallHit]:
        """Memories for ``query`` by meaning and by words, best first.

        ``min_cosine`` drops hits less similar in meaning than that; the
        calibrated threshold for automatic recall is ``thresholds().recall``.
        ``include_archived`` also searches the archived memories.
        ``on_branch`` searches as if on that git branch instead of the folder's.
        ``record`` counts the relevant hits (over ``thresholds().recall``,
        unarchived) as recalled; weak matches are not counted.
        """
        if limit < 1:
            raise InvalidInputError(f"limit {limit} is below 1; ask for at least one result")
        storage = self.memory_storage  # opened first, so a missing backend is reported first
        scope = Scope(stores=self.stores_for(stores), branch=on_branch or self.branch)
        return recall(
            storage,
            self.embedder,
            query,
            scope,
            limit=limit,
            mode=mode,
            min_cosine=min_cosine,
            record_threshold=self.thresholds().recall if record else None,
            include_archived=include_archived,
        )

    def list(
        self, stores: StoreChoice = None, *, include_archived: bool = False
    ) -> builtins.list[Memory]:
        """Memories of the chosen stores, by store and label."""
        return self.memory_storage.list_memories(
            self.stores_for(stores), include_archived=include_archived
        )

    def show(self, label: str, store: str | None = None) -> Memory:
        """One memory by label: in ``store``, else the repository's store, else global."""
        validate_label(label)
        candidates = [validate_store(store)] if store else self.stores_for(None)
        for name in candidates:
            memory = self.memory_storage.get_memory(name, label)
            if memory is not None:
                return memory
        raise NotFoundError(
            f"no memory labelled {label!r} in {' or '.join(candidates)}; "
            "see the labels with 'thatch list all'"
        )

    def stores(self) -> builtins.list[StoreInfo]:
        """Every store with its memory counts."""
        return self.memory_storage.list_stores()

    def duplicates(self, stores: StoreChoice = ALL) -> builtins.list[DuplicatePair]:
        """Unreviewed near-duplicate pairs and confirmed duplicates, closest first."""
        threshold = self.thresholds().dedup
        model = self.embedder.model_id
        pairs = [
            pair
            for store in self.stores_for(stores)
            for pair in duplicate_pairs(self.memory_storage, store, model, threshold)
        ]
        return sorted(pairs, key=lambda pair: -pair.cosine)

    def hygiene(
        self,
        stores: StoreChoice = ALL,
        *,
        now: datetime | None = None,
        stale_days: int = STALE_DAYS,
    ) -> HygieneReport:
        """Stale, orphaned-branch and unreviewed duplicate memories."""
        return hygiene_report(
            self.list(stores),
            self.duplicates(stores),
            now=now or datetime.now(UTC),
            repo_store=self.repo_store,
            branches=branch_names(self.cwd),
            stale_days=stale_days,
        )

    def export(self, stores: StoreChoice = ALL) -> Iterator[str]:
        """Every memory of the chosen stores as JSON lines, archived ones included."""
        for memory in self.list(stores, include_archived=True):
            yield export_line(memory)

    def describe_plugins(self) -> builtins.list[PluginInfo]:
        """The loaded plugins and the hooks each implements."""
        return self.plugins.describe()


__all__ = ["ALL", "Thatch", "open"]
