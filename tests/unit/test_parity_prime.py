"""Parity with the original's ``thatch prime`` (UC-010): which agent CLI runs, and how."""

from __future__ import annotations

from thatch import prime
from thatch_claude.harness import ClaudeHarness
from thatch_cursor.harness import CursorHarness
from thatch_opencode.harness import OpencodeHarness

SHIPPED = (ClaudeHarness(), CursorHarness(), OpencodeHarness())


def test_uc010_cursor_agent_runs_without_an_mcp_approval_prompt() -> None:
    command = prime.choose(
        "cursor-agent", harnesses=SHIPPED, which={"cursor-agent": "/opt/cursor-agent"}.get
    )
    # Print mode, MCP servers approved, and the prompt last (its only positional argument).
    assert command == ["/opt/cursor-agent", "-p", "--approve-mcps", prime.PRIMER_PROMPT]


def test_uc010_the_most_installed_harness_is_tried_first() -> None:
    everything = {"opencode": "/bin/opencode", "claude": "/bin/claude", "cursor-agent": "/bin/ca"}
    programs = [harness.prime_command("hi")[0] for harness in SHIPPED]  # type: ignore[index]
    assert programs == ["claude", "cursor-agent", "opencode"]
    assert prime.choose(harnesses=SHIPPED, which=everything.get)[0] == "/bin/claude"
    without_claude = {**everything, "claude": None}
    assert prime.choose(harnesses=SHIPPED, which=without_claude.get)[0] == "/bin/ca"
