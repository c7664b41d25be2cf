"""The decision model as the API and CLI see it: stores resolved, settings read.

``Thatch.decisions`` returns a :class:`Decisions`; every operation of
``thatch predictions`` goes through it.
"""

from __future__ import annotations

import builtins
from collections.abc import Iterable, Iterator
from typing import TYPE_CHECKING, Any

import attrs

from thatch.decisions.calibration import CalibrationReport, calibration_report
from thatch.decisions.engine import (
    DecisionModel,
    PredictionHit,
    ScoreSettings,
    UpdateResult,
    check_signal,
    check_text,
)
from thatch.jsonlines import check_optional_text, check_required_text, json_objects
from thatch.memory.names import validate_store
from thatch.plugin.decisions import Edge, Matcher, Prediction, Provenance
from thatch.plugin.errors import ConfigError, InvalidInputError, NotFoundError

if TYPE_CHECKING:
    from thatch.api import StoreChoice, Thatch


@attrs.frozen
class PredictionDetail:
    """A prediction with the matchers that link to it and its audit trail."""

    prediction: Prediction
    matchers: tuple[tuple[Matcher, Edge], ...]
    provenance: tuple[Provenance, ...]


@attrs.frozen
class UpdateCall:
    """One line of a ``thatch predictions import`` file."""

    matcher: str
    prediction: str
    signal: str
    rationale: str = ""
    store: str | None = None
    detail: str = ""
    #: An existing prediction to record on, instead of ``prediction`` (then "").
    prediction_id: int | None = None


def settings_from_config(sections: Any) -> ScoreSettings:
    """``[predictions]`` of the config file as score settings."""
    table = sections.get("predictions", {}) if hasattr(sections, "get") else {}
    if not isinstance(table, dict):
        raise ConfigError("config: [predictions] must be a table")
    defaults = ScoreSettings()
    population = table.get("population_prior", defaults.population_prior)
    from_cosine = table.get("edge_weight_from_cosine", defaults.edge_weight_from_cosine)
    power = table.get("cosine_power", defaults.cosine_power)
    intent = table.get("prompt_intent", defaults.prompt_intent)
    learnt_map = table.get("prompt_map", defaults.prompt_map)
    if not all(isinstance(flag, bool) for flag in (population, from_cosine, intent, learnt_map)):
        raise ConfigError(
            "config: predictions.population_prior, edge_weight_from_cosine, prompt_intent"
            " and prompt_map are true or false"
        )
    if isinstance(power, bool) or not isinstance(power, int | float) or not 0.1 <= power <= 5:
        raise ConfigError(f"config: predictions.cosine_power = {power!r}; use a number like 1.3")
    return ScoreSettings(
        population_prior=population,
        edge_weight_from_cosine=from_cosine,
        cosine_power=float(power),
        prompt_intent=intent,
        prompt_map=learnt_map,
    )


ALL_STORES = "all"


class Decisions:
    """The user decision model of one installation, seen from one working directory."""

    def __init__(self, th: Thatch) -> None:
        self._th = th
        thresholds = th.thresholds()
        self.model = DecisionModel(
            th.decision_storage,
            th.embedder,
            dedup_threshold=thresholds.dedup,
            fire_threshold=thresholds.prediction,
            settings=settings_from_config(th.config.sections),
        )

    def update(
        self,
        matcher: str,
        prediction: str,
        signal: str,
        *,
        rationale: str = "",
        store: str | None = None,
        detail: str = "",
        session: str | None = None,
        prediction_id: int | None = None,
    ) -> UpdateResult:
        """Record the user's feedback (see :meth:`DecisionModel.update`).

        ``prediction_id`` names the existing prediction the feedback is about
        (``prediction`` may then be empty), e.g. the similar one an earlier
        answer named.
        """
        return self.model.update(
            matcher,
            prediction,
            signal,
            store=store or self._th.default_store,
            rationale=rationale,
            detail=detail,
            session=session,
            prediction_id=prediction_id,
        )

    def query(
        self,
        context: str,
        *,
        stores: StoreChoice = None,
        limit: int = 10,
        session: str | None = None,
        record: bool = False,
    ) -> list[PredictionHit]:
        """Predictions that fit ``context`` in the chosen stores (default: repo + global)."""
        if limit < 1:
            raise InvalidInputError(f"limit {limit} is below 1; ask for at least one result")
        return self.model.query(
            context, self._th.stores_for(stores), limit=limit, session=session, record=record
        )

    def list(self, stores: StoreChoice = None) -> builtins.list[Prediction]:
        """Predictions of the chosen stores, by id."""
        return self._th.decision_storage.list_predictions(self._th.stores_for(stores))

    def show(self, prediction_id: int) -> PredictionDetail:
        """One prediction with its matchers and provenance."""
        storage = self._th.decision_storage
        prediction = storage.get_predictions([prediction_id]).get(prediction_id)
        if prediction is None:
            raise _missing(prediction_id)
        edges = storage.edges_to(prediction_id)
        matchers = storage.get_matchers(edge.matcher_id for edge in edges)
        return PredictionDetail(
            prediction=prediction,
            matchers=tuple((matchers[e.matcher_id], e) for e in edges if e.matcher_id in matchers),
            provenance=tuple(storage.provenance(prediction_id)),
        )

    def details(self, stores: StoreChoice = None) -> builtins.list[PredictionDetail]:
        """:meth:`list` with each prediction's matchers and provenance, as :meth:`show` has."""
        return [self.show(prediction.id) for prediction in self.list(stores)]

    def find(self, statement: str) -> Prediction:
        """The one prediction, in any store, whose statement is ``statement`` (spacing aside)."""
        wanted = " ".join(statement.split()).casefold()
        found = [
            p
            for p in self._th.decision_storage.list_predictions()
            if " ".join(p.statement.split()).casefold() == wanted
        ]
        if not found:
            raise NotFoundError(
                f"no prediction states {statement!r}; see the statements with "
                "'thatch predictions list'"
            )
        if len(found) > 1:
            listed = "; ".join(f"id {p.id} in {p.store}" for p in found)
            raise InvalidInputError(
                f"{len(found)} predictions state {statement!r} ({listed}); delete one by its id"
            )
        return found[0]

    def delete(self, prediction_id: int) -> Prediction:
        """Delete a prediction with its edges and provenance; returns what was deleted."""
        detail = self.show(prediction_id)
        if not self._th.decision_storage.delete_prediction(prediction_id):
            raise _missing(prediction_id)
        return detail.prediction

    def check_ids(self, calls: Iterable[UpdateCall], source: str) -> None:
        """Every ``prediction_id`` of the calls names a prediction of its call's store.

        Run before an import replays anything, so that an unknown id changes nothing.
        """
        for number, call in enumerate(calls, 1):
            if call.prediction_id is not None:
                store = call.store or self._th.default_store
                try:
                    self.model.chosen(call.prediction_id, store)
                except (InvalidInputError, NotFoundError) as exc:
                    raise type(exc)(f"{source}, call {number}: {exc}") from None

    def import_calls(self, calls: Iterable[UpdateCall]) -> builtins.list[UpdateResult]:
        """Replay update calls (validated up front by :func:`parse_update_calls`)."""
        return [
            self.update(
                call.matcher,
                call.prediction,
                call.signal,
                rationale=call.rationale,
                store=call.store,
                detail=call.detail,
                prediction_id=call.prediction_id,
            )
            for call in calls
        ]

    def calibration(self, stores: StoreChoice = ALL_STORES) -> CalibrationReport:
        """Brier score and reliability table of the chosen stores' showings."""
        names = None if stores == ALL_STORES else self._th.stores_for(stores)
        storage = self._th.decision_storage
        return calibration_report(storage.fires(names), storage.signals(names))


