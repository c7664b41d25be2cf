"""The setup engine: plans, diffs, backups, the manifest, uninstall and status."""

from __future__ import annotations

import hashlib
import json
import os
import stat
from pathlib import Path

import attrs
import pytest
from thatch.instructions.briefing import BRIEFING
from thatch.plugin.errors import ConfigError, InvalidInputError
from thatch.plugin.jsonc import JsoncError, StrictJsonError, leniencies
from thatch.plugin.setup import (
    Change,
    JsonEntry,
    JsonListItem,
    OwnedFile,
    SetupContext,
    TextBlock,
)
from thatch.setup import engine, manifest
from thatch.testing import apply_changes, plan_changes, tree

SERVER = {"type": "stdio", "command": "thatch", "args": ["mcp"]}


def hook(command: str) -> dict[str, object]:
    return {"hooks": [{"type": "command", "command": command}]}


class Setup:
    """One target's setup in a temporary project, driven the way the CLI drives it."""

    def __init__(self, tmp_path: Path, target: str = "claude", project: str = "project") -> None:
        self.project = tmp_path / project
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
    # A link that stays in the project (one leaving it is refused: see below).
    dotfiles = setup.project / "dotfiles"
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


def test_uninstall_refuses_a_file_a_link_now_sends_out_of_the_project(
    setup: Setup, tmp_path: Path
) -> None:
    settings = setup.project / "settings.json"
    setup.run([JsonListItem(settings, ("hooks", "Stop"), hook("thatch hook claude stop"))])
    outside = tmp_path / "outside.json"
    outside.write_text("{}\n")
    settings.unlink()
    settings.symlink_to(outside)
    with pytest.raises(InvalidInputError, match="outside the project"):
        setup.uninstall()
    assert outside.read_text() == "{}\n"


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


def strict(change: Change) -> Change:
    """``change`` for a file its reader takes as strict JSON (JSON changes only)."""
    if isinstance(change, JsonEntry | JsonListItem):
        return attrs.evolve(change, strict_for="Claude Code")
    return change


def test_a_strict_file_with_comments_is_refused_and_nothing_is_written(setup: Setup) -> None:
    settings = setup.project / ".claude" / "settings.json"
    settings.parent.mkdir()
    settings.write_text('{\n  // my hooks\n  "hooks": {"Stop": [],},\n}\n')
    before = tree(setup.project)
    changes = [strict(change) for change in setup.changes()]
    for attempt in (setup.plan, setup.run):  # --dry-run refuses the same way
        with pytest.raises(StrictJsonError) as caught:
            attempt(changes)
        assert str(caught.value).startswith(
            f"{settings} has a comment at line 2 and trailing commas at line 3; "
            "Claude Code reads this file as strict JSON"
        )
    assert tree(setup.project) == before
    assert not setup.state.exists()


def test_a_broken_strict_file_gets_the_strict_fix(setup: Setup) -> None:
    # The general fix allows comments, which the strict reader then refuses.
    settings = setup.project / ".claude" / "settings.json"
    settings.parent.mkdir()
    settings.write_text('{\n  "hooks": {\n    "Stop": []\n  \n')
    before = tree(setup.project)
    with pytest.raises(InvalidInputError) as caught:
        setup.run([strict(change) for change in setup.changes()])
    message = str(caught.value)
    assert message.startswith(f"{settings} line 2 column 12: ")
    assert "never closed" in message
    assert "strict JSON: Claude Code ignores a file with comments" in message
    assert "comments and trailing commas allowed" not in message
    assert tree(setup.project) == before


def test_the_same_file_without_strictness_is_edited_around_its_comments(setup: Setup) -> None:
    settings = setup.project / ".claude" / "settings.json"
    settings.parent.mkdir()
    settings.write_text('{\n  // my hooks\n  "hooks": {"Stop": [],},\n}\n')
    setup.run(setup.changes())
    assert "// my hooks" in settings.read_text()


