"""``thatch doctor`` names the server a home keeps its parts on, never its password."""

from __future__ import annotations

from pathlib import Path

from pg_cluster import Server, schema_for
from thatch import doctor


def test_the_database_line_names_the_server_and_schema(
    postgres_server: Server, tmp_path: Path
) -> None:
    schema = schema_for(tmp_path)
    config_file = tmp_path / "config" / "config.toml"
    config_file.parent.mkdir(parents=True)
    config_file.write_text(
        f'[storage]\nbackend = "postgres"\npredictions = "sqlite"\n\n'
        f'[storage.postgres]\ndsn = "{postgres_server.dsn()}"\nschema = "{schema}"\n'
    )
    check = doctor._database(str(tmp_path))
    assert check.status == "ok", check
    assert check.detail == (
        f"memories and decisions in postgres at {postgres_server.dsn()}, schema {schema}; "
        f"predictions in {tmp_path / 'data' / 'thatch.db'} passes the integrity check"
    )
