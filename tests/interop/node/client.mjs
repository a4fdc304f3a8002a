#!/usr/bin/env node
// A real ACP client on the official TypeScript SDK (@agentclientprotocol/sdk, pinned in
// package.json), run against any agent command over stdio, in either protocol version:
// `--protocol 1` loads the SDK's stable (v1) entry point, which parses every message with its
// zod schemas; `--protocol 2` its experimental v2 entry point.
//
//   node client.mjs --protocol 1|2 --cwd DIR --prompt TEXT [--mode approve|reject|cancel]
//                   [--terminal-output] [--timeout SECONDS] -- AGENT_COMMAND [ARG...]
//
// It spawns AGENT_COMMAND (stdin/stdout piped, stderr inherited), sends `initialize`,
// `session/new` with the absolute `--cwd`, and one `session/prompt` with `--prompt`.
// `initialize` is, for v1: protocolVersion 1, `clientInfo`, `clientCapabilities` with no file
// system and no terminal (with `--terminal-output` also `_meta: {"terminal_output": true}`, the
// extension through which v1 agents stream their own terminals, as Zed offers it; v1 only);
// for v2: protocolVersion 2 and a client `info`. Every `session/update` is handed to the client
// callback; every `session/request_permission` is answered per `--mode`:
//   approve  select the first option whose kind is allow_once or allow_always
//   reject   select the first option whose kind is reject_once or reject_always
//   cancel   send `session/cancel` for the session, then answer `{"outcome": "cancelled"}`
// (an offer without a matching option is answered `cancelled` and noted in "errors").
// The turn ends, for v1, with the `session/prompt` response (it carries the stopReason); for
// v2, at the first idle `state_update` handled after the prompt was sent, once the
// `session/prompt` response (v2: only an acknowledgement) has arrived too. Then it gives the
// agent's pending requests up to 1 s to be answered (closing the SDK connection drops queued
// responses), closes the agent's stdin and waits for the agent to exit (exit code 0 expected).
//
// stdout: ONE JSON document, the same keys for both versions,
//   {"initialize", "sessionId", "newSession", "promptResult", "stopReason", "agentExit",
//    "wire", "updates", "permissionRequests", "errors"}
// - initialize, newSession, promptResult: the results as the SDK returned them (parsed);
// - wire: every line exchanged with the agent in the order this process saw it, tapped at
//   the line level before the SDK parses it (incoming) and after it serialized it (outgoing):
//   {"direction": "incoming"|"outgoing", "message": <the line's JSON>}, or
//   {"direction", "line": <text>} for a line that is not JSON;
// - updates: the `session/update` params the SDK handed to the callback, as it parsed them;
// - permissionRequests: the `session/request_permission` params handed to the callback;
// - errors: what went wrong without ending the run: the SDK's console.error reports (e.g. a
//   notification whose params it could not parse, which it drops), lines that are not JSON,
//   permission requests without a matching option, agent requests still unanswered.
// Exit 0. On any failure (bad arguments, spawn error, a rejected request, the agent exiting
// early or non-zero, `--timeout` (default 30 s) running out) it prints a document with
// "error" (and "phase" plus everything recorded so far) and exits 1.
import { spawn } from "node:child_process";
import { isAbsolute } from "node:path";
import { Readable, Writable } from "node:stream";
import { parseArgs } from "node:util";

// The SDK entry point per --protocol, loaded once the arguments are read.
const SDK_ENTRY_POINTS = {
  1: "@agentclientprotocol/sdk",
  2: "@agentclientprotocol/sdk/experimental/v2",
};
let acp;

const USAGE =
  "usage: node client.mjs --protocol 1|2 --cwd DIR --prompt TEXT " +
  "[--mode approve|reject|cancel] [--terminal-output] [--timeout SECONDS] " +
  "-- AGENT_COMMAND [ARG...]";
const clientName = (protocol) => `acp-toolcalls-ts-v${protocol}-client`;
const ANSWER_GRACE_MS = 1000;
const CHOICES = {
  approve: ["allow_once", "allow_always"],
  reject: ["reject_once", "reject_always"],
};

