// acp-toolcalls inspect --serve: the page in live mode (page.py's live_page inlines this file
// after the others; the static report never has it). Rules this file owns:
// - The data comes from the page's own server only, with the token of the page's URL: the
//   snapshot (/data), then the events (/events, server-sent), applied in order of `seq`. An
//   event out of order, a `resync` or a `forgot` loads the snapshot again.
// - An event only adds what Python computed (history entries, values, items, terminal output,
//   permission requests, findings, raw lines, the latency rows that changed, merged by sender
//   and method): no tool-call state is computed here either.
//   Log text goes in as text (`h`, `textContent`), as in the static page.
// - A permission request with no answer yet is shown waiting, highlighted, until its answer
//   comes. Lines the server could not take (`unseen`) are said above the views: what they did
//   is missing from the page. While the view is at the last line, it follows the new lines; while it is scrolled
//   to the bottom of the list, it stays there (the newest calls in sight).

// Function declarations, not constants: report.js's main() calls part() before this file's
// constants are set.
function liveUrl(path, query) {
  const token = new URLSearchParams(location.search).get("token") || "";
  return `${path}?token=${encodeURIComponent(token)}${query || ""}`;
}
function liveKey(...parts) { return parts.join("\u0000"); }
let liveEvents = null; // the EventSource
let liveBusy = Promise.resolve(); // events and resyncs are applied one at a time, in order
let liveRefresh = null; // the timer of the next redraw

// Replaces report.js's: the only part of a live page is the server's snapshot.
function part(id) {
  if (id !== "main") return Promise.reject(new Error(`a live page has no part ${id}`));
  return snapshot();
}

// Replaces report.js's: the lines the server still holds, sent with the events.
async function rawLine(n) {
  return R.liveLines.has(n) ? R.liveLines.get(n) : "(this line is no longer held by the live view)";
}

async function snapshot() {
  const response = await fetch(liveUrl("/data"), { cache: "no-store" });
  if (!response.ok) throw new Error(`the server answered ${response.status}`);
  const data = await response.json();
  data.liveLines = new Map(data.liveLines);
  data.liveCalls = new Map(); // side, session, id -> call
  data.liveCards = new Map(); // session, id -> card
  data.calls.forEach((calls, side) => calls.forEach((c) => data.liveCalls.set(liveKey(side, c.session, c.id), c)));
  data.cards.forEach((card) => data.liveCards.set(liveKey(card.session, card.id), card));
  return data;
}

const staticAskNode = askNode;
askNode = function (side, ask) { // eslint-disable-line no-func-assign
  const node = staticAskNode(side, ask);
  const answered = ask.answer !== null && ask.answer.l <= line;
  node.dataset.state = answered ? "answered" : "waiting";
  if (ask.answer === null) {
    node.classList.add("waiting");
    const said = node.querySelector(".ask-answer strong");
    if (said) said.textContent = "waiting for the answer";
  }
  return node;
};

const staticStartList = startList;
startList = function () { // eslint-disable-line no-func-assign
  staticStartList();
  listen();
};

function listen() {
  document.getElementById("heading").textContent = visible(`acp-toolcalls inspect (live): ${R.name}`);
  document.body.dataset.seq = R.seq;
  renderUnseen();
  liveEvents = new EventSource(liveUrl("/events", `&since=${R.seq}`));
  liveEvents.onopen = () => { document.body.dataset.live = "connected"; };
  liveEvents.onerror = () => { document.body.dataset.live = "reconnecting"; };
  liveEvents.onmessage = (message) => {
    const event = JSON.parse(message.data);
    liveBusy = liveBusy.then(() => take(event)).catch(fail);
  };
  liveEvents.addEventListener("resync", () => { liveBusy = liveBusy.then(resync).catch(fail); });
}

async function take(event) {
  if (event.seq <= R.seq) return; // already in the snapshot
  if (event.seq !== R.seq + 1 || event.forgot) return resync();
  apply(event);
  later();
}

async function resync() {
  const data = await snapshot();
  R = data;
  R.sessions = new Set(R.cards.map((c) => c.session)).size;
  heights = new Float64Array(R.cards.length);
  measuredSum = 0; measuredCount = 0;
  setLine(R.lineCount);
  later();
}

