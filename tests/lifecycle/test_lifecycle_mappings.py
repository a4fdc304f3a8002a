"""lifecycle: every lifecycle mapping turns a valid message of one version into a valid one
of the other (checked against both bundled schemas), and says what it lost."""

from __future__ import annotations

from typing import Any

import pytest

from acp_toolcalls.check import validate_message
from acp_toolcalls.lifecycle import (
    NO_V1,
    NO_V2,
    TO_V1,
    TO_V2,
    map_params,
    map_result,
    replays_history,
)
from acp_toolcalls.models import VersionName

CWD = "/home/user/project"
STDIO_V1 = {"name": "fs", "command": "/usr/bin/mcp-fs", "args": ["--root", CWD], "env": []}
HTTP = {"type": "http", "name": "web", "url": "https://example.com/mcp", "headers": []}
SELECT_V1 = {
    "id": "model",
    "name": "Model",
    "category": "model",
    "type": "select",
    "currentValue": "fast",
    "options": [{"value": "fast", "name": "Fast"}, {"value": "smart", "name": "Smart"}],
}
SELECT_V2 = {**{k: v for k, v in SELECT_V1.items() if k != "id"}, "configId": "model"}
TEXT = {"type": "text", "text": "hi"}

# (client method, client params, agent result): for a v1 client and a v2 agent.
V1_TO_V2: list[tuple[str, dict[str, Any], dict[str, Any]]] = [
    (
        "initialize",
        {
            "protocolVersion": 1,
            "clientCapabilities": {"fs": {"readTextFile": True}, "auth": {"terminal": True}},
            "clientInfo": {"name": "zed", "version": "1"},
        },
        {
            "protocolVersion": 2,
            "info": {"name": "a", "version": "2"},
            "capabilities": {"session": {"prompt": {"audio": {}}, "mcp": {"stdio": {}}}},
            "authMethods": [
                {
                    "methodId": "t",
                    "type": "terminal",
                    "name": "Terminal login",
                    "args": ["--login"],
                    "env": [{"name": "MODE", "value": "x"}],
                }
            ],
        },
    ),
    ("authenticate", {"methodId": "t"}, {}),
    ("logout", {}, {}),
    (
        "session/new",
        {"cwd": CWD, "mcpServers": [STDIO_V1, HTTP]},
        {"sessionId": "s", "configOptions": [SELECT_V2]},
    ),
    (
        "session/load",
        {"sessionId": "s", "cwd": CWD, "mcpServers": []},
        {"configOptions": [SELECT_V2]},
    ),
    ("session/resume", {"sessionId": "s", "cwd": CWD}, {}),
    ("session/list", {"cwd": CWD}, {"sessions": [{"sessionId": "s", "cwd": CWD}]}),
    ("session/close", {"sessionId": "s"}, {}),
    (
        "session/set_config_option",
        {"sessionId": "s", "configId": "model", "value": "smart"},
        {"configOptions": [SELECT_V2]},
    ),
]

# The same for a v2 client and a v1 agent.
V2_TO_V1: list[tuple[str, dict[str, Any], dict[str, Any]]] = [
    (
        "initialize",
        {"protocolVersion": 2, "info": {"name": "t", "version": "1"}, "capabilities": {}},
        {
            "protocolVersion": 1,
            "agentCapabilities": {
                "loadSession": True,
                "promptCapabilities": {"image": True, "embeddedContext": True},
                "sessionCapabilities": {"list": {}, "delete": {}},
            },
            "authMethods": [{"id": "agent-login", "name": "Log in"}],
            "agentInfo": {"name": "old", "version": "0.9"},
        },
    ),
    ("auth/login", {"methodId": "agent-login"}, {}),
    ("auth/logout", {}, {}),
    (
        "session/new",
        {"cwd": CWD, "mcpServers": [{**STDIO_V1, "type": "stdio"}, HTTP]},
        {"sessionId": "s", "configOptions": [SELECT_V1]},
    ),
    (
        "session/resume",
        {"sessionId": "s", "cwd": CWD, "replayFrom": {"type": "start"}},
        {"configOptions": [SELECT_V1]},
    ),
    ("session/resume", {"sessionId": "s", "cwd": CWD}, {}),
    ("session/list", {}, {"sessions": [{"sessionId": "s", "cwd": CWD}], "nextCursor": "n"}),
    ("session/delete", {"sessionId": "s"}, {}),
    (
        "session/set_config_option",
        {"sessionId": "s", "configId": "model", "type": "id", "value": "smart"},
        {"configOptions": [SELECT_V1]},
    ),
]


def _valid(method: str, params: Any, protocol: VersionName) -> None:
    message = {"jsonrpc": "2.0", "id": 1, "method": method, "params": params}
    assert validate_message(message, protocol) == [], (method, params)


def _valid_result(method: str, result: Any, protocol: VersionName) -> None:
    message = {"jsonrpc": "2.0", "id": 1, "result": result}
    violations = validate_message(message, protocol, response_method=method)
    assert violations == [], (method, result, violations)


@pytest.mark.parametrize(("method", "params", "result"), V1_TO_V2, ids=[m for m, _, _ in V1_TO_V2])
def test_a_v1_clients_request_and_a_v2_agents_result_map_to_valid_messages(
    method: str, params: dict[str, Any], result: dict[str, Any]
) -> None:
    _valid(method, params, "v1")
    target, mapped = map_params(TO_V2, method, params)
    _valid(target, mapped.value, "v2")
    _valid_result(target, result, "v2")
    back = map_result(TO_V2, method, result)
    _valid_result(method, back.value, "v1")
    for update in back.updates:
        note = {
            "jsonrpc": "2.0",
            "method": "session/update",
            "params": {"sessionId": "s", "update": update},
        }
        assert validate_message(note, "v1") == []


