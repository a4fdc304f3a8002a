// A minimal ACP tool-call reducer in TypeScript: the adapter a client author writes to run the
// conformance suite (`acp-toolcalls conformance`) against a client's own fold.
//
// Contract: read JSON Lines on stdin (one JSON-RPC message, or a batch, per line) until EOF,
// fold the tool calls and terminals of every session, and write the folded state as ONE JSON
// document on stdout, exit status 0: the document `acp-toolcalls replay --json` prints,
//
//   {"sessions": {"<sessionId>": {"toolCalls": [<ToolCallUpdate>, ...],
//                                 "terminals": [<terminal_update without sessionUpdate>, ...]}}}
//
// each tool call as one v2 `tool_call_update` holding every field ever set (a cleared one as
// `null`), calls and terminals in first-seen order, sessions in the order they were created.
// Each rule below cites docs/decisions.md (Dn, and the rows of D46, the protocol's own rules).
//
// Run it (Node 20; TypeScript from tests/interop/node, `npm ci --prefix tests/interop/node`):
//
//   tests/interop/node/node_modules/.bin/tsc -p tests/conformance/reducers --outDir /tmp/reducers
//   acp-toolcalls conformance --reducer 'node /tmp/reducers/reducer.js'
//   node /tmp/reducers/reducer.js < examples/session-v2.jsonl   # one document, as replay --json
//
// The protocol version comes from the stream: an `initialize` request's `protocolVersion`, the
// response's winning over it (1 or less: v1, more: v2); v2 when no `initialize` says.
// A client's own overlays (what it concludes after `session/cancel`, D15) are never part of the
// document, so `session/cancel`, `tool_call/cancel` and `state_update` change nothing here.
//
// Not done here, as no case of the suite needs it: memory caps (`replay --json` has none), and
// checking every nested value (an invalid value inside a content block is kept as it came; only
// the fields of calls, terminals, locations and exit statuses are checked).
//
// Files: this one is the fold; `fields.ts` reads each field of a v2 call or terminal; a v1
// stream also needs `v1.ts` (its calls as v2 patches), `gitpatch.ts` (v1 diffs) and
// `v1terminals.ts` (its `_meta` terminal extension); `json.ts` and `node.d.ts` are plumbing.
// `broken.ts` switches on one known client bug at a time by overriding one method of `Reducer`.

import { TERMINAL_FIELDS, TOOL_CALL_FIELDS, anyValue, base64Bytes, contentItem } from "./fields";
import { type Json, type JsonObject, isObject } from "./json";
import { v1Patch } from "./v1";
import { V1TerminalReader, usesExtension } from "./v1terminals";

/** A call or a terminal: its state in the exported shape (the id and every field set). */
export type Held = JsonObject;

export interface Session {
  toolCalls: Map<string, Held>;
  terminals: Map<string, Held>;
  /** A v1 stream's `_meta` terminal extension, once the session used it (D38 amended). */
  v1Terminals?: V1TerminalReader;
}

/** A status is final only if it is one of these; any other (unknown ones too) is running (D14). */
export const FINAL_STATUSES: ReadonlySet<string> = new Set(["completed", "failed", "cancelled"]);

/** Fields whose `[]` is stored as received, a clear (D2). */
export const COLLECTIONS: ReadonlySet<string> = new Set(["content", "locations"]);

/** The folded state of a stream, one message at a time. */
export class Reducer {
  readonly sessions = new Map<string, Session>();
  version: 1 | 2 | undefined;
  private readonly initializeIds = new Set<string>();

  /** Apply one JSON-RPC message, or a batch element by element, in array order (D16). */
  apply(message: Json): void {
    if (Array.isArray(message)) {
      for (const element of message) this.apply(element);
      return;
    }
    if (!isObject(message)) return;
    const method = message.method;
    const params = isObject(message.params) ? message.params : undefined;
    if (method === "initialize") {
      this.initializeIds.add(JSON.stringify(message.id ?? null));
      if (this.version === undefined) this.negotiate(params?.protocolVersion);
    } else if (method === undefined && this.initializeIds.has(JSON.stringify(message.id ?? null))) {
      const result = isObject(message.result) ? message.result : undefined;
      this.negotiate(result?.protocolVersion); // the response wins
    } else if (method === "session/update" && params !== undefined) {
      this.sessionUpdate(params);
    } else if (method === "session/request_permission" && params !== undefined) {
      this.permissionRequest(params);
    }
  }

  private negotiate(version: Json | undefined): void {
    if (typeof version === "number" && Number.isInteger(version)) {
      this.version = version <= 1 ? 1 : 2;
    }
  }

