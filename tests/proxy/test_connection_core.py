"""ConnectionCore: the proxy's sans-I/O core, driven line by line like proxy.py drives it.

Every line it writes to a side is validated against that side's bundled schema (requests and
notifications by method, responses by the method of the request they answer).
"""

from __future__ import annotations

import json
from typing import Any, cast

import pytest

from acp_toolcalls.check import validate_message
from acp_toolcalls.models import VersionName
from acp_toolcalls.proxy import ConnectionCore, Outbox
from acp_toolcalls.store import Limits

SID = "sess-1"
CWD = "/home/user/project"


class Wire:
    """Both sides of one ConnectionCore: what each side sent and was sent, schema-checked."""

    def __init__(self, **options: Any) -> None:
        self.core = ConnectionCore(**options)
        self.now = 0.0
        self.to_client: list[dict[str, Any]] = []
        self.to_agent: list[dict[str, Any]] = []
        self.notes: list[str] = []
        # id -> method of the requests each side has received, to check the answers to them.
        self._client_asked: dict[str, str] = {}  # requests the client sent (its ids)
        self._agent_asked: dict[str, str] = {}  # requests the agent received (forwarded ids)
        self._agent_sent: dict[str, str] = {}  # requests the agent sent (its ids)
        self._client_got: dict[str, str] = {}  # requests the client received (forwarded ids)

    # -- driving

    def client(self, message: Any) -> Outbox:
        line = message if isinstance(message, bytes) else json.dumps(message).encode()
        for item in _items(message):
            if "method" in item and "id" in item:
                self._client_asked[_key(item["id"])] = item["method"]
        return self._take(self.core.from_client(line, self.now))

    def agent(self, message: Any) -> Outbox:
        line = message if isinstance(message, bytes) else json.dumps(message).encode()
        for item in _items(message):
            if "method" in item and "id" in item:
                self._agent_sent[_key(item["id"])] = item["method"]
        return self._take(self.core.from_agent(line, self.now))

    def agent_gone(self, reason: str) -> Outbox:
        return self._take(self.core.agent_gone(reason))

    def tick(self, seconds: float) -> Outbox:
        self.now += seconds
        return self._take(self.core.poll(self.now))

    def _take(self, out: Outbox) -> Outbox:
        for line in out.to_client:
            message = json.loads(line)
            self._check(message, self.core.client_version, self._client_asked, self._client_got)
            self.to_client.append(message)
        for line in out.to_agent:
            message = json.loads(line)
            version = self.core.agent_version or self._asked_version(message)
            self._check(message, version, self._agent_sent, self._agent_asked)
            self.to_agent.append(message)
        self.notes += [note.text for note in out.notes]
        return out

    def _asked_version(self, message: dict[str, Any]) -> int | None:
        params = message.get("params")
        return params.get("protocolVersion") if isinstance(params, dict) else None

    @staticmethod
    def _check(
        message: dict[str, Any],
        version: int | None,
        answered: dict[str, str],
        received: dict[str, str],
    ) -> None:
        if "method" in message and "id" in message:
            received[_key(message["id"])] = message["method"]
        if version not in (1, 2):
            return
        method = answered.get(_key(message.get("id"))) if "method" not in message else None
        protocol = cast(VersionName, f"v{version}")
        violations = validate_message(message, protocol, response_method=method)
        assert violations == [], (violations, message)

    # -- what was sent

    def client_updates(self, kind: str | None = None) -> list[dict[str, Any]]:
        return [
            m["params"]["update"]
            for m in self.to_client
            if m.get("method") == "session/update"
            and (kind is None or m["params"]["update"]["sessionUpdate"] == kind)
        ]

    def last_client(self) -> dict[str, Any]:
        return self.to_client[-1]

    def last_agent(self) -> dict[str, Any]:
        return self.to_agent[-1]

    def clear(self) -> None:
        self.to_client.clear()
        self.to_agent.clear()
        self.notes.clear()


def _items(message: Any) -> list[dict[str, Any]]:
    if isinstance(message, bytes):
        try:
            message = json.loads(message)
        except ValueError:
            return []
    items = message if isinstance(message, list) else [message]
    return [item for item in items if isinstance(item, dict)]


def _key(request_id: Any) -> str:
    return json.dumps(request_id)


def request(request_id: Any, method: str, params: Any) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": request_id, "method": method, "params": params}


def notification(method: str, params: Any) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "method": method, "params": params}


def result(request_id: Any, value: Any) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": request_id, "result": value}


def update(body: dict[str, Any], session: str = SID) -> dict[str, Any]:
    return notification("session/update", {"sessionId": session, "update": body})


def text(value: str) -> dict[str, Any]:
    return {"type": "text", "text": value}


V1_INIT = request(
    0,
    "initialize",
    {
        "protocolVersion": 1,
        "clientCapabilities": {
            "fs": {"readTextFile": True, "writeTextFile": True},
            "terminal": True,
            "session": {"notices": {}},
        },
        "clientInfo": {"name": "zed", "version": "1.0"},
    },
)
V2_AGENT_INIT = {
    "protocolVersion": 2,
    "info": {"name": "agent", "version": "2.0"},
    "capabilities": {
        "session": {
            "prompt": {"image": {}, "embeddedContext": {}},
            "mcp": {"stdio": {}, "http": {}},
            "delete": {},
        }
    },
    "authMethods": [{"methodId": "login", "type": "agent", "name": "Log in"}],
}
V2_INIT = request(
    0,
    "initialize",
    {"protocolVersion": 2, "info": {"name": "toad", "version": "1"}, "capabilities": {}},
)
V1_AGENT_INIT = {
    "protocolVersion": 1,
    "agentCapabilities": {
        "loadSession": True,
        "promptCapabilities": {"image": True, "audio": False, "embeddedContext": False},
        "mcpCapabilities": {"http": True, "sse": True},
    },
    "authMethods": [{"id": "login", "name": "Log in"}],
    "agentInfo": {"name": "old-agent", "version": "0.9"},
}


def v1_client_v2_agent(**options: Any) -> Wire:
    """A v1 client and a v2 agent, initialized, with session ``SID``."""
    wire = Wire(agent_version=2, **options)
    wire.client(V1_INIT)
    wire.agent(result(wire.last_agent()["id"], V2_AGENT_INIT))
    wire.client(request(1, "session/new", {"cwd": CWD, "mcpServers": []}))
    wire.agent(result(wire.last_agent()["id"], {"sessionId": SID}))
    wire.clear()
    return wire


