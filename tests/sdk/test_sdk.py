"""``acp_toolcalls.sdk`` against the real official SDK (``acp``) on both ends of a socket pair.

Each test wires an SDK agent connection to an SDK client connection over an in-process
``socket.socketpair`` (newline-delimited JSON, exactly as over stdio) and looks at what the
client's raw ``Connection`` received, through an observer. These tests also pin the SDK
behaviour the adapter exists for or relies on (``exclude_none`` on the v1 send path, the
private ``_conn`` attribute, how the v2 models salvage invalid values), so that an SDK release
that changes any of it fails here.
"""

from __future__ import annotations

import asyncio
import importlib.metadata
import logging
import socket
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from typing import Any, cast

import pytest

pytest.importorskip("acp")

import acp.schema as sdk_v1
import pydantic
from acp.agent.connection import AgentSideConnection as V1AgentSide
from acp.client.connection import ClientSideConnection as V1ClientSide
from acp.connection import Connection, StreamDirection, StreamEvent
from acp.exceptions import RequestError
from acp.experimental.negotiation import AgentProtocolConnection
from acp.experimental.v2 import AgentSideConnection as V2AgentSide
from acp.experimental.v2 import ClientSideConnection as V2ClientSide
from acp.experimental.v2 import schema as sdk_v2

from acp_toolcalls import UNSET, JsonRpcMessage, ToolCallStore, parse_permission_answer, v1, v2
from acp_toolcalls.codec import to_builtins
from acp_toolcalls.events import ToolCallCleared
from acp_toolcalls.sdk import (
    _PRIVATE_CONNECTION,
    _PRIVATE_GATE,
    CONNECTION_LOST,
    _sdk_private,
    raw_connection,
    request,
    send,
    store_observer,
    tool_call_update_from_sdk,
    tool_call_update_to_sdk,
)

SESSION = "sess_1"
OPTIONS = [
    v2.PermissionOption(option_id="allow", name="Allow", kind="allow_once"),
    v2.PermissionOption(option_id="reject", name="Reject", kind="reject_once"),
]

# --------------------------------------------------------------------------------------------
# Wiring


class Recorder:
    """A stream observer keeping every raw incoming message."""

    def __init__(self) -> None:
        self.incoming: list[dict[str, Any]] = []

    def __call__(self, event: StreamEvent) -> None:
        if event.direction is StreamDirection.INCOMING:
            self.incoming.append(event.message)

    def methods(self, method: str) -> list[dict[str, Any]]:
        return [m for m in self.incoming if m.get("method") == method]


async def eventually(check: Callable[[], bool], timeout: float = 5.0) -> None:
    deadline = asyncio.get_running_loop().time() + timeout
    while not check():
        if asyncio.get_running_loop().time() > deadline:
            raise AssertionError("timed out")
        await asyncio.sleep(0.005)


async def stream_pair() -> tuple[
    tuple[asyncio.StreamReader, asyncio.StreamWriter],
    tuple[asyncio.StreamReader, asyncio.StreamWriter],
]:
    a, b = socket.socketpair()
    return await asyncio.open_connection(sock=a), await asyncio.open_connection(sock=b)


class V1Agent:
    async def initialize(self, protocol_version: int, **_: Any) -> sdk_v1.InitializeResponse:
        return sdk_v1.InitializeResponse(protocol_version=1)


class V2Agent:
    async def initialize(
        self, protocol_version: int, info: sdk_v2.Implementation, **_: Any
    ) -> sdk_v2.InitializeResponse:
        return sdk_v2.InitializeResponse(
            protocol_version=2, info=sdk_v2.Implementation(name="agent", version="0")
        )


class Client:
    """A client for both SDK versions: records updates, answers permission requests."""

    def __init__(self) -> None:
        self.updates: list[Any] = []
        self.answer: Callable[..., Awaitable[Any]] | None = None
        self.asked = asyncio.Event()

    async def session_update(self, session_id: str, update: Any, **_: Any) -> None:
        self.updates.append(update)

    async def request_permission(self, session_id: str, **kwargs: Any) -> Any:
        self.asked.set()
        if self.answer is not None:
            return await self.answer(**kwargs)
        return {"outcome": {"outcome": "selected", "optionId": "allow"}}


