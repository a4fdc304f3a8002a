// acp-toolcalls inspect: renders and filters the report's data; computes no tool-call state.
// Every state shown was computed in Python (acp_toolcalls/report/history.py): the state after
// line N is the last history entry at or before N. Log text is always inserted as text, with
// the characters that would reorder or hide it shown as escapes (`visible`).
// This file: the data, the DOM helpers, the summary, the findings and a card (its state, its
// permission requests, its terminals). content.js: content items and the history; list.js:
// the list, the filters and the jumps; views.js: the latency and permission audit views
// (page.py inlines them in this order, as one script).
"use strict";

const FINAL = new Set(["completed", "failed", "cancelled"]);
const HISTORY_PAGE = 200; // history entries rendered at a time

const parts = new Map(); // part id -> Promise of its JSON
let R = null; // the main part
let line = 0; // the scrubber: the state after this line
const collapsedCards = new Set(); // indices of the cards folded to their head
const openHistories = new Set(); // "card:side" whose history is unfolded
const findingsAt = new Map(); // "side:line" -> findings

// ---------------------------------------------------------------------------------------------
// Data

function part(id) {
  if (!parts.has(id)) {
    parts.set(id, (async () => {
      const text = atob(document.getElementById(id).textContent);
      const bytes = new Uint8Array(text.length);
      for (let i = 0; i < text.length; i++) bytes[i] = text.charCodeAt(i);
      const stream = new Blob([bytes]).stream().pipeThrough(new DecompressionStream("gzip"));
      return JSON.parse(await new Response(stream).text());
    })());
  }
  return parts.get(id);
}

async function details(holder) {
  if (!holder.loaded) holder.loaded = (await part(holder.part))[holder.at];
  return holder.loaded;
}

// A call's state after its entry `at`: each entry holds what its line changed (`s`), merged
// here over the state before it (`f` by field name); computed once per entry, in order.
function stateAt(d, at) {
  const states = d.states || (d.states = []);
  for (let i = states.length; i <= at; i++) {
    const before = i ? states[i - 1] : { f: {} };
    const s = d.entries[i].s;
    states.push({ ...before, ...s, f: s.f ? { ...before.f, ...s.f } : before.f });
  }
  return states[at];
}

async function rawLine(n) {
  const index = n - 1;
  const chunk = await part(R.lineParts[Math.floor(index / R.linesPerPart)]);
  return chunk[index % R.linesPerPart];
}

// The last [line, value] pair of a timeline at or before `at`, by binary search.
function lastAt(list, at, lineOf) {
  let low = 0, high = list.length - 1, found = -1;
  while (low <= high) {
    const middle = (low + high) >> 1;
    if (lineOf(list[middle]) <= at) { found = middle; low = middle + 1; } else high = middle - 1;
  }
  return found;
}
const valueAt = (timeline, at) => {
  const i = lastAt(timeline, at, (pair) => pair[0]);
  return i < 0 ? null : timeline[i][1];
};

function cardCalls(card) {
  return card.sides.map((index, side) => (index === null ? null : R.calls[side][index]));
}

// ---------------------------------------------------------------------------------------------
// Small DOM helpers

// Characters that reorder or hide the text around them (bidirectional controls and marks,
// line and paragraph separators) are shown as escapes, as the commands print them.
const HIDDEN = /[\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069\u2028\u2029]/g;
const visible = (text) =>
  text.replace(HIDDEN, (c) => "\\u" + c.charCodeAt(0).toString(16).padStart(4, "0"));

function h(tag, attrs, ...children) {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs || {})) {
    if (value === null || value === undefined || value === false) continue;
    if (key === "class") node.className = value;
    else if (key.startsWith("on")) node.addEventListener(key.slice(2), value);
    else node.setAttribute(key, value === true ? "" : value);
  }
  for (const child of children.flat(Infinity)) {
    if (child === null || child === undefined || child === false) continue;
    node.append(child instanceof Node ? child : visible(String(child)));
  }
  return node;
}
const json = (value) => JSON.stringify(value);
const pretty = (value) => JSON.stringify(value, null, 2);
const badge = (text, cls) => h("span", { class: "badge " + (cls || "") }, text);
const statusBadge = (status) => badge(status, "status status-" + status);
const plural = (n, word) => `${n.toLocaleString("en")} ${word}${n === 1 ? "" : "s"}`;
const lineLink = (n, side, label) =>
  h("button", { class: "line-link", type: "button", "data-line": n, onclick: (e) => jump(n, side, e.currentTarget) },
    label || `line ${n}`);

function seconds(value) {
  if (value < 1) return `${Math.round(value * 1000)} ms`;
  if (value < 120) return `${value.toFixed(1)} s`;
  return `${Math.floor(value / 60)} min ${Math.round(value % 60)} s`;
}
const when = (t) => (t === null || t === undefined || R.started === null ? null
  : h("span", { class: "when" }, `+${seconds(t - R.started)}`));