def v2_client_v1_agent(**options: Any) -> Wire:
    """A v2 client and a v1 agent, initialized, with session ``SID``."""
    wire = Wire(agent_version=1, **options)
    wire.client(V2_INIT)
    wire.agent(result(wire.last_agent()["id"], V1_AGENT_INIT))
    wire.client(request(1, "session/new", {"cwd": CWD}))
    wire.agent(result(wire.last_agent()["id"], {"sessionId": SID}))
    wire.clear()
    return wire


# --------------------------------------------------------------------------------------------
# Negotiation


def test_a_v1_clients_initialize_reaches_a_v2_agent_converted_and_back() -> None:
    wire = Wire(agent_version=2)
    wire.client(V1_INIT)
    asked = wire.last_agent()
    assert asked["params"] == {
        "protocolVersion": 2,
        "info": {"name": "zed", "version": "1.0"},
        "capabilities": {},
    }
    assert any("no client file system" in note for note in wire.notes)
    wire.agent(result(asked["id"], V2_AGENT_INIT))
    answer = wire.last_client()
    assert answer["id"] == 0
    caps = answer["result"]["agentCapabilities"]
    assert caps["loadSession"] is True  # session/load maps to v2 session/resume + replay
    assert caps["promptCapabilities"] == {"image": True, "audio": False, "embeddedContext": True}
    assert caps["mcpCapabilities"] == {"http": True, "sse": False}
    assert caps["sessionCapabilities"] == {"list": {}, "resume": {}, "close": {}, "delete": {}}
    assert answer["result"]["authMethods"] == [{"id": "login", "name": "Log in"}]
    assert answer["result"]["agentInfo"] == {"name": "agent", "version": "2.0"}
    assert wire.core.mode == "converting"


def test_a_v2_clients_initialize_reaches_a_v1_agent_without_fs_or_terminal() -> None:
    wire = Wire(agent_version=1)
    wire.client(V2_INIT)
    asked = wire.last_agent()["params"]
    assert asked["protocolVersion"] == 1
    assert asked["clientCapabilities"]["fs"] == {"readTextFile": False, "writeTextFile": False}
    assert asked["clientCapabilities"]["terminal"] is False
    assert asked["clientInfo"] == {"name": "toad", "version": "1"}
    wire.agent(result(wire.last_agent()["id"], V1_AGENT_INIT))
    answer = wire.last_client()["result"]
    assert answer["protocolVersion"] == 2
    assert answer["info"] == {"name": "old-agent", "version": "0.9"}
    assert answer["capabilities"]["session"]["prompt"] == {"image": {}}
    assert answer["capabilities"]["session"]["mcp"] == {"stdio": {}, "http": {}}
    assert answer["authMethods"] == [{"methodId": "login", "name": "Log in", "type": "agent"}]
    assert any("SSE" in note for note in wire.notes)


def test_a_v1_agent_without_agent_info_gets_a_made_up_v2_info_reported() -> None:
    wire = Wire(agent_version=1)
    wire.client(V2_INIT)
    wire.agent(result(wire.last_agent()["id"], {"protocolVersion": 1}))
    assert wire.last_client()["result"]["info"] == {"name": "unknown", "version": "0"}
    assert any("v2 requires `info`" in note for note in wire.notes)


def test_the_same_version_on_both_sides_is_forwarded_byte_for_byte() -> None:
    wire = Wire()  # auto: the agent is asked in the client's version
    raw_init = json.dumps(V1_INIT, indent=None, separators=(", ", ": ")).encode()
    out = wire.client(raw_init)
    assert out.to_agent == [raw_init]
    answer = b'{"jsonrpc":"2.0","id":0,"result":{"protocolVersion":1}}'
    assert wire.core.from_agent(answer, 0).to_client == [answer]
    assert wire.core.mode == "passthrough"
    odd = b'{ "jsonrpc" : "2.0", "method":"session/update","params":{"x":[1, 2]} }'
    assert wire.core.from_agent(odd, 0).to_client == [odd]
    assert wire.core.from_client(b"not json at all", 0).to_agent == [b"not json at all"]


def test_auto_asks_in_the_clients_version_and_converts_when_the_agent_answers_the_other() -> None:
    wire = Wire()
    wire.client(V2_INIT)
    assert wire.last_agent()["params"]["protocolVersion"] == 2  # asked as it is
    wire.agent(result(0, V1_AGENT_INIT))  # a v1 agent answers with its own version
    assert wire.to_client == []  # ... and is asked again in it (issue 16)
    again = wire.last_agent()
    assert again["params"]["protocolVersion"] == 1
    assert again["params"]["clientInfo"] == {"name": "toad", "version": "1"}
    assert "capabilities" not in again["params"] and "info" not in again["params"]
    wire.agent(result(again["id"], V1_AGENT_INIT))
    assert wire.core.mode == "converting"
    assert wire.last_client()["result"]["protocolVersion"] == 2
    assert wire.last_client()["result"]["info"]["name"] == "old-agent"


def test_an_initialize_error_is_forwarded_and_the_client_may_try_again() -> None:
    wire = Wire(agent_version=2)
    wire.client(V1_INIT)
    first = wire.last_agent()["id"]
    refused = {"jsonrpc": "2.0", "id": first, "error": {"code": -32602, "message": "v1?"}}
    wire.agent(refused)  # refused in v2: asked once more, in v1 (the client's line as it is)
    assert wire.to_client == [] and wire.last_agent()["params"] == V1_INIT["params"]
    asked = wire.last_agent()["id"]
    error = {"jsonrpc": "2.0", "id": asked, "error": {"code": -32602, "message": "bad"}}
    wire.agent(error)
    assert wire.last_client() == {**error, "id": 0}
    assert wire.core.mode == "negotiating"
    wire.client({**V1_INIT, "id": 5})
    wire.agent(result(wire.last_agent()["id"], V2_AGENT_INIT))
    assert wire.last_client()["id"] == 5 and wire.core.mode == "converting"


