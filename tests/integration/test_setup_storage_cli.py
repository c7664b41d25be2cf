"""The real ``thatch setup --storage`` writes thatch's config file and no harness's."""

from __future__ import annotations

import tomllib
from pathlib import Path

from integration.conftest import Runner

URL = "postgresql://team@db.example:5432/thatch"


def test_storage_alone_writes_only_the_config_file(home: Path, thatch: Runner) -> None:
    chosen = thatch("setup", "--storage", "postgres", "--dsn", URL, "--schema", "team")
    assert "storage: postgres at" in chosen.stdout
    config = home / "config" / "config.toml"
    assert tomllib.loads(config.read_text())["storage"] == {
        "backend": "postgres",
        "postgres": {"dsn": URL, "schema": "team"},
    }
    assert sorted(p.relative_to(home).as_posix() for p in home.rglob("*") if p.is_file()) == [
        "config/config.toml"
    ]
    status = thatch("setup", "--status")
    assert f"storage: postgres at {URL}, schema team" in status.stdout
    back = thatch("setup", "--storage", "sqlite")
    assert "storage: SQLite on this machine (set in" in back.stdout
    assert tomllib.loads(config.read_text())["storage"]["backend"] == "sqlite"
    refused = thatch(
        "setup", "--storage", "postgres", "--dsn", "postgresql://u:pw@h/d", check=False
    )
    assert refused.returncode == 2
    assert "pw@" not in refused.stderr
    assert tomllib.loads(config.read_text())["storage"]["backend"] == "sqlite"
