"""The setup engine: plans, diffs, backups, the manifest, uninstall and status."""

from __future__ import annotations

import hashlib
import json
import os
import stat
from pathlib import Path

import pytest
from thatch.errors import ConfigError, InvalidInputError
from thatch.setup import engine, manifest
from thatch.setup.jsonc import JsoncError
from thatch.setup.model import (
    Change,
    JsonEntry,
    JsonListItem,
    OwnedFile,
    SetupContext,
    TextBlock,
)
from thatch.testing import apply_changes, plan_changes, tree

SERVER = {"type": "stdio", "command": "thatch", "args": ["mcp"]}


def hook(command: str) -> dict[str, object]:
    return {"hooks": [{"type": "command", "command": command}]}


class Setup:
    """One target's setup in a temporary project, driven the way the CLI drives it."""

    def __init__(self, tmp_path: Path, target: str = "claude") -> None:
        self.project = tmp_path / "project"
        self.project.mkdir(exist_ok=True)
        self.state = tmp_path / "state"
        self.target = target
        self.scope = f"project:{self.project}"

    def plan(self, changes: list[Change]) -> list[engine.FileEdit]:
        return plan_changes(changes, self.state, target=self.target, scope_key=self.scope)

    def run(self, changes: list[Change]) -> engine.ApplyReport:
        return apply_changes(changes, self.state, target=self.target, scope_key=self.scope)

    def uninstall(self) -> engine.ApplyReport:
        return engine.uninstall(self.state, self.target, self.scope)

    def changes(self, command: str = "thatch hook claude prompt") -> list[Change]:
        p = self.project
        return [
            JsonEntry(p / ".mcp.json", ("mcpServers", "thatch"), SERVER),
            JsonListItem(
                p / ".claude" / "settings.json", ("hooks", "UserPromptSubmit"), hook(command)
            ),
            TextBlock(p / "CLAUDE.md", "thatch", "Use thatch's memory tools."),
            OwnedFile(p / ".claude" / "skills" / "primer" / "SKILL.md", "# Primer\n"),
        ]


@pytest.fixture
def setup(tmp_path: Path) -> Setup:
    return Setup(tmp_path)


def test_plan_writes_nothing_and_diff_shows_new_files(setup: Setup) -> None:
    edits = setup.plan(setup.changes())
    assert tree(setup.project) == {}
    assert not setup.state.exists()
    text = engine.diff(edits)
    assert f"--- /dev/null\n+++ {setup.project / '.mcp.json'}\n" in text
    assert '+    "thatch": {\n' in text
    assert "+<!-- thatch:begin thatch -->\n" in text


def test_second_run_changes_nothing(setup: Setup) -> None:
    first = setup.run(setup.changes())
    assert len(first.written) == 4
    before = tree(setup.project)
    manifest_text = manifest.path_of(setup.state).read_text()
    edits = setup.plan(setup.changes())
    assert [edit.changed for edit in edits] == [False] * 4
    assert all(edit.new == edit.old for edit in edits)
    assert engine.diff(edits) == ""
    second = setup.run(setup.changes())
    assert not second.changed
    assert second.backups == ()
    assert tree(setup.project) == before
    assert manifest.path_of(setup.state).read_text() == manifest_text


def test_empty_project_round_trip_leaves_nothing(setup: Setup) -> None:
    setup.run(setup.changes())
    assert (
        setup.project / ".claude" / "skills" / "primer" / "SKILL.md"
    ).read_text() == "# Primer\n"
    report = setup.uninstall()
    assert tree(setup.project) == {}
    assert set(report.deleted) == {
        setup.project / ".mcp.json",
        setup.project / ".claude" / "settings.json",
        setup.project / "CLAUDE.md",
        setup.project / ".claude" / "skills" / "primer" / "SKILL.md",
    }
    assert setup.project / ".claude" in report.removed_dirs
    assert engine.status(setup.state) == []
    assert not manifest.path_of(setup.state).exists()


