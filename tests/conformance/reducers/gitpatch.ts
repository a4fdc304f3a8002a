// The Git patch a v1 whole-file diff becomes in v2 (D26, D46 (diff conversion)): one
// `diff --git` section with absolute, unprefixed paths quoted as Git quotes them,
// `new file mode 100644` and `--- /dev/null` for a new file, unified hunks with 3 lines of
// context, and `\ No newline at end of file` after a side's last line when it has no newline.
//
// Only a v1 stream needs it. The hunks are those of Python's difflib (SequenceMatcher, then
// grouped opcodes), which the reference store uses, ported here line for line so that a v1
// diff folds to the same text.

const CONTEXT = 3;
const NO_NEWLINE = "\\ No newline at end of file\n";

/** The `git_patch` text turning `before` into `after` (`before === null`: a new file); `""`
 * when an existing file's text does not change. */
export function gitPatch(path: string, before: string | null, after: string): string {
  if (before !== null && before === after) return "";
  const name = gitPath(path);
  const head =
    before === null
      ? `diff --git ${name} ${name}\nnew file mode 100644\n--- /dev/null\n+++ ${name}\n`
      : `diff --git ${name} ${name}\n--- ${name}\n+++ ${name}\n`;
  const out = [head];
  for (const line of unifiedHunks(lines(before ?? ""), lines(after))) {
    out.push(line.endsWith("\n") ? line : `${line}\n${NO_NEWLINE}`);
  }
  return out.join("");
}

/** Git lines end at "\n" only; the last one may lack it. */
function lines(text: string): string[] {
  const parts = text.split("\n").map((line) => `${line}\n`);
  const last = parts.length - 1;
  parts[last] = (parts[last] ?? "").slice(0, -1);
  if (parts[last] === "") parts.pop();
  return parts;
}

const C_ESCAPES: Record<number, string> = {
  0x22: '\\"', 0x5c: "\\\\", 0x07: "\\a", 0x08: "\\b", 0x09: "\\t", 0x0a: "\\n", 0x0b: "\\v",
  0x0c: "\\f", 0x0d: "\\r",
};

/** A path as Git writes it in patch headers: as is, or double-quoted and C-escaped (octal for
 * every other control byte, DEL and each byte of a non-ASCII character). */
function gitPath(path: string): string {
  const bytes = new TextEncoder().encode(path);
  let quoted = "";
  let escaped = false;
  for (const byte of bytes) {
    const special = C_ESCAPES[byte];
    if (special !== undefined) quoted += special;
    else if (byte >= 0x20 && byte < 0x7f) quoted += String.fromCharCode(byte);
    else quoted += `\\${byte.toString(8).padStart(3, "0")}`;
    escaped ||= special !== undefined || byte < 0x20 || byte >= 0x7f;
  }
  return escaped ? `"${quoted}"` : path;
}

type Block = [number, number, number]; // a[i..i+size] === b[j..j+size]
type Opcode = ["equal" | "replace" | "delete" | "insert", number, number, number, number];

/** difflib.SequenceMatcher(None, a, b) (autojunk on), as far as unified_diff uses it. */
function matchingBlocks(a: string[], b: string[]): Block[] {
  const where = new Map<string, number[]>();
  b.forEach((line, j) => {
    const found = where.get(line);
    if (found === undefined) where.set(line, [j]);
    else found.push(j);
  });
  if (b.length >= 200) {
    // autojunk: lines more frequent than 1% of b (plus one) are "popular", never a match seed
    const most = Math.floor(b.length / 100) + 1;
    for (const [line, js] of [...where]) if (js.length > most) where.delete(line);
  }
  const longest = (alo: number, ahi: number, blo: number, bhi: number): Block => {
    let [bi, bj, size] = [alo, blo, 0];
    let runs = new Map<number, number>();
    for (let i = alo; i < ahi; i++) {
      const next = new Map<number, number>();
      for (const j of where.get(a[i] as string) ?? []) {
        if (j < blo) continue;
        if (j >= bhi) break;
        const k = (runs.get(j - 1) ?? 0) + 1;
        next.set(j, k);
        if (k > size) [bi, bj, size] = [i - k + 1, j - k + 1, k];
      }
      runs = next;
    }
    while (bi > alo && bj > blo && a[bi - 1] === b[bj - 1]) {
      [bi, bj, size] = [bi - 1, bj - 1, size + 1];
    }
    while (bi + size < ahi && bj + size < bhi && a[bi + size] === b[bj + size]) size += 1;
    return [bi, bj, size];
  };
  const found: Block[] = [];
  const queue: [number, number, number, number][] = [[0, a.length, 0, b.length]];
  for (let range = queue.pop(); range !== undefined; range = queue.pop()) {
    const [alo, ahi, blo, bhi] = range;
    const block = longest(alo, ahi, blo, bhi);
    const [i, j, k] = block;
    if (k === 0) continue;
    found.push(block);
    if (alo < i && blo < j) queue.push([alo, i, blo, j]);
    if (i + k < ahi && j + k < bhi) queue.push([i + k, ahi, j + k, bhi]);
  }
  found.sort((x, y) => x[0] - y[0] || x[1] - y[1] || x[2] - y[2]);
  const merged: Block[] = [];
  let [i1, j1, k1] = [0, 0, 0];
  for (const [i2, j2, k2] of found) {
    if (i1 + k1 === i2 && j1 + k1 === j2) k1 += k2;
    else {
      if (k1) merged.push([i1, j1, k1]);
      [i1, j1, k1] = [i2, j2, k2];
    }
  }
  if (k1) merged.push([i1, j1, k1]);
  merged.push([a.length, b.length, 0]);
  return merged;
}

