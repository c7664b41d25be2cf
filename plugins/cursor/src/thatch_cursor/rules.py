"""The Cursor rule files in ``.cursor/rules/``: how the agent uses thatch.

Cursor reads ``.mdc`` files in ``.cursor/rules/`` (plain ``.md`` there is
ignored) and, with ``alwaysApply: true``, puts the rule in every request.
``thatch.mdc`` is Cursor's one channel for the workflow: it holds the whole
text of thatch's instructions (``SetupContext.briefing``), and the MCP
server sends only a pointer to it once the project's setup is in place.

The longer procedures (the briefing's workflows) are one rule each,
``<name>.mdc`` with ``alwaysApply: false`` and a description: Cursor shows
the agent the description and the agent pulls the rule in when it applies,
as Claude Code does with a skill.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from thatch.plugin.setup import Briefing

#: The always-applied rule's file name in ``.cursor/rules/``.
RULE_FILE_NAME = "thatch.mdc"

#: What Cursor calls a workflow, as the workflows' text refers to itself.
WORKFLOW_KIND = "rule"

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

The longer procedures are rules of their own; read the one whose description
fits:

{names}
"""


def rule_text(briefing: Briefing) -> str:
    """The whole ``thatch.mdc`` file: front matter, then ``briefing``'s instructions."""
    front_matter = _front_matter(DESCRIPTION, always_apply=True)
    workflows = briefing.workflows(kind=WORKFLOW_KIND)
    names = "\n".join(f"- `{workflow.name}`" for workflow in workflows)
    return f"{front_matter}{briefing.instructions(level=1)}\n{_CURSOR_NOTES.format(names=names)}"


def workflow_rules(briefing: Briefing) -> dict[str, str]:
    """Each workflow's rule: file name in ``.cursor/rules/`` -> its text.

    Tool names are bare: Cursor lists MCP tools under their server by the
    server's own names.
    """
    return {
        f"{workflow.name}.mdc": _front_matter(workflow.description, always_apply=False)
        + workflow.body
        for workflow in briefing.workflows(kind=WORKFLOW_KIND)
    }


def _front_matter(description: str, *, always_apply: bool) -> str:
    """Cursor's front matter; ``description`` goes in as a plain scalar, as Cursor writes it.

    Cursor's parser is not full YAML, so the text must not need quoting.
    """
    if ": " in description or description[:1] in "\"'[{":
        raise ValueError(f"a Cursor rule description must not need YAML quoting: {description!r}")
    apply = "true" if always_apply else "false"
    return f"---\ndescription: {description}\nglobs:\nalwaysApply: {apply}\n---\n"
