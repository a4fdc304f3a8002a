"""Modes and notices of a v2 agent for a v1 editor, through ``acp-toolcalls bridge`` (issue 26,
items 8 and 9), over real subprocesses.

A raw v1 editor (``interop/raw.py``) talks to the bridge, which runs a scripted v2 agent
(``interop/script_agent.py``) that records every line it reads. Each test fails on the bridge
before the issue and passes after.

- Item 8: a v2 agent's config option of category ``mode`` (claude-agent-acp's flat one,
  codex-acp's grouped one) is the v1 editor's session modes in ``session/new`` (and
  ``session/load``); its ``session/set_mode`` is that option's ``session/set_config_option``,
  answered once (``{}``, or the agent's error), the agent's options following as a
  ``config_option_update``; every change of the agent's mode is a ``current_mode_update``.
- Item 9: a ``notice`` reaches a v1 editor that did not advertise ``session.notices`` as agent
  message text of a message of its own, worded as codex-acp words it (D30 as amended); one that
  advertised it gets the ``notice`` as before.

Every message the editor receives is checked against the v1 schema (a response against the
method of the request it answers), and the encode guard checks what the library writes.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from acp_toolcalls.check import validate_message
from acp_toolcalls.models import VersionName
from tests.interop.raw import RawClient
from tests.interop.scripted import SID, ScriptedAgent, answer, text, update
from tests.interop.sessions import bounded

V1_EDITOR: dict[str, Any] = {
    "protocolVersion": 1,
    "clientCapabilities": {"fs": {"readTextFile": True}},
    "clientInfo": {"name": "zed", "version": "0.200"},
}
V2_AGENT = {"protocolVersion": 2, "info": {"name": "agent", "version": "2"}, "capabilities": {}}


def request(request_id: Any, method: str, params: Any) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": request_id, "method": method, "params": params}


def v2_agent(tmp: Path, steps: list[dict[str, Any]]) -> ScriptedAgent:
    """A scripted v2 agent, what it read checked against the v2 schema."""
    return ScriptedAgent(tmp, steps, "v2")


class Editor:
    """A raw v1 editor, checking every message it receives against the v1 schema."""

    def __init__(self, client: RawClient) -> None:
        self.client = client
        self.asked: dict[str, str] = {}
        self.received: list[dict[str, Any]] = []  # all of it, once finished

    @classmethod
    async def start(cls, agent: ScriptedAgent) -> Editor:
        return cls(await RawClient.start("--agent-version", "2", agent=agent.command))

    async def send(self, message: dict[str, Any]) -> None:
        self.asked[json.dumps(message["id"])] = message["method"]
        await self.client.send(message)

    async def answer_to(self, request_id: Any) -> dict[str, Any]:
        return await self.client.answer_to(request_id)

    async def open(self, capabilities: dict[str, Any] | None = None) -> dict[str, Any]:
        init = {**V1_EDITOR}
        if capabilities is not None:
            init["clientCapabilities"] = {**V1_EDITOR["clientCapabilities"], **capabilities}
        await self.send(request(0, "initialize", init))
        assert (await self.answer_to(0))["result"]["protocolVersion"] == 1
        await self.send(request(1, "session/new", {"cwd": "/tmp", "mcpServers": []}))
        result: dict[str, Any] = (await self.answer_to(1))["result"]
        return result

    def updates(self) -> list[dict[str, Any]]:
        """The session updates received, in order (all of them once finished)."""
        received = self.received or self.client.received
        return [m["params"]["update"] for m in received if m.get("method") == "session/update"]

    async def finish(self) -> list[dict[str, Any]]:
        code, err, rest = await self.client.finish()
        received = self.client.received + [json.loads(x) for x in rest.splitlines() if x.strip()]
        for message in received:
            method = None if "method" in message else self.asked.get(json.dumps(message["id"]))
            violations = validate_message(message, "v1", response_method=method)
            assert violations == [], (violations, message)
        assert code == 0, err
        assert "Traceback" not in err and "a bug" not in err, err
        self.received = received
        return received


def setup(result: dict[str, Any]) -> list[dict[str, Any]]:
    """The v2 agent's steps of ``initialize`` and ``session/new`` (its result ``result``)."""
    return [
        {"await": {"method": "initialize"}, "as": "init"},
        answer("init", V2_AGENT),
        {"await": {"method": "session/new"}, "as": "new"},
        answer("new", {"sessionId": SID, **result}),
    ]


# --------------------------------------------------------------------------------------------
# Item 8: modes

