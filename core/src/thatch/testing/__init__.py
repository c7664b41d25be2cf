"""Helpers for testing thatch and its plugins without the real model.

The plugin author's toolkit; nothing here needs pytest.

- :class:`WordHashEmbedder` gives texts that share words a high cosine, which
  is enough to test storage and ranking logic in milliseconds. Tests of
  behaviour users see use the real model instead.
- :func:`plugins_with` and :func:`make_runtime` build a plugin manager or the
  daemon's runtime from exactly the plugins a test names; :func:`send_hook`
  runs ``thatch hook HARNESS EVENT`` through the daemon's handler and
  :class:`EventRecorder` keeps every event observers are shown.
- :func:`set_up`, :func:`tear_down` and :func:`apply_changes` drive a
  :class:`~thatch.plugin.setup.SetupTarget` through core's setup engine the
  way ``thatch setup`` does; :func:`tree` and :func:`text_tree` snapshot the
  files it leaves; :func:`check_golden` and :func:`check_golden_tree` compare
  text with golden files (``THATCH_UPDATE_GOLDEN=1`` rewrites them).
"""

from __future__ import annotations

import difflib
import hashlib
import os
import re
import shutil
import stat
import time
import uuid
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from thatch.instructions.briefing import BRIEFING as BRIEFING
from thatch.plugin.embedder import Thresholds
from thatch.plugin.specs import hookimpl

TYPE_CHECKING = False
if TYPE_CHECKING:
    from types import ModuleType

    from thatch.plugin.events import Event
    from thatch.plugin.setup import Change, SetupContext, SetupTarget
    from thatch.plugins import Plugins
    from thatch.runtime import Runtime
    from thatch.setup.engine import ApplyReport, FileEdit

_WORD = re.compile(r"\w+")


class WordHashEmbedder:
    """A deterministic bag-of-words embedder (each word hashed to a dimension)."""

    def __init__(self, dim: int = 64, model_id: str = "test/word-hash") -> None:
        self.dim = dim
        self.model_id = model_id

    def _vector(self, text: str) -> npt.NDArray[np.float32]:
        vector = np.zeros(self.dim, dtype=np.float32)
        for word in _WORD.findall(text.lower()):
            digest = hashlib.blake2b(word.encode(), digest_size=4).digest()
            vector[int.from_bytes(digest, "little") % self.dim] += 1.0
        norm = float(np.linalg.norm(vector))
        if norm == 0.0:
            vector[0] = 1.0
            return vector
        return vector / norm

    def embed_query(self, text: str) -> npt.NDArray[np.float32]:
        return self._vector(text)

    def embed_passages(self, texts: Sequence[str]) -> npt.NDArray[np.float32]:
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        return np.stack([self._vector(text) for text in texts])

    def thresholds(self) -> Thresholds:
        return Thresholds(recall=0.3, dedup=0.9, source="test")


class EmbedderPlugin:
    """A plugin object whose ``thatch_embedder`` returns the embedder it was given."""

    def __init__(self, embedder: object) -> None:
        self.embedder = embedder

    @hookimpl
    def thatch_embedder(self, config: object) -> object:
        return self.embedder


def plugins_with(*plugins: object, embedder: object | None = None) -> Plugins:
    """:class:`~thatch.plugins.Plugins` holding exactly ``plugins`` — no entry points, no builtins.

    ``embedder`` (default: a new :class:`WordHashEmbedder`) is added as the
    embedder plugin. A plugin test registers its own module next to a storage
    plugin, e.g. ``plugins_with(thatch_sqlite.plugin, my_plugin)``.
    """
    from thatch.builtin import BUILTIN_PLUGINS
    from thatch.plugins import Plugins, ThatchPluginManager

    # Core's own plugins keep the names the daemon gives them (``decision-nudge``).
    builtin_names = {module: name for name, module in BUILTIN_PLUGINS.items()}
    fake = EmbedderPlugin(embedder if embedder is not None else WordHashEmbedder())
    manager = ThatchPluginManager()
    for index, plugin in enumerate(plugins):
        module = getattr(plugin, "__name__", f"plugin-{index}")
        manager.register(plugin, name=builtin_names.get(module, module))
    manager.register(fake, name="fake-embedder")
    manager.check_pending()
    return Plugins(manager)


