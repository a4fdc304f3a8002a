// The `_meta` terminal extension of v1 agents, read as v2 display terminals (D38 amended): only
// a v1 stream needs it.
//
// On a v1 `tool_call` or `tool_call_update` (or a permission's `toolCall`),
// `_meta.terminal_info {terminal_id, cwd?}` announces a terminal, `terminal_output_delta
// {terminal_id, data}` appends text, `terminal_output {terminal_id, data}` gives the whole
// output so far, `terminal_exit {terminal_id, exit_code, signal}` ends it. Each becomes v2
// terminal state, in that order, before the call is applied: a terminal first seen is created
// (with its `cwd`); output bytes are the UTF-8 of `data`; a `null` exit code or signal is
// unknown (omitted). A `terminal_output` that begins with every byte the terminal holds adds
// only the bytes after them; one that does not replaces them after a resend was seen, and is
// otherwise new output, appended from then on. The four keys are consumed (`_meta` goes on
// without them, or not at all when nothing else is in it); a value not of the extension's shape
// stays in `_meta`. A v1 `terminal` item naming a terminal the extension announced is a v2
// `terminal` item; any other is the client-owned terminal v2 has no form for (dropped).

import { type Json, type JsonObject, isObject } from "./json";

/** What the call's terminals become in v2, in order: a `terminal_update` patch, or bytes. */
export type TerminalChange =
  | { terminalId: string; patch: JsonObject }
  | { terminalId: string; append: Uint8Array };

interface Known {
  held: Uint8Array;
  mode: "unknown" | "resent" | "appended";
  cwd: string | undefined;
}

const ORDER = ["terminal_info", "terminal_output", "terminal_output_delta", "terminal_exit"];

function isInt64(value: Json | undefined): boolean {
  return typeof value === "number" && Number.isInteger(value) && Math.abs(value) <= 2 ** 63;
}

/** Whether `value` has the shape the extension gives `key`. */
function valid(key: string, value: Json): value is JsonObject {
  if (!isObject(value) || typeof value.terminal_id !== "string") return false;
  const absentOr = (inner: Json | undefined, test: (v: Json) => boolean): boolean =>
    inner === undefined || inner === null || test(inner);
  if (key === "terminal_info") return absentOr(value.cwd, (v) => typeof v === "string");
  if (key === "terminal_exit") {
    const signal = (v: Json): boolean => typeof v === "string";
    return absentOr(value.exit_code, isInt64) && absentOr(value.signal, signal);
  }
  return typeof value.data === "string";
}

function startsWith(data: Uint8Array, prefix: Uint8Array): boolean {
  return data.length >= prefix.length && prefix.every((byte, index) => data[index] === byte);
}

function joined(a: Uint8Array, b: Uint8Array): Uint8Array {
  const all = new Uint8Array(a.length + b.length);
  all.set(a);
  all.set(b, a.length);
  return all;
}

/** Whether `update`'s `_meta` carries a key of the extension. */
export function usesExtension(update: JsonObject): boolean {
  const meta = update._meta;
  return isObject(meta) && ORDER.some((key) => key in meta);
}

/** One session's terminals of the extension. */
export class V1TerminalReader {
  private readonly known = new Map<string, Known>();

  /** `update` without the extension's keys, and the terminal changes it carried. */
  read(update: JsonObject): { update: JsonObject; changes: TerminalChange[] } {
    const changes: TerminalChange[] = [];
    const meta = update._meta;
    if (!usesExtension(update) || !isObject(meta)) return { update, changes };
    const kept: JsonObject = {};
    for (const [key, value] of Object.entries(meta)) {
      if (!ORDER.includes(key) || !valid(key, value)) kept[key] = value;
    }
    for (const key of ORDER) {
      const value = meta[key];
      if (value !== undefined && valid(key, value)) this.change(key, value, changes);
    }
    const { _meta: _consumed, ...rest } = update;
    return { update: Object.keys(kept).length > 0 ? { ...rest, _meta: kept } : rest, changes };
  }

  /** Whether a v1 `terminal` item names a terminal of the extension. */
  displays(terminalId: Json | undefined): boolean {
    return typeof terminalId === "string" && this.known.has(terminalId);
  }

  private change(key: string, value: JsonObject, changes: TerminalChange[]): void {
    const terminalId = value.terminal_id as string;
    let terminal = this.known.get(terminalId);
    if (terminal === undefined) {
      terminal = { held: new Uint8Array(), mode: "unknown", cwd: undefined };
      this.known.set(terminalId, terminal);
      changes.push({ terminalId, patch: {} }); // created, even without a cwd
    }
    const data = typeof value.data === "string" ? new TextEncoder().encode(value.data) : undefined;
    if (key === "terminal_info") {
      const cwd = value.cwd;
      if (typeof cwd === "string" && cwd !== terminal.cwd) {
        terminal.cwd = cwd;
        changes.push({ terminalId, patch: { cwd } });
      }
    } else if (key === "terminal_output_delta" && data !== undefined) {
      this.append(terminalId, terminal, data, changes);
    } else if (key === "terminal_output" && data !== undefined) {
      if (terminal.mode === "appended" || terminal.held.length === 0) {
        this.append(terminalId, terminal, data, changes);
      } else if (startsWith(data, terminal.held)) {
        terminal.mode = "resent";
        this.append(terminalId, terminal, data.subarray(terminal.held.length), changes);
      } else if (terminal.mode === "resent") {
        terminal.held = data; // a new whole output: it replaces
        const output = { data: Buffer.from(data).toString("base64") };
        changes.push({ terminalId, patch: { output } });
      } else {
        terminal.mode = "appended";
        this.append(terminalId, terminal, data, changes);
      }
    } else if (key === "terminal_exit") {
      const exitStatus: JsonObject = {};
      if (isInt64(value.exit_code)) exitStatus.exitCode = value.exit_code as number;
      if (typeof value.signal === "string") exitStatus.signal = value.signal;
      changes.push({ terminalId, patch: { exitStatus } });
    }
  }

  private append(
    terminalId: string,
    terminal: Known,
    data: Uint8Array,
    changes: TerminalChange[],
  ): void {
    if (data.length === 0) return;
    terminal.held = joined(terminal.held, data);
    changes.push({ terminalId, append: data });
  }
}
