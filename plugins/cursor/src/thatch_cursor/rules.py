"""The Cursor rule file ``.cursor/rules/thatch.mdc``: how the agent uses thatch.

Cursor reads ``.mdc`` files in ``.cursor/rules/`` (plain ``.md`` there is
ignored) and, with ``alwaysApply: true``, puts the rule in every request.
The rule is Cursor's one channel for the workflow: it holds the whole text
of :mod:`thatch.agent_instructions`, and the MCP server sends only a pointer
to it once the project's setup is in place.
"""

from __future__ import annotations

from thatch.agent_instructions import instructions

#: Shown in Cursor's rule list; says when the rule matters. A plain YAML
#: scalar: no ": " and no leading quote or bracket, so it needs no quoting.
DESCRIPTION = (
    "How to use thatch, the user's local long-term memory and decision model - "
    "when to recall, what to save, how to answer its nudges"
)

_CURSOR_NOTES = """\
## In Cursor

thatch's tools come from the MCP server named "thatch". The session id its
nudges name is this conversation's id; pass it on exactly as the nudge gives
it.
"""


def rule_text() -> str:
    """The whole ``thatch.mdc`` file: front matter, then the instructions."""
    front_matter = f"---\ndescription: {DESCRIPTION}\nglobs:\nalwaysApply: true\n---\n"
    return f"{front_matter}{instructions(level=1)}\n{_CURSOR_NOTES}"
