"""Secrets of the corpus never reach the files: memories, the session queue, nudges, exports.

A real runtime on a throw-away home (SQLite backend, word-hash embedder):
every corpus text is remembered as a memory and sent as a Claude tool call
(the hook path that queues tool output), the next prompt is nudged, and the
store is exported. Then the raw bytes of both databases and their write-ahead
logs are searched for each secret.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import thatch_claude.plugin
from daemon_hooks import EXTRACTION_MARK, RuntimeFactory
from recorded import recorded
from thatch.memory.names import validate_store
from thatch.plugin.errors import InvalidInputError
from thatch.runtime import Runtime
from thatch.testing import send_hook

CORPUS = Path(__file__).parents[1] / "data" / "secrets" / "secrets.jsonl"
SESSION = "secrets-session-1"


def corpus() -> list[dict[str, str]]:
    return [json.loads(line) for line in CORPUS.read_text().splitlines() if line.strip()]


def forms(secret: str) -> list[bytes]:
    """The secret as UTF-8, and as it reads once or twice JSON-escaped."""
    once = json.dumps(secret)[1:-1]
    return [text.encode() for text in {secret, once, json.dumps(once)[1:-1]}]


def tool_call(workdir: Path, index: int, text: str) -> dict[str, Any]:
    """A PostToolUse payload: ``text`` written by the Write tool and printed by Bash."""
    return recorded(
        "claude",
        "post_tool_use",
        session_id=SESSION,
        cwd=str(workdir),
        tool_name="Write" if index % 2 else "Bash",
        tool_use_id=f"toolu_{index:04d}",
        tool_input=(
            {"file_path": str(workdir / f"notes-{index}.txt"), "content": text}
            if index % 2
            else {"command": f"cat notes-{index}.txt"}
        ),
        tool_response={"stdout": text, "stderr": "", "interrupted": False, "isImage": False},
    )


@pytest.fixture
def app(runtimes: RuntimeFactory, workdir: Path) -> Runtime:
    return runtimes(thatch_claude.plugin)


def test_no_corpus_secret_reaches_a_database_file_nudge_or_export(
    app: Runtime, home: Path, workdir: Path
) -> None:
    entries = corpus()
    th = app.thatch
    for index, entry in enumerate(entries):
        th.remember(f"corpus-{index}", entry["text"], store="global")
    for index, entry in enumerate(entries):
        assert (
            send_hook(app, "claude", "PostToolUse", tool_call(workdir, index, entry["text"])) == ""
        )
    assert len(app.sessions.pending(SESSION)) == len(entries)
    body = recorded("claude", "user_prompt_submit", session_id=SESSION, cwd=str(workdir))
    nudge = send_hook(app, "claude", "UserPromptSubmit", {**body, "prompt": "What did we set up?"})
    assert EXTRACTION_MARK in nudge
    exported = "\n".join(th.export())

    files = {
        path.name: path.read_bytes()
        for path in sorted(home.rglob("*.db*"))
        if path.name.split(".db")[0] in ("thatch", "sessions")
    }
    assert {"thatch.db", "sessions.db"} <= set(files)
    # Both databases run in WAL mode, and nothing has checkpointed yet: the
    # rows written above are in the -wal files.
    assert {"thatch.db-wal", "sessions.db-wal"} <= set(files)
    assert any(b"[REDACTED:" in data for data in files.values())
    for entry in entries:
        for form in forms(entry["secret"]):
            for name, data in files.items():
                assert form not in data, (entry["kind"], name)
            assert form.decode() not in nudge, entry["kind"]
            assert form.decode() not in exported, entry["kind"]


def test_a_store_name_that_holds_a_token_is_refused(app: Runtime) -> None:
    token = "gh" + "p_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8"
    with pytest.raises(InvalidInputError, match="store name") as caught:
        app.thatch.remember("deploy", "deploys on fridays", store=f"acme/{token}")
    assert token not in str(caught.value)
    assert "owner/name" in str(caught.value)


@pytest.mark.parametrize(
    "name",
    [
        "acme/" + "gl" + "pat-" + "a1B2c3D4e5F6g7H8i9J0k1",
        "hf_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6/models",
        "acme/" + "shp" + "at_" + "0123456789abcdef" * 2,
    ],
)
def test_store_names_holding_a_token_are_refused_with_the_fix(name: str) -> None:
    with pytest.raises(InvalidInputError) as caught:
        validate_store(name)
    message = str(caught.value)
    assert message.startswith("store name '")
    assert "[REDACTED:" in message
    assert "use the repository's 'owner/name'" in message


@pytest.mark.parametrize(
    "name", ["acme/key-value-store", "scikit-learn/sk-learn", "hf_hub/transformers", "a/b"]
)
def test_ordinary_store_names_are_accepted(name: str) -> None:
    assert validate_store(name) == name
