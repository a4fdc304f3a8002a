"""Deprecated alias of acp_toolcalls.proxy.rpc (issue 18); kept for one release."""

from __future__ import annotations

from .proxy import rpc as _rpc

__all__ = [
    "Envelope",
    "Pending",
    "RequestIds",
    "Unreadable",
    "error",
    "notification",
    "plain",
    "read_envelope",
    "read_line",
    "read_update",
    "replace_lone_surrogates",
    "request",
    "result",
    "salvage_id",
    "update",
    "whole",
]

Envelope = _rpc.Envelope
Pending = _rpc.Pending
RequestIds = _rpc.RequestIds
Unreadable = _rpc.Unreadable
error = _rpc.error
notification = _rpc.notification
plain = _rpc.plain
read_envelope = _rpc.read_envelope
read_line = _rpc.read_line
read_update = _rpc.read_update
replace_lone_surrogates = _rpc.replace_lone_surrogates
request = _rpc.request
result = _rpc.result
salvage_id = _rpc.salvage_id
update = _rpc.update
whole = _rpc.whole
