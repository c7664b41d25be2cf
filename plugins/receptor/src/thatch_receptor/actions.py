"""Tool calls as actions: what the agent did, in a few words, whatever the harness.

A :class:`thatch.plugin.ToolCall` holds what the harness reported: the tool's
name, its input, its response, and whether it failed. The harnesses say the
same things in different places, and this module reads each from wherever one
of them puts it, keyed on tool names and fields rather than on the harness:

- the exit code: ``exitCode`` (Cursor's shell output), ``exit_code``,
  ``returncode`` or ``exit`` in a response object, or an ``Exit code N`` /
  ``<returncode>N</returncode>`` line in the error or output text (Claude
  Code's failure message, the text a failed call's batch entry carries); a
  shell call the harness did not mark failed and that names no code passed;
- the error text: :attr:`ToolCall.error` (Claude Code), ``error`` in the
  response (Cursor's failure), else the most telling line of a failed call's
  output (``AssertionError: ...``, ``FAILED ...``);
- the files touched: ``file_path``, ``filePath``, ``target_file``,
  ``notebook_path``, ``path`` in the input, the files of a patch, and the
  path-like words of a shell command;
- a search's query and result count: ``pattern``/``query``/... in the input;
  ``numFiles``, ``filenames`` or a list in the response, ``Found N ...`` or
  ``No files found`` in its text, the lines of a shell search's output (a
  ``grep`` exit 1 means no match, not a failure).

A shell command is an action of its own kind when its program says so
(``grep``/``rg``/``find`` search, ``cat``/``head``/``ls`` read, ``sed -i``
edits), so a bash-only agent's work reads like any other's.

:func:`action_of` gives one :class:`Action`, whose :attr:`Action.text` is the
short, redaction-ready line a call becomes
(``bash: pytest tests/test_auth.py -> exit 1: AssertionError token expired``).
"""

from __future__ import annotations

import contextlib
import functools
import json
import re
from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any, Literal

import attrs

if TYPE_CHECKING:
    from thatch.plugin import Event, ToolCall

#: What an action does; ``other`` is a tool the receptor has no word for.
ActionKind = Literal[
    "read", "search", "edit", "run", "delegation", "memory_read", "memory_write", "other"
]
ACTION_KINDS: tuple[ActionKind, ...] = ActionKind.__args__  # type: ignore[attr-defined]

#: Longest command, query or error text kept in an action's text.
MAX_PART = 120

_TOOL_KINDS: dict[str, ActionKind] = {
    **dict.fromkeys(
        ("bash", "shell", "run_terminal_cmd", "terminal", "exec", "execute", "command"), "run"
    ),
    **dict.fromkeys(
        ("read", "read_file", "view", "notebookread", "list", "ls", "list_dir", "webfetch"),
        "read",
    ),
    **dict.fromkeys(
        (
            "grep",
            "glob",
            "search",
            "codebase_search",
            "file_search",
            "grep_search",
            "websearch",
            "web_search",
            "find",
        ),
        "search",
    ),
    **dict.fromkeys(
        (
            "edit",
            "write",
            "multiedit",
            "notebookedit",
            "str_replace",
            "str_replace_editor",
            "search_replace",
            "edit_file",
            "apply_patch",
            "patch",
            "delete",
            "delete_file",
        ),
        "edit",
    ),
    **dict.fromkeys(("task", "agent", "subagent", "delegate"), "delegation"),
    **dict.fromkeys(("memory_recall", "memory_list", "memory_show", "recall"), "memory_read"),
    **dict.fromkeys(
        ("memory_remember", "memory_forget", "memory_archive", "remember"), "memory_write"
    ),
}

