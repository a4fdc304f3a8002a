"""The clients of the interop tests: the official SDK's v1 and v2 clients and ours.

Each runs one session with one prompt against an agent command line over real stdio (by
default ``examples/agent.py``; the proxy tests put ``acp-toolcalls bridge`` in front of it)
and records the client's side of the wire as a ``Run``. ``fold_v1`` is what a v1 client shows
(the SDK's models folded the v1 way, D46 (v1 store)); ``store_view`` is the same view from our
store.
"""

from __future__ import annotations

import asyncio
import importlib.util
import json
import sys
from collections.abc import Coroutine, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType
from typing import Any, TypeVar

from acp import schema as v1s
from acp.client import ClientSideConnection as V1ClientConnection
from acp.connection import StreamEvent
from acp.experimental.v2 import ClientSideConnection as V2ClientConnection
from acp.experimental.v2 import schema as v2s
from acp.transports import spawn_stdio_transport
from pydantic import BaseModel

from acp_toolcalls import ToolCallStore, decode, encode
from acp_toolcalls import v1 as v1m
from acp_toolcalls.convert import diff_to_v2
from acp_toolcalls.sdk import store_observer

EXAMPLES = Path(__file__).resolve().parent.parent.parent / "examples"
AGENT = EXAMPLES / "agent.py"
AGENT_COMMAND: tuple[str, ...] = (sys.executable, str(AGENT))
"""The example agent, run directly."""
CLIENT = EXAMPLES / "client.py"
TIMEOUT = 30.0
PROMPT = "Remember to water the plants"
OLD_NOTES = "- buy milk\n"
NEW_NOTES = OLD_NOTES + f"- {PROMPT}\n"
SCRIPT_OUTPUT = b"step 1/3\nstep 2/3\nstep 3/3\n"
CALLS = ["edit", "run", "read"]

V1_LOSSES = {
    "rawInput clear": "v1 cannot clear rawInput (null means unchanged): the edit keeps its "
    "arguments on a v1 client, v2 clears them",
    "locations clear": "a cleared location list is sent to v1 as [] (the same display: none)",
    "diff": "a v2 diff (changes + git_patch) reaches v1 through the bridge as a v1 diff of the "
    "whole file, its texts rebuilt from the file under the session's cwd and the patch (D27 "
    "amended), and without a file reader as a text item showing the patch",
    "terminal": "an agent-owned terminal reaches v1 as a text transcript (command, output, "
    "exit code); the v1 client holds no terminal state",
    "cancelled": "v1 has no `cancelled` status: a cancelled call is `failed` on a v1 client",
    "permission text": "a v1 permission request has no title/description of its own: they are "
    "shown in its `toolCall` while the prompt is open, then the call's own state is restored",
}
"""What a v1 client cannot be shown of this agent's v2 intent (D46 (what is lost)), and is allowed
to differ in ``test_a_v1_client_shows_what_the_agent_meant_modulo_documented_losses``."""

T = TypeVar("T")


def bounded(coroutine: Coroutine[Any, Any, T]) -> T:
    """Run one session, failing instead of hanging when it takes more than ``TIMEOUT``."""
    return asyncio.run(asyncio.wait_for(coroutine, TIMEOUT))


@dataclass
class Run:
    """One session with one prompt, as recorded on the client's side of the wire."""

    protocol: int
    cwd: Path
    session_id: str
    stop_reason: str
    wire: list[tuple[str, dict[str, Any]]]  # (direction, message) in wire order
    document: dict[str, Any]  # the client's store, `store.document()` of this session
    callbacks: list[Any] = field(default_factory=list)  # what the SDK client handed us

    def received(self) -> list[dict[str, Any]]:
        return [message for direction, message in self.wire if direction == "incoming"]

    def sent(self) -> list[dict[str, Any]]:
        return [message for direction, message in self.wire if direction == "outgoing"]

    def calls(self) -> dict[str, dict[str, Any]]:
        return {call["toolCallId"]: call for call in self.document["toolCalls"]}

    def updates(self, kind: str) -> Iterator[dict[str, Any]]:
        for message in self.received():
            if message.get("method") == "session/update":
                update: dict[str, Any] = message["params"]["update"]
                if update["sessionUpdate"] == kind:
                    yield update


