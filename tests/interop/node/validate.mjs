#!/usr/bin/env node
// Asks the official TypeScript ACP SDK (@agentclientprotocol/sdk, pinned in package.json)
// whether messages are valid, using the SDK's own validators.
//
// stdin: JSON Lines, each {"version": 1|2, "message": <JSON-RPC message>} and, for a
//   response, "kind": "response" and "method": <method of the request it answers>.
// stdout: one JSON line per input line, {"ok": true} or {"ok": false, "error": "..."}.
//   Blank input lines are ignored; every other line gets an answer, even when it is not JSON.
// `node validate.mjs --describe` prints which SDK modules and validators are used.
//
// The validators are not a public export of the SDK: its entry points (`.` for v1,
// `./experimental/v2` for the v2 draft) import them from a generated zod module and hand them
// to their connections. So this script resolves each entry point, reads which module it
// imports as `validate` and which `validate.z*` names its client-side specs register for
// `session/update` and `session/request_permission`, and loads that very module (the same
// file, hence the same module instance the connection uses). The JSON-RPC envelope is
// checked with the classifiers of the SDK's own `core/jsonrpc.js`.
import { readFileSync } from "node:fs";

const SDK = "@agentclientprotocol/sdk";
const ENTRY_POINTS = { 1: SDK, 2: `${SDK}/experimental/v2` };
const SESSION_UPDATE = "session/update";
const REQUEST_PERMISSION = "session/request_permission";
const MAX_ERROR_CHARS = 600;

function match(source, pattern, what, entry) {
  const found = pattern.exec(source);
  if (!found) {
    throw new Error(`${entry}: cannot find ${what}; the SDK layout changed, update validate.mjs`);
  }
  return found;
}

async function loadVersion(version) {
  const entry = ENTRY_POINTS[version];
  const entryUrl = import.meta.resolve(entry);
  const api = await import(entryUrl);
  if (api.PROTOCOL_VERSION !== version) {
    throw new Error(`${entry} speaks protocol ${api.PROTOCOL_VERSION}, expected ${version}`);
  }
  const source = readFileSync(new URL(entryUrl), "utf8");
  const [, validatorsPath] = match(
    source, /import \* as validate from "([^"]+)"/, "its validators import", entry);
  const [, jsonrpcPath] = match(
    source, /from "([^"]*\/core\/jsonrpc\.js)"/, "its core/jsonrpc.js import", entry);
  const name = String.raw`(?:received\()?validate\.(\w+)\)?`;
  const [, notification] = match(
    source,
    new RegExp(String.raw`notificationSpec\(schema\.CLIENT_METHODS\.session_update,\s*${name}`),
    "the session/update spec",
    entry,
  );
  const [, request, response] = match(
    source,
    new RegExp(
      String.raw`requestSpec\(schema\.CLIENT_METHODS\.session_request_permission,\s*${name}` +
        String.raw`(?:,\s*${name})?`,
    ),
    "the session/request_permission spec",
    entry,
  );
  const validatorsUrl = new URL(validatorsPath, entryUrl);
  const validate = await import(validatorsUrl);
  const jsonrpc = await import(new URL(jsonrpcPath, entryUrl));
  // The v1 connection does not parse permission responses (v2 does): fall back to the
  // RequestPermissionResponse validator of the same generated module.
  const responseName = response ?? "zRequestPermissionResponse";
  const schemas = {
    [SESSION_UPDATE]: validate[notification],
    [REQUEST_PERMISSION]: validate[request],
    response: validate[responseName],
  };
  for (const [key, schema] of Object.entries(schemas)) {
    if (typeof schema?.safeParse !== "function") {
      throw new Error(`${entry}: the ${key} validator is missing from ${validatorsUrl}`);
    }
  }
  return {
    version,
    schemas,
    jsonrpc,
    description: {
      entry,
      entryFile: new URL(entryUrl).pathname,
      validators: new URL(validatorsUrl).pathname,
      [SESSION_UPDATE]: notification,
      [REQUEST_PERMISSION]: request,
      [`${REQUEST_PERMISSION} response`]: responseName,
      responseValidatedByConnection: response !== undefined,
    },
  };
}

// --- error text ------------------------------------------------------------------------------

function formatPath(path) {
  let text = "";
  for (const key of path) {
    text += typeof key === "number" ? `[${key}]` : text ? `.${String(key)}` : String(key);
  }
  return text || "(root)";
}

function valueAt(value, path) {
  let current = value;
  for (const key of path) {
    if (current === null || typeof current !== "object") return undefined;
    current = current[key];
  }
  return current;
}

