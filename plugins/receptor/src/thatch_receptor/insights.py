"""Stage 1's batch analysis: what the agent worked out, offered to it as an insight to save.

:func:`find_insights` reads stored observations (and their unit vectors) and
finds two kinds of insight:

- **struggle**: within one session, a command that failed ``min_failures``
  times or more on one thing, then passed, with files edited in between that
  are not scripts (the command's own file or one the session ran meanwhile).
  "One thing" is the same program on the same files (``pytest
  tests/test_auth.py`` and ``python -m pytest -q tests/test_auth.py``) or,
  for a command that names no file, its text. The insight names the
  command, the last error and the files edited.
- **recurring**: a cluster, at least ``min_failed_share`` of it failures,
  met in ``min_sessions`` sessions or more: the same pitfall again. Clusters
  come from leader clustering on unit vectors in time order: each
  observation joins the cluster whose leader (its first member) is nearest,
  if that cosine is at least ``cluster_cosine``, else it leads a new one. A
  single pass, ``O(n × clusters)`` dot products, and the leader of a cluster
  is its oldest member, so the key derived from it does not change as the
  cluster grows: running the analysis again finds the same key, and the
  store offers each insight once.

About 26 ms for 1,522 observations, 0.6 s for 15,220 (docs/receptor.md).
"""

from __future__ import annotations

import hashlib
import re
import time
from collections.abc import Sequence
from typing import TYPE_CHECKING, Literal

import attrs
import numpy as np
import numpy.typing as npt

if TYPE_CHECKING:
    from thatch_receptor.observations import Observation

InsightKind = Literal["recurring", "struggle"]

#: The thatch tool an insight asks the agent to save it with.
SAVE_TOOL = "memory_remember"
#: Cosine to a cluster's leader at which an observation joins it.
CLUSTER_COSINE = 0.85
#: Sessions a cluster must appear in to be a recurring insight.
MIN_SESSIONS = 3
#: Failures on one thing before a pass for a struggle insight.
MIN_FAILURES = 2
#: Share of a cluster's observations that must have failed for it to be a pitfall.
MIN_FAILED_SHARE = 0.5
#: Longest command or error quoted in an insight's text.
QUOTE = 100

_OUTCOME = re.compile(r" -> .*\Z", re.DOTALL)
_TOOL_PREFIX = re.compile(r"\A[\w.-]+: ")
_DIGITS = re.compile(r"\d+")
_PATHS = re.compile(r"\S*/\S*")
# A file's path (``src/auth.py``, ``setup.cfg``), not a folder nor a sed script.
_FILE = re.compile(r"\A[\w.~-]*(?:/[\w.@+-]+)*/?[\w@+-][\w.@+-]*\.\w{1,8}\Z")
#: Action kinds whose recurring failures are no pitfall of the code (a tool
#: the receptor has no word for, such as a harness's format error).
_NOT_PITFALLS = frozenset({"other"})
# Programs whose failure (``rm: cannot remove 'x'``) says nothing about the code.
_HOUSEKEEPING = frozenset(
    {"rm", "cd", "ls", "mkdir", "cp", "mv", "echo", "pwd", "touch", "which", "true", "clear"}
)


@attrs.frozen
class Insight:
    """Something the agent worked out, ready to be offered to it."""

    #: Stable for the same finding: the analysis run again gives the same key.
    key: str
    kind: InsightKind
    #: The notification the agent reads, ending with a suggestion to save it.
    text: str
    repo: str | None
    session_ids: tuple[str, ...]
    observation_ids: tuple[int, ...]
    created_at: float


def find_insights(
    observations: Sequence[Observation],
    vectors: npt.NDArray[np.float32] | None,
    *,
    min_failures: int = MIN_FAILURES,
    min_sessions: int = MIN_SESSIONS,
    cluster_cosine: float = CLUSTER_COSINE,
    min_failed_share: float = MIN_FAILED_SHARE,
    now: float | None = None,
) -> list[Insight]:
    """The struggle and recurring insights of ``observations``, oldest finding first.

    :param observations: in any order; they are read in time order (ties by id).
    :param vectors: one unit row per observation, or None (no recurring insights).
    :param now: the insights' ``created_at`` (default: the current time).
    """
    created_at = time.time() if now is None else now
    order = sorted(range(len(observations)), key=lambda i: (observations[i].at, observations[i].id))
    ordered = [observations[i] for i in order]
    found = struggles(ordered, min_failures=min_failures, created_at=created_at)
    if vectors is not None and len(ordered):
        found += recurring(
            ordered,
            np.asarray(vectors, dtype=np.float32)[order],
            min_sessions=min_sessions,
            cluster_cosine=cluster_cosine,
            min_failed_share=min_failed_share,
            created_at=created_at,
        )
    return found