#: Shell programs that are a read, a search or an edit rather than a run.
_SHELL_KINDS: dict[str, ActionKind] = {
    **dict.fromkeys(("grep", "rg", "ag", "ack", "find", "fd", "git grep"), "search"),
    **dict.fromkeys(("cat", "head", "tail", "less", "ls", "tree", "nl", "wc", "stat"), "read"),
}
_COMMAND_KEYS = ("command", "cmd")
_PATH_KEYS = ("file_path", "filePath", "target_file", "notebook_path", "path", "target_directory")
_QUERY_KEYS = ("pattern", "query", "regex", "search_term", "q", "glob_pattern")
_COUNT_KEYS = ("numFiles", "num_files", "numMatches", "totalMatches", "count", "total")
_LIST_KEYS = ("filenames", "files", "matches", "results", "memories")
_EXIT_KEYS = ("exitCode", "exit_code", "returncode", "exit", "exitStatus")
_OUTPUT_KEYS = ("stdout", "stderr", "output", "content")
#: The keys :func:`_response_exit` looks in.
_EXIT_OR_INNER = frozenset((*_EXIT_KEYS, "response", "metadata"))
_EXIT_TEXT = re.compile(r"(?:^|\n)\s*Exit code:? (-?\d+)|<returncode>(-?\d+)</returncode>")
_EXIT_LINE = re.compile(r"Exit code:? -?\d+|</?output>|<returncode>-?\d+</returncode>(<output>)?")
_FOUND_TEXT = re.compile(r"^\s*Found (\d+) (file|match|result)", re.IGNORECASE)
_NONE_FOUND = re.compile(r"^\s*No (files|matches|results)( found)?", re.IGNORECASE)
#: The words that make a line telling (the first line holding one is the telling line).
_TELLING_WORDS = ("Error", "Exception", "FAILED", "error:", "Traceback", "not found", "No such")
_PATCH_FILE = re.compile(r"^\*\*\* (?:Update|Add|Delete) File: (.+)$", re.MULTILINE)
#: A shell line's words, a quoted one whole: what :func:`_quoted_words` finds, more quickly
#: (its tests hold it to this pattern).
_SHELL_WORD = re.compile(r'"[^"]*"|\'[^\']*\'|[^\s"\']+')
#: A path-like word: a path with a slash (``src/auth.py``, ``/testbed``) or a file name
#: with an extension (``setup.py``), the whole word. The two are apart, chosen by the
#: slash (a file name holds none), so that a word is tried against one, not both; and
#: each has an ASCII twin for a word of ASCII characters only (nearly every one), where
#: ``\w`` means the same: the match reads a table rather than asking the character
#: database about every character each time it comes back to it.
_SLASHED_PATH = re.compile(r"[\w.~-]*(?:/[\w.@+-]+)+/?")
_FILE_NAME = re.compile(r"[\w-]+\.[A-Za-z]{1,5}")
_ASCII_SLASHED_PATH = re.compile(_SLASHED_PATH.pattern, re.ASCII)
_ASCII_FILE_NAME = re.compile(_FILE_NAME.pattern, re.ASCII)


# Not slotted: a frozen class with a __dict__ is built faster, and one is built per tool call.
# _BY_POSITION: this module builds it with its fields in order, by position: keyword
# arguments to a class make a dict for its __init__ on every call.
@attrs.frozen(slots=False)
class Action:
    """One tool call, as the receptor reads it."""

    kind: ActionKind
    #: The tool's name as the harness reported it.
    tool: str
    #: The call went wrong: the harness said so, or a command exited non-zero.
    failed: bool = False
    #: A shell command's exit code, when the harness gave one (0 for a shell
    #: call it did not mark failed).
    exit_code: int | None = None
    #: The most telling line of what went wrong, when something did.
    error: str | None = None
    #: The files and folders the call touched, as given.
    paths: tuple[str, ...] = ()
    #: A search's or recall's query (a shell search's pattern).
    query: str | None = None
    #: A shell call's command line.
    command: str | None = None
    #: How many results a search or recall found, when that can be told.
    result_count: int | None = None

    # Worked out on first read and kept in the instance's __dict__ (a frozen class
    # without slots allows it): sources, steps and problems read it again.
    @functools.cached_property
    def text(self) -> str:
        """The short line the call becomes (``grep "token refresh" in auth/ -> 0 files``)."""
        return action_text(self)


def actions_of(event: Event) -> tuple[Action, ...]:
    """The actions of an event's tool calls, in order (none for a prompt or a stop)."""
    calls = event.tool_calls
    if len(calls) == 1:  # most events: no generator
        return (action_of(calls[0]),)
    return tuple([action_of(call) for call in calls])


