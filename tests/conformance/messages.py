"""Builders of the JSON-RPC messages the conformance vectors are made of (what a client reads
or sends, as a log holds them); one session, ``S``, unless a case names another."""

from __future__ import annotations

import base64
from typing import Any

S = "sess_1"
"""The session of every case that names none."""

Message = dict[str, Any]


def update(body: Message, session: str = S) -> Message:
    """A ``session/update`` notification carrying ``body``."""
    return {
        "jsonrpc": "2.0",
        "method": "session/update",
        "params": {"sessionId": session, "update": body},
    }


def tcu(call_id: str = "call_1", session: str = S, **fields: Any) -> Message:
    """A ``tool_call_update`` (v1 and v2); ``meta=`` is its ``_meta``."""
    return update(
        {"sessionUpdate": "tool_call_update", "toolCallId": call_id, **_wire(fields)}, session
    )


def tool_call(call_id: str = "call_1", session: str = S, **fields: Any) -> Message:
    """A v1 ``tool_call`` (on a v2 stream: an unknown update, D17)."""
    return update({"sessionUpdate": "tool_call", "toolCallId": call_id, **_wire(fields)}, session)


def chunk(call_id: str, item: Message, session: str = S, **fields: Any) -> Message:
    """A v2 ``tool_call_content_chunk`` appending ``item``."""
    body = {"sessionUpdate": "tool_call_content_chunk", "toolCallId": call_id, "content": item}
    return update({**body, **_wire(fields)}, session)


def text(value: str) -> Message:
    """A ``content`` item holding a text block."""
    return {"type": "content", "content": {"type": "text", "text": value}}


def diff_v2(path: str, text_after: str) -> Message:
    """A v2 diff item adding ``path`` with ``text_after`` (one line)."""
    return {
        "type": "diff",
        "changes": [{"operation": "add", "path": path, "fileType": "text"}],
        "patch": {
            "format": "git_patch",
            "text": f"diff --git {path} {path}\nnew file mode 100644\n--- /dev/null\n"
            f"+++ {path}\n@@ -0,0 +1 @@\n+{text_after}\n",
        },
    }


def terminal_item(terminal_id: str) -> Message:
    """A content item referring to a terminal."""
    return {"type": "terminal", "terminalId": terminal_id}


def terminal(terminal_id: str = "term_1", session: str = S, **fields: Any) -> Message:
    """A v2 ``terminal_update``; ``output=b"..."`` is base64-encoded as a snapshot."""
    if isinstance(fields.get("output"), bytes):
        fields["output"] = {"data": base64.b64encode(fields["output"]).decode()}
    body = {"sessionUpdate": "terminal_update", "terminalId": terminal_id, **_wire(fields)}
    return update(body, session)


def output(terminal_id: str, data: bytes | str, session: str = S) -> Message:
    """A v2 ``terminal_output_chunk``: bytes are encoded, a string is sent as it is."""
    encoded = base64.b64encode(data).decode() if isinstance(data, bytes) else data
    body = {"sessionUpdate": "terminal_output_chunk", "terminalId": terminal_id, "data": encoded}
    return update(body, session)


def b64(data: bytes) -> str:
    return base64.b64encode(data).decode()


OPTIONS = [
    {"optionId": "allow", "name": "Allow", "kind": "allow_once"},
    {"optionId": "reject", "name": "Reject", "kind": "reject_once"},
]


def permission(
    subject: Message | None, request_id: int = 7, session: str = S, **params: Any
) -> Message:
    """A v2 ``session/request_permission``: ``subject`` a tool-call update, or ``None`` for
    none; ``raw_subject=`` any other subject."""
    body: Message = {"sessionId": session, "title": "Allow?", "options": OPTIONS}
    if "raw_subject" in params:
        body["subject"] = params.pop("raw_subject")
    elif subject is not None:
        body["subject"] = {"type": "tool_call", "toolCall": subject}
    body.update(params)
    return {
        "jsonrpc": "2.0",
        "id": request_id,
        "method": "session/request_permission",
        "params": body,
    }


def permission_v1(tool_call_fields: Message, request_id: int = 7, session: str = S) -> Message:
    """A v1 ``session/request_permission`` whose ``toolCall`` is ``tool_call_fields``."""
    params = {"sessionId": session, "toolCall": _wire(tool_call_fields), "options": OPTIONS}
    return {
        "jsonrpc": "2.0",
        "id": request_id,
        "method": "session/request_permission",
        "params": params,
    }


def selected(request_id: int = 7, option: str = "allow") -> Message:
    """The client's answer to a permission request: ``option`` selected."""
    outcome = {"outcome": "selected", "optionId": option}
    return {"jsonrpc": "2.0", "id": request_id, "result": {"outcome": outcome}}


def cancelled_answer(request_id: int = 7) -> Message:
    """The client's answer to a permission request cancelled by the turn (D6)."""
    return {"jsonrpc": "2.0", "id": request_id, "result": {"outcome": {"outcome": "cancelled"}}}


def session_cancel(session: str = S) -> Message:
    return {"jsonrpc": "2.0", "method": "session/cancel", "params": {"sessionId": session}}


def tool_call_cancel(call_id: str, request_id: int = 9, session: str = S) -> Message:
    """A v2 client's ``tool_call/cancel`` request."""
    params = {"sessionId": session, "toolCallId": call_id}
    return {"jsonrpc": "2.0", "id": request_id, "method": "tool_call/cancel", "params": params}


def answer(request_id: int) -> Message:
    """An empty successful response."""
    return {"jsonrpc": "2.0", "id": request_id, "result": {}}


def state(value: str, background: list[str] | None = None, session: str = S) -> Message:
    """A v2 ``state_update``; ``background`` names the tool calls running in the background."""
    body: Message = {"sessionUpdate": "state_update", "state": value}
    if background is not None:
        body["background"] = [{"type": "tool_call", "toolCallId": i} for i in background]
    return update(body, session)


def initialize(version: int) -> list[Message]:
    """An ``initialize`` request and its response, both with ``protocolVersion`` ``version``:
    any reducer can tell the version from the stream."""
    if version == 1:
        params: Message = {"protocolVersion": 1, "clientCapabilities": {}}
        result: Message = {"protocolVersion": 1, "agentCapabilities": {}, "authMethods": []}
    else:
        info = {"name": "conformance", "version": "1.0.0"}
        params = {"protocolVersion": version, "info": info, "capabilities": {}}
        result = {"protocolVersion": version, "info": info, "capabilities": {}}
    return [
        {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": params},
        {"jsonrpc": "2.0", "id": 0, "result": result},
    ]


def _wire(fields: dict[str, Any]) -> dict[str, Any]:
    """Keyword names to wire names: ``meta`` is ``_meta``; the others as given."""
    return {("_meta" if key == "meta" else key): value for key, value in fields.items()}


Case = dict[str, Any]


def case(
    case_id: str,
    tags: list[str],
    rule: str,
    messages: list[Any],
    *,
    protocol: int = 2,
    valid: bool = True,
) -> Case:
    """One hand-written case: ``rule`` is a key of ``rules.RULES``; a v1 case starts with an
    ``initialize`` exchange of version 1 (any reducer can tell the version from the stream);
    ``valid=False``: a message of it breaks the schema on purpose."""
    found: Case = {
        "id": case_id,
        "tags": tags,
        "rule": rule,
        "protocol": protocol,
        "messages": [*initialize(1), *messages] if protocol == 1 else messages,
    }
    if not valid:
        found["valid"] = False
    return found