MODEL = {
    "configId": "model",
    "name": "Model",
    "category": "model",
    "type": "select",
    "currentValue": "opus",
    "options": [{"value": "opus", "name": "Opus"}, {"value": "sonnet", "name": "Sonnet"}],
}
# claude-agent-acp 0.101.0's mode option, in v2 (session-mode.js, `configOption`)
CLAUDE_MODE = {
    "configId": "mode",
    "name": "Mode",
    "description": "Session permission mode",
    "category": "mode",
    "type": "select",
    "currentValue": "default",
    "options": [
        {"value": "default", "name": "Default", "description": "Ask before edits"},
        {"value": "acceptEdits", "name": "Accept Edits", "description": "Edit without asking"},
        {"value": "plan", "name": "Plan Mode", "description": "Plan, do not act"},
    ],
}


def _with_mode(option: dict[str, Any], current: str) -> list[dict[str, Any]]:
    return [MODEL, {**option, "currentValue": current}]


def test_a_v2_agents_mode_option_is_a_v1_editors_session_modes(tmp_path: Path) -> None:
    invalid = {"code": -32602, "message": "Invalid params", "data": {"value": "yolo"}}
    steps = [
        *setup({"configOptions": [MODEL, CLAUDE_MODE]}),
        {"await": {"method": "session/set_config_option"}, "as": "set"},
        answer("set", {"configOptions": _with_mode(CLAUDE_MODE, "acceptEdits")}),
        update(
            {
                "sessionUpdate": "config_option_update",
                "configOptions": _with_mode(CLAUDE_MODE, "plan"),
            }
        ),
        {"await": {"method": "session/set_config_option"}, "as": "bad"},
        {"send": {"jsonrpc": "2.0", "id": {"$id": "bad"}, "error": invalid}},
        {"await": {"method": "session/set_config_option"}, "as": "option"},
        answer("option", {"configOptions": _with_mode(CLAUDE_MODE, "default")}),
        {"await": {"method": "session/set_config_option"}, "as": "other"},
        answer("other", {"configOptions": _with_mode(CLAUDE_MODE, "plan")}),
    ]
    agent = v2_agent(tmp_path, steps)

    async def scenario() -> tuple[dict[str, Any], list[dict[str, Any]], list[Any]]:
        editor = await Editor.start(agent)
        new = await editor.open()
        answers = []
        await editor.send(
            request(2, "session/set_mode", {"sessionId": SID, "modeId": "acceptEdits"})
        )
        answers.append(await editor.answer_to(2))
        await editor.client.until(
            lambda m: m.get("params", {}).get("update", {}).get("currentModeId") == "plan"
        )
        await editor.send(request(3, "session/set_mode", {"sessionId": SID, "modeId": "yolo"}))
        answers.append(await editor.answer_to(3))
        params = {"sessionId": SID, "configId": "mode", "value": "default"}
        await editor.send(request(4, "session/set_config_option", params))
        answers.append(await editor.answer_to(4))
        # The agent answers a mode of its own choosing: the editor is told which.
        await editor.send(
            request(5, "session/set_mode", {"sessionId": SID, "modeId": "acceptEdits"})
        )
        answers.append(await editor.answer_to(5))
        received = await editor.finish()
        return new, editor.updates(), [answers, received]

    new, updates, (answers, received) = bounded(scenario())
    assert new["modes"] == {
        "currentModeId": "default",
        "availableModes": [
            {"id": "default", "name": "Default", "description": "Ask before edits"},
            {"id": "acceptEdits", "name": "Accept Edits", "description": "Edit without asking"},
            {"id": "plan", "name": "Plan Mode", "description": "Plan, do not act"},
        ],
    }
    assert [o["id"] for o in new["configOptions"]] == ["model", "mode"]  # the options stay
    assert answers[0]["result"] == {}
    assert answers[1]["error"] == invalid  # the agent's error is the editor's
    assert [o["currentValue"] for o in answers[2]["result"]["configOptions"]] == ["opus", "default"]
    assert answers[3]["result"] == {}
    modes = [
        (
            u["sessionUpdate"],
            u.get("currentModeId") or [o["currentValue"] for o in u["configOptions"]],
        )
        for u in updates
    ]
    assert modes == [
        ("config_option_update", ["opus", "acceptEdits"]),  # after set_mode 2
        ("config_option_update", ["opus", "plan"]),  # the agent's own change
        ("current_mode_update", "plan"),
        ("current_mode_update", "default"),  # after set_config_option 4
        ("config_option_update", ["opus", "plan"]),  # after set_mode 5: it chose plan
        ("current_mode_update", "plan"),
    ]
    assert sum(1 for m in received if m.get("id") in (2, 3, 4, 5)) == 4  # one answer each
    sent = [m["params"] for m in agent.requests("session/set_config_option")]
    assert sent == [
        {"sessionId": SID, "configId": "mode", "type": "id", "value": "acceptEdits"},
        {"sessionId": SID, "configId": "mode", "type": "id", "value": "yolo"},
        {"sessionId": SID, "configId": "mode", "type": "id", "value": "default"},
        {"sessionId": SID, "configId": "mode", "type": "id", "value": "acceptEdits"},
    ]