def action_of(call: ToolCall) -> Action:
    """One tool call as an :class:`Action`, with its text."""
    inputs = call.input if type(call.input) is dict or isinstance(call.input, Mapping) else {}
    kind = _TOOL_KINDS.get(bare_tool_name(call.name), "other")  # tool_kind, without the call
    if kind == "run":
        command = inputs.get("command")  # where nearly every shell call has it
        if type(command) is not str or not command or command.isspace():
            command = _text_value(inputs, _COMMAND_KEYS)
        if command is not None:
            kind = shell_kind(command)
        return _shell_action(call, kind, command or "")
    paths = _input_paths(inputs)
    failed = call.failed
    return Action(  # in field order, by position: keywords cost a dict a call (_BY_POSITION)
        kind,
        call.name,
        failed,
        None,
        error_text(call) if failed else None,
        paths,
        _text_value(inputs, _QUERY_KEYS) if kind in ("search", "memory_read") else None,
        None,
        result_count(call.response, kind) if not failed else None,
    )


def tool_kind(name: str) -> ActionKind:
    """The kind of a tool by its name (:func:`bare_tool_name`); cached, as names repeat."""
    return _TOOL_KINDS.get(bare_tool_name(name), "other")


@functools.lru_cache(maxsize=256)
def bare_tool_name(name: str) -> str:
    """A tool's name in lower case, MCP prefixes (``mcp__thatch__``, ``MCP:``, ``thatch_``) off."""
    bare = name.removeprefix("MCP:").strip()
    if bare.startswith("mcp__"):
        bare = bare.rsplit("__", 1)[-1]
    return bare.lower().removeprefix("thatch_")


def shell_kind(command: str) -> ActionKind:
    """``run``, or ``search``/``read``/``edit`` when the command's program is one of those."""
    # The program and the word after it decide, but for sed and cat: only they
    # need every word of the command, which can be a long heredoc.
    words = command.split(None, 2)
    if not words:
        return "run"
    program = words[0].rsplit("/", 1)[-1]
    if program == "git" and len(words) > 1 and words[1] == "grep":
        return "search"
    if program == "tee":
        return "edit"
    if program == "cat":
        return "edit" if _has_word(command, ">") else "read"
    if program == "sed":
        # A word is looked for only in a command that holds it at all: most hold one.
        if "-i" in command and any(w.startswith("-i") for w in command.split()[1:]):
            return "edit"
        if "-n" in command and _has_word(command, "-n"):
            return "read"
    return _SHELL_KINDS.get(program, "run")


def _has_word(text: str, word: str) -> bool:
    """``word in text.split()``, without splitting a long text (a heredoc) into its words.

    A word of the split is ``word`` exactly where ``word`` stands between white
    space or the text's ends.
    """
    at = text.find(word)
    while at >= 0:
        end = at + len(word)
        if (at == 0 or text[at - 1].isspace()) and (end == len(text) or text[end].isspace()):
            return True
        at = text.find(word, at + 1)
    return False


def exit_code(call: ToolCall) -> int | None:
    """The exit code the harness reported for a call, or None when it gave none."""
    return _exit_code(call, _response_text(call.response))


def _exit_code(call: ToolCall, output: str | None) -> int | None:
    """:func:`exit_code`, with the response's text (``_response_text``) already read."""
    response = call.response
    # No call for the most common answers: none, or an object without a key to look in.
    if response is not None and (
        type(response) is not dict or not response.keys().isdisjoint(_EXIT_OR_INNER)
    ):
        code = _response_exit(response)
        if code is not None:
            return code
    for text in (call.error, output):
        # Most outputs name no exit code; a substring test rules them out without the regex.
        if text and ("Exit code" in text or "<returncode>" in text):
            match = _EXIT_TEXT.search(text)
            if match:
                return int(match.group(1) or match.group(2))
    return None


def error_text(call: ToolCall) -> str | None:
    """The most telling line of a failed call's error or output, cut short."""
    return _error_text(call, _response_text(call.response))


def _error_text(call: ToolCall, output: str | None) -> str | None:
    """:func:`error_text`, with the response's text (``_response_text``) already read."""
    candidates = [call.error]
    if isinstance(call.response, Mapping):
        candidates.append(_as_text(call.response.get("error")))
    candidates.append(output)
    for text in candidates:
        line = telling_line(text or "")
        if line:
            return line
    return None


