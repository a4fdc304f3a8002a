// Broken reducers: `reducer.ts` with one bug that real clients have shipped switched on, to show
// that the conformance suite catches it (issue 32). Each bug overrides one rule of `Reducer`.
//
//   node broken.js --bug null-as-skip < stream.jsonl
//
// Bugs (`--bug NAME`):
//   null-as-skip                `null` read as "no change": nothing ever clears (D46 (patch
//                               semantics), D4; D46 (evidence: null as omitted)).
//   chunks-survive-replacement  chunks kept apart from the content and shown after it, so a
//                               replacement does not drop the chunks sent before it (D46
//                               (content chunks)).
//   late-update-revives         an update without a status, or a content chunk, for a finished
//                               call sets it back to `in_progress` (the store never changes a
//                               status on its own, D14, D23).
//   empty-array-unchanged       `content: []` or `locations: []` read as "no change" instead of a
//                               clear (D2).
//   meta-replaced               `_meta` replaced whole instead of patched by key (D13).

import { type Json, type JsonObject, isObject } from "./json";
import { COLLECTIONS, FINAL_STATUSES, Reducer, main, type Held, type Session } from "./reducer";

class NullAsSkip extends Reducer {
  protected override setField(held: Held, key: string, value: Json): void {
    if (value !== null) super.setField(held, key, value);
  }

  protected override patchMeta(held: Held, incoming: Json): void {
    if (!isObject(incoming)) return;
    const kept: JsonObject = {};
    for (const [key, value] of Object.entries(incoming)) if (value !== null) kept[key] = value;
    super.patchMeta(held, kept);
  }
}

class ChunksSurviveReplacement extends Reducer {
  private readonly chunks = new Map<Held, Json[]>();

  protected override appendChunk(call: Held, item: Json): void {
    const chunks = this.chunks.get(call);
    if (chunks === undefined) this.chunks.set(call, [item]);
    else chunks.push(item);
  }

  protected override exportCall(call: Held): Json {
    const chunks = this.chunks.get(call);
    if (chunks === undefined) return call;
    const content = Array.isArray(call.content) ? call.content : [];
    return { ...call, content: [...content, ...chunks] };
  }
}

class LateUpdateRevives extends Reducer {
  protected override toolCallUpdate(session: Session, patch: JsonObject): void {
    const id = patch.toolCallId as string;
    const before = session.toolCalls.get(id)?.status;
    super.toolCallUpdate(session, patch);
    if (isFinal(before) && !("status" in patch)) this.call(session, id).status = "in_progress";
  }

  protected override appendChunk(call: Held, item: Json): void {
    const before = call.status;
    super.appendChunk(call, item);
    if (isFinal(before)) call.status = "in_progress";
  }
}

function isFinal(status: Json | undefined): boolean {
  return typeof status === "string" && FINAL_STATUSES.has(status);
}

class EmptyArrayUnchanged extends Reducer {
  protected override setField(held: Held, key: string, value: Json): void {
    if (COLLECTIONS.has(key) && Array.isArray(value) && value.length === 0) return;
    super.setField(held, key, value);
  }
}

class MetaReplaced extends Reducer {
  protected override patchMeta(held: Held, incoming: Json): void {
    if (isObject(incoming)) held._meta = { ...incoming };
    else super.patchMeta(held, incoming);
  }
}

const BUGS: Record<string, new () => Reducer> = {
  "null-as-skip": NullAsSkip,
  "chunks-survive-replacement": ChunksSurviveReplacement,
  "late-update-revives": LateUpdateRevives,
  "empty-array-unchanged": EmptyArrayUnchanged,
  "meta-replaced": MetaReplaced,
};

const flag = process.argv.indexOf("--bug");
const name = flag >= 0 ? process.argv[flag + 1] : undefined;
const Broken = name === undefined ? undefined : BUGS[name];
if (Broken === undefined) {
  process.stderr.write(`usage: node broken.js --bug {${Object.keys(BUGS).join(",")}}\n`);
  process.exitCode = 2;
} else {
  main(new Broken());
}
