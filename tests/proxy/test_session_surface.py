"""The session surface of ``acp-toolcalls bridge`` (issue 16), over real subprocesses.

A raw editor (``interop/raw.py``) talks to the bridge, which runs a scripted agent
(``interop/script_agent.py``) that records every line it reads. Each test is one item of the
issue: it fails on the bridge before the issue and passes after.

- An ``initialize`` whose ``protocolVersion`` cannot be read is answered ``-32602`` naming the
  field (``-32022`` for version 0); no line of one version reaches a side of the other.
- An agent that answers ``initialize`` in the other version than it was asked in is asked
  again in its own, so the client's capabilities and info reach it in the shape it reads; one
  that refuses a version is asked in the other.
- codex-acp's ``env_var`` auth methods reach a v2 editor; a v1 agent's session modes are a
  v2 editor's config option of category ``mode``: setting it is ``session/set_mode``, and the
  agent's mode and option changes are ``config_option_update``s holding all of them.
- ``session/load`` from a v1 editor replays the whole session, the agent's replies and tool
  calls included, even the ones the editor was sent live in this connection.
- A v2 prompt for a session the v1 agent refuses is answered with the agent's error (never
  acknowledged first); the agent's end of the session is one line on stderr.

Every message the editor receives is checked against its version's schema (responses against
the method of the request they answer).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, cast

import pytest

from acp_toolcalls.check import validate_message
from acp_toolcalls.models import VersionName
from tests.interop.raw import RawClient
from tests.interop.scripted import SID, answer, text, update
from tests.interop.scripted import ScriptedAgent as Agent
from tests.interop.sessions import bounded

V1_EDITOR = {"protocolVersion": 1, "clientCapabilities": {"fs": {"readTextFile": True}}}
V1_EDITOR_INFO = {"name": "zed", "version": "0.200"}
V2_EDITOR = {"protocolVersion": 2, "info": {"name": "toad", "version": "1"}, "capabilities": {}}
V1_AGENT = {"protocolVersion": 1, "agentInfo": {"name": "codex-acp", "version": "0.9"}}
V2_AGENT = {"protocolVersion": 2, "info": {"name": "agent", "version": "2"}, "capabilities": {}}


def request(request_id: Any, method: str, params: Any) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": request_id, "method": method, "params": params}


class Editor:
    """The raw editor, checking every message it receives against its version's schema."""

    def __init__(self, client: RawClient, version: int) -> None:
        self.client = client
        self.version = version
        self.asked: dict[str, str] = {}

    @classmethod
    async def start(cls, version: int, agent: Agent, *options: str) -> Editor:
        return cls(await RawClient.start(*options, agent=agent.command), version)

    async def send(self, message: dict[str, Any]) -> None:
        if "method" in message and "id" in message:
            self.asked[json.dumps(message["id"])] = message["method"]
        await self.client.send(message)

    async def answer_to(self, request_id: Any) -> dict[str, Any]:
        return await self.client.answer_to(request_id)

    async def update(self, tag: str) -> dict[str, Any]:
        message = await self.client.until(
            lambda m: (
                m.get("method") == "session/update"
                and m["params"]["update"].get("sessionUpdate") == tag
            )
        )
        body: dict[str, Any] = message["params"]["update"]
        return body

    async def finish(self, *, close: bool = True) -> tuple[int, str, list[dict[str, Any]]]:
        code, err, rest = await self.client.finish(close=close)
        received = self.client.received + [json.loads(x) for x in rest.splitlines() if x.strip()]
        for message in received:
            method = None if "method" in message else self.asked.get(json.dumps(message["id"]))
            protocol = cast(VersionName, f"v{self.version}")
            violations = validate_message(message, protocol, response_method=method)
            assert violations == [], (violations, message)
        assert "Traceback" not in err and "a bug" not in err, err
        return code, err, received


def setup(agent_version: int, result: dict[str, Any] | None = None) -> list[dict[str, Any]]:
    """The agent's steps of ``initialize`` and ``session/new`` (its result ``result``)."""
    init = V1_AGENT if agent_version == 1 else V2_AGENT
    return [
        {"await": {"method": "initialize"}, "as": "init"},
        answer("init", init),
        {"await": {"method": "session/new"}, "as": "new"},
        answer("new", {"sessionId": SID, **(result or {})}),
    ]