def telling_line(text: str) -> str | None:
    """The line that names the error (``AssertionError ...``), else the last line; None if empty."""
    lines = _content_lines(text)
    if not lines:
        return None
    # One search over the lines joined rather than one a line: no line holds a
    # newline, so the first match lies in the first telling line.
    joined = "\n".join(lines)
    found = _first_telling_word(joined)
    if found < 0:
        return _cut(lines[-1])
    start = joined.rfind("\n", 0, found) + 1
    end = joined.find("\n", found)  # no telling word holds a newline
    return _cut(joined[start : end if end >= 0 else len(joined)])


def _first_telling_word(text: str) -> int:
    """Where the first of :data:`_TELLING_WORDS` in ``text`` starts, or -1.

    A find for each word beats one search for them all: an alternation of
    words is matched at every place in turn, a word is found by a fast scan.
    """
    first = len(text)
    for word in _TELLING_WORDS:
        # Only a word that starts before the earliest one so far can change it.
        at = text.find(word, 0, first + len(word) - 1)
        if at >= 0:
            first = at
    return first if first < len(text) else -1


def result_count(response: Any, kind: ActionKind) -> int | None:
    """How many results a search or recall response holds, or None when it cannot be told."""
    if kind not in ("search", "memory_read"):
        return None
    response = _decoded(response)
    if isinstance(response, list):
        if all(isinstance(item, Mapping) and "relevant" in item for item in response):
            return sum(bool(item["relevant"]) for item in response)
        return len(response)
    if isinstance(response, Mapping):
        for key in _COUNT_KEYS:
            if isinstance(response.get(key), int) and not isinstance(response[key], bool):
                return int(response[key])
        for key in _LIST_KEYS:
            if isinstance(response.get(key), list):
                return len(response[key])
        response = _response_text(response)
    if isinstance(response, str):
        return _text_count(response)
    return None


def _shell_action(call: ToolCall, kind: ActionKind, command: str) -> Action:
    """A shell command: its exit code, its error, and as a search its result count."""
    response = call.response
    if type(response) is dict:  # nearly every shell call: _mapping_text, without the call
        parts = []
        for key in _OUTPUT_KEYS:
            part = response.get(key)
            if isinstance(part, str) and part:
                parts.append(part)
        text = "\n".join(parts) or _response_text(response.get("response"))
        # What _exit_code answers for a response without a key to look in, no error
        # and an output that names no exit code (most calls), without the call.
        if (
            response.keys().isdisjoint(_EXIT_OR_INNER)
            and not call.error
            and not (text and ("Exit code" in text or "<returncode>" in text))
        ):
            code = None
        else:
            code = _exit_code(call, text)
    else:
        text = _response_text(response)
        code = _exit_code(call, text)
    if code is None and not call.failed:
        code = 0
    output = text or ""
    # grep and its kin exit 1 when nothing matched: an answer, not a failure.
    searched_nothing = (
        kind == "search"
        and code == 1
        and not telling_line(call.error or "")
        and not telling_line(output)
    )
    failed = (call.failed or (code is not None and code != 0)) and not searched_nothing
    count: int | None = None
    if kind == "search":
        count = 0 if searched_nothing else _text_count(output)
    return Action(  # in field order (_BY_POSITION)
        kind,
        call.name,
        failed,
        code,
        _error_text(call, text) if failed else None,
        _command_paths(command),
        _shell_query(command) if kind == "search" else None,
        command,
        count,
    )


def action_text(action: Action) -> str:
    """The short line of an action: what was done, to what, and how it came out."""
    tool = bare_tool_name(action.tool)
    if action.command is not None:
        head = f"{tool}: {_cut(action.command)}"
        if action.failed:
            outcome = f"exit {action.exit_code}" if action.exit_code is not None else "failed"
            return f"{head} -> {outcome}" + (f": {action.error}" if action.error else "")
        if action.result_count is not None:
            return f"{head} -> {_count_words(action)}"
        return f"{head} -> ok"
    target = " ".join(_cut(path) for path in action.paths[:2])
    if action.query is not None:
        where = f" in {target}" if target else ""
        head = f'{tool} "{_cut(action.query)}"{where}'
    else:
        head = f"{tool} {target}".rstrip()
    if action.failed:
        return f"{head} -> failed" + (f": {action.error}" if action.error else "")
    if action.result_count is not None:
        return f"{head} -> {_count_words(action)}"
    return head


