"""The prompt-turn state machine (``lifecycle.Turns``): its table, transition by transition,
the scenarios it owns, and one turn sequence the proxy and the converter of logs, which both
follow it, write alike."""

from __future__ import annotations

import json
from typing import Any, Literal

import pytest

from acp_toolcalls.bridge import V1ToV2Bridge, V2ToV1Bridge
from acp_toolcalls.codec import encode
from acp_toolcalls.lifecycle import (
    Acknowledge,
    End,
    EndInError,
    NotFollowed,
    RequiresAction,
    Running,
    TurnError,
    Turns,
)
from acp_toolcalls.lifecycle._prompt_turns import PERMISSIONS, TRANSITIONS, transition
from acp_toolcalls.proxy import ConnectionCore
from acp_toolcalls.records import Side
from acp_toolcalls.sessions import SessionConverter

CONTENT = [{"type": "text", "text": "go"}]
IDLE = {"sessionUpdate": "state_update", "state": "idle", "stopReason": "end_turn"}
LATER = {"sessionUpdate": "state_update", "state": "idle", "stopReason": "max_tokens"}


def _in_state(to: Any, state: str) -> Turns:
    """A session whose prompt ``1`` is in ``state`` (``unfollowed``: the session holds none)."""
    turns = Turns(to)
    if state == "unfollowed":
        return turns
    turns.prompt_sent(1, CONTENT)
    if state == "acknowledged":
        if to == "v1":
            turns.answered(1, error=False)
        else:
            turns.agent_spoke()
    elif state == "stopped":
        turns.idle(IDLE)
    assert turns.state_of(1) == state
    return turns


def _fire(turns: Turns, event: str) -> list[Any]:
    if event == "spoke":
        return turns.agent_spoke()
    if event in ("result", "error"):
        return turns.answered(1, error=event == "error")
    if event == "idle":
        return turns.idle(LATER)
    assert event == "abort"
    return turns.abort(1)


# (to, state, event) -> (state after, effects): written out here, not read from the table.
EXPECTED: dict[tuple[str, str, str], tuple[str, list[Any]]] = {
    ("v1", "open", "spoke"): ("open", []),
    ("v1", "acknowledged", "spoke"): ("acknowledged", []),
    ("v1", "stopped", "spoke"): ("stopped", []),
    ("v1", "open", "result"): ("acknowledged", []),
    ("v1", "acknowledged", "result"): ("acknowledged", []),
    ("v1", "stopped", "result"): ("ended", [End(1, IDLE)]),
    ("v1", "unfollowed", "result"): ("unfollowed", [NotFollowed(1)]),
    ("v1", "open", "idle"): ("stopped", []),
    ("v1", "stopped", "idle"): ("stopped", []),
    ("v1", "acknowledged", "idle"): ("ended", [End(1, LATER)]),
    ("v1", "open", "error"): ("ended", [EndInError(1, as_update=False)]),
    ("v1", "acknowledged", "error"): ("ended", [EndInError(1, as_update=False)]),
    ("v1", "stopped", "error"): ("ended", [EndInError(1, as_update=False)]),
    ("v1", "unfollowed", "error"): ("ended", [EndInError(1, as_update=False)]),
    ("v1", "open", "abort"): ("ended", [EndInError(1, as_update=False)]),
    ("v1", "acknowledged", "abort"): ("ended", [EndInError(1, as_update=False)]),
    ("v1", "stopped", "abort"): ("ended", [EndInError(1, as_update=False)]),
    ("v1", "unfollowed", "abort"): ("ended", [EndInError(1, as_update=False)]),
    ("v2", "open", "spoke"): ("acknowledged", [Acknowledge(1, CONTENT)]),
    ("v2", "acknowledged", "spoke"): ("acknowledged", []),
    ("v2", "open", "result"): ("ended", [Acknowledge(1, CONTENT), End(1)]),
    ("v2", "acknowledged", "result"): ("ended", [End(1)]),
    ("v2", "unfollowed", "result"): ("ended", [End(1)]),
    ("v2", "open", "error"): ("ended", [EndInError(1, as_update=False)]),
    ("v2", "acknowledged", "error"): ("ended", [EndInError(1, as_update=True)]),
    ("v2", "unfollowed", "error"): ("ended", [EndInError(1, as_update=False)]),
    ("v2", "open", "abort"): ("ended", [EndInError(1, as_update=False)]),
    ("v2", "acknowledged", "abort"): ("ended", [EndInError(1, as_update=True)]),
    ("v2", "unfollowed", "abort"): ("ended", [EndInError(1, as_update=False)]),
}


