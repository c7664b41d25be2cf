"""The five memory workflows, written once, for every harness to install in its own form.

Each workflow is a Markdown file in this package (``<name>.md``) with front
matter: ``name``, ``description`` (when an agent should pull it in) and
``handoff`` (what a caller passes when the workflow runs as a separate
agent). Claude Code installs them as skills, Cursor as rules it pulls in by
their description, opencode as subagents; each harness's setup receives
them through ``SetupContext.briefing``. The text names tools as
``{memory_recall}`` and itself as a ``{kind}``; :func:`workflows` fills in
the harness's tool names (opencode shows ``thatch_memory_recall``) and its
word for the form (skill, rule, agent).
"""

from __future__ import annotations

from importlib import resources

from thatch.instructions.agent import tool_names
from thatch.plugin.setup import Workflow

#: The workflows, in the order harnesses list them.
NAMES = (
    "thatch-project-primer",
    "thatch-fact-extractor",
    "thatch-dedup-classifier",
    "thatch-session-reflection",
    "thatch-decision-model",
)

_FIELDS = ("name", "description", "handoff")


def workflows(prefix: str = "", kind: str = "skill") -> list[Workflow]:
    """Every workflow, tools named with ``prefix`` and the form called ``kind``.

    :raises KeyError: a file names a placeholder that is neither a tool nor
        ``kind``, so a misspelt tool cannot reach an agent.
    """
    values = {**tool_names(prefix), "kind": kind}
    return [_render(name, _source(name), values) for name in NAMES]


def _source(name: str) -> str:
    return resources.files(__package__).joinpath(f"{name}.md").read_text(encoding="utf-8")


def _render(name: str, source: str, values: dict[str, str]) -> Workflow:
    front, body = _split(name, source)
    fields = {key: front[key].format(**values) for key in _FIELDS}
    if fields["name"] != name:
        raise ValueError(f"workflow file {name}.md names itself {fields['name']!r}")
    return Workflow(body=body.format(**values), **fields)


def _split(name: str, source: str) -> tuple[dict[str, str], str]:
    """The front matter as ``key: value`` lines (one line each), and the body after it."""
    _, front, body = source.split("---\n", 2)
    fields = dict(line.split(": ", 1) for line in front.splitlines())
    missing = [key for key in _FIELDS if not fields.get(key)]
    if missing:
        raise ValueError(f"workflow file {name}.md lacks {', '.join(missing)} in its front matter")
    return fields, body.lstrip("\n")
