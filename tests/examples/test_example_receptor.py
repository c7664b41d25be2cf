"""The example receptor plugin: a third party's signal source and rule change what fires.

``thatch-example-receptor`` is installed like any third-party plugin (entry
point ``example-receptor``); nothing in the receptor names it. The
``receptor_replay`` fixture comes from thatch-receptor's pytest plugin and
reads with every installed plugin's sources, so a replay with and without
the example shows what its source adds.
"""

from __future__ import annotations

from importlib import metadata

import attrs
import pytest
import thatch_example_receptor.plugin
from thatch.plugin import (
    FiringComposition,
    InterpretationRule,
    SignalReading,
    SignalSource,
    ToolCall,
)
from thatch_example_receptor.rules import RecurringErrorRule
from thatch_example_receptor.signals import RecurringError, error_signature
from thatch_receptor.testing import ReceptorReplay, grep, read, run

PLUGIN = "example-receptor"
MISSING = (
    "Traceback (most recent call last):\n"
    '  File "/work/app/auth/token.py", line 3, in <module>\n'
    "ModuleNotFoundError: No module named 'jwt'"
)


def same_wall() -> list[ToolCall]:
    """Three commands meet one missing module, with reading in between and no edit."""
    return [
        run("pytest tests/test_auth.py", error=MISSING),
        read("pyproject.toml"),
        grep("jwt", "requirements.txt"),
        run("python -c 'import auth.token'", error=MISSING),
        read("requirements.txt"),
        read("setup.cfg"),
        run("python scripts/check_auth.py", error=MISSING),
        read("README.md"),
    ]


def test_the_entry_point_is_installed() -> None:
    (point,) = [p for p in metadata.entry_points(group="thatch") if p.name == PLUGIN]
    assert point.value == "thatch_example_receptor.plugin"
    assert point.load() is thatch_example_receptor.plugin
    assert point.dist is not None
    assert point.dist.name == "thatch-example-receptor"


def test_the_plugin_offers_a_source_and_a_rule() -> None:
    (source,) = thatch_example_receptor.plugin.thatch_receptor_signals()
    (rule,) = thatch_example_receptor.plugin.thatch_receptor_rules()
    assert isinstance(source, SignalSource)
    assert isinstance(rule, InterpretationRule)
    assert (source.name, rule.name) == ("recurring-error", "recurring-error")


def test_its_source_makes_frustration_fire_on_a_recurring_error(
    receptor_replay: ReceptorReplay,
) -> None:
    without = receptor_replay(same_wall(), without=(PLUGIN,))
    assert "recurring-error" not in without.sources
    assert "frustration" not in without.fired_axes()

    replay = receptor_replay(same_wall())
    assert "recurring-error" in replay.sources
    firing = replay.first("frustration")
    assert firing is not None
    # The third failed call with the same error, not before.
    assert firing.index == 6
    assert "recurring-error" in firing.sources


def test_its_rule_offers_the_error_s_context(receptor_replay: ReceptorReplay) -> None:
    firing = receptor_replay(same_wall()).first("frustration")
    assert firing is not None
    interpretation = RecurringErrorRule().interpret(firing.composition)
    assert interpretation is not None
    assert (interpretation.rule, interpretation.trigger) == ("recurring-error", "error_context")
    assert interpretation.mode == "passive"
    assert "No module named 'jwt'" in interpretation.reason
    assert "3 times" in interpretation.reason
    # In deep work it only runs the probe.
    deep = attrs.evolve(firing.composition, in_flow=True)
    assert RecurringErrorRule().interpret(deep).mode == "silent"  # type: ignore[union-attr]


def test_its_rule_leaves_other_firings_alone(receptor_replay: ReceptorReplay) -> None:
    replay = receptor_replay(same_wall(), without=(PLUGIN,))
    assert replay.firings, "expected some firing without the example"
    for firing in replay.firings:
        assert RecurringErrorRule().interpret(firing.composition) is None
    # Its source's reading alone is not enough: frustration must have fired.
    seeking = FiringComposition(
        session_id="s",
        axes={"seeking": 0.9},
        fired=frozenset({"seeking"}),
        signals=(SignalReading("recurring-error", "frustration", 0.8, "KeyError: 'user'"),),
        deltas={},
        pattern="exploring",
    )
    assert RecurringErrorRule().interpret(seeking) is None


def test_ordinary_failures_stay_quiet(receptor_replay: ReceptorReplay) -> None:
    # Two failures with one error, or three with different ones: someone fixing tests.
    calls = [
        run("pytest tests/test_a.py", error="E   KeyError: 'user'"),
        run("pytest tests/test_a.py", error="E   KeyError: 'user'"),
        run("pytest tests/test_b.py", error="E   TypeError: expected str"),
        run("pytest tests/test_c.py", error="Exit code 1"),
    ]
    replay = receptor_replay(calls, sources=[RecurringError()])
    assert not any(step.readings for step in replay.steps)


@pytest.mark.parametrize(
    ("error", "signature"),
    [
        (MISSING, "ModuleNotFoundError: No module named 'jwt'"),
        ("E   AssertionError: token expired at 1800000123", "AssertionError: token expired at #"),
        ("E   assert 3 == 4\nE   AssertionError: assert 3 == 4", "AssertionError: assert 3 == 4"),
        ("error[E0425]: cannot find value `x`", "error[E0425]: cannot find value `x`"),
        ("fatal: not a git repository", "fatal: not a git repository"),
        ("Exit code 1", None),
    ],
)
def test_an_error_s_signature_is_its_telling_line(error: str, signature: str | None) -> None:
    call = ToolCall("Bash", {"command": "x"}, None, failed=True, error=error)
    assert error_signature(call) == signature


def test_a_passing_call_has_no_signature() -> None:
    assert error_signature(ToolCall("Bash", {"command": "x"}, "ValueError: in output")) is None
    failed = ToolCall("Bash", {"command": "x"}, {"stderr": "OSError: disk full"}, failed=True)
    assert error_signature(failed) == "OSError: disk full"


def test_the_docs_example_holds(receptor_replay: ReceptorReplay) -> None:
    # The stream of docs/plugins.md's and docs/receptor.md's fixture examples.
    missing = "ModuleNotFoundError: No module named 'jwt'"
    calls = [run("pytest", error=missing), read(), run("python -c 'import app'", error=missing)]
    calls.append(run("python app.py", error=missing))
    firing = receptor_replay(calls).first("frustration")
    assert firing is not None
    assert "recurring-error" in firing.sources
    assert not receptor_replay(calls, without=(PLUGIN,)).fired_axes()