function apply(event) {
  const atEnd = line >= R.lineCount;
  for (const name of ["lineCount", "unseen", "started", "duration", "sessionTitles"]) R[name] = event[name];
  event.sides.forEach((side, position) => {
    if (position < R.sides.length) Object.assign(R.sides[position], side);
    else {
      R.sides.push({ ...side, asks: [], terminals: [] });
      R.calls.push([]);
      R.cards.forEach((card) => card.sides.push(null));
    }
  });
  for (const [side, index, entries, values, items] of event.calls) {
    let call = R.liveCalls.get(liveKey(side, index.session, index.id));
    if (!call) {
      call = { ...index, asks: [], loaded: { entries: [], values: [], items: [] } };
      R.liveCalls.set(liveKey(side, index.session, index.id), call);
      let card = R.liveCards.get(liveKey(index.session, index.id));
      if (!card) {
        card = { session: index.session, id: index.id, first: index.first, sides: R.sides.map(() => null) };
        R.cards.push(card);
        R.liveCards.set(liveKey(index.session, index.id), card);
      }
      card.sides[side] = R.calls[side].length;
      R.calls[side].push(call);
    } else Object.assign(call, index);
    const d = call.loaded;
    for (const entry of entries) d.entries.push(entry);
    for (const value of values) d.values.push(value);
    for (const item of items) d.items.push(item);
    delete d.appended; // content.js computes it again
  }
  for (const [side, session, id, entries, values] of event.terminals) {
    const terminals = R.sides[side].terminals;
    let terminal = terminals.find((t) => t.session === session && t.id === id);
    if (!terminal) terminals.push(terminal = { session, id, loaded: { entries: [], values: [] } });
    for (const entry of entries) terminal.loaded.entries.push(entry);
    for (const value of values) terminal.loaded.values.push(value);
  }
  for (const [side, index, request] of event.asks) {
    const known = R.sides[side].asks[index] !== undefined;
    R.sides[side].asks[index] = request;
    if (known) continue;
    const call = R.liveCalls.get(liveKey(side, request.session, request.call));
    if (call) call.asks.push(index); else R.looseAsks.push([side, index]);
  }
  for (const [side, changes] of event.latency || []) { // the rows that changed, by sender and method
    const view = R.sides[side].latency || (R.sides[side].latency = { rows: [] });
    const rows = new Map(view.rows.map((row) => [liveKey(row.sender, row.method), row]));
    for (const row of changes.rows) {
      const key = liveKey(row.sender, row.method);
      if (rows.has(key)) Object.assign(rows.get(key), row); else view.rows.push(row);
    }
    const { rows: _, ...counts } = changes; // times, stray, waiting, byMethod
    Object.assign(view, counts);
  }
  for (const finding of event.findings) R.findings.push(finding);
  for (const [n, text] of event.lines) R.liveLines.set(n, text);
  R.seq = event.seq;
  if (atEnd) setLine(R.lineCount);
}

// Conversion losses alike (side, session, path, reason) are one group, as in a finished report
// (a live loss carries its session, last).
function liveGroups() {
  const alike = new Map();
  R.findings.forEach((f, i) => {
    if (f[3] !== "conversion-loss") return;
    const key = JSON.stringify([f[1], f[7] ?? null, f[2], f[5]]);
    if (alike.has(key)) alike.get(key).push(i); else alike.set(key, [i]);
  });
  return [...alike.values()].filter((group) => group.length > 1);
}

// The first card whose call on `side` line `n` touched: for a finding that came in an event
// (the snapshot's are in findingCards).
function liveCardAt(side, n) {
  const index = R.cards.findIndex((card) => {
    const at = card.sides[side];
    const call = at == null ? null : R.calls[side][at];
    return Boolean(call && call.loaded) && call.loaded.entries.some((entry) => entry.l === n);
  });
  return index < 0 ? null : index;
}

// Draw again what changed, once for the events of one moment, and at most every
// REDRAW_MS: a busy session's page costs the machine the session runs on a bounded share.
const REDRAW_MS = 50;
let liveDrawnAt = -Infinity;
function later() {
  if (liveRefresh !== null) return;
  liveRefresh = setTimeout(() => {
    liveRefresh = null;
    liveDrawnAt = performance.now();
    redraw();
  }, Math.max(20, liveDrawnAt + REDRAW_MS - performance.now()));
}

function redraw() {
  const bottom = document.documentElement.scrollHeight - innerHeight - scrollY < 40;
  R.sessions = new Set(R.cards.map((c) => c.session)).size;
  if (heights.length < R.cards.length) {
    const grown = new Float64Array(R.cards.length);
    grown.set(heights);
    heights = grown;
  }
  for (const id of ["scrub", "scrub-n"]) document.getElementById(id).max = R.lineCount;
  document.getElementById("scrub-max").textContent = R.lineCount;
  addOptions();
  renderSummary();
  R.findingGroups = liveGroups();
  findingsAt.clear();
  document.getElementById("findings").replaceChildren();
  renderFindings();
  document.getElementById("loose").replaceChildren();
  renderLooseAsks();
  renderViews();
  renderUnseen();
  document.body.dataset.seq = R.seq;
  rebuild().then(async (done) => {
    if (done && bottom) { // draw the list's end, then stay at the bottom
      const last = shownCards[shownCards.length - 1];
      if (last !== undefined) await enqueue(() => draw(drawn, { card: last, top: innerHeight / 2 }));
      window.scrollTo(0, document.documentElement.scrollHeight);
    }
    document.body.dataset.drawn = R.seq;
  });
}

// Lines the session passed that the server could not take: the page misses what they did.
function renderUnseen() {
  let note = document.getElementById("unseen");
  if (!R.unseen) { if (note) note.remove(); return; }
  if (!note) {
    note = h("p", { id: "unseen", role: "status" });
    document.querySelector("main").prepend(note);
  }
  note.textContent = `${R.unseen} line(s) of the session were not shown: they came faster than `
    + "this page could take them, and what they did is missing here (bridge --log keeps every line).";
  document.body.dataset.unseen = R.unseen;
}

// The filters' choices that new calls and sessions bring.
function addOptions() {
  const add = (id, values, label) => {
    const select = document.getElementById(id);
    const have = new Set([...select.options].map((o) => o.value));
    for (const value of [...values].sort()) {
      if (!have.has(value)) select.append(h("option", { value }, label ? label(value) : value));
    }
  };
  const statuses = new Set(), kinds = new Set();
  R.calls.forEach((calls) => calls.forEach((c) => {
    c.status.forEach((p) => statuses.add(p[1]));
    c.kind.forEach((p) => kinds.add(p[1]));
  }));
  add("f-status", statuses);
  add("f-kind", kinds);
  const titled = (id) => (Object.prototype.hasOwnProperty.call(R.sessionTitles, id) ? `${id} (${R.sessionTitles[id]})` : id);
  add("f-session", new Set(R.cards.map((c) => c.session)), titled);
}
