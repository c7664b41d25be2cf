"""Versioned schema migrations, tracked in ``PRAGMA user_version``.

``MIGRATIONS[n]`` takes a database from version ``n`` to ``n + 1``. To change
the schema, append a step; never edit a released one, because databases that
already ran it will not run it again. Each step is a tuple of single SQL
statements (not a script) so that all missing steps run inside one
``BEGIN IMMEDIATE`` transaction: ``executescript`` would commit half-way.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence
from pathlib import Path

from thatch.plugin import StorageError
from thatch.plugin.sqlite import migrate_schema

Step = Sequence[str]

# v1: memories, their full-text index and reviewed duplicate pairs.
_V1: Step = (
    # AUTOINCREMENT so a deleted memory's id is never handed to a new one:
    # ids leak into caches, recall logs and review records.
    """
    CREATE TABLE memories (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        store TEXT NOT NULL,
        label TEXT NOT NULL,
        content TEXT NOT NULL,
        branch TEXT,
        archived INTEGER NOT NULL DEFAULT 0 CHECK (archived IN (0, 1)),
        model TEXT NOT NULL,
        embedding BLOB NOT NULL,
        created_at REAL NOT NULL,
        updated_at REAL NOT NULL,
        recall_count INTEGER NOT NULL DEFAULT 0,
        last_recalled_at REAL,
        UNIQUE (store, label)
    )
    """,
    # UNIQUE (store, label) already indexes store lookups; the vector cache
    # loads one model's unarchived rows at a time; list_stores counts from
    # the (store, archived) index alone instead of reading every row.
    "CREATE INDEX memories_model ON memories (model, archived)",
    "CREATE INDEX memories_store_archived ON memories (store, archived)",
    # External content: the text lives once, in memories; the index follows
    # it through the triggers below. Porter stemming makes "indents" match
    # "indentation"; remove_diacritics 2 makes "café" match "cafe".
    """
    CREATE VIRTUAL TABLE memories_fts USING fts5(
        label, content,
        content = 'memories', content_rowid = 'id',
        tokenize = 'porter unicode61 remove_diacritics 2'
    )
    """,
    """
    CREATE TRIGGER memories_fts_insert AFTER INSERT ON memories BEGIN
        INSERT INTO memories_fts (rowid, label, content)
        VALUES (new.id, new.label, new.content);
    END
    """,
    """
    CREATE TRIGGER memories_fts_delete AFTER DELETE ON memories BEGIN
        INSERT INTO memories_fts (memories_fts, rowid, label, content)
        VALUES ('delete', old.id, old.label, old.content);
    END
    """,
    # Only text columns: a recall count or archive flag change must not
    # rewrite the index.
    """
    CREATE TRIGGER memories_fts_update AFTER UPDATE OF label, content ON memories BEGIN
        INSERT INTO memories_fts (memories_fts, rowid, label, content)
        VALUES ('delete', old.id, old.label, old.content);
        INSERT INTO memories_fts (rowid, label, content)
        VALUES (new.id, new.label, new.content);
    END
    """,
    """
    CREATE TABLE dedup_reviews (
        first_id INTEGER NOT NULL REFERENCES memories (id) ON DELETE CASCADE,
        second_id INTEGER NOT NULL REFERENCES memories (id) ON DELETE CASCADE,
        reviewed_at REAL NOT NULL,
        PRIMARY KEY (first_id, second_id),
        CHECK (first_id < second_id)
    ) WITHOUT ROWID
    """,
    # The primary key covers first_id; cascades and clears also look up second_id.
    "CREATE INDEX dedup_reviews_second ON dedup_reviews (second_id)",
    # Every change a search cache must see, in commit order, so that a
    # long-lived handle (a daemon) catches up on another process's writes by
    # re-reading only the memories that changed, and ignores writes that
    # change nothing searchable (recall counts). Only the last 10000 entries
    # are kept; a handle further behind reloads everything.
    """
    CREATE TABLE search_changes (
        seq INTEGER PRIMARY KEY AUTOINCREMENT,
        memory_id INTEGER NOT NULL
    )
    """,
    """
    CREATE TRIGGER search_changes_trim AFTER INSERT ON search_changes BEGIN
        DELETE FROM search_changes WHERE seq <= new.seq - 10000;
    END
    """,
    """
    CREATE TRIGGER memories_changes_insert AFTER INSERT ON memories BEGIN
        INSERT INTO search_changes (memory_id) VALUES (new.id);
    END
    """,
    """
    CREATE TRIGGER memories_changes_delete AFTER DELETE ON memories BEGIN
        INSERT INTO search_changes (memory_id) VALUES (old.id);
    END
    """,
    """
    CREATE TRIGGER memories_changes_update
    AFTER UPDATE OF store, label, content, branch, archived, model, embedding ON memories
    BEGIN
        INSERT INTO search_changes (memory_id) VALUES (new.id);
    END
    """,
)

# v2: the decision model. Matchers (situations) link to predictions (what
# the user tends to decide) through weighted edges; provenance is each
# prediction's audit trail and fires log what the agent was shown.
_V2: Step = (
    """
    CREATE TABLE prediction_matchers (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        store TEXT NOT NULL,
        description TEXT NOT NULL,
        model TEXT NOT NULL,
        embedding BLOB NOT NULL,
        created_at REAL NOT NULL,
        updated_at REAL NOT NULL
    )
    """,
    # Evidence counts are REAL: a soft signal adds 0.25.
    """
    CREATE TABLE predictions (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        store TEXT NOT NULL,
        statement TEXT NOT NULL,
        rationale TEXT NOT NULL,
        model TEXT NOT NULL,
        embedding BLOB NOT NULL,
        confirm_count REAL NOT NULL DEFAULT 0,
        disconfirm_count REAL NOT NULL DEFAULT 0,
        prior REAL NOT NULL,
        confidence REAL NOT NULL,
        created_at REAL NOT NULL,
        updated_at REAL NOT NULL
    )
    """,
    # Lists and evidence totals go by store; the vector cache loads one
    # model's rows at a time.
    "CREATE INDEX prediction_matchers_store ON prediction_matchers (store)",
    "CREATE INDEX prediction_matchers_model ON prediction_matchers (model)",
    "CREATE INDEX predictions_store ON predictions (store)",
    "CREATE INDEX predictions_model ON predictions (model)",
    """
    CREATE TABLE prediction_edges (
        matcher_id INTEGER NOT NULL REFERENCES prediction_matchers (id) ON DELETE CASCADE,
        prediction_id INTEGER NOT NULL REFERENCES predictions (id) ON DELETE CASCADE,
        weight REAL NOT NULL DEFAULT 1.0,
        created_at REAL NOT NULL,
        PRIMARY KEY (matcher_id, prediction_id)
    ) WITHOUT ROWID
    """,
    # The primary key serves edges_from; edges_to and cascades look up predictions.
    "CREATE INDEX prediction_edges_prediction ON prediction_edges (prediction_id)",
    """
    CREATE TABLE prediction_provenance (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        prediction_id INTEGER NOT NULL REFERENCES predictions (id) ON DELETE CASCADE,
        signal TEXT NOT NULL CHECK (signal IN ('create', 'confirm', 'disconfirm', 'soft')),
        detail TEXT NOT NULL,
        session TEXT,
        created_at REAL NOT NULL
    )
    """,
    """
    CREATE INDEX prediction_provenance_prediction
    ON prediction_provenance (prediction_id, created_at)
    """,
    "CREATE INDEX prediction_provenance_time ON prediction_provenance (created_at)",
    """
    CREATE TABLE prediction_fires (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        session TEXT,
        prediction_id INTEGER NOT NULL REFERENCES predictions (id) ON DELETE CASCADE,
        confidence REAL NOT NULL,
        score REAL NOT NULL,
        fired_at REAL NOT NULL
    )
    """,
    "CREATE INDEX prediction_fires_prediction ON prediction_fires (prediction_id, fired_at)",
    "CREATE INDEX prediction_fires_time ON prediction_fires (fired_at)",
    # The decision model's search_changes: which matchers and predictions
    # changed anything their vector search sees, so a handle's cache re-reads
    # only those. Evidence and fires (every query writes some) log nothing.
    """
    CREATE TABLE decision_changes (
        seq INTEGER PRIMARY KEY AUTOINCREMENT,
        kind TEXT NOT NULL CHECK (kind IN ('matcher', 'prediction')),
        row_id INTEGER NOT NULL
    )
    """,
    """
    CREATE TRIGGER decision_changes_trim AFTER INSERT ON decision_changes BEGIN
        DELETE FROM decision_changes WHERE seq <= new.seq - 10000;
    END
    """,
    """
    CREATE TRIGGER prediction_matchers_changes_insert AFTER INSERT ON prediction_matchers BEGIN
        INSERT INTO decision_changes (kind, row_id) VALUES ('matcher', new.id);
    END
    """,
    """
    CREATE TRIGGER prediction_matchers_changes_delete AFTER DELETE ON prediction_matchers BEGIN
        INSERT INTO decision_changes (kind, row_id) VALUES ('matcher', old.id);
    END
    """,
    """
    CREATE TRIGGER prediction_matchers_changes_update
    AFTER UPDATE OF store, model, embedding ON prediction_matchers
    BEGIN
        INSERT INTO decision_changes (kind, row_id) VALUES ('matcher', new.id);
    END
    """,
    """
    CREATE TRIGGER predictions_changes_insert AFTER INSERT ON predictions BEGIN
        INSERT INTO decision_changes (kind, row_id) VALUES ('prediction', new.id);
    END
    """,
    """
    CREATE TRIGGER predictions_changes_delete AFTER DELETE ON predictions BEGIN
        INSERT INTO decision_changes (kind, row_id) VALUES ('prediction', old.id);
    END
    """,
    """
    CREATE TRIGGER predictions_changes_update
    AFTER UPDATE OF store, model, embedding ON predictions
    BEGIN
        INSERT INTO decision_changes (kind, row_id) VALUES ('prediction', new.id);
    END
    """,
)

# v3: a duplicate review records its verdict. Reviews made before said "both
# stay", which is what 'different' means.
_V3: Step = (
    "ALTER TABLE dedup_reviews ADD COLUMN verdict TEXT NOT NULL DEFAULT 'different'"
    " CHECK (verdict IN ('same', 'different'))",
)

# v4: the prediction log, every Prediction block an agent was shown, once.
# The id is the stable one core computes (thatch.plugin.entry_id); outcome is
# NULL until the entry is scored. Nothing refers to the other tables: the log
# may as well live in a file of its own.
_V4: Step = (
    """
    CREATE TABLE prediction_log (
        seq INTEGER PRIMARY KEY AUTOINCREMENT,
        id TEXT NOT NULL UNIQUE,
        session_id TEXT NOT NULL,
        store TEXT NOT NULL,
        text TEXT NOT NULL,
        recorded_at REAL NOT NULL,
        outcome INTEGER CHECK (outcome IN (0, 1)),
        scored_at REAL,
        CHECK ((outcome IS NULL) = (scored_at IS NULL))
    )
    """,
    # Listing goes oldest first, by time then by the order recorded.
    "CREATE INDEX prediction_log_time ON prediction_log (recorded_at, seq)",
    "CREATE INDEX prediction_log_session ON prediction_log (session_id, recorded_at, seq)",
)

# v5: the prediction log holds one row per Prediction (action, toward,
# confidence, source, fields), keyed by its positional id within its session
# (issue 14's "<session>:<n>:1"), and is scored with what the user did. The
# v4 table held a hashed id and the block's text; nothing wrote to it but
# tests, so it is replaced, not converted. Rows are unique by (id,
# session_id): two writers recording the same rows keep each once. fields
# is the row's JSON object; times are REAL epoch seconds like every table's.
_V5: Step = (
    "DROP TABLE prediction_log",
    """
    CREATE TABLE prediction_log (
        seq INTEGER PRIMARY KEY AUTOINCREMENT,
        id TEXT NOT NULL,
        session_id TEXT NOT NULL,
        action TEXT NOT NULL,
        toward TEXT NOT NULL,
        confidence INTEGER NOT NULL CHECK (confidence BETWEEN 0 AND 100),
        source TEXT NOT NULL CHECK (source IN ('assistant', 'task-notification')),
        recorded_at REAL NOT NULL,
        fields TEXT NOT NULL CHECK (json_type(fields) = 'object'),
        store TEXT NOT NULL,
        actual TEXT CHECK (actual IN ('accept', 'correct')),
        scored_at REAL,
        UNIQUE (id, session_id),
        CHECK ((actual IS NULL) = (scored_at IS NULL))
    )
    """,
    # Listing goes oldest first, by time then by the order recorded.
    "CREATE INDEX prediction_log_time ON prediction_log (recorded_at, seq)",
    "CREATE INDEX prediction_log_session ON prediction_log (session_id, recorded_at, seq)",
)

#: Every schema step, oldest first. Append new steps here.
MIGRATIONS: tuple[Step, ...] = (_V1, _V2, _V3, _V4, _V5)

#: The schema version this code writes and understands.
SCHEMA_VERSION = len(MIGRATIONS)


def migrate(conn: sqlite3.Connection, path: Path, steps: Sequence[Step] = MIGRATIONS) -> int:
    """Bring the database at ``path`` up to ``len(steps)``; return the version found.

    ``conn`` must be in autocommit mode (``isolation_level=None``). Raises
    :class:`StorageError` when the file was written by a newer schema.
    """
    return migrate_schema(conn, steps, lambda found, target: _too_new(found, target, path))


def _too_new(found: int, target: int, path: Path) -> StorageError:
    return StorageError(
        f"database {path} has schema version {found}, newer than this thatch-sqlite "
        f"understands ({target}); upgrade thatch (pip install -U thatch) or set "
        "THATCH_DB_PATH / [storage] db_path to another file"
    )