const record = {
  initialize: null,
  sessionId: null,
  newSession: null,
  promptResult: null,
  stopReason: null,
  agentExit: null,
  wire: [],
  updates: [],
  permissionRequests: [],
  errors: [],
};
let phase = "starting";
let child;
let spawned = false;
let deadline;
let finished = false;

function errorText(error) {
  if (acp !== undefined && error instanceof acp.RequestError) {
    const data = error.data === undefined ? "" : ` ${JSON.stringify(error.data)}`;
    return `RequestError ${error.code}: ${error.message}${data}`;
  }
  if (error?.name === "ZodError" && Array.isArray(error.issues)) {
    // A response the SDK could not parse (it validates results with zod).
    const issues = error.issues.map((i) => `${(i.path ?? []).join(".") || "(root)"}: ${i.message}`);
    return `ZodError: ${issues.join("; ")}`;
  }
  return error instanceof Error ? `${error.name}: ${error.message}` : String(error);
}

function agentRunning() {
  return child !== undefined && child.exitCode === null && child.signalCode === null;
}

function finish(code, document) {
  if (finished) return;
  finished = true;
  clearTimeout(deadline);
  if (code !== 0) {
    process.stderr.write(`client.mjs: ${document.error}\n`);
    if (agentRunning()) {
      // The agent leads its own process group: take its subprocesses down with it.
      try {
        process.kill(-child.pid, "SIGKILL");
      } catch {
        child.kill("SIGKILL");
      }
    }
  }
  process.stdout.write(`${JSON.stringify(document)}\n`, () => process.exit(code));
}

let failing = false;

// Fails the run. An agent that quit shows up first as a broken pipe or a closed connection:
// give its exit a moment to arrive, so the error can say how it ended.
function fail(error) {
  if (failing || finished) return;
  failing = true;
  let text = errorText(error);
  const report = () => {
    if (spawned && !agentRunning() && !text.includes("the agent exited")) {
      const how = child.signalCode ? `signal ${child.signalCode}` : `code ${child.exitCode}`;
      text += ` (the agent had exited with ${how})`;
    }
    finish(1, { error: text, phase, ...record });
  };
  if (spawned && agentRunning()) {
    const timer = setTimeout(report, 250);
    child.once("exit", () => {
      clearTimeout(timer);
      report();
    });
  } else {
    report();
  }
}

// The SDK reports what it drops (unparseable notifications, stray responses) on
// console.error; keep showing it, and keep it in the record.
const consoleError = console.error.bind(console);
console.error = (...args) => {
  record.errors.push({ source: "console.error", phase, args: args.map(plain) });
  consoleError(...args);
};

function plain(value) {
  if (value instanceof Error) return errorText(value);
  try {
    return JSON.parse(JSON.stringify(value) ?? "null");
  } catch {
    return String(value);
  }
}

// --- arguments -------------------------------------------------------------------------------

function parseArguments(argv) {
  const separator = argv.indexOf("--");
  if (separator === -1 || separator === argv.length - 1) {
    throw new Error(`the agent command goes after \`--\`\n${USAGE}`);
  }
  const { values } = parseArgs({
    args: argv.slice(0, separator),
    options: {
      protocol: { type: "string" },
      cwd: { type: "string" },
      prompt: { type: "string" },
      mode: { type: "string", default: "approve" },
      "terminal-output": { type: "boolean", default: false },
      timeout: { type: "string", default: "30" },
    },
    strict: true,
    allowPositionals: false,
  });
  if (values.protocol !== "1" && values.protocol !== "2") {
    throw new Error(`--protocol must be 1 or 2, not ${values.protocol}\n${USAGE}`);
  }
  const protocol = Number(values.protocol);
  if (values["terminal-output"] && protocol !== 1) {
    throw new Error(`--terminal-output is a v1 client capability (--protocol 1)\n${USAGE}`);
  }
  if (!values.cwd || !isAbsolute(values.cwd)) {
    throw new Error(`--cwd must be an absolute directory\n${USAGE}`);
  }
  if (values.prompt === undefined) throw new Error(`--prompt is required\n${USAGE}`);
  if (!["approve", "reject", "cancel"].includes(values.mode)) {
    throw new Error(`--mode must be approve, reject or cancel, not ${values.mode}\n${USAGE}`);
  }
  const timeout = Number(values.timeout);
  if (!(timeout > 0)) throw new Error(`--timeout must be a positive number of seconds\n${USAGE}`);
  return {
    ...values,
    protocol,
    timeout,
    terminalOutput: values["terminal-output"],
    command: argv.slice(separator + 1),
  };
}

