"""The docs cannot drift from the code: every CLI subcommand, config key and package is documented.

Each list is derived from the code when the test runs — the argparse tree
:func:`thatch.cli.parser.build_parser` builds (core's commands; a plugin
documents its own), the keys the config loaders read, the folders under
``core/src/thatch`` and ``plugins/*/src``, core's own plugins — so a command,
key or module added (or moved) without its docs fails here, naming the file
to update. (Hooks: ``test_docs.py``.)
"""

from __future__ import annotations

import argparse
import re
import tomllib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from thatch.config import schema as config_schema

ROOT = Path(__file__).parents[2]
GUIDE = ROOT / "docs" / "user-guide.md"
ARCHITECTURE = ROOT / "docs" / "architecture.md"
PLUGIN_GUIDE = ROOT / "docs" / "plugins.md"
CORE_PACKAGE = ROOT / "core" / "src" / "thatch"
#: Folders a path in the architecture's table is relative to.
SOURCE_ROOTS = [
    ROOT / "core" / "src",
    *sorted(ROOT.glob("plugins/*/src")),
    *ROOT.glob("examples/*/src"),
]


# --- CLI subcommands -------------------------------------------------------


def _command_paths(parser: argparse.ArgumentParser, prefix: tuple[str, ...] = ()) -> Iterator[str]:
    """Every leaf subcommand, as typed after ``thatch`` (``daemon start``)."""
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                leaves = list(_command_paths(sub, (*prefix, name)))
                yield from leaves or [" ".join((*prefix, name))]


def _documented_in_a_table_row(text: str, command: str) -> bool:
    # The command opens a backticked span in a row's first cell; ``\|`` inside
    # the cell (``[STORE\|all]``) is not a cell border.
    first_cell = r"^\|(?:[^|\\\n]|\\.)*"
    return bool(re.search(first_cell + re.escape(f"`thatch {command}") + r"[ `]", text, re.M))


def test_every_subcommand_has_a_row_in_the_user_guide() -> None:
    from thatch.cli.parser import build_parser

    guide = GUIDE.read_text()
    commands = list(_command_paths(build_parser()))
    assert commands, "the parser has no subcommand"
    missing = [command for command in commands if not _documented_in_a_table_row(guide, command)]
    assert not missing, (
        f"docs/user-guide.md has no table row starting with `thatch COMMAND` for: {missing}"
    )


def test_a_row_names_its_command_in_the_first_cell() -> None:
    row = "| `thatch list [STORE\\|all]` / `thatch show LABEL` | `thatch forget` |"
    assert _documented_in_a_table_row(row, "list")
    assert _documented_in_a_table_row(row, "show")
    assert not _documented_in_a_table_row(row, "forget")
    assert not _documented_in_a_table_row(row, "lis")


# --- config keys -----------------------------------------------------------


class _Reads(dict[str, Any]):
    """A parsed config file with every table present and empty, noting each key asked of it."""

    def __init__(self, seen: set[str], table: str | None = None) -> None:
        super().__init__()
        self._seen = seen
        self._table = table
        self._tables: dict[str, _Reads] = {}

    def _ask(self, key: str) -> _Reads | None:
        if self._table is None:
            return self._tables.setdefault(key, _Reads(self._seen, key))
        self._seen.add(f"{self._table}.{key}")
        return None

    def get(self, key: str, default: Any = None) -> Any:
        table = self._ask(key)
        return default if table is None else table

    def __contains__(self, key: object) -> bool:
        return self._ask(str(key)) is not None

    def __getitem__(self, key: str) -> Any:
        table = self._ask(key)
        if table is None:
            raise KeyError(key)
        return table


def _section_readers() -> list[Any]:
    """Core's readers of ``Config.sections`` beyond ``Config.load`` itself.

    When one moves, update its import here (an ImportError points at it).
    """
    from thatch.config.settings import RuntimeSettings
    from thatch.decisions.service import settings_from_config

    return [RuntimeSettings.from_config, lambda config: settings_from_config(config.sections)]


def _keys_core_reads(home: Path, monkeypatch: pytest.MonkeyPatch) -> set[str]:
    from thatch.plugin.config import Config

    # Environment variables win over the file, and a set one skips reading its key.
    config_file = Config.load(home, environ={}).paths.config_file
    config_file.parent.mkdir(parents=True, exist_ok=True)
    config_file.write_text("")
    seen: set[str] = set()
    monkeypatch.setattr(tomllib, "load", lambda *args, **kwargs: _Reads(seen))
    monkeypatch.setattr(tomllib, "loads", lambda *args, **kwargs: _Reads(seen))
    config = Config.load(home, environ={})
    for read in _section_readers():
        read(config)
    return seen


