"""A whole log as the data of an ``inspect`` report: plain JSON values, no I/O.

Rules this module owns:

- ``ReportBuilder`` is fed numbered lines (``cli.lines.read_lines`` output) and ``finish``
  returns the report's data. A ``bridge --log`` record goes to its side, ``agent`` or
  ``client``, read as ``records.one_side`` reads it; with ``side`` given only that side is
  read; any other line belongs to the plain log (side ``log``).
- Per side: the calls' and terminals' history (``history.SideHistory``, through ``replay``'s
  reading, whose notes go to ``report``), the findings of ``validate`` (its ``Validator``:
  schema violations, tool-call lint, unreadable lines, on the line that caused them) and the
  permission requests (``asks.Asks``, with their audit), the latency of its requests
  (``latency.Latency``).
- Conversion losses (``losses.Losses``): in a bridge log whose sides speak different
  versions, the agent's messages go through the bridge the proxy uses for that pairing, each
  loss a ``conversion-loss`` finding on the agent's line; a diff the proxy's bridge may have
  rebuilt from disk is settled by what the editor got.
- Each side is shown as it crossed the wire (D45).
- A finding says who sent its line, from its record's (or wrapped capture line's) direction
  (``latency.SENDERS``): the agent, the editor or the proxy; a line of a plain log has no sender.
- Losses alike are one group: the ``conversion-loss`` findings of one side and session with
  the same path and reason, on two lines or more, are listed once on the page with their count
  and lines (``findingGroups``: each group's finding indices, in line order); every finding is
  still kept on its own line, for the history entry it belongs to.
- A permission request of the agent, in a bridge log, was answered by the editor when the
  editor answered the same call's request it was shown, before the agent got its answer;
  otherwise the proxy answered on the editor's behalf.
- Cards: one per ``(sessionId, toolCallId)`` over all sides, in first-seen order; a session
  the client never created (a subagent's, known only from its updates) has its cards too.
  A finding's line leads to the first card whose call that line touched (``findingCards``:
  ``"side:line"`` -> the card's index), so that a click on a finding shows its call.
- ``sessionTitles``: each session's title (``session_info_update``, ``subagent_update``), over
  all sides, for the ``session`` content items that refer to it.
- A line of a wrapped capture (``captures``: acp-devtools, ACP-inspector, acp_debug) is read
  as its message, on the plain log's side, with its sender's direction (``client->agent`` or
  ``agent->client``) and its time; the line kept for display is the file's, wrapper included.
  A line of another shape in such a capture is a ``not-a-message`` finding on its line (D43).
- Each line is kept for display, at most ``RAW_LINE_CHARS`` characters of it, packed as it
  comes (``page.LinePacker``): ``lines`` is the packed parts, ``lineCount`` their lines.
- Two parts (``Part``), so that ``inspect`` can compute them in two processes at once: the
  history (calls, terminals, permission requests, times, senders) and the checks
  (``validate``'s findings, conversion losses, lines of another shape, and the lines kept for
  display, which cost the history's process as much as its own work). A builder of
  ``part="checks"`` returns them (``checks``); one of ``part="history"`` takes them
  (``take_checks``) before ``finish``; ``part="whole"`` does both, the same way, in one.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Literal, NamedTuple

import msgspec

from ..check import Finding, Validator
from ..codec import DEFAULT_MAX_BYTES, DecodeError, check_depth
from ..models import VersionChoice
from ..records import SIDES, Side, is_record, one_side, read_record
from ..v2 import FINAL_STATUSES, Diff
from .asks import Asks
from .captures import Captured
from .cards import cards_and_calls
from .history import SideHistory
from .latency import SENDERS, Latency
from .losses import Found, Losses
from .page import LinePacker

__all__ = ["FORMAT", "RAW_LINE_CHARS", "Checks", "Part", "ReportBuilder"]

FORMAT = 1
"""Version of the data's shape, which the page's script reads."""
RAW_LINE_CHARS = 100_000
"""Characters of one line kept to show it; the rest is cut, and the page says so."""

Part = Literal["whole", "history", "checks"]
"""What a ``ReportBuilder`` computes: the whole report, or one of its two parts."""


class Checks(NamedTuple):
    """The checks part of a report (plain values: it crosses from one process to another)."""

    sides: dict[str, tuple[list[Found], str, str]]
    """Per side name: its findings, the protocol it was checked as and why."""
    losses: list[Found]
    loss_sessions: dict[int, str | None]
    lines: list[str]
    """The lines kept for display, packed (``LinePacker.parts``)."""
    line_count: int


_RECORD_HINT = b'"direction"'
_CAPTURE_DIRECTIONS = {"client": "client->agent", "agent": "agent->client"}
"""The direction of a wrapped capture's line (no proxy in between), by who sent it."""
_parse = msgspec.json.Decoder()
_SIDE_LABELS = {"agent": "what the agent sent", "client": "what the editor received"}
_CODES = {direction: code for code, direction in enumerate(SENDERS, 1)}
_SENDER_OF_CODE: tuple[str | None, ...] = (None, *SENDERS.values())


