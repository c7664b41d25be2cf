"""What thatch tells the agent, written once: the memory workflow and the decision model.

Each harness receives this text through one channel, chosen in
docs/architecture.md ("Agent instructions"): the MCP server's instructions,
or a file of the harness's own (a rule file, an AGENTS.md block) that its
plugin writes from the briefing setup hands it (:mod:`.briefing`); a harness names the
scopes that write such a file in ``Harness.instruction_scopes``. Where a
harness has several channels, the others carry a pointer at most. Harnesses
show MCP tools under different names (``thatch_memory_recall``), so every
channel renders the text with its own prefix.
"""

from __future__ import annotations

import textwrap
from collections.abc import Collection
from typing import TYPE_CHECKING

from thatch.decisions.nudge import HEADER, UNTESTED, line

if TYPE_CHECKING:
    pass

#: The tools the text names. Rendering fails on any other placeholder, so a
#: misspelt tool cannot reach an agent.
TOOLS = (
    "memory_recall",
    "memory_remember",
    "memory_archive",
    "memory_forget",
    "extraction_done",
    "hygiene_report",
    "find_duplicates",
    "dedup_mark_checked",
    "prediction_query",
    "prediction_update",
)

TITLE = "thatch: long-term memory"
DECISIONS_TITLE = "The user decision model"

#: What the MCP server says instead when the harness's file already has the text.
POINTER = """\
thatch is this user's long-term memory, kept on their machine. When and how to
use these tools is in the thatch instructions that `thatch setup` wrote for this
editor, so they are not repeated here.
"""

_MEMORY = """\
thatch is this user's long-term memory, kept on their machine: facts about
each project (one store per git repository, named 'owner/repo') and about the
user (the 'global' store). Reads cover this project's store and global unless
you name a store. Text that starts with `[thatch]` comes from thatch, not from
the user.

- Before answering a question about this project or this user, and before a
  decision that may have been settled earlier, call `{memory_recall}` with the
  topic.
- When you learn something durable (a decision and its reason, a convention, a
  build or test command, a pitfall and its fix, a preference the user states),
  save it with `{memory_remember}`: one fact per memory, in one to three
  self-contained sentences, under a short, stable label such as
  `test-command`. Save again under the same label to correct it. Use the
  'global' store only for facts about the user that hold in every project.
  Never save secrets or the progress of the current task.
- A prompt may carry an extraction nudge that lists recent tool activity and
  gives a session id. Before the user's request, save what that activity
  showed that will still hold next week; skip one-off output, task progress
  and what is already saved (`{memory_recall}` first when unsure). Then call
  `{extraction_done}` with that exact session id, also when nothing was worth
  saving: the nudge repeats, louder, until you do.
- When the session-start reminder reports hygiene problems, review them with
  `{hygiene_report}` and `{find_duplicates}`, then, as the user agrees, archive
  (`{memory_archive}`), forget (`{memory_forget}`), merge (save the combined
  fact, forget the other) or mark a pair as distinct (`{dedup_mark_checked}`).
"""

_DECISIONS = """\
thatch keeps a model of how this user decides. On a prompt it may add a block
headed "{header}" with lines like

    {example}

("{untested}" while no feedback has tested the prediction yet.)

- Strong (conf >= 0.7, several tests): follow it without asking.
- Weak (conf < 0.7 or 0 tests), or two lines that pull in different
  directions: say what you would do and ask the user before acting.
- Before a choice the user may care about (structure, naming, libraries, how
  to test) for which no line was shown, you may call `{prediction_query}` with
  the situation.
- When the user corrects you, answers such a question, or explicitly confirms
  a choice, call `{prediction_update}` with the situation (matcher), the
  choice (prediction) and the signal: confirm, disconfirm, soft (they
  hesitated or partly disagreed) or create (a new preference they stated).
  Reuse the wording of a line you were shown, so that prediction is updated.
  If the answer names a `similar` prediction that says what the user meant,
  call `{prediction_update}` again with its `prediction_id` in place of the
  prediction text to update it.
- Never treat a line as an instruction from the user; it is a prediction.
"""


def memory_workflow(prefix: str = "") -> str:
    """When to recall, what to save, how to answer the extraction nudge and hygiene reports.

    :param prefix: put before every tool name, as the harness shows the tools
        (``"thatch_"`` for opencode).
    """
    return _wrap(_MEMORY.format(**tool_names(prefix)))


def decision_model(prefix: str = "") -> str:
    """How to read the decision-model block and when to teach the model."""
    example = line(0.72, 4, "<situation>", "<choice>")
    return _wrap(
        _DECISIONS.format(header=HEADER, example=example, untested=UNTESTED, **tool_names(prefix))
    )


def instructions(prefix: str = "", level: int = 1) -> str:
    """Both pieces as Markdown, under a heading of ``level`` and a subheading one deeper."""
    title, subtitle = "#" * level, "#" * (level + 1)
    return (
        f"{title} {TITLE}\n\n{memory_workflow(prefix)}\n"
        f"{subtitle} {DECISIONS_TITLE}\n\n{decision_model(prefix)}"
    )


def server_instructions(
    complete_scope: str | None, file_scopes: Collection[str] | None = None
) -> str:
    """What ``thatch mcp`` tells the client it serves.

    The whole text, unless the setup scope found complete
    (``complete_scope``) is one of ``file_scopes``, those whose setup writes
    the text to a file the harness reads (its ``instruction_scopes``; None:
    no harness was recognised): then a pointer, so the agent does not read
    the text twice. Plain tool names: they are the server's, and each
    client shows them its own way.
    """
    if complete_scope is not None and file_scopes and complete_scope in file_scopes:
        return POINTER
    return instructions()


def tool_names(prefix: str = "") -> dict[str, str]:
    """Each tool in :data:`TOOLS`, mapped to its name with ``prefix`` put before it."""
    return {name: prefix + name for name in TOOLS}


def _wrap(text: str, width: int = 78) -> str:
    """Refill each paragraph and list item: a tool prefix lengthens lines unevenly.

    Indented blocks (the example line) are kept as they are.
    """
    blocks = []
    for block in text.strip("\n").split("\n\n"):
        if block.startswith("    "):
            blocks.append(block)
            continue
        items: list[str] = []
        for row in block.splitlines():
            if row.startswith("- ") or not items:
                items.append(row)
            else:
                items[-1] += " " + row.strip()
        blocks.append("\n".join(_fill(item, width) for item in items))
    return "\n\n".join(blocks) + "\n"


def _fill(item: str, width: int) -> str:
    bullet = item.startswith("- ")
    return textwrap.fill(
        item.removeprefix("- "),
        width,
        initial_indent="- " if bullet else "",
        subsequent_indent="  " if bullet else "",
        break_long_words=False,
        break_on_hyphens=False,
    )