def _shell_query(command: str) -> str | None:
    """What a shell search looks for: the first word after the program that is no option."""
    words = _shell_words(command.split("|", 1)[0])
    rest = words[2:] if words[:2] == ["git", "grep"] else words[1:]
    if words and words[0].rsplit("/", 1)[-1] in ("find", "fd"):
        names = [rest[i + 1] for i, word in enumerate(rest[:-1]) if word in ("-name", "-iname")]
        return names[0] if names else None
    for word in rest:
        if not word.startswith("-"):
            return word
    return None


def _shell_words(command: str) -> list[str]:
    """The words of a command's first line, quotes off (a heredoc's body is not the command)."""
    command = command.lstrip()
    # The first line, without copying the rest (a heredoc's body); a find only when there
    # is a newline, as a find parses its arguments where an ``in`` test does not.
    line = command[: command.find("\n")] if "\n" in command else command
    if '"' not in line and "'" not in line:
        return line.split()  # what the pattern finds in a line without quotes, quicker
    return _quoted_words(line)


def _quoted_words(line: str) -> list[str]:
    """What :data:`_SHELL_WORD` finds in a line, quotes off, found with ``str.find``.

    Between quotes the words are the line's split; a quote with its closing one
    further on is one word (empty, too); a quote without is passed over, as the
    pattern does. The pattern's engine tries each character in turn, where a
    find and a split scan in C.
    """
    words: list[str] = []
    at = 0
    # A kind of quote the line lacks (most lines hold one kind) needs no find at all.
    double = line.find('"') if '"' in line else -1
    single = line.find("'") if "'" in line else -1
    while True:
        # Each kind's next quote is found again only once passed: a find parses its
        # arguments, which costs more than the scan of a command line.
        if 0 <= double < at:
            double = line.find('"', at)
        if 0 <= single < at:
            single = line.find("'", at)
        quote = double if single < 0 or 0 <= double < single else single
        if quote < 0:
            words += line[at:].split()
            return words
        words += line[at:quote].split()
        end = line.find(line[quote], quote + 1)
        if end < 0:
            at = quote + 1  # no closing quote: the pattern passes over it
        else:
            words.append(line[quote + 1 : end])
            at = end + 1


def _count_words(action: Action) -> str:
    noun = "files" if action.kind == "search" else "results"
    return f"{action.result_count} {noun}"


