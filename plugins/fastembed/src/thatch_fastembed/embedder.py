"""FastEmbedder: thatch's default :class:`thatch.plugin.embedder.Embedder`, on fastembed.

Three sources, chosen from the config:

- ``config.model_path`` set: the ONNX model and tokenizer.json in that folder,
  run as the fastembed model named ``config.model``;
- ``config.model`` is the default name: the installed pack (all-MiniLM-L6-v2,
  int8 ONNX), verified by size and sha256;
- any other name: that fastembed model, downloaded into
  ``<cache dir>/fastembed`` on first use.

Nothing is imported or loaded until the first call that needs the model (for
the pack, ``model_id`` and ``dim`` are constants; for a folder, ``model_id``
hashes the ONNX file, which a stamp makes cheap after the first time).
"""

from __future__ import annotations

import contextlib
import functools
import importlib.resources
import json
import logging
import os
import threading
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, TypeGuard

import numpy as np
import numpy.typing as npt
from thatch.plugin import (
    DEFAULT_PREDICTION_THRESHOLD,
    ConfigError,
    PluginMissingError,
    ThatchError,
    Thresholds,
    release_free_memory,
)

from thatch_fastembed.int8_products import ensure_int8_model
from thatch_fastembed.model_pack import (
    DEFAULT_MODEL_ID,
    DEFAULT_MODEL_NAME,
    PACK_DIM,
    PACK_SHA256,
    ModelFiles,
    ModelPackError,
    assemble_model_dir,
    file_sha256,
    find_folder_model,
    find_pack,
    model_id_for,
    verify_pack,
)
from thatch_fastembed.settings import FASTEMBED_TABLE, QueryProducts

if TYPE_CHECKING:
    import onnxruntime as ort
    from fastembed import TextEmbedding
    from thatch.plugin import Config

log = logging.getLogger(__name__)

Source = Literal["pack", "folder", "hub"]

#: onnxruntime threads of the session that embeds queries (see FastEmbedder.load).
QUERY_THREADS = 1
#: onnxruntime settings of that session: its workers sleep once a run ends.
QUERY_SESSION_CONFIG = {"session.intra_op.allow_spinning": "0"}
#: onnxruntime graph rewrites the query session leaves out. Its fused
#: SkipLayerNormalization kernel takes about 100 µs on a prompt where the Add
#: and LayerNormalization it replaces take about 27 together. The vectors
#: move only by float rounding (cosine >= 0.995 to the fused session's, the
#: same recall and firing; docs/benchmarks.md, "The query session since
#: 2026-12-07").
QUERY_DISABLED_OPTIMIZERS: tuple[str, ...] = ("SkipLayerNormFusion",)
#: Word pieces of a query that are embedded; the rest is cut off. The model was
#: trained on sequences of 128, and embedding costs grow faster than the length:
#: for a prompt of 330, cut at the model's limit of 256 instead, the daemon spent
#: 2.2 times the CPU on a flush (see docs/benchmarks.md, "Runtime"). A prompt
#: says what it is about early.
QUERY_MAX_TOKENS = 128
#: Texts per ONNX run in :meth:`FastEmbedder.embed_passages`.
BATCH_SIZE = 64
#: What :meth:`FastEmbedder.thresholds` returns for a model thresholds.json does not list.
DEFAULT_THRESHOLDS = Thresholds(
    recall=0.3, dedup=0.9, source="default (uncalibrated for this model)"
)
THRESHOLDS_FILE = "thresholds.json"
_HUB_FIX = (
    "set THATCH_MODEL_PATH to a local folder, or unset THATCH_MODEL to use the built-in default"
)


