// v1 input: a v1 `tool_call` or `tool_call_update` (or a permission's `toolCall`) read as the
// v2 patch it maps to (D46 (v1 store), D46 (field mapping)); the reducer then applies the patch
// by the v2 rules.

import { gitPatch } from "./gitpatch";
import { type Json, type JsonObject, isObject, pick } from "./json";
import { type Reading, anyValue, isInteger, listOf, object, text } from "./fields";
import type { V1TerminalReader } from "./v1terminals";

/** v1: what a field of a `tool_call`/`tool_call_update` becomes in the v2 patch it is read as
 * (D46 (field mapping)); keys not listed are dropped, as conversion drops them (D19). */
const V1_FIELDS: Record<string, Reading> = {
  title: text,
  name: text,
  kind: text, // a string v1 does not define is kept and sent on as received (D32)
  status: text,
  content: listOf((item) => v1ContentItem(item)),
  locations: listOf((item) => v1Location(item)),
  rawInput: anyValue,
  rawOutput: anyValue,
  _meta: object,
};

/** What the v1 `terminal` items of a `content` become in v2, once the D9 check below has seen
 * them: a v2 `terminal` item when it names a terminal of the `_meta` extension; otherwise the
 * client-owned terminal v2 has no form for (D38), dropped, so `content` may become `[]`. */
function v1TerminalsToV2(items: Json[], reader: V1TerminalReader | undefined): Json[] {
  const converted: Json[] = [];
  for (const item of items) {
    if (!isObject(item) || item.type !== "terminal") converted.push(item);
    else if (reader?.displays(item.terminalId)) {
      converted.push(pick(item, ["type", "terminalId", "_meta"]));
    }
  }
  return converted;
}

/** What a repeated v1 `tool_call` for a known id cannot tell from omitted (D9). */
const V1_CREATE_DEFAULTS: Record<string, (value: Json) => boolean> = {
  kind: (value) => value === "other",
  status: (value) => value === "pending",
  content: (value) => Array.isArray(value) && value.length === 0,
  locations: (value) => Array.isArray(value) && value.length === 0,
};

/** The known keys of each v1 content block; others are dropped toward v2. */
const V1_BLOCK_KEYS: Record<string, readonly string[]> = {
  text: ["type", "text", "annotations", "_meta"],
  image: ["type", "data", "mimeType", "uri", "annotations", "_meta"],
  audio: ["type", "data", "mimeType", "annotations", "_meta"],
  resource_link: [
    "type", "uri", "name", "title", "description", "mimeType", "size", "annotations", "_meta",
  ],
  resource: ["type", "resource", "annotations", "_meta"],
};

/** A v1 content item as v2 reads it: a `content` item is copied (its v1 unions are closed: an
 * unknown block type is skipped), a `session` reference too (D41), a whole-file diff becomes a
 * v2 diff; a v1 `terminal` stays as it is, for `v1TerminalsToV2`; other types
 * are skipped. */
function v1ContentItem(value: Json): Json | undefined {
  if (isObject(value) && value.type === "session" && typeof value.sessionId === "string") {
    return pick(value, ["type", "sessionId", "_meta"]);
  }
  if (isObject(value) && value.type === "terminal") {
    return typeof value.terminalId === "string" ? value : undefined;
  }
  if (isObject(value) && value.type === "diff") return v1Diff(value);
  if (!isObject(value) || value.type !== "content" || !isObject(value.content)) return undefined;
  const block = value.content;
  const keys = typeof block.type === "string" ? V1_BLOCK_KEYS[block.type] : undefined;
  if (keys === undefined || (block.type === "text" && typeof block.text !== "string")) {
    return undefined;
  }
  const item: JsonObject = { type: "content", content: pick(block, keys) };
  if (isObject(value._meta)) item._meta = value._meta;
  return item;
}

/** A v1 diff as a v2 one: `oldText` omitted or `null` is a new file (`add`), any string, `""`
 * included, an existing one (`modify`, D26); the patch is left out when the texts are equal. */
function v1Diff(value: JsonObject): Json | undefined {
  const { path, oldText, newText } = value;
  if (typeof path !== "string" || typeof newText !== "string") return undefined;
  const before = typeof oldText === "string" ? oldText : null;
  const operation = before === null ? "add" : "modify";
  const item: JsonObject = { type: "diff", changes: [{ operation, fileType: "text", path }] };
  if (before !== newText) {
    item.patch = { format: "git_patch", text: gitPatch(path, before, newText) };
  }
  if (isObject(value._meta)) item._meta = value._meta;
  return item;
}

/** A v1 location: v1 allows `line: 0`, which readers drop (D7). */
function v1Location(value: Json): Json | undefined {
  if (!isObject(value) || typeof value.path !== "string") return undefined;
  const kept = pick(value, ["path", "_meta"]);
  const line = value.line;
  if (line !== undefined && isInteger(line, 1, 2 ** 32 - 1)) kept.line = line;
  return kept;
}

/** The v2 patch of a v1 call (`update`, without the `_meta` terminal extension's keys): a v1
 * `null` means unchanged (D8); a `repeated` `tool_call` for a known id merges, its default
 * values read as omitted (D9); unknown keys are dropped (D19). */
export function v1Patch(
  update: JsonObject,
  repeated: boolean,
  reader: V1TerminalReader | undefined,
): JsonObject {
  const patch: JsonObject = { toolCallId: update.toolCallId ?? null };
  for (const [key, reading] of Object.entries(V1_FIELDS)) {
    const value = update[key];
    if (value === undefined || value === null) continue;
    const read = reading(value);
    if (read === undefined) continue;
    if (repeated && V1_CREATE_DEFAULTS[key]?.(read)) continue;
    patch[key] = key === "content" && Array.isArray(read) ? v1TerminalsToV2(read, reader) : read;
  }
  return patch;
}
