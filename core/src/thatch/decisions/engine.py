"""The decision model's two operations: update (the trusted boundary) and query.

Nothing here calls a language model: texts are embedded, compared by cosine,
and confidences follow :mod:`thatch.decisions.confidence`.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Sequence
from datetime import UTC, datetime
from typing import Literal

import attrs

from thatch.decisions import firing
from thatch.decisions.confidence import DEFAULT_PRIOR, EVIDENCE, confidence, population_prior
from thatch.decisions.prompt_map import MovedMatchers
from thatch.decisions.wording import LINK_COSINE, conflict, why_not_linked
from thatch.memory.names import validate_store
from thatch.plugin.decision_storage import DecisionStorage
from thatch.plugin.decisions import SIGNALS, Matcher, Prediction, Signal
from thatch.plugin.embedder import Embedder
from thatch.plugin.errors import InvalidInputError, NotFoundError
from thatch.redact import redact

#: What an update did, from the user's point of view.
Outcome = Literal["created", "linked", "reinforced", "weakened", "unchanged"]
MAX_TEXT = 2_000
#: Matchers considered per query: enough to surface conflicting predictions.
MATCHER_DEPTH = 32
#: Close predictions checked for the same wording before a new one is created.
PREDICTION_CANDIDATES = 5
#: Close matchers checked for the same situation before a new one is created.
MATCHER_CANDIDATES = 5
#: Cosine from which an existing prediction that is not linked is named in the answer.
SIMILAR_COSINE = 0.5


@attrs.frozen
class ScoreSettings:
    """How a query scores a prediction (see docs/decision-model.md)."""

    #: Start new predictions at the store's confirm rate once it has evidence.
    population_prior: bool = True
    #: A new edge to an existing matcher weighs the cosine that matched it.
    edge_weight_from_cosine: bool = False
    #: score = cosine ** power × weight × confidence; > 1 damps weak matches
    #: (1.3 ranked best on bench/data/decisions.jsonl; docs/decision-model.md).
    cosine_power: float = 1.3
    #: Fire with the model's calibrated intent shift and margin
    #: (:mod:`thatch.decisions.firing`; ``[predictions] prompt_intent``). Off
    #: by default: it cuts false fires ninefold on bench/data/firing but
    #: loses fires where the work is asked as a question, and most fires on
    #: everyday preferences (docs/decision-model.md). On, it replaces the map.
    prompt_intent: bool = False
    #: Fire on the cosine of the prompt's and the matchers' vectors moved by the
    #: model's learnt maps (:mod:`thatch.decisions.prompt_map`;
    #: ``[predictions] prompt_map``). Off, or for a model without maps, a
    #: matcher fires on plain cosine.
    prompt_map: bool = True


@attrs.frozen
class SimilarPrediction:
    """An existing prediction close to the new statement that the update did not link to."""

    prediction: Prediction
    cosine: float
    #: Why it was not linked (see :func:`thatch.decisions.wording.why_not_linked`).
    reason: str


@attrs.frozen
class UpdateResult:
    """What :meth:`DecisionModel.update` did."""

    outcome: Outcome
    matcher: Matcher
    prediction: Prediction
    matcher_created: bool
    prediction_created: bool
    edge_created: bool
    signal: Signal
    #: When a prediction was created: the closest existing one (cosine >=
    #: SIMILAR_COSINE) it was not linked to, so the agent can link to it by id
    #: if the user meant the same thing.
    similar: SimilarPrediction | None = None

    @property
    def confidence(self) -> float:
        return self.prediction.confidence

    @property
    def evidence(self) -> float:
        return self.prediction.evidence


@attrs.frozen
class PredictionHit:
    """A prediction that fits the context, with the matcher that fired it."""

    prediction: Prediction
    matcher: Matcher
    cosine: float
    weight: float
    score: float
    #: Signals received other than ``create``.
    tests: int


class DecisionModel:
    """Update and query one backend's decision model with one embedder."""

    def __init__(
        self,
        storage: DecisionStorage,
        embedder: Embedder,
        *,
        dedup_threshold: float,
        fire_threshold: float,
        settings: ScoreSettings | None = None,
        firing_rule: firing.Firing | None = None,
    ) -> None:
        """``firing_rule`` replaces the model's calibrated one (benchmarks compare rules)."""
        self.storage = storage
        self.embedder = embedder
        self.dedup_threshold = dedup_threshold
        self.fire_threshold = fire_threshold
        self.settings = settings or ScoreSettings()
        if firing_rule is None:
            firing_rule = firing.for_settings(
                embedder.model_id,
                intent=self.settings.prompt_intent,
                learnt_map=self.settings.prompt_map,
            )
        self.firing = firing_rule
        maps = firing_rule.maps
        #: The matchers met so far, moved by the matcher map (None without one).
        self._moved = None if maps is None or maps.passage is None else MovedMatchers(maps)

    # -- update ------------------------------------------------------------
    def update(
        self,
        matcher: str,
        prediction: str,
        signal: str,
        *,
        store: str,
        rationale: str = "",
        detail: str = "",
        session: str | None = None,
        prediction_id: int | None = None,
    ) -> UpdateResult:
        """Find or create the matcher and the prediction, link them, apply the signal.

        With ``prediction_id`` the feedback goes to that prediction of ``store``
        (``prediction`` may then be empty): the agent's link when the user
        meant an existing statement the wording rule kept apart. An unknown id
        is an error and changes nothing.
        """
        checked = check_signal(signal)
        validate_store(store)
        if prediction_id is not None and prediction.strip():
            raise InvalidInputError(
                f"prediction {_shown(prediction)} and prediction_id {prediction_id} exclude "
                f"each other: give prediction_id alone to record on prediction {prediction_id}, "
                "or the prediction text alone to record a statement"
            )
        situation = _clean("matcher", matcher)
        chosen = None if prediction_id is None else self._chosen(prediction_id, store)
        statement = chosen.statement if chosen is not None else _clean("prediction", prediction)
        rationale = redact(rationale).text if rationale else ""
        model = self.embedder.model_id
        # A chosen prediction is not searched for, so its statement needs no vector.
        vectors = self.embedder.embed_passages(
            [situation] if chosen is not None else [situation, statement]
        )

        nearest = self._same_matcher(vectors[0], situation, store)
        matcher_created = nearest is None
        if nearest is None:
            matcher_record = self.storage.add_matcher(store, situation, model, vectors[0])
            match_cosine = 1.0
        else:
            matcher_record = self.storage.get_matchers([nearest[0]])[nearest[0]]
            match_cosine = nearest[1]

        same, similar = (
            (chosen.id, None)
            if chosen is not None
            else self._same_prediction(vectors[1], statement, store)
        )
        prediction_created = same is None
        if same is None:
            prior = self._prior(store)
            target = self.storage.add_prediction(
                store, statement, rationale, model, vectors[1], prior
            ).id
        else:
            target = same

        weight = match_cosine if self.settings.edge_weight_from_cosine else 1.0
        edge_created = self.storage.link(matcher_record.id, target, round(weight, 4))
        if checked == "create" and not prediction_created and not edge_created:
            # Unchanged: a statement restated in a situation it already has adds
            # no evidence and no situation, so nothing is written, not even
            # provenance or the time of the last update.
            current = self.storage.get_predictions([target])[target]
            return UpdateResult(
                outcome="unchanged",
                matcher=matcher_record,
                prediction=current,
                matcher_created=matcher_created,
                prediction_created=False,
                edge_created=False,
                signal=checked,
            )
        evidence = EVIDENCE[checked]
        updated = self.storage.add_evidence(
            target,
            signal=checked,
            confirm=evidence.confirm,
            disconfirm=evidence.disconfirm,
            detail=redact(detail).text if detail else "",
            session=session,
            when=datetime.now(UTC),
            rule=confidence,
        )
        return UpdateResult(
            outcome=_outcome(checked, prediction_created, edge_created),
            matcher=matcher_record,
            prediction=updated,
            matcher_created=matcher_created,
            prediction_created=prediction_created,
            edge_created=edge_created,
            signal=checked,
            similar=similar,
        )

    def _same_matcher(self, vector: object, situation: str, store: str) -> tuple[int, float] | None:
        """The nearest matcher that describes this situation, with its cosine; None for a new one.

        A matcher is reused from the dedup cosine on, when its description
        does not conflict with the situation's (:func:`wording.conflict`: a
        negation, an antonym, a number, an order or a qualifier that differs):
        "a pull request that touches old tech debt" and "... that does not
        touch old tech debt" are two situations, however close their vectors.
        """
        hits = self.storage.nearest_matchers(
            vector,  # type: ignore[arg-type]
            self.embedder.model_id,
            [store],
            MATCHER_CANDIDATES,
        )
        close = [hit for hit in hits if hit.score >= self.dedup_threshold]
        if not close:
            return None
        existing = self.storage.get_matchers(hit.id for hit in close)
        for hit in close:
            found = existing.get(hit.id)
            if found is not None and conflict(found.description, situation) is None:
                return hit.id, float(hit.score)
        return None

    def chosen(self, prediction_id: int, store: str) -> Prediction:
        """The prediction of ``store`` with this id; a clear error, changing nothing, if none."""
        return self._chosen(prediction_id, store)

    def _chosen(self, prediction_id: int, store: str) -> Prediction:
        """The prediction the agent named by id; a clear error when it is not in ``store``."""
        found = self.storage.get_predictions([prediction_id]).get(prediction_id)
        if found is None:
            raise NotFoundError(
                f"no prediction with id {prediction_id}; "
                "see the ids with 'thatch predictions list' (or the prediction_list tool)"
            )
        if found.store != store:
            raise InvalidInputError(
                f"prediction {prediction_id} is in store {found.store!r}, not {store!r}; "
                f"give store {found.store!r} to link to it"
            )
        return found

    def _same_prediction(
        self, vector: object, statement: str, store: str
    ) -> tuple[int | None, SimilarPrediction | None]:
        """The existing prediction this statement restates, else the closest it does not.

        See wording.py: a close prediction is the same one only when the
        wording takes the same side; the closest other one is named instead.
        """
        hits = self.storage.nearest_predictions(
            vector,  # type: ignore[arg-type]
            self.embedder.model_id,
            [store],
            PREDICTION_CANDIDATES,
        )
        close = [hit for hit in hits if hit.score >= min(LINK_COSINE, SIMILAR_COSINE)]
        if not close:
            return None, None
        existing = self.storage.get_predictions(hit.id for hit in close)
        similar = None
        for hit in close:
            if hit.id not in existing:
                continue
            cosine = float(hit.score)
            reason = why_not_linked(existing[hit.id].statement, statement, cosine, self._similarity)
            if reason is None:
                return hit.id, None
            # A statement may link from LINK_COSINE on, but only one at least
            # SIMILAR_COSINE away is close enough to name as the similar one.
            if similar is None and cosine >= SIMILAR_COSINE:
                similar = SimilarPrediction(existing[hit.id], round(cosine, 4), reason)
        return None, similar

    def _similarity(self, first: str, second: str) -> float:
        vectors = self.embedder.embed_passages([first, second])
        return float(vectors[0] @ vectors[1])

    def _prior(self, store: str) -> float:
        if not self.settings.population_prior:
            return DEFAULT_PRIOR
        return population_prior(*self.storage.evidence_totals(store))

    # -- query -------------------------------------------------------------
    def query(
        self,
        context: str,
        stores: Sequence[str],
        *,
        limit: int = 10,
        session: str | None = None,
        record: bool = False,
    ) -> list[PredictionHit]:
        """Predictions linked to matchers that fit ``context``, best score first.

        A matcher fires by :attr:`firing`: its cosine to the prompt (both
        moved by the learnt maps, by default) clears the threshold (moved by
        how much the prompt asks for work, with the intent rule) and is within
        the margin of the best matcher's (:mod:`thatch.decisions.firing`). Every
        prediction of every firing matcher is returned once (with its best
        score), so the agent sees conflicts. With ``record``, each hit is
        logged as shown, for calibration.
        """
        if not context.strip() or not self.storage.has_matchers(stores):
            return []
        model = self.embedder.model_id
        vector = self.firing.prompt_vector(self.embedder.embed_query(context))
        search = self.firing.search_vector(vector)
        cosines = {
            hit.id: float(hit.score)
            for hit in self.storage.nearest_matchers(search, model, stores, MATCHER_DEPTH)
        }
        if self._moved is not None:
            cosines = self._moved.cosines(
                vector,
                search,
                cosines,
                lambda ids: self.storage.decision_embeddings("matcher", ids, model),
            )
        threshold = self.firing.threshold(self.fire_threshold, vector)
        fired = self.firing.keep(
            {key: cosine for key, cosine in cosines.items() if cosine >= threshold}
        )
        if not fired:
            return []
        power = self.settings.cosine_power
        best: dict[int, tuple[float, int, float]] = {}
        for edge in self.storage.edges_from(fired):
            cosine = fired[edge.matcher_id]
            partial = max(cosine, 0.0) ** power * edge.weight
            if edge.prediction_id not in best or partial > best[edge.prediction_id][0]:
                best[edge.prediction_id] = (partial, edge.matcher_id, edge.weight)
        predictions = self.storage.get_predictions(best)
        matchers = self.storage.get_matchers({m for _, m, _ in best.values()})
        hits = [
            PredictionHit(
                prediction=predictions[pid],
                matcher=matchers[matcher_id],
                cosine=round(fired[matcher_id], 4),
                weight=weight,
                score=round(partial * predictions[pid].confidence, 4),
                tests=0,
            )
            for pid, (partial, matcher_id, weight) in best.items()
            if pid in predictions and matcher_id in matchers
        ]
        hits.sort(key=lambda hit: (-hit.score, hit.prediction.id))
        hits = [attrs.evolve(hit, tests=self._tests(hit.prediction.id)) for hit in hits[:limit]]
        if record and hits:
            self.storage.record_fires(
                session,
                [(hit.prediction.id, hit.prediction.confidence, hit.score) for hit in hits],
                datetime.now(UTC),
            )
        return hits

    def _tests(self, prediction_id: int) -> int:
        return sum(entry.signal != "create" for entry in self.storage.provenance(prediction_id))