def test_backup_is_taken_once_before_the_first_change(setup: Setup) -> None:
    settings = setup.project / ".claude" / "settings.json"
    settings.parent.mkdir()
    original = '{\n  // mine\n  "model": "opus"\n}\n'
    settings.write_text(original)
    os.chmod(settings, 0o600)
    first = setup.run(setup.changes())
    [copy] = first.backups
    assert copy.read_text() == original
    assert stat.S_IMODE(copy.stat().st_mode) == 0o600
    # The copy keeps the file's absolute path under a timestamped folder.
    [stamp] = (setup.state / "setup-backups").iterdir()
    assert copy == stamp / settings.relative_to("/")
    # A later run that changes the file again (a new hook command) takes no new copy.
    second = setup.run(setup.changes("thatch hook claude prompt --v2"))
    assert second.written
    assert second.backups == ()
    assert copy.read_text() == original
    [record] = [f for f in engine.status(setup.state)[0].files if f.path == settings]
    assert record.backup == copy


def test_an_older_backup_is_never_overwritten(tmp_path: Path) -> None:
    claude, cursor = Setup(tmp_path, "claude"), Setup(tmp_path, "cursor")
    agents = claude.project / "AGENTS.md"
    agents.write_text("# Agents\n")
    [first] = claude.run([TextBlock(agents, "claude", "one")]).backups
    [second] = cursor.run([TextBlock(agents, "cursor", "two")]).backups
    assert first != second
    assert first.read_text() == "# Agents\n"
    assert "thatch:begin claude" in second.read_text()


def test_file_mode_is_kept_and_symlinks_are_followed(setup: Setup, tmp_path: Path) -> None:
    dotfiles = tmp_path / "dotfiles"
    dotfiles.mkdir()
    real = dotfiles / "settings.json"
    real.write_text("{}\n")
    os.chmod(real, 0o640)
    (setup.project / ".claude").mkdir()
    link = setup.project / ".claude" / "settings.json"
    link.symlink_to(real)
    setup.run([JsonListItem(link, ("hooks", "Stop"), hook("thatch hook claude stop"))])
    assert link.is_symlink()
    assert json.loads(real.read_text()) == {"hooks": {"Stop": [hook("thatch hook claude stop")]}}
    assert stat.S_IMODE(real.stat().st_mode) == 0o640
    setup.uninstall()
    assert link.is_symlink()
    assert real.read_text() == "{}\n"


def test_executable_owned_file(setup: Setup) -> None:
    script = setup.project / "bin" / "thatch-hook"
    setup.run([OwnedFile(script, "#!/bin/sh\n", executable=True)])
    assert os.access(script, os.X_OK)
    assert engine.plan([OwnedFile(script, "#!/bin/sh\n", executable=True)])[0].changed is False
    setup.uninstall()
    assert tree(setup.project) == {}


def test_owned_file_turns_executable_when_asked(setup: Setup) -> None:
    script = setup.project / "hook.sh"
    script.write_text("#!/bin/sh\n")
    os.chmod(script, 0o644)
    [edit] = setup.plan([OwnedFile(script, "#!/bin/sh\n", executable=True)])
    assert edit.changed
    assert "old mode 644\nnew mode 755\n" in engine.diff([edit])


def test_owned_file_that_replaced_one_is_restored_on_uninstall(setup: Setup) -> None:
    rule = setup.project / ".cursor" / "rules" / "thatch.mdc"
    rule.parent.mkdir(parents=True)
    rule.write_text("the user's own rule\n")
    before = tree(setup.project)
    setup.run([OwnedFile(rule, "---\nalwaysApply: true\n---\nthatch\n")])
    assert rule.read_text().endswith("thatch\n")
    setup.uninstall()
    assert tree(setup.project) == before


def test_uninstall_keeps_what_the_user_changed(setup: Setup) -> None:
    setup.run(setup.changes())
    mcp = setup.project / ".mcp.json"
    mcp.write_text(mcp.read_text().replace('"mcp"', '"mcp", "--verbose"'))
    skill = setup.project / ".claude" / "skills" / "primer" / "SKILL.md"
    skill.write_text("# Primer\n\nmy own notes\n")
    edited_mcp = mcp.read_text()
    report = setup.uninstall()
    assert mcp.read_text() == edited_mcp
    assert skill.read_text() == "# Primer\n\nmy own notes\n"
    assert any("mcpServers.thatch, changed since thatch set it" in note for note in report.notes)
    assert any(f"{skill}: kept, changed since thatch wrote it" == note for note in report.notes)
    assert not (setup.project / ".claude" / "settings.json").exists()
    assert not (setup.project / "CLAUDE.md").exists()