def prepared(directory: Path) -> Path:
    directory.mkdir(parents=True, exist_ok=True)
    (directory / "notes.txt").write_text(OLD_NOTES, encoding="utf-8")
    return directory.resolve()


def session_document(store: ToolCallStore, session_id: str) -> dict[str, Any]:
    sessions: dict[str, dict[str, Any]] = store.document()["sessions"]
    return sessions.get(session_id, {"toolCalls": [], "terminals": []})


def _pick(options: list[Any], kind: str) -> str:
    return str(next(option.option_id for option in options if option.kind == kind))


# --------------------------------------------------------------------------------------------
# Clients


class SdkV1Client:
    """The official SDK's v1 client callbacks: ``approve``, ``reject`` or ``cancel`` (send
    ``session/cancel``, then answer ``cancelled`` as v1 requires of a client)."""

    def __init__(self, mode: str) -> None:
        self.mode = mode
        self.callbacks: list[Any] = []
        self.conn: V1ClientConnection | None = None

    async def request_permission(
        self, session_id: str, tool_call: v1s.ToolCallUpdate, options: list[Any], **_: Any
    ) -> v1s.RequestPermissionResponse:
        self.callbacks.append(tool_call)
        if self.mode == "cancel":
            assert self.conn is not None
            await self.conn.cancel(session_id=session_id)
            return v1s.RequestPermissionResponse(outcome=v1s.DeniedOutcome(outcome="cancelled"))
        option = _pick(options, "allow_once" if self.mode == "approve" else "reject_once")
        selected = v1s.AllowedOutcome(option_id=option, outcome="selected")
        return v1s.RequestPermissionResponse(outcome=selected)

    async def session_update(self, session_id: str, update: Any, **_: Any) -> None:
        self.callbacks.append(update)


class SdkV2Client:
    """The SDK's experimental v2 client callbacks; ``cancel`` sends ``session/cancel`` and
    never answers: the agent has to give up the request itself (``$/cancel_request``)."""

    def __init__(self, mode: str) -> None:
        self.mode = mode
        self.conn: V2ClientConnection | None = None

    async def request_permission(
        self, session_id: str, title: str, options: list[Any], **_: Any
    ) -> v2s.RequestPermissionResponse:
        if self.mode == "cancel":
            assert self.conn is not None
            await self.conn.cancel_session(session_id=session_id)
            await asyncio.Event().wait()  # cancelled by the agent's `$/cancel_request`
        option = _pick(options, "allow_once" if self.mode == "approve" else "reject_once")
        selected = v2s.SelectedPermissionOutcomeVariant(option_id=option)
        return v2s.RequestPermissionResponse(outcome=selected)


async def sdk_v1_session(
    cwd: Path, mode: str = "approve", agent: Sequence[str] = AGENT_COMMAND
) -> Run:
    """One prompt from the official SDK's v1 client to ``agent`` (a command line)."""
    store = ToolCallStore(version="v1")
    wire: list[tuple[str, dict[str, Any]]] = []
    client = SdkV1Client(mode)

    def record(event: StreamEvent) -> None:
        wire.append((event.direction.value, event.message))

    async with spawn_stdio_transport(*agent, stderr=None) as (r, w, _):
        observers = [store_observer(store), record]
        # The SDK annotates its own Client protocol; this client satisfies it at run time.
        conn = V1ClientConnection(client, w, r, observers=observers)  # type: ignore[arg-type]
        client.conn = conn
        info = v1s.Implementation(name="interop-test", version="0")
        await conn.initialize(protocol_version=1, client_info=info)
        session = await conn.new_session(cwd=str(cwd))
        text = v1s.TextContentBlock(type="text", text=PROMPT)
        response = await conn.prompt(session_id=session.session_id, prompt=[text])
        await conn.close()
    document = session_document(store, session.session_id)
    stop = str(response.stop_reason)
    return Run(1, cwd, session.session_id, stop, wire, document, client.callbacks)


