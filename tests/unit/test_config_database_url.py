"""``THATCH_DATABASE_URL``: which server it names, refused with a password, shown without one."""

from __future__ import annotations

from pathlib import Path

import pytest
from thatch.plugin.config import Config
from thatch.plugin.database_url import DatabaseUrl, from_environ, without_secrets
from thatch.plugin.errors import ConfigError

URL = "postgresql://alice@db.internal:5432/thatch?sslmode=verify-full"


def test_a_postgresql_url_selects_the_postgres_backend() -> None:
    assert from_environ({"THATCH_DATABASE_URL": URL}) == DatabaseUrl(URL, "postgres")
    assert from_environ({"THATCH_DATABASE_URL": "postgres://db/x"}) == DatabaseUrl(
        "postgres://db/x", "postgres"
    )


@pytest.mark.parametrize("value", ["", "  "])
def test_unset_or_blank_names_no_server(value: str) -> None:
    assert from_environ({}) is None
    assert from_environ({"THATCH_DATABASE_URL": value}) is None


@pytest.mark.parametrize(
    "url",
    [
        "postgresql://alice:s3cret@db.internal/thatch",
        "postgresql://alice@db.internal/thatch?password=s3cret",
        # Not a URL urlsplit reads (an open IPv6 bracket): refused, never a traceback.
        "postgresql://alice:s3cret@[db.internal/thatch",
    ],
)
def test_a_password_is_refused_naming_where_it_goes(url: str) -> None:
    with pytest.raises(ConfigError) as refused:
        from_environ({"THATCH_DATABASE_URL": url})
    message = str(refused.value)
    assert "s3cret" not in message
    for fix in ("~/.pgpass", "PGPASSWORD", "service file"):
        assert fix in message
    assert "THATCH_DATABASE_URL=postgresql://alice@" in message


def test_another_scheme_is_refused() -> None:
    with pytest.raises(ConfigError, match="not a database URL"):
        from_environ({"THATCH_DATABASE_URL": "mysql://root:pw@db/x"})


@pytest.mark.parametrize(
    ("dsn", "shown"),
    [
        (URL, URL),
        ("postgresql://alice:pw@db:5432/thatch", "postgresql://alice@db:5432/thatch"),
        ("postgresql://:pw@db/thatch", "postgresql://db/thatch"),
        (
            "postgresql://db/thatch?password=pw&sslmode=require",
            "postgresql://db/thatch?sslmode=require",
        ),
        ("postgresql://u@/db?host=/run/pg&port=5433", "postgresql://u@/db?host=/run/pg&port=5433"),
        ("host=db password='a b' dbname=thatch", "host=db dbname=thatch"),
        ("host=db PASSWORD=pw", "host=db"),
        ("postgresql://alice:pw@[db/thatch", "postgresql://alice@[db/thatch"),
        (" postgresql://alice:pw@db/thatch", "postgresql://alice@db/thatch"),
    ],
)
def test_connection_strings_are_shown_without_their_password(dsn: str, shown: str) -> None:
    assert without_secrets(dsn) == shown


SHARED = "postgresql://alice@db.internal/thatch"


def write(home: Path, text: str) -> None:
    (home / "config").mkdir(parents=True, exist_ok=True)
    (home / "config" / "config.toml").write_text(text)


def test_the_url_selects_postgres_for_every_part_the_file_leaves_open(tmp_path: Path) -> None:
    config = Config.load(tmp_path, environ={"THATCH_DATABASE_URL": SHARED})
    assert [config.backend_for(p) for p in ("memories", "decisions", "predictions")] == [
        "postgres"
    ] * 3
    assert config.database_url == SHARED
    write(tmp_path, '[storage]\npredictions = "sqlite"\n')
    config = Config.load(tmp_path, environ={"THATCH_DATABASE_URL": SHARED})
    assert config.backend_for("predictions") == "sqlite"
    assert config.backend_for("memories") == "postgres"
    write(tmp_path, '[storage]\nbackend = "sqlite"\n')
    assert (
        Config.load(tmp_path, environ={"THATCH_DATABASE_URL": SHARED}).backend_for("memories")
        == "sqlite"
    )
    assert Config.load(tmp_path, environ={}).database_url is None


def test_a_password_in_the_url_is_refused_at_load(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="pgpass"):
        Config.load(tmp_path, environ={"THATCH_DATABASE_URL": "postgresql://a:pw@db/x"})