def test_auto_asks_again_in_the_other_version_when_the_agent_refuses_the_clients() -> None:
    wire = Wire()  # a v2-only agent that rejects a v1 initialize (no `info`)
    wire.client(V1_INIT)
    first = wire.last_agent()
    assert first["params"]["protocolVersion"] == 1
    wire.agent({"jsonrpc": "2.0", "id": first["id"], "error": {"code": -32602, "message": "info"}})
    assert wire.to_client == []  # not the client's problem yet
    second = wire.last_agent()
    assert second["params"]["protocolVersion"] == 2 and second["params"]["info"]["name"] == "zed"
    wire.agent(result(second["id"], V2_AGENT_INIT))
    assert wire.core.mode == "converting"
    assert wire.last_client()["id"] == 0
    assert wire.last_client()["result"]["protocolVersion"] == 1
    assert any("asked again in v2" in note for note in wire.notes)


# --------------------------------------------------------------------------------------------
# v1 client, v2 agent: session setup


def test_session_new_converts_mcp_servers_and_config_options_and_sends_commands_after() -> None:
    wire = Wire(agent_version=2)
    wire.client(V1_INIT)
    wire.agent(result(wire.last_agent()["id"], V2_AGENT_INIT))
    servers = [
        {"name": "fs", "command": "/usr/bin/mcp-fs", "args": [], "env": []},
        {"type": "http", "name": "web", "url": "https://example.com/mcp", "headers": []},
        {"type": "sse", "name": "old", "url": "https://example.com/sse", "headers": []},
    ]
    wire.client(request(1, "session/new", {"cwd": CWD, "mcpServers": servers}))
    sent = wire.last_agent()["params"]["mcpServers"]
    assert sent == [
        {"type": "stdio", "name": "fs", "command": "/usr/bin/mcp-fs", "args": [], "env": []},
        {"type": "http", "name": "web", "url": "https://example.com/mcp", "headers": []},
    ]
    assert any("SSE" in note for note in wire.notes)
    option = {
        "configId": "mode",
        "name": "Mode",
        "category": "mode",
        "type": "select",
        "currentValue": "ask",
        "options": [
            {"groupId": "g", "name": "Modes", "options": [{"value": "ask", "name": "Ask"}]}
        ],
    }
    commands = [{"type": "command", "name": "test", "description": "Run tests"}]
    answer = {"sessionId": SID, "configOptions": [option], "availableCommands": commands}
    wire.agent(result(wire.last_agent()["id"], answer))
    response, notice = wire.to_client[-2:]
    v1_option = response["result"]["configOptions"][0]
    assert v1_option["id"] == "mode" and "configId" not in v1_option
    assert v1_option["options"][0]["group"] == "g"
    assert "availableCommands" not in response["result"]
    assert notice["params"] == {
        "sessionId": SID,
        "update": {
            "sessionUpdate": "available_commands_update",
            "availableCommands": [{"name": "test", "description": "Run tests"}],
        },
    }


def test_session_load_is_a_resume_with_replay_and_the_replay_reaches_the_v1_client() -> None:
    wire = v1_client_v2_agent()
    wire.client(request(2, "session/load", {"sessionId": SID, "cwd": CWD, "mcpServers": []}))
    asked = wire.last_agent()
    assert asked["method"] == "session/resume"
    assert asked["params"]["replayFrom"] == {"type": "start"}
    # The replay: whole-message upserts the v1 side has not seen become chunks.
    wire.agent(
        update({"sessionUpdate": "user_message", "messageId": "u1", "content": [text("hi")]})
    )
    wire.agent(
        update(
            {
                "sessionUpdate": "agent_message",
                "messageId": "a1",
                "content": [text("Hello"), text(" there")],
            }
        )
    )
    wire.agent(result(asked["id"], {}))
    chunks = wire.client_updates()
    assert [(c["sessionUpdate"], c["content"]["text"]) for c in chunks] == [
        ("user_message_chunk", "hi"),
        ("agent_message_chunk", "Hello"),
        ("agent_message_chunk", " there"),
    ]
    assert wire.last_client() == result(2, {})


def test_an_upsert_of_a_message_the_v1_client_already_has_is_not_forwarded() -> None:
    wire = v1_client_v2_agent()
    wire.agent(
        update({"sessionUpdate": "agent_message_chunk", "messageId": "a1", "content": text("Hel")})
    )
    wire.agent(
        update({"sessionUpdate": "agent_message", "messageId": "a1", "content": [text("Hi")]})
    )
    assert len(wire.client_updates()) == 1
    assert any("already has" in note for note in wire.notes)


def test_set_mode_has_no_v2_counterpart() -> None:
    wire = v1_client_v2_agent()
    wire.client(request(4, "session/set_mode", {"sessionId": SID, "modeId": "ask"}))
    answer = wire.last_client()
    assert answer["id"] == 4 and answer["error"]["code"] == -32601
    assert "no session modes" in answer["error"]["message"]
    assert wire.to_agent == []


def test_authenticate_is_auth_login() -> None:
    wire = v1_client_v2_agent()
    wire.client(request(3, "authenticate", {"methodId": "login"}))
    asked = wire.last_agent()
    assert (asked["method"], asked["params"]) == ("auth/login", {"methodId": "login"})
    wire.agent(result(asked["id"], {}))
    assert wire.last_client() == result(3, {})


# --------------------------------------------------------------------------------------------
# v1 client, v2 agent: prompt turns


def prompt(wire: Wire, request_id: Any = 7) -> dict[str, Any]:
    wire.client(request(request_id, "session/prompt", {"sessionId": SID, "prompt": [text("go")]}))
    return wire.last_agent()


