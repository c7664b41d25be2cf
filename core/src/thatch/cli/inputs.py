"""Input from the command line: its arguments, stdin and the files it names.

Python hands undecodable bytes of argv and stdin to the program as lone
surrogates, which SQLite, the model and stdout all refuse; text is made
storable here (see :mod:`thatch.unicode_fix`), paths are not: a path keeps
its bytes, so the file named is the file opened.
"""

from __future__ import annotations

import argparse
import io
import json
import math
import sys
import tempfile
from collections.abc import Callable, Collection, Iterable, Iterator, Sequence
from contextlib import ExitStack, contextmanager
from itertools import islice
from pathlib import Path
from typing import IO, Any, TypeVar

from thatch.jsonlines import check_optional_text, check_required_text, parse_object
from thatch.plugin.errors import InvalidInputError, ThatchError
from thatch.safetext import visible
from thatch.unicode_fix import scrub_text

#: The most results one search or query may ask for.
MAX_RESULTS = 1000
#: SQLite's largest integer: no row id is above it.
MAX_ID = 2**63 - 1
#: The longest import line, newline included. A memory holds at most 20,000
#: characters, which JSON escapes to well under this.
MAX_LINE_BYTES = 1024 * 1024
#: The UTF-8 byte order mark.
_BOM = b"\xef\xbb\xbf"

T = TypeVar("T")

_warned = False


# -- text -----------------------------------------------------------------------------
def clean_text(text: str) -> str:
    """``text`` with lone surrogates made U+FFFD; the first time, a note on stderr says so."""
    cleaned = scrub_text(text)
    if cleaned is not text:
        _warn_replaced()
    return cleaned


def _warn_replaced() -> None:
    global _warned
    if not _warned:
        _warned = True
        print(
            "thatch: some input was not UTF-8 text; each bad byte was replaced by U+FFFD",
            file=sys.stderr,
        )


def clean_arguments(args: argparse.Namespace, paths: Collection[str]) -> argparse.Namespace:
    """``args`` with every text argument cleaned (:func:`clean_text`), but those in ``paths``."""
    for name, value in vars(args).items():
        if name in paths:
            continue
        if isinstance(value, str):
            setattr(args, name, clean_text(value))
        elif isinstance(value, list):
            setattr(args, name, [clean_text(v) if isinstance(v, str) else v for v in value])
    return args


def _stdin() -> IO[str]:
    """stdin as UTF-8 whatever the locale, undecodable bytes kept for :func:`clean_text`.

    The locale's strict decoding would turn one bad byte into a traceback.
    """
    if isinstance(sys.stdin, io.TextIOWrapper):
        sys.stdin.reconfigure(encoding="utf-8", errors="surrogateescape")
    return sys.stdin


def read_stdin() -> str:
    """All of stdin, cleaned."""
    return clean_text(_stdin().read())


# -- numbers and files named in options -------------------------------------------------
def whole_number(low: int, high: int) -> Callable[[str], int]:
    """An argparse type: a whole number from ``low`` to ``high``; the error gives the range."""

    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            value = None
        if value is None or not low <= value <= high:
            raise argparse.ArgumentTypeError(
                f"give a whole number from {low} to {high}, not {_shown(text)}"
            )
        return value

    return parse


def finite_number(low: float, high: float) -> Callable[[str], float]:
    """An argparse type: a finite number from ``low`` to ``high``; the error gives the range."""

    def parse(text: str) -> float:
        try:
            value = float(text)
        except ValueError:
            value = math.nan
        if not low <= value <= high:  # also refuses nan
            raise argparse.ArgumentTypeError(
                f"give a number from {low:g} to {high:g}, not {_shown(text)}"
            )
        return value

    return parse


def plot_file(text: str) -> Path:
    """An argparse type: a PNG file that can be written (see ``check_plot_path``)."""
    from thatch.decisions.plot import EXAMPLE
    from thatch.plugin.plotting import check_plot_path

    try:
        return check_plot_path(Path(text), EXAMPLE)
    except InvalidInputError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def _shown(text: str) -> str:
    return repr(text if len(text) <= 40 else text[:37] + "...")


