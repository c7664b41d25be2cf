"""When a matcher fires: the prompt's cosine, shifted by how much the prompt asks for work.

A preference is about a choice, and choices come with work: "write tests for
parse_invoice" is where "use pytest fixtures" helps, "what's the name of the
logging library we use" is not, though it shares the words of a logging
preference. Plain cosine cannot tell them apart (docs/decision-model.md).

Each model gets one direction of its space, the *intent axis*: the mean vector
of the generic task prompts of firing_background.tsv minus the mean vector of
its questions, look-ups and chatter, made unit length. A prompt's intent is
its vector's component along that axis: above 0 it reads as work, below as a
question. The matcher fires when

    cosine >= threshold - intent_weight * intent

so one dot product per prompt moves the threshold, the same for every matcher
(the ranking of matchers is unchanged). Then only matchers within ``margin``
of the best cosine are kept: a task prompt lowers the bar for every matcher,
and the margin stops it from pulling in the loosely related ones.

The axis, weight and margin are calibrated per model by
bench/prediction_firing.py and shipped in firing_models.json. A model with no
entry fires on plain cosine, as before.

The default rule is another: the learnt maps of
:mod:`thatch.decisions.prompt_map`, which move the prompt's and the matchers'
vectors before the cosine is taken and keep the plain threshold.
:func:`for_settings` chooses between the two for a model and the user's
settings.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from functools import cache
from importlib import resources
from typing import Literal

import attrs
import numpy as np
import numpy.typing as npt

from thatch.decisions.prompt_map import FiringMaps
from thatch.decisions.prompt_map import for_model as maps_for_model
from thatch.plugin.embedder import Embedder

BACKGROUND_FILE = "firing_background.tsv"
MODELS_FILE = "firing_models.json"
Label = Literal["task", "ask"]


# eq=False: the axis is an array, which has no single truth value to compare or hash by.
@attrs.frozen(eq=False)
class Firing:
    """How one model's matchers fire (see the module docstring)."""

    #: Unit vector of the model's space; None fires on plain cosine.
    axis: npt.NDArray[np.float32] | None = None
    #: Cosine the threshold moves per unit of intent.
    intent_weight: float = 0.0
    #: Keep only matchers within this cosine of the best one; None keeps all.
    margin: float | None = None
    #: What the rule adds to the model's plain firing threshold: its own
    #: calibrated bar less the plain one, so that a threshold the user sets
    #: moves both.
    offset: float = 0.0
    #: The learnt maps the prompt's and the matchers' vectors go through; None
    #: compares them as the model made them.
    maps: FiringMaps | None = None

    def prompt_vector(self, vector: npt.NDArray[np.float32]) -> npt.NDArray[np.float32]:
        """The vector the matchers are compared with: the prompt's, moved by the map."""
        return vector if self.maps is None else self.maps.prompt(vector)

    def search_vector(self, prompt: npt.NDArray[np.float32]) -> npt.NDArray[np.float32]:
        """What the storage is asked for the nearest matchers of the moved ``prompt``."""
        return prompt if self.maps is None else self.maps.search(prompt)

    def threshold(self, base: float, prompt: npt.NDArray[np.float32]) -> float:
        """The cosine a matcher needs for this prompt (``base``: the plain threshold)."""
        if self.axis is None or not self.intent_weight:
            return base
        return base + self.offset - self.intent_weight * float(prompt @ self.axis)

    def keep(self, cosines: dict[int, float]) -> dict[int, float]:
        """The matchers of ``cosines`` (id -> cosine, all above the threshold) within the margin."""
        if self.margin is None or not cosines:
            return cosines
        floor = max(cosines.values()) - self.margin
        return {key: value for key, value in cosines.items() if value >= floor}


#: Plain cosine: the behaviour of a model with no calibration.
PLAIN = Firing()


def background() -> list[tuple[Label, str]]:
    """The labelled generic prompts the intent axis is computed from."""
    text = resources.files(__package__).joinpath(BACKGROUND_FILE).read_text(encoding="utf-8")
    rows: list[tuple[Label, str]] = []
    for line in text.splitlines():
        if not line.strip() or line.startswith("#"):
            continue
        label, _, prompt = line.partition("\t")
        if label not in ("task", "ask") or not prompt:
            raise ValueError(f"{BACKGROUND_FILE}: bad line {line!r}")
        rows.append((label, prompt))  # type: ignore[arg-type]
    return rows


def intent_axis(
    vectors: npt.NDArray[np.float32], labels: Sequence[Label]
) -> npt.NDArray[np.float32]:
    """Mean of the task vectors minus mean of the others, unit length."""
    tasks = np.asarray([label == "task" for label in labels])
    direction = vectors[tasks].mean(axis=0) - vectors[~tasks].mean(axis=0)
    axis: npt.NDArray[np.float32] = (direction / np.linalg.norm(direction)).astype(np.float32)
    return axis


def compute_axis(embedder: Embedder) -> npt.NDArray[np.float32]:
    """The intent axis of ``embedder``'s model (embeds every background prompt: slow)."""
    rows = background()
    vectors = np.stack([embedder.embed_query(prompt) for _, prompt in rows])
    return intent_axis(vectors, [label for label, _ in rows])


@cache
def _calibrated() -> dict[str, Firing]:
    text = resources.files(__package__).joinpath(MODELS_FILE).read_text(encoding="utf-8")
    table: dict[str, Firing] = {}
    for model_id, entry in json.loads(text).items():
        margin = entry.get("margin")
        table[model_id] = Firing(
            axis=np.asarray(entry["axis"], dtype=np.float32),
            intent_weight=float(entry["intent_weight"]),
            margin=None if margin is None else float(margin),
            offset=float(entry.get("offset", 0.0)),
        )
    return table


def for_model(model_id: str) -> Firing:
    """The shipped intent calibration of ``model_id``; :data:`PLAIN` when it has none."""
    return _calibrated().get(model_id, PLAIN)


@cache
def mapped(model_id: str) -> Firing:
    """Plain cosine after the learnt maps of ``model_id``; :data:`PLAIN` without them."""
    maps = maps_for_model(model_id)
    return PLAIN if maps is None else Firing(maps=maps)


def for_settings(model_id: str, *, intent: bool, learnt_map: bool) -> Firing:
    """The rule a model fires by under the user's ``[predictions]`` settings.

    The intent shift when ``intent`` (it is calibrated on the model's own
    vectors, so it never goes through the map), else the learnt map when
    ``learnt_map`` and the model has one, else plain cosine.
    """
    if intent:
        return for_model(model_id)
    return mapped(model_id) if learnt_map else PLAIN