def test_a_strict_file_in_plain_json_is_edited_and_stays_plain(setup: Setup) -> None:
    settings = setup.project / ".claude" / "settings.json"
    settings.parent.mkdir()
    settings.write_text('{\n  "model": "opus"\n}\n')
    setup.run([strict(change) for change in setup.changes()])
    written = settings.read_text()
    assert json.loads(written)["model"] == "opus"  # Python's reader is strict too
    assert not leniencies(written, str(settings))


def test_comments_added_after_setup_do_not_block_uninstall(setup: Setup) -> None:
    setup.run([strict(change) for change in setup.changes()])
    mcp = setup.project / ".mcp.json"
    mcp.write_text("// the user's note\n" + mcp.read_text())
    setup.uninstall()
    assert mcp.read_text() == "// the user's note\n"


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
    project = SetupContext(
        "project", tmp_path / "p", tmp_path / "home", ("thatch",), briefing=BRIEFING
    )
    assert engine.scope_key(project) == f"project:{tmp_path / 'p'}"
    everywhere = SetupContext("global", None, tmp_path / "home", ("thatch",), briefing=BRIEFING)
    assert engine.scope_key(everywhere) == f"global:{tmp_path / 'home'}"
    with pytest.raises(InvalidInputError, match="--project"):
        engine.scope_key(SetupContext("project", None, tmp_path, ("thatch",), briefing=BRIEFING))


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


# -- whole files several installations own ------------------------------------------------
class Shared:
    """Two projects set up with the same state, both owning one file in a shared folder."""

    def __init__(self, tmp_path: Path) -> None:
        self.a = Setup(tmp_path, project="a")
        self.b = Setup(tmp_path, project="b")
        self.home = tmp_path / "home"
        self.home.mkdir()
        self.skill = self.home / ".claude" / "skills" / "primer" / "SKILL.md"

    def changes(self, setup: Setup, content: str = "# Primer\n") -> list[Change]:
        settings = setup.project / ".claude" / "settings.json"
        return [
            JsonListItem(settings, ("hooks", "Stop"), hook("thatch hook claude Stop")),
            OwnedFile(self.skill, content),
        ]

    def both(self) -> None:
        self.a.run(self.changes(self.a))
        self.b.run(self.changes(self.b))


@pytest.fixture
def shared(tmp_path: Path) -> Shared:
    return Shared(tmp_path)


@pytest.mark.parametrize("first", ["a", "b"])
def test_a_shared_file_stays_until_its_last_owner_goes(shared: Shared, first: str) -> None:
    shared.both()
    going, staying = (shared.a, shared.b) if first == "a" else (shared.b, shared.a)
    report = going.uninstall()
    assert shared.skill.read_text() == "# Primer\n"
    assert shared.skill not in report.deleted
    assert f"{shared.skill}: kept, still used by claude:{staying.scope}" in report.notes
    assert tree(going.project) == {}  # the rest of its setup is gone
    [install] = engine.status(shared.a.state)
    assert install.scope == staying.scope
    assert shared.skill in [record.path for record in install.files]
    staying.uninstall()
    assert tree(shared.home) == {}  # the last one takes back every file and folder
    assert engine.status(shared.a.state) == []


def test_the_second_owner_takes_no_backup_and_records_the_first_owners_origin(
    shared: Shared,
) -> None:
    shared.a.run(shared.changes(shared.a))
    report = shared.b.run(shared.changes(shared.b, "# Primer, new wording\n"))
    assert report.backups == ()  # the file was thatch's, not the user's
    assert shared.skill.read_text() == "# Primer, new wording\n"
    records = {
        install.scope: next(r for r in install.files if r.path == shared.skill)
        for install in engine.status(shared.a.state)
    }
    first, second = records[shared.a.scope], records[shared.b.scope]
    assert (second.created, second.created_dirs, second.owned) == (
        first.created,
        first.created_dirs,
        first.owned,
    )
    assert first.created