async def sdk_v2_session(cwd: Path, mode: str, agent: Sequence[str] = AGENT_COMMAND) -> Run:
    """One prompt from the official SDK's experimental v2 client to ``agent``."""
    store = ToolCallStore(version="v2")
    wire: list[tuple[str, dict[str, Any]]] = []
    idle: asyncio.Future[str] = asyncio.get_running_loop().create_future()
    client = SdkV2Client(mode)

    def record(event: StreamEvent) -> None:
        wire.append((event.direction.value, event.message))
        params = event.message.get("params") or {}
        update = params.get("update") or {} if isinstance(params, dict) else {}
        if update.get("state") == "idle" and not idle.done():
            idle.set_result(str(update.get("stopReason")))

    async with spawn_stdio_transport(*agent, stderr=None) as (r, w, _):
        conn = V2ClientConnection(client, w, r, observers=[store_observer(store), record])
        client.conn = conn
        await conn.initialize(protocol_version=2, info=v2s.Implementation(name="t", version="0"))
        session = await conn.new_session(cwd=str(cwd))
        await conn.prompt(session_id=session.session_id, prompt=[v2s.TextContentBlock(text=PROMPT)])
        stop = await idle
        await conn.close()
    return Run(2, cwd, session.session_id, stop, wire, session_document(store, session.session_id))


async def example_client(cwd: Path, protocol: int, *args: str) -> Run:
    """``examples/client.py --json`` as a subprocess; the wire comes from its ``--log``."""
    log = cwd.with_name(cwd.name + ".jsonl")
    process = await asyncio.create_subprocess_exec(
        sys.executable, str(CLIENT), "--json", "--cwd", str(cwd), "--log", str(log),
        "--protocol", str(protocol), "--prompt", PROMPT, *args,
        stdout=asyncio.subprocess.PIPE,
    )  # fmt: skip
    try:
        out, _ = await process.communicate()
    finally:
        if process.returncode is None:  # timed out: do not leave it running
            process.kill()
            await process.wait()
    assert process.returncode == 0
    result = json.loads(out)
    [(session_id, document)] = result["sessions"].items()
    wire = []
    for line in log.read_text(encoding="utf-8").splitlines():
        message = json.loads(line)
        wire.append((message.pop("direction"), message))
    return Run(protocol, cwd, session_id, result["stopReason"], wire, document)


def load_example_client() -> ModuleType:
    spec = importlib.util.spec_from_file_location("example_client", CLIENT)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


# --------------------------------------------------------------------------------------------
# What a v1 client shows


def _plain(value: Any) -> Any:
    if isinstance(value, BaseModel):
        return value.model_dump(mode="json", by_alias=True, exclude_none=True)
    if isinstance(value, list):
        return [_plain(item) for item in value]
    return getattr(value, "value", value)


V1_FIELDS = {
    "title": "title", "name": "name", "kind": "kind", "status": "status",
    "content": "content", "locations": "locations", "raw_input": "rawInput",
    "raw_output": "rawOutput",
}  # fmt: skip
V1_DEFAULTS = {"kind": "other", "status": "pending"}


def fold_v1(run: Run) -> dict[str, dict[str, Any]]:
    """The v1 client's tool calls, folded from the SDK's own models the v1 way (D46 (v1 store)):
    ``tool_call``, ``tool_call_update`` and a permission request's ``toolCall`` in wire
    order; a field present and non-null replaces, ``null`` changes nothing."""
    calls: dict[str, dict[str, Any]] = {}
    for message in run.received():
        if message.get("method") == "session/update":
            update: Any = v1s.SessionNotification.model_validate(message["params"]).update
            if not isinstance(update, (v1s.ToolCallStart, v1s.ToolCallProgress)):
                continue
        elif message.get("method") == "session/request_permission":
            update = v1s.RequestPermissionRequest.model_validate(message["params"]).tool_call
        else:
            continue
        call = calls.setdefault(update.tool_call_id, dict(V1_DEFAULTS))
        for attribute, wire in V1_FIELDS.items():
            value = getattr(update, attribute)
            if attribute in update.model_fields_set and value is not None:
                call[wire] = _plain(value)
    return calls