def _cut(text: str) -> str:
    # Past MAX_PART // 2 + 1 words the text is longer than MAX_PART whatever they
    # are, so the rest (a heredoc's body, a long output) is left unsplit.
    text = " ".join(text.split(None, MAX_PART // 2 + 1))
    return text if len(text) <= MAX_PART else text[: MAX_PART - 1] + "…"


def _text_value(inputs: Mapping[str, Any], keys: Iterable[str]) -> str | None:
    for key in keys:
        value = inputs.get(key)
        # Not blank, as value.strip() would tell, without copying a long command.
        if isinstance(value, str) and value and not value.isspace():
            return value
    return None


def _input_paths(inputs: Mapping[str, Any]) -> tuple[str, ...]:
    paths = [inputs[key] for key in _PATH_KEYS if isinstance(inputs.get(key), str)]
    for key in ("paths", "files", "file_paths"):
        values = inputs.get(key)
        if isinstance(values, list):
            paths.extend(value for value in values if isinstance(value, str))
    for key in ("patch", "patchText", "input"):
        patch = inputs.get(key)
        if isinstance(patch, str):
            paths.extend(match.strip() for match in _PATCH_FILE.findall(patch))
    return tuple(dict.fromkeys(path for path in paths if path))


@functools.lru_cache(maxsize=256)  # an agent runs the same commands again and again
def _command_paths(command: str) -> tuple[str, ...]:
    """The path-like words of a shell command (``src/auth.py``, ``tests/``)."""
    # The words of the command's first line (_shell_words), but only those that can be
    # paths: every path-like word holds a slash or a dot.
    command = command.lstrip()
    line = command[: command.find("\n")] if "\n" in command else command  # (_shell_words)
    if "/" not in line and "." not in line:
        return ()  # no word of the line can hold one
    found: list[str] = []
    for word in line.split() if '"' not in line and "'" not in line else _quoted_words(line):
        # not word.startswith(("-", "http", "$")), without the call's parse of its tuple
        if ("/" in word or "." in word) and not (word[0] in "-$" or word[:4] == "http"):
            word = word.rstrip(";,)")
            if "/" in word:
                pattern = _ASCII_SLASHED_PATH if word.isascii() else _SLASHED_PATH
            else:
                pattern = _ASCII_FILE_NAME if word.isascii() else _FILE_NAME
            if pattern.fullmatch(word):  # no word holds a newline: $ is the word's end
                found.append(word)
    return tuple(dict.fromkeys(found))[:8]


def _response_exit(response: Any) -> int | None:
    if response is None or isinstance(response, str):
        return None
    if type(response) is dict:  # the common answer, decoded already
        if response.keys().isdisjoint(_EXIT_OR_INNER):
            return None  # no key to look in (most answers): one test, not seven
    else:
        response = _decoded(response)
        if not isinstance(response, Mapping):
            return None
    for key in _EXIT_KEYS:
        value = response.get(key)
        if isinstance(value, int) and not isinstance(value, bool):
            return value
    # Cursor's failure keeps the output under "response"; opencode under "metadata".
    for key in ("response", "metadata"):
        inner = response.get(key)
        code = None if inner is None else _response_exit(inner)
        if code is not None:
            return code
    return None


def _response_text(response: Any) -> str | None:
    """A response's text: the string itself, or its output fields joined."""
    if response is None:
        return None
    if type(response) is dict:  # the common answer, decoded already
        return _mapping_text(response)
    response = _decoded(response)
    if isinstance(response, str):
        return response
    if isinstance(response, list):
        parts = [_as_text(item.get("text")) for item in response if isinstance(item, Mapping)]
        return "\n".join(part for part in parts if part) or None
    if isinstance(response, Mapping):
        return _mapping_text(response)
    return None


def _mapping_text(response: Mapping[str, Any]) -> str | None:
    """A response object's output fields joined, else its inner ``response``'s text."""
    # A loop rather than a comprehension, which is a call of its own: nearly every shell
    # call's response comes this way.
    parts = []
    for key in _OUTPUT_KEYS:
        part = response.get(key)
        if isinstance(part, str) and part:
            parts.append(part)
    text = "\n".join(parts)
    return text or _response_text(response.get("response"))


def _decoded(response: Any) -> Any:
    """A response; MCP text content holding JSON is decoded (``[{"type": "text", ...}]``)."""
    if (
        isinstance(response, list)
        and len(response) == 1
        and isinstance(response[0], Mapping)
        and response[0].get("type") == "text"
        and isinstance(response[0].get("text"), str)
    ):
        with contextlib.suppress(ValueError):
            return json.loads(response[0]["text"])
    return response


def _as_text(value: Any) -> str | None:
    return value if isinstance(value, str) else None


def _text_count(text: str) -> int:
    """Results in a search's text: ``Found N``, ``No files found``, or its non-empty lines."""
    found = _FOUND_TEXT.match(text)
    if found:
        return int(found.group(1))
    if _NONE_FOUND.match(text):
        return 0
    return len(_content_lines(text))


def _content_lines(text: str) -> list[str]:
    """The non-empty lines of a text, stripped, without exit-code and output-tag lines."""
    lines = list(map(str.strip, text.splitlines()))  # in C, not a comprehension
    # Every line _EXIT_LINE matches holds one of these; most texts hold none.
    if "Exit code" in text or "output>" in text or "<returncode>" in text:
        # Every line _EXIT_LINE matches starts with "E" or "<": most are ruled out before it.
        return [
            line for line in lines if line and not (line[0] in "E<" and _EXIT_LINE.fullmatch(line))
        ]
    return list(filter(None, lines))  # the non-empty ones