# codex-acp 2.6.0's mode option, in v2 (AgentMode.toConfigOption, with a permission profile:
# grouped values, `group` renamed `groupId`); here under an id of its own, which set_mode names.
CODEX_MODE: dict[str, Any] = {
    "configId": "approval-preset",
    "name": "Mode",
    "description": "Approval and sandboxing preset for the session",
    "category": "mode",
    "type": "select",
    "currentValue": "auto",
    "options": [
        {
            "groupId": "sandbox-modes",
            "name": "Sandbox Modes",
            "options": [
                {"value": "read-only", "name": "Read Only", "description": "Ask for everything"},
                {"value": "auto", "name": "Default", "description": "Edit the workspace"},
            ],
        },
        {
            "groupId": "permission-profiles",
            "name": "Permission Profiles",
            "options": [{"value": "profile:ci", "name": "ci", "_meta": {"x": 1}}],
        },
    ],
}


def test_a_grouped_mode_option_of_any_id_is_flattened_and_set_by_its_id(tmp_path: Path) -> None:
    steps = [
        *setup({"configOptions": [CODEX_MODE]}),
        {"await": {"method": "session/set_config_option"}, "as": "set"},
        answer("set", {"configOptions": [{**CODEX_MODE, "currentValue": "read-only"}]}),
        {"await": {"method": "session/resume"}, "as": "load"},
        answer("load", {"configOptions": [{**CODEX_MODE, "currentValue": "profile:ci"}]}),
    ]
    agent = v2_agent(tmp_path, steps)

    async def scenario() -> tuple[dict[str, Any], Any, dict[str, Any]]:
        editor = await Editor.start(agent)
        new = await editor.open()
        await editor.send(request(2, "session/set_mode", {"sessionId": SID, "modeId": "read-only"}))
        set_mode = (await editor.answer_to(2))["result"]
        load = {"sessionId": SID, "cwd": "/tmp", "mcpServers": []}
        await editor.send(request(3, "session/load", load))
        loaded = (await editor.answer_to(3))["result"]
        await editor.finish()
        return new, set_mode, loaded

    new, set_mode, loaded = bounded(scenario())
    assert new["modes"] == {
        "currentModeId": "auto",
        "availableModes": [
            {"id": "read-only", "name": "Read Only", "description": "Ask for everything"},
            {"id": "auto", "name": "Default", "description": "Edit the workspace"},
            {"id": "profile:ci", "name": "ci", "_meta": {"x": 1}},
        ],
    }
    assert set_mode == {}
    assert loaded["modes"]["currentModeId"] == "profile:ci"
    [sent] = agent.requests("session/set_config_option")
    assert sent["params"]["configId"] == "approval-preset"


def test_set_mode_without_a_mode_option_is_still_method_not_found(tmp_path: Path) -> None:
    agent = v2_agent(tmp_path, setup({"configOptions": [MODEL]}))

    async def scenario() -> tuple[dict[str, Any], dict[str, Any]]:
        editor = await Editor.start(agent)
        new = await editor.open()
        await editor.send(request(2, "session/set_mode", {"sessionId": SID, "modeId": "plan"}))
        refused = await editor.answer_to(2)
        await editor.finish()
        return new, refused

    new, refused = bounded(scenario())
    assert "modes" not in new
    assert refused["error"]["code"] == -32601
    assert [m.get("method") for m in agent.read()] == ["initialize", "session/new"]


# --------------------------------------------------------------------------------------------
# Item 9: notices


def _turn(*updates: dict[str, Any]) -> list[dict[str, Any]]:
    done = {"sessionUpdate": "state_update", "state": "idle", "stopReason": "end_turn"}
    return [
        {"await": {"method": "session/prompt"}, "as": "prompt"},
        answer("prompt", {"messageId": "u1"}),
        *(update(body) for body in updates),
        update(done),
    ]


def _said(value: str) -> dict[str, Any]:
    return {"sessionUpdate": "agent_message_chunk", "messageId": "a1", "content": text(value)}


RATE_LIMIT = {
    "sessionUpdate": "notice",
    "severity": "warning",
    "title": "Rate limited",
    "description": "Retrying in 5 s.",
}
INDEXING = {"sessionUpdate": "notice", "severity": "info", "title": "Indexing", "_meta": {"k": 1}}