def test_the_table_has_exactly_the_transitions_written_out_here() -> None:
    table = {(to, state, event) for to, rows in TRANSITIONS.items() for state, event in rows}
    assert table == set(EXPECTED)


@pytest.mark.parametrize(("to", "state", "event"), sorted(EXPECTED))
def test_each_transition(to: str, state: str, event: str) -> None:
    after, effects = EXPECTED[(to, state, event)]
    turns = _in_state(to, state)
    assert _fire(turns, event) == effects
    held = "unfollowed" if after == "ended" else after  # an ended prompt is no longer held
    assert turns.state_of(1) == held
    assert turns.open == (held != "unfollowed")


REFUSED = [
    (to, state, event)
    for to in ("v1", "v2")
    for state in ("open", "acknowledged", "stopped", "ended", "unfollowed")
    for event in ("spoke", "result", "error", "idle", "abort")
    if (to, state, event) not in EXPECTED
]


@pytest.mark.parametrize(("to", "state", "event"), REFUSED)
def test_every_other_pair_is_refused_with_a_clear_error(to: Any, state: Any, event: Any) -> None:
    with pytest.raises(TurnError, match=f"toward a {to} client, a prompt in state '{state}' "):
        transition(to, state, event)


def test_an_idle_toward_a_v2_client_is_refused_and_changes_nothing() -> None:
    turns = _in_state("v2", "acknowledged")
    with pytest.raises(TurnError, match="has no transition for the event 'idle'"):
        turns.idle(IDLE)
    assert turns.state_of(1) == "acknowledged"
    with pytest.raises(TurnError):
        Turns("v2").idle(IDLE)  # refused with no prompt open too
    with pytest.raises(ValueError, match="unknown version 'v3'"):
        Turns("v3")  # type: ignore[arg-type]


# --- scenarios -------------------------------------------------------------------------------


def test_an_idle_before_the_acknowledgement_ends_the_prompt_when_it_comes() -> None:
    turns = Turns("v1")
    assert turns.prompt_sent(1, None) == []
    assert turns.idle(IDLE) == []  # kept
    assert turns.open and turns.busy
    assert turns.answered(1, error=False) == [End(1, IDLE)]
    assert not turns.open and not turns.busy


def test_two_prompts_in_a_session_toward_v1_end_oldest_first() -> None:
    turns = Turns("v1")
    turns.prompt_sent(1, None)
    turns.prompt_sent(2, None)
    assert turns.answered(2, error=False) == []  # the second acknowledged first
    assert turns.idle(IDLE) == []  # the oldest open prompt, 1, keeps it
    assert turns.answered(1, error=False) == [End(1, IDLE)]
    assert turns.idle(LATER) == [End(2, LATER)]
    assert turns.prompt_ids() == []


def test_two_prompts_in_a_session_toward_v2() -> None:
    turns = Turns("v2")
    turns.prompt_sent(1, "a")
    assert turns.prompt_sent(2, "b", accepted=True) == [Acknowledge(2, "b")]  # this one only
    assert turns.unacknowledged
    assert turns.agent_spoke() == [Acknowledge(1, "a")]
    assert not turns.unacknowledged
    assert turns.answered(2, error=True) == [EndInError(2, as_update=True)]
    assert turns.prompt_ids() == [1]
    assert turns.abort_all() == [EndInError(1, as_update=True)]
    assert not turns.open


def test_abort_all_ends_each_prompt_by_its_state() -> None:
    turns = Turns("v2")
    turns.prompt_sent(1, None, accepted=True)
    turns.prompt_sent(2, None)
    assert turns.abort_all() == [EndInError(1, as_update=True), EndInError(2, as_update=False)]
    assert Turns("v2").abort_all() == []


def test_a_reused_prompt_id_addresses_its_first_open_prompt() -> None:
    turns = Turns("v1")
    turns.prompt_sent(1, None)
    turns.prompt_sent(1, None)
    turns.answered(1, error=False)
    assert [turns.state_of(1), len(turns.prompt_ids())] == ["acknowledged", 2]


def test_permissions_nest_and_are_framed_toward_v2_while_a_prompt_is_open() -> None:
    turns = Turns("v2")
    turns.prompt_sent(1, "a")
    assert turns.permission_asked() == [Acknowledge(1, "a"), RequiresAction()]  # it spoke
    assert turns.permission_asked() == []  # only the first waiting one
    assert turns.permission_answered() == []
    assert turns.permissions == 1 and turns.busy
    assert turns.permission_answered() == [Running()]  # the last one answered
    assert turns.permissions == 0
    assert turns.permission_answered() == [Running()]  # (none waits: its session was new)
    assert turns.permissions == 0


