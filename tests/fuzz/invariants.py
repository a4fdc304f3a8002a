"""The invariants the fuzz targets assert, as plain functions (no hypothesis).

Messages are encoded with ``codec.canonical_json`` (the same bytes as ``encode``), which the
conftest does not record: the fuzz targets validate every message themselves.

Shared by the hypothesis targets (``tests/fuzz/test_fuzz_*.py``) and the atheris harness
(``fuzz/run.py``). Each raises ``AssertionError`` with what went wrong.

- ``check_outgoing``: a message a bridge, converter or the emitter sends encodes, validates
  against the bundled upstream schema of its target version, and its ``sessionUpdate`` is a
  variant that version's schema defines (no v2-only update reaches a v1 peer, no v1-only one a
  v2 peer).
- ``named``: what a raw message is about, read from its JSON independently of the library: the
  sessions it names, and per session the tool calls and terminals it may touch (the update's
  ``toolCallId``/``terminalId``, a permission subject's tool call).
- ``entities`` / ``changed``: a store's ``document()`` broken into one entry per call and per
  terminal, to compare before and after a message.
- ``Receiver``: the peer a bridge or the emitter talks to: checks everything it is sent
  (``check_outgoing``, passed-through messages, mapped answers, replies, the sessions a step may
  speak about, v1 first sight) and keeps its view, a store of its version.
- ``path_resolves``: a diagnostic or error path (``$.params.update.content[1]``) names a place
  whose parent exists in the input.
"""

from __future__ import annotations

import json
import re
from functools import cache
from importlib.resources import files
from typing import Any, cast

from acp_toolcalls import ToolCallStore, v1, v2
from acp_toolcalls.check import validate_message
from acp_toolcalls.codec import canonical_json
from acp_toolcalls.models import Batch, JsonRpcMessage, VersionName
from acp_toolcalls.store import Limits

__all__ = [
    "TYPED",
    "UNCAPPED",
    "Receiver",
    "check_outgoing",
    "check_reply",
    "entities",
    "flatten",
    "named",
    "path_resolves",
    "schema_updates",
]

TYPED: dict[str, tuple[type, ...]] = {
    "v1": (v1.SessionUpdateMessage, v1.PermissionRequestMessage),
    "v2": (v2.SessionUpdateMessage, v2.PermissionRequestMessage),
}
"""The typed messages of each version (what converters build, rather than pass through)."""


@cache
def schema_updates(protocol: str) -> frozenset[str]:
    """Every ``sessionUpdate`` value the bundled schema of ``protocol`` defines."""
    text = files("acp_toolcalls").joinpath(f"schemas/{protocol}/schema.json").read_text()
    union = json.loads(text)["$defs"]["SessionUpdate"]
    tags = set()
    for branch in union.get("anyOf", []) + union.get("oneOf", []):
        const = branch.get("properties", {}).get("sessionUpdate", {}).get("const")
        if isinstance(const, str):
            tags.add(const)
    assert tags, f"no sessionUpdate variants found in the {protocol} schema"
    return frozenset(tags)


def flatten(messages: Any) -> list[Any]:
    """Messages with batches opened, in order."""
    out: list[Any] = []
    for message in messages:
        out += list(message.items) if isinstance(message, Batch) else [message]
    return out


def check_outgoing(message: Any, protocol: VersionName) -> Any:
    """Assert a typed outgoing message is valid ``protocol``; return it as JSON values."""
    assert isinstance(message, TYPED[protocol]), (
        f"expected a typed {protocol} message, got {type(message).__name__}"
    )
    value = json.loads(canonical_json(message))
    violations = validate_message(value, protocol)
    assert not violations, (
        f"sent a {protocol} message that does not validate: "
        f"{[str(v) for v in violations]}\n{json.dumps(value)[:1500]}"
    )
    if value.get("method") == "session/update":
        tag = value["params"]["update"]["sessionUpdate"]
        assert tag in schema_updates(protocol), f"{tag!r} is not a {protocol} session update"
    return value