def test_created_file_the_user_added_to_is_kept(setup: Setup) -> None:
    setup.run(setup.changes())
    mcp = setup.project / ".mcp.json"
    text = mcp.read_text().replace('  "mcpServers"', '  "other": 1,\n  "mcpServers"')
    mcp.write_text(text)
    setup.uninstall()
    assert mcp.read_text() == '{\n  "other": 1\n}\n'


def test_invalid_json_is_refused_and_nothing_is_written(setup: Setup) -> None:
    settings = setup.project / ".claude" / "settings.json"
    settings.parent.mkdir()
    settings.write_text('{\n  "hooks": {\n    "Stop": []\n  \n')
    before = tree(setup.project)
    with pytest.raises(JsoncError, match=rf"^{settings} line 2 column 12: .*never closed"):
        setup.run(setup.changes())
    assert tree(setup.project) == before
    assert not setup.state.exists()


def test_invalid_json_blocks_uninstall_too(setup: Setup) -> None:
    setup.run(setup.changes())
    settings = setup.project / ".claude" / "settings.json"
    settings.write_text("{ broken")
    before = tree(setup.project)
    with pytest.raises(JsoncError, match=str(settings)):
        setup.uninstall()
    assert tree(setup.project) == before
    assert engine.status(setup.state)


def test_changes_no_longer_wanted_are_taken_back(setup: Setup) -> None:
    setup.run(setup.changes("/old/venv/bin/thatch hook claude prompt"))
    setup.run(setup.changes("thatch hook claude prompt"))
    settings = json.loads((setup.project / ".claude" / "settings.json").read_text())
    assert settings == {"hooks": {"UserPromptSubmit": [hook("thatch hook claude prompt")]}}
    # Dropping the block and the skill from the changes removes them too.
    setup.run(setup.changes()[:2])
    assert not (setup.project / "CLAUDE.md").exists()
    assert not (setup.project / ".claude" / "skills").exists()
    setup.uninstall()
    assert tree(setup.project) == {}


def test_users_own_equal_value_is_not_ours_to_remove(setup: Setup) -> None:
    mcp = setup.project / ".mcp.json"
    original = json.dumps({"mcpServers": {"thatch": SERVER}}, indent=2) + "\n"
    mcp.write_text(original)
    [edit] = setup.plan([JsonEntry(mcp, ("mcpServers", "thatch"), SERVER)])
    assert not edit.changed
    assert edit.record is None
    setup.run([JsonEntry(mcp, ("mcpServers", "thatch"), SERVER)])
    assert engine.status(setup.state) == []
    setup.uninstall()
    assert mcp.read_text() == original


def test_replaced_value_is_put_back_on_uninstall(setup: Setup) -> None:
    mcp = setup.project / ".mcp.json"
    original = '{\n  "mcpServers": {\n    "thatch": {"command": "old-thatch" /* mine */}\n  }\n}\n'
    mcp.write_text(original)
    setup.run([JsonEntry(mcp, ("mcpServers", "thatch"), SERVER)])
    assert json.loads(mcp.read_text())["mcpServers"]["thatch"] == SERVER
    [install] = engine.status(setup.state)
    [entry] = install.files[0].entries
    assert entry.previous == '{"command": "old-thatch" /* mine */}'
    setup.uninstall()
    assert mcp.read_text() == original


def test_apply_refuses_a_plan_made_before_the_file_changed(setup: Setup) -> None:
    edits = setup.plan(setup.changes())
    (setup.project / "CLAUDE.md").write_text("written meanwhile\n")
    with pytest.raises(InvalidInputError, match=r"CLAUDE.md changed after thatch setup planned"):
        engine.apply(edits, state_dir=setup.state, target="claude", scope_key=setup.scope)
    assert not (setup.project / ".mcp.json").exists()


def test_dry_run_uninstall_shows_the_removal(setup: Setup) -> None:
    setup.run(setup.changes())
    before = tree(setup.project)
    text = engine.diff(engine.plan_uninstall(setup.state, "claude", setup.scope))
    assert f"--- {setup.project / '.mcp.json'}\n+++ /dev/null\n" in text
    assert tree(setup.project) == before


def test_one_file_with_two_kinds_of_change_is_refused(setup: Setup) -> None:
    path = setup.project / "AGENTS.md"
    with pytest.raises(InvalidInputError, match=r"a file takes one kind"):
        engine.plan([TextBlock(path, "a", "x"), JsonEntry(path, ("a",), 1)])