def test_a_withdrawn_permission_sends_no_framing() -> None:
    turns = Turns("v2")
    turns.prompt_sent(1, None, accepted=True)
    assert turns.permission_asked() == [RequiresAction()]
    assert turns.permission_withdrawn() == []
    assert turns.permission_asked() == [RequiresAction()]  # waiting again


def test_permissions_outside_a_prompt_or_toward_v1_send_no_framing() -> None:
    idle = Turns("v2")
    assert idle.permission_asked() == [] and idle.busy and not idle.open
    assert idle.permission_answered() == [] and not idle.busy
    toward_v1 = _in_state("v1", "open")
    assert toward_v1.permission_asked() == []
    assert toward_v1.permission_answered() == []


def test_the_permission_table_covers_every_reachable_phase() -> None:
    assert set(PERMISSIONS) == {
        ("no_permission", "asked"),
        ("waiting", "asked"),
        ("waiting", "answered"),
        ("waiting", "answered_last"),
        ("no_permission", "answered_last"),
        ("waiting", "withdrawn"),
        ("waiting", "withdrawn_last"),
        ("no_permission", "withdrawn_last"),
    }


# --- the proxy and the converter of logs write one turn sequence alike -----------------------

S = "sess-1"
OTHER = "sess-2"  # a session the agent did not set up here


def _msg(request_id: Any, method: str, params: Any) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": request_id, "method": method, "params": params}


def _result(request_id: Any, value: Any) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": request_id, "result": value}


def _update(body: dict[str, Any], session: str = S) -> dict[str, Any]:
    params = {"sessionId": session, "update": body}
    return {"jsonrpc": "2.0", "method": "session/update", "params": params}


def _prompt(request_id: int, session: str = S) -> dict[str, Any]:
    return _msg(request_id, "session/prompt", {"sessionId": session, "prompt": CONTENT})


def _chunk(text: str, session: str = S) -> dict[str, Any]:
    body = {"sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": text}}
    return _update(body, session)


ASK_V1 = {
    "sessionId": S,
    "toolCall": {"toolCallId": "edit", "title": "Edit a.py"},
    "options": [{"optionId": "ok", "name": "OK", "kind": "allow_once"}],
}
CHOSEN = {"outcome": {"outcome": "selected", "optionId": "ok"}}
FAILED = {"jsonrpc": "2.0", "id": None, "error": {"code": -32000, "message": "overloaded"}}

# (side, the message as the converter of logs reads it, as the proxy's client sends it); an
# agent's answer names the client's request (the proxy's driver gives the agent's id).
TOWARD_V2: list[tuple[Side, Any, Any]] = [
    ("client", _msg(1, "session/new", {"cwd": "/w", "mcpServers": []}),
     _msg(1, "session/new", {"cwd": "/w"})),
    ("agent", _result(1, {"sessionId": S}), None),
    ("client", _prompt(2), _prompt(2)),  # acknowledged at once
    ("agent", _chunk("Hel"), None),
    ("agent", _msg(11, "session/request_permission", ASK_V1), None),
    ("client", _result(11, CHOSEN), _result(11, CHOSEN)),
    ("agent", _chunk("lo"), None),
    ("agent", _result(2, {"stopReason": "end_turn"}), None),
    ("client", _prompt(3, OTHER), _prompt(3, OTHER)),  # at the agent's first word
    ("agent", _chunk("hi", OTHER), None),
    ("agent", {**FAILED, "id": 3}, None),
    ("client", _prompt(4, OTHER), _prompt(4, OTHER)),
    ("agent", {**FAILED, "id": 4}, None),  # refused before it was acknowledged
    ("client", _prompt(5), _prompt(5)),
    ("agent", _result(5, {"stopReason": "cancelled"}), None),
]  # fmt: skip

