// JSON values as `JSON.parse` gives them, shared by the reducers.

export type Json = null | boolean | number | string | Json[] | { [key: string]: Json };
export type JsonObject = { [key: string]: Json };

export function isObject(value: unknown): value is JsonObject {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** The keys of `value` listed in `keys`, those it has. */
export function pick(value: JsonObject, keys: readonly string[]): JsonObject {
  const kept: JsonObject = {};
  for (const key of keys) {
    const found = value[key];
    if (found !== undefined) kept[key] = found;
  }
  return kept;
}
