"""The wall the agent hit, in words: what the probe looks for, and what the agent is told.

When an interpretation calls for knowledge, the daemon describes the current
problem from the session's recent actions — the failing commands with their
error text first, then the searches and the paths worked on — and asks the
probe which accumulated knowledge resonates with it. :func:`delivery_text`
turns the best resonant memory into the few lines the agent reads.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING

import attrs
from thatch.plugin import redact_secrets

if TYPE_CHECKING:
    from thatch.plugin import Interpretation

    from thatch_receptor.actions import Action

#: Actions of a session the problem is described from, newest last.
RECENT_ACTIONS = 20
#: Problem texts at most: failing actions first, then searches and paths.
MAX_PROBLEM_TEXTS = 4
#: Longest memory text quoted in a delivery; the agent can open the rest.
MAX_QUOTE = 360


@attrs.frozen
class Problem:
    """The current problem: a few texts (the probe's problem node) and the recall query."""

    texts: tuple[str, ...]
    #: What recall is asked with: the latest failure's error, else the latest text.
    query: str
    #: The latest failing action's short text, named in the delivery.
    failing: str | None = None


class RecentActions:
    """A session's last :data:`RECENT_ACTIONS` actions (one reader thread adds to it)."""

    def __init__(self) -> None:
        self._actions: deque[Action] = deque(maxlen=RECENT_ACTIONS)

    def add(self, actions: Iterable[Action]) -> None:
        self._actions.extend(actions)

    def problem(self) -> Problem | None:
        """The problem these actions describe; None when there is nothing to go on."""
        return problem_of(tuple(self._actions))


def problem_of(actions: Sequence[Action]) -> Problem | None:
    """The problem of ``actions`` (oldest first), every text redacted."""
    failing = [action for action in reversed(actions) if action.failed]
    searches = [action for action in reversed(actions) if action.kind == "search" and action.query]
    texts: list[str] = []
    for action in [*failing, *searches]:
        if action.text not in texts:
            texts.append(action.text)
    paths = list(dict.fromkeys(path for action in reversed(actions) for path in action.paths))
    if paths and len(texts) < MAX_PROBLEM_TEXTS:
        texts.append("working on " + ", ".join(paths[:4]))
    if not texts and actions:
        texts.append(actions[-1].text)
    if not texts:
        return None
    texts = [redact_secrets(text) for text in texts[:MAX_PROBLEM_TEXTS]]
    latest = failing[0] if failing else None
    query = (latest.error or latest.text) if latest is not None else texts[0]
    return Problem(
        texts=tuple(texts),
        query=redact_secrets(query),
        failing=redact_secrets(latest.text) if latest is not None else None,
    )


def delivery_text(
    interpretation: Interpretation,
    problem: Problem,
    memory_label: str,
    memory_text: str,
    *,
    tool_prefix: str = "",
) -> str:
    """What the agent reads: the wall, the memory that may help, and why now."""
    quote = " ".join(memory_text.split())
    if len(quote) > MAX_QUOTE:
        quote = quote[: MAX_QUOTE - 1].rstrip() + "…"
    wall = f" after `{problem.failing}`" if problem.failing else ""
    return (
        f"[thatch receptor] You seem to be stuck{wall}. A memory that may help — "
        f'"{memory_label}": {quote}\n'
        f"Why now: {interpretation.reason} "
        f"(`{tool_prefix}memory_recall` for more; ignore this if it does not apply)"
    )


def note_text(interpretation: Interpretation, problem: Problem, found: Sequence[str]) -> str:
    """A notification's text: what was looked for, and what was found."""
    lines = [f"While you worked on {problem.failing or problem.texts[0]}: {interpretation.reason}"]
    lines += [f"- {text}" for text in found]
    return "\n".join(lines)


def break_text(interpretation: Interpretation, *, tool_prefix: str = "") -> str:
    """The alert of a ``break`` trigger: stop, save what was learned, come back."""
    return (
        f"[thatch receptor] {interpretation.reason} Consider pausing: save what you have "
        f"learned so far with `{tool_prefix}memory_remember`, then step back before the next "
        "attempt."
    )