async def open_session(editor: Editor) -> dict[str, Any]:
    init = V1_EDITOR | {"clientInfo": V1_EDITOR_INFO} if editor.version == 1 else V2_EDITOR
    await editor.send(request(0, "initialize", init))
    assert (await editor.answer_to(0))["result"]["protocolVersion"] == editor.version
    params: dict[str, Any] = {"cwd": "/tmp"} | ({"mcpServers": []} if editor.version == 1 else {})
    await editor.send(request(1, "session/new", params))
    new = await editor.answer_to(1)
    assert new["result"]["sessionId"] == SID, new
    result: dict[str, Any] = new["result"]
    return result


# --------------------------------------------------------------------------------------------
# initialize


@pytest.mark.parametrize(
    ("params", "path"),
    [
        ({"protocolVersion": "1", "clientCapabilities": {}}, "$.params.protocolVersion"),
        ({"clientCapabilities": {}}, "$.params.protocolVersion"),
        ({"protocolVersion": None}, "$.params.protocolVersion"),
        (None, "$.params"),
    ],
    ids=["string", "missing", "null", "no-params"],
)
def test_an_initialize_the_proxy_cannot_read_is_answered_invalid_params_naming_the_field(
    tmp_path: Path, params: Any, path: str
) -> None:
    agent = Agent(tmp_path, setup(2))

    async def scenario() -> tuple[list[dict[str, Any]], str]:
        editor = await Editor.start(1, agent, "--agent-version", "2")
        await editor.send(request(0, "initialize", params))
        refused = await editor.answer_to(0)
        assert refused["error"]["code"] == -32602, refused
        assert refused["error"]["data"]["path"] == path
        # The editor may try again, and then speaks v1 to the v2 agent through the proxy.
        await editor.send(request(5, "initialize", V1_EDITOR))
        accepted = await editor.answer_to(5)
        assert accepted["result"]["protocolVersion"] == 1
        assert "agentCapabilities" in accepted["result"] and "info" not in accepted["result"]
        _code, err, received = await editor.finish()
        return received, err

    received, err = bounded(scenario())
    assert path in err
    # Nothing of the agent's v2 reached the v1 editor.
    assert all(m.get("result", {}).get("protocolVersion") != 2 for m in received)
    [asked] = agent.requests("initialize")
    assert asked["params"]["protocolVersion"] == 2  # the agent was asked once, in its version


def test_protocol_version_0_is_unsupported_and_a_newer_one_is_spoken_to_in_v2(
    tmp_path: Path,
) -> None:
    agent = Agent(tmp_path, setup(1))

    async def scenario() -> None:
        editor = await Editor.start(2, agent, "--agent-version", "1")
        await editor.send(request(0, "initialize", {**V2_EDITOR, "protocolVersion": 0}))
        refused = await editor.answer_to(0)
        assert refused["error"]["code"] == -32022
        assert refused["error"]["data"] == {"requested": 0, "supported": [1, 2]}
        await editor.send(request(1, "initialize", {**V2_EDITOR, "protocolVersion": 7}))
        accepted = await editor.answer_to(1)
        assert accepted["result"]["protocolVersion"] == 2
        assert accepted["result"]["info"]["name"] == "codex-acp"  # from the v1 agent
        await editor.finish()

    bounded(scenario())