# -- the daemon's runtime and hook commands -------------------------------------------
def builtin_plugins() -> list[ModuleType]:
    """Core's builtin plugin modules (nudge sources, delivery), as the daemon loads them."""
    import importlib

    from thatch.builtin import BUILTIN_PLUGINS

    return [importlib.import_module(module) for module in BUILTIN_PLUGINS.values()]


def make_runtime(
    home: Path, *plugins: object, embedder: object | None = None, builtins: bool = True
) -> Runtime:
    """The daemon's :class:`~thatch.runtime.Runtime` on ``home`` with exactly these plugins.

    Core's builtins come first (``builtins=False`` leaves them out), then
    ``plugins``, then ``embedder`` (default: a :class:`WordHashEmbedder`).
    Name a storage plugin among ``plugins``, e.g.
    ``make_runtime(home, thatch_sqlite.plugin, my_plugin)``. The config is
    read from ``home`` only, never from the environment. Close it when done.
    """
    from thatch.config.plugin_tables import with_plugin_tables
    from thatch.plugin.config import Config
    from thatch.runtime import Runtime

    chosen = [*(builtin_plugins() if builtins else []), *plugins]
    loaded = plugins_with(*chosen, embedder=embedder)
    return Runtime(with_plugin_tables(Config.load(home, environ={}), loaded), loaded)


class EventRecorder:
    """A plugin object that keeps every event shown to ``thatch_ingest``, in order."""

    def __init__(self) -> None:
        self.events: list[Event] = []

    @hookimpl
    def thatch_ingest(self, event: Event, app: object) -> None:
        self.events.append(event)


def hook_request(
    payload: object,
    *,
    harness: str | None = None,
    event: str | None = None,
    command: str = "hook",
    **fields: Any,
) -> dict[str, Any]:
    """A request as a hook command sends it to the daemon (see :mod:`thatch.wire`).

    ``fields`` replace the defaults: a new ``event_id``, ``received_at`` now,
    no ``cwd``, an empty ``env`` and ``json`` False.
    """
    return {
        "command": command,
        "harness": harness,
        "event": event,
        "payload": payload,
        "event_id": uuid.uuid4().hex,
        "received_at": time.time(),
        "cwd": None,
        "env": {},
        "json": False,
        **fields,
    }


def answer_hook(app: Runtime, request: Mapping[str, Any], *, replay: bool = False) -> str:
    """What the hook command prints for ``request``, after the daemon's deferred bookkeeping."""
    from thatch.daemon.hook_events import handle_hook

    text = handle_hook(app, request, replay=replay)
    app.run_deferred()
    return text


def send_hook(app: Runtime, harness: str, event: str, payload: object, **fields: Any) -> str:
    """What ``thatch hook HARNESS EVENT`` prints for ``payload`` (see :func:`hook_request`)."""
    return answer_hook(app, hook_request(payload, harness=harness, event=event, **fields))


# -- setup through core's engine ------------------------------------------------------
def plan_changes(
    changes: Sequence[Change], state_dir: Path, *, target: str = "test", scope_key: str = "test"
) -> list[FileEdit]:
    """The engine's edits for ``changes`` against what ``target`` installed in ``scope_key``."""
    from thatch.setup import engine

    return engine.plan(changes, engine.installed(state_dir, target, scope_key))


def apply_changes(
    changes: Sequence[Change], state_dir: Path, *, target: str = "test", scope_key: str = "test"
) -> ApplyReport:
    """Plan ``changes`` and apply them, recording the result under ``state_dir``.

    A second call with the same ``target`` and ``scope_key`` replaces what the
    first installed, as a second ``thatch setup`` run does.
    """
    from thatch.setup import engine

    edits = plan_changes(changes, state_dir, target=target, scope_key=scope_key)
    return engine.apply(edits, state_dir=state_dir, target=target, scope_key=scope_key)


def plan_set_up(target: SetupTarget, context: SetupContext, state_dir: Path) -> list[FileEdit]:
    """The edits ``thatch setup`` would make for ``target`` in ``context`` (``--dry-run``)."""
    from thatch.setup import engine

    key = engine.scope_key(context)
    return plan_changes(target.changes(context), state_dir, target=target.name, scope_key=key)


def set_up(target: SetupTarget, context: SetupContext, state_dir: Path) -> ApplyReport:
    """``thatch setup`` for ``target`` in ``context``: plan against the manifest, then apply."""
    from thatch.setup import engine

    key = engine.scope_key(context)
    return apply_changes(target.changes(context), state_dir, target=target.name, scope_key=key)