class Wired:
    def __init__(
        self, agent: Any, client: Any, handler: Client, recorder: Recorder, client_writer: Any
    ) -> None:
        self.agent = agent
        self.client = client
        self.handler = handler
        self.recorder = recorder
        self.client_writer = client_writer


@asynccontextmanager
async def wired(version: int, *observers: Any, initialize: bool = True) -> AsyncIterator[Wired]:
    (agent_reader, agent_writer), (client_reader, client_writer) = await stream_pair()
    recorder = Recorder()
    handler = Client()
    agent: Any
    client: Any
    if version == 1:
        # The doubles implement only what these tests call, not the SDK's whole protocols.
        agent = V1AgentSide(lambda _conn: cast(Any, V1Agent()), agent_writer, agent_reader)
        client = V1ClientSide(
            lambda _agent: cast(Any, handler),
            client_writer,
            client_reader,
            observers=[recorder, *observers],
        )
        if initialize:
            await client.initialize(protocol_version=1)
    else:
        agent = V2AgentSide(V2Agent(), agent_writer, agent_reader)
        client = V2ClientSide(
            handler, client_writer, client_reader, observers=[recorder, *observers]
        )
        if initialize:
            await client.initialize(
                protocol_version=2, info=sdk_v2.Implementation(name="client", version="0")
            )
    try:
        yield Wired(agent, client, handler, recorder, client_writer)
    finally:
        await agent.close()
        await client.close()
        agent_writer.close()
        client_writer.close()


def run(test: Callable[[], Awaitable[None]]) -> None:
    asyncio.run(asyncio.wait_for(test(), timeout=20))


def update_message(update: v2.SessionToolCallUpdate) -> v2.SessionUpdateMessage:
    return v2.SessionUpdateMessage(
        params=v2.UpdateSessionNotification(session_id=SESSION, update=update)
    )


CLEARING = v2.SessionToolCallUpdate(
    tool_call_id="call_1", status="in_progress", title=None, content=None
)
CLEARING_WIRE = {
    "sessionUpdate": "tool_call_update",
    "toolCallId": "call_1",
    "status": "in_progress",
    "title": None,
    "content": None,
}


def permission_message(request_id: int | str) -> v2.PermissionRequestMessage:
    subject = v2.ToolCallPermissionSubject(
        tool_call=v2.ToolCallUpdate(tool_call_id="call_1", kind=None, status="pending")
    )
    return v2.PermissionRequestMessage(
        id=request_id,
        params=v2.RequestPermissionRequest(
            session_id=SESSION, title="Run it?", options=OPTIONS, subject=subject
        ),
    )


# --------------------------------------------------------------------------------------------
# send: null reaches the wire


@pytest.mark.parametrize("version", [1, 2])
def test_send_keeps_null_on_the_wire(version: int, schema_valid: Any) -> None:
    async def test() -> None:
        async with wired(version) as w:
            await send(w.agent, update_message(CLEARING))
            await eventually(lambda: bool(w.recorder.methods("session/update")))
        [received] = w.recorder.methods("session/update")
        # The observer's dict is the client's `json.loads` of the line: None means `null`.
        assert received["params"] == {"sessionId": SESSION, "update": CLEARING_WIRE}
        schema_valid(received, "v2")

    run(test)


def test_send_accepts_every_message_form_and_keeps_order() -> None:
    async def test() -> None:
        async with wired(2) as w:
            typed = update_message(CLEARING)
            plain = to_builtins(update_message(v2.SessionToolCallUpdate(tool_call_id="call_2")))
            other = JsonRpcMessage(
                {"jsonrpc": "2.0", "method": "session/update", "params": plain["params"]}
            )
            nested = {"method": "session/update", "params": typed.params}  # models inside
            await send(w.agent, typed, plain, other, nested)
            await send(raw_connection(w.agent), typed)  # the bare Connection works too
            await eventually(lambda: len(w.recorder.methods("session/update")) == 5)
        ids = [m["params"]["update"]["toolCallId"] for m in w.recorder.methods("session/update")]
        assert ids == ["call_1", "call_2", "call_2", "call_1", "call_1"]
        assert w.recorder.incoming[-1]["params"]["update"] == CLEARING_WIRE

    run(test)