@pytest.mark.parametrize("mode", ["answers-v1", "refuses-v2"])
def test_a_v1_agent_asked_in_v2_gets_the_v1_editors_own_initialize(
    tmp_path: Path, mode: str
) -> None:
    """`--agent-version 2` in front of a v1-only agent: whether it answers v1 or refuses v2,
    it is asked again in v1 with the editor's capabilities and info."""
    first = (
        answer("init", V1_AGENT)
        if mode == "answers-v1"
        else {
            "send": {
                "jsonrpc": "2.0",
                "id": {"$id": "init"},
                "error": {"code": -32602, "message": "unknown protocol version 2"},
            }
        }
    )
    steps = [
        {"await": {"method": "initialize"}, "as": "init"},
        first,
        {"await": {"method": "initialize"}, "as": "again"},
        answer("again", V1_AGENT),
        {"await": {"method": "session/new"}, "as": "new"},
        answer("new", {"sessionId": SID}),
    ]
    agent = Agent(tmp_path, steps)

    async def scenario() -> None:
        editor = await Editor.start(1, agent, "--agent-version", "2")
        await open_session(editor)
        await editor.finish()

    bounded(scenario())
    asked, again = agent.requests("initialize")
    assert asked["params"]["protocolVersion"] == 2
    assert again["params"] == {**V1_EDITOR, "clientInfo": V1_EDITOR_INFO}


def test_in_auto_mode_a_v1_agent_gets_a_v2_editors_capabilities_in_v1(tmp_path: Path) -> None:
    steps = [
        {"await": {"method": "initialize"}, "as": "init"},
        answer("init", V1_AGENT),  # asked in the editor's v2, it answers v1
        {"await": {"method": "initialize"}, "as": "again"},
        answer("again", V1_AGENT),
        {"await": {"method": "session/new"}, "as": "new"},
        answer("new", {"sessionId": SID}),
    ]
    agent = Agent(tmp_path, steps)

    async def scenario() -> None:
        editor = await Editor.start(2, agent)  # auto
        await open_session(editor)
        await editor.finish()

    bounded(scenario())
    asked, again = agent.requests("initialize")
    assert asked["params"] == V2_EDITOR  # asked as the editor asked
    assert again["params"]["protocolVersion"] == 1
    assert again["params"]["clientInfo"] == V2_EDITOR["info"]
    caps = again["params"]["clientCapabilities"]
    assert caps["fs"] == {"readTextFile": False, "writeTextFile": False} and not caps["terminal"]
    assert validate_message(again, "v1") == []


# --------------------------------------------------------------------------------------------
# Auth methods, modes


ENV_VAR = {
    "id": "openai-api-key",
    "name": "OpenAI API key",
    "type": "env_var",
    "description": "Use an API key",
    "vars": [{"name": "OPENAI_API_KEY", "label": "API key", "secret": True}],
    "link": "https://platform.openai.com/api-keys",
}


def test_codex_env_var_auth_methods_reach_a_v2_editor(tmp_path: Path) -> None:
    init = {**V1_AGENT, "authMethods": [{"id": "chatgpt", "name": "ChatGPT"}, ENV_VAR]}
    steps = [{"await": {"method": "initialize"}, "as": "init"}, answer("init", init)]
    agent = Agent(tmp_path, steps)

    async def scenario() -> dict[str, Any]:
        editor = await Editor.start(2, agent, "--agent-version", "1")
        await editor.send(request(0, "initialize", V2_EDITOR))
        result: dict[str, Any] = (await editor.answer_to(0))["result"]
        await editor.finish()
        return result

    result = bounded(scenario())
    env = {k: v for k, v in ENV_VAR.items() if k != "id"}
    assert result["authMethods"] == [
        {"methodId": "chatgpt", "name": "ChatGPT", "type": "agent"},
        {"methodId": "openai-api-key", **env},
    ]


MODES: dict[str, Any] = {
    "currentModeId": "default",
    "availableModes": [
        {"id": "default", "name": "Default", "description": "Ask before edits"},
        {"id": "acceptEdits", "name": "Accept Edits"},
        {"id": "plan", "name": "Plan Mode"},
    ],
}
MODEL = {
    "id": "model",
    "name": "Model",
    "category": "model",
    "type": "select",
    "currentValue": "opus",
    "options": [{"value": "opus", "name": "Opus"}, {"value": "sonnet", "name": "Sonnet"}],
}


def _mode_of(options: list[dict[str, Any]]) -> dict[str, Any]:
    [mode] = [o for o in options if o.get("category") == "mode"]
    return mode


