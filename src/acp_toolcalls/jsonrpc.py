"""JSON-RPC envelopes that are not part of the typed tool-call surface.

Rules this module owns:

- A message whose method is not one the codec types (responses, errors, other methods,
  ``_``-prefixed extensions) is a ``JsonRpcMessage``: the object exactly as received, re-encoded
  unchanged. Its accessors only read it.
- A JSON-RPC batch is a ``Batch``; an element that cannot be read becomes an ``InvalidMessage``
  holding the raw element and its error, so one bad element costs nothing else.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from .lenient import DecodeError

__all__ = ["Batch", "InvalidMessage", "JsonRpcMessage", "request_key", "response"]


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


def response(request_id: Any, result: Any) -> JsonRpcMessage:
    """A JSON-RPC success response to ``request_id`` carrying ``result`` (plain JSON values)."""
    return JsonRpcMessage({"jsonrpc": "2.0", "id": request_id, "result": result})


def request_key(request_id: Any) -> Any:
    """A hashable key for a JSON-RPC id (ids are strings or numbers; anything else by repr)."""
    return request_id if isinstance(request_id, (str, int)) else repr(request_id)