@pytest.mark.parametrize(
    ("method", "params", "result"),
    V2_TO_V1,
    ids=[f"{m}-{i}" for i, (m, _, _) in enumerate(V2_TO_V1)],
)
def test_a_v2_clients_request_and_a_v1_agents_result_map_to_valid_messages(
    method: str, params: dict[str, Any], result: dict[str, Any]
) -> None:
    _valid(method, params, "v2")
    target, mapped = map_params(TO_V1, method, params)
    _valid(target, mapped.value, "v1")
    _valid_result(target, result, "v1")
    back = map_result(TO_V1, method, result)
    _valid_result(method, back.value, "v2")


def test_renamed_methods_and_fields() -> None:
    assert map_params(TO_V2, "authenticate", {"methodId": "t"})[0] == "auth/login"
    assert map_params(TO_V1, "auth/logout", {})[0] == "logout"
    target, mapped = map_params(
        TO_V2, "session/load", {"sessionId": "s", "cwd": CWD, "mcpServers": []}
    )
    assert target == "session/resume" and mapped.value["replayFrom"] == {"type": "start"}
    assert (
        map_params(TO_V1, "session/resume", {"sessionId": "s", "cwd": CWD})[0] == "session/resume"
    )
    result = map_result(TO_V2, "session/new", {"sessionId": "s", "configOptions": [SELECT_V2]})
    assert result.value["configOptions"] == [SELECT_V1]
    back = map_result(TO_V1, "session/new", {"sessionId": "s", "configOptions": [SELECT_V1]})
    assert back.value["configOptions"] == [SELECT_V2]
    init = map_result(TO_V2, "initialize", V1_TO_V2[0][2]).value
    [method] = init["authMethods"]
    assert method == {
        "id": "t",
        "name": "Terminal login",
        "args": ["--login"],
        "env": {"MODE": "x"},
        "type": "terminal",
    }


def test_a_v2_agents_commands_reach_a_v1_client_as_an_update_after_the_response() -> None:
    command = {
        "type": "command",
        "name": "test",
        "description": "Run tests",
        "input": {"type": "text", "hint": "path"},
    }
    mapped = map_result(TO_V2, "session/new", {"sessionId": "s", "availableCommands": [command]})
    assert "availableCommands" not in mapped.value
    assert mapped.updates == (
        {
            "sessionUpdate": "available_commands_update",
            "availableCommands": [
                {"name": "test", "description": "Run tests", "input": {"hint": "path"}}
            ],
        },
    )


@pytest.mark.parametrize(
    ("table", "method", "params", "lost"),
    [
        (
            TO_V2,
            "session/new",
            {"cwd": CWD, "mcpServers": [{**HTTP, "type": "sse"}]},
            "$.mcpServers[0]",
        ),
        (TO_V2, "initialize", {"protocolVersion": 1}, "$.clientInfo"),
        (
            TO_V1,
            "session/new",
            {"cwd": CWD, "mcpServers": [{"type": "_ws", "name": "x"}]},
            "$.mcpServers[0]",
        ),
        (
            TO_V1,
            "session/resume",
            {"sessionId": "s", "cwd": CWD, "replayFrom": {"type": "_cursor"}},
            "$.replayFrom",
        ),
        (TO_V2, "session/close", {"sessionId": "s", "extra": 1}, "$.extra"),
    ],
)
def test_what_a_mapping_drops_is_reported(table: Any, method: str, params: Any, lost: str) -> None:
    _target, mapped = map_params(table, method, params)
    assert lost in [loss.path for loss in mapped.losses]


def test_a_v1_agent_result_without_agent_info_is_given_one() -> None:
    mapped = map_result(TO_V1, "initialize", {"protocolVersion": 1})
    assert mapped.value["info"] == {"name": "unknown", "version": "0"}
    assert [loss.path for loss in mapped.losses] == ["$.agentInfo"]
    _valid_result("initialize", mapped.value, "v2")


def test_the_prompt_params_map_and_its_result_is_the_connections() -> None:
    params = {"sessionId": "s", "prompt": [TEXT, {"type": "_widget", "x": 1}]}
    target, mapped = map_params(TO_V1, "session/prompt", params)
    assert target == "session/prompt" and mapped.value["prompt"] == [TEXT]
    assert [loss.path for loss in mapped.losses] == ["$.prompt[1]"]
    with pytest.raises(ValueError, match="answered by the connection"):
        map_result(TO_V2, "session/prompt", {"messageId": "u"})


def test_methods_without_a_counterpart_say_why() -> None:
    assert "set_config_option" in NO_V2["session/set_mode"]
    assert set(NO_V1) == {"tool_call/cancel", "terminal/cancel"}


@pytest.mark.parametrize(
    ("method", "params", "replays"),
    [
        ("session/load", {"sessionId": "s", "cwd": CWD, "mcpServers": []}, True),
        ("session/resume", {"sessionId": "s", "cwd": CWD, "replayFrom": {"type": "start"}}, True),
        ("session/resume", {"sessionId": "s", "cwd": CWD, "replayFrom": None}, False),
        ("session/resume", {"sessionId": "s", "cwd": CWD}, False),
        ("session/new", {"cwd": CWD, "replayFrom": {"type": "start"}}, False),
        ("session/resume", None, False),
    ],
)
def test_which_requests_replay_the_history(method: str, params: Any, replays: bool) -> None:
    # v2 schema, ResumeSessionRequest.replayFrom: omitted and null mean no replay.
    assert replays_history(method, params) is replays
    expected = "session/load" if replays else "session/resume"
    if method == "session/resume":
        assert map_params(TO_V1, method, params or {})[0] == expected
