// acp-toolcalls inspect: the latency view and the permission audit view (issue 31).
// Rules this file owns:
// - Both views show the whole log (or, live, all of it so far), not the state after the
//   scrubber's line. Every figure was computed in Python (report/latency.py: the requests'
//   rows per side; report/asks.py: each permission request's verdict, edit and diff, and the
//   totals); this file only lays them out. A wait is a request's answer time minus its own,
//   as the cards say it.
// - A side's latency is a table per side: sender, method, requests, answered, errors, no
//   answer, p50, p99, max. Without times (a plain log) or with times that never move, the
//   table says so and has counts only. Each permission request's wait is listed below it.
// - The audit is one table of every permission request (side, line, what was asked, the
//   options offered, the one selected, the verdict, who answered, the wait, the edit and its
//   diff), with each side's totals; an edit asked without its diff is marked, and counted in
//   the view's heading, which shows even when the view is folded.
// - Log text goes in as text (`h`), never as markup.

const AUDIT_PAGE = 200; // audit rows rendered at a time

function ms(value) {
  if (value === null || value === undefined) return "—";
  if (value < 10) return `${value.toFixed(2)} ms`;
  if (value < 1000) return `${value.toFixed(1)} ms`;
  return seconds(value / 1000);
}

const sideTitle = (side) => (R.sides.length > 1 ? `${side.name} side: ${side.label}` : side.label);
const waitOf = (ask) => (ask.answer && ask.answer.t !== null && ask.t !== null ? ask.answer.t - ask.t : null);

function cellTable(caption, head, body) {
  return h("table", { class: "view-table" },
    h("caption", {}, caption),
    h("thead", {}, h("tr", {}, head.map((text) => h("th", { scope: "col" }, text)))),
    h("tbody", {}, body));
}

// ---------------------------------------------------------------------------------------------
// Latency

const TIMES = {
  none: "the log has no times: counts only",
  constant: "every record has the same time: counts only",
  measured: null,
};

function latencyNode(side, position) {
  const view = side.latency;
  const node = h("div", { class: "view-side", "data-side": side.name });
  if (!view) return node;
  const said = TIMES[view.times];
  const rows = view.rows.map((row) => h("tr", { "data-method": row.method, "data-sender": row.sender },
    h("td", {}, row.sender), h("td", {}, h("code", {}, row.method)),
    h("td", { class: "num" }, row.count), h("td", { class: "num" }, row.answered),
    h("td", { class: "num" }, row.errors), h("td", { class: "num" + (row.unanswered ? " warn" : "") }, row.unanswered),
    ["p50", "p99", "max"].map((name) => h("td", { class: "num", "data-figure": name, "data-ms": row[name] },
      ms(row[name]), row[name] !== null && !row.exact && name !== "max" ? " ≈" : ""))));
  const extra = [view.byMethod ? "senders read from the methods (the log has no directions)" : null,
    view.waiting ? `${plural(view.waiting, "request")} waiting` : null,
    view.stray ? `${plural(view.stray, "response")} to no request seen` : null].filter((x) => x);
  node.append(cellTable(
    [sideTitle(side), said ? ` · ${said}` : "", extra.length ? ` · ${extra.join(", ")}` : ""],
    ["sent by", "method", "requests", "answered", "errors", "no answer", "p50", "p99", "max"],
    rows.length ? rows : h("tr", {}, h("td", { colspan: 9 }, "no requests"))));
  const asks = side.asks || [];
  if (asks.length) {
    const shown = asks.slice(-AUDIT_PAGE);
    const waits = shown.map((ask) => {
      const wait = waitOf(ask);
      return h("li", { "data-line": ask.l }, lineLink(ask.l, position), " ", ask.title || "(no title)", ": ",
        ask.answer === null ? h("strong", { class: "warn" }, "no answer (yet)")
          : wait === null ? `answered on line ${ask.answer.l}` : `waited ${seconds(wait)}`);
    });
    // Their distribution is the permission rows' (sent by the agent, or the proxy for it).
    const spread = view.rows.filter((row) => row.method === "session/request_permission" && row.p50 !== null)
      .map((row) => ` p50 ${ms(row.p50)}, p99 ${ms(row.p99)}, max ${ms(row.max)} (${plural(row.timed, "wait")})`);
    node.append(h("div", { class: "waits" },
      `How long each permission request waited for its answer${shown.length < asks.length ? ` (the last ${shown.length})` : ""}:`,
      spread.length ? spread.join(";") : "", h("ul", {}, waits)));
  }
  return node;
}

