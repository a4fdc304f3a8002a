"""The proxy's traffic log: every line each side wrote or was sent, as JSON Lines.

Rules this module owns (the ``--log`` format of ``acp-toolcalls bridge``, which ``replay`` and
``validate`` read back):

- One record per line: ``{"time": <Unix time, seconds>, "direction": D, "protocol": 1 | 2 |
  null, "message": <the JSON-RPC message or batch, as it was on the wire>}``. ``D`` is
  ``client->proxy``, ``proxy->agent``, ``agent->proxy`` or ``proxy->client``; ``protocol`` is
  the version that side speaks (``null`` while it is not known yet).
- A line that is not JSON is kept as text under ``"line"``; a line over the limit, which the
  proxy skipped unread, is ``"skipped": <its size in bytes>``.
- The two directions of a side are one connection's whole stream (``client`` or ``agent``), so
  a side read back is a log like any other; records of the other side are left out.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator, Mapping
from typing import Any, Literal

import msgspec

__all__ = [
    "DIRECTIONS",
    "SIDES",
    "TrafficRecord",
    "is_record",
    "log_line",
    "one_side",
    "read_record",
    "skipped_line",
]

Direction = Literal["client->proxy", "proxy->agent", "agent->proxy", "proxy->client"]
LogSide = Literal["client", "agent"]

DIRECTIONS: tuple[Direction, ...] = (
    "client->proxy",
    "proxy->agent",
    "agent->proxy",
    "proxy->client",
)
SIDES: dict[LogSide, frozenset[str]] = {
    "client": frozenset({"client->proxy", "proxy->client"}),
    "agent": frozenset({"agent->proxy", "proxy->agent"}),
}

_is_json = msgspec.json.Decoder(msgspec.Raw)
_read_json = msgspec.json.Decoder()
_RECORD_HINT = b'"direction"'
_HINT_WINDOW = 96  # `log_line` writes "direction" within the first bytes of a record


class TrafficRecord(msgspec.Struct, frozen=True):
    """One record read back: where it went, in which version, and the message (or ``None``
    when the line was not JSON or was skipped)."""

    direction: str
    protocol: int | None
    message: Any
    time: float | None = None


def log_line(direction: Direction, protocol: int | None, line: bytes, now: float) -> bytes:
    """The record of one wire line (without its newline), ending in a newline."""
    head = b'{"time":%s,"direction":"%s","protocol":%s,' % (
        repr(round(now, 6)).encode(),
        direction.encode(),
        b"null" if protocol is None else str(protocol).encode(),
    )
    try:
        _is_json.decode(line)
    except msgspec.DecodeError:
        text = line.decode("utf-8", "replace")
        return head + b'"line":' + json.dumps(text).encode() + b"}\n"
    return head + b'"message":' + line + b"}\n"


def skipped_line(direction: Direction, protocol: int | None, size: int, now: float) -> bytes:
    """The record of a line over the limit that was skipped unread."""
    return b'{"time":%s,"direction":"%s","protocol":%s,"skipped":%d}\n' % (
        repr(round(now, 6)).encode(),
        direction.encode(),
        b"null" if protocol is None else str(protocol).encode(),
        size,
    )


def is_record(value: Any) -> bool:
    """Whether a JSON value read from a log line is a traffic record (not a JSON-RPC message)."""
    return (
        isinstance(value, Mapping)
        and value.get("direction") in DIRECTIONS
        and "jsonrpc" not in value
        and ("message" in value or "line" in value or "skipped" in value)
    )


def read_record(value: Mapping[str, Any]) -> TrafficRecord:
    """A record (``is_record(value)`` holds) as a ``TrafficRecord``."""
    protocol = value.get("protocol")
    when = value.get("time")
    return TrafficRecord(
        direction=str(value["direction"]),
        protocol=protocol if protocol in (1, 2) else None,
        message=value.get("message"),
        time=float(when) if isinstance(when, (int, float)) and not isinstance(when, bool) else None,
    )


def one_side(
    lines: Iterable[tuple[int, bytes | int]], side: LogSide
) -> Iterator[tuple[int, bytes | int]]:
    """Numbered lines (``validate.read_lines`` output) of a log, as ``side``'s stream.

    A record of ``side`` becomes its message (a skipped line its size, a line that was not
    JSON its text, so readers report them as usual); a record of the other side is left out;
    any other line passes as it is, so a log that is not the proxy's reads unchanged.
    """
    wanted = SIDES[side]
    for number, data in lines:
        if isinstance(data, bytes) and _RECORD_HINT in data[:_HINT_WINDOW]:
            try:
                value = _read_json.decode(data)
            except msgspec.DecodeError:
                value = None
            if is_record(value):
                if value["direction"] not in wanted:
                    continue
                if "message" in value:
                    yield number, msgspec.json.encode(value["message"])
                elif isinstance(value.get("skipped"), int):
                    yield number, value["skipped"]
                else:
                    yield number, str(value.get("line", "")).encode("utf-8", "replace")
                continue
        yield number, data
