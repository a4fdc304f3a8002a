// acp-toolcalls inspect: the list of cards, the filters, the scrubber and every jump.
// Rules this file owns:
// - The filters (status, kind, session, text) pick the cards shown after `line`. The text
//   search covers a call's id, title, content, fields (rawInput, locations, rawOutput...),
//   permission requests (title, description, options, command) and its terminals' output.
// - Only the cards in and near the viewport are in the document (a virtualized list): two
//   spacers stand for the others, each card counted at its measured height, or the mean of
//   those measured for a card not drawn yet. Each draw keeps one card (the anchor) where it
//   is on the screen, so measuring never moves what is read. Beyond LIMIT px the spacers are
//   scaled down (browsers cap an element's height).
// - A jump (to a call, a finding, a line, a session) draws the list around its target, puts
//   the target just below the sticky bar and gives it the focus. Esc closes the raw line.

const GAP = 10; // px between two cards: .card's margin-bottom
const MIN_CARDS = 12; // cards drawn from the anchor on, at least
const MAX_CARDS = 40; // cards in the document, at most
const LIMIT = 15e6; // px the spacers stand for, at most

let shownCards = []; // indices of the cards that pass the filters, ascending
let generation = 0; // bumps at each rebuild: a stale search stops
let drawn = 0; // bumps when shownCards is replaced: a stale draw stops
let heights = null; // Float64Array by card index: its measured height with GAP (0: not yet)
let measuredSum = 0, measuredCount = 0;
let offsets = null; // offsets[i]: the top of shownCards[i] in the list, unscaled; null: stale
const live = new Map(); // card index -> its node, for the cards in the document
let range = [0, 0]; // shownCards[range[0], range[1]) are in the document
let queue = Promise.resolve(); // list changes run one at a time, in order

// ---------------------------------------------------------------------------------------------
// Filters and search

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
  const has = (value) => value !== null && value !== undefined &&
    (typeof value === "string" ? value : json(value)).toLowerCase().includes(text);
  const calls = cardCalls(card);
  for (let side = 0; side < calls.length; side++) {
    const c = calls[side];
    if (!c || c.first > line) continue;
    if (has(c.id) || has(valueAt(c.title, line))) return true;
    const d = await details(c);
    const at = lastAt(d.entries, line, (e) => e.l);
    if (at < 0) continue;
    const state = stateAt(d, at);
    const items = Array.isArray(state.c) ? d.items.slice(state.c[0], state.c[1]) : [];
    if (items.length && has(items)) return true;
    if (Object.values(state.f).some((index) => has(d.values[index]))) return true;
    for (const index of c.asks) {
      const ask = R.sides[side].asks[index];
      if (ask.l <= line && has([ask.title, ask.description, ask.options, ask.subject])) return true;
    }
    for (const item of items) {
      if (!item || item.type !== "terminal") continue;
      const terminal = R.sides[side].terminals.find((t) => t.session === c.session && t.id === item.terminalId);
      if (!terminal) continue;
      const t = await details(terminal);
      const at = lastAt(t.entries, line, (e) => e.l);
      if (at >= 0 && has(terminalText(t, at))) return true;
    }
  }
  return false;
}

function clearFilters() {
  for (const id of ["f-status", "f-kind", "f-session", "f-text"]) document.getElementById(id).value = "";
}

// ---------------------------------------------------------------------------------------------
// The virtualized list

const box = () => document.getElementById("cards");
const mean = () => (measuredCount ? measuredSum / measuredCount : 240);
const sizeOf = (card) => heights[card] || mean();

function offsetsNow() {
  if (!offsets) {
    offsets = new Float64Array(shownCards.length + 1);
    for (let i = 0; i < shownCards.length; i++) offsets[i + 1] = offsets[i] + sizeOf(shownCards[i]);
  }
  return offsets;
}
const scale = () => Math.min(1, LIMIT / Math.max(1, offsetsNow()[shownCards.length]));

// The position of `card` in `list` (ascending), or where it would go.
function lowerBound(list, card) {
  let low = 0, high = list.length;
  while (low < high) {
    const middle = (low + high) >> 1;
    if (list[middle] < card) low = middle + 1; else high = middle;
  }
  return low;
}
const positionOf = (card) => {
  const p = lowerBound(shownCards, card);
  return shownCards[p] === card ? p : -1;
};

// The position whose unscaled span holds y.
function positionAt(y) {
  const o = offsetsNow();
  let low = 0, high = shownCards.length - 1;
  while (low < high) {
    const middle = (low + high + 1) >> 1;
    if (o[middle] <= y) low = middle; else high = middle - 1;
  }
  return low;
}

// The height of the sticky bar over the list, and where a jump puts its target.
const barHeight = () => {
  const bar = document.getElementById("bar");
  return getComputedStyle(bar).position === "sticky" ? bar.offsetHeight : 0;
};
const landing = () => barHeight() + 8;

