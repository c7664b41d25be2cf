"""JSON shapes of search results, shared by ``--json`` on the CLI and the MCP tools.

One definition each, so a script reading ``thatch search --json`` and an
agent reading ``memory_recall`` see the same fields.
"""

from __future__ import annotations

from typing import Any

from thatch.decisions.engine import PredictionHit
from thatch.memory.recall import is_relevant
from thatch.plugin.records import RecallHit


def memory_hit_data(hit: RecallHit, recall_threshold: float) -> dict[str, Any]:
    """A recall hit as a flat JSON object.

    ``relevant`` says whether its cosine clears the model's calibrated recall
    threshold: what automatic recall would have shown.
    """
    memory = hit.memory
    return {
        "label": memory.label,
        "store": memory.store,
        "content": memory.content,
        "score": hit.score,
        "cosine": hit.cosine,
        "text_rank": hit.text_rank,
        "model": memory.model,
        "branch": memory.branch,
        "relevant": is_relevant(hit, recall_threshold),
    }


def prediction_hit_data(hit: PredictionHit) -> dict[str, Any]:
    """A prediction that fits a context, with the situation that fired it."""
    prediction = hit.prediction
    return {
        "id": prediction.id,
        "store": prediction.store,
        "statement": prediction.statement,
        "rationale": prediction.rationale,
        "matcher": hit.matcher.description,
        "matcher_id": hit.matcher.id,
        "confidence": round(prediction.confidence, 4),
        "tests": hit.tests,
        "cosine": hit.cosine,
        "weight": hit.weight,
        "score": hit.score,
        "model": prediction.model,
    }