// --- the line-level tap ----------------------------------------------------------------------

// The agent's requests not answered yet, by JSON-encoded id: the SDK answers some itself
// (e.g. -32602 for params it cannot parse), so this is read off the wire.
const unanswered = new Map();
let onAnswered = () => {};

function trackRequests(direction, message) {
  if (message === null || typeof message !== "object" || !("id" in message)) return;
  const key = JSON.stringify(message.id);
  if (direction === "incoming" && "method" in message) {
    unanswered.set(key, message.method);
  } else if (direction === "outgoing" && !("method" in message) && unanswered.delete(key)) {
    if (unanswered.size === 0) onAnswered();
  }
}

// Resolves once every request the agent sent has been answered, or after `ms`.
function allAnswered(ms) {
  if (unanswered.size === 0) return Promise.resolve(true);
  return new Promise((resolve) => {
    const timer = setTimeout(() => resolve(false), ms);
    onAnswered = () => {
      clearTimeout(timer);
      resolve(true);
    };
  });
}

// Splits bytes into lines the way the SDK does (LF, CRLF) and records each complete one.
function lineRecorder(direction) {
  const decoder = new TextDecoder();
  let pending = "";
  const note = (text) => {
    const line = text.endsWith("\r") ? text.slice(0, -1) : text;
    if (!line.trim()) return;
    try {
      const message = JSON.parse(line);
      record.wire.push({ direction, message });
      trackRequests(direction, message);
    } catch {
      record.wire.push({ direction, line });
      record.errors.push({ source: "wire", phase, direction, error: "a line is not JSON", line });
    }
  };
  return {
    push(chunk) {
      const lines = (pending + decoder.decode(chunk, { stream: true })).split("\n");
      pending = lines.pop();
      for (const line of lines) note(line);
    },
    flush() {
      const rest = pending + decoder.decode();
      pending = "";
      if (rest) note(rest);
    },
  };
}

function tappedStream(agent) {
  const incoming = lineRecorder("incoming");
  const input = Readable.toWeb(agent.stdout).pipeThrough(
    new TransformStream({
      transform(chunk, controller) {
        incoming.push(chunk);
        controller.enqueue(chunk);
      },
      flush() {
        incoming.flush();
      },
    }),
  );
  const outgoing = lineRecorder("outgoing");
  const stdin = Writable.toWeb(agent.stdin).getWriter();
  const output = new WritableStream({
    async write(chunk) {
      outgoing.push(chunk);
      await stdin.write(chunk);
    },
  });
  const closeStdin = async () => {
    outgoing.flush();
    await stdin.close();
  };
  return { stream: acp.ndJsonStream(output, input), closeStdin };
}

// --- the client ------------------------------------------------------------------------------

function waitForExit(agent) {
  return new Promise((resolve) => {
    if (agent.exitCode !== null || agent.signalCode !== null) {
      resolve({ code: agent.exitCode, signal: agent.signalCode });
    } else {
      agent.once("exit", (code, signal) => resolve({ code, signal }));
    }
  });
}

function initializeParams(options) {
  const clientInfo = { name: clientName(options.protocol), version: "0.1.0" };
  if (options.protocol === 2) return { protocolVersion: 2, info: clientInfo };
  const clientCapabilities = { fs: { readTextFile: false, writeTextFile: false }, terminal: false };
  if (options.terminalOutput) clientCapabilities._meta = { terminal_output: true };
  return { protocolVersion: 1, clientCapabilities, clientInfo };
}