def test_sdk_v1_session_update_drops_null() -> None:
    """Why `send` exists: the SDK's own v1 path serializes with `exclude_none`, so a field
    explicitly set to `None` (a clear) never reaches the wire."""

    async def test() -> None:
        async with wired(1) as w:
            progress = sdk_v1.ToolCallProgress(tool_call_id="call_1", title=None, status="failed")
            assert "title" in progress.model_fields_set  # set on the model...
            await w.agent.session_update(SESSION, progress)
            await eventually(lambda: bool(w.recorder.methods("session/update")))
        update = w.recorder.methods("session/update")[0]["params"]["update"]
        assert update == {
            "sessionUpdate": "tool_call_update",
            "toolCallId": "call_1",
            "status": "failed",
        }  # ...and gone from the wire

    run(test)


def test_sdk_v2_session_update_keeps_null_set_on_the_model() -> None:
    """The experimental v2 connection dumps with `exclude_unset` only: a model built by
    `tool_call_update_to_sdk` keeps its clears through the SDK's own method too."""

    async def test() -> None:
        async with wired(2) as w:
            await w.agent.session_update(SESSION, tool_call_update_to_sdk(CLEARING))
            await eventually(lambda: bool(w.recorder.methods("session/update")))
        update = w.recorder.methods("session/update")[0]["params"]["update"]
        assert update == CLEARING_WIRE

    run(test)


def test_send_honours_the_v2_initialization_gate() -> None:
    async def test() -> None:
        async with wired(2, initialize=False) as w:
            with pytest.raises(RequestError) as raised:
                await send(w.agent, update_message(CLEARING))
            assert raised.value.data is not None
            assert "must be initialized" in raised.value.data["details"]
            # The bare Connection has no gate: this one goes out before `initialize`.
            await send(raw_connection(w.agent), update_message(CLEARING))
            await eventually(lambda: bool(w.recorder.methods("session/update")))

    run(test)


def test_send_rejects_requests_responses_and_unknown_connections() -> None:
    async def test() -> None:
        async with wired(2) as w:
            with pytest.raises(TypeError, match="send it with `request`"):
                await send(w.agent, update_message(CLEARING), permission_message(1))
            with pytest.raises(TypeError, match="no `method`"):
                await send(w.agent, {"jsonrpc": "2.0", "id": 1, "result": {}})
            with pytest.raises(TypeError, match="expected a JSON-RPC message"):
                await send(w.agent, "session/update")
            with pytest.raises(TypeError, match="cannot send through 'object'"):
                await send(object(), update_message(CLEARING))
            with pytest.raises(TypeError, match="is a notification"):
                await request(w.agent, update_message(CLEARING))
            await asyncio.sleep(0.05)
        # Checked before anything is sent: the valid update before the request stayed home.
        assert w.recorder.methods("session/update") == []

    run(test)


def test_send_through_a_connection_look_alike() -> None:
    class Peer:
        def __init__(self) -> None:
            self.sent: list[tuple[str, Any]] = []

        async def send_notification(self, method: str, params: Any = None) -> None:
            self.sent.append((method, params))

    async def test() -> None:
        peer = Peer()
        await send(peer, update_message(CLEARING))
        assert peer.sent == [("session/update", {"sessionId": SESSION, "update": CLEARING_WIRE})]
        with pytest.raises(TypeError, match="send_request"):
            await request(peer, permission_message(1))

    run(test)


def test_raw_connection_is_the_sdk_private_conn() -> None:
    """Pins the private attribute the adapter reads on every SDK connection class."""

    async def test() -> None:
        for version in (1, 2):
            async with wired(version) as w:
                for side in (w.agent, w.client):
                    assert isinstance(side._conn, Connection)
                    assert raw_connection(side) is side._conn
                    assert raw_connection(side._conn) is side._conn
        with pytest.raises(TypeError):
            raw_connection(object())

    run(test)