def check_reply(reply: Any, protocol: VersionName) -> Any:
    """Assert an answer a bridge gives on the peer's behalf is a valid ``protocol`` response
    to ``session/request_permission`` that approves nothing (``cancelled``, or the refusal of a
    request reusing a pending id); return it as JSON values."""
    value = json.loads(canonical_json(reply))
    violations = validate_message(value, protocol, response_method="session/request_permission")
    assert not violations, f"invalid reply {value}: {[str(v) for v in violations]}"
    if "error" in value:
        assert value["error"]["code"] == -32600, f"unexpected error reply: {value}"
        return value
    assert value["result"]["outcome"]["outcome"] == "cancelled", f"reply approves: {value}"
    return value


UNCAPPED = Limits(max_content_items=None, max_terminal_bytes=None, max_tool_calls=None)


def _messages(raw: Any) -> list[Any]:
    if isinstance(raw, bytes | bytearray | memoryview | str):
        try:
            raw = json.loads(bytes(raw) if not isinstance(raw, str) else raw)
        except ValueError:
            return []
    return raw if isinstance(raw, list) else [raw]


def named(raw: Any) -> tuple[set[str], set[tuple[str, str, str]]]:
    """The sessions a raw message (or batch) names, and the ``(session, "call" | "terminal",
    id)`` entities it may change: read from the JSON, not through the library."""
    sessions: set[str] = set()
    touched: set[tuple[str, str, str]] = set()
    for message in _messages(raw):
        params = message.get("params") if isinstance(message, dict) else None
        if not isinstance(params, dict) or not isinstance(params.get("sessionId"), str):
            continue
        sid = params["sessionId"]
        sessions.add(sid)
        update = params.get("update")
        subject = params.get("subject")
        candidates = [
            ("call", update, "toolCallId"),
            ("terminal", update, "terminalId"),
            ("call", params.get("toolCall"), "toolCallId"),  # a v1 permission request
            ("call", subject.get("toolCall") if isinstance(subject, dict) else None, "toolCallId"),
        ]
        for kind, holder, key in candidates:
            if isinstance(holder, dict) and isinstance(holder.get(key), str):
                touched.add((sid, kind, holder[key]))
    return sessions, touched


def request_ids(raw: Any) -> list[Any]:
    """The ids of the permission requests in a raw message (or batch)."""
    return [
        message.get("id")
        for message in _messages(raw)
        if isinstance(message, dict) and message.get("method") == "session/request_permission"
    ]


def entities(document: dict[str, Any]) -> dict[tuple[str, str, str], Any]:
    """A store document as ``{(session, "call" | "terminal", id): entry}``."""
    out: dict[tuple[str, str, str], Any] = {}
    for sid, session in document["sessions"].items():
        for call in session["toolCalls"]:
            out[(sid, "call", call["toolCallId"])] = call
        for terminal in session["terminals"]:
            out[(sid, "terminal", terminal["terminalId"])] = terminal
    return out


def changed(before: dict[str, Any], after: dict[str, Any]) -> set[tuple[str, str, str]]:
    """The entities of two documents that differ (added, removed or changed)."""
    old, new = entities(before), entities(after)
    return {key for key in old.keys() | new.keys() if old.get(key) != new.get(key)}


def order(document: dict[str, Any]) -> dict[str, list[str]]:
    """Per session, the tool-call ids in document order."""
    return {
        sid: [call["toolCallId"] for call in session["toolCalls"]]
        for sid, session in document["sessions"].items()
    }


_PART = re.compile(r'\.([A-Za-z_][A-Za-z_0-9]*)|\["((?:[^"\\]|\\.)*)"\]|\[(\d+)\]')


def path_resolves(path: str, value: Any) -> bool:
    """Whether every step of ``path`` but the last exists in ``value`` (the last one may name
    a missing key). Paths the grammar cannot split (keys holding ``"]``) count as resolving."""
    if not path.startswith("$"):
        return False
    parts: list[Any] = []
    at = 1
    while at < len(path):
        found = _PART.match(path, at)
        if found is None:
            return True  # a key the path syntax does not escape: not checkable
        key, quoted, index = found.groups()
        parts.append(int(index) if index is not None else key if key is not None else quoted)
        at = found.end()
    for part in parts[:-1]:
        if (isinstance(part, int) and isinstance(value, list) and part < len(value)) or (
            isinstance(part, str) and isinstance(value, dict) and part in value
        ):
            value = cast(Any, value)[part]  # an int into a list or a str into a dict, as tested
        else:
            return False
    return True