# --- struggles ----------------------------------------------------------------


@attrs.define
class _Attempt:
    """A command failing on one thing, and the edits made since its first failure."""

    failures: list[Observation] = attrs.Factory(list)
    edits: list[Observation] = attrs.Factory(list)
    #: The files the session's commands ran or read since: scripts, not fixes.
    ran: set[str] = attrs.Factory(set)


def struggles(
    observations: Sequence[Observation], *, min_failures: int, created_at: float
) -> list[Insight]:
    """Each run of ``min_failures`` or more failures, edits, then a pass, per session."""
    attempts: dict[tuple[str, str], _Attempt] = {}
    found: list[Insight] = []
    for obs in observations:
        for (session, _), attempt in attempts.items():
            if session != obs.session_id:
                continue
            if obs.kind == "edit":
                attempt.edits.append(obs)
            elif obs.kind == "run":
                attempt.ran.update(obs.paths)
        if obs.kind != "run":
            continue
        key = (obs.session_id, subject(obs))
        if obs.failed:
            attempts.setdefault(key, _Attempt()).failures.append(obs)
            continue
        attempt = attempts.pop(key, _Attempt())
        if len(attempt.failures) >= min_failures and fixed_files(attempt, obs):
            found.append(struggle_insight(attempt, obs, created_at))
    return found


def subject(obs: Observation) -> str:
    """What a run works on: its program and files, or its whole command when it names none."""
    command = command_of(obs.text)
    if obs.paths:
        return "\0".join([program_of(command), *sorted(obs.paths)])
    return command


def program_of(command: str) -> str:
    """A command's program: ``python -m pytest x`` and ``pytest -q x`` both run ``pytest``."""
    words = command.split()
    if len(words) > 2 and words[0].startswith("python") and words[1] == "-m":
        return words[2]
    return words[0].rsplit("/", 1)[-1].rstrip("0123456789.") if words else ""


def command_of(text: str) -> str:
    """An observation's command: its text less the tool and the outcome."""
    return _TOOL_PREFIX.sub("", _OUTCOME.sub("", text), count=1).strip()


def error_of(text: str) -> str | None:
    """The error an observation's text ends with (after ``-> exit N:``), if any."""
    _, arrow, outcome = text.rpartition(" -> ")
    _, colon, error = outcome.partition(": ")
    return error.strip() or None if arrow and colon else None


def fixed_files(attempt: _Attempt, passed: Observation) -> list[str]:
    """The files edited during the attempt, other than scripts, in edit order.

    A script is the command's own file or one the session ran meanwhile (a
    throw-away check); a struggle whose only edits are to scripts (the agent
    rewriting its reproduction script) taught nothing about the code.
    """
    own = set(passed.paths) | attempt.ran
    edited = (p for e in attempt.edits for p in e.paths)
    return list(dict.fromkeys(p for p in edited if p not in own and _FILE.match(p)))


def struggle_insight(attempt: _Attempt, passed: Observation, created_at: float) -> Insight:
    """The insight of a struggle that ended in ``passed``."""
    edited = fixed_files(attempt, passed)
    failures = attempt.failures
    error = last_error(failures)
    what = f"`{quote(command_of(passed.text))}` passes now, after {_times(len(failures))}"
    if error:
        what += f" (last: {quote(error)})"
    what += f"; you edited {', '.join(quote(p) for p in edited[:4])}"
    if len(edited) > 4:
        what += f" and {len(edited) - 4} more"
    what += " in between"
    members = [*failures, *attempt.edits, passed]
    return Insight(
        key=_key("struggle", passed.session_id, subject(passed), f"{failures[0].at!r}"),
        kind="struggle",
        text=f"You worked something out: {what}. If the fix is worth keeping, "
        f"save what it was with {SAVE_TOOL}.",
        repo=passed.repo,
        session_ids=(passed.session_id,),
        observation_ids=tuple(sorted(o.id for o in members if o.id)),
        created_at=created_at,
    )