V2_ASKED = {"sessionUpdate": "state_update", "state": "running"}
TOWARD_V1: list[tuple[Side, Any, Any]] = [
    ("client", _msg(1, "session/new", {"cwd": "/w"}),
     _msg(1, "session/new", {"cwd": "/w", "mcpServers": []})),
    ("agent", _result(1, {"sessionId": S}), None),
    ("client", _prompt(2), _prompt(2)),
    ("agent", _update(V2_ASKED), None),
    ("agent", _result(2, {"messageId": "u1"}), None),
    ("agent", _update({"sessionUpdate": "user_message", "messageId": "u1", "content": CONTENT}),
     None),
    ("agent", _update({"sessionUpdate": "agent_message_chunk", "messageId": "m1",
                       "content": {"type": "text", "text": "Hello"}}), None),
    ("agent", _update(IDLE), None),
    ("client", _prompt(3), _prompt(3)),
    ("agent", _update(LATER), None),  # before the acknowledgement: kept
    ("agent", _result(3, {"messageId": "u2"}), None),
    ("client", _prompt(4), _prompt(4)),
    ("agent", {**FAILED, "id": 4}, None),
]  # fmt: skip


def _trace(messages: list[dict[str, Any]], prompts: set[Any]) -> list[Any]:
    """What a client is told of its turns: the answers to its prompts and its session updates
    but tool calls, and the permission requests (their ids are each writer's own)."""
    told: list[Any] = []
    for message in messages:
        if message.get("method") == "session/update":
            update = message["params"]["update"]
            if not update["sessionUpdate"].startswith("tool_call"):
                told.append((message["params"]["sessionId"], update))
        elif message.get("method") == "session/request_permission":
            told.append("permission")
        elif "method" not in message and message.get("id") in prompts:
            told.append((message["id"], message.get("result"), message.get("error")))
    return told


def _through_converter(to: Any, steps: list[tuple[Side, Any, Any]]) -> list[dict[str, Any]]:
    bridge = V1ToV2Bridge() if to == "v2" else V2ToV1Bridge()
    converter = SessionConverter(to, bridge)
    out: list[dict[str, Any]] = []
    for side, message, _ in steps:
        out += converter.convert(json.dumps(message).encode(), side).messages
    out += converter.flush().messages
    return [m if isinstance(m, dict) else json.loads(encode(m)) for m in out]


def _through_proxy(to: Any, steps: list[tuple[Side, Any, Any]]) -> list[dict[str, Any]]:
    agent: Literal[1, 2] = 1 if to == "v2" else 2
    core = ConnectionCore(agent_version=agent)
    client_init = {"protocolVersion": 2, "info": {"name": "c", "version": "1"}, "capabilities": {}}
    if to == "v1":
        client_init = {"protocolVersion": 1, "clientCapabilities": {}}
    agent_init: dict[str, Any] = {"protocolVersion": 2, "info": {"name": "a", "version": "2"}}
    if to == "v2":
        agent_init = {"protocolVersion": 1, "agentCapabilities": {}}
    sent = core.from_client(json.dumps(_msg(0, "initialize", client_init)).encode(), 0.0)
    asked = json.loads(sent.to_agent[-1])["id"]
    core.from_agent(json.dumps(_result(asked, agent_init)).encode(), 0.0)
    forwarded: dict[Any, Any] = {}  # the client's request id -> the agent's
    shown: dict[Any, Any] = {}  # the agent's request id -> the client's
    out: list[dict[str, Any]] = []
    for side, message, as_client_sends in steps:
        if side == "client":
            if "method" not in as_client_sends:
                as_client_sends = {**as_client_sends, "id": shown[as_client_sends["id"]]}
            box = core.from_client(json.dumps(as_client_sends).encode(), 0.0)
            for line in box.to_agent:
                data = json.loads(line)
                if "method" in data and "id" in data:
                    forwarded[message["id"]] = data["id"]
        else:
            if "method" not in message:
                message = {**message, "id": forwarded[message["id"]]}
            box = core.from_agent(json.dumps(message).encode(), 0.0)
        box.to_client += core.flush().to_client
        for line in box.to_client:
            data = json.loads(line)
            if data.get("method") == "session/request_permission":
                shown[message["id"]] = data["id"]
            out.append(data)
    return out


@pytest.mark.parametrize(("to", "steps"), [("v2", TOWARD_V2), ("v1", TOWARD_V1)])
def test_the_proxy_and_the_converter_of_logs_tell_the_client_the_same_turns(
    to: str, steps: list[tuple[Side, Any, Any]]
) -> None:
    prompts = {m["id"] for side, m, _ in steps if side == "client" and "method" in m}
    by_converter = _trace(_through_converter(to, steps), prompts)
    by_proxy = _trace(_through_proxy(to, steps), prompts)
    assert by_proxy == by_converter
    assert by_proxy  # (the sequence tells the client something)