// ---------------------------------------------------------------------------------------------
// Summary and findings

function renderSummary() {
  const box = document.getElementById("summary");
  box.replaceChildren();
  const total = R.findings.length;
  box.append(h("div", {},
    `${plural(R.lineCount, "line")}, ${plural(R.cards.length, "tool call")}`,
    R.duration === null ? " · the log has no times"
      : ` · ${seconds(R.duration)} from the first to the last record`,
    ` · ${plural(total, "finding")}`));
  R.sides.forEach((side, position) => {
    const s = side.summary;
    const open = s.open.map((index) => {
      const call = R.calls[position][index];
      return h("button", { class: "line-link", type: "button", onclick: () => focusCall(position, index) },
        call.id);
    });
    box.append(h("div", { class: "side-summary", "data-side": side.name },
      h("h2", {}, R.sides.length > 1 ? `${side.name}: ${side.label} (${side.protocol})`
        : `protocol ${side.protocol} (${side.protocolSource})`),
      h("div", {}, plural(s.calls, "call"), ": ",
        Object.entries(s.byStatus).map(([k, n]) => badge(`${k} ${n}`, "status-" + k))),
      h("div", {}, "kinds: ", Object.entries(s.byKind).map(([k, n]) => badge(`${k} ${n}`))),
      h("div", { class: "open-calls" }, `left open: ${s.open.length}`, s.open.length ? " — " : "",
        open.slice(0, 20).map((b) => [b, " "]), s.open.length > 20 ? `and ${s.open.length - 20} more` : ""),
      h("div", {}, `${plural(s.asks, "permission request")}, ${plural(s.terminals, "terminal")}`),
      h("div", { class: "finding-counts" }, "findings: ",
        Object.keys(s.findings).length ? Object.entries(s.findings).map(([code, n]) => badge(`${code} ${n}`))
          : "none")));
  });
}

// A finding, with who sent its line; `group` (findings' indices): the losses alike it stands for.
function findingNode(f, group) {
  const [n, side, path, code, kind, message, sender] = f;
  const where = [R.sides.length > 1 ? `${R.sides[side].name} side` : null, sender ? `sent by the ${sender}` : null]
    .filter((x) => x);
  const lines = Array.isArray(group) ? group.map((i) => R.findings[i][0]) : null;
  return h("div", { class: "finding kind-" + kind, "data-code": code, "data-line": n,
    "data-sender": sender || null, "data-count": lines ? lines.length : null },
  h("span", { class: "code" }, code), lineLink(n, side), where.length ? ` (${where.join(", ")})` : "",
  ": ", h("code", {}, path), " ", message,
  lines ? h("span", { class: "alike" }, ` · the same on ${plural(lines.length, "line")}: `,
    lines.slice(0, 20).map((l, i) => [i ? ", " : "", lineLink(l, side, String(l))]),
    lines.length > 20 ? ` and ${lines.length - 20} more` : "") : "");
}

function renderFindings() {
  for (const f of R.findings) {
    const key = `${f[1]}:${f[0]}`;
    if (!findingsAt.has(key)) findingsAt.set(key, []);
    findingsAt.get(key).push(f);
  }
  const box = document.getElementById("findings");
  if (!R.findings.length) return;
  // Losses alike are listed once, at their first line (the others stay on their history entries).
  const groupAt = new Map(), grouped = new Set();
  for (const group of R.findingGroups || []) {
    groupAt.set(group[0], group);
    group.slice(1).forEach((i) => grouped.add(i));
  }
  const listed = R.findings.map((f, i) => i).filter((i) => !grouped.has(i));
  const list = h("div", {});
  const more = (from) => {
    listed.slice(from, from + HISTORY_PAGE).forEach((i) => list.append(findingNode(R.findings[i], groupAt.get(i))));
    if (from + HISTORY_PAGE < listed.length) {
      const button = h("button", { class: "more-button", type: "button", onclick: () => { button.remove(); more(from + HISTORY_PAGE); } },
        `show more (${listed.length - from - HISTORY_PAGE} left)`);
      list.append(button);
    }
  };
  more(0);
  box.append(h("details", { open: listed.length <= 30 },
    h("summary", {}, `Findings: ${plural(R.findings.length, "finding")}`,
      grouped.size ? `, ${listed.length.toLocaleString("en")} listed (losses alike as one)` : "",
      ` (schema, lint, unreadable lines${R.sides.length > 1 ? ", conversion losses" : ""})`),
    list));
}