def _missing(prediction_id: int) -> NotFoundError:
    return NotFoundError(
        f"no prediction with id {prediction_id}; see ids with 'thatch predictions list'"
    )


#: The keys of an import line: text keys, then the id.
IMPORT_TEXT_KEYS = ("matcher", "prediction", "signal", "rationale", "store", "detail")
IMPORT_KEYS = (*IMPORT_TEXT_KEYS, "prediction_id")


def _kind(value: object) -> str:
    """What a JSON value is, for an error message."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true or false"
    if isinstance(value, int | float):
        return "a number"
    if isinstance(value, list):
        return "a list"
    if isinstance(value, dict):
        return "an object"
    return "text"


def _check_line(data: dict[str, Any], where: str) -> None:
    """One import line's keys and types; a clear error naming the line and the key."""
    unknown = [key for key in data if key not in IMPORT_KEYS]
    if unknown:
        raise InvalidInputError(
            f'{where}: unknown key "{unknown[0]}"; the keys are {", ".join(IMPORT_KEYS)}'
        )
    for key in IMPORT_TEXT_KEYS:
        value = data.get(key)
        if value is not None and not isinstance(value, str):
            raise InvalidInputError(f'{where}: "{key}" is {_kind(value)}; write it as text')
    given = data.get("prediction_id")
    if given is not None and (isinstance(given, bool) or not isinstance(given, int) or given < 1):
        raise InvalidInputError(
            f'{where}: "prediction_id" is {_kind(given)}; write a prediction id, a whole number'
            " from 1 ('thatch predictions list' shows them)"
        )
    if data.get("prediction") is not None and given is not None:
        raise InvalidInputError(
            f'{where}: "prediction" and "prediction_id" exclude each other; keep one'
        )
    required = ["matcher", "signal"] + (["prediction"] if given is None else [])
    check_required_text(data, where, required)
    check_optional_text(data, where, ("rationale", "store", "detail"))


def parse_update_calls(lines: Iterable[str], source: str) -> Iterator[UpdateCall]:
    """Parse JSON lines ``{"matcher", "prediction" | "prediction_id", "signal", ...}``.

    Also ``"rationale"``, ``"store"`` and ``"detail"``; any other key, a value
    of the wrong type, or a text that :func:`check_text` refuses is an error
    naming the line.
    """
    example = '{"matcher": "...", "prediction": "...", "signal": "create"}'
    for where, data in json_objects(lines, source, example):
        _check_line(data, where)
        try:
            check_text("matcher", data["matcher"])
            if data.get("prediction_id") is None:
                check_text("prediction", data["prediction"])
            check_signal(data["signal"])
            if data.get("store"):
                validate_store(data["store"])
        except InvalidInputError as exc:
            raise InvalidInputError(f"{where}: {exc}") from None
        yield UpdateCall(
            matcher=data["matcher"],
            prediction=data.get("prediction") or "",
            signal=data["signal"],
            rationale=data.get("rationale") or "",
            store=data.get("store") or None,
            detail=data.get("detail") or "",
            prediction_id=data.get("prediction_id"),
        )
