"""The capture formats ``inspect``, ``validate`` and ``replay`` read (D43).

Rules this module owns:

- ``FORMATS`` is the one table of the wrapped formats: how a line is recognised (its direction
  key holds one of the format's direction values, a message key is present, and it has no
  ``jsonrpc`` key), where the message is, which side sent it, and where its time is, in which
  unit. Any other log is plain JSON Lines of JSON-RPC messages (``PLAIN``).
- Detection (``CaptureReader``): the format is that of the first readable line that is a
  JSON-RPC message or batch (plain) or a line of a format of ``FORMATS``. Blank, overlong and
  unreadable lines and JSON scalars are no evidence (the readers report them as usual). JSON
  objects that are neither are held; ``NOT_A_LOG_AFTER`` of them before any evidence, or only
  such objects up to the end, and the input is no log of ACP messages: ``NotACapture``, whose
  one line says what the lines look like and which formats would be read (for an export of
  acp-devtools, one JSON document, how to get its capture lines).
- A plain log and a ``bridge --log`` file pass unchanged, line for line: the bridge's records
  are read by ``records.one_side`` and ``report.model`` as before.
- A line of a wrapped format becomes its message: the exact text of a string field (the wire
  line), or the exact bytes of an embedded JSON value; with who sent it (``client`` or
  ``agent``) and its time in Unix seconds, when the line has them. A readable JSON line of
  another shape in such a capture is not read: it gets a ``note`` saying why, on its own line
  number (never dropped silently). Line numbers are those of the file.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from datetime import datetime, timezone
from typing import Any, Literal, NamedTuple

import msgspec

from ..records import DIRECTIONS, Side

__all__ = [
    "FORMATS",
    "NOT_A_LOG_AFTER",
    "PLAIN",
    "CaptureFormat",
    "CaptureReader",
    "Captured",
    "NotACapture",
    "read_capture",
]

TimeUnit = Literal["s", "ms", "ms-or-iso"]

NOT_A_LOG_AFTER = 5
"""This many JSON objects that are neither a message nor a known wrapper, and nothing else
readable before them: not a log of ACP messages."""


@dataclass(frozen=True)
class CaptureFormat:
    """One capture format: a row of ``FORMATS``."""

    name: str
    """How messages name it."""
    direction: str
    """The key of the direction."""
    senders: Mapping[str, Side]
    """Each direction value, and which side sent the message."""
    message: tuple[str, ...]
    """The keys that may hold the message, the first one present wins."""
    time: str | None
    """The key of the time, if the format has one."""
    unit: TimeUnit = "s"
    """``s``: Unix seconds; ``ms``: Unix milliseconds; ``ms-or-iso``: either Unix milliseconds
    or an ISO-8601 string (UTC when it names no zone)."""
    fold_case: bool = False
    """Direction values are compared case-insensitively."""
    wrapped: bool = True
    """``False``: the lines are passed unchanged (the bridge's records, read by sides)."""


PLAIN = CaptureFormat("JSON Lines of JSON-RPC messages", "", {}, (), None, wrapped=False)
"""Today's input: one JSON-RPC message (or batch) per line."""

_CLIENT_SENT: Side = "client"
_AGENT_SENT: Side = "agent"

FORMATS: tuple[CaptureFormat, ...] = (
    # `acp-toolcalls bridge --log` (records/_traffic.py); read by sides, as `records.one_side`
    # does.
    CaptureFormat(
        "a `bridge --log` file",
        "direction",
        {
            "client->proxy": _CLIENT_SENT,
            "proxy->agent": _CLIENT_SENT,
            "agent->proxy": _AGENT_SENT,
            "proxy->client": _AGENT_SENT,
        },
        ("message", "line", "skipped"),
        "time",
        wrapped=False,
    ),
    # acp-devtools' CapturedMessage, one per line (`proxy --log json`, `inspect --format jsonl`;
    # packages/core/src/acp/types.ts of github.com/maksugr/acp-devtools): `raw` is the wire
    # line, `payload` its parse (null when it was not JSON-RPC), `timestamp` Unix ms.
    CaptureFormat(
        "an acp-devtools capture",
        "direction",
        {"editor-to-agent": _CLIENT_SENT, "agent-to-editor": _AGENT_SENT},
        ("raw", "payload"),
        "timestamp",
        "ms",
    ),
    # ACP-inspector's trace (docs/tooling/trace-format.md of github.com/venikman/ACP-inspector):
    # `json` is the message as a string; `direction` case-insensitive; `ts` ISO-8601 or Unix ms.
    CaptureFormat(
        "an ACP-inspector trace",
        "direction",
        {"fromclient": _CLIENT_SENT, "fromagent": _AGENT_SENT},
        ("json",),
        "ts",
        "ms-or-iso",
        fold_case=True,
    ),
    # acp_debug's SessionRecorder (acp_debug/recording/recorder.py): `ts` Unix seconds.
    CaptureFormat(
        "an acp_debug recording",
        "dir",
        {"c2a": _CLIENT_SENT, "a2c": _AGENT_SENT},
        ("msg",),
        "ts",
    ),
)
"""Every wrapped format read, in the order a line is tried against them."""

assert set(FORMATS[0].senders) == set(DIRECTIONS)  # the bridge's own directions

_ISO = re.compile(
    r"(\d{4}-\d{2}-\d{2})[Tt ](\d{2}:\d{2}(?::\d{2})?)(?:[.,](\d+))?(Z|z|[+-]\d{2}:?\d{2})?"
)
_JSON_RPC_KEYS = frozenset({"jsonrpc", "method", "id", "result", "error", "params"})
_SHOWN_KEYS = 8  # keys named in a message about a line
_DEVTOOLS_EXPORT = frozenset({"tool", "session", "messages"})  # storage/export.ts, SessionExport

_members = msgspec.json.Decoder(dict[str, msgspec.Raw])  # top-level members, values unparsed
_value = msgspec.json.Decoder()


class Captured(NamedTuple):
    """One line of a log, read in its format."""

    line: int
    data: bytes | int
    """The line as it is in the file (its size when it was over the limit)."""
    message: bytes | int
    """What the readers read: the message of a wrapped line, or the line itself."""
    sender: Side | None = None
    """Who sent the message, when the capture says."""
    time: float | None = None
    """When, in Unix seconds, when the capture says."""
    note: str | None = None
    """A readable line of another shape in a wrapped capture: why it is not read."""


class NotACapture(Exception):
    """The input's JSON objects are neither JSON-RPC messages nor lines of a known capture."""

    def __init__(self, line: int, looks: str) -> None:
        super().__init__(line, looks)
        self.line = line
        self.looks = looks

    def describe(self, shown: str) -> str:
        """One line for the user: what the input looks like, and what would be read."""
        return (
            f"{shown} is not a log of ACP messages: {self.looks}; give JSON Lines of JSON-RPC "
            "messages, a `bridge --log` file, or a capture of acp-devtools (`proxy --log "
            "json`, `inspect --format jsonl`), ACP-inspector or acp_debug"
        )


_Members = dict[str, msgspec.Raw]
_Shape = CaptureFormat | _Members | None  # a format (PLAIN too), an unknown object, no evidence


def _members_of(data: bytes | int) -> _Members | CaptureFormat | None:
    """The top-level members of a JSON object line; ``PLAIN`` for a JSON array; ``None`` for
    anything else (blank, overlong, unreadable, a scalar)."""
    if not isinstance(data, bytes):
        return None
    try:
        return _members.decode(data)
    except msgspec.ValidationError:  # JSON, but not an object with string keys
        return PLAIN if data.lstrip()[:1] == b"[" else None
    except (msgspec.DecodeError, RecursionError):
        return None


def _member(members: _Members, key: str | None) -> Any:
    """The value of the member ``key`` (``None``: absent, unreadable, or no key)."""
    raw = members.get(key) if key is not None else None
    if raw is None:
        return None
    try:
        return _value.decode(raw)
    except msgspec.DecodeError:
        return None


def _direction(fmt: CaptureFormat, members: _Members) -> str | None:
    value = _member(members, fmt.direction)
    if not isinstance(value, str):
        return None
    return value.casefold() if fmt.fold_case else value


def _format_of(members: _Members) -> CaptureFormat | None:
    """The format of ``FORMATS`` a line's members fit; ``PLAIN`` for a JSON-RPC message."""
    if "jsonrpc" not in members:
        for fmt in FORMATS:
            if _direction(fmt, members) in fmt.senders and any(k in members for k in fmt.message):
                return fmt
    return PLAIN if not _JSON_RPC_KEYS.isdisjoint(members) else None


def _shape(data: bytes | int) -> _Shape:
    members = _members_of(data)
    if members is None or isinstance(members, CaptureFormat):
        return members
    return _format_of(members) or members


def _keys(members: _Members) -> str:
    names = [json.dumps(key, ensure_ascii=False) for key in list(members)[:_SHOWN_KEYS]]
    more = ", …" if len(members) > _SHOWN_KEYS else ""
    return ", ".join(names) + more if names else "no keys"


def _looks(members: _Members) -> str:
    return f"a JSON object with the keys {_keys(members)}" if members else "an empty JSON object"


def _time(fmt: CaptureFormat, members: _Members) -> float | None:
    value = _member(members, fmt.time)
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return float(value) / 1000 if fmt.unit != "s" else float(value)
    if isinstance(value, str) and fmt.unit == "ms-or-iso":
        return _iso_seconds(value)
    return None


def _iso_seconds(text: str) -> float | None:
    """An ISO-8601 date and time as Unix seconds (UTC when it names no zone). Python 3.10's
    ``fromisoformat`` reads neither ``Z`` nor 7 fraction digits (.NET's), so both are taken
    apart here."""
    found = _ISO.fullmatch(text.strip())
    if found is None:
        return None
    day, clock, fraction, zone = found.groups()
    try:
        moment = datetime.fromisoformat(f"{day}T{clock}").replace(tzinfo=timezone.utc)
    except ValueError:
        return None
    seconds = moment.timestamp() + (int(fraction[:6].ljust(6, "0")) / 1e6 if fraction else 0)
    if zone is not None and zone not in "Zz":
        sign = -1 if zone[0] == "-" else 1
        seconds -= sign * (int(zone[1:3]) * 3600 + int(zone[-2:]) * 60)
    return seconds


def _message(fmt: CaptureFormat, members: _Members) -> bytes | None:
    """The message of a line: a string field's text as UTF-8, or an embedded value's bytes."""
    for key in fmt.message:
        raw = members.get(key)
        if raw is None or bytes(raw) == b"null":
            continue
        if bytes(raw)[:1] != b'"':
            return bytes(raw)
        try:
            text = _value.decode(raw)
        except msgspec.DecodeError:
            return None
        return str(text).encode("utf-8", "surrogatepass")
    return None


class CaptureReader:
    """Lines of a log in, ``Captured`` lines out, once the format is known (sans-I/O).

    ``feed`` returns what can be told so far (nothing while the format is undecided);
    ``finish`` what was held at the end of the input. Both raise ``NotACapture``.
    """

    def __init__(self) -> None:
        self.format: CaptureFormat | None = None
        self._held: list[tuple[int, bytes | int, _Members | None]] = []
        self._unknown = 0
        self._keysets: set[tuple[str, ...]] = set()

    @property
    def passes(self) -> bool:
        """The format is known, and its lines pass unchanged (a plain or a bridge log)."""
        return self.format is not None and not self.format.wrapped

    def feed(self, line: int, data: bytes | int) -> list[Captured]:
        fmt = self.format
        if fmt is not None:
            if not fmt.wrapped:
                return [Captured(line, data, data)]
            return [self._read(fmt, line, data)]
        shape = _shape(data)
        if isinstance(shape, CaptureFormat):
            self.format = shape
            return self._release(shape) + self.feed(line, data)
        self._held.append((line, data, shape))
        if shape is not None:
            self._unknown += 1
            self._keysets.add(tuple(shape))
            if self._unknown >= NOT_A_LOG_AFTER:
                raise self._refusal()
        return []

    def finish(self) -> list[Captured]:
        if self.format is not None or not self._held:
            return []
        if self._unknown:
            raise self._refusal()
        self.format = PLAIN  # nothing readable: the readers say so, line by line
        return self._release(PLAIN)

    def _release(self, fmt: CaptureFormat) -> list[Captured]:
        held, self._held = self._held, []
        if not fmt.wrapped:
            return [Captured(line, data, data) for line, data, _ in held]
        return [self._read(fmt, line, data) for line, data, _ in held]

    def _read(self, fmt: CaptureFormat, line: int, data: bytes | int) -> Captured:
        members = _members_of(data)
        if members is None:
            return Captured(line, data, data)  # no JSON object: the readers report it
        if isinstance(members, CaptureFormat):
            return Captured(line, data, data, note=f"a JSON array, not a line of {fmt.name}")
        sender = fmt.senders.get(_direction(fmt, members) or "")
        message = _message(fmt, members)
        if sender is None or message is None or "jsonrpc" in members:
            return Captured(line, data, data, note=self._why(fmt, members))
        return Captured(line, data, message, sender, _time(fmt, members))

    @staticmethod
    def _why(fmt: CaptureFormat, members: _Members) -> str:
        other = _format_of(members)
        if "jsonrpc" in members or other is PLAIN:
            looks = "a bare JSON-RPC message"
        elif other is not None and other is not fmt:
            looks = f"a line of {other.name}"
        else:
            looks = _looks(members)
            raw = members.get(fmt.direction)
            if raw is not None and _direction(fmt, members) not in fmt.senders:
                known = " or ".join(json.dumps(value) for value in fmt.senders)
                value = bytes(raw)[:40].decode("utf-8", "replace")
                looks += f" whose {json.dumps(fmt.direction)} is {value}, not {known}"
        return f"{looks}, not a line of {fmt.name}: not read"

    def _refusal(self) -> NotACapture:
        first = next(shape for _, _, shape in self._held if shape is not None)
        line = next(number for number, _, shape in self._held if shape is not None)
        if first.keys() >= _DEVTOOLS_EXPORT:
            looks = (
                "it is an export of acp-devtools (`acp-devtools export`, one JSON document); "
                "`jq -c '.messages[]' FILE` writes its capture lines, which are read"
            )
        elif len(self._keysets) == 1:
            looks = f"its lines are JSON objects with the keys {_keys(first)}"
            if not first:
                looks = "its lines are empty JSON objects"
        else:
            looks = (
                f"its line {line} is {_looks(first)}, and the next JSON objects are not "
                "JSON-RPC messages either"
            )
        return NotACapture(line, looks)


def read_capture(lines: Iterable[tuple[int, bytes | int]]) -> Iterator[Captured]:
    """``lines`` (numbered, as ``cli.lines.read_lines`` gives them) read in their format."""
    reader = CaptureReader()
    for line, data in lines:
        yield from reader.feed(line, data)
    yield from reader.finish()
