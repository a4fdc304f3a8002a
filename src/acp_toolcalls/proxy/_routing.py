"""What the proxy reads of a JSON-RPC line to route it, and request ids (the lines it writes
itself are ``lifecycle.jsonrpc``'s).

Rules this module owns:

- Routing reads an ``Envelope``: ``method``, ``id`` and the raw ``params``/``result``/``error``
  (decoded only when needed), so a line is parsed once for routing and its payload is handed on
  as bytes.
- A request forwarded to a side is sent under an id ``RequestIds`` allocates for that side and
  answered back under its sender's id: the ids of the two sides, and of any request the proxy
  sends itself, never meet on one side. ``keep`` records a request forwarded under its own id
  (before versions are known); allocated ids skip those.
- Reading never raises anything but ``Unreadable`` for bad payloads. A line that is not JSON
  only because a string holds an unpaired UTF-16 surrogate escape (a JavaScript peer that cut
  an emoji in two) is read with each such escape replaced by ``\\ufffd``
  (``replace_lone_surrogates``); for a line that cannot be read at all, ``salvage_id`` finds
  its top-level ``id`` (and whether it has a ``method``) without parsing the rest, so that a
  request still gets its answer.
- A plain ``session/update`` with nothing but the usual members (``ENVELOPE_KEYS``) and an
  update the codec keeps opaque is handed to a bridge as a typed message (``opaque_message``),
  so the bridge does not read it again; anything unusual takes the bridge's lenient reading.
"""

from __future__ import annotations

import itertools
import re
from dataclasses import dataclass
from typing import Any, Literal

import msgspec
from msgspec import UNSET, UnsetType

from .. import v1, v2
from ..codec import DecodeError, check_depth
from ..models import request_key

__all__ = [
    "ENVELOPE_KEYS",
    "Envelope",
    "Pending",
    "RequestIds",
    "Unreadable",
    "opaque_message",
    "plain",
    "read_envelope",
    "read_line",
    "read_update",
    "replace_lone_surrogates",
    "salvage_id",
    "whole",
]


class Envelope(msgspec.Struct):
    """The parts of a JSON-RPC message routing needs; the payloads stay raw."""

    method: str | UnsetType = UNSET
    id: Any = UNSET
    params: msgspec.Raw | UnsetType = UNSET
    result: msgspec.Raw | UnsetType = UNSET
    error: msgspec.Raw | UnsetType = UNSET


class UpdateTag(msgspec.Struct):
    """What routing reads of a ``session/update`` payload."""

    sessionUpdate: Any = None
    state: Any = None


class UpdateParams(msgspec.Struct):
    """What routing reads of ``session/update`` params."""

    sessionId: Any = None
    update: UpdateTag | None = None


read_line = msgspec.json.Decoder(Envelope | list[Any])
read_envelope = msgspec.json.Decoder(Envelope)
read_update = msgspec.json.Decoder(UpdateParams)
_read_plain = msgspec.json.Decoder()


class Unreadable(ValueError):
    """A payload the envelope read skipped over is not JSON the proxy can read (a number out
    of range, invalid UTF-8 in a string, nesting deeper than the codec's ``MAX_DEPTH``)."""


def plain(raw: msgspec.Raw | UnsetType) -> Any:
    """A raw payload of an ``Envelope`` as plain JSON values (``None`` when absent)."""
    return None if raw is UNSET else whole(raw)


def whole(line: bytes | msgspec.Raw) -> Any:
    """The whole message (or payload) as plain JSON values; ``Unreadable`` if it is not JSON."""
    try:
        check_depth(line if type(line) is bytes else bytes(line))  # the codec's one limit
        return _read_plain.decode(line)
    except DecodeError as exc:  # deeper than every writer writes (issue 27)
        raise Unreadable(exc.reason) from None
    except (msgspec.DecodeError, RecursionError) as exc:
        reason = "nesting is too deep" if isinstance(exc, RecursionError) else str(exc)
        raise Unreadable(reason) from None


# Every escape of a JSON string: `\uXXXX` (group 1: its hex digits) or a one-character escape.
# Outside strings valid JSON has no backslash, so scanning escapes left to right is exact.
_ESCAPE = re.compile(rb"\\(?:u([0-9a-fA-F]{4})|.)", re.DOTALL)
_REPLACEMENT = rb"\ufffd"


def replace_lone_surrogates(line: bytes) -> tuple[bytes, int]:
    """``line`` with every unpaired UTF-16 surrogate escape (``\\ud83d`` not followed by a low
    surrogate escape, or a low one not preceded by a high one) replaced by ``\\ufffd``, and
    how many were replaced. Paired escapes and everything else stay byte for byte."""
    if b"\\u" not in line:
        return line, 0
    lone: list[tuple[int, int]] = []
    high: tuple[int, int] | None = None  # a high surrogate escape waiting for its low half
    for match in _ESCAPE.finditer(line):
        digits = match.group(1)
        unit = int(digits, 16) if digits is not None else -1
        if 0xDC00 <= unit <= 0xDFFF and high is not None and high[1] == match.start():
            high = None  # a pair
            continue
        if high is not None:
            lone.append(high)
            high = None
        if 0xD800 <= unit <= 0xDBFF:
            high = match.span()
        elif 0xDC00 <= unit <= 0xDFFF:
            lone.append(match.span())
    if high is not None:
        lone.append(high)
    if not lone:
        return line, 0
    parts: list[bytes] = []
    last = 0
    for start, end in lone:
        parts += (line[last:start], _REPLACEMENT)
        last = end
    parts.append(line[last:])
    return b"".join(parts), len(lone)


