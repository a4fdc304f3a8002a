// acp-toolcalls inspect: renders and filters the report's data; computes no tool-call state.
// Every state shown was computed in Python (acp_toolcalls/report/history.py): the state after
// line N is the last history entry at or before N. Log text is always inserted as text, with
// the characters that would reorder or hide it shown as escapes (`visible`).
"use strict";

const FINAL = new Set(["completed", "failed", "cancelled"]);
const PAGE = 40; // cards rendered at a time, more as the list scrolls into view
const HISTORY_PAGE = 200; // history entries rendered at a time

const parts = new Map(); // part id -> Promise of its JSON
let R = null; // the main part
let line = 0; // the scrubber: the state after this line
let shownCards = []; // indices of the cards that pass the filters
let rendered = 0; // how many of them are in the document
let generation = 0; // bumps when the list is rebuilt; stale async renders stop
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
  h("button", { class: "line-link", type: "button", "data-line": n, onclick: () => jump(n, side) },
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

function findingNode(f) {
  const [n, side, path, code, kind, message] = f;
  return h("div", { class: "finding kind-" + kind, "data-code": code, "data-line": n },
    h("span", { class: "code" }, code), lineLink(n, side), R.sides.length > 1 ? ` (${R.sides[side].name})` : "",
    ": ", h("code", {}, path), " ", message);
}

function renderFindings() {
  for (const f of R.findings) {
    const key = `${f[1]}:${f[0]}`;
    if (!findingsAt.has(key)) findingsAt.set(key, []);
    findingsAt.get(key).push(f);
  }
  const box = document.getElementById("findings");
  if (!R.findings.length) return;
  const list = h("div", {});
  const more = (from) => {
    R.findings.slice(from, from + HISTORY_PAGE).forEach((f) => list.append(findingNode(f)));
    if (from + HISTORY_PAGE < R.findings.length) {
      const button = h("button", { class: "more-button", type: "button", onclick: () => { button.remove(); more(from + HISTORY_PAGE); } },
        `show more (${R.findings.length - from - HISTORY_PAGE} left)`);
      list.append(button);
    }
  };
  more(0);
  box.append(h("details", { open: R.findings.length <= 30 },
    h("summary", {}, `Findings: ${plural(R.findings.length, "finding")} (schema, lint, unreadable lines${R.sides.length > 1 ? ", conversion losses" : ""})`),
    list));
}

function renderLooseAsks() {
  if (!R.looseAsks.length) return;
  const box = document.getElementById("loose");
  box.append(h("details", {}, h("summary", {}, `${plural(R.looseAsks.length, "permission request")} about no tool call shown here`),
    R.looseAsks.map(([side, index]) => askNode(side, R.sides[side].asks[index]))));
}

// ---------------------------------------------------------------------------------------------
// Filters and the card list

function passes(card) {
  const session = document.getElementById("f-session").value;
  if (session && card.session !== session) return false;
  const status = document.getElementById("f-status").value;
  const kind = document.getElementById("f-kind").value;
  const calls = cardCalls(card).filter((c) => c && c.first <= line);
  if (!calls.length) return false;
  if (status) {
    const ok = calls.some((c) => {
      const s = valueAt(c.status, line);
      return status === "open" ? !FINAL.has(s) : s === status;
    });
    if (!ok) return false;
  }
  if (kind && !calls.some((c) => valueAt(c.kind, line) === kind)) return false;
  return true;
}

async function searched(card, text) {
  if (!text) return true;
  const calls = cardCalls(card);
  for (let side = 0; side < calls.length; side++) {
    const c = calls[side];
    if (!c || c.first > line) continue;
    if (c.id.toLowerCase().includes(text)) return true;
    if ((valueAt(c.title, line) || "").toLowerCase().includes(text)) return true;
    const d = await details(c);
    const entry = d.entries[lastAt(d.entries, line, (e) => e.l)];
    if (entry && Array.isArray(entry.s.c)) {
      const items = d.items.slice(entry.s.c[0], entry.s.c[1]);
      if (json(items).toLowerCase().includes(text)) return true;
    }
  }
  return false;
}

async function rebuild() {
  const mine = ++generation;
  const text = document.getElementById("f-text").value.trim().toLowerCase();
  const shownLabel = document.getElementById("shown");
  if (text) shownLabel.textContent = "searching…";
  const list = [];
  for (let i = 0; i < R.cards.length; i++) {
    if (!passes(R.cards[i])) continue;
    if (text && !(await searched(R.cards[i], text))) continue;
    if (mine !== generation) return;
    list.push(i);
  }
  if (mine !== generation) return;
  shownCards = list;
  rendered = 0;
  document.getElementById("cards").replaceChildren();
  const total = R.cards.filter((c) => cardCalls(c).some((x) => x && x.first <= line)).length;
  shownLabel.textContent = `showing ${list.length.toLocaleString("en")} of ${total.toLocaleString("en")} calls seen by line ${line}`;
  await fillList(mine);
  if (mine === generation) document.body.dataset.shown = line; // for tests: the list is drawn
}

const nearBottom = () => document.getElementById("more").getBoundingClientRect().top < innerHeight + 600;
let filling = null; // the running fill of the list: one at a time, in order

function fillList(mine) {
  if (!filling || filling.mine !== mine) {
    const run = (async () => {
      do await renderMore(mine);
      while (mine === generation && rendered < shownCards.length && nearBottom());
    })();
    filling = { mine, run };
    run.finally(() => { if (filling && filling.run === run) filling = null; });
  }
  return filling.run;
}

async function renderMore(mine) {
  const box = document.getElementById("cards");
  const upto = Math.min(shownCards.length, rendered + PAGE);
  const batch = shownCards.slice(rendered, upto);
  rendered = upto;
  const nodes = [];
  for (const index of batch) {
    const node = await renderCard(index);
    if (mine !== generation) return;
    nodes.push(node);
  }
  box.append(...nodes);
  if (!document.body.dataset.ready) {
    document.body.dataset.ready = "1";
    performance.mark("cards-shown");
  }
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
        const state = d.entries[at].s;
        head = head || state;
        await renderState(column, side, call, d, state);
      }
      renderAsks(column, side, call);
      column.append(renderHistory(index, side, call, d, at));
    }
    columns.push(column);
  }
  const title = head ? head.title : valueAt(calls.find((c) => c).title, Infinity);
  return h("article", { class: "card", "data-card": index, "data-id": card.id, "data-session": card.session },
    h("div", { class: "card-head" },
      h("span", { class: "title" }, title),
      head ? [badge(head.kind, "kind"), statusBadge(head.status)] : null,
      h("code", {}, card.id), R.sessions > 1 ? h("code", {}, ` · ${card.session}`) : " ",
      h("code", {}, ` · first on line ${card.first}`)),
    h("div", { class: "sides", style: `--sides:${calls.length}` }, columns));
}

