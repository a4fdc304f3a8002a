// acp-toolcalls inspect: a call's content items and its history.
// Rules this file owns:
// - A content item is shown by its type: text as text, a diff coloured, a terminal with its
//   output, a session as a link to its calls, anything else as JSON.
// - A run of text chunks appended one by one (a streamed output) is one item: their text
//   joined, the count of chunks, and a toggle that shows each chunk apart.
// - A call's history lists, per line that touched it, what the line did to each field, with
//   the findings of that line; the entries after `line` are marked (not dimmed below 4.5:1).

let chosenLine = null; // the line of the last jump: its history entries are marked
const apartRuns = new WeakMap(); // call -> first items of its runs shown chunk by chunk

// The items of the call's content range `c`, a run of appended text chunks as one node.
async function contentNodes(d, c, side, call) {
  if (!d.appended) { // the items that came as chunks, once per call
    d.appended = new Set();
    for (const e of d.entries) for (const change of e.c) if (change[0] === "append") d.appended.add(change[2]);
  }
  const nodes = [];
  let run = [];
  const flush = () => {
    if (run.length > 1) nodes.push(runNode(call, run));
    else if (run.length) nodes.push(h("pre", { class: "text" }, d.items[run[0]].content.text));
    run = [];
  };
  for (let i = c[0]; i < c[1]; i++) {
    const item = d.items[i];
    const text = item && item.type === "content" && item.content && item.content.type === "text";
    if (text && d.appended.has(i)) { run.push(i); continue; }
    flush();
    nodes.push(await contentNode(item, side, call.session));
  }
  flush();
  return nodes;
}

function runNode(call, run) {
  const d = call.loaded;
  if (!apartRuns.has(call)) apartRuns.set(call, new Set());
  const apart = apartRuns.get(call);
  const label = () => (apart.has(run[0]) ? "join them" : "show each");
  const toggle = h("button", { type: "button", class: "run-toggle", "aria-expanded": String(apart.has(run[0])) }, label());
  const node = h("div", { class: "run" + (apart.has(run[0]) ? " apart" : ""), "data-chunks": run.length },
    h("div", { class: "run-head" }, `${plural(run.length, "chunk")} appended `, toggle),
    h("pre", { class: "text joined" }, run.map((i) => h("span", { class: "chunk" }, d.items[i].content.text))));
  toggle.addEventListener("click", () => {
    if (!apart.delete(run[0])) apart.add(run[0]);
    node.classList.toggle("apart", apart.has(run[0]));
    toggle.setAttribute("aria-expanded", String(apart.has(run[0])));
    toggle.textContent = label();
  });
  return node;
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

// A v1 diff as a v1 editor got it (`path`, `oldText`, `newText`), drawn as a patch: the lines
// between the texts' common first and last lines removed and added, three lines around them.
function v1Patch(item) {
  const old = typeof item.oldText === "string" ? item.oldText.split("\n") : [];
  const now = item.newText.split("\n");
  let head = 0, tail = 0;
  while (head < old.length && head < now.length && old[head] === now[head]) head++;
  while (tail < old.length - head && tail < now.length - head
    && old[old.length - 1 - tail] === now[now.length - 1 - tail]) tail++;
  const lines = (list, from, to, mark) => list.slice(Math.max(0, from), to).map((l) => mark + l);
  return [`--- ${item.path}`, `+++ ${item.path}`, ...lines(old, head - 3, head, " "),
    ...lines(old, head, old.length - tail, "-"), ...lines(now, head, now.length - tail, "+"),
    ...lines(old, old.length - tail, old.length - tail + 3, " ")].join("\n");
}

function diffNode(item) {
  const node = h("div", { class: "diff" });
  for (const change of item.changes || []) {
    node.append(h("div", { class: "file" }, `${change.operation || "change"} ${change.path || ""}`,
      change.oldPath ? ` (from ${change.oldPath})` : ""));
  }
  const v1 = !item.patch && typeof item.path === "string" && typeof item.newText === "string";
  const text = item.patch && typeof item.patch.text === "string" ? item.patch.text : v1 ? v1Patch(item) : null;
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
      const cls = ["entry", i === at ? "current" : "", e.l > line ? "future" : "", e.l === chosenLine ? "chosen" : ""].join(" ");
      const found = findingsAt.get(`${side}:${e.l}`) || [];
      const item = h("li", { class: cls, "data-line": e.l, tabindex: -1, onclick: () => jump(e.l, side, item) },
        h("button", { class: "line-link", type: "button", "data-line": e.l }, `line ${e.l}`), when(e.t),
        e.c.map((change) => changeNode(change, d)),
        found.map((f) => findingNode(f)));
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