def test_the_v1_prompt_response_waits_for_the_v2_agents_idle_state() -> None:
    wire = v1_client_v2_agent(coalesce_interval=0.05)
    asked = prompt(wire)
    assert asked["params"] == {"sessionId": SID, "prompt": [text("go")]}
    wire.agent(
        update({"sessionUpdate": "user_message_chunk", "messageId": "u", "content": text("go")})
    )
    wire.agent(result(asked["id"], {"messageId": "u"}))
    assert wire.to_client == []  # the acknowledgement and the echo are not the v1 client's
    wire.agent(update({"sessionUpdate": "state_update", "state": "running"}))
    wire.agent(
        update({"sessionUpdate": "agent_message_chunk", "messageId": "a", "content": text("ok")})
    )
    wire.agent(update({"sessionUpdate": "tool_call_update", "toolCallId": "c", "title": "Read"}))
    chunk = {"type": "content", "content": text("line")}
    for _ in range(3):
        wire.agent(
            update(
                {"sessionUpdate": "tool_call_content_chunk", "toolCallId": "c", "content": chunk}
            )
        )
    assert [u["sessionUpdate"] for u in wire.client_updates()] == [
        "agent_message_chunk",
        "tool_call",  # a first sight goes out at once
    ]
    assert wire.core.next_deadline() == pytest.approx(0.05)
    wire.tick(0.06)  # the time bound: the call's chunks go out as one v1 update
    [created] = wire.client_updates("tool_call")
    assert created["title"] == "Read"
    [grown] = wire.client_updates("tool_call_update")
    assert len(grown["content"]) == 3
    wire.agent(
        update({"sessionUpdate": "tool_call_update", "toolCallId": "c", "status": "completed"})
    )
    wire.agent(update({"sessionUpdate": "state_update", "state": "idle", "stopReason": "end_turn"}))
    assert wire.last_client() == result(7, {"stopReason": "end_turn"})
    [_, done] = wire.client_updates("tool_call_update")
    assert done["status"] == "completed"
    assert wire.to_client.index(wire.last_client()) > wire.to_client.index(
        next(m for m in wire.to_client if m.get("params", {}).get("update") == done)
    )


def test_changes_waiting_to_be_coalesced_go_out_before_the_prompt_response() -> None:
    wire = v1_client_v2_agent(coalesce_interval=10.0)
    asked = prompt(wire)
    wire.agent(result(asked["id"], {"messageId": "u"}))
    wire.agent(update({"sessionUpdate": "tool_call_update", "toolCallId": "c", "title": "Grep"}))
    wire.agent(update({"sessionUpdate": "state_update", "state": "idle", "stopReason": "end_turn"}))
    assert [m.get("method") for m in wire.to_client] == ["session/update", None]


def test_an_idle_before_the_prompt_is_acknowledged_ends_the_turn_when_it_is() -> None:
    wire = v1_client_v2_agent()
    asked = prompt(wire)
    wire.agent(update({"sessionUpdate": "state_update", "state": "idle", "stopReason": "refusal"}))
    assert wire.to_client == []
    wire.agent(result(asked["id"], {"messageId": "u"}))
    assert wire.last_client() == result(7, {"stopReason": "refusal"})


def test_an_idle_without_a_stop_reason_does_not_end_a_turn() -> None:
    wire = v1_client_v2_agent()
    asked = prompt(wire)
    wire.agent(result(asked["id"], {"messageId": "u"}))
    wire.agent(update({"sessionUpdate": "state_update", "state": "idle"}))
    assert wire.to_client == []


def test_an_error_stop_reason_is_a_json_rpc_error_for_the_v1_client() -> None:
    wire = v1_client_v2_agent()
    asked = prompt(wire)
    wire.agent(result(asked["id"], {"messageId": "u"}))
    idle = {
        "sessionUpdate": "state_update",
        "state": "idle",
        "stopReason": "error",
        "error": {"code": -32000, "message": "model overloaded"},
    }
    wire.agent(update(idle))
    assert wire.last_client() == {
        "jsonrpc": "2.0",
        "id": 7,
        "error": {"code": -32000, "message": "model overloaded"},
    }


def test_an_unknown_stop_reason_ends_the_v1_turn_and_is_reported() -> None:
    wire = v1_client_v2_agent()
    asked = prompt(wire)
    wire.agent(result(asked["id"], {"messageId": "u"}))
    wire.agent(update({"sessionUpdate": "state_update", "state": "idle", "stopReason": "_paused"}))
    assert wire.last_client() == result(7, {"stopReason": "end_turn"})
    assert any("'_paused' has no v1 form" in note for note in wire.notes)


def test_a_prompt_error_from_the_agent_is_the_v1_response() -> None:
    wire = v1_client_v2_agent()
    asked = prompt(wire)
    error = {"code": -32602, "message": "unsupported block"}
    wire.agent({"jsonrpc": "2.0", "id": asked["id"], "error": error})
    assert wire.last_client() == {"jsonrpc": "2.0", "id": 7, "error": error}
    wire.agent(update({"sessionUpdate": "state_update", "state": "idle", "stopReason": "end_turn"}))
    assert len(wire.to_client) == 1  # that turn is over


def test_a_v2_plan_reaches_a_v1_client_as_its_plan_and_a_v1_plan_a_v2_client_as_plan_update() -> (
    None
):
    entries = [{"content": "Write tests", "priority": "high", "status": "in_progress"}]
    wire = v1_client_v2_agent()
    plan = {"type": "items", "planId": "p1", "entries": entries}
    wire.agent(update({"sessionUpdate": "plan_update", "plan": plan}))
    assert wire.client_updates() == [{"sessionUpdate": "plan", "entries": entries}]
    back = v2_client_v1_agent()
    back.agent(update({"sessionUpdate": "plan", "entries": entries}))
    [sent] = back.client_updates()
    assert sent["sessionUpdate"] == "plan_update" and sent["plan"]["entries"] == entries


def test_notices_reach_a_v1_client_that_advertised_them() -> None:
    wire = v1_client_v2_agent()  # V1_INIT advertises session.notices
    wire.agent(update({"sessionUpdate": "notice", "severity": "info", "title": "Indexing"}))
    wire.agent(
        update({"sessionUpdate": "compaction_update", "compactionId": "k", "status": "in_progress"})
    )
    assert [u["sessionUpdate"] for u in wire.client_updates()] == ["notice"]


# --------------------------------------------------------------------------------------------
# v1 client, v2 agent: permissions and cancellation


PERMISSION = {
    "sessionId": SID,
    "title": "Edit notes.txt?",
    "subject": {
        "type": "tool_call",
        "toolCall": {"toolCallId": "edit", "title": "Edit notes.txt", "kind": "edit"},
    },
    "options": [
        {"optionId": "allow", "name": "Allow", "kind": "allow_once"},
        {"optionId": "deny", "name": "Deny", "kind": "reject_once"},
    ],
}
CANCELLED = {"outcome": {"outcome": "cancelled"}}


def test_a_permission_request_gets_an_id_of_the_proxy_and_its_answer_goes_back() -> None:
    wire = v1_client_v2_agent()
    prompt(wire, request_id=0)
    wire.agent(request(0, "session/request_permission", PERMISSION))  # the same id as the prompt
    created, asked = wire.to_client[-2:]
    assert created["params"]["update"]["sessionUpdate"] == "tool_call"
    assert asked["method"] == "session/request_permission"
    assert asked["params"]["toolCall"]["toolCallId"] == "edit"
    chosen = {"outcome": {"outcome": "selected", "optionId": "allow"}}
    wire.client(result(asked["id"], chosen))
    assert wire.last_agent() == result(0, chosen)  # the agent's own id


