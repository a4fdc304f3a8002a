"""What the proxy reads of a JSON-RPC line to route it, the lines it writes, and request ids.

Rules this module owns:

- Routing reads an ``Envelope``: ``method``, ``id`` and the raw ``params``/``result``/``error``
  (decoded only when needed), so a line is parsed once for routing and its payload is handed on
  as bytes.
- A request forwarded to a side is sent under an id ``RequestIds`` allocates for that side and
  answered back under its sender's id: the ids of the two sides, and of any request the proxy
  sends itself, never meet on one side. ``keep`` records a request forwarded under its own id
  (before versions are known); allocated ids skip those.
"""

from __future__ import annotations

import itertools
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import msgspec
from msgspec import UNSET, UnsetType

from .jsonrpc import request_key

__all__ = [
    "Envelope",
    "Pending",
    "RequestIds",
    "error",
    "notification",
    "plain",
    "read_envelope",
    "read_line",
    "read_update",
    "request",
    "result",
    "update",
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


def plain(raw: msgspec.Raw | UnsetType) -> Any:
    """A raw payload of an ``Envelope`` as plain JSON values (``None`` when absent)."""
    return None if raw is UNSET else _read_plain.decode(raw)


def whole(line: bytes) -> Any:
    """The whole message as plain JSON values."""
    return _read_plain.decode(line)


# The lines the connection writes itself, as plain JSON values (``jsonrpc.response`` wraps a
# result for the bridges' output instead).


def request(request_id: Any, method: str, params: Any) -> dict[str, Any]:
    out: dict[str, Any] = {"jsonrpc": "2.0", "id": request_id, "method": method}
    if params is not None:
        out["params"] = params
    return out


def notification(method: str, params: Any) -> dict[str, Any]:
    out: dict[str, Any] = {"jsonrpc": "2.0", "method": method}
    if params is not None:
        out["params"] = params
    return out


def result(request_id: Any, result: Any) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": request_id, "result": result}


def error(request_id: Any, code: int, message: str, data: Any = None) -> dict[str, Any]:
    error: dict[str, Any] = {"code": code, "message": message}
    if data is not None:
        error["data"] = data
    return {"jsonrpc": "2.0", "id": request_id, "error": error}


def update(session_id: Any, update: Mapping[str, Any]) -> dict[str, Any]:
    return notification("session/update", {"sessionId": session_id, "update": update})


@dataclass
class Pending:
    """A request forwarded to one side, waiting for its answer."""

    origin_id: Any  # the id its sender used
    method: str  # in the sender's version
    session_id: Any = None
    params: Any = None  # the sender's params, where the answer needs them
    discard: bool = False  # answered by the connection already: drop the late answer


class RequestIds:
    """Ids of requests sent to one side: allocated here, mapped back on the answer."""

    def __init__(self) -> None:
        self.pending: dict[Any, Pending] = {}
        self.by_origin: dict[Any, Any] = {}
        self._next = itertools.count(1)

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
