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
    if not all(isinstance(flag, bool) for flag in (population, from_cosine, intent)):
        raise ConfigError(
            "config: predictions.population_prior, edge_weight_from_cosine and prompt_intent"
            " are true or false"
        )
    if isinstance(power, bool) or not isinstance(power, int | float) or not 0.1 <= power <= 5:
        raise ConfigError(f"config: predictions.cosine_power = {power!r}; use a number like 1.3")
    return ScoreSettings(
        population_prior=population,
        edge_weight_from_cosine=from_cosine,
        cosine_power=float(power),
        prompt_intent=intent,
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


def parse_update_calls(lines: Iterable[str], source: str) -> Iterator[UpdateCall]:
    """Parse JSON lines ``{"matcher", "prediction", "signal", "rationale"?, "store"?}``."""
    example = '{"matcher": "...", "prediction": "...", "signal": "create"}'
    for where, data in json_objects(lines, source, example):
        check_required_text(data, where, ("matcher", "prediction", "signal"))
        check_optional_text(data, where, ("rationale", "store", "detail"))
        try:
            check_signal(data["signal"])
            if data.get("store"):
                validate_store(data["store"])
        except InvalidInputError as exc:
            raise InvalidInputError(f"{where}: {exc}") from None
        yield UpdateCall(
            matcher=data["matcher"],
            prediction=data["prediction"],
            signal=data["signal"],
            rationale=data.get("rationale") or "",
            store=data.get("store") or None,
            detail=data.get("detail") or "",
        )