def test_a_v1_agents_modes_are_a_v2_editors_mode_config_option(tmp_path: Path) -> None:
    steps = [
        *setup(1, {"modes": MODES, "configOptions": [MODEL]}),
        {"await": {"method": "session/set_mode"}, "as": "set"},
        answer("set", {}),
        update({"sessionUpdate": "current_mode_update", "currentModeId": "plan"}),
        {"await": {"method": "session/set_config_option"}, "as": "model"},
        answer("model", {"configOptions": [{**MODEL, "currentValue": "sonnet"}]}),
        update(
            {
                "sessionUpdate": "config_option_update",
                "configOptions": [{**MODEL, "currentValue": "opus"}],
            }
        ),
    ]
    agent = Agent(tmp_path, steps)

    async def scenario() -> None:
        editor = await Editor.start(2, agent, "--agent-version", "1")
        new = await open_session(editor)
        options = new["configOptions"]
        assert [o["configId"] for o in options] == ["model", "mode"]
        assert _mode_of(options) == {
            "configId": "mode",
            "name": "Mode",
            "category": "mode",
            "type": "select",
            "currentValue": "default",
            "options": [
                {"value": "default", "name": "Default", "description": "Ask before edits"},
                {"value": "acceptEdits", "name": "Accept Edits"},
                {"value": "plan", "name": "Plan Mode"},
            ],
        }
        params = {"sessionId": SID, "configId": "mode", "type": "id", "value": "acceptEdits"}
        await editor.send(request(2, "session/set_config_option", params))
        set_mode = (await editor.answer_to(2))["result"]["configOptions"]
        assert [o["configId"] for o in set_mode] == ["model", "mode"]
        assert _mode_of(set_mode)["currentValue"] == "acceptEdits"
        changed = await editor.update("config_option_update")  # the agent's mode change
        assert _mode_of(changed["configOptions"])["currentValue"] == "plan"
        assert [o["configId"] for o in changed["configOptions"]] == ["model", "mode"]
        params = {"sessionId": SID, "configId": "model", "type": "id", "value": "sonnet"}
        await editor.send(request(3, "session/set_config_option", params))
        model = (await editor.answer_to(3))["result"]["configOptions"]
        assert [(o["configId"], o["currentValue"]) for o in model] == [
            ("model", "sonnet"),
            ("mode", "plan"),
        ]
        again = await editor.update("config_option_update")  # the agent's own options change
        assert [(o["configId"], o["currentValue"]) for o in again["configOptions"]] == [
            ("model", "opus"),
            ("mode", "plan"),
        ]
        await editor.finish()

    bounded(scenario())
    [set_mode] = agent.requests("session/set_mode")
    assert set_mode["params"] == {"sessionId": SID, "modeId": "acceptEdits"}
    [model] = agent.requests("session/set_config_option")
    assert model["params"] == {"sessionId": SID, "configId": "model", "value": "sonnet"}


def test_an_agent_with_its_own_mode_option_is_not_given_a_second_one(tmp_path: Path) -> None:
    own = {**MODEL, "id": "mode", "name": "Mode", "category": "mode", "currentValue": "default"}
    own["options"] = [{"value": m["id"], "name": m["name"]} for m in MODES["availableModes"]]
    agent = Agent(tmp_path, setup(1, {"modes": MODES, "configOptions": [own]}))

    async def scenario() -> dict[str, Any]:
        editor = await Editor.start(2, agent, "--agent-version", "1")
        new = await open_session(editor)
        await editor.finish()
        return new

    new = bounded(scenario())
    assert [o["configId"] for o in new["configOptions"]] == ["mode"]


# --------------------------------------------------------------------------------------------
# session/load from a v1 editor