def test_the_sdk_private_attributes_the_adapter_reads_are_still_there() -> None:
    """``sdk._sdk_private`` is the one reader of the SDK's private attributes; an SDK release
    that renames one fails here, with a message naming that release."""
    release = f"agent-client-protocol {importlib.metadata.version('agent-client-protocol')}"

    def check(side: object, attribute: str, gated: bool) -> None:
        where = f"{release}: {type(side).__module__}.{type(side).__qualname__}"
        assert isinstance(getattr(side, attribute, None), Connection), (
            f"{where} has no private `{attribute}` Connection any more; acp_toolcalls.sdk."
            f"_sdk_private reads it (_PRIVATE_CONNECTION): update it for this SDK release"
        )
        inner, require = _sdk_private(side)
        assert inner is getattr(side, attribute)
        assert (require is not None) == gated, (
            f"{where}: the private `{_PRIVATE_GATE}.require` initialization gate that "
            f"acp_toolcalls.sdk._sdk_private reads is {'gone' if gated else 'new'}: update "
            f"_PRIVATE_GATE for this SDK release"
        )

    async def test() -> None:
        for version in (1, 2):
            async with wired(version) as w:
                for side in (w.agent, w.client):
                    check(side, _PRIVATE_CONNECTION[0], gated=version == 2)
                protocol = AgentProtocolConnection(raw_connection(w.agent))
                check(protocol, _PRIVATE_CONNECTION[1], gated=False)

    run(test)


# --------------------------------------------------------------------------------------------
# request: answers keyed to our id


def test_request_round_trips_a_permission_request(schema_valid: Any) -> None:
    async def test() -> None:
        async with wired(2) as w:
            response = await request(w.agent, permission_message("perm-7"))
        [received] = w.recorder.methods("session/request_permission")
        assert received["id"] != "perm-7"  # the SDK's own id on the wire
        assert received["params"]["subject"]["toolCall"] == {
            "toolCallId": "call_1",
            "kind": None,
            "status": "pending",
        }
        schema_valid(received, "v2")
        assert response == {
            "jsonrpc": "2.0",
            "id": "perm-7",
            "result": {"outcome": {"outcome": "selected", "optionId": "allow"}},
        }
        answer = parse_permission_answer(response, OPTIONS)
        assert answer.approved and answer.option == OPTIONS[0]

    run(test)


def test_request_v1_permission_through_the_v1_connection() -> None:
    async def test() -> None:
        message = v1.PermissionRequestMessage(
            id=41,
            params=v1.RequestPermissionRequest(
                session_id=SESSION,
                tool_call=v1.ToolCallUpdate(tool_call_id="call_1", title="Edit"),
                options=[v1.PermissionOption(option_id="ok", name="OK", kind="allow_once")],
            ),
        )
        async with wired(1) as w:
            response = await request(w.agent, message)
        assert response == {
            "jsonrpc": "2.0",
            "id": 41,
            "result": {"outcome": {"outcome": "selected", "optionId": "allow"}},
        }

    run(test)


def test_request_error_answer_becomes_an_error_response() -> None:
    async def test() -> None:
        async with wired(2) as w:

            async def refuse(**_: Any) -> Any:
                raise RequestError.invalid_params({"why": "no terminal"})

            w.handler.answer = refuse
            response = await request(w.agent, permission_message(9))
        assert response == {
            "jsonrpc": "2.0",
            "id": 9,
            "error": {"code": -32602, "message": "Invalid params", "data": {"why": "no terminal"}},
        }
        answer = parse_permission_answer(response, OPTIONS)
        assert answer.outcome == "error" and not answer.approved

    run(test)


def test_request_connection_lost_becomes_an_error_response() -> None:
    async def test() -> None:
        async with wired(2) as w:

            async def never(**_: Any) -> Any:
                await asyncio.Event().wait()

            w.handler.answer = never
            pending = asyncio.ensure_future(request(w.agent, permission_message("p")))
            await asyncio.wait_for(w.handler.asked.wait(), 5)
            w.client_writer.close()  # the client goes away without answering
            response = await pending
            assert response["id"] == "p"
            assert response["error"]["code"] == CONNECTION_LOST
            assert "connection lost" in response["error"]["data"]["details"]
            assert not parse_permission_answer(response, OPTIONS).approved
            # Once the connection is known closed, a new request fails the same way.
            again = await request(w.agent, permission_message("q"))
            assert again["id"] == "q" and again["error"]["code"] == CONNECTION_LOST

    run(test)


