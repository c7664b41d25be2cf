"""The decision-model tools: query, update, list and delete predictions."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from thatch.decisions.engine import MAX_TEXT
from thatch.decisions.service import PredictionDetail
from thatch.memory.names import MAX_STORE
from thatch.plugin.decisions import SIGNALS
from thatch.plugin.errors import InvalidInputError
from thatch.plugin.tool import Tool, ToolContext
from thatch.result_json import prediction_hit_data
from thatch.serialize import to_json_data
from thatch.tools.maintenance import MAX_SESSION_ID
from thatch.tools.memory import STORE_SCOPE
from thatch.tools.schema import arguments, integer, string

MAX_PREDICTIONS = 50
#: prediction_list: predictions per answer by default, and at most.
DEFAULT_LISTED = 20
MAX_LISTED = 200
#: prediction_list: latest provenance entries per prediction by default, and at most.
DEFAULT_PROVENANCE = 3
MAX_PROVENANCE = 1_000

SESSION = string(
    "Your session id, when you know it: showings and feedback are then logged per session "
    "for calibration.",
    max_length=MAX_SESSION_ID,
)


def _session(ctx: ToolContext, args: Mapping[str, Any]) -> str | None:
    return args.get("session_id") or ctx.session_id


def _query(ctx: ToolContext, args: Mapping[str, Any]) -> Any:
    session = _session(ctx, args)
    hits = ctx.thatch.decisions.query(
        args["context"],
        stores=args.get("store"),
        limit=args["limit"],
        session=session,
        record=session is not None,
    )
    return [prediction_hit_data(hit) for hit in hits]


def _update(ctx: ToolContext, args: Mapping[str, Any]) -> Any:
    if ("prediction" in args) == ("prediction_id" in args):
        given = "both" if "prediction" in args else "neither"
        raise InvalidInputError(
            f"{given} of 'prediction' and 'prediction_id' given; give one: 'prediction' "
            "(what the user decides) or 'prediction_id' (an existing prediction, e.g. the "
            "similar one an earlier answer named), not both"
        )
    result = ctx.thatch.decisions.update(
        args["matcher"],
        args.get("prediction", ""),
        args["signal"],
        rationale=args.get("rationale", ""),
        store=args.get("store"),
        detail=args.get("detail", ""),
        session=_session(ctx, args),
        prediction_id=args.get("prediction_id"),
    )
    return {**to_json_data(result), "confidence": result.confidence, "evidence": result.evidence}


def _detail_data(detail: PredictionDetail, provenance: int) -> dict[str, Any]:
    """A prediction as JSON with its matchers (each with its edge weight) and provenance.

    Only the latest ``provenance`` entries are listed (oldest first);
    ``provenance_total`` counts them all (``thatch predictions show ID``
    prints every one).
    """
    entries = list(detail.provenance)
    return {
        **to_json_data(detail.prediction),
        "matchers": [
            {**to_json_data(matcher), "weight": edge.weight} for matcher, edge in detail.matchers
        ],
        "provenance": to_json_data(entries[-provenance:] if provenance else []),
        "provenance_total": len(entries),
    }


def _list(ctx: ToolContext, args: Mapping[str, Any]) -> Any:
    decisions = ctx.thatch.decisions
    offset, limit = args["offset"], args["limit"]
    chosen = decisions.list(args.get("store"))[offset : offset + limit]
    return [_detail_data(decisions.show(p.id), args["provenance"]) for p in chosen]


def _delete(ctx: ToolContext, args: Mapping[str, Any]) -> Any:
    decisions = ctx.thatch.decisions
    if ("id" in args) == ("statement" in args):
        raise InvalidInputError(
            "give the prediction's 'id' or its 'statement' (one of them); "
            "see both with prediction_list"
        )
    prediction_id = args["id"] if "id" in args else decisions.find(args["statement"]).id
    deleted = decisions.delete(prediction_id)
    return {"action": "deleted", "prediction": to_json_data(deleted)}


QUERY = Tool(
    name="prediction_query",
    description=(
        "Ask the user decision model what this user tends to decide in a situation, before "
        "a choice they may have an opinion on (naming, structure, how far to refactor, which "
        "library, how to test). Describe the situation in 'context'. Returns predictions "
        "best first, each with its statement, the situation it was learned in (matcher), "
        "confidence (0 to 1), tests (how many times feedback confirmed or contradicted it) "
        "and score. Follow strong ones (confidence >= 0.7 with several tests); for weak or "
        "conflicting ones, say what you would do and ask the user. With a session, each "
        "prediction returned is logged as shown, for calibration (the only write)."
    ),
    input_schema=arguments(
        {
            "context": string(
                "The situation, in a sentence or two: what you are about to decide.",
                max_length=MAX_TEXT,
            ),
            "store": STORE_SCOPE,
            "limit": integer(
                "How many predictions at most.", minimum=1, maximum=MAX_PREDICTIONS, default=10
            ),
            "session_id": SESSION,
        },
        "context",
    ),
    handler=_query,
    # Not read-only: with a session it logs a showing of each prediction returned.
    read_only=False,
)

UPDATE = Tool(
    name="prediction_update",
    description=(
        "Teach the user decision model how this user decides. Call it when the user states "
        "a preference, corrects you, answers a question about how to proceed, or explicitly "
        "confirms a choice. 'matcher' is the situation ('reviewing a pull request that "
        "touches old code'); 'prediction' is what the user chooses there ('leave unrelated "
        "debt alone'); 'signal' is create (a new preference they stated), confirm (they "
        "agreed or chose it), disconfirm (they rejected or corrected it) or soft (they "
        "hesitated or partly disagreed). Situations close to existing ones are merged with "
        "them, and so are statements that restate an existing one; a statement that may be "
        "an opposite or another preference is kept apart, and the answer's 'similar' names "
        "the closest existing prediction (id, statement, cosine, reason): if the user meant "
        "that one, call again with its 'prediction_id'. Returns the outcome (created, "
        "linked, reinforced, weakened, unchanged), the prediction with its new confidence, "
        "the matcher and 'similar' (or null)."
    ),
    input_schema=arguments(
        {
            "matcher": string("The situation, in a sentence.", max_length=MAX_TEXT),
            "prediction": string("What the user decides in it.", max_length=MAX_TEXT),
            "prediction_id": integer(
                "An existing prediction of the store to record this on, instead of "
                "'prediction': the 'similar' one an answer named, when the user meant it.",
                minimum=1,
            ),
            "signal": string("What the user's reaction says.", enum=SIGNALS),
            "rationale": string(
                "Why the user decides so, if known.", min_length=0, max_length=MAX_TEXT
            ),
            "detail": string(
                "What the user said or did, briefly.", min_length=0, max_length=MAX_TEXT
            ),
            "store": string(
                "Where the preference applies: 'global' (every project) or 'owner/repo'. "
                "Default: this project's store (global outside a git repository).",
                max_length=MAX_STORE,
            ),
            "session_id": SESSION,
        },
        "matcher",
        "signal",
    ),
    handler=_update,
)

LIST = Tool(
    name="prediction_list",
    description=(
        "List the predictions of the user decision model of this project's store and global, "
        "one store, or 'all': each with its id, statement, rationale, confidence, confirm and "
        "disconfirm counts, the situations (matchers) it is linked to with their weights, and "
        "its latest provenance entries (feedback signal, when, what the user said) with "
        "'provenance_total', the count of all. By id, at most 'limit' from 'offset': fewer "
        "than 'limit' means the end; the next page starts at offset + limit."
    ),
    input_schema=arguments(
        {
            "store": STORE_SCOPE,
            "limit": integer(
                "How many predictions at most.",
                minimum=1,
                maximum=MAX_LISTED,
                default=DEFAULT_LISTED,
            ),
            "offset": integer("How many predictions to skip, by id.", minimum=0, default=0),
            "provenance": integer(
                "How many of each prediction's latest provenance entries to include.",
                minimum=0,
                maximum=MAX_PROVENANCE,
                default=DEFAULT_PROVENANCE,
            ),
        }
    ),
    handler=_list,
    read_only=True,
)

DELETE = Tool(
    name="prediction_delete",
    description=(
        "Delete a prediction for good, with its links to situations and its feedback "
        "history. Use it when a prediction is plainly wrong (a disconfirm signal is the "
        "usual correction) or the user asks. Name it by 'id' (from prediction_list or "
        "prediction_query) or by its exact 'statement'; a statement that several "
        "predictions share is refused with their ids. Returns the deleted prediction."
    ),
    input_schema=arguments(
        {
            "id": integer("The prediction's id.", minimum=1),
            "statement": string(
                "The prediction's statement, as prediction_list shows it (instead of 'id').",
                max_length=MAX_TEXT,
            ),
        }
    ),
    handler=_delete,
    destructive=True,
    idempotent=True,
)

TOOLS = (QUERY, UPDATE, LIST, DELETE)