def test_the_schema_lists_exactly_the_keys_core_reads(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    read = _keys_core_reads(tmp_path, monkeypatch)
    listed = config_schema.dotted_names()
    assert read, "the recorder saw no key read: has Config.load stopped using tomllib?"
    assert not read - listed, (
        f"core reads {sorted(read - listed)}, which thatch/config/schema.py does not list: "
        "add each there (type, default, help) and a row to docs/user-guide.md"
    )
    assert not listed - read, (
        f"thatch/config/schema.py lists {sorted(listed - read)}, which no loader reads"
    )


def _configuration_section() -> str:
    guide = GUIDE.read_text()
    return guide.split("\n## Configuration\n", 1)[1].split("\n## ", 1)[0]


def test_the_guide_shows_the_schema_example() -> None:
    blocks = re.findall(r"```toml\n(.*?)```", _configuration_section(), flags=re.S)
    assert blocks, "docs/user-guide.md's Configuration section has no ```toml example"
    assert blocks[0] == config_schema.example(), (
        "docs/user-guide.md's config example differs from thatch.config.schema.example(); "
        "paste its output:\n" + config_schema.example()
    )


def test_every_config_key_has_a_row_in_the_user_guide() -> None:
    rows = [line for line in GUIDE.read_text().splitlines() if line.startswith("|")]
    missing = [
        f"[{table.name}] {key.name}"
        for table, key in config_schema.core_keys()
        if not any(f"`[{table.name}] {key.name}`" in row for row in rows)
    ]
    assert not missing, f"docs/user-guide.md has no table row for {missing}"


def _keys_named(toml_text: str) -> set[str]:
    """``table.key`` for every key line of a TOML example, commented out or not."""
    names: set[str] = set()
    table = ""
    for line in toml_text.splitlines():
        if header := re.fullmatch(r"\[([\w.]+)\]\s*(#.*)?", line.strip()):
            table = header.group(1)
        elif key := re.match(r"#?\s*(\w+)\s*=", line.strip()):
            names.add(f"{table}.{key.group(1)}")
    return names


def test_the_config_error_example_names_only_schema_keys() -> None:
    from thatch.plugin.config import EXAMPLE

    unknown = _keys_named(EXAMPLE) - config_schema.dotted_names()
    assert not unknown, f"thatch.plugin.config.EXAMPLE names keys core does not read: {unknown}"


def test_the_schema_example_is_toml_naming_every_key() -> None:
    text = config_schema.example()
    uncommented = re.sub(r"^# (\w+ = )", r"\1", text, flags=re.M)
    parsed = tomllib.loads(uncommented)
    assert {f"{t}.{k}" for t, table in parsed.items() for k in table} == (
        config_schema.dotted_names()
    )
    assert _keys_named(text) == config_schema.dotted_names()


# --- the package tree ------------------------------------------------------


def _table_paths() -> list[str]:
    """The backticked paths in the file column of architecture.md's "Where things live"."""
    text = ARCHITECTURE.read_text()
    assert "\n## Where things live\n" in text, "docs/architecture.md has no '## Where things live'"
    section = text.split("\n## Where things live\n", 1)[1].split("\n## ", 1)[0]
    rows = [line for line in section.splitlines() if line.startswith("|")][2:]
    assert rows, "the 'Where things live' table has no rows"
    return [path for row in rows for path in re.findall(r"`([^`]+)`", row.rsplit("|", 2)[-2])]


def _top_level_entries() -> list[str]:
    """Every top-level module and package of core, and every plugin's package."""
    entries = [
        f"thatch/{path.name}" + ("/" if path.is_dir() else "")
        for path in sorted(CORE_PACKAGE.iterdir())
        if (path.suffix == ".py" and not path.name.startswith("_"))
        or (path.is_dir() and (path / "__init__.py").exists())
    ]
    for source in SOURCE_ROOTS[1:]:
        entries += [f"{init.parent.name}/" for init in sorted(source.glob("*/__init__.py"))]
    return entries


def test_every_module_and_package_has_a_place_in_the_architecture_table() -> None:
    paths = _table_paths()
    missing = [
        entry
        for entry in _top_level_entries()
        if not any(
            path == entry or (entry.endswith("/") and path.startswith(entry)) for path in paths
        )
    ]
    assert not missing, (
        "docs/architecture.md's 'Where things live' table does not name: "
        f"{missing} (add a row: what it does → its path)"
    )


def test_every_path_in_the_architecture_table_exists() -> None:
    gone = [
        path for path in _table_paths() if not any((root / path).exists() for root in SOURCE_ROOTS)
    ]
    assert not gone, (
        f"docs/architecture.md's 'Where things live' names paths that do not exist: {gone} "
        "(paths are relative to core/src, plugins/NAME/src or examples/NAME/src)"
    )


# --- the plugin guide's introduction ---------------------------------------


def test_the_plugin_guide_names_exactly_core_s_own_plugins() -> None:
    from thatch.builtin import BUILTIN_PLUGINS

    guide = PLUGIN_GUIDE.read_text()
    listed = re.search(r"Core's own [^:]*registered first:(.*?)\.\s", guide, flags=re.S)
    assert listed, "docs/plugins.md no longer lists core's own plugins ('registered first: ...')"
    assert set(re.findall(r"`([\w-]+)`", listed.group(1))) == set(BUILTIN_PLUGINS), (
        f"docs/plugins.md's list of core's own plugins differs from {sorted(BUILTIN_PLUGINS)}"
    )


def test_the_plugin_guide_s_first_example_imports_the_contract() -> None:
    first_example = PLUGIN_GUIDE.read_text().split("```python\n", 1)[1].split("```", 1)[0]
    assert "from thatch.plugin import hookimpl" in first_example