def check_signal(signal: str) -> Signal:
    """``signal`` if it is one of :data:`SIGNALS`; a clear error otherwise."""
    if signal not in SIGNALS:
        raise InvalidInputError(
            f"signal {signal!r} is not one of {', '.join(SIGNALS)}; "
            "use confirm when the user agreed, disconfirm when they chose otherwise, "
            "soft when they hesitated, create to record a new preference"
        )
    return signal


def check_text(what: str, text: str) -> str:
    """``text`` on one line, if it can be a matcher or a statement; a clear error otherwise.

    Refused: an empty text, one over MAX_TEXT characters, one with a NUL
    character (no backend stores it as text), and one of nothing but control
    or format characters (nothing a user could read).
    """
    stripped = " ".join(text.split())
    if "\x00" in stripped:
        raise InvalidInputError(f"{what} text contains a NUL character (\\x00); remove it")
    if not stripped:
        raise InvalidInputError(f"{what} text is empty; describe it in a sentence")
    if not any(unicodedata.category(char)[0] != "C" for char in stripped):
        raise InvalidInputError(
            f"{what} text has only control characters; describe it in a sentence"
        )
    if len(stripped) > MAX_TEXT:
        raise InvalidInputError(
            f"{what} text has {len(stripped)} characters, over {MAX_TEXT}; shorten it"
        )
    return stripped


def _clean(what: str, text: str) -> str:
    return redact(check_text(what, text)).text


def _shown(text: str) -> str:
    """A text for an error message: redacted, on one line, cut at 60 characters."""
    line = redact(" ".join(text.split())).text
    return repr(line if len(line) <= 60 else line[:57] + "...")


def _outcome(signal: Signal, prediction_created: bool, edge_created: bool) -> Outcome:
    if prediction_created:
        return "created"
    if signal == "confirm":
        return "reinforced"
    if signal in ("disconfirm", "soft"):
        return "weakened"
    return "linked" if edge_created else "unchanged"
