"""``thatch setup --storage``: the backend and its server, in thatch's config file only."""

from __future__ import annotations

import argparse
import tomllib
from pathlib import Path
from typing import Any

import pytest
from thatch.cli import main, setup_commands
from thatch.plugin.config import Config
from thatch.plugin.errors import ConfigError, InvalidInputError
from thatch.plugins import Plugins
from thatch.setup import storage
from thatch.setup.storage import StorageChoice

URL = "postgresql://me@db.example:5432/thatch"


def config_file(home: Path) -> Path:
    return home / "config" / "config.toml"


def read(home: Path) -> dict[str, Any]:
    return tomllib.loads(config_file(home).read_text())


def test_postgres_is_written_and_a_second_run_changes_nothing(
    home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["setup", "--storage", "postgres", "--dsn", URL, "--schema", "team"]) == 0
    assert read(home)["storage"] == {
        "backend": "postgres",
        "postgres": {"dsn": URL, "schema": "team"},
    }
    assert "(set in" in capsys.readouterr().out
    written = config_file(home).read_text()
    assert main(["setup", "--storage", "postgres", "--dsn", URL, "--schema", "team"]) == 0
    assert "(already set in" in capsys.readouterr().out
    assert config_file(home).read_text() == written
    config = Config.load(home, environ={})
    assert config.backend_for("memories") == "postgres"


def test_sqlite_goes_back_keeping_the_server_and_everything_else(home: Path) -> None:
    config_file(home).parent.mkdir(parents=True)
    config_file(home).write_text(
        "# mine\n[plugins]\nblocked = []\n\n[storage]\nbackend = 'postgres'  # team\n"
        f"db_path = '/data/t.db'\n\n[storage.postgres]\ndsn = '{URL}'\n\n"
        "[thresholds]\nrecall = 0.4\n"
    )
    assert main(["setup", "--storage", "sqlite"]) == 0
    text = config_file(home).read_text()
    assert text.startswith("# mine\n[plugins]\nblocked = []\n")
    data = tomllib.loads(text)
    assert data["storage"] == {
        "backend": "sqlite",
        "db_path": "/data/t.db",
        "postgres": {"dsn": URL},
    }
    assert data["thresholds"] == {"recall": 0.4}
    # Back to the server: its dsn is still in the file, so --dsn is not needed.
    assert main(["setup", "--storage", "postgres"]) == 0
    assert read(home)["storage"]["backend"] == "postgres"
    assert read(home)["storage"]["postgres"] == {"dsn": URL}


def test_a_password_is_refused_naming_where_it_goes(
    home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    for dsn in (
        "postgresql://me:secret@db/thatch",
        "postgresql://me@db/thatch?password=secret",
        "host=db user=me password=secret",
        "postgresql://me:secret@[db/thatch",
    ):
        assert main(["setup", "--storage", "postgres", "--dsn", dsn]) == 2
        err = capsys.readouterr().err
        assert "secret" not in err
        assert "~/.pgpass" in err
        assert "PGPASSWORD" in err
        assert "service file" in err
    assert not config_file(home).exists()


@pytest.mark.parametrize(
    ("words", "says"),
    [
        (["--storage", "sqlite", "--dsn", URL], "--dsn is for a database server"),
        (["--dsn", URL], "go with --storage postgres"),
        (["--storage", "postgres"], "needs the server: add --dsn"),
        (["--storage", "postgres", "--dsn", URL, "--schema", "Bad-Name"], "schema"),
        (["--storage", "postgres", "--uninstall"], "not undone by --uninstall"),
    ],
)
def test_bad_choices_write_nothing(
    home: Path, capsys: pytest.CaptureFixture[str], words: list[str], says: str
) -> None:
    assert main(["setup", *words]) == 2
    assert says in capsys.readouterr().err
    assert not config_file(home).exists()


def test_dry_run_shows_the_diff_and_writes_nothing(
    home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["setup", "--storage", "postgres", "--dsn", URL, "--dry-run"]) == 0
    shown = capsys.readouterr().out
    assert '+backend = "postgres"' in shown
    assert f'+dsn = "{URL}"' in shown
    assert not config_file(home).exists()


def test_a_form_it_cannot_edit_is_left_alone_with_the_lines_to_add(tmp_path: Path) -> None:
    path = tmp_path / "config.toml"
    text = 'storage = { backend = "sqlite" }\n'
    with pytest.raises(
        ConfigError, match=r"(?s)cannot edit safely.*\[storage\]\nbackend = \"postgres\""
    ):
        storage.edited(text, StorageChoice("postgres", URL), path)
    with pytest.raises(ConfigError, match="not valid TOML"):
        storage.edited("[storage\n", StorageChoice("sqlite"), path)


def test_only_the_known_backends_are_offered() -> None:
    with pytest.raises(InvalidInputError, match="one of sqlite, postgres"):
        storage.choose("mysql", None, None)
    assert storage.choose("PostgreSQL", URL, None) == StorageChoice("postgres", URL)


def test_a_terminal_is_asked_where_the_data_lives(
    home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: Any
) -> None:
    answers = iter(["p", URL, "team"])
    monkeypatch.setattr("builtins.input", lambda prompt: next(answers))
    config = Config.load(home, environ={})
    namespace = argparse.Namespace(storage=None, dsn=None, schema=None)
    assert setup_commands._ask_storage(namespace, config, Plugins.load(config))
    assert (namespace.storage, namespace.dsn, namespace.schema) == ("postgres", URL, "team")
    assert "storage: PostgreSQL" in capsys.readouterr().out
