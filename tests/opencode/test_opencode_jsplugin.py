"""The JS plugin: rendered from the template, valid JavaScript, and right when Node runs it.

A stand-in ``thatch`` (a Python script) records what the plugin sends and
answers with canned text; a Node driver calls the plugin's hooks the way
opencode 1.18 does (see the README for how that was checked). The recorded
payloads then go through the Python parser, so the two sides cannot drift.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from thatch_opencode.events import parse_event
from thatch_opencode.jsplugin import (
    render,
    rendered_command,
    rendered_template_id,
    template,
    template_id,
)

#: An argument no JS string literal could hold unescaped.
AWKWARD = 'it\'s "quoted" \\ back\\slash, é, \u2028 and @@ENV@@'

FAKE_THATCH = """\
import json, os, sys
payload = sys.stdin.read()
with open(os.environ["FAKE_RECORD"], "a", encoding="utf-8") as record:
    record.write(json.dumps({"argv": sys.argv[1:], "cwd": os.getcwd(),
                             "payload": json.loads(payload)}) + "\\n")
print(json.loads(os.environ["FAKE_ANSWERS"]).get(sys.argv[-1], ""))
"""

ANSWERS = {
    "session.created": "[thatch] briefing at start",
    "session.compacted": "[thatch] briefing after compaction",
    "chat.message": "[thatch] nudge for this prompt",
    "experimental.session.compacting": "[thatch] keep the decisions",
}

DRIVER = """\
import { pathToFileURL } from "node:url";
const [pluginPath, directory] = process.argv.slice(2);
const mod = await import(pathToFileURL(pluginPath).href);
const hooks = await mod.ThatchPlugin({ directory, worktree: directory, project: {}, client: {} });
const out = { exports: Object.fromEntries(Object.entries(mod).map(([k, v]) => [k, typeof v])) };
const created = (id, parentID) =>
  ({ event: { id: "evt_" + id, type: "session.created", properties: { info: { id, parentID } } } });
const system = async (sessionID) => {
  const output = { system: ["opencode's own prompt"] };
  await hooks["experimental.chat.system.transform"]({ sessionID, model: {} }, output);
  return output.system;
};
await hooks.event(created("ses_a"));
await hooks.event(created("ses_child", "ses_a"));
await hooks.event({ event: { type: "session.idle", properties: { sessionID: "ses_a" } } });
await hooks.event({ event: { type: "session.created" } });
out.systemAfterStart = await system("ses_a");
out.systemOfAnotherSession = await system("ses_other");
const message = { id: "msg_1", role: "user", sessionID: "ses_a" };
const ids = { sessionID: "ses_a", messageID: "msg_1" };
const parts = [
  { id: "prt_1", ...ids, type: "text", text: "How do we deploy?" },
  { id: "prt_2", ...ids, type: "file", url: "data:,x", mime: "text/plain" },
  { id: "prt_3", ...ids, type: "text", text: "file text", synthetic: true },
];
// An id as opencode makes one (time * 4096 + a counter), just before the hook runs.
const time = (BigInt(Date.now()) * 4096n + 1n) & 0xffffffffffffn;
out.opencodeID = "prt_" + time.toString(16).padStart(12, "0") + "AAAAAAAAAAAAAA";
const pending = hooks["chat.message"]({ sessionID: "ses_a" }, { message, parts });
out.partsBeforeAwait = parts.length;
await pending;
out.parts = parts;
await hooks["tool.execute.after"](
  { tool: "bash", sessionID: "ses_a", callID: "call_1", args: { command: "ls" } },
  { title: "ls", output: "x".repeat(30000), metadata: {} });