def test_request_before_v2_initialize_is_an_error_response() -> None:
    async def test() -> None:
        async with wired(2, initialize=False) as w:
            response = await request(w.agent, permission_message(3))
        assert response["id"] == 3
        assert response["error"]["code"] == -32600  # the SDK's own gate, Invalid request

    run(test)


# --------------------------------------------------------------------------------------------
# tool_call_update_from_sdk / tool_call_update_to_sdk


def test_sdk_salvage_is_a_none_in_fields_set() -> None:
    """Pins how the SDK v2 models salvage: the invalid value becomes the default `None`, the
    field stays in `model_fields_set`, and nothing records the raw value."""
    model = sdk_v2.ToolCallUpdate.model_validate(
        {"toolCallId": "c", "kind": 42, "status": {}, "title": 7, "name": [], "_meta": False}
    )
    assert model.model_fields_set == {
        "tool_call_id", "kind", "status", "title", "name", "field_meta"
    }  # fmt: skip
    assert (model.kind, model.status, model.title, model.name, model.field_meta) == (None,) * 5
    assert model.model_extra is None and not model.__pydantic_private__
    null = sdk_v2.ToolCallUpdate.model_validate({"toolCallId": "c", "kind": None})
    assert null == sdk_v2.ToolCallUpdate.model_validate({"toolCallId": "c", "kind": 42})
    # content/locations have no default-on-error: a non-array fails the whole model.
    with pytest.raises(pydantic.ValidationError):
        sdk_v2.ToolCallUpdate.model_validate({"toolCallId": "c", "content": 5})


RAW = {
    "sessionUpdate": "tool_call_update",
    "toolCallId": "call_1",
    "title": None,  # a real clear
    "kind": 42,  # invalid: salvaged by the SDK, must not clear
    "status": {"not": "a status"},  # invalid
    "content": None,
    "rawOutput": None,
    "locations": [{"path": "/a.py", "line": 3}],
}


def test_from_sdk_omitted_null_and_salvaged() -> None:
    model = sdk_v2.SessionToolCallUpdate.model_validate(RAW)

    from_model = tool_call_update_from_sdk(model)
    assert from_model == v2.ToolCallUpdate(
        tool_call_id="call_1",
        content=None,  # never salvaged by the SDK: a real clear
        raw_output=None,
        locations=[v2.ToolCallLocation(path="/a.py", line=3)],
    )  # title/kind/status ambiguous -> UNSET; name/rawInput/_meta omitted -> UNSET

    from_raw = tool_call_update_from_sdk(model, RAW)
    assert from_raw.title is None  # the raw object tells the clear from the salvage
    assert from_raw.kind is UNSET and from_raw.status is UNSET
    assert from_raw == v2.ToolCallUpdate(
        tool_call_id="call_1",
        title=None,
        content=None,
        raw_output=None,
        locations=[v2.ToolCallLocation(path="/a.py", line=3)],
    )
    # The whole message (or its params) works as `raw` too.
    message: dict[str, Any]
    message = {"jsonrpc": "2.0", "method": "session/update", "params": {"sessionId": SESSION}}
    message["params"]["update"] = RAW
    assert tool_call_update_from_sdk(model, message) == from_raw
    assert tool_call_update_from_sdk(model, message["params"]) == from_raw

    trusting = tool_call_update_from_sdk(model, ambiguous_none="clear")
    assert trusting.title is None
    assert trusting.kind is None  # the hazard of trusting a parsed model: a salvage clears

    omitted = sdk_v2.SessionToolCallUpdate.model_validate(
        {"sessionUpdate": "tool_call_update", "toolCallId": "call_1", "status": "completed"}
    )
    assert tool_call_update_from_sdk(omitted) == v2.ToolCallUpdate(
        tool_call_id="call_1", status="completed"
    )


