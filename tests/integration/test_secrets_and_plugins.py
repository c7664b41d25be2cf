"""Secrets never stored nor printed; plugins listed; a missing plugin explained."""

from __future__ import annotations

import re

from integration.conftest import Runner, as_json

# Built by concatenation so the repository holds no string that looks like a live key.
AWS_KEY = "AKIA" + "Q3EXAMPLEZ7ABCDE"
GITHUB_TOKEN = "ghp_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8"


def test_secrets_are_redacted_before_storing_and_never_printed(thatch: Runner) -> None:
    content = f"Deploy uses key {AWS_KEY} and the bot token {GITHUB_TOKEN} for releases"
    saved = thatch("remember", "deploy-creds", content, "--store", "global")
    assert "redacted 2 secrets" in saved.stderr
    outputs = [
        saved,
        thatch("remember", "deploy-creds", content, "--store", "global", "--json"),
        thatch("show", "deploy-creds", "global"),
        thatch("show", "deploy-creds", "global", "--json"),
        thatch("search", "deploy key for releases", "--json"),
        thatch("search", "deploy key for releases"),
        thatch("list", "all"),
        thatch("list", "all", "--json"),
        thatch("export"),
    ]
    for completed in outputs:
        for secret in (AWS_KEY, GITHUB_TOKEN):
            assert secret not in completed.stdout
            assert secret not in completed.stderr
    stored = as_json(thatch("show", "deploy-creds", "global", "--json"))["content"]
    assert "[REDACTED:" in stored
    assert "Deploy uses key" in stored


def test_plugins_json_lists_the_defaults_with_their_hooks(thatch: Runner) -> None:
    plugins = {p["name"]: p for p in as_json(thatch("plugins", "--json"))}
    assert plugins["sqlite"]["distribution"] == "thatch-sqlite"
    assert plugins["sqlite"]["hooks"] == [
        "thatch_decision_storage",
        "thatch_memory_storage",
        "thatch_prediction_storage",
    ]
    assert plugins["fastembed"]["distribution"] == "thatch-fastembed"
    assert plugins["fastembed"]["hooks"] == ["thatch_config_tables", "thatch_embedder"]
    assert plugins["sqlite"]["version"]


def test_no_plugins_loaded_explains_instead_of_a_traceback(thatch: Runner) -> None:
    completed = thatch("search", "anything", env={"THATCH_LOAD_PLUGINS": ""}, check=False)
    assert completed.returncode == 1
    assert "no storage plugin is loaded that keeps memories in backend 'sqlite'" in completed.stderr
    assert "add 'sqlite' to THATCH_LOAD_PLUGINS" in completed.stderr
    assert "Traceback" not in completed.stderr
    only_storage = thatch("remember", "x", "y", env={"THATCH_LOAD_PLUGINS": "sqlite"}, check=False)
    assert "no embedder plugin is loaded" in only_storage.stderr
    assert "add 'fastembed' to THATCH_LOAD_PLUGINS" in only_storage.stderr
    listed = as_json(thatch("plugins", "--json", env={"THATCH_LOAD_PLUGINS": ""}))
    assert [plugin["name"] for plugin in listed if not plugin["builtin"]] == []


def test_trace_shows_hook_calls(thatch: Runner) -> None:
    completed = thatch("list", "all", env={"THATCH_TRACE_PLUGINS": "1"})
    # Every installed storage plugin is asked (postgres too, which declines
    # unless configured); the trace names them and what they answered.
    call = re.search(
        r"\[thatch trace\] thatch_memory_storage\(config\) -> \[([^\]]*)\]", completed.stderr
    )
    assert call is not None, completed.stderr
    assert "sqlite" in call.group(1).split(", ")
    assert "returned SQLiteStorage(" in completed.stderr


def test_demo_tells_the_whole_session(thatch: Runner) -> None:
    out = thatch("demo").stdout
    steps = out.split("\n== ")
    assert len(steps) == 10  # the header and nine steps
    start, batch, first, saved, later, preference, situation, wall, answer = steps[1:]
    assert "acme/shop" in start or "global" in start
    assert "printed nothing" in batch
    # The extraction nudge carries the queued tool output, its secret redacted.
    assert 'extraction_done with session_id="' in first
    assert "ledger service" in first
    assert "[REDACTED:" in first
    assert "AKIA" not in out
    assert "extraction_done -> drained: 3" in saved
    assert "refunds-via-ledger" in later
    assert "prediction_update -> outcome: created" in preference
    assert "[thatch] User decision model" in situation
    assert "write the ledger test first" in situation
    assert "refunds-via-ledger" not in situation  # shown recently: held back
    # The receptor reads the failing streak and fires frustration...
    assert "pattern trial_error" in wall
    assert "fired frustration -> active" in wall
    # ...and one tool hook's answer (the next one once the probe is done) carries one
    # item: the memory that explains the error, naming the failing command.
    told = wall + answer
    assert told.count("[thatch receptor]") == 1
    assert '"aware-datetimes"' in told
    assert "test_settlement.py -> exit 1" in told
    # The reading shown is now's, the reason's the firing's: each says which it is.
    assert "the receptor reads now: frustration" in wall
    assert "when it fired)" in told