def test_a_v1_editors_load_replays_the_agents_replies_it_was_sent_live(tmp_path: Path) -> None:
    said = {"sessionUpdate": "agent_message_chunk", "messageId": "a1", "content": text("Hi!")}
    call = {"sessionUpdate": "tool_call_update", "toolCallId": "c1", "title": "Read a.py"}
    done = {"sessionUpdate": "state_update", "state": "idle", "stopReason": "end_turn"}
    steps = [
        *setup(2),
        {"await": {"method": "session/prompt"}, "as": "prompt"},
        answer("prompt", {"messageId": "u1"}),
        update({"sessionUpdate": "user_message", "messageId": "u1", "content": [text("hello")]}),
        update(said),
        update({**call, "kind": "read", "status": "completed"}),
        update(done),
        {"await": {"method": "session/resume"}, "as": "load"},
        update({"sessionUpdate": "user_message", "messageId": "u1", "content": [text("hello")]}),
        update({"sessionUpdate": "agent_message", "messageId": "a1", "content": [text("Hi!")]}),
        update({**call, "kind": "read", "status": "completed"}),
        update({"sessionUpdate": "state_update", "state": "idle"}),
        answer("load", {}),
    ]
    agent = Agent(tmp_path, steps)

    async def scenario() -> list[dict[str, Any]]:
        editor = await Editor.start(1, agent, "--agent-version", "2")
        await open_session(editor)
        prompt = {"sessionId": SID, "prompt": [text("hello")]}
        await editor.send(request(2, "session/prompt", prompt))
        assert (await editor.answer_to(2))["result"] == {"stopReason": "end_turn"}
        editor.client.received.clear()
        load = {"sessionId": SID, "cwd": "/tmp", "mcpServers": []}
        await editor.send(request(3, "session/load", load))
        await editor.answer_to(3)
        replay = [
            m["params"]["update"]
            for m in editor.client.received
            if m.get("method") == "session/update"
        ]
        await editor.finish()
        return replay

    replay = bounded(scenario())
    assert [(u["sessionUpdate"], u.get("content")) for u in replay if "content" in u][:2] == [
        ("user_message_chunk", text("hello")),
        ("agent_message_chunk", text("Hi!")),
    ]
    [tool] = [u for u in replay if u.get("toolCallId") == "c1"]
    assert tool["sessionUpdate"] == "tool_call" and tool["title"] == "Read a.py"


# --------------------------------------------------------------------------------------------
# Prompts for unknown sessions, the agent's end


def test_a_v2_prompt_for_a_session_the_v1_agent_refuses_gets_the_error_only(
    tmp_path: Path,
) -> None:
    refusal = {"code": -32002, "message": "Resource not found: session unknown-1"}
    steps = [
        *setup(1),
        {"await": {"method": "session/prompt"}, "as": "prompt"},
        {"send": {"jsonrpc": "2.0", "id": {"$id": "prompt"}, "error": refusal}},
        {"await": {"method": "session/prompt"}, "as": "known"},
        update({"sessionUpdate": "agent_message_chunk", "content": text("ok")}),
        answer("known", {"stopReason": "end_turn"}),
    ]
    agent = Agent(tmp_path, steps)

    async def scenario() -> list[dict[str, Any]]:
        editor = await Editor.start(2, agent, "--agent-version", "1")
        await open_session(editor)
        await editor.send(
            request(2, "session/prompt", {"sessionId": "unknown-1", "prompt": [text("hi")]})
        )
        refused = await editor.answer_to(2)
        assert refused == {"jsonrpc": "2.0", "id": 2, "error": refusal}
        await editor.send(request(3, "session/prompt", {"sessionId": SID, "prompt": [text("x")]}))
        assert "messageId" in (await editor.answer_to(3))["result"]  # a known one: at once
        assert (await editor.update("state_update"))["state"] == "running"
        await editor.finish()
        return editor.client.received

    received = bounded(scenario())
    unknown = [m for m in received if m.get("params", {}).get("sessionId") == "unknown-1"]
    assert unknown == []  # no echo, no `running`, no idle for a prompt that was never inserted


def test_the_agents_end_is_one_line_on_stderr(tmp_path: Path) -> None:
    agent = Agent(tmp_path, [*setup(2), {"raw": "Traceback (most recent call last):"}])

    async def scenario() -> tuple[int, str]:
        editor = await Editor.start(1, agent, "--agent-version", "2")
        await open_session(editor)
        code, err, _ = await editor.finish(close=False)  # the agent ends the session
        return code, err

    code, err = bounded(scenario())
    assert code == 1
    lines = err.splitlines()
    assert len(lines) == 1, lines
    assert lines[0].startswith("acp-toolcalls bridge: agent line 3: ")
    assert "not JSON-RPC" in lines[0]