def test_from_sdk_raw_must_match_and_model_type_is_checked() -> None:
    model = sdk_v2.ToolCallUpdate.model_validate({"toolCallId": "call_1"})
    with pytest.raises(ValueError, match="call_2"):
        tool_call_update_from_sdk(model, {"toolCallId": "call_2"})
    chunk = {"sessionUpdate": "tool_call_content_chunk", "toolCallId": "call_1", "content": {}}
    with pytest.raises(ValueError, match="tool_call_content_chunk"):
        tool_call_update_from_sdk(model, {"sessionId": SESSION, "update": chunk})
    with pytest.raises(TypeError):
        # A v1 SDK model, deliberately: only v2 ones are accepted.
        tool_call_update_from_sdk(sdk_v1.ToolCallUpdate(tool_call_id="call_1"))  # type: ignore[arg-type]
    with pytest.raises(ValueError):
        tool_call_update_from_sdk(model, ambiguous_none="maybe")  # type: ignore[arg-type]  # on purpose


RICH: dict[str, Any] = {
    "toolCallId": "call_1",
    "status": "paused",  # an unknown-to-the-SDK status: kept as a string
    "content": [
        {"type": "content", "content": {"type": "text", "text": "hi", "_meta": {"m": 1}}},
        {"type": "content", "content": {"type": "_svg", "xml": "<svg/>"}, "vendor": 1},
        {"type": "_chart", "points": [1, None, 3]},
        {"type": "diff"},  # a known type with a bad payload: skipped by both
        {"type": "terminal", "terminalId": "term_1"},
    ],
    "capabilities": {"cancel": {}},
    "_meta": {"vendor.example/progress": 0.5, "vendor.example/gone": None},
    "x-unknown": True,
}


def test_from_sdk_keeps_meta_and_unknown_content_drops_what_the_sdk_drops() -> None:
    model = sdk_v2.ToolCallUpdate.model_validate(RICH)
    update = tool_call_update_from_sdk(model)
    plain = to_builtins(update)
    assert plain["_meta"] == RICH["_meta"]  # patch `_meta`, `null` keys included
    assert plain["status"] == "paused"
    assert plain["content"] == [
        {"type": "content", "content": {"type": "text", "text": "hi", "_meta": {"m": 1}}},
        # unknown keys of known objects are dropped by the SDK ("vendor")...
        {"type": "content", "content": {"type": "_svg", "xml": "<svg/>"}},
        # ...unknown variants are kept whole
        {"type": "_chart", "points": [1, None, 3]},
        {"type": "terminal", "terminalId": "term_1"},
    ]
    assert "capabilities" not in plain and "x-unknown" not in plain  # not in the SDK model

    # With the raw object nothing is lost: it reads exactly as our codec reads the wire.
    expected = dict(RICH)
    expected["content"] = [item for item in RICH["content"] if item != {"type": "diff"}]
    assert to_builtins(tool_call_update_from_sdk(model, RICH)) == expected


def test_from_sdk_salvaged_meta_is_not_a_clear() -> None:
    model = sdk_v2.ToolCallUpdate.model_validate({"toolCallId": "c", "_meta": ["no"]})
    assert "field_meta" in model.model_fields_set and model.field_meta is None
    assert tool_call_update_from_sdk(model).meta is UNSET
    null = sdk_v2.ToolCallUpdate.model_validate({"toolCallId": "c", "_meta": None})
    assert tool_call_update_from_sdk(null, {"toolCallId": "c", "_meta": None}).meta is None


def test_to_sdk_carries_omitted_and_null_exactly() -> None:
    update = v2.SessionToolCallUpdate(
        tool_call_id="call_1",
        title=None,
        kind="edit",
        content=[v2.Content(content=v2.TextContent(text="x"))],
        raw_input={"path": "/a", "opt": None},
        meta={"k": None},
        capabilities=v2.ToolCallCapabilities(cancel=v2.ToolCallCancelCapabilities()),
    )
    model = tool_call_update_to_sdk(update)
    assert isinstance(model, sdk_v2.SessionToolCallUpdate)
    assert model.model_fields_set == {
        "session_update", "tool_call_id", "title", "kind", "content", "raw_input", "field_meta"
    }  # fmt: skip
    assert model.title is None
    back = tool_call_update_from_sdk(model, ambiguous_none="clear")
    expected = to_builtins(update)
    del expected["sessionUpdate"], expected["capabilities"]  # no place for it in the SDK model
    assert to_builtins(back) == expected

    plain = tool_call_update_to_sdk(v2.ToolCallUpdate(tool_call_id="c", status=None))
    assert type(plain) is sdk_v2.ToolCallUpdate
    assert plain.model_dump(by_alias=True, exclude_unset=True) == {
        "toolCallId": "c",
        "status": None,
    }
    with pytest.raises(TypeError):
        tool_call_update_to_sdk(plain)  # type: ignore[arg-type]  # an SDK model, on purpose