@functools.cache
def load_thresholds() -> Mapping[str, Thresholds]:
    """The calibrated thresholds shipped in thresholds.json, by model id."""
    resource = importlib.resources.files(__package__).joinpath(THRESHOLDS_FILE)
    data = json.loads(resource.read_text(encoding="utf-8"))
    if not isinstance(data, dict):
        raise ValueError(f"{resource}: expected an object of model id -> thresholds")
    loaded: dict[str, Thresholds] = {}
    for model_id, entry in data.items():
        values = entry if isinstance(entry, dict) else {}
        recall, dedup, source = values.get("recall"), values.get("dedup"), values.get("source")
        if not (_is_cosine(recall) and _is_cosine(dedup) and isinstance(source, str)):
            raise ValueError(
                f"{resource}: entry {model_id!r} must be "
                '{"recall": <cosine>, "dedup": <cosine>, "source": "<where from>"}'
            )
        prediction = values.get("prediction", DEFAULT_PREDICTION_THRESHOLD)
        if not _is_cosine(prediction):
            raise ValueError(f"{resource}: entry {model_id!r} has a bad prediction threshold")
        loaded[model_id] = Thresholds(
            recall=float(recall),
            dedup=float(dedup),
            prediction=float(prediction),
            source=source,
        )
    return loaded


def _is_cosine(value: object) -> TypeGuard[float]:
    return isinstance(value, int | float) and not isinstance(value, bool) and -1 <= value <= 1


@contextlib.contextmanager
def _environ(values: dict[str, str]) -> Iterator[None]:
    """``values`` set in the environment for the duration, the previous ones put back after.

    Only around a model load: set for good, they would reach every process
    the caller starts later (a Python API user's, a test run's).
    """
    saved = {name: os.environ.get(name) for name in values}
    os.environ.update(values)
    try:
        yield
    finally:
        for name, value in saved.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value


#: A local load must never reach for the network.
_HUB_OFFLINE = {"HF_HUB_OFFLINE": "1"}


def _library_caches(cache_dir: Path) -> dict[str, str]:
    """The variables that point the libraries' own caches into ``cache_dir``.

    onnxruntime keeps a device id under ``$XDG_CACHE_HOME`` (else
    ``~/.cache``) and huggingface_hub its download caches under ``$HF_HOME``
    (read when it is imported, during the load): with THATCH_HOME set,
    nothing thatch runs may write outside it.
    """
    return {"XDG_CACHE_HOME": str(cache_dir), "HF_HOME": str(cache_dir / "huggingface")}


def _import_text_embedding() -> type[TextEmbedding]:
    try:
        from fastembed import TextEmbedding
    except ImportError as exc:
        raise PluginMissingError(
            f"the fastembed embedder cannot run: {exc}; reinstall it with "
            "'pip install --force-reinstall thatch-fastembed'"
        ) from exc
    return TextEmbedding


def _unit_rows(matrix: Any) -> npt.NDArray[np.float32]:
    """float32 rows scaled to length 1 (fastembed normalizes already; this is a guard)."""
    array = np.asarray(matrix, dtype=np.float32)
    norms = np.linalg.norm(array, axis=-1, keepdims=True)
    rows: npt.NDArray[np.float32] = np.divide(
        array, np.maximum(norms, np.float32(1e-12)), dtype=np.float32
    )
    return rows


