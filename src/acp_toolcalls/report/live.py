"""The data of a live ``inspect`` page: a log's report as it grows, and what changed since a
sequence number. Sans-I/O: the caller gives the lines, their times and when to publish.

Rules this module owns (issue 31):

- One fold: ``LiveModel`` feeds every line to a ``model.ReportBuilder`` (so to
  ``history.SideHistory``, ``asks.Asks`` and ``validate``'s checks, as ``inspect`` reads a
  log) and only reads what those already computed; it computes no tool-call state itself.
- ``feed`` takes a line of a log (plain, ``bridge --log`` or a wrapped capture), or a wire
  line with its ``direction`` (and protocol, and time): that one is read as the ``bridge
  --log`` record of it. ``publish`` turns what the lines fed since the last one did into one
  event, numbered by ``seq``: the calls and terminals that changed (their new history
  entries, values and content items, and their index), the permission requests that are new
  or got their answer, the new findings (a conversion loss with its session, last: the page
  groups losses alike as a finished report does), the raw lines, the sides' summaries (each
  side's permission audit totals among them), and each side's latency
  rows that changed (``latency``: ``[side, changes]``, ``latency.Latency.changes``). A
  request without an answer is waiting (``answer: null``) until the event that carries its
  answer.
- ``snapshot`` is the whole state in the page's shape (``model.ReportBuilder.finish``'s, with
  each call's and terminal's details inline as ``loaded``, each side's whole ``latency``) and
  the ``seq`` it is at.
- Bounded in bytes, whatever watches: the events kept for watchers are a ring of at most
  ``events_bytes`` (``Limits.max_call_bytes`` by default); ``since(seq)`` gives the events
  after ``seq``, or ``None`` when some were dropped (the watcher is resynchronised with a
  snapshot): a watcher is only a number, so a slow one never makes the model grow. The
  stores hold to ``Limits``; the histories, findings and raw lines to
  ``Limits.max_store_bytes``: past it the oldest finished calls' histories go first (an
  event says ``forgot``, and watchers resynchronise), then the oldest findings and lines.
- Lines its feeder could not give it (``note_unseen``: a live server's full inbox) are
  counted in every event and the snapshot (``unseen``): the page says that what they did is
  missing.
- Input that is no log (``captures.NotACapture``) is said once through ``report``; the lines
  after it are read as they are (those held while the format was undecided are not shown).
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable
from typing import Any

import msgspec

from ..codec import DEFAULT_MAX_BYTES
from ..models import VersionChoice
from ..records import Side, log_line
from ..store import Limits
from ..v2 import FINAL_STATUSES
from .captures import CaptureReader, NotACapture
from .cards import cards_and_calls
from .history import CallHistory, TerminalHistory
from .latency import SENDERS
from .model import _SIDE_LABELS, ReportBuilder, _finding_cards

__all__ = ["LiveModel"]

_encode = msgspec.json.Encoder().encode
_RAW_LINE_CHARS = 20_000  # characters of one line kept to show it live
_MARGIN = 256  # bytes counted per kept thing on top of its JSON


def _loaded(history: CallHistory) -> dict[str, Any]:
    """A call's history so far, in the page's shape: it loads no details."""
    loaded = b'{"entries":%s,"values":%s,"items":%s}' % (
        _so_far(history.entries, 1),
        b"[" + b",".join(history.values.values) + b"]",
        _so_far(history.items, 1),
    )
    return {"loaded": msgspec.Raw(loaded)}


def _so_far(listed: Any, start: int) -> bytes:
    """The JSON of the values a ``_json.JsonList`` got after byte ``start`` of its buffer, as
    an array (it has no reader but ``take``, which empties it)."""
    buffer: bytearray = listed._buffer
    tail = buffer[start:]
    return b"[" + bytes(tail[1:] if tail[:1] == b"," else tail) + b"]"


class _Sent:
    """What watchers were sent of one call or terminal: byte offsets and counts."""

    __slots__ = ("entries", "items", "size", "values")

    def __init__(self) -> None:
        self.entries = 1  # past the JsonList's "["
        self.items = 1
        self.values = 0
        self.size = 0


class _Summary:
    """One side's calls by status and by kind, and the open ones (their index in the side's
    history), kept as calls change: a publication looks only at the calls that changed."""

    __slots__ = ("by_kind", "by_status", "index", "open", "shown")

    def __init__(self) -> None:
        self.by_status: dict[str, int] = {}
        self.by_kind: dict[str, int] = {}
        self.shown: dict[tuple[str, str], tuple[str, str]] = {}  # key -> (status, kind)
        self.index: dict[tuple[str, str], int] = {}  # key -> its place in the history's calls
        self.open: set[tuple[str, str]] = set()

    def update(self, key: tuple[str, str], history: CallHistory) -> None:
        if key not in self.index:
            self.index[key] = len(self.index)
        now = (history.statuses[-1][1], history.kinds[-1][1])
        before = self.shown.get(key)
        if before == now:
            return
        if before is not None:
            self.by_status[before[0]] -= 1
            self.by_kind[before[1]] -= 1
        self.by_status[now[0]] = self.by_status.get(now[0], 0) + 1
        self.by_kind[now[1]] = self.by_kind.get(now[1], 0) + 1
        self.shown[key] = now
        if now[0] in FINAL_STATUSES:
            self.open.discard(key)
        else:
            self.open.add(key)


class LiveModel:
    """A log's report as it grows, with events since a sequence number (sans-I/O)."""

    def __init__(
        self,
        *,
        name: str = "log",
        version: VersionChoice = "auto",
        side: Side | None = None,
        max_line_bytes: int = DEFAULT_MAX_BYTES,
        limits: Limits | None = None,
        events_bytes: int | None = None,
        report: Callable[[str], None] | None = None,
    ) -> None:
        self.limits = limits or Limits()
        self.state_bytes = self.limits.max_store_bytes or 128 * 1024 * 1024
        self.events_bytes = events_bytes or self.limits.max_call_bytes or 8 * 1024 * 1024
        self._builder = ReportBuilder(  # the raw lines kept in this model's window, not packed
            keep_line=self._keep_line,
            raw_line_chars=_RAW_LINE_CHARS,
            version=version,
            side=side,
            max_line_bytes=max_line_bytes,
            name=name,
            report=report or (lambda text: None),
        )
        self._say = report or (lambda text: None)
        self._capture: CaptureReader | None = CaptureReader()
        self.line = 0  # lines fed
        self.unseen = 0  # lines not given to it (note_unseen)
        self._unseen_sent = 0
        self.seq = 0  # the last event published
        self._events: deque[tuple[int, bytes]] = deque()
        self._events_size = 0
        self._lines: deque[tuple[int, str]] = deque()  # the raw lines kept
        self._new_lines: list[tuple[int, str]] = []
        self._findings: deque[list[Any]] = deque()
        self._new_findings: list[list[Any]] = []
        self._codes: dict[str, dict[str, int]] = {}  # side -> finding code -> count
        self._sent: dict[tuple[str, str, str], _Sent] = {}  # (side, session, id)
        self._summaries: dict[str, _Summary] = {}  # side -> its calls by status and kind
        self._sent_terminals: dict[tuple[str, str, str], _Sent] = {}
        self._asks_sent: dict[str, int] = {}  # side -> requests sent
        self._waiting: dict[str, set[int]] = {}  # side -> requests sent without an answer
        self._held = 0  # bytes of histories, findings and lines kept
        self._times: list[float] = []  # the first and the last time seen

    def feed(
        self,
        data: bytes | int,
        *,
        direction: str | None = None,
        protocol: int | None = None,
        when: float | None = None,
    ) -> None:
        """The next line: a log's line, or with ``direction`` one wire line (``bytes``) read
        as its ``bridge --log`` record at ``when``."""
        if direction is not None and isinstance(data, bytes):
            data = log_line(direction, protocol, data, when or 0.0)[:-1]  # type: ignore[arg-type]
        self.line += 1
        builder, capture = self._builder, self._capture
        if capture is None or capture.passes:
            builder.feed(self.line, data)
            return
        try:
            items = capture.feed(self.line, data)
        except NotACapture as exc:  # said once; from now on each line as it is
            self._capture = None
            self._say(exc.describe(repr(self._builder.name)) + " (the next lines: as they are)")
            return
        for item in items:
            builder.feed(item.line, item.data, item)

    def note_unseen(self, count: int) -> None:
        """``count`` lines in all were not given to this model (they came too fast)."""
        self.unseen = count

    def _keep_line(self, line: int, text: str) -> None:
        self._lines.append((line, text))
        self._new_lines.append((line, text))
        self._held += len(text) + _MARGIN

    def publish(self) -> int:
        """One event of what changed since the last one (none if nothing did); the ``seq``."""
        builder = self._builder
        sides = list(builder._sides.values())  # the fold's state, read only
        builder._who_answered()  # the editor or the proxy, as the report says it
        calls: list[Any] = []
        terminals: list[Any] = []
        asks: list[Any] = []
        latency: list[Any] = []
        for position, side in enumerate(sides):
            store = side.history.store
            if store.limits is not self.limits:  # a store made when the version was decided
                store.limits = self.limits
            kept = side.history
            summary = self._summaries.get(side.name)
            if summary is None or kept.touched is None or kept.touched_terminals is None:
                # First look at this side (or after calls were forgotten): every call.
                summary = self._summaries[side.name] = _Summary()
                touched, touched_terminals = (
                    dict.fromkeys(kept.calls),
                    dict.fromkeys(kept.terminals),
                )
            else:
                touched, touched_terminals = kept.touched, kept.touched_terminals
            kept.touched, kept.touched_terminals = {}, {}
            for key in touched:
                history = kept.calls.get(key)
                if history is None:
                    continue
                summary.update(key, history)
                change = self._call_change(side.name, key, history)
                if change is not None:
                    calls.append([position, *change])
            for key in touched_terminals:
                terminal = kept.terminals.get(key)
                change = (
                    None if terminal is None else self._terminal_change(side.name, key, terminal)
                )
                if change is not None:
                    terminals.append([position, *change])
            asks += [[position, *ask] for ask in self._ask_changes(side.name, side.asks.requests)]
            changed = side.latency.changes()
            if changed is not None:
                latency.append([position, changed])
            self._take_findings(position, side)
        self._take_losses(sides)
        times = builder._times
        if times:
            self._times = [min(self._times[:1] + times), max(self._times[-1:] + times)]
            times.clear()
        if not (
            calls
            or terminals
            or asks
            or latency
            or self._new_findings
            or self._new_lines
            or self.unseen != self._unseen_sent
        ):
            return self.seq
        self._unseen_sent = self.unseen
        event = {
            "seq": self.seq + 1,
            "lineCount": self.line,
            "unseen": self.unseen,
            **self._header(sides),
            "calls": calls,
            "terminals": terminals,
            "asks": asks,
            "latency": latency,
            "findings": self._new_findings,
            "lines": self._new_lines,
        }
        forgot = self._bound(sides)
        if forgot:
            event["forgot"] = forgot
        self._new_findings, self._new_lines = [], []
        self.seq += 1
        data = _encode(event)
        self._events.append((self.seq, data))
        self._events_size += len(data)
        while self._events_size > self.events_bytes and len(self._events) > 1:
            self._events_size -= len(self._events.popleft()[1])
        return self.seq

    def since(self, seq: int) -> list[tuple[int, bytes]] | None:
        """The events after ``seq``, in order; ``None`` when some of them are no longer kept
        (or ``seq`` is ahead): the watcher needs a ``snapshot``."""
        if seq == self.seq:
            return []
        if seq > self.seq or not self._events or self._events[0][0] > seq + 1:
            return None
        return [(number, data) for number, data in self._events if number > seq]

    def _header(self, sides: list[Any]) -> dict[str, Any]:
        times = self._times
        titles: dict[str, str] = {}
        for side in sides:
            titles.update(side.history.store.session_titles())
        return {
            "started": times[0] if times else None,
            "duration": times[1] - times[0] if times else None,
            "sides": [self._side_header(side) for side in sides],
            "sessionTitles": titles,
        }

    def _side_header(self, side: Any) -> dict[str, Any]:
        summary = self._summaries.get(side.name)
        if summary is None:  # its calls were forgotten since: counted again
            summary = self._summaries[side.name] = _Summary()
            for key, history in side.history.calls.items():
                summary.update(key, history)
        version = side.validator.version if side.validator is not None else ""
        source = side.validator.version_source if side.validator is not None else ""
        return {
            "name": side.name,
            "label": _SIDE_LABELS.get(side.name, "the log"),
            "protocol": version,
            "protocolSource": source,
            "summary": {
                "calls": len(side.history.calls),
                "byStatus": {k: n for k, n in summary.by_status.items() if n},
                "byKind": {k: n for k, n in summary.by_kind.items() if n},
                "open": sorted(summary.index[key] for key in summary.open),
                "findings": dict(sorted(self._codes.get(side.name, {}).items())),
                "asks": len(side.asks.requests),
                "audit": side.asks.totals,
                "terminals": len(side.history.terminals),
            },
        }

    def _call_change(
        self, side: str, key: tuple[str, str], history: CallHistory
    ) -> list[Any] | None:
        sent = self._sent.get((side, key[0], key[1]))
        if sent is None:
            sent = self._sent[(side, key[0], key[1])] = _Sent()
        entries: bytearray = history.entries._buffer
        if len(entries) == sent.entries:
            return None
        items: bytearray = history.items._buffer
        values = history.values.values
        change = [
            history.index(),
            msgspec.Raw(_so_far(history.entries, sent.entries)),
            msgspec.Raw(b"[" + b",".join(values[sent.values :]) + b"]"),
            msgspec.Raw(_so_far(history.items, sent.items)),
        ]
        size = len(entries) + len(items) + sum(len(v) for v in values[sent.values :])
        self._held += size - sent.size + (0 if sent.size else _MARGIN)
        sent.entries, sent.items, sent.values, sent.size = (
            len(entries),
            len(items),
            len(values),
            size,
        )
        return change

    def _terminal_change(
        self, side: str, key: tuple[str, str], terminal: TerminalHistory
    ) -> list[Any] | None:
        sent = self._sent_terminals.get((side, key[0], key[1]))
        if sent is None:
            sent = self._sent_terminals[(side, key[0], key[1])] = _Sent()
        entries: bytearray = terminal.entries._buffer
        if len(entries) == sent.entries:
            return None
        values = terminal.values.values
        change = [
            key[0],
            key[1],
            msgspec.Raw(_so_far(terminal.entries, sent.entries)),
            msgspec.Raw(b"[" + b",".join(values[sent.values :]) + b"]"),
        ]
        size = len(entries) + sum(len(v) for v in values[sent.values :])
        self._held += size - sent.size + (0 if sent.size else _MARGIN)
        sent.entries, sent.values, sent.size = len(entries), len(values), size
        return change

    def _ask_changes(self, side: str, requests: list[dict[str, Any]]) -> list[list[Any]]:
        """``[index, request]`` of each request new since the last event, or answered."""
        waiting = self._waiting.setdefault(side, set())
        changes = [[i, requests[i]] for i in sorted(waiting) if requests[i]["answer"] is not None]
        waiting.difference_update(i for i, _ in changes)
        start = self._asks_sent.get(side, 0)
        for index in range(start, len(requests)):
            changes.append([index, requests[index]])
            if requests[index]["answer"] is None:
                waiting.add(index)
        self._asks_sent[side] = len(requests)
        return changes

    def _take_findings(self, position: int, side: Any) -> None:
        """The side's new findings, moved out of the fold (which would keep them all)."""
        if not side.findings:
            return
        codes = self._codes.setdefault(side.name, {})
        for line, path, code, kind, message in side.findings:
            sender = side.sender(line)
            self._found([line, position, path, code, kind, message, sender])
            codes[code] = codes.get(code, 0) + 1
        side.findings = []

    def _take_losses(self, sides: list[Any]) -> None:
        losses = self._builder._losses
        if not losses.findings:
            return
        agent = next((i for i, side in enumerate(sides) if side.name == "agent"), 0)
        codes = self._codes.setdefault("agent", {})
        for (line, path, code, kind, message), session in losses.take():
            self._found([line, agent, path, code, kind, message, SENDERS["agent->proxy"], session])
            codes[code] = codes.get(code, 0) + 1

    def _found(self, finding: list[Any]) -> None:
        self._findings.append(finding)
        self._new_findings.append(finding)
        self._held += len(finding[5]) + len(finding[2]) + _MARGIN

    def _bound(self, sides: list[Any]) -> int:
        """Hold to ``state_bytes``: the oldest finished calls' histories go first, then the
        oldest findings and raw lines. Returns how many calls were forgotten."""
        forgot = 0
        for side in sides:
            calls = side.history.calls
            for key in list(calls):
                if self._held <= self.state_bytes:
                    return forgot
                if calls[key].statuses[-1][1] not in FINAL_STATUSES:
                    continue
                del calls[key]
                side.history.touched = None  # its summary is made again: the calls moved
                self._summaries.pop(side.name, None)
                sent = self._sent.pop((side.name, key[0], key[1]), None)
                self._held -= (sent.size + _MARGIN) if sent is not None else 0
                forgot += 1
        while self._held > self.state_bytes and (self._findings or self._lines):
            if self._findings:
                finding = self._findings.popleft()
                self._held -= len(finding[5]) + len(finding[2]) + _MARGIN
            else:
                self._held -= len(self._lines.popleft()[1]) + _MARGIN
        return forgot

    def snapshot(self) -> bytes:
        """The page's data now (``seq`` included), as JSON: call ``publish`` first."""
        sides = list(self._builder._sides.values())
        ordered, calls_of_sides = cards_and_calls([side.history for side in sides], _loaded)
        findings = list(self._findings)
        loose: list[list[int]] = []
        headers = self._header(sides)
        for position, (side, header) in enumerate(zip(sides, headers["sides"], strict=True)):
            where = {(call["session"], call["id"]): call for call in calls_of_sides[position]}
            for number, request in enumerate(side.asks.requests):
                asked = where.get((request["session"], request["call"]))
                if asked is not None:
                    asked["asks"].append(number)
                else:
                    loose.append([position, number])
            header["asks"] = side.asks.requests
            header["latency"] = side.latency.view()
            header["terminals"] = [
                {
                    "session": t.session_id,
                    "id": t.terminal_id,
                    "loaded": msgspec.Raw(
                        b'{"entries":%s,"values":%s}'
                        % (_so_far(t.entries, 1), b"[" + b",".join(t.values.values) + b"]")
                    ),
                }
                for t in side.history.terminals.values()
            ]
        return _encode(
            {
                "format": 1,
                "live": True,
                "seq": self.seq,
                "name": self._builder.name,
                "lineCount": self.line,
                "unseen": self.unseen,
                **headers,
                "calls": calls_of_sides,
                "cards": ordered,
                "findings": findings,
                "findingGroups": [],
                "findingCards": _finding_cards(findings, sides, ordered),
                "looseAsks": loose,
                "liveLines": list(self._lines),
            }
        )
