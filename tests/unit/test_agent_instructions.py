"""The agent's instructions: written once, rendered per harness, sent through one channel."""

from __future__ import annotations

import pytest
from thatch.decisions.nudge import HEADER, UNTESTED
from thatch.instructions import agent as agent_instructions
from thatch.instructions.agent import (
    POINTER,
    TOOLS,
    decision_model,
    instructions,
    memory_workflow,
    server_instructions,
)
from thatch.instructions.briefing import BRIEFING
from thatch.instructions.workflows import workflows
from thatch.plugin.config import Config
from thatch.plugin.setup import Briefing
from thatch.plugins import Plugins
from thatch.tools import ToolRegistry


def test_every_tool_the_text_names_exists() -> None:
    assert set(TOOLS) <= {tool["name"] for tool in ToolRegistry().describe()}


@pytest.mark.parametrize("prefix", ["", "thatch_", "mcp__thatch__"])
def test_every_tool_is_named_with_the_channels_prefix(prefix: str) -> None:
    text = instructions(prefix)
    for tool in TOOLS:
        assert f"`{prefix}{tool}`" in text, tool
        assert text.count(tool) == text.count(f"`{prefix}{tool}`"), tool


def test_the_text_holds_both_pieces_under_headings() -> None:
    text = instructions("thatch_", level=2)
    assert text.startswith(f"## {agent_instructions.TITLE}\n\n")
    assert f"\n### {agent_instructions.DECISIONS_TITLE}\n\n" in text
    assert memory_workflow("thatch_") in text
    assert text.endswith(decision_model("thatch_"))


def test_the_decision_model_piece_quotes_the_blocks_own_format() -> None:
    text = decision_model()
    assert f'headed "{HEADER}"' in text
    assert '    - [0.72 conf, 4 tests] When <situation>: you tend to choose "<choice>"\n' in text
    assert f'"{UNTESTED}"' in text
    assert "ask the user before acting" in text


def test_the_memory_piece_tells_how_to_answer_the_extraction_nudge() -> None:
    text = " ".join(memory_workflow().split())
    for step in (
        "`memory_recall`",
        "`memory_remember`",
        "`extraction_done` with that exact session id",
    ):
        assert step in text


@pytest.mark.parametrize("prefix", ["", "thatch_"])
def test_lines_are_refilled_after_the_prefix(prefix: str) -> None:
    for row in instructions(prefix).splitlines():
        assert len(row) <= 78 or row.startswith("    "), row


@pytest.mark.parametrize(
    ("harness", "scope", "pointer"),
    [
        ("claude", "project", False),  # Claude Code's CLAUDE.md only points here
        (None, None, False),  # an MCP client thatch does not know
        ("cursor", "project", True),  # the project's rule has the text
        ("cursor", "global", False),  # Cursor keeps no rule files outside a project
        ("cursor", None, False),  # the setup is incomplete: the rule may be missing
        ("opencode", "project", True),
        ("opencode", "global", True),  # the global instructions file
        ("opencode", None, False),
    ],
)
def test_the_server_sends_the_text_unless_the_harness_file_has_it(
    harness: str | None, scope: str | None, pointer: bool
) -> None:
    installed = Plugins.load(Config.load(None, environ={})).harnesses()
    file_scopes = installed[harness].instruction_scopes if harness else frozenset()
    expected = POINTER if pointer else instructions()
    assert server_instructions(scope, file_scopes) == expected


def test_the_briefing_setup_hands_harnesses_is_the_instructions_and_workflows() -> None:
    assert BRIEFING.instructions("thatch_", level=2) == instructions("thatch_", level=2)
    assert BRIEFING.workflows("thatch_", "agent") == workflows("thatch_", "agent")
    assert isinstance(BRIEFING, Briefing)