def test_manifest_round_trip(setup: Setup) -> None:
    mcp = setup.project / ".mcp.json"
    mcp.write_text('{"mcpServers": {"thatch": 1}}')
    setup.run([*setup.changes(), JsonEntry(mcp, ("mcpServers", "thatch"), SERVER)])
    loaded = manifest.load(setup.state)
    [install] = loaded.values()
    assert install.key == f"claude:{setup.scope}"
    records = {record.path.name: record for record in install.files}
    assert records[".mcp.json"].entries == (
        manifest.EntryRecord(("mcpServers", "thatch"), SERVER, previous="1"),
    )
    assert records[".mcp.json"].created is False
    settings = records["settings.json"]
    assert settings.items == (
        manifest.ItemRecord(("hooks", "UserPromptSubmit"), hook("thatch hook claude prompt")),
    )
    # () is the top-level object itself: the file was created.
    assert settings.created_keys == ((), ("hooks",), ("hooks", "UserPromptSubmit"))
    assert settings.created is True
    assert settings.created_dirs == (setup.project / ".claude",)
    assert records["CLAUDE.md"].blocks == (manifest.BlockRecord("thatch", ""),)
    skill = records["SKILL.md"]
    assert skill.owned is not None
    assert skill.owned == manifest.OwnedRecord(hashlib.sha256(b"# Primer\n").hexdigest())
    manifest.save(setup.state, loaded)
    assert manifest.load(setup.state) == loaded


def test_broken_manifest_is_reported_before_any_write(setup: Setup) -> None:
    setup.state.mkdir()
    manifest.path_of(setup.state).write_text("{ not json")
    with pytest.raises(ConfigError, match=r"setup-manifest.json cannot be read"):
        setup.run(setup.changes())
    assert tree(setup.project) == {}


def test_status_and_describe(tmp_path: Path) -> None:
    claude, cursor = Setup(tmp_path, "claude"), Setup(tmp_path, "cursor")
    claude.run(claude.changes())
    cursor.run(
        [JsonEntry(cursor.project / ".cursor" / "mcp.json", ("mcpServers", "thatch"), SERVER)]
    )
    installs = engine.status(claude.state)
    assert [(i.target, i.scope) for i in installs] == [
        ("claude", claude.scope),
        ("cursor", cursor.scope),
    ]
    lines = engine.describe(installs[0])
    assert f"{claude.project / '.mcp.json'} (created by thatch): mcpServers.thatch" in lines
    assert any(line.endswith("an entry in hooks.UserPromptSubmit") for line in lines)
    assert any(line.endswith("the 'thatch' block") for line in lines)
    claude.uninstall()
    assert [i.target for i in engine.status(claude.state)] == ["cursor"]


def test_scope_key(tmp_path: Path) -> None:
    project = SetupContext("project", tmp_path / "p", tmp_path / "home", ("thatch",))
    assert engine.scope_key(project) == f"project:{tmp_path / 'p'}"
    everywhere = SetupContext("global", None, tmp_path / "home", ("thatch",))
    assert engine.scope_key(everywhere) == f"global:{tmp_path / 'home'}"
    with pytest.raises(InvalidInputError, match="--project"):
        engine.scope_key(SetupContext("project", None, tmp_path, ("thatch",)))


def test_equal_list_item_already_there_is_not_added_again(setup: Setup) -> None:
    settings = setup.project / ".claude" / "settings.json"
    settings.parent.mkdir()
    original = json.dumps({"hooks": {"Stop": [hook("thatch hook claude Stop")]}}, indent=2)
    settings.write_text(original)
    change = JsonListItem(settings, ("hooks", "Stop"), hook("thatch hook claude Stop"))
    report = setup.run([change, change])
    assert not report.changed
    assert settings.read_text() == original
    setup.uninstall()
    assert settings.read_text() == original


def test_bytes_that_are_not_utf8_survive(setup: Setup) -> None:
    notes = setup.project / "CLAUDE.md"
    original = b"# Caf\xe9 notes\r\nlatin-1 text\n"
    notes.write_bytes(original)
    setup.run([TextBlock(notes, "thatch", "Use thatch.")])
    assert notes.read_bytes().startswith(original)
    assert "Caf\ufffd" in engine.diff(engine.plan_uninstall(setup.state, "claude", setup.scope))
    setup.uninstall()
    assert notes.read_bytes() == original
