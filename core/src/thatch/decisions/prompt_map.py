"""The learnt firing maps: where a prompt's and a matcher's vectors are moved before they meet.

A general sentence model puts "what's the name of the logging library we use"
as near *Choosing a logging library* as "set up logging for the worker", and
a coding prompt about a recipe table near *when suggesting weeknight
dinners*. Each model gets two matrices learnt from labelled prompts
(bench/firing_map.py): ``A`` for the prompt's vector ``v`` and ``B`` for a
matcher's vector ``m``, and a matcher fires on

    cosine(normalize(v + A v), normalize(m + B m))

against the firing threshold, as the plain cosine did before. They are
trained so that a prompt lands near the situation it is in and below the
threshold of every situation when it is in none.

What is stored does not change: matchers keep the model's own vectors, so
de-duplication and ``thatch reembed`` are as before, and the storage still
searches them by cosine. It is asked with ``normalize((I + B)^T v')`` (``v'``
the moved prompt), whose cosine to ``m`` is the mapped cosine up to the
length of ``m + B m``; the nearest matchers it returns are then scored
exactly (:class:`MovedMatchers`). The lengths differ by a few
percent, so the exact best matchers are among the storage's 32 nearest:
docs/benchmarks.md, "A learnt prompt map", compares the two on three sets.

The matrices ship in the prompt_maps folder beside this module, one ``.npz``
file a model (float16), listed by model id in its index.json. A model with
no maps fires on the plain cosine of its own vectors.
"""

from __future__ import annotations

import io
import json
from collections.abc import Callable, Mapping
from functools import cache
from importlib import resources

import attrs
import numpy as np
import numpy.typing as npt

#: The folder of the shipped matrices, beside this module.
FOLDER = "prompt_maps"
#: Its index: model id -> {"file": ..., "source": ...}.
INDEX_FILE = "index.json"

Vector = npt.NDArray[np.float32]


def _unit(vector: Vector, fallback: Vector) -> Vector:
    norm = float(np.linalg.norm(vector))
    # Only a map that sends this vector to 0 gets a zero here: keep what came in.
    return fallback if not norm else (vector / norm).astype(np.float32)


def _square(matrix: Vector, name: str) -> None:
    rows, columns = matrix.shape
    if rows != columns:
        raise ValueError(f"the {name} map is square; this one is {rows} x {columns}")


# eq=False: the matrices are arrays, which have no single truth value to compare or hash by.
@attrs.frozen(eq=False)
class FiringMaps:
    """One model's learnt maps (see the module docstring)."""

    #: ``A`` of ``normalize(v + A v)``, for the prompt.
    query: Vector
    #: ``B`` of ``normalize(m + B m)``, for each matcher; None leaves matchers as stored.
    passage: Vector | None = None

    def __attrs_post_init__(self) -> None:
        _square(self.query, "prompt")
        if self.passage is not None:
            _square(self.passage, "matcher")
            if self.passage.shape != self.query.shape:
                raise ValueError("the prompt and matcher maps must be of one size")

    def prompt(self, vector: Vector) -> Vector:
        """The prompt's vector moved by ``A``, unit length again."""
        return _unit(vector + self.query @ vector, vector)

    def search(self, prompt: Vector) -> Vector:
        """What the storage is asked with for the moved ``prompt``: its cosine to a stored
        matcher vector ranks as the mapped cosine does, up to the length of ``m + B m``."""
        if self.passage is None:
            return prompt
        return _unit(prompt + self.passage.T @ prompt, prompt)

    def matcher(self, stored: Vector) -> Vector:
        """A stored matcher vector moved by ``B``, unit length again (as it is without ``B``)."""
        if self.passage is None:
            return stored
        return _unit(stored + self.passage @ stored, stored)


class MovedMatchers:
    """The matchers' stored vectors moved by the matcher map, kept by id for one storage.

    The storage finds the nearest matchers by a cosine that is not yet the
    mapped one (see the module docstring); each is then scored from its own
    vector moved by ``B``. A matcher's vector never changes under one model,
    so the moved vector is kept: a prompt reads back and moves only the
    matchers it meets for the first time. A kept entry is used only while its
    stored vector still gives the storage's cosine for this search, so a
    matcher deleted and its id given to another is read again.

    Matchers are moved one matrix-vector product each, never in one matrix
    product: that wakes the BLAS library's threads, which then spin on the
    other core for a while after every prompt (the daemon's CPU per prompt
    went from 12 to 73 ms in bench/hook_latency.py).
    """

    #: Kept entries; past this many they are dropped and read again as met.
    LIMIT = 8192
    #: How far a kept vector's cosine to the search may be from the storage's.
    TOLERANCE = 1e-5

    def __init__(self, maps: FiringMaps) -> None:
        self.maps = maps
        self._kept: dict[int, tuple[Vector, Vector]] = {}

    def cosines(
        self,
        prompt: Vector,
        search: Vector,
        found: Mapping[int, float],
        stored: Callable[[list[int]], Mapping[int, object]],
    ) -> dict[int, float]:
        """The mapped cosine of the moved ``prompt`` and each matcher the storage ``found``
        (id -> its cosine to ``search``); ``stored(ids)`` reads stored vectors."""
        entries: dict[int, tuple[Vector, Vector]] = {}
        missing: list[int] = []
        for key, score in found.items():
            entry = self._kept.get(key)
            if entry is not None and abs(float(entry[0] @ search) - score) <= self.TOLERANCE:
                entries[key] = entry
            else:
                missing.append(key)
        if missing:
            if len(self._kept) + len(missing) > self.LIMIT:
                self._kept = {}
            for key, vector in stored(missing).items():
                row = np.asarray(vector, dtype=np.float32)
                entries[key] = self._kept[key] = (row, self.maps.matcher(row))
        return {key: float(moved @ prompt) for key, (_, moved) in entries.items()}


def index() -> dict[str, dict[str, object]]:
    """The shipped maps' index (model id -> its entry)."""
    text = resources.files(__package__).joinpath(FOLDER, INDEX_FILE).read_text(encoding="utf-8")
    table = json.loads(text)
    if not isinstance(table, dict):
        raise ValueError(f"{INDEX_FILE}: expected an object of model id -> entry")
    return table


@cache
def for_model(model_id: str) -> FiringMaps | None:
    """The shipped maps of ``model_id``; None when the model has none."""
    entry = index().get(model_id)
    if entry is None:
        return None
    file = entry.get("file")
    if not isinstance(file, str):
        raise ValueError(f"{INDEX_FILE}: the entry of {model_id!r} names no file")
    data = resources.files(__package__).joinpath(FOLDER, file).read_bytes()
    with np.load(io.BytesIO(data), allow_pickle=False) as arrays:
        query = arrays["query"].astype(np.float32)
        passage = arrays["passage"].astype(np.float32) if "passage" in arrays else None
    return FiringMaps(query, passage)