def _prompt_turn(tmp_path: Path, capabilities: dict[str, Any] | None) -> list[dict[str, Any]]:
    steps = [*setup({}), *_turn(_said("Looking."), RATE_LIMIT, _said(" Done."), INDEXING)]
    agent = v2_agent(tmp_path, steps)

    async def scenario() -> list[dict[str, Any]]:
        editor = await Editor.start(agent)
        await editor.open(capabilities)
        prompt = {"sessionId": SID, "prompt": [text("hello")]}
        await editor.send(request(2, "session/prompt", prompt))
        assert (await editor.answer_to(2))["result"] == {"stopReason": "end_turn"}
        await editor.finish()
        return editor.updates()

    updates = bounded(scenario())
    assert [m.get("method") for m in agent.read()] == [
        "initialize",
        "session/new",
        "session/prompt",
    ]
    return updates


def test_a_notice_is_agent_message_text_for_a_v1_editor_without_notices(tmp_path: Path) -> None:
    updates = _prompt_turn(tmp_path, None)
    assert updates == [
        _said("Looking."),
        {
            "sessionUpdate": "agent_message_chunk",
            "messageId": "acp-toolcalls-notice-1",
            "content": text("Warning: Rate limited\n\nRetrying in 5 s.\n\n"),
        },
        _said(" Done."),
        {
            "sessionUpdate": "agent_message_chunk",
            "messageId": "acp-toolcalls-notice-2",
            "content": text("Info: Indexing\n\n"),
            "_meta": {"k": 1},
        },
    ]


def test_a_v1_editor_that_advertised_notices_gets_them_as_notices(tmp_path: Path) -> None:
    updates = _prompt_turn(tmp_path, {"session": {"notices": {}}})
    assert updates == [_said("Looking."), RATE_LIMIT, _said(" Done."), INDEXING]


# --------------------------------------------------------------------------------------------
# The same in process: every line the connection writes, to either side, schema-checked (and
# by the encode guard)


def test_in_process_modes_and_notices_are_valid_on_both_sides() -> None:
    from acp_toolcalls.proxy import ConnectionCore

    core = ConnectionCore(agent_version=2)
    asked: dict[str, str] = {}  # id -> method of the client's requests
    to_client: list[dict[str, Any]] = []
    to_agent: list[dict[str, Any]] = []

    def take(lines: list[bytes], side: str, sink: list[dict[str, Any]]) -> None:
        version: VersionName = "v1" if side == "client" else "v2"
        for line in lines:
            message = json.loads(line)
            answers = "method" not in message and side == "client"
            method = asked.get(json.dumps(message["id"])) if answers else None
            assert validate_message(message, version, response_method=method) == [], message
            sink.append(message)

    def client(message: dict[str, Any]) -> None:
        if "method" in message and "id" in message:
            asked[json.dumps(message["id"])] = message["method"]
        out = core.from_client(json.dumps(message).encode(), 0.0)
        take(out.to_client, "client", to_client)
        take(out.to_agent, "agent", to_agent)

    def agent(message: dict[str, Any]) -> None:
        out = core.from_agent(json.dumps(message).encode(), 0.0)
        take(out.to_client, "client", to_client)
        take(out.to_agent, "agent", to_agent)

    def reply(value: Any) -> dict[str, Any]:
        return {"jsonrpc": "2.0", "id": to_agent[-1]["id"], "result": value}

    client(request(0, "initialize", V1_EDITOR))
    agent(reply(V2_AGENT))
    client(request(1, "session/new", {"cwd": "/tmp", "mcpServers": []}))
    agent(reply({"sessionId": SID, "configOptions": [MODEL, CODEX_MODE]}))
    assert to_client[-1]["result"]["modes"]["currentModeId"] == "auto"
    client(request(2, "session/set_mode", {"sessionId": SID, "modeId": "read-only"}))
    assert to_agent[-1]["params"]["configId"] == "approval-preset"
    agent(reply({"configOptions": [MODEL, {**CODEX_MODE, "currentValue": "auto"}]}))
    assert [m.get("result", m.get("params", {}).get("update")) for m in to_client[-3:]] == [
        {},
        {
            "sessionUpdate": "config_option_update",
            "configOptions": [
                {**{k: v for k, v in MODEL.items() if k != "configId"}, "id": "model"},
                {
                    **{k: v for k, v in CODEX_MODE.items() if k not in ("configId", "options")},
                    "id": "approval-preset",
                    "currentValue": "auto",
                    "options": [
                        {("group" if k == "groupId" else k): v for k, v in group.items()}
                        for group in CODEX_MODE["options"]
                    ],
                },
            ],
        },
        {"sessionUpdate": "current_mode_update", "currentModeId": "auto"},  # not read-only
    ]
    agent(update(RATE_LIMIT)["send"])
    assert to_client[-1]["params"]["update"]["content"]["text"].startswith("Warning: ")