def test_cancel_answers_the_pending_permission_cancelled_and_drops_the_late_answer() -> None:
    wire = v1_client_v2_agent()
    asked_prompt = prompt(wire)
    wire.agent(result(asked_prompt["id"], {"messageId": "u"}))
    wire.agent(request(9, "session/request_permission", PERMISSION))
    client_id = wire.last_client()["id"]
    wire.to_agent.clear()
    wire.client(notification("session/cancel", {"sessionId": SID}))
    assert wire.to_agent == [
        notification("session/cancel", {"sessionId": SID}),
        result(9, CANCELLED),
    ]
    wire.client(result(client_id, CANCELLED))  # the v1 client's own (required) answer
    assert len(wire.to_agent) == 2  # dropped: the agent was answered already
    wire.agent(
        update({"sessionUpdate": "tool_call_update", "toolCallId": "edit", "status": "cancelled"})
    )
    wire.agent(
        update({"sessionUpdate": "state_update", "state": "idle", "stopReason": "cancelled"})
    )
    assert wire.last_client() == result(7, {"stopReason": "cancelled"})
    assert wire.client_updates("tool_call_update")[-1]["status"] == "failed"  # v1 has no cancelled


def test_the_agents_cancel_request_is_answered_at_once_and_forwarded_with_the_client_id() -> None:
    wire = v1_client_v2_agent()
    wire.agent(request("p1", "session/request_permission", PERMISSION))
    client_id = wire.last_client()["id"]
    wire.agent(notification("$/cancel_request", {"requestId": "p1"}))
    assert wire.last_agent() == result("p1", CANCELLED)
    withdrawn, restored = wire.to_client[-2:]
    assert withdrawn == notification("$/cancel_request", {"requestId": client_id})
    assert restored["params"]["update"]["title"] == "Edit notes.txt"  # the call's own title
    wire.client(result(client_id, {"outcome": {"outcome": "selected", "optionId": "allow"}}))
    assert wire.to_agent == [result("p1", CANCELLED)]  # the late approval never reaches it


def test_the_clients_cancel_request_names_the_id_the_agent_knows() -> None:
    wire = v1_client_v2_agent()
    asked = prompt(wire, request_id="mine")
    wire.client(notification("$/cancel_request", {"requestId": "mine"}))
    assert wire.last_agent() == notification("$/cancel_request", {"requestId": asked["id"]})


def test_requests_of_the_two_sides_with_the_same_ids_are_answered_to_the_right_side() -> None:
    wire = v1_client_v2_agent()
    wire.client(request(5, "_vendor/ping", {"n": 1}))
    to_agent = wire.last_agent()
    assert to_agent["method"] == "_vendor/ping" and to_agent["params"] == {"n": 1}
    wire.agent(request(5, "_vendor/ask", {}))  # the agent's own request 5
    to_client = wire.last_client()
    wire.agent(result(to_agent["id"], {"pong": True}))
    assert wire.last_client() == result(5, {"pong": True})
    wire.client(result(to_client["id"], {"answer": 42}))
    assert wire.last_agent() == result(5, {"answer": 42})


# --------------------------------------------------------------------------------------------
# v2 client, v1 agent


def test_a_v2_prompt_is_acknowledged_at_once_and_ends_with_the_v1_response() -> None:
    wire = v2_client_v1_agent()
    wire.client(request(3, "session/prompt", {"sessionId": SID, "prompt": [text("go")]}))
    ack, echo, running = wire.to_client
    message_id = ack["result"]["messageId"]
    assert ack["id"] == 3
    assert echo["params"]["update"] == {
        "sessionUpdate": "user_message",
        "messageId": message_id,
        "content": [text("go")],
    }
    assert running["params"]["update"] == {"sessionUpdate": "state_update", "state": "running"}
    asked = wire.last_agent()
    assert asked["method"] == "session/prompt"
    wire.agent(update({"sessionUpdate": "agent_message_chunk", "content": text("Hel")}))
    wire.agent(update({"sessionUpdate": "agent_message_chunk", "content": text("lo")}))
    wire.agent(
        update({"sessionUpdate": "tool_call", "toolCallId": "c", "title": "Read", "kind": "read"})
    )
    wire.agent(update({"sessionUpdate": "agent_message_chunk", "content": text("done")}))
    ids = [u["messageId"] for u in wire.client_updates("agent_message_chunk")]
    assert ids[0] == ids[1] != ids[2]  # a tool call between them starts a new message
    assert wire.client_updates("tool_call_update")[0]["title"] == "Read"
    wire.agent(result(asked["id"], {"stopReason": "max_tokens"}))
    assert wire.client_updates()[-1] == {
        "sessionUpdate": "state_update",
        "state": "idle",
        "stopReason": "max_tokens",
    }


def test_a_v1_prompt_error_ends_the_v2_turn_in_error() -> None:
    wire = v2_client_v1_agent()
    wire.client(request(3, "session/prompt", {"sessionId": SID, "prompt": [text("go")]}))
    error = {"code": -32000, "message": "auth required"}
    wire.agent({"jsonrpc": "2.0", "id": wire.last_agent()["id"], "error": error})
    assert wire.client_updates()[-1] == {
        "sessionUpdate": "state_update",
        "state": "idle",
        "stopReason": "error",
        "error": error,
    }


def test_a_v1_permission_request_is_framed_by_requires_action_and_running() -> None:
    wire = v2_client_v1_agent()
    wire.client(request(3, "session/prompt", {"sessionId": SID, "prompt": [text("go")]}))
    wire.clear()
    ask = {
        "sessionId": SID,
        "toolCall": {"toolCallId": "edit", "title": "Edit a.py"},
        "options": [{"optionId": "ok", "name": "OK", "kind": "allow_once"}],
    }
    wire.agent(request(11, "session/request_permission", ask))
    state, asked = wire.to_client
    assert state["params"]["update"]["state"] == "requires_action"
    assert asked["params"]["title"] == "Edit a.py"
    chosen = {"outcome": {"outcome": "selected", "optionId": "ok"}}
    wire.client(result(asked["id"], chosen))
    assert wire.last_agent() == result(11, chosen)
    assert wire.client_updates()[-1] == {"sessionUpdate": "state_update", "state": "running"}