class FastEmbedder:
    """Lazily loaded fastembed model; see the module docstring for the sources.

    :param model: the model name (``config.model``).
    :param model_path: a local model folder (``config.model_path``), or None.
    :param cache_dir: thatch's cache folder; assembled models, hash stamps and
        fastembed downloads go under it.
    :param threads: onnxruntime threads; None lets onnxruntime choose.
    :param confine_caches: onnxruntime's and huggingface_hub's own caches go
        under ``cache_dir`` too (a THATCH_HOME is in use).
    :param query_products: ``"int8"``: queries of a local model run its int8
        weight products in integers (:mod:`thatch_fastembed.int8_products`),
        where the graph allows; ``"float32"``: as passages are.
    """

    def __init__(
        self,
        model: str = DEFAULT_MODEL_NAME,
        *,
        model_path: str | os.PathLike[str] | None = None,
        cache_dir: str | os.PathLike[str],
        threads: int | None = None,
        confine_caches: bool = False,
        query_products: QueryProducts = "int8",
    ) -> None:
        self.model_name = model
        self.query_products = query_products
        #: The model file the query session runs, once it is loaded.
        self.query_model_file: Path | None = None
        self.confine_caches = confine_caches
        self.model_path = Path(model_path).expanduser() if model_path is not None else None
        self.cache_dir = Path(cache_dir)
        self.threads = threads
        self.source: Source
        if self.model_path is not None:
            self.source = "folder"
        elif model.casefold() == DEFAULT_MODEL_NAME.casefold():
            self.source = "pack"
        else:
            self.source = "hub"
        self._lock = threading.RLock()
        self._model: TextEmbedding | None = None
        self._query_model: TextEmbedding | None = None
        self._model_id: str | None = {"pack": DEFAULT_MODEL_ID, "hub": model}.get(self.source)
        self._dim: int | None = PACK_DIM if self.source == "pack" else None
        self._files: ModelFiles | None = None
        self._sha256: str | None = None

    @classmethod
    def from_config(cls, config: Config) -> FastEmbedder:
        """The embedder ``config`` asks for (nothing is loaded yet)."""
        return cls(
            config.model,
            model_path=config.model_path,
            cache_dir=config.paths.cache_dir,
            confine_caches=config.paths.home is not None,
            # The table's defaults where the config was read without plugin tables.
            query_products=(config.tables.get(FASTEMBED_TABLE.name) or FASTEMBED_TABLE.defaults())[
                "query_products"
            ],
        )

    def __repr__(self) -> str:
        where = f", model_path={str(self.model_path)!r}" if self.model_path else ""
        return (
            f"FastEmbedder(model={self.model_name!r}{where}, source={self.source!r}, "
            f"loaded={self.loaded})"
        )

    # ------------------------------------------------------------------ paths

    @property
    def models_dir(self) -> Path:
        """Where assembled model folders go."""
        return self.cache_dir / "models"

    @property
    def stamp_dir(self) -> Path:
        """Where the sha256 stamps of model files go."""
        return self.models_dir / "stamps"

    @property
    def fastembed_cache_dir(self) -> Path:
        """fastembed's own cache, for models it downloads."""
        return self.cache_dir / "fastembed"

    # ------------------------------------------------------------------ identity

    @property
    def model_id(self) -> str:
        """Stable id of the weights: ``name@sha12`` for local files, the name for hub models."""
        if self._model_id is None:
            with self._lock:
                if self._model_id is None:
                    _files, sha = self._folder_files()
                    self._model_id = model_id_for(self.model_name, sha)
        return self._model_id

    @property
    def dim(self) -> int:
        """Vector length; a constant for the pack, fastembed's listing for other models."""
        if self._dim is None:
            with self._lock:
                if self._dim is None:
                    self._dim = int(self._description()["dim"])
        return self._dim

    @property
    def loaded(self) -> bool:
        """Whether the model is in memory (for passages or for queries)."""
        return self._model is not None or self._query_model is not None

    def thresholds(self) -> Thresholds:
        """The calibrated thresholds for this model id, else uncalibrated defaults."""
        return load_thresholds().get(self.model_id, DEFAULT_THRESHOLDS)

    # ------------------------------------------------------------------ embedding

    def embed_query(self, text: str) -> npt.NDArray[np.float32]:
        """One search query as a unit vector of shape ``(dim,)``."""
        model = self.load(for_queries=True)
        vector = next(iter(model.query_embed(text)))
        return self._checked(_unit_rows(vector))

    def embed_passages(self, texts: Sequence[str]) -> npt.NDArray[np.float32]:
        """Texts to store, as unit rows of a ``(len(texts), dim)`` matrix."""
        if isinstance(texts, str):
            raise TypeError("embed_passages takes a sequence of texts; wrap one text in a list")
        texts = list(texts)
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        model = self.load()
        rows = list(model.passage_embed(texts, batch_size=BATCH_SIZE))
        return self._checked(_unit_rows(np.stack(rows)))

    def _checked(self, array: npt.NDArray[np.float32]) -> npt.NDArray[np.float32]:
        if array.shape[-1] != self.dim:
            raise ConfigError(
                f"the model loaded as {self.model_name!r} makes vectors of length "
                f"{array.shape[-1]}, but that model's vectors have length {self.dim}; set "
                "THATCH_MODEL to the name of the model the folder really holds"
            )
        return array

    # ------------------------------------------------------------------ loading

    def load(self, *, for_queries: bool = False) -> TextEmbedding:
        """Load the model now (the embed calls do this on first use); returns it.

        Queries get their own session whose worker threads sleep as soon as a
        run ends. By default onnxruntime's workers keep spinning after each
        run, taking a core from the vector search that follows: measured on 2
        cores, embedding a query and searching 100k vectors took 25 ms with the
        shared session and 13 ms with a single-threaded one. With the int8
        products one thread also runs a query faster than two whose workers
        sleep (docs/benchmarks.md, "The query session since 2026-12-07"): a
        run is too short for waking a second worker to pay. A query is cut
        to :data:`QUERY_MAX_TOKENS` word pieces.
        """
        if for_queries:
            if self._query_model is None:
                with self._lock:
                    if self._query_model is None:
                        model = self._load(threads=QUERY_THREADS)
                        self.query_model_file = _query_session(model, self._int8_twin())
                        self._query_model = model
                        # Building a session takes ~200 MB that onnxruntime
                        # frees at once but glibc would keep in the daemon.
                        release_free_memory()
            return self._query_model
        if self._model is None:
            with self._lock:
                if self._model is None:
                    self._model = self._load(threads=self.threads)
                    release_free_memory()
        return self._model

    def _load(self, threads: int | None) -> TextEmbedding:
        if self.source == "pack":
            files = find_pack()
            verify_pack(files, self.stamp_dir)
            folder = assemble_model_dir(
                files,
                models_dir=self.models_dir,
                model_name=DEFAULT_MODEL_NAME,
                sha256=DEFAULT_MODEL_ID.rsplit("@", 1)[1],
            )
            try:
                return self._load_local(folder, threads)
            except ThatchError:
                raise
            except Exception as exc:
                raise ModelPackError(
                    f"the default embedding model in {folder} failed to load ({exc}); "
                    "reinstall thatch-fastembed, or set THATCH_MODEL_PATH to a local model folder"
                ) from exc
        if self.source == "folder":
            files, sha = self._folder_files()
            description = self._description()
            folder = assemble_model_dir(
                files,
                models_dir=self.models_dir,
                model_name=self.model_name,
                sha256=sha,
                model_file=str(description["model_file"]),
            )
            try:
                return self._load_local(folder, threads)
            except ThatchError:
                raise
            except Exception as exc:
                raise ConfigError(
                    f"the model in THATCH_MODEL_PATH folder {self.model_path} failed to load as "
                    f"{self.model_name!r} ({exc}); check that the folder holds that model's "
                    "ONNX export and tokenizer.json, or unset THATCH_MODEL_PATH to use the "
                    "built-in default"
                ) from exc
        return self._load_hub(threads)

    def _int8_twin(self) -> Path | None:
        """The local model file with int8 products for queries, if asked for and possible."""
        if self.query_products != "int8" or self.source == "hub":
            return None  # a hub model's file is fastembed's to find
        if self.source == "pack":
            source, sha = find_pack().onnx, PACK_SHA256
        else:
            files, sha = self._folder_files()
            source = files.onnx
        return ensure_int8_model(source, sha, self.models_dir)

    def _caches(self) -> dict[str, str]:
        """What to set while fastembed loads: the library caches, under THATCH_HOME only."""
        return _library_caches(self.cache_dir) if self.confine_caches else {}

    def _load_local(self, folder: Path, threads: int | None) -> TextEmbedding:
        with _environ({**self._caches(), **_HUB_OFFLINE}):
            text_embedding = _import_text_embedding()
            return text_embedding(
                self.model_name if self.source == "folder" else DEFAULT_MODEL_NAME,
                specific_model_path=str(folder),
                cache_dir=str(self.fastembed_cache_dir),
                threads=threads,
                local_files_only=True,
                enable_cpu_mem_arena=False,
            )

    def _load_hub(self, threads: int | None) -> TextEmbedding:
        self._description()  # a clear error for an unknown name, before any download
        try:
            with _environ(self._caches()):
                return _import_text_embedding()(
                    self.model_name,
                    cache_dir=str(self.fastembed_cache_dir),
                    threads=threads,
                    enable_cpu_mem_arena=False,
                )
        except Exception as exc:
            raise ConfigError(
                f"embedding model {self.model_name!r} could not be downloaded or loaded "
                f"({exc}); {_HUB_FIX}"
            ) from exc

    def _folder_files(self) -> tuple[ModelFiles, str]:
        """The folder's files and the sha256 of its ONNX file (folder source only)."""
        assert self.model_path is not None
        with self._lock:
            if self._files is None or self._sha256 is None:
                files = find_folder_model(self.model_path)
                self._sha256 = file_sha256(files.onnx, self.stamp_dir)
                self._files = files
            return self._files, self._sha256

    def _description(self) -> dict[str, Any]:
        """fastembed's listing entry for this model name (imports fastembed, loads nothing)."""
        with _environ(self._caches()):
            text_embedding = _import_text_embedding()
        wanted = self.model_name.casefold()
        for entry in text_embedding.list_supported_models():
            if str(entry.get("model", "")).casefold() == wanted:
                return entry
        if self.source == "folder":
            raise ConfigError(
                f"embedding model {self.model_name!r} (THATCH_MODEL or [embedder] model) is not "
                f"one fastembed knows, so the folder {self.model_path} cannot be loaded as it; "
                "set THATCH_MODEL to the name of the model the folder holds (a name fastembed "
                "supports), or unset THATCH_MODEL_PATH to use the built-in default"
            )
        raise ConfigError(
            f"embedding model {self.model_name!r} (THATCH_MODEL or [embedder] model) is not "
            f"one fastembed knows; {_HUB_FIX}"
        )