# --- recurring clusters -------------------------------------------------------


def leader_clusters(vectors: npt.NDArray[np.float32], threshold: float) -> list[list[int]]:
    """Leader clustering of unit rows in their order: each row joins the nearest leader.

    A row joins the cluster whose leader (first row) has the highest cosine
    with it, when that is at least ``threshold``; otherwise it leads a new
    cluster. Leaders are kept in one growing matrix, so each row costs one
    matrix-vector product over the leaders so far.
    """
    count, dim = vectors.shape
    leaders = np.empty((max(count, 1), dim), dtype=np.float32)
    clusters: list[list[int]] = []
    for i in range(count):
        if clusters:
            cosines = leaders[: len(clusters)] @ vectors[i]
            best = int(np.argmax(cosines))
            if cosines[best] >= threshold:
                clusters[best].append(i)
                continue
        leaders[len(clusters)] = vectors[i]
        clusters.append([i])
    return clusters


def recurring(
    observations: Sequence[Observation],
    vectors: npt.NDArray[np.float32],
    *,
    min_sessions: int,
    cluster_cosine: float,
    min_failed_share: float,
    created_at: float,
) -> list[Insight]:
    """The clusters of failures that come back in ``min_sessions`` sessions or more."""
    found = []
    for members in leader_clusters(vectors, cluster_cosine):
        cluster = [observations[i] for i in members]
        if all(o.kind in _NOT_PITFALLS or _housekeeping(o) for o in cluster):
            continue
        sessions = list(dict.fromkeys(o.session_id for o in cluster))
        failed = [o for o in cluster if o.failed]
        if len(sessions) < min_sessions or len(failed) < min_failed_share * len(cluster):
            continue
        found.append(recurring_insight(cluster, failed, sessions, created_at))
    return found


def recurring_insight(
    cluster: Sequence[Observation],
    failed: Sequence[Observation],
    sessions: Sequence[str],
    created_at: float,
) -> Insight:
    """The insight of a pitfall met in several sessions; ``cluster[0]`` is its leader."""
    leader = cluster[0]
    repos = {o.repo for o in cluster}
    repo = leader.repo if len(repos) == 1 else None
    error = common_error(failed)
    commands = list(dict.fromkeys(command_of(o.text) for o in failed))
    what = f"`{quote(commands[0])}`"
    if len(commands) > 1:
        what += f" and {len(commands) - 1} like it"
    what += f" failed in {len(sessions)} sessions"
    if error:
        what += f" ({quote(error)})"
    return Insight(
        # Digits out: the same pitfall on another line or port is the same one.
        key=_key("recurring", repo or "", _DIGITS.sub("#", command_of(leader.text))),
        kind="recurring",
        text=f"This keeps coming back: {what}. If you know the cause or the way around it, "
        f"save it with {SAVE_TOOL} so the next session does not meet it again.",
        repo=repo,
        session_ids=tuple(sessions),
        observation_ids=tuple(o.id for o in cluster if o.id),
        created_at=created_at,
    )


def _housekeeping(obs: Observation) -> bool:
    """A command that only tidies up or looks around: its failures are no pitfall."""
    return program_of(command_of(obs.text)) in _HOUSEKEEPING


def last_error(failures: Sequence[Observation]) -> str | None:
    """The error the last failure that names one ends with."""
    return next((e for e in map(error_of, (f.text for f in reversed(failures))) if e), None)


def common_error(failures: Sequence[Observation]) -> str | None:
    """The error most of the failures end with, paths aside (the earliest of equals)."""
    errors = [e for e in (error_of(f.text) for f in failures) if e]
    if not errors:
        return None
    keys = [_PATHS.sub("", error) for error in errors]
    common = max(dict.fromkeys(keys), key=keys.count)
    return errors[keys.index(common)]


def _times(count: int) -> str:
    return "1 failure" if count == 1 else f"{count} failures"


def quote(text: str) -> str:
    """``text`` on one line, cut to :data:`QUOTE` characters."""
    text = " ".join(text.split())
    return text if len(text) <= QUOTE else text[: QUOTE - 1] + "…"


def _key(*parts: str) -> str:
    return hashlib.sha256("\0".join(parts).encode()).hexdigest()[:24]