def test_cancel_toward_a_v1_agent_settles_its_permission_and_tells_the_v2_client() -> None:
    wire = v2_client_v1_agent()
    wire.client(request(3, "session/prompt", {"sessionId": SID, "prompt": [text("go")]}))
    ask = {
        "sessionId": SID,
        "toolCall": {"toolCallId": "edit", "title": "Edit a.py"},
        "options": [{"optionId": "ok", "name": "OK", "kind": "allow_once"}],
    }
    wire.agent(request(11, "session/request_permission", ask))
    client_id = wire.last_client()["id"]
    wire.to_agent.clear()
    wire.client(notification("session/cancel", {"sessionId": SID}))
    assert wire.to_agent == [
        notification("session/cancel", {"sessionId": SID}),
        result(11, CANCELLED),
    ]
    assert wire.last_client() == notification("$/cancel_request", {"requestId": client_id})
    wire.client(result(client_id, CANCELLED))
    assert len(wire.to_agent) == 2


@pytest.mark.parametrize(
    ("method", "what"),
    [("fs/read_text_file", "file system"), ("terminal/create", "terminals")],
)
def test_a_v1_agents_client_owned_requests_are_refused(method: str, what: str) -> None:
    wire = v2_client_v1_agent()
    wire.agent(request(4, method, {"sessionId": SID, "path": "/a", "command": "ls"}))
    answer = wire.last_agent()
    assert answer["id"] == 4 and answer["error"]["code"] == -32601
    assert what in answer["error"]["message"] and method in answer["error"]["message"]
    assert wire.to_client == []


def test_resume_with_replay_is_a_v1_load_and_without_it_a_load_whose_replay_is_dropped() -> None:
    wire = v2_client_v1_agent()  # V1_AGENT_INIT: loadSession, no resume capability
    params = {"sessionId": SID, "cwd": CWD, "replayFrom": {"type": "start"}}
    wire.client(request(5, "session/resume", params))
    asked = wire.last_agent()
    assert asked["method"] == "session/load"
    assert asked["params"] == {"sessionId": SID, "cwd": CWD, "mcpServers": []}
    wire.agent(update({"sessionUpdate": "user_message_chunk", "content": text("old")}))
    wire.agent(result(asked["id"], {"modes": {"currentModeId": "a", "availableModes": []}}))
    assert [u["sessionUpdate"] for u in wire.client_updates()] == ["user_message_chunk"]
    assert wire.last_client() == result(5, {})
    assert any("the modes are not shown" in note for note in wire.notes)
    wire.clear()
    wire.client(request(6, "session/resume", {"sessionId": SID, "cwd": CWD}))
    asked = wire.last_agent()
    assert asked["method"] == "session/load"  # the agent cannot resume: a load, replay dropped
    wire.agent(update({"sessionUpdate": "user_message_chunk", "content": text("old")}))
    wire.agent(result(asked["id"], {}))
    assert wire.to_client == [result(6, {})]


def test_baseline_v2_methods_a_v1_agent_lacks_are_answered_by_the_proxy() -> None:
    wire = v2_client_v1_agent()
    wire.client(request(7, "auth/logout", {}))
    wire.client(request(8, "session/close", {"sessionId": SID}))
    wire.client(request(9, "session/list", {}))
    wire.client(request(10, "tool_call/cancel", {"sessionId": SID, "toolCallId": "c"}))
    assert wire.to_agent == []
    logout, close, listed, cancel = wire.to_client
    assert logout == result(7, {}) and close == result(8, {})
    assert listed["error"]["code"] == -32601
    assert cancel["error"]["code"] == -32602


# --------------------------------------------------------------------------------------------
# Bad input, a lost agent


def test_a_client_line_that_is_not_json_is_answered_parse_error() -> None:
    wire = v1_client_v2_agent()
    wire.client(b'{"jsonrpc": "2.0", "id": 3, "method": ')
    answer = wire.last_client()
    assert answer["id"] == 3 and answer["error"]["code"] == -32700  # its id could be read
    wire.client(b'{"jsonrpc": "2.0", "method": ')
    assert wire.last_client()["id"] is None
    assert wire.to_agent == []


def test_a_batch_from_the_client_is_handled_element_by_element() -> None:
    wire = v1_client_v2_agent()
    batch = [request(20, "authenticate", {"methodId": "login"}), 42]
    wire.client(batch)
    assert wire.last_agent()["method"] == "auth/login"
    assert wire.last_client()["error"]["code"] == -32600


def test_a_client_batch_element_with_a_null_method_is_answered_invalid_request() -> None:
    wire = v1_client_v2_agent()
    bad = {"jsonrpc": "2.0", "id": 21, "method": None}
    wire.client([bad, request(20, "authenticate", {"methodId": "login"})])
    [answer] = wire.to_client
    assert answer["id"] == 21 and answer["error"]["code"] == -32600
    assert wire.last_agent()["method"] == "auth/login"  # the next element still went through
    assert any("not a message" in note for note in wire.notes)


def test_an_invalid_batch_element_with_an_id_json_rpc_cannot_carry_is_answered_with_null() -> None:
    wire = v1_client_v2_agent()
    wire.client([{"jsonrpc": "2.0", "id": True, "method": None}])
    [answer] = wire.to_client  # schema-checked: a `true` id would not validate
    assert answer["id"] is None and answer["error"]["code"] == -32600


def test_an_agent_batch_element_with_a_null_method_is_dropped_and_the_rest_applied() -> None:
    wire = v1_client_v2_agent()
    chunk = {"sessionUpdate": "agent_message_chunk", "messageId": "a", "content": text("hi")}
    wire.agent([{"jsonrpc": "2.0", "method": None}, update(chunk)])
    [forwarded] = wire.client_updates()
    assert forwarded["content"] == text("hi")
    assert not wire.core.gone
    assert any("not a message" in note and "dropped" in note for note in wire.notes)