def _query_session(model: TextEmbedding, twin: Path | None) -> Path | None:
    """Fit ``model`` for queries: its session's settings, its cut, the rewrites it leaves out.

    The settings are :data:`QUERY_SESSION_CONFIG`, the cut
    :data:`QUERY_MAX_TOKENS`, the rewrites :data:`QUERY_DISABLED_OPTIMIZERS`.

    fastembed offers no way to pass session options, so the session it made
    is replaced by one on the same providers, and on ``twin`` (the model with
    int8 products) when there is one, else on the same file. If fastembed's
    internals ever change shape, what cannot be reached is left as it was:
    slower by a few milliseconds, never wrong. Returns the file the session
    runs (None when it could not be told).
    """
    import onnxruntime as ort

    inner = getattr(model, "model", None)
    tokenizer = getattr(inner, "tokenizer", None)
    truncation = getattr(tokenizer, "truncation", None)
    if (
        tokenizer is not None
        and isinstance(truncation, dict)
        and truncation.get("max_length", 0) > QUERY_MAX_TOKENS
    ):
        # The query model has a tokenizer of its own: passages keep the model's limit.
        tokenizer.enable_truncation(
            max_length=QUERY_MAX_TOKENS, direction=truncation.get("direction", "right")
        )
    session = getattr(inner, "model", None)
    path = getattr(session, "_model_path", None)
    if inner is None or not isinstance(session, ort.InferenceSession) or not path:
        return None
    providers = session.get_providers()
    if twin is not None:
        try:
            inner.model = open_query_session(twin, providers)
            return twin
        except Exception as exc:  # a damaged twin: the model's own file still serves
            log.warning("embedding queries in float32: %s failed to load (%s)", twin, exc)
            with contextlib.suppress(OSError):
                twin.unlink()  # the next load builds it again
    inner.model = open_query_session(Path(path), providers)
    return Path(path)


def query_session_options() -> ort.SessionOptions:
    """The query session's options: :data:`QUERY_THREADS`, :data:`QUERY_SESSION_CONFIG`."""
    import onnxruntime as ort

    options = ort.SessionOptions()
    options.intra_op_num_threads = QUERY_THREADS
    options.inter_op_num_threads = 1
    for key, value in QUERY_SESSION_CONFIG.items():
        options.add_session_config_entry(key, value)
    return options


def open_query_session(
    path: Path, providers: Sequence[str], options: ort.SessionOptions | None = None
) -> ort.InferenceSession:
    """An onnxruntime session on ``path`` as queries run it (``options``: tests profile it)."""
    import onnxruntime as ort

    return ort.InferenceSession(
        str(path),
        options if options is not None else query_session_options(),
        providers=list(providers),
        disabled_optimizers=list(QUERY_DISABLED_OPTIMIZERS),
    )
