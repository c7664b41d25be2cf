"""``thatch demo``: the main job end to end, in a throw-away home.

It saves a few memories with the real embedding model, recalls them by
meaning and by words, shows that stores stay apart and that secrets are
redacted, records a preference in the user decision model and shows which
prompts fire it, then deletes the home. Later features extend the story here.
"""

from __future__ import annotations

import tempfile
import time

from thatch.api import Thatch
from thatch.api import open as open_thatch
from thatch.cli.output import print_hits
from thatch.decisions.nudge import format_block

MEMORIES = (
    ("tabs", "The user indents with tabs, never spaces.", "global"),
    ("commit-style", "Commit messages are imperative and under 72 characters.", "global"),
    (
        "test-command",
        "Run the test suite with `uv run pytest -x`; it needs no network.",
        "acme/web",
    ),
    ("db-engine", "acme/web stores sessions in PostgreSQL 16, not Redis.", "acme/web"),
    (
        "deploy",
        "Deploys go through the `make release` target; never push tags by hand.",
        "acme/web",
    ),
    (
        "api-auth",
        "acme/api authenticates with token AKIA" + "ABCDEFGHIJKLMNOP in the CI env.",
        "acme/api",
    ),
)

QUERIES = (
    ("whitespace convention", "acme/web", "by meaning: no word in common with 'tabs'"),
    ("which database holds sessions?", "acme/web", "by meaning and by words"),
    ("make release", "acme/web", "by words"),
    ("how do I authenticate?", "acme/web", "acme/api's memory is not seen from acme/web"),
    ("how do I authenticate?", "acme/api", "but it is from acme/api"),
)


def _step(title: str) -> None:
    print(f"\n== {title}")


def _decision_model(th: Thatch) -> None:
    """Record a preference, confirm it once, and show which prompts fire it."""
    situation, preference = (
        "writing a function that parses input",
        ("handle error cases before the happy path"),
    )
    _step("the user states a preference, then confirms it once")
    for signal in ("create", "confirm"):
        result = th.decisions.update(situation, preference, signal, store="global")
        print(f"  {signal}: {result.outcome}, confidence {result.confidence:.4f}")
    for prompt in ("Write a function to parse a JSON config file", "What's the weather in Lisbon?"):
        _step(f"prompt {prompt!r}: what the agent is shown")
        block = format_block(th.decisions.query(prompt, stores=["acme/web", "global"]))
        print("  " + block.replace("\n", "\n  ") if block else "  (nothing: no situation fits)")


def run_demo() -> int:
    """Run the demo; returns the exit status."""
    with tempfile.TemporaryDirectory(prefix="thatch-demo-") as home, open_thatch(home) as th:
        print(f"thatch demo in a throw-away home: {home}")
        _step("remember")
        started = time.perf_counter()
        for label, content, store in MEMORIES:
            result = th.remember(label, content, store=store)
            extra = f", {result.redactions} secret redacted" if result.redactions else ""
            print(f"  {result.action} {store} / {label}{extra}")
        print(
            f"  ({len(MEMORIES)} memories in {time.perf_counter() - started:.2f} s, "
            f"model {th.embedder.model_id})"
        )

        threshold = th.thresholds().recall
        print(f"\n(a weak match is under the calibrated recall threshold, cosine {threshold})")
        for query, store, why in QUERIES:
            _step(f"search {query!r} in {store} + global ({why})")
            print_hits(th.recall(query, stores=[store, "global"], limit=2), threshold)

        _step("the stored secret")
        print("  " + th.show("api-auth", "acme/api").content)

        _step("stores")
        for info in th.stores():
            print(f"  {info.name}: {info.memories} memories")
        _decision_model(th)
    print(
        "\nThe home was deleted. Try it for real: thatch remember LABEL CONTENT, "
        "thatch search QUERY"
    )
    return 0