def test_an_agent_line_that_is_not_json_ends_the_session_and_answers_the_client() -> None:
    wire = v1_client_v2_agent()
    prompt(wire, request_id=7)
    wire.client(request(8, "session/list", {}))
    wire.agent(b"Traceback (most recent call last):")
    answers = {m["id"]: m["error"] for m in wire.to_client}
    assert set(answers) == {7, 8}
    assert all(
        e["code"] == -32603 and "not JSON-RPC" in e["data"]["details"] for e in answers.values()
    )
    assert wire.core.gone
    wire.agent(
        update({"sessionUpdate": "agent_message_chunk", "messageId": "a", "content": text("x")})
    )
    assert len(wire.to_client) == 2  # nothing after the end


def test_a_lost_v1_agent_ends_an_acknowledged_v2_turn_in_error() -> None:
    wire = v2_client_v1_agent()
    wire.client(request(3, "session/prompt", {"sessionId": SID, "prompt": [text("go")]}))
    wire.clear()
    wire.agent_gone("the agent exited with code 1")
    [idle] = wire.client_updates()
    assert idle["stopReason"] == "error" and "exited with code 1" in idle["error"]["message"]
    assert all("id" not in message for message in wire.to_client)  # the prompt was answered


# --------------------------------------------------------------------------------------------
# Any input from either side: no exception, every line written is JSON, state stays usable

from hypothesis import given  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

_json = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=8),
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4)
    ),
    max_leaves=12,
)
_methods = st.sampled_from(
    [
        "initialize", "session/new", "session/load", "session/resume", "session/prompt",
        "session/cancel", "session/update", "session/request_permission", "$/cancel_request",
        "authenticate", "auth/login", "session/set_mode", "fs/read_text_file", "terminal/create",
        "tool_call/cancel", "session/close", "session/list", "_x/ext",
    ]
)  # fmt: skip
_tags = st.sampled_from(
    [
        "tool_call_update", "tool_call_content_chunk", "tool_call", "state_update",
        "agent_message_chunk", "agent_message", "user_message_chunk", "user_message",
        "terminal_update", "terminal_output_chunk", "plan_update", "notice", "_custom",
    ]
)  # fmt: skip
_ids = st.one_of(st.integers(0, 3), st.sampled_from(["a", "b"]), st.none())
_params = st.one_of(
    _json,
    st.fixed_dictionaries(
        {"sessionId": st.sampled_from([SID, "other"])},
        optional={
            "update": st.fixed_dictionaries(
                {"sessionUpdate": _tags},
                optional={
                    "toolCallId": st.sampled_from(["c1", "c2"]),
                    "state": st.sampled_from(["idle", "running", "requires_action"]),
                    "stopReason": st.sampled_from(["end_turn", "error", "_x"]),
                    "messageId": st.sampled_from(["m1", "m2"]),
                    "content": _json,
                    "status": _json,
                },
            ),
            "protocolVersion": st.sampled_from([1, 2, 3]),
            "prompt": st.lists(
                st.fixed_dictionaries({"type": st.just("text"), "text": st.text(max_size=5)}),
                max_size=2,
            ),
            "requestId": _ids,
            "options": _json,
            "toolCall": _json,
            "subject": _json,
            "title": _json,
        },
    ),
)
_messages = st.one_of(
    st.builds(
        lambda i, m, p: {"jsonrpc": "2.0", "id": i, "method": m, "params": p},
        _ids,
        _methods,
        _params,
    ),
    st.builds(lambda m, p: {"jsonrpc": "2.0", "method": m, "params": p}, _methods, _params),
    st.builds(lambda i, r: {"jsonrpc": "2.0", "id": i, "result": r}, _ids, _json),
    st.builds(
        lambda i: {"jsonrpc": "2.0", "id": i, "error": {"code": -32800, "message": "x"}}, _ids
    ),
    _json,
)
_lines = st.one_of(
    _messages.map(lambda m: json.dumps(m).encode()),
    st.lists(_messages, max_size=3).map(lambda m: json.dumps(m).encode()),
    st.binary(max_size=20),
)


@given(
    versions=st.sampled_from([(1, 2), (2, 1), ("auto", "auto"), (1, "auto"), (2, 2)]),
    steps=st.lists(st.tuples(st.sampled_from(["client", "agent", "tick"]), _lines), max_size=25),
)
def test_no_input_from_either_side_raises_or_writes_anything_but_json(
    versions: tuple[Any, Any], steps: list[tuple[str, bytes]]
) -> None:
    client_version, agent_version = versions
    core = ConnectionCore(client_version=client_version, agent_version=agent_version)
    init = V1_INIT if client_version in (1, "auto") else V2_INIT
    outs = [core.from_client(json.dumps(init).encode(), 0.0)]
    answer = V2_AGENT_INIT if agent_version in (2, "auto") else V1_AGENT_INIT
    outs.append(core.from_agent(json.dumps(result(1, answer)).encode(), 0.0))
    now = 0.0
    for side, line in steps:
        now += 0.01
        if side == "client":
            outs.append(core.from_client(line, now))
        elif side == "agent":
            outs.append(core.from_agent(line, now))
        else:
            outs.append(core.poll(now + 1.0))
    outs.append(core.agent_gone("the agent exited with code 0"))
    forwarded = {line for _, line in steps}  # pass-through forwards even garbage as it is
    for out in outs:
        for written in out.to_client + out.to_agent:
            if written not in forwarded or core.mode != "passthrough":
                json.loads(written)


# --------------------------------------------------------------------------------------------
# Memory caps of the core itself (issue 15): sessions, message ids, pending requests each way


def test_past_max_sessions_idle_sessions_are_forgotten_and_busy_ones_kept() -> None:
    wire = v1_client_v2_agent(limits=Limits(max_sessions=10))
    prompt(wire)  # SID is busy: a prompt waits
    for i in range(200):
        body = {"sessionUpdate": "agent_message_chunk", "messageId": f"m{i}"}
        wire.agent(update({**body, "content": text("hi")}, session=f"s{i}"))
    assert len(wire.core.sessions.table) <= 11
    assert any(key == SID for key in wire.core.sessions.table)  # the busy one stays
    notes = [n for n in wire.notes if n.startswith("max_sessions")]
    assert len(notes) == 1  # one line per cap per 10 seconds, however often it bites


def test_past_max_message_ids_the_oldest_are_forgotten() -> None:
    wire = v1_client_v2_agent(limits=Limits(max_message_ids=50))
    for i in range(500):
        body = {"sessionUpdate": "agent_message_chunk", "messageId": f"m{i}"}
        wire.agent(update({**body, "content": text("hi")}))
    [session] = [s for k, s in wire.core.sessions.table.items() if k == SID]
    assert len(session.forwarded_messages) <= 50
    assert len(wire.client_updates("agent_message_chunk")) == 500  # none lost