function renderLooseAsks() {
  if (!R.looseAsks.length) return;
  const box = document.getElementById("loose");
  box.append(h("details", {}, h("summary", {}, `${plural(R.looseAsks.length, "permission request")} about no tool call shown here`),
    R.looseAsks.map(([side, index]) => askNode(side, R.sides[side].asks[index]))));
}

// ---------------------------------------------------------------------------------------------
// A card: each side's state after `line`, its permission requests and its history

async function renderCard(index) {
  const card = R.cards[index];
  const calls = cardCalls(card);
  const columns = [];
  let head = null;
  for (let side = 0; side < calls.length; side++) {
    const call = calls[side];
    const column = h("div", { class: "side", "data-side": R.sides[side].name });
    if (R.sides.length > 1) column.append(h("div", { class: "side-name" }, `${R.sides[side].name} · ${R.sides[side].label} (${R.sides[side].protocol})`));
    if (!call) {
      column.append(h("div", { class: "unseen" }, "never on this side"));
    } else {
      const d = await details(call);
      const at = lastAt(d.entries, line, (e) => e.l);
      if (at < 0) column.append(h("div", { class: "unseen" }, `not seen on this side by line ${line} (first on line ${call.first})`));
      else {
        const state = stateAt(d, at);
        head = head || state;
        await renderState(column, side, call, d, state);
      }
      renderAsks(column, side, call);
      column.append(renderHistory(index, side, call, d, at));
    }
    columns.push(column);
  }
  const title = head ? head.title : valueAt(calls.find((c) => c).title, Infinity);
  const folded = collapsedCards.has(index);
  const fold = h("button", { type: "button", class: "fold", "aria-expanded": String(!folded) }, folded ? "▸ show" : "▾ hide");
  const node = h("article", { class: "card" + (folded ? " collapsed" : ""), tabindex: -1,
    "data-card": index, "data-id": card.id, "data-session": card.session },
    h("div", { class: "card-head" }, fold, " ",
      h("span", { class: "title" }, title),
      head ? [badge(head.kind, "kind"), statusBadge(head.status)] : null,
      h("code", {}, card.id), R.sessions > 1 ? h("code", {}, ` · ${card.session}`) : " ",
      h("code", {}, ` · first on line ${card.first}`)),
    h("div", { class: "sides", style: `--sides:${calls.length}` }, columns));
  fold.addEventListener("click", () => { // fold the card to its head, or unfold it
    const now = !collapsedCards.delete(index);
    if (now) collapsedCards.add(index);
    node.classList.toggle("collapsed", now);
    fold.setAttribute("aria-expanded", String(!now));
    fold.textContent = now ? "▸ show" : "▾ hide";
  });
  return node;
}

async function renderState(column, side, call, d, state) {
  const field = (name) => (name in state.f ? d.values[state.f[name]] : undefined);
  column.append(h("div", { class: "state", hidden: R.sides.length === 1 },
    h("span", { class: "title" }, state.title), " ", badge(state.kind, "kind"), statusBadge(state.status)));
  const box = h("div", { class: "content" });
  if (state.c === null) box.append(h("div", { class: "null" }, "content cleared (null)"));
  else if (Array.isArray(state.c)) {
    box.append(...await contentNodes(d, state.c, side, call));
  }
  column.append(box);
  const locations = field("locations");
  if (Array.isArray(locations) && locations.length) {
    column.append(h("div", { class: "locations" }, "locations: ",
      locations.map((l, i) => [i ? ", " : "", h("code", {}, l.line ? `${l.path}:${l.line}` : l.path)])));
  }
  const rows = Object.keys(state.f).filter((name) => !["title", "kind", "status", "locations"].includes(name));
  if (rows.length) {
    column.append(h("table", { class: "fields" }, rows.map((name) => {
      const value = field(name);
      return h("tr", { "data-field": name }, h("td", {}, name),
        h("td", {}, value === null ? h("span", { class: "null" }, "null (cleared)") : h("code", {}, json(value))));
    })));
  }
}

// A terminal's text after its entry `at`: each entry keeps a prefix of the text and adds to it.
function terminalText(d, at) {
  let text = "";
  for (let i = 0; i <= at; i++) {
    const delta = d.entries[i].o;
    if (delta) text = text.slice(0, delta[0]) + delta[1];
  }
  return text;
}