# -- import files -----------------------------------------------------------------------
class ImportSource:
    """The lines of an import file, readable as often as needed, one at a time."""

    def __init__(self, name: str, handle: IO[bytes]) -> None:
        #: How errors name it: the path as given, or ``stdin``.
        self.name = name
        self._handle = handle
        self._start = handle.tell()

    def lines(self) -> Iterator[str]:
        """Every line from the first, as text; a line too long or not UTF-8 is a clear error."""
        self._handle.seek(self._start)
        read = self._handle.readline
        for line_number, raw in enumerate(iter(lambda: read(MAX_LINE_BYTES + 1), b""), 1):
            if len(raw) > MAX_LINE_BYTES:
                raise InvalidInputError(
                    f"{self.name} line {line_number} is over {MAX_LINE_BYTES // 1024} KiB; "
                    "write one memory a line"
                )
            if line_number == 1 and raw.startswith(_BOM):
                raw = raw[len(_BOM) :]  # editors on Windows start UTF-8 files with one
            try:
                yield raw.decode("utf-8")
            except UnicodeDecodeError as exc:
                raise InvalidInputError(
                    f"{self.name} line {line_number} is not UTF-8 text (byte {exc.start + 1}); "
                    "save the file as UTF-8"
                ) from None


@contextmanager
def open_import_file(file: str) -> Iterator[ImportSource]:
    """The import file ``file`` ('-' for stdin), open while the block runs.

    Imports check every line before they write one, then read the lines again
    to write them: a file of any size costs the memory of one batch. stdin and
    pipes cannot be read twice, so they are first copied to an unnamed,
    owner-only temporary file, gone when it is closed.
    """
    name = "stdin" if file == "-" else file
    with ExitStack() as stack:
        handle = sys.stdin.buffer if file == "-" else stack.enter_context(_open(file))
        if not handle.seekable():
            copy = stack.enter_context(tempfile.TemporaryFile())
            while chunk := handle.read(MAX_LINE_BYTES):
                copy.write(chunk)
            copy.seek(0)
            handle = copy
        yield ImportSource(name, handle)


def _open(file: str) -> IO[bytes]:
    fix = "give a JSON lines file, or - for stdin"
    try:
        return Path(file).open("rb")
    except FileNotFoundError:
        raise InvalidInputError(f"import file {file} does not exist; {fix}") from None
    except IsADirectoryError:
        raise InvalidInputError(f"import file {file} is a folder; {fix}") from None
    except OSError as exc:
        raise InvalidInputError(f"cannot read import file {file} ({exc.strerror}); {fix}") from None


def count_checked(items: Iterable[object]) -> int:
    """Run a lazy line parser to the end (it raises on the first bad line); how many it gave."""
    return sum(1 for _ in items)


def batches(items: Iterable[T], size: int) -> Iterator[list[T]]:
    """``items`` in lists of ``size`` (the last may be shorter), taken as they are needed."""
    iterator = iter(items)
    while batch := list(islice(iterator, size)):
        yield batch


# -- stdin queries --------------------------------------------------------------------
def parse_query_line(
    line: str, default_store: str | None, default_limit: int
) -> tuple[str, str | None, int]:
    """A stdin query line: plain text, or ``{"query", "store", "limit"}``."""
    text = line.strip()
    if not text.startswith("{"):
        return text, default_store, default_limit
    data = parse_object(text, "the line", '{"query": "...", "store": "...", "limit": 5}')
    check_required_text(data, "the JSON object", ("query",))
    check_optional_text(data, "the JSON object", ("store",))
    store, limit = data.get("store", default_store), data.get("limit", default_limit)
    if isinstance(limit, bool) or not isinstance(limit, int) or not 1 <= limit <= MAX_RESULTS:
        raise InvalidInputError(f'"limit" {limit!r} must be a whole number from 1 to {MAX_RESULTS}')
    return data["query"], store, limit


#: Answers one query: (query, store, limit) -> the stores searched, and the
#: results as JSON-ready dicts.
Answer = Callable[[str, str | None, int], tuple[Sequence[str], list[dict[str, Any]]]]


def answer_stdin_queries(answer: Answer, default_store: str | None, default_limit: int) -> int:
    """One JSON line out per query line in; a bad line gets ``{"line", "error"}``.

    The reply echoes the query with its secrets redacted (it goes to logs and
    terminals) and names the stores searched. Returns the exit status: 1 when
    any line failed, so scripts notice.
    """
    from thatch.redact import redact  # its patterns compile on import: only batch mode needs them

    failed = 0
    for line_number, line in enumerate(_stdin(), 1):
        if not line.strip():
            continue
        try:
            query, store, limit = parse_query_line(clean_text(line), default_store, default_limit)
            stores, results = answer(query, store, limit)
            reply: dict[str, Any] = {
                "query": redact(query).text,
                "stores": list(stores),
                "results": results,
            }
        except ThatchError as exc:
            failed += 1
            reply = {"line": line_number, "error": str(exc)}
        # visible(): C1 controls become JSON escapes, the same data, inert on a terminal.
        print(visible(json.dumps(reply, ensure_ascii=False)), flush=True)
    return 1 if failed else 0