const compacting = { context: [], prompt: undefined };
await hooks["experimental.session.compacting"]({ sessionID: "ses_a" }, compacting);
out.context = compacting.context;
await hooks.event({ event: { type: "session.compacted", properties: { sessionID: "ses_a" } } });
out.systemAfterCompaction = await system("ses_a");
await hooks["chat.message"]({ sessionID: "ses_a" }, {});
out.survived = true;
console.log(JSON.stringify(out));
"""


def write_plugin(folder: Path, command: list[str], env: dict[str, str]) -> Path:
    """The rendered plugin as an ``.mjs`` file: Node 20 then treats it as a module, as Bun does."""
    path = folder / "thatch.mjs"
    path.write_text(render(command, env), encoding="utf-8")
    return path


def fake_thatch(tmp_path: Path) -> Path:
    """The stand-in script, in a folder whose name needs escaping in JS."""
    folder = tmp_path / 'odd "dir" it\'s'
    folder.mkdir()
    script = folder / "fake thatch.py"
    script.write_text(FAKE_THATCH, encoding="utf-8")
    return script


#: Only a prompt: each hook waits for thatch up to the plugin's timeout.
PROMPT_DRIVER = """\
import { pathToFileURL } from "node:url";
const [pluginPath, directory] = process.argv.slice(2);
const mod = await import(pathToFileURL(pluginPath).href);
const hooks = await mod.ThatchPlugin({ directory });
const parts = [{ id: "prt_1", sessionID: "s", messageID: "m", type: "text", text: "hi" }];
await hooks["chat.message"]({ sessionID: "s" }, { message: { id: "m" }, parts });
console.log(JSON.stringify({ parts }));
"""


def drive(
    node: str, tmp_path: Path, plugin: Path, directory: Path, script: str = DRIVER
) -> dict[str, Any]:
    driver = tmp_path / "driver.mjs"
    driver.write_text(script, encoding="utf-8")
    done = subprocess.run(
        [node, str(driver), str(plugin), str(directory)],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def records(path: Path) -> list[dict[str, Any]]:
    if not path.exists():
        return []
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


@pytest.fixture
def directory(tmp_path: Path) -> Path:
    folder = tmp_path / "project dir"
    folder.mkdir()
    return folder


@pytest.fixture
def run_with_fake(
    node: str, tmp_path: Path, directory: Path
) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """The driver's results and the stand-in's records, for a plugin running the stand-in."""
    script = fake_thatch(tmp_path)
    record = tmp_path / "record.jsonl"
    env = {"FAKE_RECORD": str(record), "FAKE_ANSWERS": json.dumps(ANSWERS)}
    plugin = write_plugin(tmp_path, [sys.executable, str(script), AWKWARD], env)
    return drive(node, tmp_path, plugin, directory), records(record)


# -- rendering -------------------------------------------------------------------
def test_values_are_written_as_json_that_reads_back_exactly() -> None:
    command = ["/opt/my tools/thatch", AWKWARD]
    source = render(command, {"THATCH_HOME": "/srv/h\u00e9"})
    assert rendered_command(source) == command
    assert '"THATCH_HOME": "/srv/h\\u00e9"' in source
    assert source.isascii()
    assert "@@" not in render(["thatch"], {})  # every placeholder filled


def test_the_rendered_file_stays_small() -> None:
    source = render(["thatch"], {"THATCH_HOME": "/srv/thatch-home"})
    # Small enough to read in one screen before trusting it (it runs in the user's opencode).
    assert len(source.splitlines()) < 90
    assert all(len(line) <= 100 for line in source.splitlines())


def test_the_first_line_names_the_template() -> None:
    source = render(["thatch"], {})
    assert rendered_template_id(source) == template_id()
    assert rendered_template_id("// some other plugin\n") is None
    assert template_id() in source.splitlines()[0]


def test_the_template_has_one_export_opencode_can_call() -> None:
    # opencode calls every export of a plugin file and refuses one that is not a function.
    exports = [line for line in template().splitlines() if line.startswith("export ")]
    assert exports == ["export const ThatchPlugin = async ({ directory }) => {"]


def test_an_empty_command_is_refused() -> None:
    with pytest.raises(ValueError, match="command is empty"):
        render([], {})


def test_a_file_without_a_readable_command_has_none() -> None:
    assert rendered_command("const COMMAND = [1, 2];\n") is None
    assert rendered_command("const COMMAND = [oops];\n") is None
    assert rendered_command("nothing here\n") is None


def test_node_accepts_the_rendered_plugin(node: str, tmp_path: Path) -> None:
    plugin = write_plugin(tmp_path, ["/opt/my tools/thatch", AWKWARD], {"A": 'x"y'})
    done = subprocess.run(
        [node, "--check", str(plugin)], capture_output=True, text=True, check=False
    )
    assert done.returncode == 0, done.stderr


def test_node_check_does_reject_a_broken_module(node: str, tmp_path: Path) -> None:
    # Node 20 passes broken ESM in a .js file; the .mjs name above makes the check real.
    broken = tmp_path / "broken.mjs"
    broken.write_text(render(["thatch"], {}).replace("const ENV = ", "const ENV = = "))
    done = subprocess.run([node, "--check", str(broken)], capture_output=True, check=False)
    assert done.returncode != 0


# -- running in Node, against a stand-in thatch --------------------------------------
def test_each_event_runs_the_hook_command_with_its_payload(
    run_with_fake: tuple[dict[str, Any], list[dict[str, Any]]], directory: Path
) -> None:
    _, calls = run_with_fake
    assert [call["argv"] for call in calls] == [
        [AWKWARD, "hook", "opencode", event]
        for event in (
            "session.created",
            "session.created",
            "chat.message",
            "tool.execute.after",
            "experimental.session.compacting",
            "session.compacted",
        )
    ]
    assert {call["cwd"] for call in calls} == {str(directory)}
    assert all(call["payload"]["cwd"] == str(directory) for call in calls)


def test_the_payloads_parse_into_the_right_events(
    run_with_fake: tuple[dict[str, Any], list[dict[str, Any]]], directory: Path
) -> None:
    _, calls = run_with_fake
    events = [parse_event(call["argv"][-1], call["payload"]) for call in calls]
    assert [(event.kind, event.session_id, event.source) for event in events] == [
        ("session_start", "ses_a", "startup"),
        ("session_start", "ses_child", "subagent"),
        ("prompt", "ses_a", None),
        ("tool_use", "ses_a", None),
        ("compact", "ses_a", None),
        ("session_start", "ses_a", "compact"),
    ]
    prompt, tool = events[2], events[3]
    assert prompt.prompt == "How do we deploy?"
    assert prompt.identity == "prompt:ses_a:msg_1"
    (call,) = tool.tool_calls
    assert (call.name, call.input, call.call_id) == ("bash", {"command": "ls"}, "call_1")
    assert call.response == "x" * 20000  # cut to 20,000 characters


def test_the_nudge_becomes_a_synthetic_text_part_before_any_await(
    run_with_fake: tuple[dict[str, Any], list[dict[str, Any]]],
) -> None:
    out, _ = run_with_fake
    assert out["partsBeforeAwait"] == 4
    added = out["parts"][-1]
    part_id = added.pop("id")
    assert added == {
        "sessionID": "ses_a",
        "messageID": "msg_1",
        "type": "text",
        "text": ANSWERS["chat.message"],
        "synthetic": True,
    }
    # opencode's part ids: "prt_", 12 hex digits of time, 14 more characters; a
    # message's parts are read back in id order, so the nudge follows the user's text.
    assert part_id.startswith("prt_")
    assert len(part_id) == 30
    int(part_id[4:16], 16)
    assert part_id > out["opencodeID"]


def test_the_briefing_joins_the_system_prompt_of_its_session_only(
    run_with_fake: tuple[dict[str, Any], list[dict[str, Any]]],
) -> None:
    out, _ = run_with_fake
    assert out["systemAfterStart"] == ["opencode's own prompt", ANSWERS["session.created"]]
    assert out["systemOfAnotherSession"] == ["opencode's own prompt"]
    assert out["systemAfterCompaction"] == [
        "opencode's own prompt",
        ANSWERS["session.compacted"],
    ]


def test_compaction_context_gets_the_briefing_then_the_answer(
    run_with_fake: tuple[dict[str, Any], list[dict[str, Any]]],
) -> None:
    out, _ = run_with_fake
    assert out["context"] == [
        ANSWERS["session.created"],
        ANSWERS["experimental.session.compacting"],
    ]
    assert out["exports"] == {"ThatchPlugin": "function"}
    assert out["survived"] is True


@pytest.mark.parametrize(
    "command",
    [
        [sys.executable, "-c", "import sys; print('[thatch] not shown'); sys.exit(3)"],
        ["/nonexistent/folder/thatch"],
    ],
    ids=["failing", "missing"],
)
def test_a_broken_thatch_changes_nothing(
    node: str, tmp_path: Path, directory: Path, command: list[str]
) -> None:
    out = drive(node, tmp_path, write_plugin(tmp_path, command, {}), directory)
    assert out["partsBeforeAwait"] == 3
    assert out["systemAfterStart"] == ["opencode's own prompt"]
    assert out["context"] == []
    assert out["survived"] is True


@pytest.mark.slow
def test_a_thatch_that_hangs_is_given_up_on(node: str, tmp_path: Path, directory: Path) -> None:
    command = [sys.executable, "-c", "import time; time.sleep(30); print('[thatch] late')"]
    plugin = write_plugin(tmp_path, command, {})
    out = drive(node, tmp_path, plugin, directory, PROMPT_DRIVER)
    assert [part["text"] for part in out["parts"]] == ["hi"]