// The card to keep in place: the first one on the screen, or the one a spacer holds there.
function currentAnchor() {
  const top = barHeight();
  for (const node of box().children) {
    if (!node.classList.contains("card")) continue;
    const r = node.getBoundingClientRect();
    if (r.bottom > top && r.top < innerHeight) return { card: Number(node.dataset.card), top: r.top };
  }
  const listTop = box().getBoundingClientRect().top;
  const y = top - listTop;
  const s = scale(), o = offsetsNow();
  if (y <= 0) return { card: shownCards[0], top: listTop };
  const below = document.getElementById("below");
  const belowTop = below.getBoundingClientRect().top - listTop;
  if (y < belowTop || range[1] >= shownCards.length) {
    const p = positionAt(y / s);
    return { card: shownCards[p], top: listTop + o[p] * s };
  }
  const p = positionAt(o[range[1]] + (y - belowTop) / s);
  return { card: shownCards[p], top: listTop + belowTop + (o[p] - o[range[1]]) * s };
}

const resizes = new ResizeObserver(() => request());

// Draw the cards around `anchor` ({card, top}: keep that card `top` px below the viewport's
// top; null: the current anchor), measure them, and put the anchor back in its place.
async function draw(mine, anchor) {
  for (let round = 0; round < 3 && shownCards.length; round++) {
    const target = anchor || currentAnchor();
    anchor = null;
    const p = Math.min(lowerBound(shownCards, target.card), shownCards.length - 1); // or the next one
    let a = p, above = 0;
    while (a > 0 && p - a < 6 && above < innerHeight / 2) above += sizeOf(shownCards[--a]);
    let b = p, below = 0;
    const want = innerHeight * 1.5 - target.top;
    while (b < shownCards.length && b - a < MAX_CARDS && (below < want || b - p < MIN_CARDS)) below += sizeOf(shownCards[b++]);
    const made = new Map();
    for (let i = a; i < b; i++) {
      const card = shownCards[i];
      if (!live.has(card)) made.set(card, await renderCard(card));
      if (mine !== drawn) return false;
    }
    for (const [card, node] of live) {
      const at = positionOf(card);
      if (at < a || at >= b) { node.remove(); resizes.unobserve(node); live.delete(card); }
    }
    let next = document.getElementById("below");
    for (let i = b - 1; i >= a; i--) {
      const card = shownCards[i];
      if (made.has(card)) {
        box().insertBefore(made.get(card), next);
        live.set(card, made.get(card));
        resizes.observe(made.get(card));
      }
      next = live.get(card);
    }
    range = [a, b];
    for (const [card, node] of live) {
      const size = node.offsetHeight + GAP;
      if (heights[card] === size) continue;
      if (heights[card]) measuredSum -= heights[card]; else measuredCount++;
      measuredSum += size;
      heights[card] = size;
      offsets = null;
    }
    const s = scale(), o = offsetsNow();
    document.getElementById("above").style.height = `${o[a] * s}px`;
    document.getElementById("below").style.height = `${(o[shownCards.length] - o[b]) * s}px`;
    const node = live.get(shownCards[p]);
    const delta = node.getBoundingClientRect().top - target.top;
    if (Math.abs(delta) >= 1) window.scrollBy(0, delta);
    const last = live.get(shownCards[b - 1]).getBoundingClientRect().bottom;
    if (b === shownCards.length || last >= innerHeight) break; // the screen is covered
  }
  return true;
}

function enqueue(job) {
  const run = queue.then(job);
  queue = run.catch(fail);
  return run;
}

let requested = false;
// A draw where the view is, once per frame at most (scroll, resize, a card's size changed).
function request() {
  if (requested) return;
  requested = true;
  requestAnimationFrame(() => {
    requested = false;
    const mine = drawn;
    enqueue(() => draw(mine, null));
  });
}

// Pick the cards again (filters, search, line) and draw them: around `target` ({card, top})
// if given, else keeping the card at the top of the screen (or the next one shown) in place.
// True once drawn, false if another rebuild came meanwhile.
async function rebuild(target) {
  const mine = ++generation;
  const text = document.getElementById("f-text").value.trim().toLowerCase();
  const shownLabel = document.getElementById("shown");
  if (text) shownLabel.textContent = "searching…";
  const list = [];
  for (let i = 0; i < R.cards.length; i++) {
    if (!passes(R.cards[i])) continue;
    if (text && !(await searched(R.cards[i], text))) continue;
    if (mine !== generation) return false;
    list.push(i);
  }
  return enqueue(async () => {
    if (mine !== generation) return false;
    let anchor = target && lowerBound(list, target.card) < list.length ? target : null;
    if (!anchor && shownCards.length) {
      const kept = currentAnchor();
      const p = lowerBound(list, kept.card);
      anchor = list.length ? { card: list[Math.min(p, list.length - 1)], top: kept.top } : null;
    }
    shownCards = list;
    offsets = null;
    const stamp = ++drawn;
    for (const node of live.values()) { node.remove(); resizes.unobserve(node); }
    live.clear();
    range = [0, 0];
    const total = R.cards.filter((c) => cardCalls(c).some((x) => x && x.first <= line)).length;
    shownLabel.textContent = `showing ${list.length.toLocaleString("en")} of ${total.toLocaleString("en")} calls seen by line ${line}`;
    if (!list.length) {
      document.getElementById("above").style.height = document.getElementById("below").style.height = "0px";
    } else if (!(await draw(stamp, anchor || { card: list[0], top: box().getBoundingClientRect().top }))) return false;
    if (!document.body.dataset.ready) {
      document.body.dataset.ready = "1";
      performance.mark("cards-shown");
    }
    document.body.dataset.shown = line; // for tests: the list is drawn
    return mine === generation;
  });
}