# --------------------------------------------------------------------------------------------
# store_observer: the lossless client path


def test_store_observer_applies_null_clears() -> None:
    store = ToolCallStore()
    seen: list[Any] = []
    times = iter(range(100, 200))

    async def test() -> None:
        observer = store_observer(store, clock=lambda: float(next(times)), on_events=seen.append)
        async with wired(2, observer) as w:
            states: list[Any] = []

            async def session_update(session_id: str, update: Any, **_: Any) -> None:
                # The observer ran first: the store already holds this update.
                call = store.tool_call(SESSION, "call_1")
                assert call is not None
                states.append(dict(call.fields))

            w.handler.session_update = session_update  # type: ignore[method-assign]  # a spy
            first = v2.SessionToolCallUpdate(
                tool_call_id="call_1",
                title="Reading config",
                kind="read",
                content=[v2.Content(content=v2.TextContent(text="3 files"))],
            )
            await send(w.agent, update_message(first))
            await send(w.agent, update_message(CLEARING))
            await eventually(lambda: len(states) == 2)
        assert states[0]["title"] == "Reading config"
        assert states[1]["title"] is None

    run(test)
    call = store.tool_call(SESSION, "call_1")
    assert call is not None
    assert call.fields["title"] is None and call.fields["content"] is None
    assert call.kind == "read" and call.status == "in_progress"  # omitted: unchanged
    assert call.updated_at is not None and call.updated_at >= 100
    cleared = [e for events in seen for e in events if isinstance(e, ToolCallCleared)]
    assert cleared == [ToolCallCleared(SESSION, "call_1", ("title", "content"))]


def test_store_observer_on_an_existing_client_connection() -> None:
    store = ToolCallStore()

    async def test() -> None:
        async with wired(2) as w:
            raw_connection(w.client).add_observer(store_observer(store))
            await send(w.agent, update_message(CLEARING))
            await eventually(lambda: store.tool_call(SESSION, "call_1") is not None)

    run(test)
    assert to_builtins(store.snapshot(SESSION, "call_1")) == {
        "toolCallId": "call_1",
        "status": "in_progress",
        "title": None,
        "content": None,
    }


def test_store_observer_negotiates_from_initialize() -> None:
    store = ToolCallStore(version="auto")

    async def test() -> None:
        async with wired(1, store_observer(store)) as w:
            # The outgoing initialize request and its incoming answer were applied.
            assert store.raw_version == "v1"
            start = sdk_v1.ToolCallStart(tool_call_id="call_9", title="Edit a.py", kind="edit")
            await w.agent.session_update(SESSION, start)
            await eventually(lambda: store.tool_call(SESSION, "call_9") is not None)

    run(test)
    view = store.view(SESSION, "call_9")
    assert view.title == "Edit a.py" and view.kind == "edit"


def test_store_observer_skips_unreadable_messages(caplog: pytest.LogCaptureFixture) -> None:
    store = ToolCallStore()
    broken = {
        "jsonrpc": "2.0",
        "method": "session/update",
        "params": {"sessionId": SESSION, "update": {"sessionUpdate": "tool_call_update"}},
    }

    async def test() -> None:
        async with wired(2, store_observer(store)) as w:
            await send(w.agent, broken, update_message(CLEARING))
            await eventually(lambda: store.tool_call(SESSION, "call_1") is not None)

    with caplog.at_level(logging.WARNING, logger="acp_toolcalls.sdk"):
        run(test)
    assert any("not applied" in record.getMessage() for record in caplog.records)