def tear_down(target: SetupTarget | str, context: SetupContext, state_dir: Path) -> ApplyReport:
    """``thatch setup --uninstall`` for ``target`` (or its name) in ``context``."""
    from thatch.setup import engine

    name = target if isinstance(target, str) else target.name
    return engine.uninstall(state_dir, name, engine.scope_key(context))


def tree(folder: Path, *, skip: Iterable[str] = ()) -> dict[str, object]:
    """Every file (bytes and mode) and folder (``"dir"``, key ending ``/``) under ``folder``.

    Top-level entries named in ``skip`` (a state folder, say) are left out.
    Equal trees mean setup then uninstall gave back every byte and folder.
    """
    skipped = set(skip)
    found: dict[str, object] = {}
    for path in sorted(folder.rglob("*")):
        relative = path.relative_to(folder)
        if relative.parts[0] in skipped:
            continue
        if path.is_dir():
            found[relative.as_posix() + "/"] = "dir"
        else:
            found[relative.as_posix()] = (path.read_bytes(), stat.S_IMODE(path.stat().st_mode))
    return found


#: What :func:`text_tree` writes in place of its root folder.
ROOT_MARK = "<root>"


def text_tree(root: Path, *, skip: Iterable[str] = ()) -> dict[str, str]:
    """Every file's text under ``root`` (relative path → text), ``root`` written ``<root>``.

    Paths in the files become stable across runs, so the result can be
    compared with golden files by :func:`check_golden_tree`.
    """
    skipped = set(skip)
    return {
        relative.as_posix(): path.read_text().replace(str(root), ROOT_MARK)
        for path in sorted(root.rglob("*"))
        if path.is_file() and (relative := path.relative_to(root)).parts[0] not in skipped
    }


# -- golden files ---------------------------------------------------------------------
#: Set this environment variable to ``1`` to rewrite golden files after a deliberate change.
UPDATE_GOLDEN = "THATCH_UPDATE_GOLDEN"


def updating_golden() -> bool:
    """Whether this run rewrites golden files (``THATCH_UPDATE_GOLDEN`` set, not ``0``)."""
    return os.environ.get(UPDATE_GOLDEN, "0") not in ("", "0")


def check_golden(path: Path, text: str) -> None:
    """Fail unless ``text`` is the content of the golden file ``path``; rewrite it if updating.

    :raises AssertionError: the texts differ or the golden file is missing; the
        message names the file and how to rewrite it.
    """
    if updating_golden():
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    if not path.is_file():
        raise AssertionError(f"no golden file {path}; run with {UPDATE_GOLDEN}=1 to write it")
    expected = path.read_text(encoding="utf-8")
    if text != expected:
        raise AssertionError(
            f"{path} differs from what the test made; review the change, then run with "
            f"{UPDATE_GOLDEN}=1 to rewrite it\n{_diff(path.name, expected, text)}"
        )


def check_golden_tree(folder: Path, files: Mapping[str, str]) -> None:
    """Fail unless ``folder`` holds exactly ``files`` (relative path → text); rewrite if updating.

    :raises AssertionError: a file differs, is missing or is extra; the message
        names each and how to rewrite the tree.
    """
    if updating_golden():
        shutil.rmtree(folder, ignore_errors=True)
        for relative, text in files.items():
            path = folder / relative
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text, encoding="utf-8")
    expected = {
        path.relative_to(folder).as_posix(): path.read_text(encoding="utf-8")
        for path in sorted(folder.rglob("*"))
        if path.is_file()
    }
    wrong = sorted(
        name for name in expected.keys() | files.keys() if expected.get(name) != files.get(name)
    )
    if wrong:
        diffs = [_diff(name, expected.get(name), files.get(name)) for name in wrong]
        raise AssertionError(
            f"golden tree {folder} differs in {', '.join(wrong)}; review the change, then run "
            f"with {UPDATE_GOLDEN}=1 to rewrite it\n" + "\n".join(diffs)
        )


def _diff(name: str, expected: str | None, actual: str | None) -> str:
    """A unified diff from the golden text to the test's (None: the file is not there)."""
    lines = difflib.unified_diff(
        (expected or "").splitlines(keepends=True),
        (actual or "").splitlines(keepends=True),
        fromfile=f"golden/{name}" if expected is not None else "/dev/null",
        tofile=f"made/{name}" if actual is not None else "/dev/null",
    )
    return "".join(lines)