function renderLatency() {
  const box = document.getElementById("latency-view");
  const requests = R.sides.reduce((n, side) => n + (side.latency ? side.latency.rows.reduce((m, r) => m + r.count, 0) : 0), 0);
  box.querySelector("summary").textContent = `Latency: ${plural(requests, "request")} by method`;
  box.querySelector(".view-body").replaceChildren(...R.sides.map(latencyNode));
}

// ---------------------------------------------------------------------------------------------
// Permission audit

const VERDICT_WORDS = { allowed: "allowed", rejected: "rejected", cancelled: "cancelled",
  error: "an error", other: "other" };

function auditRow(position, ask) {
  const side = R.sides[position];
  const answer = ask.answer;
  const chosen = answer && answer.outcome === "selected" ? (answer.name || answer.option) : null;
  const wait = waitOf(ask);
  const edit = !ask.edit ? "—" : ask.diff ? "edit, diff shown" : h("strong", { class: "warn" }, "edit without its diff");
  return h("tr", { "data-line": ask.l, "data-side": side.name, "data-verdict": answer ? answer.verdict : "unanswered",
    "data-edit": ask.edit ? (ask.diff ? "with-diff" : "without-diff") : null },
  h("td", {}, side.name), h("td", {}, lineLink(ask.l, position, String(ask.l))),
  h("td", {}, ask.title || "(no title)", ask.call ? [" ", h("code", {}, ask.call)] : ""),
  h("td", {}, ask.options.map(([id, name, kind], i) => [i ? ", " : "", `${name || id} `, h("code", {}, kind || "")])),
  h("td", {}, chosen === null ? "—" : chosen),
  h("td", { class: "verdict" }, answer ? VERDICT_WORDS[answer.verdict] || answer.verdict : h("strong", { class: "warn" }, "no answer (yet)")),
  h("td", {}, answer ? answer.by : "—"),
  h("td", { class: "num" }, answer ? (wait === null ? `line ${answer.l}` : seconds(wait)) : "—"),
  h("td", { class: "edit" }, edit));
}

function renderAudit() {
  const box = document.getElementById("audit-view");
  const asks = [];
  R.sides.forEach((side, position) => (side.asks || []).forEach((ask) => asks.push([position, ask])));
  asks.sort((a, b) => a[1].l - b[1].l || a[0] - b[0]);
  const missing = R.sides.reduce((n, side) => n + ((side.summary.audit || {}).editsWithoutDiff || 0), 0);
  box.querySelector("summary").replaceChildren(`Permission audit: ${plural(asks.length, "request")}`,
    missing ? h("strong", { class: "warn", "data-warning": "edits-without-diff" },
      ` · ⚠ ${plural(missing, "edit")} asked without ${missing === 1 ? "its" : "their"} diff`) : "");
  const totals = R.sides.map((side) => {
    const t = side.summary.audit || {};
    return h("div", { class: "audit-totals", "data-side": side.name }, `${sideTitle(side)}: `,
      ["allowed", "rejected", "cancelled", "error", "other", "unanswered"].map((name) =>
        badge(`${name === "unanswered" ? "no answer" : name} ${t[name] || 0}`, "verdict-" + name)),
      `edits ${t.edits || 0}`, t.editsWithoutDiff ? h("strong", { class: "warn" }, ` (${t.editsWithoutDiff} without their diff)`) : "");
  });
  const body = h("tbody", {});
  const more = (from) => {
    asks.slice(from, from + AUDIT_PAGE).forEach(([position, ask]) => body.append(auditRow(position, ask)));
    if (from + AUDIT_PAGE < asks.length) {
      const button = h("button", { class: "more-button", type: "button", onclick: () => { button.closest("tr").remove(); more(from + AUDIT_PAGE); } },
        `show more (${asks.length - from - AUDIT_PAGE} left)`);
      body.append(h("tr", {}, h("td", { colspan: 9 }, button)));
    }
  };
  more(0);
  const table = cellTable("Every permission request, in log order",
    ["side", "line", "asked", "options offered", "selected", "verdict", "answered by", "waited", "edit"], []);
  table.replaceChild(body, table.querySelector("tbody"));
  box.querySelector(".view-body").replaceChildren(...totals, asks.length ? table : h("p", {}, "No permission request."));
}

function renderViews() {
  renderLatency();
  renderAudit();
  document.body.dataset.views = R.seq === undefined ? "ready" : String(R.seq);
}
