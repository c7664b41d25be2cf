"""Stage 1's batch analysis: struggles and recurring pitfalls become insights, once."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from pathlib import Path

import attrs
import numpy as np
from receptor_streams import Stream, edit, read, run
from thatch.plugin import ToolCall
from thatch.testing import WordHashEmbedder
from thatch_receptor.insights import SAVE_TOOL, find_insights, leader_clusters
from thatch_receptor.observations import Observation, ObservationStore, observations_of

EMBEDDER = WordHashEmbedder(dim=256)
FAILING = "pytest tests/test_auth.py"
ERROR = "AssertionError: token expired"


def observed(
    calls: Iterable[ToolCall], session: str = "s1", repo: str = "acme/app", start: float = 0.0
) -> list[Observation]:
    """One observation per call, a step apart, ids counted from ``start``."""
    stream = Stream(session_id=session, at=1000.0 + start * 20)
    found = []
    for n, call in enumerate(calls):
        event = stream.event(call)
        for obs in observations_of(event, repo=repo, at=event.received_at):
            found.append(attrs.evolve(obs, id=int(start) + n + 1))
    return found


def embedded(observations: Sequence[Observation]) -> np.ndarray:
    return EMBEDDER.embed_passages([o.text for o in observations])


def struggle(session: str = "s1") -> list[ToolCall]:
    """fail, edit, fail, edit, pass on one test command."""
    return [
        read("src/auth/token.py"),
        run(FAILING, error="AssertionError: token missing"),
        edit("src/auth/token.py"),
        run(FAILING, error=ERROR),
        edit("src/auth/clock.py"),
        run(FAILING),
    ]


def test_a_scripted_struggle_gives_one_insight_naming_the_command_and_the_edits() -> None:
    observations = observed(struggle())

    [insight] = find_insights(observations, embedded(observations), now=7.0)

    assert insight.kind == "struggle"
    assert f"`{FAILING}` passes now, after 2 failures" in insight.text
    assert ERROR in insight.text
    assert "src/auth/token.py, src/auth/clock.py" in insight.text
    assert insight.text.endswith(f"save what it was with {SAVE_TOOL}.")
    assert (insight.repo, insight.session_ids, insight.created_at) == ("acme/app", ("s1",), 7.0)
    assert insight.observation_ids == (2, 3, 4, 5, 6)


def test_the_save_tool_is_thatchs_own() -> None:
    tools = Path(__file__).resolve().parents[2] / "core/src/thatch/tools/memory.py"
    assert f'name="{SAVE_TOOL}"' in tools.read_text(encoding="utf-8")


def test_the_same_command_with_other_options_is_the_same_struggle() -> None:
    calls = [
        run("pytest tests/test_auth.py", error=ERROR),
        edit("src/auth/token.py"),
        run("python -m pytest -q tests/test_auth.py", error=ERROR),
        edit("src/auth/token.py"),
        run("pytest tests/test_auth.py -x"),
    ]
    assert [i.kind for i in find_insights(observed(calls), None)] == ["struggle"]


def test_no_struggle_without_enough_failures_edits_or_a_pass() -> None:
    once = [run(FAILING, error=ERROR), edit(), run(FAILING)]
    no_edit = [run(FAILING, error=ERROR), run(FAILING, error=ERROR), run(FAILING)]
    no_pass = [run(FAILING, error=ERROR), edit(), run(FAILING, error=ERROR), edit()]
    other_command_passes = [
        run(FAILING, error=ERROR),
        edit(),
        run(FAILING, error=ERROR),
        edit(),
        run("pytest tests/test_billing.py"),
    ]
    only_the_script = [
        run("python repro.py", error=ERROR),
        edit("repro.py"),
        run("python repro.py", error=ERROR),
        edit("repro.py"),
        run("python repro.py"),
    ]
    for calls in (once, no_edit, no_pass, other_command_passes, only_the_script):
        assert find_insights(observed(calls), None) == []
    assert len(find_insights(observed(once), None, min_failures=1)) == 1


def test_struggles_are_per_session() -> None:
    first = observed(struggle()[:4], session="s1")
    second = observed([edit("src/auth/token.py"), run(FAILING)], session="s2", start=10)
    assert find_insights([*first, *second], None) == []


def test_the_analysis_run_again_finds_the_same_keys() -> None:
    observations = observed(struggle())
    later = [*observations, *observed([read("README.md")], start=20)]

    assert [i.key for i in find_insights(observations, None)] == [
        i.key for i in find_insights(list(reversed(later)), None)
    ]


def pitfall(session: str, start: float) -> list[Observation]:
    """A session that meets the missing driver, among its own work."""
    return observed(
        [
            read(f"src/{session}/models.py"),
            run(
                "python -m pytest tests/test_db.py",
                error="ModuleNotFoundError: No module named 'psycopg2'",
            ),
            edit(f"src/{session}/views.py"),
        ],
        session=session,
        start=start,
    )


def test_a_pitfall_met_in_three_sessions_gives_one_recurring_insight() -> None:
    observations = [o for n in range(3) for o in pitfall(f"s{n}", start=n * 10)]

    [insight] = find_insights(observations, embedded(observations), now=3.0)

    assert insight.kind == "recurring"
    assert insight.session_ids == ("s0", "s1", "s2")
    assert "`python -m pytest tests/test_db.py` failed in 3 sessions" in insight.text
    assert "No module named 'psycopg2'" in insight.text
    assert insight.text.endswith(
        f"save it with {SAVE_TOOL} so the next session does not meet it again."
    )
    assert insight.repo == "acme/app"


def test_two_sessions_are_no_recurrence() -> None:
    observations = [o for n in range(2) for o in pitfall(f"s{n}", start=n * 10)]
    assert find_insights(observations, embedded(observations)) == []


def test_a_recurring_key_survives_the_cluster_growing() -> None:
    three = [o for n in range(3) for o in pitfall(f"s{n}", start=n * 10)]
    four = [*three, *pitfall("s3", start=30)]

    [before] = find_insights(three, embedded(three))
    [after] = find_insights(four, embedded(four))

    assert before.key == after.key
    assert len(after.session_ids) == 4


def test_unrelated_noise_gives_no_insight() -> None:
    words = [
        "alpha",
        "bravo",
        "charlie",
        "delta",
        "echo",
        "foxtrot",
        "golf",
        "hotel",
        "india",
        "juliet",
        "kilo",
        "lima",
    ]
    observations: list[Observation] = []
    for n in range(4):
        calls = [
            run(f"make {words[(3 * n + i) % len(words)]}-{n}-{i}", error=f"{words[i]} broke")
            if i % 2
            else edit(f"src/{words[i]}_{n}.py")
            for i in range(8)
        ]
        observations += observed(calls, session=f"s{n}", start=n * 10)

    assert find_insights(observations, embedded(observations)) == []


def test_housekeeping_and_unknown_tools_are_no_pitfall() -> None:
    observations = [
        o
        for n in range(4)
        for o in observed(
            [
                run("rm repro.py", error="rm: cannot remove 'repro.py': No such file"),
                ToolCall("format_error", {"blocks": 2}, None, failed=True, error="one block"),
            ],
            session=f"s{n}",
            start=n * 10,
        )
    ]
    assert find_insights(observations, embedded(observations)) == []


def test_leader_clustering_joins_the_nearest_leader_above_the_threshold() -> None:
    vectors = np.array([[1, 0], [0, 1], [0.9, 0.1], [0.1, 0.9], [0.7, 0.7]], dtype=np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)

    assert leader_clusters(vectors, 0.9) == [[0, 2], [1, 3], [4]]
    assert leader_clusters(vectors, 0.5) == [[0, 2, 4], [1, 3]]
    assert leader_clusters(vectors[:0], 0.5) == []


def test_insights_found_are_offered_once_through_the_store(tmp_path: Path) -> None:
    store = ObservationStore(tmp_path / "observations.db")
    observations = observed(struggle())
    store.add(observations, embedded(observations))

    for _ in range(2):
        found, vectors = store.for_clustering("acme/app", None)
        saved = [store.save_insight(i) for i in find_insights(found, vectors)]

    assert saved == [False]
    [stored] = store.insights(pending_only=True)
    assert stored.kind == "struggle"
    assert stored.observation_ids == tuple(o.id for o in store.recent("s1")[1:])
    store.close()
