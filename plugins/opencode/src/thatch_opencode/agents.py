"""The memory workflows as opencode subagents: ``agents/<name>.md``, one per workflow.

opencode reads agent files from ``.opencode/agents/`` (project) and
``agents/`` in its config folder (global): front matter, then the body as
the agent's prompt. ``mode: subagent`` puts the agent in the list the main
agent delegates to by description, so the description also says what to
hand over (a subagent sees only its task, not the conversation). The text is
the workflows of ``SetupContext.briefing``, tools named as opencode shows them.
"""

from __future__ import annotations

import json

from thatch.plugin.setup import Briefing, Workflow

from thatch_opencode.instructions import TOOL_PREFIX

#: The folder, inside ``.opencode/`` or opencode's config folder, that holds agent files.
AGENTS_FOLDER = "agents"

#: What opencode calls a workflow, as the workflows' text refers to itself.
WORKFLOW_KIND = "agent"

_SUBAGENT_NOTE = """\
You run as a subagent of an opencode session: the task the main agent gave
you is all you see of that conversation. If it lacks something this
procedure needs, say what is missing. You do not talk to the user: where the
procedure says to tell or ask the user, or to answer their prompt, put that
in your reply for the main agent to pass on.

"""


def agent_files(briefing: Briefing) -> dict[str, str]:
    """Each of ``briefing``'s workflows as an agent: file name in the agents folder -> its text."""
    return {
        f"{workflow.name}.md": _agent_text(workflow)
        for workflow in briefing.workflows(TOOL_PREFIX, WORKFLOW_KIND)
    }


def _agent_text(workflow: Workflow) -> str:
    # A JSON string is a YAML double-quoted scalar: no text can break the front matter.
    description = json.dumps(f"{workflow.description} {workflow.handoff}", ensure_ascii=False)
    front_matter = f"---\ndescription: {description}\nmode: subagent\n---\n\n"
    return front_matter + _SUBAGENT_NOTE + workflow.body
