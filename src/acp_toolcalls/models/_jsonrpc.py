"""JSON-RPC envelopes that are not part of the typed tool-call surface.

Rules this module owns:

- A message whose method is not one the codec types (responses, errors, other methods,
  ``_``-prefixed extensions) is a ``JsonRpcMessage``: the object exactly as received, re-encoded
  unchanged. Its accessors only read it.
- A JSON-RPC batch is a ``Batch``; an element that cannot be read becomes an ``InvalidMessage``
  holding the raw element and its error, so one bad element costs nothing else.
- The JSON-RPC error codes and the cancelled answer to a permission request are defined here
  and nowhere else.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from .._errors import DecodeError

__all__ = [
    "CANCELLED_OUTCOME",
    "INTERNAL_ERROR",
    "INVALID_PARAMS",
    "INVALID_REQUEST",
    "METHOD_NOT_FOUND",
    "PARSE_ERROR",
    "REQUEST_CANCELLED",
    "UNSUPPORTED_PROTOCOL_VERSION",
    "Batch",
    "InvalidMessage",
    "JsonRpcMessage",
    "error_response",
    "plain_id",
    "request_key",
    "response",
]


class JsonRpcMessage:
    """Any other JSON-RPC message (request, notification or response), kept verbatim."""

    __slots__ = ("data",)

    def __init__(self, data: Mapping[str, Any]) -> None:
        self.data = data

    @property
    def method(self) -> str | None:
        """The method of a request or notification; ``None`` for a response."""
        method = self.data.get("method")
        return method if isinstance(method, str) else None

    @property
    def id(self) -> Any:
        """The request/response id (``None`` when absent)."""
        return self.data.get("id")

    @property
    def is_response(self) -> bool:
        """A response: an id and no method."""
        return "method" not in self.data and "id" in self.data

    def __eq__(self, other: object) -> bool:
        return isinstance(other, JsonRpcMessage) and other.data == self.data

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"JsonRpcMessage({dict(self.data)!r})"


class InvalidMessage:
    """A batch element that could not be read: the raw element and why."""

    __slots__ = ("data", "error")

    def __init__(self, data: Any, error: DecodeError) -> None:
        self.data = data
        self.error = error

    def __repr__(self) -> str:
        return f"InvalidMessage({self.error})"


class Batch:
    """A JSON-RPC batch: its elements in array order."""

    __slots__ = ("items",)

    def __init__(self, items: Sequence[Any]) -> None:
        self.items: tuple[Any, ...] = tuple(items)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Batch) and other.items == self.items

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"Batch({list(self.items)!r})"


PARSE_ERROR = -32700
INVALID_REQUEST = -32600
METHOD_NOT_FOUND = -32601
INVALID_PARAMS = -32602
INTERNAL_ERROR = -32603
REQUEST_CANCELLED = -32800
"""JSON-RPC error codes (the last one is ACP's answer to a ``$/cancel_request``ed request)."""
UNSUPPORTED_PROTOCOL_VERSION = -32022
"""ACP's error when no protocol version the agent speaks is at or below the one asked for."""

CANCELLED_OUTCOME: Mapping[str, Any] = {"outcome": {"outcome": "cancelled"}}
"""The result of a permission request that is not approved: cancelled (both versions)."""


def response(request_id: Any, result: Any) -> JsonRpcMessage:
    """A JSON-RPC success response to ``request_id`` carrying ``result`` (plain JSON values)."""
    return JsonRpcMessage({"jsonrpc": "2.0", "id": request_id, "result": result})


def error_response(request_id: Any, code: int, message: str, data: Any = None) -> JsonRpcMessage:
    """A JSON-RPC error response to ``request_id`` (``data`` only when given)."""
    error: dict[str, Any] = {"code": code, "message": message}
    if data is not None:
        error["data"] = data
    return JsonRpcMessage({"jsonrpc": "2.0", "id": request_id, "error": error})


def request_key(request_id: Any) -> Any:
    """A hashable key for a JSON-RPC id: a string or an integer is its own key; anything else
    (``null``, ``true``, ``1.0``, an object) is keyed by its type and repr, so that it never
    equals the key of a string or integer id (``true == 1`` and ``1.0 == 1`` in Python)."""
    kind = type(request_id)
    return request_id if kind is str or kind is int else (kind.__name__, repr(request_id))


def plain_id(request_id: Any) -> Any:
    """``request_id`` when JSON-RPC lets a response echo it (a string or an integer), else
    ``None``: the ``null`` id of an answer to a request whose id cannot be echoed."""
    kind = type(request_id)
    return request_id if kind is str or kind is int else None