def test_past_max_pending_requests_the_oldest_client_request_is_answered_an_error() -> None:
    wire = v1_client_v2_agent(limits=Limits(max_pending_requests=20))
    for i in range(100, 150):
        wire.client(request(i, "_vendor/ping", {}))
    errors = [m for m in wire.to_client if "error" in m]
    assert [m["id"] for m in errors] == list(range(100, 130))  # the oldest 30, in order
    assert len(wire.core.agent_requests.pending) == 20
    late = wire.to_agent[0]["id"]  # the agent answers a request given up: dropped
    wire.agent(result(late, {"pong": True}))
    assert wire.last_client()["id"] == 129


def test_past_max_pending_requests_initialize_is_still_answered() -> None:
    """Issue 15: requests sent before the agent answered `initialize` pushed it out of the
    pending ones; the client got an error for it, its answer was dropped, and the connection
    never left negotiation."""
    wire = Wire(agent_version=2, limits=Limits(max_pending_requests=5))
    wire.client(V1_INIT)
    asked = wire.last_agent()["id"]
    for i in range(100, 120):
        wire.client(request(i, "_vendor/ping", {}))
    wire.agent(result(asked, V2_AGENT_INIT))
    answer = next(m for m in wire.to_client if m.get("id") == 0)
    assert answer["result"]["protocolVersion"] == 1 and wire.core.mode == "converting"


def test_past_max_pending_requests_the_oldest_agent_request_is_withdrawn() -> None:
    wire = v1_client_v2_agent(limits=Limits(max_pending_requests=20))
    for i in range(100, 150):
        wire.agent(request(i, "_vendor/ask", {}))
    answered = [m for m in wire.to_agent if "id" in m and "method" not in m]
    assert [m["id"] for m in answered] == list(range(100, 130))
    assert all(m["error"]["code"] == -32603 for m in answered)
    withdrawn = [m for m in wire.to_client if m.get("method") == "$/cancel_request"]
    assert len(withdrawn) == 30 and len(wire.core.client_requests.pending) == 20
    for i in range(200, 230):  # permission requests past the cap: withdrawn, `cancelled`
        ask = {**PERMISSION, "subject": {"type": "tool_call", "toolCall": {"toolCallId": f"c{i}"}}}
        wire.agent(request(i, "session/request_permission", ask))
    answered = [m for m in wire.to_agent if m.get("id") in range(200, 230)]
    assert answered and all(m["result"] == CANCELLED for m in answered)


def test_no_line_the_proxy_writes_is_longer_than_its_line_limit() -> None:
    wire = Wire(agent_version=2, max_line_bytes=300)
    wire.client(V1_INIT)
    assert len(json.dumps(wire.last_agent())) < 300
    answer_line = json.dumps(result(wire.last_agent()["id"], V2_AGENT_INIT))
    assert len(answer_line) < 450
    wire.agent(answer_line.encode())  # its v1 form is over 300 bytes: an error instead
    [answer] = wire.to_client
    assert answer["id"] == 0 and answer["error"]["code"] == -32603
    assert "over the line limit of 300" in answer["error"]["data"]["details"]


def test_a_v1_update_too_long_for_a_line_leaves_items_out_and_says_so() -> None:
    from acp_toolcalls.bridge import V2ToV1Bridge

    bridge = V2ToV1Bridge(max_message_bytes=20_000, limits=Limits(max_call_bytes=None))
    items = [{"type": "content", "content": text("x" * 100)} for _ in range(1_000)]
    body = {"sessionUpdate": "tool_call_update", "toolCallId": "c", "title": "T", "content": items}
    (message,) = bridge.convert(json.dumps(update(body)).encode()).messages
    from acp_toolcalls import encode

    line = encode(message)
    assert len(line) <= 20_000
    texts = [i["content"]["text"] for i in json.loads(line)["params"]["update"]["content"]]
    assert any("omitted to fit a line" in t for t in texts)


def test_flush_sends_what_waits_for_the_coalescing_deadline() -> None:
    wire = v1_client_v2_agent(coalesce_interval=10.0)
    wire.agent(update({"sessionUpdate": "tool_call_update", "toolCallId": "c", "title": "Read"}))
    chunk = {"sessionUpdate": "tool_call_content_chunk", "toolCallId": "c"}
    wire.agent(update({**chunk, "content": {"type": "content", "content": text("x")}}))
    assert wire.client_updates("tool_call_update") == []
    wire._take(wire.core.flush())
    [sent] = wire.client_updates("tool_call_update")
    assert len(sent["content"]) == 1 and wire.core.next_deadline() is None


def test_client_lines_wait_while_the_agent_answers_initialize() -> None:
    # A client that does not wait for the initialize answer: its session/new must reach the
    # agent only once the versions are known, in the agent's version (here a v2 agent asked
    # in v1 first, then again in v2: the first session/new would have been v1 to a v2 agent).
    wire = Wire()
    wire.client(V1_INIT)
    wire.client(request(1, "session/new", {"cwd": CWD, "mcpServers": []}))
    wire.client({"jsonrpc": "2.0", "method": "session/cancel", "params": {"sessionId": SID}})
    assert [m.get("method") for m in wire.to_agent] == ["initialize"]
    wire.agent(result(wire.last_agent()["id"], V2_AGENT_INIT))  # asked again in v2
    assert [m.get("method") for m in wire.to_agent] == ["initialize", "initialize"]
    wire.agent(result(wire.last_agent()["id"], V2_AGENT_INIT))
    assert wire.core.mode == "converting"
    new = wire.to_agent[2]
    assert new["method"] == "session/new" and new["params"]["cwd"] == CWD  # checked as v2
    assert wire.to_agent[3]["method"] == "session/cancel"
    wire.agent(result(new["id"], {"sessionId": SID}))
    assert wire.last_client() == result(1, {"sessionId": SID})


def test_client_requests_held_during_initialize_are_answered_when_the_agent_goes() -> None:
    wire = Wire()
    wire.client(V1_INIT)
    wire.client(request(1, "session/new", {"cwd": CWD, "mcpServers": []}))
    wire.agent_gone("the agent exited")
    assert {m["id"] for m in wire.to_client if "error" in m} == {0, 1}