function opcodes(a: string[], b: string[]): Opcode[] {
  const codes: Opcode[] = [];
  let [i, j] = [0, 0];
  for (const [ai, bj, size] of matchingBlocks(a, b)) {
    if (i < ai && j < bj) codes.push(["replace", i, ai, j, bj]);
    else if (i < ai) codes.push(["delete", i, ai, j, bj]);
    else if (j < bj) codes.push(["insert", i, ai, j, bj]);
    [i, j] = [ai + size, bj + size];
    if (size) codes.push(["equal", ai, i, bj, j]);
  }
  return codes;
}

function groupedOpcodes(a: string[], b: string[]): Opcode[][] {
  const codes = opcodes(a, b);
  if (codes.length === 0) codes.push(["equal", 0, 1, 0, 1]);
  const first = codes[0] as Opcode;
  if (first[0] === "equal") {
    const [tag, i1, i2, j1, j2] = first;
    codes[0] = [tag, Math.max(i1, i2 - CONTEXT), i2, Math.max(j1, j2 - CONTEXT), j2];
  }
  const last = codes[codes.length - 1] as Opcode;
  if (last[0] === "equal") {
    const [tag, i1, i2, j1, j2] = last;
    codes[codes.length - 1] = [tag, i1, Math.min(i2, i1 + CONTEXT), j1, Math.min(j2, j1 + CONTEXT)];
  }
  const groups: Opcode[][] = [];
  let group: Opcode[] = [];
  for (const code of codes) {
    let [tag, i1, i2, j1, j2] = code;
    if (tag === "equal" && i2 - i1 > 2 * CONTEXT) {
      group.push([tag, i1, Math.min(i2, i1 + CONTEXT), j1, Math.min(j2, j1 + CONTEXT)]);
      groups.push(group);
      group = [];
      [i1, j1] = [Math.max(i1, i2 - CONTEXT), Math.max(j1, j2 - CONTEXT)];
    }
    group.push([tag, i1, i2, j1, j2]);
  }
  if (group.length > 0 && !(group.length === 1 && group[0]?.[0] === "equal")) groups.push(group);
  return groups;
}

function range(start: number, stop: number): string {
  const length = stop - start;
  if (length === 1) return `${start + 1}`;
  return `${length === 0 ? start : start + 1},${length}`;
}

/** difflib.unified_diff's lines after its ---/+++ pair. */
function unifiedHunks(a: string[], b: string[]): string[] {
  const out: string[] = [];
  for (const group of groupedOpcodes(a, b)) {
    const first = group[0] as Opcode;
    const last = group[group.length - 1] as Opcode;
    out.push(`@@ -${range(first[1], last[2])} +${range(first[3], last[4])} @@\n`);
    for (const [tag, i1, i2, j1, j2] of group) {
      if (tag === "equal") {
        for (const line of a.slice(i1, i2)) out.push(` ${line}`);
        continue;
      }
      if (tag !== "insert") for (const line of a.slice(i1, i2)) out.push(`-${line}`);
      if (tag !== "delete") for (const line of b.slice(j1, j2)) out.push(`+${line}`);
    }
  }
  return out;
}