class _Side:
    """One stream of the log: its history, findings and permission requests."""

    def __init__(
        self,
        name: str,
        version: VersionChoice,
        report: Callable[[str], None],
        max_bytes: int,
        part: Part,
    ) -> None:
        self.name = name
        self.tells = part != "checks"  # the history's part
        self.history = SideHistory(version, report, max_bytes)
        # `validate`'s own checks, line by line (the checks' part).
        self.validator = Validator(version, max_bytes) if part != "history" else None
        self.protocol: tuple[str, str] = ("", "")  # as checked, and why: from the checks
        self.asks = Asks(self.history.calls, self._call_has_diff)
        self.latency = Latency()  # of the requests and their responses
        self.findings: list[Found] = []
        self.wire_version: int | None = None  # from the records of a bridge log
        self.directions = bytearray()  # per line (1-based), its direction's ``_CODES`` code

    def _call_has_diff(self, session: str, call: str) -> bool:
        state = self.history.store.tool_call(session, call)
        return state is not None and any(isinstance(item, Diff) for item in state.content)

    def feed(self, line: int, data: bytes | int, when: float | None, direction: str | None) -> None:
        if self.validator is not None:
            self.found(self.validator.feed(line, data))
        if not self.tells:
            return
        code = _CODES.get(direction or "", 0)
        if code:
            if len(self.directions) <= line:
                self.directions.extend(bytes(line + 1 - len(self.directions)))
            self.directions[line] = code
        self.history.feed(line, data, when)
        self.asks.feed(line, data, when, direction)
        self.latency.feed(line, data, when, direction)

    def found(self, findings: list[Finding]) -> None:
        self.findings += [(f.line, f.path, f.code, f.kind, f.message) for f in findings]

    def sender(self, line: int) -> str | None:
        """Who sent ``line``, by its record's direction (``None``: not a record)."""
        return _SENDER_OF_CODE[self.directions[line]] if line < len(self.directions) else None


