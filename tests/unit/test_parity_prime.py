"""Parity with the original's ``thatch prime`` (UC-010): which agent CLI runs, and how."""

from __future__ import annotations

from thatch import prime


def test_uc010_cursor_agent_runs_without_an_mcp_approval_prompt() -> None:
    command = prime.choose("cursor-agent", which={"cursor-agent": "/opt/cursor-agent"}.get)
    # Print mode, MCP servers approved, and the prompt last (its only positional argument).
    assert command == ["/opt/cursor-agent", "-p", "--approve-mcps", prime.PRIMER_PROMPT]


def test_uc010_the_most_installed_harness_is_tried_first() -> None:
    everything = {"opencode": "/bin/opencode", "claude": "/bin/claude", "cursor-agent": "/bin/ca"}
    assert [harness.binary for harness in prime.HARNESSES] == ["claude", "cursor-agent", "opencode"]
    assert prime.choose(which=everything.get)[0] == "/bin/claude"
    without_claude = {**everything, "claude": None}
    assert prime.choose(which=without_claude.get)[0] == "/bin/ca"
