"""Screenshots of every ``thatch ui`` page, for docs/ui.md.

Builds a throw-away demo home (a project with a git origin, memories in its
store and in global, a near-duplicate pair, stale and orphaned memories,
predictions with feedback), starts the real ``thatch ui --no-open`` in the
project, and has headless Chromium (Debian's ``chromium`` and
``chromium-driver``, started as the browser tests start it) write one PNG per
page at 1280x800.

    uv run python docs/scripts/ui_screenshots.py            # into docs/images/
    uv run python docs/scripts/ui_screenshots.py --out /tmp/shots
"""

from __future__ import annotations

import argparse
import io
import json
import os
import re
import signal
import sqlite3
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from urllib.parse import urlencode

from PIL import Image

ROOT = Path(__file__).resolve().parents[2]
# The one place that knows how to start Chromium without Selenium fetching anything.
sys.path.insert(0, str(ROOT / "tests"))

from browser.pages import Browser, start_chromium  # noqa: E402
from thatch import demo_session  # noqa: E402

THATCH = Path(sys.executable).with_name("thatch")
CHROMIUM = Path("/usr/bin/chromium")
CHROMEDRIVER = Path("/usr/bin/chromedriver")
STORE = "acme/shop"
#: Backdated past the hygiene report's 90 days, so its stale section has rows.
STALE_DAYS_AGO = 140

MEMORIES = (
    (STORE, None, "pkg-manager", "The project installs Python packages with uv; never pip."),
    (STORE, None, "money-in-cents", "Money is kept as integer cents everywhere; never floats."),
    (STORE, None, "test-command", "Run the tests with `uv run pytest -q`; slow ones are marked."),
    (STORE, None, "deploy-day", "Deploys happen on Tuesdays after the release review."),
    (STORE, None, "deploy-when", "We deploy on Tuesday, once the release review is done."),
    (STORE, None, "run-tests", "Tests: `uv run pytest -q` runs them; slow ones carry a marker."),
    (STORE, None, "css-naming", "CSS classes in the storefront follow the BEM naming convention."),
    (STORE, None, "old-ci", "CI runs on the Jenkins server in the basement (job shop-main)."),
    (STORE, None, "staging-db", "Staging uses the shop_staging database on db2; reset it nightly."),
    (
        STORE,
        "feature/gift-cards",
        "gift-card-ledger",
        "Gift cards get their ledger account when they are issued (LedgerService.open_account).",
    ),
    (
        STORE,
        None,
        "bug-report-paste",
        "Pasted from a bug report: <script>alert(1)</script> then the page froze.",
    ),
    ("global", None, "editor-tabs", "I indent with four spaces; never tabs."),
    ("global", None, "commit-style", "Commit messages: imperative subject line under 72 chars."),
    ("global", None, "review-tone", "In reviews, ask questions rather than give orders."),
)
STALE = ("old-ci", "staging-db")
#: A near-duplicate pair already judged "same": the page offers to keep one.
SAME = ("test-command", "run-tests")
#: (matcher, prediction, rationale, confirms, disconfirms)
PREDICTIONS = (
    (
        "reviewing a pull request that touches old tech debt",
        "leave the debt alone unless it blocks the change",
        "small focused diffs are easier to review",
        3,
        0,
    ),
    (
        "choosing a name for a database table",
        "plural snake_case table names",
        "",
        2,
        1,
    ),
    (
        "adding a new dependency",
        "ask before adding it, and prefer the standard library",
        "every dependency is a supply-chain risk",
        1,
        0,
    ),
    ("writing a commit message", "one line, imperative, no trailing period", "", 0, 2),
)
TRY_PROMPT = "Can you review my PR? It also cleans up some of the old debt."
#: Showings of the first prediction in sessions of their own, each followed by
#: the user's answer, so the calibration page has scored showings.
SHOWINGS = ("confirm", "confirm", "confirm", "disconfirm", "confirm", "soft")
#: Edit → the test fails, this many times: the receptor reads a wall.
WALL_ROUNDS = 4
SEARCH = "how do we ship a release"


def fill(home: Path, project: Path) -> None:
    """The demo's memories and decision model, saved through the Python API."""
    import thatch

    with thatch.open(home, cwd=project, environ={}) as th:
        for store, branch, label, content in MEMORIES:
            th.remember(label, content, store=store, branch=branch)
        th.mark_reviewed(*SAME, store=STORE, verdict="same")
        for matcher, prediction, rationale, confirms, disconfirms in PREDICTIONS:
            made = th.decisions.update(
                matcher, prediction, "create", rationale=rationale, store=STORE
            )
            for signal_name, times in (("confirm", confirms), ("disconfirm", disconfirms)):
                for _ in range(times):
                    th.decisions.update(
                        matcher,
                        "",
                        signal_name,
                        store=STORE,
                        prediction_id=made.prediction.id,
                    )
        matcher, prediction = PREDICTIONS[0][:2]
        for number, answer in enumerate(SHOWINGS):
            session = f"review-{number}"
            th.decisions.query(matcher, stores=STORE, session=session, record=True)
            th.decisions.update(matcher, prediction, answer, store=STORE, session=session)
    # No API sets a memory's age: write it into the demo's own database file.
    with sqlite3.connect(home / "data" / "thatch.db") as db:
        db.executemany(
            "UPDATE memories SET created_at = created_at - ?, updated_at = updated_at - ? "
            "WHERE label = ?",
            [(STALE_DAYS_AGO * 86400, STALE_DAYS_AGO * 86400, label) for label in STALE],
        )