class Receiver:
    """The receiving peer: checks what it is sent and keeps its view (a store of its version).

    ``first_sight``: a v1 client must see a ``tool_call`` (with a non-empty title) before any
    ``tool_call_update`` or permission request about the call (D46 (v2 to v1 bridge)). ``from_v1``:
    the sender is a v1 -> v2 bridge, which never sends a chunk or a v1-only update and never invents
    a ``null`` (D46 (v1 to v2 bridge)).
    """

    def __init__(
        self, protocol: VersionName, *, first_sight: bool = False, from_v1: bool = False
    ) -> None:
        self.protocol = protocol
        self.first_sight = first_sight
        self.from_v1 = from_v1
        self.view = ToolCallStore(version=protocol, limits=UNCAPPED)
        self.known: dict[str, set[str]] = {}  # per session: calls sent a v1 `tool_call`
        self.received: list[Any] = []  # every typed message, as JSON values
        self.asked: set[Any] = set()  # ids of the permission requests it was sent

    def close(self, session_id: str) -> None:
        """The sender forgot the session: what comes next about it starts afresh."""
        self.known.pop(session_id, None)
        self.view.sessions.pop(session_id, None)

    def receive(
        self,
        messages: Any,
        *,
        sessions: set[str] | None = None,
        raw: Any = None,
        replies: Any = (),
        losses: Any = (),
    ) -> None:
        """Check one step's output. ``sessions``: those it may speak about (``None``: any);
        ``raw``: the input line (what may pass through unchanged, what replies answer)."""
        inputs = _messages(raw) if raw is not None else []
        sender: VersionName = "v1" if self.protocol == "v2" else "v2"
        for loss in losses:
            assert loss.path.startswith("$"), loss
        for reply in replies:
            value = check_reply(reply, sender)
            answerable = [*request_ids(raw), *self.asked]  # (an id may be any JSON value)
            assert value["id"] in answerable, f"a reply to no request of the input: {value}"
        for message in flatten(messages):
            if isinstance(message, JsonRpcMessage):
                self._passed(message, inputs, sender)
                continue
            value = check_outgoing(message, self.protocol)
            self.received.append(value)
            sid = value["params"]["sessionId"]
            assert sessions is None or sid in sessions, f"spoke about session {sid!r}"
            self.view.apply(message)
            known = self.known.setdefault(sid, set())
            if value["method"] == "session/request_permission":
                self.asked.add(value["id"])
                if self.first_sight:
                    call = value["params"]["toolCall"]
                    assert call["toolCallId"] in known, f"asked about an unseen call: {value}"
                if self.from_v1:
                    _no_null(value["params"]["subject"]["toolCall"])
                continue
            update = value["params"]["update"]
            tag = update["sessionUpdate"]
            if self.first_sight and tag == "tool_call":
                assert update["title"], f"a v1 tool_call with an empty title: {update}"
                known.add(update["toolCallId"])
            elif self.first_sight and tag == "tool_call_update":
                assert update["toolCallId"] in known, f"an update before the tool_call: {update}"
            if self.from_v1:  # (content a v1 agent resends with more goes as chunks: D38 note)
                assert tag != "tool_call", update
                if tag == "tool_call_update":
                    _no_null(update)

    def _passed(self, message: JsonRpcMessage, inputs: list[Any], sender: VersionName) -> None:
        data = message.data
        if data in inputs:
            return  # passed through unchanged
        if data.get("method") == "$/cancel_request":  # a request the bridge gave up
            assert data["params"]["requestId"] in self.asked, f"withdrew no request: {data}"
            return
        # Otherwise: the answer to a forwarded permission request, mapped to the sender's side.
        assert "method" not in data and "result" in data, f"sent a message not in the input: {data}"
        violations = validate_message(data, sender, response_method="session/request_permission")
        assert not violations, [str(v) for v in violations]
        outcome = data["result"]["outcome"]
        if outcome["outcome"] == "selected":
            chosen = [
                message["result"]["outcome"].get("optionId")
                for message in inputs
                if isinstance(message, dict)
                and isinstance(message.get("result"), dict)
                and isinstance(message["result"].get("outcome"), dict)
                and message["result"]["outcome"].get("outcome") == "selected"
            ]
            assert outcome["optionId"] in chosen, f"approved {outcome}, which nobody chose"


def _no_null(update: dict[str, Any]) -> None:
    nulls = [key for key, value in update.items() if value is None]
    assert not nulls, f"invented a null clear of {nulls} toward v2: {update}"