def test_a_newer_owners_content_is_taken_back_by_the_last_owner(shared: Shared) -> None:
    shared.a.run(shared.changes(shared.a))
    shared.b.run(shared.changes(shared.b, "# Primer, new wording\n"))
    shared.b.uninstall()
    assert shared.skill.read_text() == "# Primer, new wording\n"
    report = shared.a.uninstall()
    assert shared.skill in report.deleted
    assert report.notes == ()
    assert tree(shared.home) == {}


def test_a_users_file_replaced_by_a_shared_one_comes_back_last(shared: Shared) -> None:
    shared.skill.parent.mkdir(parents=True)
    shared.skill.write_text("my own primer\n")
    before = tree(shared.home)
    [copy] = shared.a.run(shared.changes(shared.a)).backups
    shared.b.run(shared.changes(shared.b))
    shared.a.uninstall()
    assert shared.skill.read_text() == "# Primer\n"
    shared.b.uninstall()
    assert tree(shared.home) == before
    assert copy.read_text() == "my own primer\n"


def test_a_dry_run_uninstall_leaves_a_shared_file_out_of_the_diff(shared: Shared) -> None:
    shared.both()
    edits = engine.plan_uninstall(shared.a.state, "claude", shared.a.scope)
    [edit] = [edit for edit in edits if edit.path == shared.skill]
    assert not edit.changed
    assert str(shared.skill) not in engine.diff(edits)


def test_a_setup_that_no_longer_wants_a_shared_file_leaves_it_to_the_others(
    shared: Shared,
) -> None:
    shared.both()
    shared.b.run(shared.changes(shared.b)[:1])
    assert shared.skill.read_text() == "# Primer\n"
    shared.a.uninstall()
    assert tree(shared.home) == {}


# -- symbolic links out of the project ---------------------------------------------------
def test_a_link_out_of_the_project_is_refused(tmp_path: Path) -> None:
    from thatch.plugin.errors import InvalidInputError
    from thatch.plugin.setup import TextBlock
    from thatch.setup.engine import plan

    project, outside = tmp_path / "project", tmp_path / "outside"
    project.mkdir()
    outside.mkdir()
    notes = outside / "notes.md"
    notes.write_text("my notes\n")
    (project / "CLAUDE.md").symlink_to(notes)
    change = TextBlock(project / "CLAUDE.md", "thatch", "use thatch\n")
    with pytest.raises(InvalidInputError) as refused:
        plan([change], inside=project)
    assert f"{project / 'CLAUDE.md'} is a symbolic link to {notes}" in str(refused.value)
    assert "--global" in str(refused.value)
    # A linked folder on the way counts too.
    (project / ".claude").symlink_to(outside, target_is_directory=True)
    with pytest.raises(InvalidInputError, match=r"\.claude is a symbolic link"):
        plan([TextBlock(project / ".claude" / "x.md", "thatch", "t\n")], inside=project)
    assert notes.read_text() == "my notes\n"


def test_links_that_stay_inside_or_a_global_setup_are_followed(tmp_path: Path) -> None:
    from thatch.plugin.setup import TextBlock
    from thatch.setup.engine import plan

    project = tmp_path / "project"
    (project / "docs").mkdir(parents=True)
    (project / "docs" / "agents.md").write_text("")
    (project / "CLAUDE.md").symlink_to(project / "docs" / "agents.md")
    change = TextBlock(project / "CLAUDE.md", "thatch", "use thatch\n")
    assert plan([change], inside=project)[0].changed
    # Dotfile managers link ~/.claude/... into a repository: global setups follow links.
    elsewhere = tmp_path / "dotfiles" / "CLAUDE.md"
    elsewhere.parent.mkdir()
    elsewhere.write_text("")
    (tmp_path / "home-CLAUDE.md").symlink_to(elsewhere)
    assert plan([TextBlock(tmp_path / "home-CLAUDE.md", "thatch", "t\n")])[0].changed