class ReportBuilder:
    """Reads a log line by line; ``finish`` returns the report's data."""

    def __init__(
        self,
        *,
        version: VersionChoice = "auto",
        side: Side | None = None,
        max_line_bytes: int = DEFAULT_MAX_BYTES,
        report: Callable[[str], None] = lambda text: None,
        name: str = "log",
        part: Part = "whole",
        keep_line: Callable[[int, str], None] | None = None,
        raw_line_chars: int = RAW_LINE_CHARS,
    ) -> None:
        """``keep_line``: where each line's text for display goes, at most ``raw_line_chars``
        characters of it (default: packed for the page, ``finish``'s ``lines``)."""
        self.name = name
        self.part = part
        self._checks: Checks | None = None  # taken from the checks' part
        self._version = version
        self._only = side
        self.max_line_bytes = max_line_bytes
        self._report = report
        self._sides: dict[str, _Side] = {}
        self._losses = Losses()
        self._lines = LinePacker()
        self._keep_line = keep_line or self._pack_line
        self._raw_line_chars = raw_line_chars
        self._times: list[float] = []

    def _side(self, name: str) -> _Side:
        side = self._sides.get(name)
        if side is None:
            report = self._report
            if name != "log":
                report = _prefixed(self._report, f"{name} side: ")
            side = self._sides[name] = _Side(
                name, self._version, report, self.max_line_bytes, self.part
            )
        return side

    def feed(self, line: int, data: bytes | int, capture: Captured | None = None) -> None:
        """One numbered line of the log: its text, or its size when it was over the limit;
        ``capture``: the line as ``captures.CaptureReader`` read it (a wrapped capture's line
        is its message, on the plain log's side, with who sent it and when)."""
        tells = self.part != "checks"
        if self.part != "history":
            self._keep_line(line, raw_line_text(data, self._raw_line_chars))
        if capture is not None and (capture.sender is not None or capture.note is not None):
            side = self._side("log")
            if capture.note is not None:  # a line of another shape: said, not read
                if tells:
                    self._report(f"line {line}: $: {capture.note}")
                if side.validator is not None:
                    side.found([Finding(line, "$", "not-a-message", capture.note, "decode")])
                return
            if capture.time is not None and tells:
                self._times.append(capture.time)
            direction = _CAPTURE_DIRECTIONS[capture.sender or "client"]
            side.feed(line, capture.message, capture.time, direction)
            return
        record = _record(data)
        if record is None:
            self._side("log").feed(line, data, None, None)
            return
        name: Side = "client" if record.direction in SIDES["client"] else "agent"
        if self._only is not None and name != self._only:
            return
        if record.time is not None and tells:
            self._times.append(record.time)
        side = self._side(self._only or name)
        if record.protocol is not None:
            side.wire_version = record.protocol
        for number, message in one_side([(line, data)], name):
            side.feed(number, message, record.time, record.direction)
            if (
                self.part != "history"
                and record.direction == "agent->proxy"
                and isinstance(message, bytes)
            ):
                client = self._sides.get("client")
                version = client.wire_version if client is not None else None
                self._losses.feed(line, message, side.wire_version, version)
            elif (
                self.part != "history"
                and record.direction == "proxy->client"
                and isinstance(message, bytes)
            ):
                self._losses.editor_got(message)

    def _pack_line(self, line: int, text: str) -> None:
        while self._lines.count < line - 1:  # numbering never skips; be safe
            self._lines.add("")
        self._lines.add(text)

    def checks(self) -> Checks:
        """The checks of every line fed (of a builder of ``part`` ``"checks"`` or ``"whole"``)."""
        sides: dict[str, tuple[list[Found], str, str]] = {}
        for name, side in self._sides.items():
            validator = side.validator
            if validator is None:
                raise ValueError("a builder of the history part has no checks")
            side.found(validator.finish())
            sides[name] = (side.findings, validator.version, validator.version_source)
        self._losses.settle()
        lines = self._lines
        return Checks(
            sides, self._losses.findings, self._losses.sessions, lines.parts(), lines.count
        )

    def take_checks(self, checks: Checks) -> None:
        """The checks of the same lines, computed by a builder of ``part`` ``"checks"``."""
        self._checks = checks

    def finish(self) -> dict[str, Any]:
        """The report's data (``FORMAT`` says its shape), once: plain JSON values, but for
        each call's and terminal's ``details``, its history, whose ``take_details()`` gives
        its JSON once (``page`` packs them one at a time, so they are never all copied)."""
        checks = self.checks() if self.part == "whole" else self._checks
        if checks is None or self.part == "checks":
            raise ValueError("finish needs the checks: take_checks(), or part='whole'")
        for name, (found, version, source) in checks.sides.items():
            side = self._side(name)
            side.findings, side.protocol = list(found), (version, source)
        self._losses.findings, self._losses.sessions = checks.losses, checks.loss_sessions
        sides = [self._sides[name] for name in ("agent", "client", "log") if name in self._sides]
        for side in sides:
            side.history.finish()
        titles = {
            session: title
            for side in sides
            for session, title in side.history.store.session_titles().items()
        }
        for side in sides:  # what the page needs of the stores is in the histories now
            side.history.release()
        if "agent" in self._sides:
            self._sides["agent"].findings += self._losses.findings
        self._who_answered()
        # A call's JSON is in its details: ``take_details()``, once, by the page.
        ordered, calls_of_sides = cards_and_calls(
            [side.history for side in sides], lambda h: {"details": h}
        )
        loose_asks = self._attach_asks(sides, calls_of_sides)
        findings = sorted(
            (
                [f[0], position, *f[1:], side.sender(f[0])]
                for position, side in enumerate(sides)
                for f in side.findings
            ),
            key=lambda finding: (finding[0], finding[1]),
        )
        report = {
            "format": FORMAT,
            "name": self.name,
            "lines": checks.lines,
            "lineCount": checks.line_count,
            "duration": (max(self._times) - min(self._times)) if self._times else None,
            "started": min(self._times) if self._times else None,
            "sides": [
                {
                    "name": side.name,
                    "label": _SIDE_LABELS.get(side.name, "the log"),
                    "protocol": side.protocol[0],
                    "protocolSource": side.protocol[1],
                    "summary": _summary(calls, side),
                    "asks": side.asks.requests,
                    "latency": side.latency.view(),
                    "terminals": [
                        {"session": t.session_id, "id": t.terminal_id, "details": t}
                        for t in side.history.terminals.values()
                    ],
                }
                for side, calls in zip(sides, calls_of_sides, strict=True)
            ],
            "calls": calls_of_sides,
            "cards": ordered,
            "findings": findings,
            "findingGroups": self._groups(findings),
            "findingCards": _finding_cards(findings, sides, ordered),
            "looseAsks": loose_asks,
            "sessionTitles": titles,
        }
        self._sides = {}  # the stores and the rest: what the page needs is in the report
        return report

    def _groups(self, findings: list[list[Any]]) -> list[list[int]]:
        """The indices of the conversion losses alike (side, session, path, reason), for each
        such loss on two lines or more."""
        alike: dict[tuple[Any, ...], list[int]] = {}
        for index, (line, side, path, code, _kind, message, _sender) in enumerate(findings):
            if code == "conversion-loss":
                key = (side, self._losses.sessions.get(line), path, message)
                alike.setdefault(key, []).append(index)
        return [indices for indices in alike.values() if len(indices) > 1]

    def _who_answered(self) -> None:
        agent, client = self._sides.get("agent"), self._sides.get("client")
        if agent is None:
            return
        shown = client.asks.requests if client is not None else []
        for request in agent.asks.requests:
            answer = request["answer"]
            if answer is None:
                continue
            by_editor = any(
                other["session"] == request["session"]
                and other["call"] == request["call"]
                and other["l"] > request["l"]
                and other["answer"] is not None
                and other["answer"]["l"] <= answer["l"]
                for other in shown
            )
            answer["by"] = (
                "the editor, through the proxy" if by_editor else "the proxy, for the editor"
            )

    @staticmethod
    def _attach_asks(
        sides: list[_Side], calls_of_sides: list[list[dict[str, Any]]]
    ) -> list[list[int]]:
        """Each request's index on its call; ``[side, request]`` of those on no known call."""
        loose: list[list[int]] = []
        for position, (side, calls) in enumerate(zip(sides, calls_of_sides, strict=True)):
            where = {(call["session"], call["id"]): call for call in calls}
            for number, request in enumerate(side.asks.requests):
                call = where.get((request["session"], request["call"]))
                if call is not None:
                    call["asks"].append(number)
                else:
                    loose.append([position, number])
        return loose


