"""The interpretation: thresholds, learned sensitivity, dropped compositions and the discipline."""

from __future__ import annotations

import json
import threading

import attrs
import pytest
from receptor_compositions import composition
from thatch.plugin import FiringComposition, Interpretation, InvalidInputError, SignalReading
from thatch_receptor.interpret import (
    NO_RULE,
    Interpreter,
    InterpretSettings,
    LearnedDelta,
)
from thatch_receptor.rules import parse_rules, rules_for

STUCK = ("frustration", "seeking")


class FixedRule:
    """Applies to every composition of its pattern, with a fixed score and mode."""

    def __init__(self, name: str, score: float, mode: str = "active", pattern: str = "") -> None:
        self.name, self.score, self.mode, self.pattern = name, score, mode, pattern

    def interpret(self, composition: FiringComposition) -> Interpretation | None:
        if self.pattern and composition.pattern != self.pattern:
            return None
        return Interpretation(self.name, "error_context", self.mode, "why not", self.score)


class BrokenRule:
    name = "broken"

    def interpret(self, composition: FiringComposition) -> Interpretation | None:
        raise RuntimeError("boom")


def decide(interpreter: Interpreter, comp: FiringComposition, calls: int = 1):
    return interpreter.session().decide(comp, tool_calls=calls)


@pytest.mark.parametrize(
    ("score", "mode", "why"),
    [
        (0.8, "active", "score 0.80 at or over the delivery threshold 0.60: active"),
        (0.41, "silent", "score 0.41 under the delivery threshold 0.60: silent"),
        (0.596, "silent", "score 0.59 under the delivery threshold 0.60: silent"),
        (0.2, "drop", "score 0.20 under the silent threshold 0.35: drop"),
    ],
)
def test_the_score_against_the_thresholds(score: float, mode: str, why: str) -> None:
    decision = decide(Interpreter([FixedRule("r", score)]), composition(*STUCK))
    assert (decision.mode, decision.why) == (mode, why)
    assert decision.score == pytest.approx(score)
    assert decision.interpretation is not None
    assert decision.interpretation.rule == "r"


def test_the_best_scoring_rule_wins_and_a_failing_one_is_skipped() -> None:
    rules = [FixedRule("low", 0.5), BrokenRule(), FixedRule("high", 0.9), FixedRule("tie", 0.9)]
    decision = decide(Interpreter(rules), composition(*STUCK))
    assert decision.rule == "high"


def test_a_dropped_composition_is_recorded() -> None:
    interpreter = Interpreter([FixedRule("weak", 0.1, pattern="trial_error")])
    weak = decide(interpreter, composition(*STUCK, event_id="weak"))
    unruled = decide(interpreter, composition("seeking", pattern="wandering", event_id="none"))
    assert weak.mode == unruled.mode == "drop"
    assert unruled.why == "no rule applies: drop"
    learned = interpreter.learned
    assert learned.dropped_by_pattern == {"trial_error": 1, "wandering": 1}
    assert learned.dropped_by_rule == {"weak": 1, NO_RULE: 1}
    first, second = learned.recent_drops
    assert (first.event_id, first.rule, first.score) == ("weak", "weak", 0.1)
    assert "under the silent threshold" in first.why
    assert (second.event_id, second.rule) == ("none", NO_RULE)


def test_a_silent_or_delivered_composition_is_not_recorded_as_dropped() -> None:
    interpreter = Interpreter([FixedRule("r", 0.5)])
    decide(interpreter, composition(*STUCK))
    assert interpreter.learned.recent_drops == ()


def test_a_rule_that_drops_is_recorded() -> None:
    interpreter = Interpreter([FixedRule("quiet", 0.9, mode="drop")])
    decision = decide(interpreter, composition(*STUCK))
    assert (decision.mode, decision.why) == ("drop", "rule quiet drops it: drop")
    assert interpreter.learned.dropped_by_rule == {"quiet": 1}


def test_the_recent_drops_are_bounded() -> None:
    interpreter = Interpreter([], learned=LearnedDelta(keep_recent=3))
    for index in range(5):
        decide(interpreter, composition(*STUCK, event_id=f"e{index}"))
    assert [d.event_id for d in interpreter.learned.recent_drops] == ["e2", "e3", "e4"]
    assert interpreter.learned.dropped_by_pattern == {"trial_error": 5}


def test_a_dismissal_lowers_that_patterns_sensitivity() -> None:
    interpreter = Interpreter(rules_for(None))
    stuck = composition(*STUCK, frustration=0.4, seeking=0.3)
    assert decide(interpreter, stuck).mode == "active"
    interpreter.learned.dismiss("trial_error")
    interpreter.learned.dismiss("trial_error")
    lowered = decide(interpreter, stuck)
    assert not lowered.delivered
    assert "(learned -0.20)" in lowered.why
    # Other patterns keep their sensitivity.
    assert interpreter.learned.offset("wandering") == 0.0


