// thatch for opencode (template 2bb8d8500f4a), written by `thatch setup --opencode`,
// which rewrites it; `thatch setup --opencode --uninstall` removes it. Each event
// runs `thatch hook opencode EVENT` with a JSON payload on stdin and puts what
// thatch prints where the model reads it. Every failure is ignored.
import { spawnSync } from "node:child_process";

const COMMAND = ["thatch"];
const ENV = {"THATCH_HOME": "/srv/thatch-home"};
// Above the hook's cold-start allowance (6 s): a first prompt may wait for the daemon to load.
const TIMEOUT_MS = 8000;
const MAX_OUTPUT = 20000;

function thatch(event, cwd, payload) {
  try {
    const run = spawnSync(COMMAND[0], [...COMMAND.slice(1), "hook", "opencode", event], {
      cwd, input: JSON.stringify(payload), encoding: "utf8", timeout: TIMEOUT_MS,
      env: { ...process.env, ...ENV }, stdio: ["pipe", "pipe", "ignore"],
    });
    return run.status === 0 && typeof run.stdout === "string" ? run.stdout.trim() : "";
  } catch {
    return "";
  }
}

// Like opencode's own part ids: "prt_", the low 48 bits of time * 4096 in hex
// (so the part sorts after the user's text), then random characters.
function partID() {
  const time = ((BigInt(Date.now()) * 4096n + 4095n) & 0xffffffffffffn).toString(16)
    .padStart(12, "0");
  return "prt_" + time + Math.random().toString(36).slice(2, 16).padEnd(14, "0");
}

// Hooks never throw into opencode.
const safe = (hook) => async (...args) => { try { await hook(...args); } catch {} };

export const ThatchPlugin = async ({ directory }) => {
  // Session-start text per session: in every turn's system prompt and the compaction summary.
  const briefings = new Map();
  const send = (event, sessionID, fields) =>
    thatch(event, directory, { session_id: sessionID, cwd: directory, ...fields });
  const brief = (event, sessionID, fields) => {
    const text = send(event, sessionID, fields);
    if (text) briefings.set(sessionID, text);
  };
  return {
    event: safe(async ({ event }) => {
      const props = event.properties || {};
      if (event.type === "session.created" && props.info) {
        brief(event.type, props.info.id, { parent_id: props.info.parentID || null });
      } else if (event.type === "session.compacted") {
        brief(event.type, props.sessionID, {});
      }
    }),
    // No await before the push: the part must be there when opencode saves the message.
    "chat.message": safe(async (input, output) => {
      const parts = output.parts.filter((part) => part.type === "text")
        .map((part) => ({ text: part.text, synthetic: Boolean(part.synthetic) }));
      const messageID = output.message.id;
      const text = send("chat.message", input.sessionID, { message_id: messageID, parts });
      if (text) {
        output.parts.push({ id: partID(), sessionID: input.sessionID, messageID, type: "text",
          text, synthetic: true });
      }
    }),
    "tool.execute.after": safe(async (input, output) => {
      const text = typeof output.output === "string" ? output.output : "";
      const extra = send("tool.execute.after", input.sessionID, { tool: input.tool,
        call_id: input.callID, args: input.args ?? null, title: output.title ?? null,
        output: text.slice(0, MAX_OUTPUT) });
      // thatch's answer (the receptor's one item, when the agent is stuck) joins the output.
      if (extra && text === output.output) output.output = text + "\n\n" + extra;
    }),
    "experimental.session.compacting": safe(async (input, output) => {
      const text = send("experimental.session.compacting", input.sessionID, {});
      output.context.push(...[briefings.get(input.sessionID), text].filter(Boolean));
    }),
    "experimental.chat.system.transform": safe(async (input, output) => {
      const text = input.sessionID && briefings.get(input.sessionID);
      if (text) output.system.push(text);
    }),
  };
};
