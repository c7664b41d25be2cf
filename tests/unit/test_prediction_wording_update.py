"""An update that does not link names the similar prediction; an explicit id links to it.

Through the Python API (``Thatch.decisions``) and the MCP tool
``prediction_update`` (the tool registry), on SQLite with the word-hash
embedder: "Prefer single quotes ..." and "Prefer double quotes ..." share 4 of
5 words (cosine 0.8), close enough to be checked and opposite by wording.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from thatch.decisions.engine import SIMILAR_COSINE
from thatch.plugin.errors import InvalidInputError, NotFoundError
from thatch.tools import ToolContext, ToolRegistry

SITUATION = "writing string literals in python"
SINGLE = "Prefer single quotes for strings."
DOUBLE = "Prefer double quotes for strings."


def _counts(ctx: ToolContext) -> tuple[int, int, int]:
    storage = ctx.thatch.decision_storage
    predictions = storage.list_predictions()
    provenance = sum(len(storage.provenance(p.id)) for p in predictions)
    return len(storage.list_matchers()), len(predictions), provenance


def test_an_opposite_is_created_and_the_similar_prediction_named(ctx: ToolContext) -> None:
    decisions = ctx.thatch.decisions
    first = decisions.update(SITUATION, SINGLE, "create")
    second = decisions.update(SITUATION, DOUBLE, "create")
    assert second.prediction_created
    assert second.prediction.id != first.prediction.id
    assert second.similar is not None
    assert second.similar.prediction.id == first.prediction.id
    assert second.similar.prediction.statement == SINGLE
    assert second.similar.cosine == pytest.approx(0.8, abs=1e-3)
    assert second.similar.cosine >= SIMILAR_COSINE
    assert second.similar.reason == "opposite wording (antonym single/double)"


def test_a_linked_or_unrelated_update_names_nothing(ctx: ToolContext) -> None:
    decisions = ctx.thatch.decisions
    decisions.update(SITUATION, SINGLE, "create")
    again = decisions.update(SITUATION, "prefer single quotes for the strings", "confirm")
    assert (again.outcome, again.similar) == ("reinforced", None)
    other = decisions.update("choosing a database", "Use Postgres for new services.", "create")
    assert (other.outcome, other.similar) == ("created", None)


def test_an_explicit_id_links_to_that_prediction(ctx: ToolContext) -> None:
    decisions = ctx.thatch.decisions
    first = decisions.update(SITUATION, SINGLE, "create")
    linked = decisions.update(
        "quoting strings in a new module", "", "confirm", prediction_id=first.prediction.id
    )
    assert linked.outcome == "reinforced"
    assert linked.prediction.id == first.prediction.id
    assert linked.prediction.statement == SINGLE
    assert linked.matcher_created
    assert linked.edge_created
    assert linked.similar is None
    assert len(ctx.thatch.decision_storage.list_predictions()) == 1


def test_an_unknown_or_foreign_id_is_refused_and_changes_nothing(ctx: ToolContext) -> None:
    decisions = ctx.thatch.decisions
    first = decisions.update(SITUATION, SINGLE, "create")
    before = _counts(ctx)
    with pytest.raises(NotFoundError, match="no prediction with id 999"):
        decisions.update("a new situation", "", "confirm", prediction_id=999)
    with pytest.raises(InvalidInputError, match="is in store 'global', not 'acme/web'"):
        decisions.update(
            "a new situation", "", "confirm", store="acme/web", prediction_id=first.prediction.id
        )
    assert _counts(ctx) == before


# -- the MCP tool ---------------------------------------------------------------


def _call(registry: ToolRegistry, ctx: ToolContext, **arguments: Any) -> Any:
    outcome = registry.call("prediction_update", arguments, ctx)
    assert outcome.is_error or json.loads(outcome.text) == outcome.data
    return outcome


def test_the_tool_names_the_similar_prediction_then_links_by_id(
    registry: ToolRegistry, ctx: ToolContext
) -> None:
    first = _call(registry, ctx, matcher=SITUATION, prediction=SINGLE, signal="create").data
    assert first["similar"] is None
    second = _call(registry, ctx, matcher=SITUATION, prediction=DOUBLE, signal="create").data
    assert second["outcome"] == "created"
    similar = second["similar"]
    assert similar["prediction"]["id"] == first["prediction"]["id"]
    assert similar["prediction"]["statement"] == SINGLE
    assert similar["cosine"] == pytest.approx(0.8, abs=1e-3)
    assert similar["reason"].startswith("opposite wording")

    linked = _call(
        registry,
        ctx,
        matcher="quoting strings in a new module",
        prediction_id=first["prediction"]["id"],
        signal="confirm",
    ).data
    assert linked["outcome"] == "reinforced"
    assert linked["prediction"]["id"] == first["prediction"]["id"]


def test_the_tool_refuses_an_unknown_id_or_no_prediction(
    registry: ToolRegistry, ctx: ToolContext
) -> None:
    _call(registry, ctx, matcher=SITUATION, prediction=SINGLE, signal="create")
    before = _counts(ctx)
    unknown = _call(registry, ctx, matcher="another one", prediction_id=999, signal="confirm")
    assert unknown.is_error
    assert "no prediction with id 999" in unknown.text
    neither = _call(registry, ctx, matcher="another one", signal="confirm")
    assert neither.is_error
    assert "neither of 'prediction' and 'prediction_id' given" in neither.text
    assert _counts(ctx) == before


def test_a_text_and_an_id_together_are_refused_and_change_nothing(
    registry: ToolRegistry, ctx: ToolContext
) -> None:
    first = ctx.thatch.decisions.update(SITUATION, SINGLE, "create").prediction.id
    before = _counts(ctx)
    both = _call(
        registry, ctx, matcher="another one", prediction=DOUBLE, prediction_id=first,
        signal="confirm",
    )  # fmt: skip
    assert both.is_error
    assert "both of 'prediction' and 'prediction_id' given" in both.text
    with pytest.raises(InvalidInputError, match=f"and prediction_id {first} exclude each other"):
        ctx.thatch.decisions.update("another one", DOUBLE, "confirm", prediction_id=first)
    assert _counts(ctx) == before
    # The same id alone records on it.
    alone = _call(registry, ctx, matcher="another one", prediction_id=first, signal="confirm")
    assert alone.data["prediction"]["id"] == first


def test_an_unchanged_create_writes_nothing(ctx: ToolContext) -> None:
    decisions = ctx.thatch.decisions
    first = decisions.update(SITUATION, SINGLE, "create")
    before = _counts(ctx)
    again = decisions.update(SITUATION, SINGLE, "create", detail="said it again")
    assert again.outcome == "unchanged"
    assert _counts(ctx) == before
    assert again.prediction.updated_at == first.prediction.updated_at
    assert (
        again.prediction
        == ctx.thatch.decision_storage.get_predictions([first.prediction.id])[first.prediction.id]
    )


def test_prediction_list_is_limited_and_cuts_provenance(
    registry: ToolRegistry, ctx: ToolContext
) -> None:
    decisions = ctx.thatch.decisions
    first = decisions.update(SITUATION, SINGLE, "create")
    for _ in range(6):
        decisions.update(SITUATION, SINGLE, "confirm", detail="yes")
    decisions.update("choosing a database", "Use Postgres for new services.", "create")
    decisions.update("naming a branch", "Name branches after the ticket id.", "create")

    def listed(**arguments: Any) -> Any:
        outcome = registry.call("prediction_list", arguments, ctx)
        assert not outcome.is_error, outcome.text
        return outcome.data

    default = listed()
    assert len(default) == 3
    assert default[0]["id"] == first.prediction.id
    assert default[0]["provenance_total"] == 7
    # The latest three, oldest first.
    assert [entry["signal"] for entry in default[0]["provenance"]] == ["confirm"] * 3
    everything = listed(provenance=100)
    signals = [entry["signal"] for entry in everything[0]["provenance"]]
    assert signals == ["create"] + ["confirm"] * 6
    page = listed(limit=1, offset=1)
    assert [p["id"] for p in page] == [default[1]["id"]]
    assert listed(limit=2, offset=3) == []
    assert [p["provenance"] for p in listed(provenance=0)] == [[], [], []]
    too_many = registry.call("prediction_list", {"limit": 10_000}, ctx)
    assert too_many.is_error
