"""``thatch migrate``: its places, its argument errors, and the copy between two SQLite files."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import attrs
import numpy as np
import pytest
from thatch.cli import main
from thatch.migrate import PARTS, migrate
from thatch.migrate.places import parse
from thatch.plugin.errors import InvalidInputError, StorageError
from thatch.plugin.prediction_log import LoggedPrediction
from thatch.plugin.records import NewMemory
from thatch.testing.contracts import beta, unit
from thatch_sqlite.storage import SQLiteStorage

T0 = datetime(2026, 2, 1, 8, 0, tzinfo=UTC)


@attrs.frozen
class Ends:
    """One SQLite file as all three parts, as a home that keeps everything there."""

    memories: Any
    decisions: Any
    predictions: Any

    @classmethod
    def of(cls, storage: Any) -> Ends:
        return cls(storage, storage, storage)


def fill(storage: SQLiteStorage) -> None:
    items = [NewMemory("global", f"m{i}", f"note {i}", None, "model-a", unit(i)) for i in range(30)]
    memories = [result.memory for result in storage.write_memories(items)]
    storage.set_archived("global", "m3", True)
    storage.record_recall([memories[1].id, memories[2].id], T0)
    storage.mark_reviewed(memories[4].id, memories[5].id, "same")
    matcher = storage.add_matcher("global", "when tests run", "model-a", unit(100))
    # Two predictions alike in store and statement: still copied one to one.
    first = storage.add_prediction("global", "prefers pytest", "said so", "model-a", unit(101), 0.5)
    second = storage.add_prediction("global", "prefers ruff", "said so", "model-a", unit(102), 0.4)
    storage.link(matcher.id, first.id, 2.0)
    storage.add_evidence(
        first.id,
        signal="soft",
        confirm=0.0,
        disconfirm=0.25,
        detail="hesitated",
        session="s1",
        when=T0,
        rule=beta,
    )
    storage.record_fires("s1", [(first.id, 0.5, 0.6), (second.id, 0.4, 0.5)], T0)
    storage.record_predictions(
        [
            LoggedPrediction(
                id=f"s1:{i}",
                session_id="s1",
                action="accept",
                toward="x",
                confidence=50,
                source="assistant",
                recorded_at=T0 + timedelta(seconds=i),
            )
            for i in range(1, 6)
        ]
    )


@pytest.fixture
def source(tmp_path: Path) -> Any:
    storage = SQLiteStorage(tmp_path / "source.db")
    fill(storage)
    yield storage
    storage.close()


@pytest.fixture
def target(tmp_path: Path) -> Any:
    storage = SQLiteStorage(tmp_path / "target.db")
    yield storage
    storage.close()


def test_every_part_is_copied_counted_and_a_second_run_adds_nothing(
    source: SQLiteStorage, target: SQLiteStorage
) -> None:
    told: list[tuple[str, int, int]] = []
    counts = migrate(Ends.of(source), Ends.of(target), lambda *step: told.append(step))
    assert [c.part for c in counts] == list(PARTS)
    assert {c.part: (c.source, c.added, c.found) for c in counts} == {
        "memories": (30, 30, 30),
        "reviewed pairs": (1, 1, 1),
        "matchers": (1, 1, 1),
        "predictions": (2, 2, 2),
        "provenance": (1, 1, 1),
        "edges": (1, 1, 1),
        "fires": (2, 2, 2),
        "prediction log": (5, 5, 5),
    }
    assert ("memories", 30, 30) in told
    copied = target.get_memory("global", "m3")
    assert copied is not None
    assert copied.archived
    assert target.get_memory("global", "m1") == attrs.evolve(
        source.get_memory("global", "m1"), id=target.get_memory("global", "m1").id
    )
    np.testing.assert_array_equal(target.embeddings([copied.id], "model-a")[copied.id], unit(3))
    again = migrate(Ends.of(source), Ends.of(target))
    assert all(c.added == 0 and c.found == c.source for c in again)


def test_a_target_that_loses_rows_fails_naming_the_part(
    source: SQLiteStorage, target: SQLiteStorage
) -> None:
    class Lossy:
        """Keeps every memory but the first of each batch."""

        def __getattr__(self, name: str) -> Any:
            return getattr(target, name)

        def restore_memories(self, items: Any) -> list[bool]:
            return [False, *target.restore_memories(items[1:])]

    lossy = Ends(Lossy(), target, target)
    with pytest.raises(StorageError, match=r"memories: 30 in the source, 29 found in the target"):
        migrate(Ends.of(source), lossy)


@pytest.mark.parametrize(
    ("text", "words"),
    [
        ("postgresql://me:secret@db/thatch", "holds a password"),
        ("postgresql://me@db/thatch?password=secret", "holds a password"),
        # A URL urlsplit cannot read (an open IPv6 bracket) is refused all the same.
        ("postgresql://me:secret@[db/thatch", "holds a password"),
        ("mysql://me@db/thatch", "cannot migrate to or from mysql://"),
        ("  ", "is empty"),
        ("sqlite:", "names no file"),
    ],
)
def test_bad_places_are_refused_naming_the_fix(text: str, words: str) -> None:
    with pytest.raises(InvalidInputError, match=words) as refused:
        parse(text, "--to")
    assert "secret" not in str(refused.value)


def test_a_password_refusal_names_where_it_goes() -> None:
    with pytest.raises(InvalidInputError) as refused:
        parse("postgresql://me:secret@db:5432/thatch", "--to")
    message = str(refused.value)
    assert "~/.pgpass" in message
    assert "PGPASSWORD" in message
    assert "service file" in message
    assert "--to postgresql://me@db:5432/thatch" in message


def test_files_are_checked_before_anything_is_opened(tmp_path: Path) -> None:
    with pytest.raises(InvalidInputError, match="there is no file"):
        parse(str(tmp_path / "missing.db"), "--from")
    with pytest.raises(InvalidInputError, match="does not exist; create it first"):
        parse(f"sqlite:{tmp_path / 'no' / 'such.db'}", "--to")
    with pytest.raises(InvalidInputError, match="is a folder"):
        parse(str(tmp_path), "--to")
    text = tmp_path / "notes.txt"
    text.write_text("not a database\n")
    with pytest.raises(InvalidInputError, match="is not an SQLite database"):
        parse(str(text), "--to")
    with pytest.raises(InvalidInputError, match="drop --to-schema"):
        parse(str(tmp_path / "new.db"), "--to", "team")
    assert parse(f"sqlite:{tmp_path / 'new.db'}", "--to").path == tmp_path / "new.db"
    assert parse(f"sqlite://{tmp_path / 'new.db'}", "--to").path == tmp_path / "new.db"
    assert not (tmp_path / "new.db").exists()


def test_the_command_refuses_bad_input_and_creates_nothing(
    home: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["migrate", "--to", "postgresql://me:pw@db/x"]) == 2
    assert "holds a password" in capsys.readouterr().err
    assert main(["migrate", "--to", str(tmp_path / "x.db"), "--from-schema", "team"]) == 2
    assert "add --from postgresql://" in capsys.readouterr().err
    assert main(["migrate", "--to", str(tmp_path / "x.db")]) == 2
    assert "this home has no data yet" in capsys.readouterr().err
    SQLiteStorage(home / "data" / "thatch.db").close()
    assert main(["migrate", "--to", str(home / "data" / "thatch.db")]) == 2
    assert "where the source keeps its data already" in capsys.readouterr().err
    assert not (tmp_path / "x.db").exists()
    with pytest.raises(SystemExit) as usage:
        main(["migrate"])
    assert usage.value.code == 2
    assert "--to" in capsys.readouterr().err


def test_the_command_copies_a_home_and_reports_each_part(
    home: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    storage = SQLiteStorage(home / "data" / "thatch.db")
    fill(storage)
    storage.close()
    copy = tmp_path / "copy.db"
    assert main(["migrate", "--to", f"sqlite:{copy}"]) == 0
    shown = capsys.readouterr()
    assert f"migrated to sqlite file {copy}:" in shown.out
    assert "memories        30 in the source, 30 added, 0 already there" in shown.out
    assert "thatch migrate: memories: 30 of 30" in shown.err
    assert main(["migrate", "--to", str(copy), "--json"]) == 0
    parts = json.loads(capsys.readouterr().out)["parts"]
    assert {part["part"]: part["added"] for part in parts} == dict.fromkeys(PARTS, 0)
