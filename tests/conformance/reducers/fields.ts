// How a reducer reads each field of a v2 tool call or terminal: the value to store, or
// `undefined` for an invalid value, which changes nothing (D11). `null` never reaches a reading:
// it clears (D46 (patch semantics)).

import { type Json, type JsonObject, isObject } from "./json";

/** A field's reading: the value to store, or `undefined` for an invalid value, which changes
 * nothing (D11: "An invalid value is 'no change', never a clear"). `null` never reaches one. */
export type Reading = (value: Json) => Json | undefined;

export const anyValue: Reading = (value) => value;
export const text: Reading = (value) => (typeof value === "string" ? value : undefined);
export const object: Reading = (value) => (isObject(value) ? value : undefined);

/** An array whose bad items are skipped, the rest kept (D46 (schema markers)). */
export function listOf(item: Reading): Reading {
  return (value) => {
    if (!Array.isArray(value)) return undefined;
    const kept: Json[] = [];
    for (const element of value) {
      const read = item(element);
      if (read !== undefined) kept.push(read);
    }
    return kept;
  };
}

export function isInteger(value: Json | undefined, min: number, max: number): boolean {
  return typeof value === "number" && Number.isInteger(value) && value >= min && value <= max;
}

/** A location keeps its path; a `line` below 1 or past 2^32-1 is dropped (D7). */
const location: Reading = (value) => {
  if (!isObject(value) || typeof value.path !== "string") return undefined;
  if ("line" in value && value.line !== null && !isInteger(value.line, 1, 2 ** 32 - 1)) {
    const { line: _dropped, ...rest } = value;
    return rest;
  }
  return value;
};

/** A content item: `content`, `diff`, `terminal`, `session`, or an unknown type kept verbatim
 * (D46 (content items)); a known type with a malformed payload is an item error (skipped). */
const CONTENT_ITEMS: Record<string, (item: JsonObject) => boolean> = {
  content: (item) =>
    isObject(item.content) &&
    typeof item.content.type === "string" &&
    (item.content.type !== "text" || typeof item.content.text === "string"),
  diff: (item) => Array.isArray(item.changes),
  terminal: (item) => typeof item.terminalId === "string",
  session: (item) => typeof item.sessionId === "string",
};

export const contentItem: Reading = (value) => {
  if (!isObject(value) || typeof value.type !== "string") return undefined;
  const check = CONTENT_ITEMS[value.type];
  return check === undefined || check(value) ? value : undefined;
};

/** Terminal output: standard padded base64 (RFC 4648), anything else invalid (D22). */
const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;

export function base64Bytes(data: Json | undefined): Uint8Array | undefined {
  return typeof data === "string" && BASE64.test(data) ? Buffer.from(data, "base64") : undefined;
}

/** An `output` snapshot: its bytes, re-encoded, with its `_meta` (an invalid one reads as
 * omitted) and its unknown keys as received (D19). */
const terminalOutput: Reading = (value) => {
  const bytes = isObject(value) ? base64Bytes(value.data) : undefined;
  if (bytes === undefined || !isObject(value)) return undefined;
  const { data: _data, _meta: meta, ...rest } = value;
  const kept: JsonObject = { data: Buffer.from(bytes).toString("base64") };
  if (meta === null || isObject(meta)) kept._meta = meta;
  return { ...kept, ...rest };
};

/** An exit status: present means exited, even `{}`; a `null` field inside reads as omitted (T5),
 * and so does an invalid `exitCode` (not a 64-bit integer) or `signal` (not a string). */
const EXIT_STATUS_FIELDS: Record<string, Reading> = {
  exitCode: (value) => (isInteger(value, -(2 ** 63), 2 ** 63 - 1) ? value : undefined),
  signal: text,
  _meta: object,
};

const exitStatus: Reading = (value) => {
  if (!isObject(value)) return undefined;
  const kept: JsonObject = {};
  for (const [key, inner] of Object.entries(value)) {
    const reading = EXIT_STATUS_FIELDS[key];
    const read = reading === undefined ? inner : inner === null ? undefined : reading(inner);
    if (read !== undefined) kept[key] = read; // unknown keys are kept as they are (D19)
  }
  return kept;
};

const terminalSize: Reading = (value) =>
  isObject(value) && isInteger(value.cols, 1, 65535) && isInteger(value.rows, 1, 65535)
    ? value
    : undefined;

/** Per-call controls: `cancel` as an object (`{}` too) means cancellable; a malformed `cancel`
 * reads as omitted (D46 (capabilities)). */
const capabilities: Reading = (value) => {
  if (!isObject(value)) return undefined;
  const { cancel, ...rest } = value;
  return cancel === undefined || cancel === null || isObject(cancel) ? value : rest;
};

/** The patch fields of a v2 tool call (D46 (tool-call update)); unknown keys are kept and
 * patched like fields (D19). */
export const TOOL_CALL_FIELDS: Record<string, Reading> = {
  name: text,
  title: text,
  kind: text,
  status: text,
  content: listOf(contentItem),
  locations: listOf(location),
  rawInput: anyValue,
  rawOutput: anyValue,
  capabilities,
};

/** The patch fields of a v2 terminal (D46 (terminals)); unknown keys are kept and patched like
 * fields (D19). */
export const TERMINAL_FIELDS: Record<string, Reading> = {
  command: text,
  cwd: text,
  output: terminalOutput,
  exitStatus,
  size: terminalSize,
  capabilities,
};