  /** The document `replay --json` prints. */
  document(): JsonObject {
    const sessions: JsonObject = {};
    for (const [id, session] of this.sessions) {
      sessions[id] = {
        toolCalls: [...session.toolCalls.values()].map((call) => this.exportCall(call)),
        terminals: [...session.terminals.values()],
      };
    }
    return { sessions };
  }

  /** A call as the document shows it: its state as held. */
  protected exportCall(call: Held): Json {
    return call;
  }

  protected session(id: string): Session {
    let session = this.sessions.get(id);
    if (session === undefined) {
      session = { toolCalls: new Map(), terminals: new Map() };
      this.sessions.set(id, session);
    }
    return session;
  }

  private sessionUpdate(params: JsonObject): void {
    const sessionId = params.sessionId;
    const update = params.update;
    if (typeof sessionId !== "string" || !isObject(update)) return;
    const tag = update.sessionUpdate;
    if (this.version === 1) {
      if (tag === "tool_call" || tag === "tool_call_update") {
        this.v1ToolCall(sessionId, update, tag === "tool_call");
      }
      return;
    }
    // v2. Any other update (a v1-only `tool_call` too, D17) changes no tool-call state.
    if (tag === "tool_call_update" && typeof update.toolCallId === "string") {
      const { sessionUpdate: _tag, ...patch } = update;
      this.toolCallUpdate(this.session(sessionId), patch);
    } else if (tag === "tool_call_content_chunk" && typeof update.toolCallId === "string") {
      const item = contentItem(update.content ?? null); // an invalid item drops the chunk
      if (item !== undefined) {
        // The first reference to an id creates the call (D1); the chunk's `_meta` is its own.
        this.appendChunk(this.call(this.session(sessionId), update.toolCallId), item);
      }
    } else if (tag === "terminal_update" && typeof update.terminalId === "string") {
      const { sessionUpdate: _tag, ...patch } = update;
      this.terminalUpdate(this.session(sessionId), patch);
    } else if (tag === "terminal_output_chunk" && typeof update.terminalId === "string") {
      if (typeof update.data === "string") {
        this.terminalOutput(this.session(sessionId), update.terminalId, update.data);
      }
    }
  }

  /** A permission request's `tool_call` subject is applied like an update when the request is
   * read; its `title` and `description` never touch the call (D18). */
  private permissionRequest(params: JsonObject): void {
    const sessionId = params.sessionId;
    if (typeof sessionId !== "string") return;
    if (this.version === 1) {
      // The v1 `toolCall` patches the displayed call as a v1 `tool_call_update` (D33).
      if (isObject(params.toolCall) && typeof params.toolCall.toolCallId === "string") {
        this.v1ToolCall(sessionId, params.toolCall, false);
      }
      return;
    }
    const subject = params.subject;
    if (!isObject(subject) || subject.type !== "tool_call") return; // other subjects: no state
    const call = subject.toolCall;
    if (!isObject(call) || typeof call.toolCallId !== "string") return;
    const { sessionUpdate: _ignored, ...patch } = call; // the update's tag, not a field
    this.toolCallUpdate(this.session(sessionId), patch);
  }

  /** The call, created with protocol defaults on first sight: no title, kind `other`, status
   * `pending`, no content, all left unset (D1, D46 (upsert)). */
  protected call(session: Session, id: string): Held {
    let call = session.toolCalls.get(id);
    if (call === undefined) {
      call = { toolCallId: id };
      session.toolCalls.set(id, call);
    }
    return call;
  }

  /** A v2 patch (D46 (patch semantics)): omitted leaves a field, `null` clears it, a value
   * replaces it; `_meta` patches by key. */
  protected toolCallUpdate(session: Session, patch: JsonObject): void {
    const call = this.call(session, patch.toolCallId as string);
    for (const [key, value] of Object.entries(patch)) {
      if (key === "toolCallId") continue;
      if (key === "_meta") {
        this.patchMeta(call, value);
        continue;
      }
      const reading = TOOL_CALL_FIELDS[key] ?? anyValue; // unknown keys: kept (D19)
      const read = value === null ? null : reading(value);
      if (read !== undefined) this.setField(call, key, read);
    }
  }

  /** One field of a patch: `null` clears (stored as `null`), a value replaces; `[]` is stored
   * as received (D2). A replacement `content` replaces everything, chunks included. */
  protected setField(held: Held, key: string, value: Json): void {
    held[key] = value;
  }