def test_dismissal_and_acceptance_are_bounded() -> None:
    learned = LearnedDelta(dismiss_step=0.2, accept_step=0.1, lowest=-0.3, highest=0.15)
    assert [learned.dismiss("p") for _ in range(3)] == pytest.approx([-0.2, -0.3, -0.3])
    assert [learned.accept("q") for _ in range(3)] == pytest.approx([0.1, 0.15, 0.15])


def test_an_acceptance_can_lift_a_score_over_the_threshold() -> None:
    interpreter = Interpreter([FixedRule("r", 0.58)])
    assert decide(interpreter, composition(*STUCK)).mode == "silent"
    interpreter.learned.accept("trial_error")
    assert decide(interpreter, composition(*STUCK)).mode == "active"


def test_the_learned_state_round_trips_through_json() -> None:
    interpreter = Interpreter([FixedRule("weak", 0.1)])
    interpreter.learned.dismiss("trial_error")
    decide(interpreter, composition(*STUCK))
    data = json.loads(json.dumps(interpreter.learned.to_dict()))
    again = LearnedDelta.from_dict(data)
    assert again.to_dict() == interpreter.learned.to_dict()
    assert again.offset("trial_error") == pytest.approx(-0.1)


def test_a_bad_learned_state_is_a_clear_error() -> None:
    with pytest.raises(InvalidInputError, match="learned state"):
        LearnedDelta.from_dict({"recent": [{"nope": 1}]})


def test_the_learned_state_is_thread_safe() -> None:
    learned = LearnedDelta(dismiss_step=0.001, lowest=-1.0)
    threads = [
        threading.Thread(target=lambda: [learned.dismiss("p") for _ in range(100)])
        for _ in range(4)
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert learned.offset("p") == pytest.approx(-0.4)


@pytest.mark.parametrize("mode", ["active", "passive"])
def test_active_never_during_deep_work_and_passive_is_suppressed(mode: str) -> None:
    interpreter = Interpreter([FixedRule("r", 0.95, mode=mode)])
    decision = decide(interpreter, composition(*STUCK, in_flow=True))
    assert decision.mode == "silent"
    assert f"(deep work: {mode} held back)" in decision.why
    assert decision.interpretation is not None
    assert decision.interpretation.mode == mode


def test_a_notification_stays_during_deep_work() -> None:
    interpreter = Interpreter([FixedRule("r", 0.95, mode="notification")])
    assert decide(interpreter, composition(*STUCK, in_flow=True)).mode == "notification"


def test_the_default_rules_deliver_nothing_actively_during_deep_work() -> None:
    interpreter = Interpreter(rules_for(None))
    for fired in (STUCK, ("frustration",), ("frustration", "fatigue")):
        strong = composition(*fired, frustration=0.9, seeking=0.9, fatigue=0.9, in_flow=True)
        assert decide(interpreter, strong).mode == "silent"
        assert decide(interpreter, attrs.evolve(strong, in_flow=False)).mode == "active"


def test_an_active_within_the_cooldown_becomes_a_notification() -> None:
    settings = InterpretSettings(active_cooldown_calls=10)
    session = Interpreter([FixedRule("r", 0.9)], settings).session()
    modes = [session.decide(composition(*STUCK), tool_calls=n).mode for n in (5, 9, 14, 15)]
    assert modes == ["active", "notification", "notification", "active"]
    third = session.decide(composition(*STUCK), tool_calls=20)
    assert third.mode == "notification"
    assert "(active 5 tool calls after the last, cooldown 10)" in third.why


def test_sessions_keep_their_own_cooldown() -> None:
    interpreter = Interpreter([FixedRule("r", 0.9)])
    one, two = interpreter.session(), interpreter.session()
    assert one.decide(composition(*STUCK), tool_calls=3).mode == "active"
    assert two.decide(composition(*STUCK), tool_calls=4).mode == "active"


def test_a_composition_never_raises() -> None:
    class Odd:
        name = "odd"

        def interpret(self, composition: FiringComposition) -> object:
            return "not an interpretation"

    decision = decide(Interpreter([BrokenRule(), Odd()]), composition(*STUCK))
    assert decision.mode == "drop"


def test_a_secret_the_reason_quotes_is_redacted() -> None:
    token = "ghp_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8"
    quoting = {
        "name": "quoting",
        "trigger": "error_context",
        "mode": "active",
        "reason": "stuck on {signal}",
        "score": {"base": 0.9},
    }
    (rule,) = parse_rules({"rules": [quoting]}, "test rules")
    failing = SignalReading("test-source", "frustration", 0.9, f"bash: curl -H 'token {token}'")
    comp = attrs.evolve(composition(*STUCK), signals=(failing,))
    found = decide(Interpreter([rule]), comp).interpretation
    assert found is not None
    assert found.reason.startswith("stuck on bash: curl")
    assert token not in found.reason
    assert "[REDACTED" in found.reason


def test_settings_are_checked() -> None:
    with pytest.raises(ValueError, match="silent_threshold"):
        InterpretSettings(deliver_threshold=0.3, silent_threshold=0.5)
    with pytest.raises(ValueError, match="between 0 and 1"):
        InterpretSettings(deliver_threshold=1.5)