async function terminalNode(side, session, id) {
  const terminal = R.sides[side].terminals.find((t) => t.session === session && t.id === id);
  if (!terminal) return h("div", { class: "unseen" }, `terminal ${id}: nothing reported about it`);
  const d = await details(terminal);
  const at = lastAt(d.entries, line, (e) => e.l);
  if (at < 0) return h("div", { class: "unseen" }, `terminal ${id}: not reported by line ${line}`);
  const text = terminalText(d, at);
  const f = d.entries[at].f;
  const field = (name) => (name in f ? d.values[f[name]] : undefined);
  const exit = field("exitStatus");
  return h("div", { class: "terminal-box", "data-terminal": id },
    h("div", {}, "terminal ", h("code", {}, id), field("cwd") ? [" in ", h("code", {}, field("cwd"))] : "",
      field("command") ? [": ", h("code", {}, field("command"))] : "",
      exit ? ` · exited ${exit.exitCode !== undefined ? exit.exitCode : ""}${exit.signal ? " " + exit.signal : ""}` : " · running",
      // v1 has display terminals only through the agent's `_meta` extension (D38 amended).
      R.sides[side].protocol === "v1" ? h("span", { class: "via" }, " · from the tool call's _meta (terminal extension)") : ""),
    h("pre", { class: "terminal" }, text));
}

function askNode(side, ask) {
  const answer = ask.answer && ask.answer.l <= line ? ask.answer : null;
  let said;
  if (!answer) said = ask.answer ? `waiting at line ${line} (answered on line ${ask.answer.l})` : "never answered in the log";
  else if (answer.outcome === "selected") said = `selected “${answer.name || answer.option}”${answer.kind ? ` (${answer.kind})` : ""}`;
  else if (answer.outcome === "error") said = `answered with an error${answer.error ? ": " + answer.error : ""}`;
  else said = answer.outcome;
  const waited = answer ? (answer.t !== null && ask.t !== null ? `after ${seconds(answer.t - ask.t)}`
    : `answered on line ${answer.l} (the log has no times)`) : "";
  const subject = ask.subject && ask.subject.type === "command"
    ? h("div", {}, "command: ", h("code", {}, `${ask.subject.cwd ? ask.subject.cwd + "$ " : ""}${ask.subject.command || ""}`)) : null;
  // What the request showed of the call (its `toolCall.content`), drawn as a call's content is.
  const shown = ask.content && ask.content.length ? h("div", { class: "ask-content" }, "Shown with it:") : null;
  if (shown) Promise.all(ask.content.map((item) => contentNode(item, side, ask.session))).then((nodes) => shown.append(...nodes));
  return h("div", { class: "ask", "data-line": ask.l },
    h("div", {}, h("strong", {}, "Permission asked"), " on ", lineLink(ask.l, side), ": ", h("span", { class: "ask-title" }, ask.title || "(no title)")),
    ask.description ? h("div", { class: "ask-description" }, ask.description) : null,
    subject,
    shown,
    h("ul", { class: "options" }, ask.options.map(([id, name, kind]) =>
      h("li", { class: answer && answer.option === id ? "chosen" : null }, `${name || id} `, h("code", {}, `${kind || ""}`)))),
    h("div", { class: "ask-answer" }, "Answer: ", h("strong", {}, said),
      answer ? [` by ${answer.by}`, answer.l ? [" on ", lineLink(answer.l, side)] : "", " ", waited] : ""));
}

function renderAsks(column, side, call) {
  for (const index of call.asks) {
    const ask = R.sides[side].asks[index];
    if (ask.l <= line) column.append(askNode(side, ask));
  }
}

// ---------------------------------------------------------------------------------------------
// Start

function options(select, values) {
  for (const value of [...values].sort()) select.append(h("option", { value }, value));
}

async function main() {
  R = await part("main");
  R.sessions = new Set(R.cards.map((c) => c.session)).size;
  document.getElementById("heading").textContent = visible(`acp-toolcalls inspect: ${R.name}`);
  const sessions = document.getElementById("f-session");
  for (const id of new Set(R.cards.map((c) => c.session))) {
    const title = Object.prototype.hasOwnProperty.call(R.sessionTitles, id) ? ` (${R.sessionTitles[id]})` : "";
    sessions.append(h("option", { value: id }, id + title));
  }
  const statuses = new Set(), kinds = new Set();
  R.calls.forEach((calls) => calls.forEach((c) => {
    c.status.forEach((p) => statuses.add(p[1]));
    c.kind.forEach((p) => kinds.add(p[1]));
  }));
  options(document.getElementById("f-status"), statuses);
  options(document.getElementById("f-kind"), kinds);
  const scrub = document.getElementById("scrub");
  scrub.max = R.lineCount;
  document.getElementById("scrub-n").max = R.lineCount;
  document.getElementById("scrub-max").textContent = R.lineCount;
  setLine(R.lineCount);
  renderSummary();
  renderFindings();
  renderLooseAsks();
  renderViews(); // views.js
  if (innerHeight < 700) document.getElementById("summary-box").open = false; // a small screen
  startList();
  await rebuild();
}

function fail(error) {
  document.getElementById("heading").textContent = `The report could not be shown: ${error}`;
  document.body.dataset.error = String(error);
}

main().catch(fail);