def hook(command: list[str], payload: dict[str, object], env: dict[str, str], cwd: Path) -> None:
    """One hook command as Claude Code runs it: the payload on stdin."""
    subprocess.run(
        [str(THATCH), *command],
        input=json.dumps(payload),
        env=env,
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


def play_session(project: Path, env: dict[str, str]) -> None:
    """``thatch demo``'s session through the real hooks and daemon: a prompt, then a wall.

    Waits until the receptor's status shows the wall, so the session page has it.
    """
    subprocess.run([str(THATCH), "daemon", "start"], env=env, capture_output=True, check=True)
    hook(["reminder"], demo_session.session_start_payload(project), env, project)
    hook(["buffer-batch"], {**demo_session.BATCH, "cwd": str(project)}, env, project)
    hook(["flush-tools"], demo_session.prompt_payload(SEARCH, project), env, project)
    for attempt in range(WALL_ROUNDS):
        hook(["hook", "claude", "PostToolBatch"], demo_session.edit_payload(project, attempt),
             env, project)  # fmt: skip
        hook(["hook", "claude", "PostToolUseFailure"],
             demo_session.failure_payload(project, attempt), env, project)  # fmt: skip
        time.sleep(1.1)  # the status file is rewritten at most once a second
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        shown = subprocess.run(
            [str(THATCH), "receptor", "status", demo_session.SESSION, "--json"],
            env=env, cwd=project, capture_output=True, text=True, check=False,
        )  # fmt: skip
        if (
            shown.returncode == 0
            and json.loads(shown.stdout or "null")
            and '"firings": [{' in (shown.stdout)
        ):
            break
        time.sleep(0.5)
    hook(["flush-tools"], demo_session.prompt_payload(TRY_PROMPT, project), env, project)


def make_project(folder: Path) -> Path:
    """A git repository on ``main`` whose origin names the store; its feature branch is gone."""
    folder.mkdir()
    for args in (
        ("init", "-q", "-b", "main"),
        ("remote", "add", "origin", f"git@github.com:{STORE}.git"),
        ("-c", "user.name=demo", "-c", "user.email=demo@example.com", "commit", "-q",
         "--allow-empty", "-m", "start"),
    ):  # fmt: skip
        subprocess.run(["git", "-C", str(folder), *args], check=True, capture_output=True)
    return folder


@contextmanager
def serving(project: Path, env: dict[str, str]) -> Iterator[str]:
    """``thatch ui --no-open`` in ``project``; yields the printed URL, stops it with Ctrl-C."""
    process = subprocess.Popen(
        [str(THATCH), "ui", "--no-open"],
        cwd=project,
        env=env,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert process.stdout is not None
        line = process.stdout.readline()
        found = re.search(r"(http://127\.0\.0\.1:\d+/\?token=\S+)", line)
        if found is None:
            raise SystemExit(f"thatch ui printed {line!r}")
        yield found.group(1)
    finally:
        process.send_signal(signal.SIGINT)
        process.wait(timeout=30)


def shoot(page: Browser, out: Path) -> list[Path]:
    """One PNG per page, named ui-PAGE.png."""
    views = (
        ("memories", "/memories"),
        ("search", "/memories?" + urlencode({"q": SEARCH})),
        ("memory", "/memory?" + urlencode({"store": STORE, "label": "bug-report-paste"})),
        ("duplicates", "/duplicates"),
        ("hygiene", "/hygiene"),
        ("decisions", "/decisions?" + urlencode({"prompt": TRY_PROMPT})),
        ("prediction", "/prediction?id=1"),
        ("calibration", "/calibration"),
        ("sessions", "/sessions"),
        ("session", "/session?" + urlencode({"id": demo_session.SESSION})),
        ("plugins", "/plugins"),
    )
    written = []
    for name, path in views:
        page.open(path)
        written.append(save(page, out / f"ui-{name}.png"))
    # The doctor's findings: the button posts, and the answer scrolls to them.
    page.click_and_wait(page.find("#doctor + form button"))
    written.append(save(page, out / "ui-doctor.png"))
    return written


def save(page: Browser, path: Path) -> Path:
    # Nothing focused or hovered: the same pixels on every run.
    page.driver.execute_script("document.activeElement && document.activeElement.blur()")
    time.sleep(0.2)
    shot = Image.open(io.BytesIO(page.driver.get_screenshot_as_png()))
    # A page of text needs few colours: a 256-colour palette keeps it sharp
    # at a third of the size of Chromium's full-colour PNG.
    shot.convert("RGB").quantize(colors=256).save(path, optimize=True)
    return path


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=ROOT / "docs" / "images")
    args = parser.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="thatch-ui-demo-") as scratch:
        root = Path(scratch)
        home, user = root / "thatch-home", root / "user"
        user.mkdir()
        project = make_project(root / "shop")
        env = {k: v for k, v in os.environ.items() if not k.startswith(("THATCH_", "VIRTUAL_ENV"))}
        env.update(HOME=str(user), THATCH_HOME=str(home))
        fill(home, project)
        play_session(project, env)
        with serving(project, env) as url:
            driver = start_chromium(CHROMIUM, CHROMEDRIVER, root / "chromium")
            try:
                page = Browser(driver, url)
                page.sign_in()
                written = shoot(page, args.out)
            finally:
                driver.quit()
        subprocess.run([str(THATCH), "daemon", "stop"], env=env, capture_output=True, check=False)
    for path in written:
        print(f"{path.relative_to(ROOT) if path.is_relative_to(ROOT) else path}: "
              f"{path.stat().st_size // 1024} kB")  # fmt: skip
    return 0


if __name__ == "__main__":
    sys.exit(main())
