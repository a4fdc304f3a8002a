"""The JSON-RPC lines a converter writes itself, as plain JSON values.

Rules this module owns: a request, a notification, a result, an error answer and a
``session/update`` notification are built here, one way each, as the plain values (dicts) the
writer encodes (``models.response`` and ``models.error_response`` wrap a result or an error in a
typed envelope for the bridges' output instead). A ``None`` ``params`` or error ``data`` is
left out, not written as ``null``. The proxy's core and ``sessions.SessionConverter`` write
their own lines through these.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

__all__ = ["error", "notification", "request", "result", "update"]


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