def raw_line_text(data: bytes | int, chars: int) -> str:
    """A line's text as the page shows it: at most ``chars`` characters, said when cut; a line
    over the line limit (its size) said as such."""
    if isinstance(data, int):
        return f"(a line of {data} bytes or more, over the line limit: not read)"
    text = data[: chars * 4].decode("utf-8", "replace")
    if len(text) > chars or len(data) > chars * 4:
        text = text[:chars] + f" [… cut: the line has {len(data)} bytes]"
    return text


def _finding_cards(
    findings: list[list[Any]], sides: list[_Side], cards: list[dict[str, Any]]
) -> dict[str, int]:
    """``"side:line"`` -> the first card whose call that line touched, for each finding."""
    wanted: dict[int, set[int]] = {}
    for finding in findings:
        wanted.setdefault(finding[1], set()).add(finding[0])
    histories = [list(side.history.calls.values()) for side in sides]
    found: dict[str, int] = {}
    for index, card in enumerate(cards):
        for position, call in enumerate(card["sides"]):
            lines = wanted.get(position)
            if call is not None and lines:
                for line in lines.intersection(histories[position][call].lines):
                    found.setdefault(f"{position}:{line}", index)
    return found


def _prefixed(report: Callable[[str], None], prefix: str) -> Callable[[str], None]:
    return lambda text: report(prefix + text)


def _record(data: bytes | int) -> Any:
    """The ``TrafficRecord`` of a line of a bridge log, or ``None`` for any other line."""
    if not isinstance(data, bytes) or _RECORD_HINT not in data[:200]:
        return None
    try:
        check_depth(data)  # the codec's limit: deeper values are no record (issue 27)
        value = _parse.decode(data)
    except (msgspec.DecodeError, RecursionError, DecodeError):
        return None
    return read_record(value) if is_record(value) else None


def _summary(calls: list[dict[str, Any]], side: _Side) -> dict[str, Any]:
    by_status: dict[str, int] = {}
    by_kind: dict[str, int] = {}
    left_open: list[int] = []
    for number, call in enumerate(calls):
        status = call["status"][-1][1]
        by_status[status] = by_status.get(status, 0) + 1
        kind = call["kind"][-1][1]
        by_kind[kind] = by_kind.get(kind, 0) + 1
        if status not in FINAL_STATUSES:
            left_open.append(number)
    by_code: dict[str, int] = {}
    for finding in side.findings:
        by_code[finding[2]] = by_code.get(finding[2], 0) + 1
    return {
        "calls": len(calls),
        "byStatus": by_status,
        "byKind": by_kind,
        "open": left_open,
        "findings": dict(sorted(by_code.items())),
        "asks": len(side.asks.requests),
        "audit": side.asks.totals,
        "terminals": len(side.history.terminals),
    }
