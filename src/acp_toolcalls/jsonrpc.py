"""Deprecated alias of ``acp_toolcalls.models`` (issue 18); kept for one release.

The JSON-RPC envelopes, error codes and the cancelled permission answer now live in
``acp_toolcalls.models._jsonrpc``; import them from ``acp_toolcalls.models``.
"""

from __future__ import annotations

from .models import (
    CANCELLED_OUTCOME,
    INTERNAL_ERROR,
    INVALID_PARAMS,
    INVALID_REQUEST,
    METHOD_NOT_FOUND,
    PARSE_ERROR,
    REQUEST_CANCELLED,
    Batch,
    InvalidMessage,
    JsonRpcMessage,
    error_response,
    plain_id,
    request_key,
    response,
)

__all__ = [
    "CANCELLED_OUTCOME",
    "INTERNAL_ERROR",
    "INVALID_PARAMS",
    "INVALID_REQUEST",
    "METHOD_NOT_FOUND",
    "PARSE_ERROR",
    "REQUEST_CANCELLED",
    "Batch",
    "InvalidMessage",
    "JsonRpcMessage",
    "error_response",
    "plain_id",
    "request_key",
    "response",
]
