"""JSON interpretation rules: the shipped defaults, the file format, its errors, overrides."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from receptor_compositions import composition
from thatch.plugin import Interpretation, InterpretationRule, InvalidInputError
from thatch_receptor.patterns import LABELS
from thatch_receptor.rules import (
    RULES_FILE_NAME,
    JsonRule,
    RuleFileError,
    default_rules,
    load_rules_file,
    rules_for,
)


def rule_file(tmp_path: Path, *rules: object, name: str = "rules.json") -> Path:
    path = tmp_path / name
    path.write_text(json.dumps({"rules": list(rules)}), encoding="utf-8")
    return path


def by_name(rules: tuple[InterpretationRule, ...]) -> dict[str, InterpretationRule]:
    return {rule.name: rule for rule in rules}


def best(rules: tuple[InterpretationRule, ...], fired: tuple[str, ...], **kw: object):
    found = [r.interpret(composition(*fired, **kw)) for r in rules]  # type: ignore[arg-type]
    return max((f for f in found if f), key=lambda f: f.score, default=None)


MINE = {
    "name": "mine",
    "when": {"fired": ["seeking"], "patterns": ["wandering"]},
    "trigger": "docs",
    "mode": "passive",
    "reason": "searching {pattern} (seeking {seeking})",
}


def test_the_defaults_are_rules_of_the_contract() -> None:
    rules = default_rules()
    assert {"error-context", "similar-tasks", "break"} <= set(by_name(rules))
    assert all(isinstance(rule, InterpretationRule) for rule in rules)


@pytest.mark.parametrize(
    ("fired", "pattern", "rule", "trigger"),
    [
        (("frustration", "seeking"), "trial_error", "error-context", "error_context"),
        (("frustration", "uncertainty"), "wandering", "similar-tasks", "similar_tasks"),
        (("frustration", "fatigue"), "trial_error", "break", "break"),
    ],
)
def test_the_issue_defaults_map_their_compositions(
    fired: tuple[str, ...], pattern: str, rule: str, trigger: str
) -> None:
    found = by_name(default_rules())[rule].interpret(composition(*fired, pattern=pattern))
    assert found is not None
    assert (found.rule, found.trigger) == (rule, trigger)
    assert 0.0 <= found.score <= 1.0
    # Without the pattern the rule does not apply.
    assert by_name(default_rules())[rule].interpret(composition(*fired, pattern="mixed")) is None


def test_a_stuck_and_searching_agent_gets_error_context_actively() -> None:
    found = best(default_rules(), ("frustration", "seeking"), frustration=0.7, seeking=0.6)
    assert found is not None
    assert (found.rule, found.mode) == ("error-context", "active")
    assert "frustration 0.70" in found.reason


@pytest.mark.parametrize("rule", default_rules(), ids=lambda rule: rule.name)
def test_a_default_reason_gives_its_values_as_at_the_firing(rule: JsonRule) -> None:
    # The axes go on rising after a firing: a status read later shows more than the
    # reason, which must say which moment its numbers are of.
    fired = sorted(rule.fired)
    pattern = min(rule.patterns, default="trial_error")
    found = rule.interpret(composition(*fired, pattern=pattern, **dict.fromkeys(fired, 0.3)))
    assert found is not None
    assert "0.30 when it fired" in found.reason


def test_the_score_grows_with_the_axes() -> None:
    rule = by_name(default_rules())["error-context"]
    weak = rule.interpret(composition("frustration", "seeking", frustration=0.2, seeking=0.2))
    strong = rule.interpret(composition("frustration", "seeking", frustration=0.9, seeking=0.8))
    assert weak is not None
    assert strong is not None
    assert weak.score < strong.score <= 1.0
    assert weak.score >= 0.55  # the rule's base: its conditions alone


def test_a_rule_file_rule_interprets(tmp_path: Path) -> None:
    (rule,) = load_rules_file(rule_file(tmp_path, MINE))
    found = rule.interpret(composition("seeking", pattern="wandering", seeking=0.4))
    assert found == Interpretation(
        "mine", "docs", "passive", "searching wandering (seeking 0.40)", 0.7
    )
    assert rule.interpret(composition("seeking", pattern="trial_error")) is None
    assert rule.interpret(composition("frustration", pattern="wandering")) is None


def test_min_values_weights_and_not_in_flow(tmp_path: Path) -> None:
    spec = {
        **MINE,
        "when": {"min": {"frustration": 0.6}, "not_in_flow": True},
        "score": {"base": 0.2, "weights": {"frustration": 3, "seeking": 1}},
    }
    (rule,) = load_rules_file(rule_file(tmp_path, spec))
    assert rule.interpret(composition("frustration", frustration=0.5)) is None
    assert rule.interpret(composition("frustration", frustration=0.8, in_flow=True)) is None
    found = rule.interpret(composition("frustration", frustration=0.8))
    assert found is not None
    assert found.score == pytest.approx(0.2 + 0.8 * (3 * 0.8 + 0.0) / 4)


@pytest.mark.parametrize(
    ("change", "field", "hint"),
    [
        ({"mode": "loud"}, "mode", "active"),
        ({"mode": None}, "mode", "drop"),
        ({"trigger": ""}, "trigger", '"trigger"'),
        ({"when": {"fired": ["anger"]}}, "when.fired", "frustration"),
        ({"when": {"min": {"seeking": 2}}}, "when.min.seeking", "between 0 and 1"),
        ({"when": {"patern": ["x"]}}, "when.patern", "patterns"),
        ({"when": {"patterns": "trial_error"}}, "when.patterns", '["trial_error"'),
        ({"when": {"patterns": ["wandering", "trial_eror"]}}, "when.patterns", "trial_error"),
        ({"score": {"weights": {"seeking": 0}}}, "score.weights", "above 0"),
        ({"score": {"weights": {"seeking": float("inf")}}}, "score.weights.seeking", "finite"),
        ({"score": {"base": "high"}}, "score.base", "between 0 and 1"),
        ({"reason": "see {nothing}"}, "reason", "{pattern}"),
        ({"reason": "see {seeking:d}"}, "reason", ":.2f"),
        ({"colour": "red"}, "colour", "trigger"),
        ({"enabled": "no"}, "enabled", "true or false"),
    ],
)
def test_a_bad_rule_names_file_rule_field_and_fix(
    tmp_path: Path, change: dict, field: str, hint: str
) -> None:
    spec = {**MINE, **change}
    if change.get("mode", "") is None:
        del spec["mode"]
    path = rule_file(tmp_path, {**MINE, "name": "fine"}, spec)
    with pytest.raises(RuleFileError) as caught:
        load_rules_file(path)
    message = str(caught.value)
    assert str(path) in message
    assert "rule 'mine' (#2)" in message
    assert f"field '{field}'" in message
    assert hint in message
    assert isinstance(caught.value, InvalidInputError)


def test_a_pattern_the_receptor_never_gives_is_refused_with_the_nearest(tmp_path: Path) -> None:
    path = rule_file(tmp_path, {**MINE, "when": {"patterns": ["trial_eror"]}})
    with pytest.raises(RuleFileError) as caught:
        load_rules_file(path)
    assert str(caught.value) == (
        f"rule file {path}: rule 'mine' (#1): field 'when.patterns' names the pattern "
        "'trial_eror', which the receptor never gives (did you mean 'trial_error'?); use "
        "patterns from stagnation, trial_error, wandering, exploring, implementation, mixed"
    )


def test_an_unknown_pattern_with_nothing_near_gets_no_guess(tmp_path: Path) -> None:
    path = rule_file(tmp_path, {**MINE, "when": {"patterns": ["zzz"]}})
    with pytest.raises(RuleFileError, match="'zzz', which the receptor never gives; use") as caught:
        load_rules_file(path)
    assert "did you mean" not in str(caught.value)


def test_every_pattern_the_receptor_gives_can_be_named(tmp_path: Path) -> None:
    (rule,) = load_rules_file(rule_file(tmp_path, {**MINE, "when": {"patterns": list(LABELS)}}))
    assert rule.patterns == frozenset(LABELS)


def test_a_rule_without_a_name_is_named_by_its_place(tmp_path: Path) -> None:
    spec = {key: value for key, value in MINE.items() if key != "name"}
    with pytest.raises(RuleFileError, match=r"rule #1: field 'name' must be a non-empty string"):
        load_rules_file(rule_file(tmp_path, spec))


@pytest.mark.parametrize(
    ("text", "says"),
    [
        ("{not json", "not JSON at line 1 column 2"),
        ("[]", 'one key, "rules"'),
        ('{"rules": {}}', '"rules" must be a list'),
        ('{"rules": [3]}', "rule #1: must be a JSON object"),
        (json.dumps({"rules": [MINE, MINE]}), "rule 'mine' (#2): field 'name' repeats"),
    ],
)
def test_a_bad_file_says_what_is_wrong(tmp_path: Path, text: str, says: str) -> None:
    path = tmp_path / "bad.json"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(RuleFileError, match=r"bad\.json") as caught:
        load_rules_file(path)
    assert says in str(caught.value)


def test_a_missing_file_is_named(tmp_path: Path) -> None:
    with pytest.raises(RuleFileError, match="no such file"):
        rules_for(None, rules_file=tmp_path / "absent.json")


def test_a_user_rule_overrides_a_default_by_name(tmp_path: Path) -> None:
    mine = {**MINE, "name": "error-context", "mode": "notification"}
    (tmp_path / RULES_FILE_NAME).write_text(json.dumps({"rules": [mine]}), encoding="utf-8")
    rules = rules_for(tmp_path)
    names = [rule.name for rule in rules]
    assert names.count("error-context") == 1
    assert names.index("error-context") == 0  # in the default's place
    replaced = by_name(rules)["error-context"]
    assert isinstance(replaced, JsonRule)
    assert (replaced.mode, replaced.trigger) == ("notification", "docs")


def test_a_user_rule_switches_a_default_off(tmp_path: Path) -> None:
    path = rule_file(tmp_path, {"name": "break", "enabled": False})
    assert "break" not in by_name(rules_for(None, rules_file=path))
    assert "break" in by_name(rules_for(None))


def test_plugin_rules_come_after_the_defaults_and_before_the_user(tmp_path: Path) -> None:
    class PluginRule:
        def __init__(self, name: str) -> None:
            self.name = name

        def interpret(self, composition: object) -> None:
            return None

    user = rule_file(tmp_path, {**MINE, "name": "plugin-b"})
    rules = rules_for(None, [PluginRule("plugin-a"), PluginRule("plugin-b")], rules_file=user)
    names = [rule.name for rule in rules]
    assert names[: len(default_rules())] == [rule.name for rule in default_rules()]
    assert isinstance(by_name(rules)["plugin-a"], PluginRule)
    assert isinstance(by_name(rules)["plugin-b"], JsonRule)


def test_the_config_file_is_read_only_when_it_exists(tmp_path: Path) -> None:
    assert [r.name for r in rules_for(tmp_path)] == [r.name for r in default_rules()]
    other = rule_file(tmp_path, MINE, name="other.json")
    (tmp_path / RULES_FILE_NAME).write_text("{broken", encoding="utf-8")
    # An explicit file is read instead of the config folder's.
    assert "mine" in by_name(rules_for(tmp_path, rules_file=other))
