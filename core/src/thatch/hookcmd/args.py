"""The hook commands' arguments, parsed without argparse.

Only the plain forms are recognised here; anything else (``-h``, abbreviated
or unknown options, ``--``) returns None so argparse can answer it.
"""

from __future__ import annotations

# Not typing.TYPE_CHECKING: a hook command does not import typing.
TYPE_CHECKING = False
if TYPE_CHECKING:
    pass

#: Hook commands and how many positional arguments each takes.
HOOK_COMMANDS = {
    "reminder": 0,
    "buffer-batch": 0,
    "buffer-tool": 0,
    "flush-tools": 0,
    "flush-predictions": 0,
    "hook": 2,
}
#: Commands that accept ``--json`` (the others reject it, as argparse does).
JSON_COMMANDS = frozenset({"reminder", "flush-tools", "flush-predictions", "hook"})


class HookArgs:
    """One hook command line: the command, ``hook``'s two arguments and the options."""

    __slots__ = ("command", "event", "harness", "home", "json")

    def __init__(
        self,
        command: str,
        harness: str | None = None,
        event: str | None = None,
        home: str | None = None,
        json: bool = False,
    ) -> None:
        self.command = command
        self.harness = harness
        self.event = event
        self.home = home
        self.json = json

    def _key(self) -> tuple[object, ...]:
        return (self.command, self.harness, self.event, self.home, self.json)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, HookArgs) and self._key() == other._key()

    def __hash__(self) -> int:
        return hash(self._key())

    def __repr__(self) -> str:
        fields = ", ".join(
            f"{name}={value!r}" for name, value in zip(self.__slots__, self._key(), strict=True)
        )
        return f"HookArgs({fields})"


def parse(argv: list[str]) -> HookArgs | None:
    """``argv`` (without the program name) as a hook command, or None for argparse."""
    positionals: list[str] = []
    home: str | None = None
    json_flag = False
    json_before_command = False
    index = 0
    while index < len(argv):
        token = argv[index]
        index += 1
        if token == "--home":
            if index >= len(argv) or _looks_like_option(argv[index]):
                return None
            home = argv[index]
            index += 1
        elif token.startswith("--home="):
            home = token.partition("=")[2]
        elif token == "--json":
            json_flag = True
            json_before_command = json_before_command or not positionals
        elif _looks_like_option(token):
            # -h, --help, --, abbreviations and unknown options: argparse's job.
            return None
        else:
            positionals.append(token)
    if not positionals or positionals[0] not in HOOK_COMMANDS:
        return None
    command, rest = positionals[0], positionals[1:]
    if len(rest) != HOOK_COMMANDS[command]:
        return None
    if json_flag and (json_before_command or command not in JSON_COMMANDS):
        return None
    harness, event = (rest[0], rest[1]) if rest else (None, None)
    return HookArgs(command, harness, event, home or None, json_flag)


def _looks_like_option(token: str) -> bool:
    # A lone "-" is a positional argument for argparse too.
    return token.startswith("-") and token != "-"