async function main(options) {
  phase = "loading the SDK";
  acp = await import(SDK_ENTRY_POINTS[options.protocol]);

  phase = "spawning the agent";
  const [file, ...args] = options.command;
  child = spawn(file, args, { stdio: ["pipe", "pipe", "inherit"], detached: true });
  await new Promise((resolve, reject) => {
    child.once("spawn", resolve);
    child.once("error", reject);
  });
  spawned = true;
  child.on("error", fail);
  const exited = waitForExit(child);
  let closing = false;
  void exited.then((status) => {
    if (!closing) {
      const how = status.signal ? `signal ${status.signal}` : `code ${status.code}`;
      fail(new Error(`the agent exited (${how}) while ${phase}`));
    }
  });

  const { stream, closeStdin } = tappedStream(child);
  // v2 only: the idle state_update that ends the turn.
  let promptSent = false;
  let resolveIdle;
  const idle = new Promise((resolve) => (resolveIdle = resolve));

  const app = acp
    .client({ name: clientName(options.protocol) })
    .onNotification(acp.methods.client.session.update, ({ params }) => {
      record.updates.push(params);
      const { update } = params;
      if (
        options.protocol === 2 &&
        promptSent &&
        params.sessionId === record.sessionId &&
        update.sessionUpdate === "state_update" &&
        update.state === "idle"
      ) {
        resolveIdle(update.stopReason ?? null);
      }
    })
    .onRequest(acp.methods.client.session.requestPermission, async ({ params, agent }) => {
      record.permissionRequests.push(params);
      if (options.mode === "cancel") {
        await agent.notify(acp.methods.agent.session.cancel, { sessionId: params.sessionId });
        return { outcome: { outcome: "cancelled" } };
      }
      const kinds = CHOICES[options.mode];
      const option = (params.options ?? []).find((o) => kinds.includes(o.kind));
      if (option === undefined) {
        record.errors.push({
          source: "client",
          phase,
          error: `no ${kinds.join("/")} option offered: answered cancelled`,
        });
        return { outcome: { outcome: "cancelled" } };
      }
      return { outcome: { outcome: "selected", optionId: option.optionId } };
    });

  await app.connectWith(stream, async (ctx) => {
    phase = "initialize";
    record.initialize = await ctx.request(acp.methods.agent.initialize, initializeParams(options));
    phase = "session/new";
    await ctx.buildSession(options.cwd).withSession(async (session) => {
      record.sessionId = session.sessionId;
      record.newSession = session.newSessionResponse;
      phase = "session/prompt";
      promptSent = true;
      record.promptResult = await session.prompt(options.prompt);
      if (options.protocol === 1) {
        record.stopReason = record.promptResult?.stopReason ?? null;
      } else {
        phase = "waiting for an idle state_update";
        record.stopReason = await idle;
      }
      // Closing the connection drops responses still queued: let them go out first.
      phase = "answering the agent's pending requests";
      if (!(await allAnswered(ANSWER_GRACE_MS))) {
        const pending = [...unanswered].map(([id, method]) => ({ id: JSON.parse(id), method }));
        record.errors.push({ source: "client", phase, error: "unanswered at the turn's end", pending });
      }
    });
  });

  phase = "waiting for the agent to exit after its stdin was closed";
  closing = true;
  await closeStdin();
  record.agentExit = await exited;
  if (record.agentExit.code !== 0) {
    const { code, signal } = record.agentExit;
    throw new Error(`the agent exited with ${signal ? `signal ${signal}` : `code ${code}`}`);
  }
  finish(0, record);
}

try {
  const options = parseArguments(process.argv.slice(2));
  deadline = setTimeout(() => {
    fail(new Error(`timed out after ${options.timeout} s while ${phase}`));
  }, options.timeout * 1000);
  main(options).catch(fail);
} catch (error) {
  finish(1, { error: errorText(error), phase: "arguments" });
}
