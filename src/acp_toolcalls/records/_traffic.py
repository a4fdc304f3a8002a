"""The bridge's traffic log: every line each side wrote or was sent, as JSON Lines.

Rules this module owns (the ``--log`` format of ``acp-toolcalls bridge``, which ``replay`` and
``validate`` read back):

- One record per line: ``{"time": <Unix time, seconds>, "direction": D, "protocol": 1 | 2 |
  null, "message": <the JSON-RPC message or batch, as it was on the wire>}``. ``D`` is
  ``client->proxy``, ``proxy->agent``, ``agent->proxy`` or ``proxy->client``; ``protocol`` is
  the version that side speaks (``null`` while it is not known yet).
- A line that is not JSON (or nests too deep to check) is kept as text under ``"line"``; a
  line over the limit, which the proxy skipped unread, is ``"skipped": <its size in bytes>``.
- The two directions of a side are one connection's whole stream (``client`` or ``agent``), so
  a side read back is a log like any other; records of the other side are left out.
- Credentials are left out by default (``Redactor``): the value of every ``env`` and
  ``headers`` entry anywhere in a message (MCP servers, terminal auth methods,
  ``terminal/create``), each ``_meta`` value of an auth method in an ``initialize`` result, every
  ``authenticate``/``auth/login`` param but ``methodId``, and every value of their results. A
  value becomes ``"<redacted>"`` (names, keys and shapes are kept, so the message stays valid);
  the record says ``"redacted": true``. Names are read from the parsed value, whatever their
  spelling (``"\\u0065nv"`` is ``env``); a line that may name one (a name above, or any
  escape) but cannot be parsed, or has a key twice in one object, is redacted whole: its
  message is the string ``"<redacted>"``. Redaction works at any depth the reader accepts.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Iterator, Mapping
from typing import Any, Literal

import msgspec

Direction = Literal["client->proxy", "proxy->agent", "agent->proxy", "proxy->client"]
Side = Literal["client", "agent"]
"""A side of the proxy: the editor's (``client``) or the agent's."""

DIRECTIONS: tuple[Direction, ...] = (
    "client->proxy",
    "proxy->agent",
    "agent->proxy",
    "proxy->client",
)
SIDES: dict[Side, frozenset[str]] = {
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


def log_line(
    direction: Direction, protocol: int | None, line: bytes, now: float, *, redacted: bool = False
) -> bytes:
    """The record of one wire line (without its newline), ending in a newline; ``redacted``:
    the line is a message with credentials replaced (``Redactor``)."""
    head = b'{"time":%s,"direction":"%s","protocol":%s,%s' % (
        repr(round(now, 6)).encode(),
        direction.encode(),
        b"null" if protocol is None else str(protocol).encode(),
        b'"redacted":true,' if redacted else b"",
    )
    try:
        _is_json.decode(line)
    except (msgspec.DecodeError, RecursionError):  # too deep to check here: kept as text
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


REDACTED = "<redacted>"
"""What a credential is replaced with in the log."""

_SECRET_LISTS = frozenset({"env", "headers"})
_AUTH_METHODS = frozenset({"authenticate", "auth/login"})
_TRIGGERS = (
    b'"env"',
    b'"headers"',
    b'"authMethods"',
    b'"authenticate"',
    b'"auth/login"',
    b"\\u",  # any name may be spelled with escapes: such a line is parsed
    b"\\/",
)
_MAX_ASKED = 1_024
_ANSWERED_IN: dict[str, str] = {
    "client->proxy": "proxy->client",
    "proxy->client": "client->proxy",
    "proxy->agent": "agent->proxy",
    "agent->proxy": "proxy->agent",
}


class Redactor:
    """Credentials out of the messages a log records (the module's rules say which).

    One per log: it remembers the ids of ``authenticate``/``auth/login`` requests until they
    are answered, to redact the answer. Redaction reads the parsed value, so a name spelled
    with escapes (``"\\u0065nv"``) is the name; a line that names a credential in any
    spelling but cannot be parsed, or has a key twice (readers disagree on which one counts),
    is redacted whole. Lines that cannot name one (none of the names, no escape) and are no
    awaited answer are not parsed.
    """

    def __init__(self) -> None:
        self._asked: dict[str, dict[bytes, None]] = {}  # answer direction -> ids awaiting one

    def record(self, direction: Direction, protocol: int | None, line: bytes, now: float) -> bytes:
        """``log_line`` of ``line`` with its credentials replaced."""
        redacted = self.redact(direction, line)
        if redacted is None:
            return log_line(direction, protocol, line, now)
        return log_line(direction, protocol, redacted, now, redacted=True)

    def redact(self, direction: Direction, line: bytes) -> bytes | None:
        """``line`` with its credentials replaced (``WHOLE`` when it is redacted whole), or
        ``None`` when it holds none."""
        waiting = self._asked.get(direction)
        if not waiting and not any(trigger in line for trigger in _TRIGGERS):
            return None
        try:
            value = _read_json.decode(line)
            if _has_repeats(line, value):
                return WHOLE
            changed = False
            for message in value if isinstance(value, list) else [value]:
                if isinstance(message, dict):
                    changed = self._message(direction, message) or changed
            return msgspec.json.encode(value) if changed else None
        except (msgspec.MsgspecError, RecursionError, ValueError, TypeError, OverflowError):
            return WHOLE

    def _message(self, direction: Direction, message: dict[str, Any]) -> bool:
        changed = False
        request_id = msgspec.json.encode(message.get("id"))
        method = message.get("method")
        waiting = self._asked.get(direction)
        if method is None and waiting and request_id in waiting:
            del waiting[request_id]
            if isinstance(message.get("result"), dict) and message["result"]:
                message["result"] = _blank(message["result"])
                changed = True
        result = message.get("result")
        if method is None and isinstance(result, dict):
            for auth in result.get("authMethods") or ():
                if isinstance(auth, dict) and isinstance(auth.get("_meta"), dict):
                    auth["_meta"] = _blank(auth["_meta"])
                    changed = True
        params = message.get("params")
        if method in _AUTH_METHODS and "id" in message:
            asked = self._asked.setdefault(_ANSWERED_IN[direction], {})
            asked[request_id] = None
            if len(asked) > _MAX_ASKED:  # never answered: forget the oldest
                del asked[next(iter(asked))]
        if method in _AUTH_METHODS and "params" in message:
            if isinstance(params, dict):
                for key in params:
                    if key != "methodId":
                        params[key] = _blank(params[key])
                        changed = True
            elif params is not None:
                message["params"] = _blank(params)
                changed = True
        return _secret_lists(message) or changed


WHOLE = msgspec.json.encode(REDACTED)
"""What ``Redactor.redact`` gives for a line redacted whole: the record's message is the string
``REDACTED``."""

_ESCAPED_COLON = re.compile(rb"\\u003[aA]")


def _has_repeats(line: bytes, value: Any) -> bool:
    """Whether ``line`` (parsed as ``value``) has a key twice in one object. Outside strings a
    ``:`` follows each key, and msgspec writes a string's ``:`` as is: written back, the value
    has fewer ``:`` than the line, less its escaped ones (``\\u003a``), exactly when a repeat
    was dropped. An escaped backslash before ``u003a`` counts as an escape: a false alarm only
    redacts more."""
    escaped = len(_ESCAPED_COLON.findall(line)) if b"\\u003" in line else 0
    return line.count(b":") + escaped > msgspec.json.encode(value).count(b":")


def _blank(value: Any) -> Any:
    """``value`` with every scalar in it replaced by ``REDACTED`` (keys and shape kept; any
    depth: no recursion)."""
    if not isinstance(value, (dict, list)):
        return REDACTED
    root: Any = {} if isinstance(value, dict) else []
    stack: list[tuple[Any, Any]] = [(value, root)]
    while stack:
        source, target = stack.pop()
        pairs = source.items() if isinstance(source, dict) else enumerate(source)
        for key, item in pairs:
            if isinstance(item, (dict, list)):
                copy: Any = {} if isinstance(item, dict) else []
                stack.append((item, copy))
            else:
                copy = REDACTED
            if isinstance(target, dict):
                target[key] = copy
            else:
                target.append(copy)
    return root


def _secret_lists(value: Any) -> bool:
    """Blank the values of every ``env``/``headers`` entry in ``value`` (in place, any
    depth)."""
    changed = False
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, dict):
            for key, inner in item.items():
                if key in _SECRET_LISTS and isinstance(inner, (dict, list)) and inner:
                    item[key] = (
                        [_named(entry) for entry in inner]
                        if isinstance(inner, list)
                        else _blank(inner)
                    )
                    changed = True
                elif isinstance(inner, (dict, list)):
                    stack.append(inner)
        elif isinstance(item, list):
            stack.extend(inner for inner in item if isinstance(inner, (dict, list)))
    return changed


def _named(entry: Any) -> Any:
    """An ``{"name": ..., "value": ...}`` entry with everything but its name blanked."""
    if isinstance(entry, dict):
        return {key: item if key == "name" else _blank(item) for key, item in entry.items()}
    return _blank(entry)


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
    lines: Iterable[tuple[int, bytes | int]], side: Side
) -> Iterator[tuple[int, bytes | int]]:
    """Numbered lines (``validate.read_lines`` output) of a log, as ``side``'s stream.

    A record of ``side`` becomes its message (a skipped line its size, a line that was not
    JSON its text, so readers report them as usual); a record of the other side is left out;
    any other line passes as it is, so a log that is not the proxy's reads unchanged.
    """
    wanted = SIDES[side]
    for number, data in lines:
        if type(data) is bytes and data.find(_RECORD_HINT, 0, _HINT_WINDOW) >= 0:
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
