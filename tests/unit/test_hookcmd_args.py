"""The hook commands' own argument parsing, and when it leaves the line to argparse."""

from __future__ import annotations

import pytest
from thatch.hookcmd import HOOK_COMMANDS, HookArgs, main, parse


@pytest.mark.parametrize(
    ("argv", "expected"),
    [
        (["reminder"], HookArgs("reminder")),
        (["reminder", "--json"], HookArgs("reminder", json=True)),
        (["buffer-batch"], HookArgs("buffer-batch")),
        (["buffer-tool"], HookArgs("buffer-tool")),
        (["flush-tools", "--json"], HookArgs("flush-tools", json=True)),
        (["flush-predictions"], HookArgs("flush-predictions")),
        (["hook", "claude", "Stop"], HookArgs("hook", "claude", "Stop")),
        (["hook", "--json", "cursor", "stop"], HookArgs("hook", "cursor", "stop", json=True)),
        (["--home", "/h", "flush-tools"], HookArgs("flush-tools", home="/h")),
        (["flush-tools", "--home", "/h"], HookArgs("flush-tools", home="/h")),
        (["--home=/h", "buffer-tool"], HookArgs("buffer-tool", home="/h")),
        (["buffer-tool", "--home=/a", "--home", "/b"], HookArgs("buffer-tool", home="/b")),
        (["--home=", "reminder"], HookArgs("reminder")),
        (["hook", "-", "Stop"], HookArgs("hook", "-", "Stop")),
    ],
)
def test_hook_command_lines_are_parsed(argv: list[str], expected: HookArgs) -> None:
    assert parse(argv) == expected


@pytest.mark.parametrize(
    "argv",
    [
        [],
        ["remember", "label", "content"],
        ["search", "reminder"],
        ["--home", "/h", "list"],
        ["reminder", "-h"],
        ["--help", "flush-tools"],
        ["hook", "claude"],
        ["hook", "claude", "Stop", "extra"],
        ["reminder", "extra"],
        ["buffer-tool", "--json"],
        ["buffer-batch", "--json"],
        ["--json", "reminder"],
        ["reminder", "--js"],
        ["reminder", "--verbose"],
        ["reminder", "--home"],
        ["reminder", "--home", "--json"],
        ["hook", "--", "claude", "Stop"],
    ],
)
def test_other_lines_are_left_to_argparse(argv: list[str]) -> None:
    assert parse(argv) is None
    assert main(argv) is None


def test_every_hook_command_is_in_the_argparse_cli() -> None:
    from thatch.cli.parser import build_parser

    parser = build_parser()
    for command, positionals in HOOK_COMMANDS.items():
        argv = [command, *(["h", "e"][:positionals])]
        args = parser.parse_args(argv)
        assert args.command == command


def test_hook_args_compare_by_value() -> None:
    assert HookArgs("hook", "a", "b") != HookArgs("hook", "a", "c")
    assert len({HookArgs("reminder"), HookArgs("reminder")}) == 1
    assert "reminder" in repr(HookArgs("reminder"))
