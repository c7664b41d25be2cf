"""Runs to replay as core events: the event JSONL format and mini-swe-agent trajectories.

The receptor reads :class:`~thatch.plugin.events.Event` objects, whichever
harness they come from. Two file formats give it recorded ones:

- **Event JSONL** (docs/receptor.md, "Event format"): one core event a line,
  as JSON, the fields of :class:`Event` and :class:`ToolCall` by name.
  :func:`write_events` writes it, :func:`read_events` reads it back.
- **mini-swe-agent trajectories** (``<instance_id>.traj.json``): a bash-only
  agent's ``messages[]``. Each assistant turn holds one ```` ```bash ````
  block, and the user turn after it the command's
  ``<returncode>N</returncode>`` and output. :func:`read_trajectory` turns
  each such pair into a ``tool_use`` event of one ``bash`` call, in the shape
  the Claude Code plugin gives its Bash calls, so the receptor reads both
  alike:

  ============================  ==========================================
  the step                      the call
  ============================  ==========================================
  exit 0                        ``response {"stdout": output, "stderr": ""}``
  exit 1 of a trailing grep     the same: no match is an answer, not a failure
  any other exit code           ``failed``, ``error "Exit code N\\n" + output``
  timed out                     ``failed``, ``error "Timed out\\n" + output``
  no return code (the final     ``response {"stdout": text, "stderr": ""}``
  submission's diff)
  not exactly one bash block    a call named ``format_error``: ``failed``,
                                ``input {"blocks": n}``, the agent's
                                correction message as ``error``
  ============================  ==========================================

  The run is one session named by its instance id. The files hold no
  timestamps, so every event has ``received_at`` 0 and the receptor gives it
  a nominal step time; ``event_id`` is ``<instance_id>:<step>``.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import IO, Any

from thatch.plugin.errors import InvalidInputError
from thatch.plugin.events import EVENT_KINDS, Event, EventKind, ToolCall
from thatch.plugin.fields import describe_value, optional_flag, optional_text, text_field

#: The ``harness`` of the events read from a trajectory.
MINI_SWE_AGENT = "mini-swe-agent"
#: The tool of every step a trajectory's agent runs.
BASH = "bash"
#: The tool name of a turn the agent answered without exactly one bash block.
FORMAT_ERROR = "format_error"
#: What a trajectory file's name ends with.
TRAJECTORY_SUFFIX = ".traj.json"

_BASH_BLOCK = re.compile(r"```bash\s*\n(.*?)\n```", re.DOTALL)
_RETURNCODE = re.compile(r"<returncode>(-?\d+)</returncode>")
_TIMED_OUT = re.compile(r"\AThe last command <command>.*?</command> timed out", re.DOTALL)
_OUTPUT = re.compile(r"<output>\n?(.*?)\n?</output>", re.DOTALL)
# The pieces of a shell line; the exit code is the last piece's.
_SHELL_SEPARATORS = re.compile(r"&&|\|\||[;|\n]")
_GREPS = frozenset({"grep", "egrep", "fgrep", "rg"})

_TOOL_CALL_FIELDS = ("name", "input", "response", "call_id", "failed", "error", "interrupted")


# --- mini-swe-agent trajectories ---------------------------------------------


def read_trajectory(path: Path) -> tuple[Event, ...]:
    """The events of one trajectory file (see the module docs).

    :raises InvalidInputError: the file is not JSON or not a trajectory.
    """
    data = _load_trajectory(path)
    return trajectory_events(data, run_id(path, data), where=f"{path}: ")


def read_trajectories(path: Path) -> Iterator[tuple[str, tuple[Event, ...]]]:
    """``(instance id, events)`` of a trajectory file, or of each one in a folder, by name.

    :raises InvalidInputError: a folder holds no ``*.traj.json`` file, or one is malformed.
    """
    files = sorted(path.glob(f"*{TRAJECTORY_SUFFIX}")) if path.is_dir() else [path]
    if not files:
        raise InvalidInputError(
            f"{path}: no *{TRAJECTORY_SUFFIX} file in this folder; give a trajectory "
            "file or a folder of them"
        )
    for file in files:
        data = _load_trajectory(file)
        session_id = run_id(file, data)
        yield session_id, trajectory_events(data, session_id, where=f"{file}: ")


def _load_trajectory(path: Path) -> Mapping[str, Any]:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as error:
        raise InvalidInputError(
            f"{path}: cannot read it as a mini-swe-agent trajectory ({error}); "
            "give a .traj.json file the agent wrote"
        ) from error
    if not isinstance(data, Mapping):
        raise InvalidInputError(
            f"{path}: a trajectory is a JSON object, got {describe_value(data)}"
        )
    return data


def run_id(path: Path, data: Mapping[str, Any]) -> str:
    """A run's name: the trajectory's ``instance_id``, else its file name less the suffix."""
    instance_id = data.get("instance_id")
    if isinstance(instance_id, str) and instance_id:
        return instance_id
    name = path.name
    return name.removesuffix(TRAJECTORY_SUFFIX) if name.endswith(TRAJECTORY_SUFFIX) else path.stem


def trajectory_events(
    data: Mapping[str, Any], session_id: str, *, where: str = ""
) -> tuple[Event, ...]:
    """The ``tool_use`` events of a trajectory's ``messages``, one per assistant turn.

    :param data: the trajectory's JSON.
    :param session_id: the run's name (:func:`run_id`).
    :param where: what error messages start with (the file).
    :raises InvalidInputError: ``messages`` is not a list of role/content objects.
    """
    messages = _messages(data, where)
    events: list[Event] = []
    for index, message in enumerate(messages):
        if message["role"] != "assistant":
            continue
        answer = _next_user_content(messages, index)
        call = step_call(message["content"], answer, call_id=f"step-{len(events)}")
        events.append(
            Event(
                kind="tool_use",
                harness=MINI_SWE_AGENT,
                session_id=session_id,
                tool_calls=(call,),
                event_id=f"{session_id}:{len(events)}",
            )
        )
    return tuple(events)


def step_call(turn: str, answer: str | None, *, call_id: str | None = None) -> ToolCall:
    """The call of one assistant turn, given what the agent was told next (None: nothing).

    A turn that is not exactly one bash block is a failed ``format_error``
    call; the answer (the agent's correction) is its error.
    """
    blocks = _BASH_BLOCK.findall(turn)
    if len(blocks) != 1:
        return ToolCall(
            name=FORMAT_ERROR,
            input={"blocks": len(blocks)},
            call_id=call_id,
            failed=True,
            error=answer or f"expected one bash block, found {len(blocks)}",
        )
    command = blocks[0]
    call_input = {"command": command}
    if answer is None:
        # The run stopped before the command ran: nothing came back.
        return ToolCall(name=BASH, input=call_input, call_id=call_id)
    if _TIMED_OUT.match(answer):
        return ToolCall(
            name=BASH,
            input=call_input,
            call_id=call_id,
            failed=True,
            error="Timed out\n" + _timed_out_output(answer),
        )
    code = _RETURNCODE.search(answer)
    if code is None:
        return ToolCall(
            name=BASH, input=call_input, response=_bash_response(answer), call_id=call_id
        )
    exit_code = int(code.group(1))
    output = _output_of(answer[code.end() :])
    if exit_code == 0 or (exit_code == 1 and ends_in_grep(command)):
        return ToolCall(
            name=BASH, input=call_input, response=_bash_response(output), call_id=call_id
        )
    return ToolCall(
        name=BASH,
        input=call_input,
        call_id=call_id,
        failed=True,
        error=f"Exit code {exit_code}\n{output}",
    )


def ends_in_grep(command: str) -> bool:
    """Whether the command's exit code is a grep's (its last piece is one): 1 means no match."""
    pieces = [piece.split() for piece in _SHELL_SEPARATORS.split(command.strip())]
    words = [piece for piece in pieces if piece]
    if not words:
        return False
    last = words[-1]
    program = last[0].rsplit("/", 1)[-1]
    return program in _GREPS or (program == "git" and len(last) > 1 and last[1] == "grep")


def _bash_response(stdout: str) -> dict[str, str]:
    # The keys of Claude Code's Bash tool_response.
    return {"stdout": stdout, "stderr": ""}


def _output_of(text: str) -> str:
    """The command output after the return code: inside ``<output>``, else the text as is.

    A long output comes as a warning with its head and tail; it is kept whole.
    """
    rest = text.strip()
    found = _OUTPUT.fullmatch(rest)
    return found.group(1) if found is not None else rest


def _timed_out_output(answer: str) -> str:
    found = _OUTPUT.search(answer)
    return found.group(1) if found is not None else answer


def _messages(data: Mapping[str, Any], where: str) -> list[dict[str, str]]:
    messages = data.get("messages")
    if not isinstance(messages, list):
        raise InvalidInputError(
            f"{where}field 'messages' must be a list, got {describe_value(messages)}"
        )
    read = []
    with _located(where):
        for index, message in enumerate(messages):
            at = f"messages[{index}]"
            if not isinstance(message, Mapping):
                raise InvalidInputError(
                    f"field '{at}' must be an object, got {describe_value(message)}"
                )
            role = text_field(message, "role", where=f"{at}.")
            read.append({"role": role, "content": _content_text(message.get("content"), at)})
    return read


def _content_text(content: Any, where: str) -> str:
    """A message's text: a string, or the text parts of a list of content parts.

    :param where: the message's field (``messages[3]``).
    """
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        parts = [part.get("text") for part in content if isinstance(part, Mapping)]
        return "\n".join(part for part in parts if isinstance(part, str))
    raise InvalidInputError(
        f"field '{where}.content' must be a string or a list of parts, "
        f"got {describe_value(content)}"
    )


@contextmanager
def _located(where: str) -> Iterator[None]:
    """Prefix the errors of the field readers with where they happened (a file, a line)."""
    try:
        yield
    except InvalidInputError as error:
        raise InvalidInputError(f"{where}{error}") from None


def _next_user_content(messages: Sequence[Mapping[str, str]], index: int) -> str | None:
    following = messages[index + 1] if index + 1 < len(messages) else None
    if following is None or following["role"] != "user":
        return None
    return following["content"]


# --- event JSONL ---------------------------------------------------------------


def event_record(event: Event) -> dict[str, Any]:
    """An event as the JSON object of one line of the event JSONL format."""
    return {
        "kind": event.kind,
        "harness": event.harness,
        "session_id": event.session_id,
        "hook_event": event.hook_event,
        "cwd": event.cwd,
        "prompt": event.prompt,
        "tool_calls": [_call_record(call) for call in event.tool_calls],
        "source": event.source,
        "event_id": event.event_id,
        "received_at": event.received_at,
        "identity": event.identity,
        "parent_session_id": event.parent_session_id,
        "synthetic": event.synthetic,
    }


def _call_record(call: ToolCall) -> dict[str, Any]:
    return {name: getattr(call, name) for name in _TOOL_CALL_FIELDS}


def write_events(events: Iterable[Event], stream: IO[str]) -> int:
    """Write events to ``stream`` in the event JSONL format; how many were written."""
    count = 0
    for event in events:
        stream.write(json.dumps(event_record(event), ensure_ascii=False) + "\n")
        count += 1
    return count


def read_events(lines: Iterable[str], *, source: str = "events") -> Iterator[Event]:
    """The events of event-JSONL lines (blank lines skipped).

    :param source: what error messages name (the file).
    :raises InvalidInputError: a line is not JSON or not an event, naming the line and field.
    """
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        with _located(f"{source} line {number}: "):
            try:
                record = json.loads(line)
            except ValueError as error:  # a JSONDecodeError, or an integer of too many digits
                reason = "a number with too many digits"
                if isinstance(error, json.JSONDecodeError):
                    reason = error.msg
                raise InvalidInputError(f"not JSON ({reason}); one event a line") from error
            yield event_from_record(record)


def event_from_record(record: Any) -> Event:
    """The event of one event-JSONL object; fields left out take the :class:`Event` defaults.

    :raises InvalidInputError: a field is missing or of the wrong type, naming it.
    """
    if not isinstance(record, Mapping):
        raise InvalidInputError(f"an event is a JSON object, got {describe_value(record)}")
    kind = text_field(record, "kind")
    if kind not in EVENT_KINDS:
        raise InvalidInputError(
            f"field 'kind' must be one of {', '.join(EVENT_KINDS)}, got {kind!r}"
        )
    calls = record.get("tool_calls", [])
    if not isinstance(calls, list):
        raise InvalidInputError(f"field 'tool_calls' must be a list, got {describe_value(calls)}")
    received_at = _seconds(record.get("received_at", 0.0))
    event_kind: EventKind = kind  # type: ignore[assignment]  # checked against EVENT_KINDS
    return Event(
        kind=event_kind,
        harness=text_field(record, "harness"),
        session_id=text_field(record, "session_id"),
        hook_event=optional_text(record, "hook_event") or "",
        cwd=optional_text(record, "cwd"),
        prompt=optional_text(record, "prompt", keep_empty=True),
        tool_calls=tuple(
            _call_from_record(call, f"tool_calls[{index}]") for index, call in enumerate(calls)
        ),
        source=optional_text(record, "source"),
        event_id=optional_text(record, "event_id") or "",
        received_at=received_at,
        identity=optional_text(record, "identity"),
        parent_session_id=optional_text(record, "parent_session_id"),
        synthetic=optional_flag(record, "synthetic"),
    )


def _seconds(value: Any) -> float:
    """``received_at`` as epoch seconds; :class:`InvalidInputError` unless a finite number."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise InvalidInputError(
            f"field 'received_at' must be a number, got {describe_value(value)}"
        )
    # JSON's NaN, Infinity and 1e999 parse, and so does an integer too large for a float:
    # none is a time, and the receptor's windows and fatigue would compute with it.
    try:
        seconds = float(value)
    except OverflowError:
        seconds = math.inf
    if not math.isfinite(seconds):
        got = "NaN" if math.isnan(seconds) else "an infinite or too large number"
        raise InvalidInputError(
            f"field 'received_at' must be a finite number of epoch seconds, got {got}; "
            "give the event's time, or 0 for none"
        )
    return seconds


def _call_from_record(record: Any, at: str) -> ToolCall:
    if not isinstance(record, Mapping):
        raise InvalidInputError(f"field '{at}' must be an object, got {describe_value(record)}")
    where = f"{at}."
    failed = optional_flag(record, "failed", where=where)
    error = optional_text(record, "error", where=where, keep_empty=True)
    interrupted = optional_flag(record, "interrupted", where=where)
    if (error is not None or interrupted) and not failed:
        raise InvalidInputError(
            f"field '{at}' has 'error' or 'interrupted' but not \"failed\": true; add it"
        )
    return ToolCall(
        name=text_field(record, "name", where=where),
        input=record.get("input"),
        response=record.get("response"),
        call_id=optional_text(record, "call_id", where=where),
        failed=failed,
        error=error,
        interrupted=interrupted,
    )
