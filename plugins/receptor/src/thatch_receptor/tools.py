"""The receptor's MCP tools: the agent reads its notes and answers its offers.

``receptor_notes`` returns what the receptor prepared while the agent worked
(knowledge found for a wall it hit, insights worth saving) and the open offers;
``receptor_offer`` accepts an offer (its findings are returned) or dismisses it,
which lowers the sensitivity of the offer's pattern.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

from thatch.plugin import InvalidInputError, Tool

if TYPE_CHECKING:
    from thatch.plugin import ToolContext

    from thatch_receptor.service import ReceptorService

#: Finds the daemon's receptor for a tool call (None: not running in this daemon).
ServiceOf = Callable[["ToolContext"], "ReceptorService | None"]

_SESSION = {
    "type": "string",
    "description": "Your session id. Default: the session this call comes from, else the latest.",
    "maxLength": 200,
}


def tools(service_of: ServiceOf) -> tuple[Tool, ...]:
    """The two tools, reaching the receptor through ``service_of``."""

    def notes(ctx: ToolContext, args: Mapping[str, Any]) -> Any:
        service = _running(service_of(ctx))
        session = args.get("session_id") or ctx.session_id or service.latest_session()
        if session is None:
            return {"notes": [], "offers": []}
        return {
            "session_id": session,
            "notes": [
                {"id": note.id, "text": note.text, "reason": note.reason}
                for note in service.notes(session)
            ],
            "offers": [
                {"id": offer.id, "reason": offer.reason}
                for offer in service.deliveries.offers(session)
            ],
        }

    def offer(ctx: ToolContext, args: Mapping[str, Any]) -> Any:
        service = _running(service_of(ctx))
        accept = args["answer"] == "accept"
        answered = service.answer_offer(args["id"], accept=accept)
        if answered is None:
            raise InvalidInputError(
                f"no open receptor offer {args['id']!r}: it was answered already or its session "
                "ended; call receptor_notes for the open ones"
            )
        if accept:
            return {"id": answered.id, "accepted": True, "found": answered.text}
        return {"id": answered.id, "accepted": False, "pattern": answered.pattern}

    return (
        Tool(
            name="receptor_notes",
            description=(
                "Read what thatch prepared while you worked: knowledge found when you seemed "
                "stuck, and things you worked out that are worth saving. Call it when a hook "
                "says notes wait. Returns the unread notes (now read) and the open offers."
            ),
            input_schema={
                "type": "object",
                "properties": {"session_id": _SESSION},
                "additionalProperties": False,
            },
            handler=notes,
        ),
        Tool(
            name="receptor_offer",
            description=(
                "Answer an offer of thatch's receptor ('Search related knowledge?'): accept "
                "returns what it found; dismiss says it was not useful now, and such offers "
                "come less often."
            ),
            input_schema={
                "type": "object",
                "properties": {
                    "id": {
                        "type": "string",
                        "description": "The offer's id (r12).",
                        "maxLength": 40,
                    },
                    "answer": {"type": "string", "enum": ["accept", "dismiss"]},
                },
                "required": ["id", "answer"],
                "additionalProperties": False,
            },
            handler=offer,
        ),
    )


def _running(service: ReceptorService | None) -> ReceptorService:
    if service is None:
        raise InvalidInputError(
            "the receptor is not running in this daemon: it is off ([receptor] enabled = false) "
            "or its plugin failed to start; see thatch doctor"
        )
    return service
