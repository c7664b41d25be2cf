"""`thatch prime` picks a harness CLI; `thatch install` builds the right installer command."""

from __future__ import annotations

import sys

import pytest
from thatch import prime
from thatch.cli import plugin_commands
from thatch.plugin.errors import InvalidInputError
from thatch.plugin.harness import HarnessBase
from thatch_claude.harness import ClaudeHarness
from thatch_cursor.harness import CursorHarness
from thatch_opencode.harness import OpencodeHarness

#: The harnesses thatch ships, as ``thatch prime`` finds them installed.
SHIPPED = (ClaudeHarness(), CursorHarness(), OpencodeHarness())


def test_prime_uses_the_first_harness_on_path() -> None:
    found = {"claude": "/usr/bin/claude", "cursor-agent": "/opt/cursor-agent"}
    command = prime.choose(harnesses=SHIPPED, which=found.get)
    assert command == ["/usr/bin/claude", "-p", prime.PRIMER_PROMPT]


def test_prime_prefers_claude_and_honours_a_choice() -> None:
    found = {"opencode": "/bin/opencode", "claude": "/bin/claude"}
    assert prime.choose(harnesses=SHIPPED, which=found.get)[:2] == ["/bin/claude", "-p"]
    assert prime.choose("opencode", harnesses=SHIPPED, which=found.get)[:2] == [
        "/bin/opencode",
        "run",
    ]
    assert prime.choose("cursor-agent", harnesses=SHIPPED, which={"cursor-agent": "/c"}.get)[
        :2
    ] == ["/c", "-p"]


def test_prime_says_what_to_install_when_nothing_is_found() -> None:
    with pytest.raises(prime.NoHarnessError, match="none of claude, cursor-agent, opencode"):
        prime.choose(harnesses=SHIPPED, which=lambda name: None)
    with pytest.raises(prime.NoHarnessError, match="unknown harness 'vim'"):
        prime.choose("vim", harnesses=SHIPPED, which=lambda name: "/bin/vim")


def test_prime_says_how_to_install_each_program() -> None:
    with pytest.raises(prime.NoHarnessError, match="npm install -g opencode-ai"):
        prime.choose(harnesses=SHIPPED, which=lambda name: None)


class Agent(HarnessBase):
    name = "agent"
    title = "Agent"

    def prime_command(self, prompt: str) -> tuple[str, ...]:
        return ("agent-cli", "--once", prompt)


def test_prime_runs_what_any_installed_harness_says() -> None:
    command = prime.choose(harnesses=[HarnessBase(), Agent()], which={"agent-cli": "/a"}.get)
    assert command == ["/a", "--once", prime.PRIMER_PROMPT]
    with pytest.raises(prime.NoHarnessError, match=r"choose one of: agent$"):
        prime.choose("claude", harnesses=[HarnessBase(), Agent()], which=lambda name: "/x")


def test_prime_returns_the_child_status() -> None:
    assert prime.run([sys.executable, "-c", "raise SystemExit(3)"]) == 3


@pytest.mark.parametrize(
    ("name", "expected"),
    [("claude", "thatch-claude"), ("opencode", "thatch-opencode"), ("my-plugin", "my-plugin")],
)
def test_short_names_are_thatch_distributions(name: str, expected: str) -> None:
    assert plugin_commands.distribution(name) == expected


def test_an_option_is_not_a_plugin_name() -> None:
    with pytest.raises(InvalidInputError, match="not a name"):
        plugin_commands.distribution("--force")


def test_install_targets_this_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(plugin_commands.shutil, "which", lambda name: "/bin/uv")
    assert plugin_commands.installer("install", "thatch-claude") == [
        "/bin/uv",
        "pip",
        "install",
        "--python",
        sys.executable,
        "thatch-claude",
    ]
    monkeypatch.setattr(plugin_commands.shutil, "which", lambda name: None)
    assert plugin_commands.installer("uninstall", "thatch-claude") == [
        sys.executable,
        "-m",
        "pip",
        "uninstall",
        "-y",
        "thatch-claude",
    ]