_TOKEN = re.compile(
    rb'\s*(?:"((?:[^"\\]|\\.)*)"|([-0-9.eE+]+|true|false|null)|([{}\[\],:]))', re.DOTALL
)


def salvage_id(line: bytes) -> tuple[Any, bool]:
    """The top-level ``id`` of a line that cannot be parsed (``UNSET`` when there is none or it
    cannot be read) and whether the line has a top-level ``method``. Only the top level is
    read: nested values are skipped by counting brackets, so nesting of any depth costs no
    recursion."""
    position, depth, key, expect_key = 0, 0, None, False
    found: Any = UNSET
    has_method = False
    while position < len(line):
        token = _TOKEN.match(line, position)
        if token is None:
            break
        position = token.end()
        text, _value, mark = token.groups()
        if mark is not None:
            if mark in (b"{", b"["):
                depth += 1
                expect_key = depth == 1 and mark == b"{"
            elif mark in (b"}", b"]"):
                depth -= 1
                if depth <= 0:
                    break
            elif mark == b"," and depth == 1:
                expect_key = True
            continue
        if depth != 1:
            continue
        if expect_key and text is not None:
            key, expect_key = text, False
            continue
        if key == b"id":
            found = _scalar(token.group().strip())
        elif key == b"method":
            has_method = True
        key = None
    return found, has_method


def _scalar(raw: bytes) -> Any:
    try:
        return _read_plain.decode(raw)
    except msgspec.DecodeError:
        return UNSET


ENVELOPE_KEYS = frozenset({"jsonrpc", "method", "params"})
"""The members of a plain notification's envelope."""
_PARAMS_KEYS = frozenset({"sessionId", "update"})


def opaque_message(message: Any, version: Literal[1, 2]) -> Any:
    """A plain ``session/update`` with an opaque update (messages, plans, ...) as its typed
    message, so a bridge maps it without reading it again; ``None`` for anything unusual,
    which then takes the bridge's own (lenient) reading."""
    params = message.get("params") if isinstance(message, dict) else None
    if not (
        isinstance(params, dict)
        and message.keys() <= ENVELOPE_KEYS
        and message.get("jsonrpc") == "2.0"
        and params.keys() <= _PARAMS_KEYS
        and isinstance(params.get("sessionId"), str)
        and isinstance(params.get("update"), dict)
        and isinstance(params["update"].get("sessionUpdate"), str)
    ):
        return None
    if version == 2:
        notification = v2.UpdateSessionNotification(
            session_id=params["sessionId"], update=v2.OpaqueSessionUpdate(params["update"])
        )
        return v2.SessionUpdateMessage(params=notification)
    return v1.SessionUpdateMessage(
        params=v1.SessionNotification(
            session_id=params["sessionId"], update=v1.OpaqueSessionUpdate(params["update"])
        )
    )


@dataclass
class Pending:
    """A request forwarded to one side, waiting for its answer."""

    origin_id: Any  # the id its sender used
    method: str  # in the sender's version
    session_id: Any = None
    params: Any = None  # the sender's params, where the answer needs them
    discard: bool = False  # answered by the connection already: drop the late answer
    withdrawn: bool = False  # sent `$/cancel_request` already


class RequestIds:
    """Ids of requests sent to one side: allocated here, mapped back on the answer. At most
    ``cap`` are pending: past it, ``over_cap`` hands the oldest to the caller to settle."""

    def __init__(self, cap: int | None = None) -> None:
        self.cap = cap
        self.pending: dict[Any, Pending] = {}
        self.by_origin: dict[Any, Any] = {}
        self._next = itertools.count(1)

    def over_cap(self) -> tuple[Any, Pending] | None:
        """Past the cap: the oldest pending request but an ``initialize`` (the connection
        cannot go on without its answer), no longer pending (its forwarded id and what was
        kept of it); else ``None``."""
        if self.cap is None or len(self.pending) <= self.cap:
            return None
        key = next(k for k, p in self.pending.items() if p.method != "initialize")
        pending = self.pending.pop(key)
        forwarded = self.by_origin.pop(request_key(pending.origin_id), key)
        return forwarded, pending

    def allocate(self, pending: Pending) -> int:
        new_id = next(self._next)
        while new_id in self.pending:  # an id forwarded unchanged before conversion began
            new_id = next(self._next)
        self.pending[new_id] = pending
        self.by_origin[request_key(pending.origin_id)] = new_id
        return new_id

    def keep(self, request_id: Any, pending: Pending) -> None:
        """A request forwarded under its own id (before versions are known)."""
        self.pending[request_key(request_id)] = pending
        self.by_origin[request_key(request_id)] = request_id

    def pop(self, request_id: Any) -> Pending | None:
        pending = self.pending.pop(request_key(request_id), None)
        if pending is not None:
            self.by_origin.pop(request_key(pending.origin_id), None)
        return pending

    def forwarded_id(self, origin_id: Any) -> Any:
        """The id a pending request was forwarded under, from its sender's id (``UNSET``)."""
        return self.by_origin.get(request_key(origin_id), UNSET)
