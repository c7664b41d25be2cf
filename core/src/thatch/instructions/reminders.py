"""The reminders' fixed wording, on the standard library only.

The daemon builds its reminders from these lines (:mod:`thatch.nudges.reminder`),
and a hook command prints them itself when no daemon can answer
(:mod:`thatch.hookcmd.fallback`, as each harness formats them in the hook
table, :mod:`thatch.hooktable`), so the two never drift apart.
"""

from __future__ import annotations

#: The session-start reminder's first line.
SESSION_TITLE = "[thatch] Memory for this session"
RECALL_LINE = (
    "- Recall: before work that past decisions may shape, call memory_recall "
    "with a question; relevant memories are also added to prompts."
)
SAVE_LINE = (
    "- Save with memory_remember: durable facts (decisions, conventions, "
    "fixes, user preferences), one per label; not passing task state."
)
EXTRACTION_LINE = (
    "- When a prompt carries thatch's extraction block, save the facts worth "
    "keeping from the tool output it lists, then call extraction_done."
)

#: The session-start reminder without what only the daemon knows (the
#: project's store, the hygiene heartbeat): how to recall and what to save.
SESSION_REMINDER_STATIC = "\n".join((SESSION_TITLE, RECALL_LINE, SAVE_LINE, EXTRACTION_LINE))

#: The tier-3 nudge of every prompt that gets no other nudge.
SAVE_REMINDER = (
    "[thatch] Learned something that will matter in later sessions (a decision, a convention, "
    "a fix, a preference)? Save it with memory_remember."
)

#: The tools the reminders name.
_NAMED_TOOLS = ("memory_recall", "memory_remember", "extraction_done")


def named(text: str, prefix: str) -> str:
    """``text`` (one of the texts above) with each tool named as the harness shows it.

    ``prefix``: the harness's ``Harness.tool_prefix`` ("" for the bare names).
    """
    for tool in _NAMED_TOOLS if prefix else ():
        text = text.replace(tool, prefix + tool)
    return text