def as_stored(folded: dict[str, dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """``fold_v1``'s calls with each v1 diff as the store holds it: the v2 diff of one change
    and a generated Git patch (``diff_to_v2``)."""
    out = {}
    for call_id, call in folded.items():
        content = call.get("content")
        if isinstance(content, list):
            call = {**call, "content": [_stored_item(item) for item in content]}
        out[call_id] = call
    return out


def _stored_item(item: Any) -> Any:
    if not (isinstance(item, dict) and item.get("type") == "diff"):
        return item
    diff = decode(json.dumps(item).encode(), v1m.Diff).value
    return json.loads(encode(diff_to_v2(diff)))


def store_view(run: Run) -> dict[str, dict[str, Any]]:
    """The same fields from our store (a cleared field, stored as ``null``, is not shown)."""
    return {
        call_id: {
            **V1_DEFAULTS,
            **{k: v for k, v in call.items() if k in V1_FIELDS.values() and v is not None},
        }
        for call_id, call in run.calls().items()
    }


def _portable(run: Run) -> dict[str, dict[str, Any]]:
    """The run's calls with its working directory written as ``<cwd>``."""
    text = json.dumps(run.calls()).replace(str(run.cwd), "<cwd>")
    calls: dict[str, dict[str, Any]] = json.loads(text)
    return calls


def assert_v1_shows_v2(v1_run: Run, v2_run: Run) -> None:
    """What a v1 client shows (``v1_run``) is what the agent meant (``v2_run``, the same turn
    seen by a v2 client), but for the documented ``V1_LOSSES``."""
    v1, v2 = _portable(v1_run), _portable(v2_run)
    assert list(v1) == list(v2) == CALLS
    for call_id in CALLS:
        fields = ("name", "title", "kind", "status")
        assert [v1[call_id][f] for f in fields] == [v2[call_id][f] for f in fields], call_id

    # The streamed arguments are the same text item.
    assert v1["edit"]["content"][0] == v2["edit"]["content"][0]
    # V1_LOSSES["diff"]: through `acp-toolcalls bridge`, a v1 diff of the whole file (its old
    # and new text rebuilt from disk and the patch), which the v1 client's store holds as the
    # v2 diff of one change; without a file reader (the emitter's bridge), the patch as text.
    shown = v1["edit"]["content"][1]
    if shown["type"] == "diff":
        whole = v1m.Diff(path="<cwd>/notes.txt", old_text=OLD_NOTES, new_text=NEW_NOTES)
        assert shown == json.loads(encode(diff_to_v2(whole)))
    else:
        assert v2["edit"]["content"][1]["patch"]["text"] in shown["content"]["text"]
    # V1_LOSSES["rawInput clear"].
    assert v2["edit"].get("rawInput") is None
    assert v1["edit"]["rawInput"] == {"path": "<cwd>/notes.txt", "line": f"- {PROMPT}\n"}
    # V1_LOSSES["terminal"]: a transcript instead of terminal state.
    assert v1_run.document["terminals"] == []
    [transcript] = v1["run"]["content"]
    text = transcript["content"]["text"]
    assert v2_run.document["terminals"][0]["command"] in text
    assert SCRIPT_OUTPUT.decode() in text and "[exit code 0]" in text
    assert v1["run"]["rawOutput"] == v2["run"]["rawOutput"]
    # V1_LOSSES["locations clear"].
    # (A bridge that coalesced the first report with the clear never sends the locations.)
    assert v2["read"].get("locations") is None and v1["read"].get("locations", []) == []
    assert v1["read"]["content"] == v2["read"]["content"]
    # V1_LOSSES["permission text"]: the v1 user sees the prompt where v1 renders it (D28,
    # amended); the call's own title is back afterwards (checked with the fields above).
    [v1_ask] = [m for m in v1_run.received() if m.get("method") == "session/request_permission"]
    [v2_ask] = [m for m in v2_run.received() if m.get("method") == "session/request_permission"]
    assert "title" not in v1_ask["params"] and v2_ask["params"]["title"]
    shown = v1_ask["params"]["toolCall"]
    assert shown["title"] == v2_ask["params"]["title"] != v2["edit"]["title"]
    prompt_text = shown["content"][0]["content"]["text"]
    assert prompt_text == v2_ask["params"]["description"].replace(str(v2_run.cwd), str(v1_run.cwd))
    own = json.loads(json.dumps(shown["content"][1:]).replace(str(v1_run.cwd), "<cwd>"))
    # The diff stays visible below the prompt (a v1 diff: as the client's store holds it).
    assert [_stored_item(item) for item in own] == v1["edit"]["content"]
