"""The daemon's warm-up: the model loads once, its users wait, the session reminder does not."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path

import numpy as np
import numpy.typing as npt
import pytest
import thatch_claude.plugin
import thatch_sqlite.plugin
from daemon_hooks import payload, request
from thatch.nudges.recall import HEADER as RECALL_HEADER
from thatch.runtime import Runtime, WarmUp
from thatch.testing import WordHashEmbedder, answer_hook, make_runtime

#: Long enough for a thread that does not wait to reach the model.
SETTLE_SECONDS = 0.3


class SlowModel(WordHashEmbedder):
    """An embedder whose first use "loads the model" until ``release`` is set.

    It has no guard of its own: every caller that finds it not loaded loads
    it again, which is what the warm-up must prevent.
    """

    def __init__(self) -> None:
        super().__init__()
        self.release = threading.Event()
        self.loading = threading.Event()
        self.loads = 0
        self.loaded = False

    def _load(self) -> None:
        if self.loaded:
            return
        self.loads += 1
        self.loading.set()
        assert self.release.wait(30), "the test never let the model load"
        self.loaded = True

    def embed_query(self, text: str) -> npt.NDArray[np.float32]:
        self._load()
        return super().embed_query(text)

    def embed_passages(self, texts: Sequence[str]) -> npt.NDArray[np.float32]:
        self._load()
        return super().embed_passages(texts)


class Background:
    """``work`` run in a thread; :meth:`result` joins it."""

    def __init__(self, work: Callable[[], object]) -> None:
        self._results: list[object] = []
        self._thread = threading.Thread(target=lambda: self._results.append(work()), daemon=True)
        self._thread.start()

    def running(self) -> bool:
        return self._thread.is_alive()

    def result(self) -> object:
        self._thread.join(30)
        assert not self._thread.is_alive(), "still running"
        (value,) = self._results
        return value


@pytest.fixture
def model() -> SlowModel:
    return SlowModel()


@pytest.fixture
def app(home: Path, workdir: Path, model: SlowModel) -> Iterator[Runtime]:
    # The memory is written with the same word-hash model, already "loaded".
    with make_runtime(home, thatch_sqlite.plugin).thatch as th:
        th.remember("tabs", "The user indents Python code with tabs", store="global")
    runtime = make_runtime(home, thatch_sqlite.plugin, thatch_claude.plugin, embedder=model)
    yield runtime
    model.release.set()
    runtime.close()


def warming(app: Runtime, model: SlowModel) -> Background:
    """The daemon's order: expect the warm-up, then run it; returns once the model loads."""
    app.warming.expect()
    warm = Background(app.warm_up)
    assert model.loading.wait(30)
    return warm


def test_a_prompt_during_the_warm_up_waits_for_it_and_the_model_loads_once(
    app: Runtime, model: SlowModel, workdir: Path
) -> None:
    warm = warming(app, model)
    asked = request("flush-tools", payload("user_prompt_submit", workdir, prompt="indent python"))
    prompt = Background(lambda: answer_hook(app, asked))
    time.sleep(SETTLE_SECONDS)
    assert prompt.running()
    assert not app.warming.done
    model.release.set()
    assert warm.result() is None
    answered = prompt.result()
    assert isinstance(answered, str)
    assert RECALL_HEADER in answered
    assert "- tabs (global)" in answered
    assert model.loads == 1
    assert app.warming.done


def test_a_request_before_the_warm_up_starts_waits_for_it_too(
    app: Runtime, model: SlowModel, workdir: Path
) -> None:
    # Between listening and warming up: expected, not yet running.
    app.warming.expect()
    asked = request("flush-tools", payload("user_prompt_submit", workdir, prompt="indent python"))
    prompt = Background(lambda: answer_hook(app, asked))
    time.sleep(SETTLE_SECONDS)
    assert model.loads == 0  # it did not start loading the model itself
    warm = Background(app.warm_up)
    model.release.set()
    warm.result()
    assert RECALL_HEADER in str(prompt.result())
    assert model.loads == 1


def test_the_session_reminder_is_answered_while_the_model_loads(
    app: Runtime, model: SlowModel, workdir: Path
) -> None:
    warm = warming(app, model)
    started = request("reminder", payload("session_start", workdir))
    reminder = Background(lambda: answer_hook(app, started))
    text = reminder.result()  # returns with the model still loading
    assert isinstance(text, str)
    assert text.startswith("[thatch] Memory for this session")
    assert not app.warming.done
    model.release.set()
    warm.result()
    assert model.loads == 1


def test_the_hygiene_report_waits_for_the_warm_up(
    app: Runtime, model: SlowModel, workdir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    warm = warming(app, model)
    made: list[bool] = []
    th = app.project(str(workdir))
    monkeypatch.setattr(type(th), "hygiene", lambda self, **kwargs: made.append(True))
    assert app.hygiene(th) is None
    time.sleep(SETTLE_SECONDS)
    assert made == []
    model.release.set()
    warm.result()
    deadline = time.monotonic() + 30
    while not made and time.monotonic() < deadline:
        time.sleep(0.01)
    assert made == [True]


def test_a_failed_warm_up_still_lets_the_waiting_requests_go(app: Runtime) -> None:
    def broken() -> None:
        raise RuntimeError("no model")

    app.warming.expect()
    waiter = Background(app.warming.wait)
    with pytest.raises(RuntimeError, match="no model"):
        app.warming.run(broken)
    assert waiter.result() is None
    assert app.warming.done


def test_outside_the_daemon_nothing_waits() -> None:
    gate = WarmUp()
    gate.wait()  # no warm-up expected: returns at once
    assert not gate.done


def test_the_warm_up_itself_does_not_wait_for_itself() -> None:
    gate = WarmUp()
    gate.expect()
    gate.run(gate.wait)
    assert gate.done