// zod reports a failed plain union as `invalid_union` with every branch's issues. Follow the
// one branch whose tag matched; when none did, name the tag and the tags that were expected.
function describeIssue(issue, root, prefix) {
  const path = [...prefix, ...(issue.path ?? [])];
  if (issue.code === "invalid_union" && Array.isArray(issue.errors) && issue.errors.length) {
    const isTagMismatch = (i) => i.code === "invalid_value" && i.path?.length === 1;
    const tagged = issue.errors.filter((branch) => !branch.some(isTagMismatch));
    if (tagged.length === 1) {
      return describeIssues(tagged[0], root, path);
    }
    const tags = new Map();
    for (const branch of issue.errors) {
      for (const i of branch.filter(isTagMismatch)) {
        const values = tags.get(i.path[0]) ?? new Set();
        for (const v of i.values ?? []) values.add(v);
        tags.set(i.path[0], values);
      }
    }
    if (tagged.length === 0 && tags.size === 1) {
      const [[key, values]] = tags;
      const tagPath = [...path, key];
      const actual = JSON.stringify(valueAt(root, tagPath)) ?? "undefined";
      const expected = [...values].map((v) => JSON.stringify(v)).join(", ");
      return `${formatPath(tagPath)}: ${actual} matches no variant (expected one of ${expected})`;
    }
    return `${formatPath(path)}: ${issue.message} (no union variant matched)`;
  }
  return `${formatPath(path)}: ${issue.message}`;
}

function describeIssues(issues, root, prefix) {
  return issues.map((issue) => describeIssue(issue, root, prefix)).join("; ");
}

function shorten(text) {
  return text.length > MAX_ERROR_CHARS ? `${text.slice(0, MAX_ERROR_CHARS - 3)}...` : text;
}

// --- one line --------------------------------------------------------------------------------

function parseWith(schema, value, label) {
  const result = schema.safeParse(value);
  if (result.success) return { ok: true };
  const root = { [label]: value };
  return { ok: false, error: shorten(describeIssues(result.error.issues, root, [label])) };
}

function isObject(value) {
  return value !== null && typeof value === "object" && !Array.isArray(value);
}

function check(line, sdks) {
  if (!isObject(line)) return { ok: false, error: "line is not a JSON object" };
  const sdk = sdks[line.version];
  if (!sdk) return { ok: false, error: `unsupported version ${JSON.stringify(line.version)}` };
  const { message } = line;
  if (!isObject(message)) return { ok: false, error: "message is not a JSON object" };
  const { jsonrpc, schemas } = sdk;

  if (line.kind === "response" || !("method" in message)) {
    if (line.method === undefined) {
      const error = 'a response needs "method": the method of the request it answers';
      return { ok: false, error };
    }
    if (line.method !== REQUEST_PERMISSION) {
      const error = `unsupported method for a response: ${JSON.stringify(line.method)}`;
      return { ok: false, error };
    }
    if (!jsonrpc.isResponseMessage(message)) {
      return { ok: false, error: "not a JSON-RPC response (SDK isResponseMessage)" };
    }
    if (Object.hasOwn(message, "error")) return { ok: true }; // no result to validate
    return parseWith(schemas.response, message.result, "result");
  }

  const { method } = message;
  if (method === SESSION_UPDATE) {
    if (!jsonrpc.isNotificationMessage(message)) {
      return { ok: false, error: "not a JSON-RPC notification (SDK isNotificationMessage)" };
    }
    return parseWith(schemas[SESSION_UPDATE], message.params, "params");
  }
  if (method === REQUEST_PERMISSION) {
    if (!jsonrpc.isRequestMessage(message)) {
      return { ok: false, error: "not a JSON-RPC request (SDK isRequestMessage)" };
    }
    if (sdk.version === 2 && !jsonrpc.isV2RequestId(message.id)) {
      const error = "ACP v2 request IDs must be strings or integers (SDK isV2RequestId)";
      return { ok: false, error };
    }
    // Like the SDK's requestSpec: missing or null params are parsed as {}.
    return parseWith(schemas[REQUEST_PERMISSION], message.params ?? {}, "params");
  }
  return { ok: false, error: `unsupported method ${JSON.stringify(method)}` };
}

function errorText(error) {
  return error instanceof Error ? `${error.name}: ${error.message}` : String(error);
}

const sdks = { 1: await loadVersion(1), 2: await loadVersion(2) };

if (process.argv.includes("--describe")) {
  process.stdout.write(`${JSON.stringify([sdks[1].description, sdks[2].description], null, 2)}\n`);
} else {
  const out = [];
  for (const text of readFileSync(0, "utf8").split("\n")) {
    if (!text.trim()) continue;
    let verdict;
    try {
      verdict = check(JSON.parse(text), sdks);
    } catch (error) {
      verdict = { ok: false, error: shorten(errorText(error)) };
    }
    out.push(JSON.stringify(verdict));
  }
  process.stdout.write(out.length ? `${out.join("\n")}\n` : "");
}