async function renderState(column, side, call, d, state) {
  const field = (name) => (name in state.f ? d.values[state.f[name]] : undefined);
  column.append(h("div", { class: "state", hidden: R.sides.length === 1 },
    h("span", { class: "title" }, state.title), " ", badge(state.kind, "kind"), statusBadge(state.status)));
  const box = h("div", { class: "content" });
  if (state.c === null) box.append(h("div", { class: "null" }, "content cleared (null)"));
  else if (Array.isArray(state.c)) {
    for (const item of d.items.slice(state.c[0], state.c[1])) box.append(await contentNode(item, side, call.session));
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

async function contentNode(item, side, session) {
  if (item && item.type === "content" && item.content) {
    const block = item.content;
    if (block.type === "text") return h("pre", { class: "text" }, block.text);
    if (block.type === "resource" && block.resource && typeof block.resource.text === "string")
      return h("pre", { class: "text" }, block.resource.text);
    if (block.type === "resource_link") return h("div", {}, "link: ", h("code", {}, block.uri || ""), " ", block.name || "");
    return h("div", {}, `[${block.type || "content"}${block.mimeType ? " " + block.mimeType : ""}]`);
  }
  if (item && item.type === "diff") return diffNode(item);
  if (item && item.type === "terminal") return terminalNode(side, session, item.terminalId);
  if (item && item.type === "session" && typeof item.sessionId === "string") return sessionNode(item.sessionId);
  return h("pre", { class: "json" }, pretty(item));
}

// A `session` item: a reference to another session (a subagent's). A link that shows that
// session's calls when the log has them (the session filter), plain text otherwise.
function sessionNode(id) {
  const title = Object.prototype.hasOwnProperty.call(R.sessionTitles, id) ? R.sessionTitles[id] : null;
  const calls = R.cards.filter((c) => c.session === id).length;
  const label = ["session ", h("code", {}, id), title ? [" “", title, "”"] : ""];
  if (!calls) return h("div", { class: "session-ref", "data-session": id }, label, " (no calls of it in this log)");
  const open = (event) => { event.preventDefault(); showSession(id); };
  return h("div", { class: "session-ref", "data-session": id },
    h("a", { href: "#", class: "session-link", "data-session": id, onclick: open }, label), ` · ${plural(calls, "tool call")}`);
}

async function showSession(id) {
  document.getElementById("f-session").value = id;
  await rebuild();
  document.getElementById("cards").scrollIntoView({ block: "start" });
}

function diffNode(item) {
  const node = h("div", { class: "diff" });
  for (const change of item.changes || []) {
    node.append(h("div", { class: "file" }, `${change.operation || "change"} ${change.path || ""}`,
      change.oldPath ? ` (from ${change.oldPath})` : ""));
  }
  const text = item.patch && typeof item.patch.text === "string" ? item.patch.text : null;
  if (text === null) return node;
  const pre = h("pre", { class: "patch" });
  for (const row of text.split("\n")) {
    let cls = "ctx";
    if (row.startsWith("+++") || row.startsWith("---") || row.startsWith("diff ")) cls = "file";
    else if (row.startsWith("+")) cls = "add";
    else if (row.startsWith("-")) cls = "del";
    else if (row.startsWith("@@")) cls = "hunk";
    pre.append(h("span", { class: cls }, row), cls === "add" || cls === "del" || cls === "hunk" ? "" : "\n");
  }
  node.append(pre);
  return node;
}

async function terminalNode(side, session, id) {
  const terminal = R.sides[side].terminals.find((t) => t.session === session && t.id === id);
  if (!terminal) return h("div", { class: "unseen" }, `terminal ${id}: nothing reported about it`);
  const d = await details(terminal);
  const at = lastAt(d.entries, line, (e) => e.l);
  if (at < 0) return h("div", { class: "unseen" }, `terminal ${id}: not reported by line ${line}`);
  let text = ""; // the text after entry `at`: each entry keeps a prefix and adds to it
  for (let i = 0; i <= at; i++) {
    const delta = d.entries[i].o;
    if (delta) text = text.slice(0, delta[0]) + delta[1];
  }
  const f = d.entries[at].f;
  const field = (name) => (name in f ? d.values[f[name]] : undefined);
  const exit = field("exitStatus");
  return h("div", { class: "terminal-box", "data-terminal": id },
    h("div", {}, "terminal ", h("code", {}, id), field("cwd") ? [" in ", h("code", {}, field("cwd"))] : "",
      field("command") ? [": ", h("code", {}, field("command"))] : "",
      exit ? ` · exited ${exit.exitCode !== undefined ? exit.exitCode : ""}${exit.signal ? " " + exit.signal : ""}` : " · running"),
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
  return h("div", { class: "ask", "data-line": ask.l },
    h("div", {}, h("strong", {}, "Permission asked"), " on ", lineLink(ask.l, side), ": ", h("span", { class: "ask-title" }, ask.title || "(no title)")),
    ask.description ? h("div", { class: "ask-description" }, ask.description) : null,
    subject,
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

const VERBS = { set: "set", same: "sent again", clear: "cleared", append: "appended",
  replace: "replaced", created: "first seen", reopened: "reopened" };

function changeNode(change, d) {
  const value = (index) => (index < 0 ? h("span", { class: "unset" }, "(never set)") : h("code", {}, json(d.values[index])));
  const range = (r) => (r === -1 ? "(never set)" : r === null ? "null" : plural(r[1] - r[0], "item"));
  const [kind, name] = change;
  const node = (...body) => h("span", { class: `chg chg-${kind}`, "data-field": name },
    h("b", { class: "verb" }, VERBS[kind] || kind), " ", body);
  switch (kind) {
    case "created": return node();
    case "reopened": return node(`a finished call (${change[1]}) made ${change[2]}`);
    case "same": return node(`${name} = `, value(change[2]));
    case "append": return node(`${name} chunk: `, h("code", {}, json(d.items[change[2]]).slice(0, 300)));
    default:
      if (name === "content") {
        const to = change[3];
        const items = Array.isArray(to) ? d.items.slice(to[0], Math.min(to[1], to[0] + 3)) : [];
        return node(`content: ${range(change[2])} → ${to === null ? "null" : plural(to[1] - to[0], "item")}`,
          items.map((item) => [" ", h("code", {}, json(item).slice(0, 200))]));
      }
      return node(`${name}: `, value(change[2]), " → ",
        kind === "clear" && d.values[change[3]] === null ? h("span", { class: "null" }, "null") : value(change[3]));
  }
}

function renderHistory(index, side, call, d, at) {
  const key = `${index}:${side}`;
  const list = h("ol", { class: "entries" });
  const box = h("details", { class: "history", open: openHistories.has(key) },
    h("summary", {}, `History: ${plural(d.entries.length, "message")} touched this call`), list);
  let filled = 0;
  const fill = () => {
    const upto = Math.min(d.entries.length, filled + HISTORY_PAGE);
    for (let i = filled; i < upto; i++) {
      const e = d.entries[i];
      const cls = ["entry", i === at ? "current" : "", e.l > line ? "future" : ""].join(" ");
      const found = findingsAt.get(`${side}:${e.l}`) || [];
      const item = h("li", { class: cls, "data-line": e.l, onclick: () => jump(e.l, side, key, item) },
        h("button", { class: "line-link", type: "button", "data-line": e.l }, `line ${e.l}`), when(e.t),
        e.c.map((change) => changeNode(change, d)),
        found.map(findingNode));
      list.append(item);
    }
    filled = upto;
    if (filled < d.entries.length) {
      const button = h("button", { class: "more-button", type: "button", onclick: () => { button.remove(); fill(); } },
        `show more (${d.entries.length - filled} left)`);
      list.append(button);
    }
  };
  if (box.open) fill();
  box.addEventListener("toggle", () => {
    if (box.open) { openHistories.add(key); if (!filled) fill(); } else openHistories.delete(key);
  });
  return box;
}

// ---------------------------------------------------------------------------------------------
// The scrubber and the raw line

function setLine(n) {
  line = Math.max(0, Math.min(R.lineCount, Math.floor(Number(n) || 0)));
  document.getElementById("scrub").value = line;
  document.getElementById("scrub-n").value = line;
  document.body.dataset.line = line;
}

// Show the state after line n: the list is drawn again for it, the raw line opens, and the
// entry clicked (if any) stays where it was on the screen.
async function jump(n, side, historyKey, clicked) {
  const anchor = clicked ? clicked.getBoundingClientRect().top : null;
  setLine(n);
  if (historyKey) openHistories.add(historyKey);
  const before = generation;
  await Promise.all([rebuild(), showRaw(n)]); // rebuild() counts one generation on
  if (generation !== before + 1) return; // another jump or filter came meanwhile
  document.querySelectorAll(".entry.chosen").forEach((e) => e.classList.remove("chosen"));
  document.querySelectorAll(`.entry[data-line="${n}"]`).forEach((e) => e.classList.add("chosen"));
  if (historyKey) {
    const [card, column] = historyKey.split(":");
    const entry = document.querySelector(
      `.card[data-card="${card}"] .side:nth-child(${Number(column) + 1}) .entry[data-line="${n}"]`);
    if (entry && anchor !== null) window.scrollBy(0, entry.getBoundingClientRect().top - anchor);
  }
  document.body.dataset.jumped = n; // for tests: the jump is done
}

async function showRaw(n) {
  const panel = document.getElementById("raw");
  let text = n >= 1 ? await rawLine(n) : "";
  try { text = pretty(JSON.parse(text)); } catch (error) { /* not JSON: shown as it is */ }
  document.getElementById("raw-title").textContent = `Line ${n}`;
  document.getElementById("raw-text").textContent = visible(text);
  const found = R.findings.filter((f) => f[0] === n);
  document.getElementById("raw-findings").replaceChildren(...found.map(findingNode));
  panel.hidden = false;
  panel.dataset.line = n;
}

async function focusCall(side, index) {
  const cardIndex = R.cards.findIndex((c) => c.sides[side] === index);
  if (!shownCards.includes(cardIndex)) {
    document.getElementById("f-status").value = "";
    document.getElementById("f-kind").value = "";
    document.getElementById("f-session").value = "";
    document.getElementById("f-text").value = "";
    setLine(R.lineCount);
    await rebuild();
  }
  while (!document.querySelector(`#cards > .card[data-card="${cardIndex}"]`) && rendered < shownCards.length) {
    await fillList(generation);
    if (!document.querySelector(`#cards > .card[data-card="${cardIndex}"]`)) await renderMore(generation);
  }
  const node = document.querySelector(`#cards > .card[data-card="${cardIndex}"]`);
  if (node) {
    node.scrollIntoView({ block: "start" });
    node.classList.add("flash");
    setTimeout(() => node.classList.remove("flash"), 1500);
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
  let pending = null;
  const later = () => { clearTimeout(pending); pending = setTimeout(rebuild, 120); };
  scrub.addEventListener("input", () => { setLine(scrub.value); later(); });
  document.getElementById("scrub-n").addEventListener("change", (e) => { setLine(e.target.value); rebuild(); });
  document.getElementById("scrub-prev").addEventListener("click", () => { setLine(line - 1); rebuild(); });
  document.getElementById("scrub-next").addEventListener("click", () => { setLine(line + 1); rebuild(); });
  document.getElementById("f-status").addEventListener("change", rebuild);
  document.getElementById("f-kind").addEventListener("change", rebuild);
  document.getElementById("f-session").addEventListener("change", rebuild);
  document.getElementById("f-text").addEventListener("input", later);
  document.getElementById("raw-close").addEventListener("click", () => { document.getElementById("raw").hidden = true; });
  new IntersectionObserver((seen) => {
    if (seen.some((e) => e.isIntersecting) && R && rendered < shownCards.length) fillList(generation);
  }, { rootMargin: "600px" }).observe(document.getElementById("more"));
  await rebuild();
}

main().catch((error) => {
  document.getElementById("heading").textContent = `The report could not be shown: ${error}`;
  document.body.dataset.error = String(error);
});
