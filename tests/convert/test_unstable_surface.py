"""The unstable session updates through the bridges (issue 28, part 4: the carrying side).

The 2.4.0 schemas' unstable surface adds ``subagent_update``, ``session_message``,
``session_message_chunk``, ``plan_removed``, an ``unknown`` state, a ``subagent`` kind of
background work and ``usage`` on the idle state (``convert._unstable``):

- v2 agent -> v1 editor: only what validates against v1's stable schema reaches an editor that
  advertised neither ``subagents`` nor ``plan``: a session message's content as agent message
  text under its ``messageId`` (once per message), every other unstable update a reported loss;
  an ``unknown`` state ends no turn; the idle state's ``usage`` is a reported loss; a child
  session's updates reach the editor. An editor that advertised ``subagents`` and ``plan``
  gets the unstable v1 forms (``plan_update`` with its id kept).
- v1 agent -> v2 editor: the v1 unstable updates map one to one.
- Logs: the unstable tags are known (a v1 log's are not reported as unknown variants) and
  ``tests/data/unstable-updates.jsonl`` converts to v1 with only reported losses.

The real-subprocess tests run ``acp-toolcalls bridge`` with a scripted v2 agent
(``interop/script_agent.py``) and a raw v1 editor (``interop/raw.py``).
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from acp_toolcalls.bridge import V1ToV2Bridge, V2ToV1Bridge
from acp_toolcalls.check import validate_message
from acp_toolcalls.codec import decode_message, encode
from acp_toolcalls.lifecycle import prompt_end_to_v1
from acp_toolcalls.models import UNSTABLE_SESSION_UPDATES
from tests.interop.raw import RawClient
from tests.interop.scripted import SID, ScriptedAgent, answer, text, update
from tests.interop.sessions import bounded

FIXTURE = Path(__file__).parents[1] / "data" / "unstable-updates.jsonl"
CHILD = "sess-child"

SUBAGENT = {
    "sessionUpdate": "subagent_update",
    "sessionId": CHILD,
    "title": "Test runner",
    "capabilities": {"cancel": {}},
    "state": {"state": "running", "background": []},
}
TO_CHILD = {
    "sessionUpdate": "session_message",
    "messageId": "to-child",
    "senderSessionId": SID,
    "recipientSessionId": CHILD,
    "content": [text("Run the tests.")],
}
FROM_CHILD_CHUNK = {
    "sessionUpdate": "session_message_chunk",
    "messageId": "from-child",
    "content": text("All pass."),
}
FROM_CHILD_PARTIES = {
    "sessionUpdate": "session_message",
    "messageId": "from-child",
    "senderSessionId": CHILD,
    "recipientSessionId": SID,
}
TO_CHILD_AGAIN = {**TO_CHILD, "content": [text("Run them again.")]}
PLAN = {
    "sessionUpdate": "plan_update",
    "plan": {"type": "items", "planId": "p1", "entries": [
        {"content": "Delegate", "priority": "high", "status": "in_progress"}
    ]},
}  # fmt: skip
PLAN_REMOVED = {"sessionUpdate": "plan_removed", "planId": "p1"}
UNKNOWN_STATE = {
    "sessionUpdate": "state_update",
    "state": "unknown",
    "background": [{"type": "subagent", "sessionId": CHILD}],
}
USAGE = {"totalTokens": 30, "inputTokens": 20, "outputTokens": 10}
UNSTABLE: list[dict[str, Any]] = [
    SUBAGENT,
    TO_CHILD,
    FROM_CHILD_CHUNK,
    FROM_CHILD_PARTIES,
    TO_CHILD_AGAIN,
    PLAN_REMOVED,
]


def notification(body: dict[str, Any], session: str = SID) -> dict[str, Any]:
    params = {"sessionId": session, "update": body}
    return {"jsonrpc": "2.0", "method": "session/update", "params": params}


def through(bridge: V2ToV1Bridge | V1ToV2Bridge, bodies: list[dict[str, Any]]) -> Iterator[Any]:
    """Each body through ``bridge``: (its messages as JSON, its loss reasons)."""
    for body in bodies:
        converted = bridge.convert(json.dumps(notification(body)).encode())
        messages = [json.loads(encode(m)) for m in converted.messages]
        yield messages, [loss.reason for loss in converted.losses]


def unstable_v1_violations(message: dict[str, Any]) -> list[Any]:
    """What the bundled unstable v1 schema says of a message (``validate --unstable``'s)."""
    return validate_message(message, "v1", unstable=True)


# --------------------------------------------------------------------------------------------
# (a) The bridges, in process


def test_a_plain_v1_client_gets_session_messages_as_text_and_the_rest_as_losses() -> None:
    out = list(through(V2ToV1Bridge(), UNSTABLE))
    for messages, _ in out:
        for message in messages:
            assert validate_message(message, "v1") == [], message
    sent = [[m["params"]["update"] for m in messages] for messages, _ in out]
    assert sent == [
        [],
        [{"sessionUpdate": "agent_message_chunk", "messageId": "to-child",
          "content": text("Run the tests.")}],
        [{"sessionUpdate": "agent_message_chunk", "messageId": "from-child",
          "content": text("All pass.")}],
        [],
        [],  # v1 only appends: the message's content is shown already
        [],
    ]  # fmt: skip
    reasons = [" ".join(losses) for _, losses in out]
    assert "clientCapabilities.subagents" in reasons[0]
    assert "shown as agent message text" in reasons[1] and "sender" in reasons[1]
    assert "shown as agent message text" in reasons[2]
    assert "participants have no v1 form" in reasons[3]
    assert "replaces content a v1 client already has" in reasons[4]
    assert "clientCapabilities.plan" in reasons[5]


@pytest.mark.encodes_invalid  # valid against the unstable v1 schema only (opted in)
def test_a_v1_client_that_advertised_subagents_and_plan_gets_the_unstable_v1_forms() -> None:
    bridge = V2ToV1Bridge(subagents=True, plan=True)
    out = list(through(bridge, [PLAN, *UNSTABLE]))
    sent = [m["params"]["update"] for messages, _ in out for m in messages]
    plan = {"sessionUpdate": "plan_update", "plan": PLAN["plan"]}
    child = {**SUBAGENT, "state": {"state": "running"}}  # v1 child states list no background
    assert sent == [plan, child, *UNSTABLE[1:]]
    assert out[1][1] == ["a v1 child state has no background list; dropped"]
    assert all(losses == [] for _, losses in out[2:])


@pytest.mark.encodes_invalid  # valid against the unstable v1 schema only (opted in)
def test_the_unstable_v1_forms_validate_against_the_unstable_v1_schema() -> None:
    bridge = V2ToV1Bridge(subagents=True, plan=True)
    idle = {"state": "idle", "stopReason": "end_turn", "usage": USAGE, "background": []}
    bodies = [PLAN, *UNSTABLE, {**SUBAGENT, "state": idle}]
    messages = [m for out, _ in through(bridge, bodies) for m in out]
    assert len(messages) == len(bodies)
    for message in messages:
        assert unstable_v1_violations(message) == [], message


def test_the_v1_unstable_updates_map_one_to_one_to_v2() -> None:
    idle = {"state": "idle", "stopReason": "end_turn", "usage": USAGE}
    bodies: list[dict[str, Any]] = [{**SUBAGENT, "state": idle}, TO_CHILD, FROM_CHILD_CHUNK,
                                    FROM_CHILD_PARTIES, PLAN, PLAN_REMOVED]  # fmt: skip
    out = list(through(V1ToV2Bridge(), bodies))
    assert [[m["params"]["update"] for m in messages] for messages, _ in out] == [
        [body] for body in bodies
    ]
    assert all(losses == [] for _, losses in out)
    for messages, _ in out:
        assert validate_message(messages[0], "v2") == [], messages


def test_the_unstable_tags_are_known_variants_of_a_v1_log() -> None:
    assert UNSTABLE_SESSION_UPDATES["v2"] < UNSTABLE_SESSION_UPDATES["v1"]
    known: list[dict[str, Any]] = [SUBAGENT, TO_CHILD, FROM_CHILD_CHUNK, PLAN, PLAN_REMOVED]
    for body in known:
        decoded = decode_message(json.dumps(notification(body)).encode(), version="v1")
        assert not decoded.diagnostics, (body, decoded.diagnostics)
    unknown = json.dumps(notification({"sessionUpdate": "x"})).encode()
    other = decode_message(unknown, version="v1")
    assert other.diagnostics  # an unknown tag still is reported


def test_the_idle_states_usage_is_a_reported_loss_toward_a_v1_prompt_response() -> None:
    ended = prompt_end_to_v1({"state": "idle", "stopReason": "end_turn", "usage": USAGE})
    assert ended.value == {"result": {"stopReason": "end_turn"}}
    assert [loss.path for loss in ended.losses] == ["$.usage"]


# --------------------------------------------------------------------------------------------
# (b) Through `acp-toolcalls bridge`: a scripted v2 agent, a raw v1 editor


V2_AGENT = {"protocolVersion": 2, "info": {"name": "agent", "version": "2"}, "capabilities": {}}
CHILD_CALL = {
    "sessionUpdate": "tool_call_update",
    "toolCallId": "child-call",
    "title": "Run pytest",
    "kind": "execute",
    "status": "completed",
}


def _steps() -> list[dict[str, Any]]:
    done = {"sessionUpdate": "state_update", "state": "idle", "stopReason": "end_turn"}
    return [
        {"await": {"method": "initialize"}, "as": "init"},
        answer("init", V2_AGENT),
        {"await": {"method": "session/new"}, "as": "new"},
        answer("new", {"sessionId": SID}),
        {"await": {"method": "session/prompt"}, "as": "prompt"},
        answer("prompt", {"messageId": "u1"}),
        update({"sessionUpdate": "state_update", "state": "running"}),
        update(PLAN),
        update(SUBAGENT),
        update(TO_CHILD),
        update({"sessionUpdate": "state_update", "state": "running"}, CHILD),
        update(CHILD_CALL, CHILD),
        update({**done, "usage": USAGE}, CHILD),
        update(FROM_CHILD_CHUNK),
        update(FROM_CHILD_PARTIES),
        update(UNKNOWN_STATE),
        update(PLAN_REMOVED),
        update({"sessionUpdate": "agent_message_chunk", "messageId": "a1", "content": text("ok")}),
        update({**done, "usage": USAGE, "background": []}),
    ]


def _run(tmp_path: Path, capabilities: dict[str, Any]) -> tuple[list[dict[str, Any]], str]:
    """The scripted turn for a v1 editor advertising ``capabilities``: what the editor received
    (every message checked against v1's stable schema, the unstable updates against the
    unstable one) and the bridge's stderr."""
    agent = ScriptedAgent(tmp_path, _steps(), "v2")
    asked: dict[str, str] = {}

    async def scenario() -> tuple[list[dict[str, Any]], str]:
        client = await RawClient.start("--agent-version", "2", "--verbose", agent=agent.command)
        init = {
            "protocolVersion": 1,
            "clientCapabilities": {"fs": {"readTextFile": True}, **capabilities},
            "clientInfo": {"name": "zed", "version": "0.200"},
        }
        for request_id, method, params in [
            (0, "initialize", init),
            (1, "session/new", {"cwd": "/tmp", "mcpServers": []}),
            (2, "session/prompt", {"sessionId": SID, "prompt": [text("hello")]}),
        ]:
            asked[str(request_id)] = method
            await client.send({"jsonrpc": "2.0", "id": request_id, "method": method,
                               "params": params})  # fmt: skip
            reply = await client.answer_to(request_id)
            assert "result" in reply, reply
        assert reply["result"] == {"stopReason": "end_turn"}  # the unknown state ended nothing
        code, err, rest = await client.finish()
        assert code == 0, err
        assert "Traceback" not in err and "a bug" not in err, err
        received = client.received + [json.loads(x) for x in rest.splitlines() if x.strip()]
        return received, err

    received, err = bounded(scenario())
    for message in received:
        body = message.get("params", {}).get("update", {})
        if body.get("sessionUpdate") in UNSTABLE_SESSION_UPDATES["v1"]:
            assert capabilities, message  # only an editor that opted in gets them
            assert unstable_v1_violations(message) == [], message
            continue
        method = None if "method" in message else asked.get(json.dumps(message["id"]))
        assert validate_message(message, "v1", response_method=method) == [], message
    return received, err


def _updates(received: list[dict[str, Any]]) -> list[tuple[str, dict[str, Any]]]:
    return [
        (m["params"]["sessionId"], m["params"]["update"])
        for m in received
        if m.get("method") == "session/update"
    ]


def test_through_the_bridge_a_plain_v1_editor_gets_only_valid_v1_and_reported_losses(
    tmp_path: Path,
) -> None:
    received, err = _run(tmp_path, {})
    updates = _updates(received)
    said = [(sid, u["messageId"], u["content"]["text"]) for sid, u in updates
            if u["sessionUpdate"] == "agent_message_chunk"]  # fmt: skip
    assert said == [
        (SID, "to-child", "Run the tests."),
        (SID, "from-child", "All pass."),
        (SID, "a1", "ok"),
    ]
    tags = {u["sessionUpdate"] for _, u in updates}
    assert tags == {"plan", "agent_message_chunk", "tool_call"}
    # the child session's tool call reaches the editor under the child's id
    assert (CHILD, {**CHILD_CALL, "sessionUpdate": "tool_call"}) in updates
    for reported in [
        "`subagent_update` has a v1 form only",
        "`session_message` has a v1 form only",
        "`session_message_chunk` has a v1 form only",
        "participants have no v1 form",
        "`plan_removed` has a v1 form only",
        "token usage has no form in a v1 prompt response",
    ]:
        assert reported in err, (reported, err)


def test_through_the_bridge_an_editor_with_subagents_and_plan_gets_the_unstable_forms(
    tmp_path: Path,
) -> None:
    received, err = _run(tmp_path, {"subagents": {}, "plan": {}})
    updates = [u for _, u in _updates(received)]
    tags = [u["sessionUpdate"] for u in updates]
    assert tags == [
        "plan_update", "subagent_update", "session_message", "tool_call",
        "session_message_chunk", "session_message", "plan_removed", "agent_message_chunk",
    ]  # fmt: skip
    assert updates[2] == TO_CHILD and updates[4] == FROM_CHILD_CHUNK
    assert updates[6] == PLAN_REMOVED
    assert "a v1 child state has no background list" in err


# --------------------------------------------------------------------------------------------
# (c) The log fixture


def _cli(*args: str) -> subprocess.CompletedProcess[str]:
    command = [sys.executable, "-m", "acp_toolcalls", *args]
    return subprocess.run(command, capture_output=True, text=True, timeout=120, check=False)


def test_the_fixture_converts_to_v1_with_only_reported_losses() -> None:
    done = _cli("convert", "--to", "v1", str(FIXTURE))
    assert done.returncode == 0, done.stderr
    lines = [json.loads(line) for line in done.stdout.splitlines()]
    methods: dict[str, str] = {}
    for message in lines:
        if "method" in message and "id" in message:
            methods[json.dumps(message["id"])] = message["method"]
        answered = None if "method" in message else methods.get(json.dumps(message["id"]))
        assert validate_message(message, "v1", response_method=answered) == [], message
    bodies = [m["params"]["update"] for m in lines if m.get("method") == "session/update"]
    assert not {b["sessionUpdate"] for b in bodies} & UNSTABLE_SESSION_UPDATES["v1"]
    unstable = [
        json.loads(line)["params"]["update"]["sessionUpdate"]
        for line in FIXTURE.read_text(encoding="utf-8").splitlines()
        if '"session/update"' in line
    ]
    for tag in set(unstable) & UNSTABLE_SESSION_UPDATES["v2"]:
        assert f"`{tag}`" in done.stderr, (tag, done.stderr)
    assert "token usage" in done.stderr


def test_the_fixture_replays_without_unknown_updates() -> None:
    done = _cli("replay", "--json", str(FIXTURE))
    assert done.returncode == 0, done.stderr
    assert "unknown" not in done.stderr, done.stderr
    sessions = json.loads(done.stdout)["sessions"]
    assert [c["toolCallId"] for c in sessions["sess_child_1"]["toolCalls"]] == ["toolu_child_01"]


# --------------------------------------------------------------------------------------------
# v1 agent -> v2 editor, through the connection (in process); background work of a subagent


def test_a_v1_agents_unstable_updates_reach_a_v2_editor_one_to_one() -> None:
    from acp_toolcalls.proxy import ConnectionCore

    core = ConnectionCore(agent_version=1)
    to_client: list[dict[str, Any]] = []
    to_agent: list[dict[str, Any]] = []

    def take(out: Any) -> None:
        to_client.extend(json.loads(line) for line in out.to_client)
        to_agent.extend(json.loads(line) for line in out.to_agent)

    def client(message: dict[str, Any]) -> None:
        take(core.from_client(json.dumps(message).encode(), 0.0))

    def agent(message: dict[str, Any]) -> None:
        take(core.from_agent(json.dumps(message).encode(), 0.0))

    def reply(value: Any) -> dict[str, Any]:
        return {"jsonrpc": "2.0", "id": to_agent[-1]["id"], "result": value}

    info = {"name": "zed", "version": "1"}
    init = {"protocolVersion": 2, "info": info, "capabilities": {}}
    client({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": init})
    agent(reply({"protocolVersion": 1, "agentCapabilities": {}, "authMethods": []}))
    client({"jsonrpc": "2.0", "id": 1, "method": "session/new", "params": {"cwd": "/tmp"}})
    agent(reply({"sessionId": SID}))
    idle = {"state": "idle", "stopReason": "end_turn", "usage": USAGE}
    bodies: list[dict[str, Any]] = [
        {**SUBAGENT, "state": idle},
        TO_CHILD,
        FROM_CHILD_CHUNK,
        PLAN,
        PLAN_REMOVED,
    ]
    before = len(to_client)
    for body in bodies:
        agent(notification(body))
    sent = [m["params"]["update"] for m in to_client[before:]]
    assert sent == bodies
    for message in to_client:
        assert validate_message(message, "v2") == [], message


def test_a_subagent_in_the_background_names_no_call_nor_terminal() -> None:
    from acp_toolcalls.v2 import background_work

    assert background_work(UNKNOWN_STATE) == (frozenset(), frozenset())


def test_an_unstable_update_without_its_id_is_a_reported_drop_both_ways() -> None:
    nameless: list[dict[str, Any]] = [{"sessionUpdate": "subagent_update", "title": "T"},
                {"sessionUpdate": "plan_removed", "planId": 7}]  # fmt: skip
    for bridge in (V2ToV1Bridge(subagents=True, plan=True), V1ToV2Bridge()):
        out = list(through(bridge, nameless))
        assert [messages for messages, _ in out] == [[], []]
        assert [losses for _, losses in out] == [
            ["not a valid `subagent_update`: no string `sessionId`; dropped"],
            ["not a valid `plan_removed`: no string `planId`; dropped"],
        ]


def test_an_unstable_result_its_target_schema_refuses_is_a_reported_drop() -> None:
    bad = {**SUBAGENT, "title": 5}
    (to_v1,) = through(V2ToV1Bridge(subagents=True), [bad])
    (to_v2,) = through(V1ToV2Bridge(), [bad])
    assert to_v1[0] == to_v2[0] == []
    assert to_v1[1][-1].startswith("not a valid v1 (unstable) `SubagentUpdate` ($.title: ")
    assert to_v2[1][-1].startswith("not a valid v2 (unstable) `SubagentUpdate` ($.title: ")


def test_the_official_typescript_v1_client_takes_the_bridged_unstable_turn(tmp_path: Path) -> None:
    """The TypeScript SDK's stable v1 client (its zod schemas parse every message) through
    ``acp-toolcalls bridge`` and the scripted v2 agent's turn: nothing it drops or refuses,
    the session messages as agent text, the turn ended by the idle after the unknown state."""
    from tests.interop.raw import bridged
    from tests.interop.ts_client import run_ts_client

    agent = ScriptedAgent(tmp_path, _steps(), "v2")
    command = bridged("--agent-version", "2", agent=agent.command)
    run = run_ts_client(1, command, tmp_path, "hello")
    assert run.errors == [], run.errors
    assert run.stop_reason == "end_turn"
    said = [
        (u["update"].get("messageId"), u["update"]["content"]["text"])
        for u in run.updates
        if u["update"]["sessionUpdate"] == "agent_message_chunk"
    ]
    assert said == [("to-child", "Run the tests."), ("from-child", "All pass."), ("a1", "ok")]
    assert {u["sessionId"] for u in run.updates} == {SID, CHILD}