// Put a drawn card just below the bar, flash it and focus it.
function land(card) {
  const node = live.get(card);
  if (!node) return;
  window.scrollBy(0, node.getBoundingClientRect().top - landing());
  node.focus({ preventScroll: true });
  node.classList.add("flash");
  setTimeout(() => node.classList.remove("flash"), 1500);
  request();
}

// ---------------------------------------------------------------------------------------------
// Jumps, the scrubber and the raw line

function setLine(n) {
  line = Math.max(0, Math.min(R.lineCount, Math.floor(Number(n) || 0)));
  document.getElementById("scrub").value = line;
  document.getElementById("scrub-n").value = line;
  document.body.dataset.line = line;
}

// Show the state after line n and its raw line. From a history entry, the entry stays where
// it was on the screen and gets the focus; from elsewhere in a card, or from a finding on a
// line that touched a call, that card is put at the top and gets the focus.
async function jump(n, side, from) {
  const entry = from ? from.closest(".entry") : null;
  const cardNode = from ? from.closest(".card") : null;
  const key = `${side}:${n}`;
  const card = cardNode ? Number(cardNode.dataset.card)
    : Object.prototype.hasOwnProperty.call(R.findingCards, key) ? R.findingCards[key]
    : R.live ? liveCardAt(side, n) : null;
  const top = entry ? cardNode.getBoundingClientRect().top : landing();
  const entryTop = entry ? entry.getBoundingClientRect().top : null;
  setLine(n);
  chosenLine = n;
  if (card !== null && !(passes(R.cards[card]) && await searched(R.cards[card], document.getElementById("f-text").value.trim().toLowerCase()))) clearFilters();
  const [done] = await Promise.all([rebuild(card === null ? null : { card, top }), showRaw(n)]);
  if (!done) return; // another jump or filter came meanwhile
  if (card !== null) {
    const cardNow = live.get(card);
    const entryNow = entry && cardNow ? cardNow.querySelector(
      `.side:nth-child(${side + 1}) .entry[data-line="${n}"]`) : null;
    if (entryNow) {
      window.scrollBy(0, entryNow.getBoundingClientRect().top - entryTop);
      entryNow.focus({ preventScroll: true });
      request();
    } else land(card);
  } else document.getElementById("raw").focus({ preventScroll: true }); // a line of no call
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

// "Go to this call": its card after the last line, with no filter hiding it.
async function focusCall(side, index) {
  const card = R.cards.findIndex((c) => c.sides[side] === index);
  if (positionOf(card) < 0) {
    clearFilters();
    setLine(R.lineCount);
    if (!(await rebuild({ card, top: landing() }))) return;
  } else {
    const mine = drawn;
    if (!(await enqueue(() => draw(mine, { card, top: landing() })))) return;
  }
  land(card);
  document.body.dataset.jumped = `call ${card}`; // for tests: the jump is done
}

// A session link: that session's calls, from the first.
async function showSession(id) {
  document.getElementById("f-session").value = id;
  const first = R.cards.findIndex((c) => c.session === id && passes(c));
  if (await rebuild(first < 0 ? null : { card: first, top: landing() }) && first >= 0) land(first);
}

function startList() {
  heights = new Float64Array(R.cards.length);
  const scrub = document.getElementById("scrub");
  let pending = null;
  const later = () => { clearTimeout(pending); pending = setTimeout(() => rebuild(), 120); };
  const now = () => rebuild();
  scrub.addEventListener("input", () => { setLine(scrub.value); later(); });
  document.getElementById("scrub-n").addEventListener("change", (e) => { setLine(e.target.value); now(); });
  document.getElementById("scrub-prev").addEventListener("click", () => { setLine(line - 1); now(); });
  document.getElementById("scrub-next").addEventListener("click", () => { setLine(line + 1); now(); });
  for (const id of ["f-status", "f-kind", "f-session"]) document.getElementById(id).addEventListener("change", now);
  document.getElementById("f-text").addEventListener("input", later);
  const close = () => { document.getElementById("raw").hidden = true; };
  document.getElementById("raw-close").addEventListener("click", close);
  document.addEventListener("keydown", (e) => { if (e.key === "Escape") close(); });
  addEventListener("scroll", request, { passive: true });
  const sized = () => {
    document.documentElement.style.setProperty("--bar", `${barHeight()}px`);
    request();
  };
  addEventListener("resize", request);
  new ResizeObserver(sized).observe(document.getElementById("bar")); // also calls it once now
}