  /** `_meta` patches by top-level key: a key set to `null` is removed, `_meta: null` clears
   * the whole map, no nested merge; on a new map the object applies to `{}` (D13). */
  protected patchMeta(held: Held, incoming: Json): void {
    if (incoming === null) {
      held._meta = null;
      return;
    }
    if (!isObject(incoming)) return; // invalid: no change (D11)
    const base: JsonObject = isObject(held._meta) ? { ...held._meta } : {};
    for (const [key, value] of Object.entries(incoming)) {
      if (value === null) delete base[key];
      else base[key] = value;
    }
    held._meta = base;
  }

  /** A chunk appends exactly one item; on absent or `null` content it starts a new list
   * (D46 (content chunks), D2). */
  protected appendChunk(call: Held, item: Json): void {
    const content = call.content;
    if (Array.isArray(content)) content.push(item);
    else call.content = [item];
  }

  protected terminal(session: Session, id: string): Held {
    let terminal = session.terminals.get(id);
    if (terminal === undefined) {
      terminal = { terminalId: id };
      session.terminals.set(id, terminal);
    }
    return terminal;
  }

  /** A `terminal_update` is a patch; an `output` replaces every byte (D46 (terminals)). */
  protected terminalUpdate(session: Session, update: JsonObject): void {
    const terminal = this.terminal(session, update.terminalId as string);
    for (const [key, value] of Object.entries(update)) {
      if (key === "terminalId") continue;
      if (key === "_meta") {
        this.patchMeta(terminal, value);
        continue;
      }
      const reading = TERMINAL_FIELDS[key] ?? anyValue; // unknown keys: kept (D19)
      const read = value === null ? null : reading(value);
      if (read !== undefined) this.setField(terminal, key, read);
    }
  }

  /** Each `terminal_output_chunk` is decoded on its own and appended; invalid base64 drops the
   * chunk, and the terminal exists all the same (D22). */
  private terminalOutput(session: Session, id: string, data: string): void {
    const bytes = base64Bytes(data);
    if (bytes === undefined) this.terminal(session, id);
    else this.appendOutput(session, id, bytes);
  }

  private appendOutput(session: Session, id: string, bytes: Uint8Array): void {
    const terminal = this.terminal(session, id);
    const before = isObject(terminal.output) ? base64Bytes(terminal.output.data) : undefined;
    const all = before === undefined ? bytes : Buffer.concat([before, bytes]);
    // The snapshot's `_meta` and unknown keys stay with the output; a chunk adds bytes only.
    const kept = isObject(terminal.output) ? terminal.output : {};
    terminal.output = { ...kept, data: Buffer.from(all).toString("base64") };
  }

  /** A v1 `tool_call` or `tool_call_update`, read as the v2 patch it maps to (D46 (v1 store)):
   * a v1 `null` means unchanged (D8); a repeated `tool_call` merges, its default values read
   * as omitted (D9); `title` is required on a `tool_call`. */
  private v1ToolCall(sessionId: string, received: JsonObject, create: boolean): void {
    const id = received.toolCallId;
    if (typeof id !== "string") return;
    if (create && typeof received.title !== "string") return; // an invalid item
    const session = this.session(sessionId);
    // The `_meta` terminal extension first: its terminal changes, then the call without it.
    if (session.v1Terminals === undefined && usesExtension(received)) {
      session.v1Terminals = new V1TerminalReader();
    }
    const reader = session.v1Terminals;
    let update = received;
    if (reader !== undefined) {
      const read = reader.read(received);
      for (const change of read.changes) {
        if ("patch" in change) {
          this.terminalUpdate(session, { terminalId: change.terminalId, ...change.patch });
        } else {
          this.appendOutput(session, change.terminalId, change.append);
        }
      }
      update = read.update;
    }
    const repeated = create && session.toolCalls.has(id);
    this.toolCallUpdate(session, v1Patch(update, repeated, reader));
  }
}

/** Read every line of stdin, fold it with `reducer`, write the document. */
export function main(reducer: Reducer): void {
  let input = "";
  process.stdin.setEncoding("utf8");
  process.stdin.on("data", (chunk) => {
    input += chunk;
  });
  process.stdin.on("end", () => {
    for (const [index, line] of input.split("\n").entries()) {
      if (line.trim() === "") continue;
      let message: Json;
      try {
        message = JSON.parse(line) as Json;
      } catch {
        process.stderr.write(`line ${index + 1}: not JSON: skipped\n`);
        continue;
      }
      reducer.apply(message);
    }
    process.stdout.write(JSON.stringify(reducer.document()) + "\n");
  });
}

if (require.main === module) main(new Reducer());
