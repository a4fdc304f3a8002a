"""``acp-toolcalls convert`` of whole sessions (issue 16): both sides, every message the proxy
knows how to map, through the real command line.

The recorded sessions in ``tests/data`` (made with ``tests/data/record.py``: the example agent
and the official SDK's clients through ``acp-toolcalls bridge --log``) and the example logs in
``examples/`` convert, each side that is in the other version, to logs that ``validate``
finds no schema problem in, and ``replay --json`` of the converted log equals ``replay --json``
of the original modulo the documented losses (``V1_LOSSES``; docs/conversion.md, "Converting
whole sessions").
"""

from __future__ import annotations

import base64
import json
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from acp_toolcalls.bridge import V2ToV1Bridge
from acp_toolcalls.sessions import SessionConverter
from acp_toolcalls.sessions import _state as session_convert

ROOT = Path(__file__).resolve().parents[2]
DATA = ROOT / "tests" / "data"
EXAMPLES = ROOT / "examples"
CLI = [sys.executable, "-m", "acp_toolcalls"]
S = "sess_1"

# (log, --side, --to): every recorded conversation, into the version it was not held in.
RECORDED: list[tuple[Path, str | None, str]] = [
    (DATA / "v1-client-v2-agent.jsonl", "client", "v2"),
    (DATA / "v1-client-v2-agent.jsonl", "agent", "v1"),
    (DATA / "v1-client-v2-agent-cancel.jsonl", "client", "v2"),
    (DATA / "v1-client-v2-agent-cancel.jsonl", "agent", "v1"),
    (DATA / "v2-client-v1-agent.jsonl", "client", "v1"),
    (DATA / "v2-client-v1-agent.jsonl", "agent", "v2"),
    (DATA / "v2-client-v1-agent-cancel.jsonl", "client", "v1"),
    (DATA / "v2-client-v1-agent-cancel.jsonl", "agent", "v2"),
    (EXAMPLES / "session-v1.jsonl", None, "v2"),
    (EXAMPLES / "session-v2.jsonl", None, "v1"),
]

V1_LOSSES = {
    "status": "v1 has no `cancelled` or `paused` status: a cancelled call is `failed`, a paused "
    "one `in_progress`",
    "clear": "v1 cannot clear a field (`null` means unchanged): a call's cleared rawInput, "
    "rawOutput, title or name keeps its last value",
    "empty": "content or locations cleared with `null` are `[]` in v1 (the same display: none)",
    "diff": "a v2 diff (changes and a patch) is a text item: a line per change, then the patch "
    "in a fenced `diff` block",
    "terminal": "an agent-owned terminal is a text transcript in the call that shows it "
    "(command, output, exit code); a v1 log holds no terminal state",
    "capabilities": "v1 has no per-call capabilities (`tool_call/cancel`)",
}
"""What ``replay`` shows differently after v2 -> v1, and may differ in
``test_a_recorded_session_replays_like_the_original``. v1 -> v2 loses nothing ``replay``
shows: those replays are equal."""

ALLOWED_LINT = {
    "prompt-in-tool-call": "a v1 permission request shows its prompt as its `toolCall`'s title "
    "(the v1 convention, D28): toward v2 the bridge sends the call's fields that differ from "
    "what the client holds, that title among them (V1ToV2Bridge, D37)"
}
"""Lint (not schema) findings a v1 -> v2 conversion may have."""


# --- running the command --------------------------------------------------------------------


def cli(*args: str, stdin: bytes | None = None) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run([*CLI, *args], input=stdin, capture_output=True, timeout=120)


def lines(messages: list[Any]) -> bytes:
    return b"".join(json.dumps(m).encode() + b"\n" for m in messages)


def convert(to: str, *args: str, stdin: bytes | None = None) -> tuple[int, list[Any], list[str]]:
    done = cli("convert", "--to", to, *args, stdin=stdin)
    out = [json.loads(line) for line in done.stdout.splitlines()]
    return done.returncode, out, done.stderr.decode().splitlines()


def validated(messages: list[Any], tmp_path: Path) -> dict[str, Any]:
    """``validate --json`` of a log (the protocol found by itself)."""
    path = tmp_path / "converted.jsonl"
    path.write_bytes(lines(messages))
    document: dict[str, Any] = json.loads(cli("validate", "--json", str(path)).stdout)
    return document


def assert_clean(messages: list[Any], to: str, tmp_path: Path) -> None:
    """``validate`` finds nothing in the log (but ``ALLOWED_LINT`` toward v2)."""
    document = validated(messages, tmp_path)
    assert document["protocol"] == to, document["protocol_source"]
    allowed = ALLOWED_LINT if to == "v2" else {}
    assert [f for f in document["findings"] if f["code"] not in allowed] == []


def replay(path: Path, *args: str) -> dict[str, Any]:
    done = cli("replay", "--json", *args, str(path))
    assert done.returncode == 0, done.stderr
    document: dict[str, Any] = json.loads(done.stdout)
    return document


def updates(messages: list[Any], kind: str | None = None) -> list[dict[str, Any]]:
    found = [m["params"]["update"] for m in messages if m.get("method") == "session/update"]
    return [u for u in found if kind is None or u["sessionUpdate"] == kind]


def note(update: dict[str, Any], session: str = S) -> dict[str, Any]:
    return {
        "jsonrpc": "2.0",
        "method": "session/update",
        "params": {"sessionId": session, "update": update},
    }


def request(request_id: Any, method: str, params: Any) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": request_id, "method": method, "params": params}


def result(request_id: Any, value: Any) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": request_id, "result": value}


def error(request_id: Any, code: int, message: str) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": request_id, "error": {"code": code, "message": message}}


TEXT = {"type": "text", "text": "Water the plants"}
OPTIONS = [
    {"optionId": "yes", "name": "Allow", "kind": "allow_once"},
    {"optionId": "no", "name": "Reject", "kind": "reject_once"},
]
SELECT_V1 = {
    "id": "model",
    "name": "Model",
    "category": "model",
    "type": "select",
    "currentValue": "fast",
    "options": [{"value": "fast", "name": "Fast"}, {"value": "smart", "name": "Smart"}],
}
MODES = {
    "currentModeId": "ask",
    "availableModes": [{"id": "ask", "name": "Ask"}, {"id": "code", "name": "Code"}],
}


# --- the recorded sessions ------------------------------------------------------------------


def _case_id(case: tuple[Path, str | None, str]) -> str:
    path, side, to = case
    return f"{path.stem}-{side or 'whole'}-to-{to}"


def _converted(case: tuple[Path, str | None, str], tmp_path: Path, *mode: str) -> Path:
    path, side, to = case
    side_args = ["--side", side] if side else []
    done = cli("convert", "--to", to, *side_args, *mode, str(path))
    assert done.returncode == 0, done.stderr
    assert all(re.match(r"line \d+: \$", e) for e in done.stderr.decode().splitlines())
    out = tmp_path / f"{path.stem}-{to}.jsonl"
    out.write_bytes(done.stdout)
    return out


@pytest.mark.parametrize("case", RECORDED, ids=_case_id)
def test_a_recorded_session_converts_to_a_log_without_schema_findings(
    case: tuple[Path, str | None, str], tmp_path: Path
) -> None:
    _path, _side, to = case
    modes = [[], ["--stateless"]] + ([["--coalesce"]] if to == "v1" else [])
    for mode in modes:
        out = _converted(case, tmp_path, *mode)
        done = cli("validate", "--json", str(out))
        document = json.loads(done.stdout)
        assert document["protocol"] == to, document["protocol_source"]
        assert document["messages"] > 10
        findings = document["findings"]
        assert [f for f in findings if f["kind"] != "lint"] == [], (mode, findings)
        assert {f["code"] for f in findings} <= (set(ALLOWED_LINT) if to == "v2" else set())


def _v1_view(calls: list[dict[str, Any]], terminals: dict[str, Any]) -> list[dict[str, Any]]:
    """Calls of a ``replay --json`` document as a v1 log can show them (``V1_LOSSES``)."""
    statuses = {"cancelled": "failed", "paused": "in_progress"}
    shown = []
    for call in calls:
        call = {k: v for k, v in call.items() if k != "capabilities"}  # "capabilities"
        if call.get("status") in statuses:
            call["status"] = statuses[call["status"]]  # "status"
        for key in ("content", "locations"):
            if key in call and call[key] is None:
                call[key] = []  # "empty"
        call["content"] = [_item(item, terminals) for item in call.get("content", [])]
        shown.append(call)
    return shown


_DIFF_TEXT = re.compile(r"\A(?:[^\n]+\n)+\n(`{3,})diff\n(.*)\n\1\Z", re.DOTALL)
_TRANSCRIPT = re.compile(
    r"\A(`{3,})\n\$ ([^\n]*)\n(.*?)\[exit code (-?\d+)\]\n\1(?:\nWorking directory: ([^\n]*))?\Z",
    re.DOTALL,
)


def _item(item: dict[str, Any], terminals: dict[str, Any]) -> Any:
    if item.get("type") == "diff":  # "diff"
        return ("diff", item["patch"]["text"].strip())
    if item.get("type") == "terminal":  # "terminal"
        terminal = terminals[item["terminalId"]]
        output = base64.b64decode(terminal["output"]["data"]).decode().replace("\r\n", "\n")
        code = terminal["exitStatus"]["exitCode"]
        return ("terminal", terminal["command"], output.strip(), code, terminal.get("cwd"))
    text = item.get("content", {}).get("text") if item.get("type") == "content" else None
    if isinstance(text, str):
        if match := _DIFF_TEXT.match(text):
            return ("diff", match.group(2).strip())
        if match := _TRANSCRIPT.match(text):
            command, output, code, cwd = match.group(2, 3, 4, 5)
            return ("terminal", command, output.strip(), int(code), cwd)
    return item


def _cleared(original: list[dict[str, Any]], converted: list[dict[str, Any]]) -> None:
    """A field the v2 agent cleared keeps its last value in v1 (``V1_LOSSES["clear"]``)."""
    for before, after in zip(original, converted, strict=True):
        for key in ("rawInput", "rawOutput", "title", "name"):
            if key in before and before[key] is None:
                del before[key]
                after.pop(key, None)


@pytest.mark.parametrize("case", RECORDED, ids=_case_id)
def test_a_recorded_session_replays_like_the_original(
    case: tuple[Path, str | None, str], tmp_path: Path
) -> None:
    path, side, to = case
    original = replay(path, *(["--side", side] if side else []))
    for mode in [[], ["--coalesce"]] if to == "v1" else [[]]:
        converted = replay(_converted(case, tmp_path, *mode))
        if to == "v2":
            assert converted == original  # v1 -> v2 loses nothing replay shows
            continue
        assert original["sessions"].keys() == converted["sessions"].keys()
        for session_id, before in original["sessions"].items():
            after = converted["sessions"][session_id]
            assert after["terminals"] == []  # "terminal": v1 holds no terminal state
            terminals = {t["terminalId"]: t for t in before["terminals"]}
            shown_before = _v1_view(before["toolCalls"], terminals)
            shown_after = _v1_view(after["toolCalls"], {})
            _cleared(shown_before, shown_after)
            assert shown_after == shown_before


# --- one test per item of the issue -----------------------------------------------------------


def test_initialize_is_converted_both_ways(tmp_path: Path) -> None:
    v1_init = [
        request(0, "initialize", {
            "protocolVersion": 1,
            "clientCapabilities": {"fs": {"readTextFile": True}, "terminal": True},
            "clientInfo": {"name": "zed", "version": "1"},
        }),
        result(0, {
            "protocolVersion": 1,
            "agentCapabilities": {"loadSession": True, "promptCapabilities": {"image": True}},
            "authMethods": [],
            "agentInfo": {"name": "goose", "version": "1.0"},
        }),
    ]  # fmt: skip
    code, out, err = convert("v2", stdin=lines(v1_init))
    assert code == 0
    params, answer = out[0]["params"], out[1]["result"]
    assert params["protocolVersion"] == answer["protocolVersion"] == 2
    assert params["info"] == {"name": "zed", "version": "1"} and "clientCapabilities" not in params
    assert answer["info"] == {"name": "goose", "version": "1.0"}
    assert answer["capabilities"]["session"]["prompt"] == {"image": {}}
    assert any("clientCapabilities.fs" in e for e in err)  # v2 has no client file system
    assert_clean(out, "v2", tmp_path)

    v2_init = [
        request(0, "initialize", {"protocolVersion": 2, "info": {"name": "e", "version": "2"}}),
        result(0, {"protocolVersion": 2, "info": {"name": "a", "version": "3"},
                   "capabilities": {"session": {"mcp": {"stdio": {}}}}}),
    ]  # fmt: skip
    code, out, err = convert("v1", stdin=lines(v2_init))
    assert code == 0 and err == []
    assert out[0]["params"]["protocolVersion"] == out[1]["result"]["protocolVersion"] == 1
    assert out[0]["params"]["clientInfo"] == {"name": "e", "version": "2"}
    assert out[1]["result"]["agentInfo"] == {"name": "a", "version": "3"}
    assert out[1]["result"]["agentCapabilities"]["loadSession"] is True
    assert_clean(out, "v1", tmp_path)


def test_auth_methods_config_options_and_modes_are_converted_toward_v2(tmp_path: Path) -> None:
    log = [
        request(0, "initialize",
                {"protocolVersion": 1, "clientInfo": {"name": "e", "version": "1"}}),
        result(0, {
            "protocolVersion": 1,
            "agentInfo": {"name": "a", "version": "1"},
            "authMethods": [{"id": "login", "name": "Log in", "description": "In a browser"}],
        }),
        request(1, "authenticate", {"methodId": "login"}),
        result(1, {}),
        request(2, "session/new", {"cwd": "/w", "mcpServers": []}),
        result(2, {"sessionId": S, "configOptions": [SELECT_V1], "modes": MODES}),
        request(3, "session/set_config_option",
                {"sessionId": S, "configId": "model", "value": "smart"}),
        result(3, {"configOptions": [{**SELECT_V1, "currentValue": "smart"}]}),
        request(4, "session/set_mode", {"sessionId": S, "modeId": "code"}),
        result(4, {}),
        note({"sessionUpdate": "current_mode_update", "currentModeId": "ask"}),
    ]  # fmt: skip
    code, out, err = convert("v2", stdin=lines(log))
    assert code == 0, err
    assert out[1]["result"]["authMethods"] == [
        {"methodId": "login", "name": "Log in", "description": "In a browser", "type": "agent"}
    ]
    assert out[2]["method"] == "auth/login" and out[2]["params"] == {"methodId": "login"}
    options = out[5]["result"]["configOptions"]
    assert [o["configId"] for o in options] == ["model", "mode"]  # the modes as an option
    assert options[1]["category"] == "mode" and options[1]["currentValue"] == "ask"
    assert out[6]["params"] == {"sessionId": S, "configId": "model", "type": "id", "value": "smart"}
    assert out[7]["result"]["configOptions"][0]["currentValue"] == "smart"
    assert out[8]["method"] == "session/set_config_option"  # session/set_mode
    assert out[8]["params"] == {"sessionId": S, "configId": "mode", "type": "id", "value": "code"}
    chosen = out[9]["result"]["configOptions"]
    assert [(o["configId"], o["currentValue"]) for o in chosen] == [
        ("model", "smart"),
        ("mode", "code"),
    ]
    (changed,) = updates(out)  # current_mode_update
    assert changed["sessionUpdate"] == "config_option_update"
    assert changed["configOptions"][-1]["currentValue"] == "ask"
    assert_clean(out, "v2", tmp_path)


def test_config_options_auth_methods_and_commands_are_converted_toward_v1(
    tmp_path: Path,
) -> None:
    command = {"type": "command", "name": "test", "description": "Run tests",
               "input": {"type": "text", "hint": "path"}}  # fmt: skip
    select_v2 = {**{k: v for k, v in SELECT_V1.items() if k != "id"}, "configId": "model"}
    log = [
        request(0, "initialize", {"protocolVersion": 2, "info": {"name": "e", "version": "2"}}),
        result(0, {
            "protocolVersion": 2, "info": {"name": "a", "version": "2"}, "capabilities": {},
            "authMethods": [{"methodId": "login", "type": "agent", "name": "Log in"}],
        }),
        request(1, "auth/login", {"methodId": "login"}),
        result(1, {}),
        request(2, "session/new", {"cwd": "/w"}),
        result(2, {"sessionId": S, "configOptions": [select_v2], "availableCommands": [command]}),
        request(3, "session/set_config_option",
                {"sessionId": S, "configId": "model", "type": "id", "value": "smart"}),
        result(3, {"configOptions": [{**select_v2, "currentValue": "smart"}]}),
    ]  # fmt: skip
    code, out, err = convert("v1", stdin=lines(log))
    assert code == 0 and err == []
    assert out[1]["result"]["authMethods"] == [{"id": "login", "name": "Log in"}]
    assert out[2]["method"] == "authenticate"
    assert out[4]["params"] == {"cwd": "/w", "mcpServers": []}
    assert out[5]["result"] == {"sessionId": S, "configOptions": [SELECT_V1]}
    (commands,) = updates(out)  # v1 carries commands as an update after the response
    assert out[6]["method"] == "session/update" and out[6]["params"]["sessionId"] == S
    assert commands == {
        "sessionUpdate": "available_commands_update",
        "availableCommands": [
            {"name": "test", "description": "Run tests", "input": {"hint": "path"}}
        ],
    }
    assert out[7]["params"] == {"sessionId": S, "configId": "model", "value": "smart"}
    assert out[8]["result"]["configOptions"][0]["id"] == "model"
    assert_clean(out, "v1", tmp_path)


def _v1_turns() -> list[Any]:
    return [
        request(1, "session/new", {"cwd": "/w", "mcpServers": []}),
        result(1, {"sessionId": S}),
        request(2, "session/prompt", {"sessionId": S, "prompt": [TEXT]}),
        note({"sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": "OK"}}),
        note({"sessionUpdate": "tool_call", "toolCallId": "c1", "title": "Edit", "kind": "edit"}),
        request(2, "session/request_permission",  # the agent's id 2: the prompt's id too
                {"sessionId": S, "toolCall": {"toolCallId": "c1"}, "options": OPTIONS}),
        result(2, {"outcome": {"outcome": "selected", "optionId": "yes"}}),
        note({"sessionUpdate": "tool_call_update", "toolCallId": "c1", "status": "completed"}),
        result(2, {"stopReason": "end_turn"}),
        request(3, "session/prompt", {"sessionId": S, "prompt": [TEXT]}),
        error(3, -32000, "the model is overloaded"),
        request(4, "session/prompt", {"sessionId": "unknown", "prompt": [TEXT]}),
        error(4, -32602, "no such session"),
    ]  # fmt: skip


def test_prompt_turns_are_converted_toward_v2(tmp_path: Path) -> None:
    code, out, _err = convert("v2", stdin=lines(_v1_turns()))
    assert code == 0
    answers = [(m["id"], m.get("result"), m.get("error")) for m in out if "method" not in m]
    assert answers == [
        (1, {"sessionId": S}, None),
        (2, {"messageId": "acp-toolcalls-user-1"}, None),  # the prompt, acknowledged at once
        (2, {"outcome": {"outcome": "selected", "optionId": "yes"}}, None),
        (3, {"messageId": "acp-toolcalls-user-2"}, None),
        (4, None, {"code": -32602, "message": "no such session"}),  # refused, never inserted
    ]
    states = [(u.get("state"), u.get("stopReason")) for u in updates(out, "state_update")]
    assert states == [
        ("running", None),
        ("requires_action", None),  # around the permission request
        ("running", None),
        ("idle", "end_turn"),  # the v1 response ends the turn
        ("running", None),
        ("idle", "error"),
    ]
    (echo, _) = updates(out, "user_message")
    assert echo["content"] == [TEXT]
    failed = updates(out, "state_update")[-1]
    assert failed["error"] == {"code": -32000, "message": "the model is overloaded"}
    (chunk,) = updates(out, "agent_message_chunk")
    assert isinstance(chunk["messageId"], str)  # v2 requires one
    assert_clean(out, "v2", tmp_path)


def _v2_turns() -> list[Any]:
    said = {"type": "text", "text": "Done. "}
    return [
        request(1, "session/new", {"cwd": "/w"}),
        result(1, {"sessionId": S}),
        request(2, "session/prompt", {"sessionId": S, "prompt": [TEXT]}),
        note({"sessionUpdate": "state_update", "state": "running"}),
        result(2, {"messageId": "u1"}),
        note({"sessionUpdate": "user_message", "messageId": "u1", "content": [TEXT]}),
        note({"sessionUpdate": "agent_message", "messageId": "m1", "content": [said, said]}),
        note({"sessionUpdate": "agent_message", "messageId": "m1", "content": [said]}),
        note({"sessionUpdate": "agent_message_chunk", "messageId": "m2", "content": said}),
        note({"sessionUpdate": "tool_call_update", "toolCallId": "c1", "title": "Read",
              "status": "completed"}),
        note({"sessionUpdate": "state_update", "state": "idle", "stopReason": "end_turn"}),
        request(3, "session/prompt", {"sessionId": S, "prompt": [TEXT]}),
        result(3, {"messageId": "u2"}),
        note({"sessionUpdate": "state_update", "state": "idle", "stopReason": "error",
              "error": {"code": -32000, "message": "overloaded"}}),
        request(4, "session/prompt", {"sessionId": S, "prompt": [TEXT]}),
        note({"sessionUpdate": "state_update", "state": "idle", "stopReason": "_paused"}),
        result(4, {"messageId": "u3"}),  # logged after the idle that ends its turn
    ]  # fmt: skip


def test_prompt_turns_and_agent_messages_are_converted_toward_v1(tmp_path: Path) -> None:
    code, out, err = convert("v1", stdin=lines(_v2_turns()))
    assert code == 0
    answers = [(m["id"], m.get("result"), m.get("error")) for m in out if "method" not in m]
    assert answers == [
        (1, {"sessionId": S}, None),
        (2, {"stopReason": "end_turn"}, None),  # at the idle state_update, no {messageId}
        (3, None, {"code": -32000, "message": "overloaded"}),
        (4, {"stopReason": "end_turn"}, None),
    ]
    assert out[-1]["id"] == 4  # not before its acknowledgement
    said = [(u["sessionUpdate"], u["messageId"]) for u in updates(out) if "messageId" in u]
    assert said == [  # the upsert as chunks, once; the user's echo left out
        ("agent_message_chunk", "m1"),
        ("agent_message_chunk", "m1"),
        ("agent_message_chunk", "m2"),
    ]
    assert not updates(out, "state_update")
    assert any("replaces content a v1 client already has" in e for e in err)
    assert any("'_paused' has no v1 form: sent `end_turn`" in e for e in err)
    assert_clean(out, "v1", tmp_path)


def test_the_wrong_direction_exits_2_with_one_line() -> None:
    for path, to in ((EXAMPLES / "session-v2.jsonl", "v2"), (EXAMPLES / "session-v1.jsonl", "v1")):
        done = cli("convert", "--to", to, str(path))
        assert done.returncode == 2 and done.stdout == b""
        (said,) = done.stderr.decode().splitlines()
        assert f"is ACP {to} already" in said and "initialize request on line 1" in said
    # Without initialize: the first message of one version only says it.
    stream = [note({"sessionUpdate": "tool_call", "toolCallId": "c", "title": "T"})]
    done = cli("convert", "--to", "v1", stdin=lines(stream * 3))
    assert done.returncode == 2 and done.stdout == b""
    (said,) = done.stderr.decode().splitlines()
    assert "is ACP v1 already" in said and "'tool_call' exists only in v1" in said
    # A bridge log's side: its records say the version.
    log = DATA / "v1-client-v2-agent.jsonl"
    done = cli("convert", "--to", "v2", "--side", "agent", str(log))
    assert done.returncode == 2 and done.stdout == b""
    assert len(done.stderr.splitlines()) == 1 and b"agent side" in done.stderr


def test_a_bridge_log_needs_a_side_and_converts_each_side(tmp_path: Path) -> None:
    log = DATA / "v1-client-v2-agent.jsonl"
    done = cli("convert", "--to", "v2", str(log))
    assert done.returncode == 2 and done.stdout == b""
    (said,) = done.stderr.decode().splitlines()
    assert "--side client or --side agent" in said
    records = [json.loads(line) for line in log.read_text().splitlines()]
    for side, to, asked, sent_by in (
        ("client", "v2", "client->proxy", "proxy->client"),
        ("agent", "v1", "proxy->agent", "agent->proxy"),
    ):
        code, out, _err = convert(to, "--side", side, str(log))
        assert code == 0
        prompts = [m["id"] for m in out if m.get("method") == "session/prompt"]
        logged = [
            r["message"]["id"]
            for r in records
            if r["direction"] == asked and r["message"].get("method") == "session/prompt"
        ]
        assert prompts == logged  # that side's ids: the proxy gives the agent its own
        permissions = [m["id"] for m in out if m.get("method") == "session/request_permission"]
        assert permissions == [
            r["message"]["id"]
            for r in records
            if r["direction"] == sent_by
            and r["message"].get("method") == "session/request_permission"
        ]
        assert_clean(out, to, tmp_path)


def test_requests_without_a_counterpart_are_left_out_with_their_answers(tmp_path: Path) -> None:
    code, out, err = convert("v2", str(EXAMPLES / "session-v1.jsonl"))
    assert code == 0
    assert not [m for m in out if str(m.get("method", "")).startswith("terminal/")]
    assert sum("terminal/" in e and "left out" in e for e in err) == 3
    source = [json.loads(line) for line in (EXAMPLES / "session-v1.jsonl").read_text().splitlines()]
    assert len(out) < len(source) + 3  # the answers went with their requests
    assert_clean(out, "v2", tmp_path)
    log = [
        request(5, "tool_call/cancel", {"sessionId": S, "toolCallId": "c1"}),
        result(5, {}),
        request(6, "session/set_mode", {"sessionId": S, "modeId": "x"}),
    ]
    code, out, err = convert("v1", stdin=lines(log[:2]))
    assert code == 0 and out == []
    (said,) = err
    assert said.startswith("line 1: $.method: tool_call/cancel has no v1 counterpart")
    code, out, err = convert("v2", stdin=lines([log[2], result(6, {})]))
    assert code == 0 and out == [] and "session/set_mode has no v2 counterpart" in err[0]


def test_answers_are_matched_per_direction(tmp_path: Path) -> None:
    # The client's prompt and the agent's permission request share id 2 (_v1_turns): each
    # answer goes to the request of the other side, the most recent first.
    code, out, _err = convert("v2", stdin=lines(_v1_turns()))
    assert code == 0
    asked = next(m for m in out if m.get("method") == "session/request_permission")
    answer = out[out.index(asked) + 1]
    assert answer == result(2, {"outcome": {"outcome": "selected", "optionId": "yes"}})
    assert_clean(out, "v2", tmp_path)


def test_session_load_and_resume_are_converted(tmp_path: Path) -> None:
    v1 = [
        request(1, "session/load", {"sessionId": S, "cwd": "/w", "mcpServers": []}),
        note({"sessionUpdate": "user_message_chunk", "content": TEXT}),
        note({"sessionUpdate": "tool_call", "toolCallId": "c1", "title": "T",
              "status": "completed"}),
        result(1, {"modes": MODES}),
    ]  # fmt: skip
    code, out, _err = convert("v2", stdin=lines(v1))
    assert code == 0
    assert out[0]["method"] == "session/resume"
    assert out[0]["params"]["replayFrom"] == {"type": "start"}
    assert out[-1]["result"]["configOptions"][0]["configId"] == "mode"
    assert_clean(out, "v2", tmp_path)
    v2 = [
        request(1, "session/resume",
                {"sessionId": S, "cwd": "/w", "replayFrom": {"type": "start"}}),
        note({"sessionUpdate": "tool_call_update", "toolCallId": "c1", "title": "T",
              "status": "completed"}),
        result(1, {}),
        request(2, "session/resume", {"sessionId": S, "cwd": "/w"}),
        result(2, {}),
    ]  # fmt: skip
    code, out, _err = convert("v1", stdin=lines(v2))
    assert code == 0
    assert [m.get("method") for m in out if "method" in m] == [
        "session/load",
        "session/update",
        "session/resume",
    ]
    assert updates(out)[0]["sessionUpdate"] == "tool_call"  # a first sight after the replay
    assert_clean(out, "v1", tmp_path)


def test_a_resume_whose_replay_from_is_null_replays_nothing(tmp_path: Path) -> None:
    # v2 schema: "Omitted and `null` are equivalent and mean the Agent should resume without
    # replaying". The client keeps what it has: a later update of a known call is a patch.
    v2 = [
        note({"sessionUpdate": "tool_call_update", "toolCallId": "c1", "title": "T",
              "status": "in_progress"}),
        request(1, "session/resume", {"sessionId": S, "cwd": "/w", "replayFrom": None}),
        result(1, {}),
        note({"sessionUpdate": "tool_call_update", "toolCallId": "c1", "status": "completed"}),
    ]  # fmt: skip
    code, out, _err = convert("v1", stdin=lines(v2))
    assert code == 0
    assert [u["sessionUpdate"] for u in updates(out)] == ["tool_call", "tool_call_update"]
    assert [m.get("method") for m in out if "method" in m][1] == "session/resume"
    assert_clean(out, "v1", tmp_path)


def test_pending_requests_are_bounded(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(session_convert, "MAX_PENDING", 3)
    converter = SessionConverter("v1", V2ToV1Bridge())
    losses = []
    for n in range(5):
        converted = converter.convert(request(n, "session/new", {"cwd": "/w"}))
        losses += [loss.reason for loss in converted.losses]
    assert len(losses) == 2 and "more than 3 requests wait for an answer" in losses[0]
    late = converter.convert(result(0, {"sessionId": S}))
    assert [json.loads(json.dumps(m)) for m in late.messages] == [result(0, {"sessionId": S})]
    assert "passed through unconverted" in late.losses.losses[0].reason
    mapped = converter.convert(result(4, {"sessionId": S}))
    assert not mapped.losses


def test_the_method_senders_are_the_schemas() -> None:
    # `methods.SENDERS` writes out the schemas' x-method/x-side, so that convert reads a log
    # without loading a schema validator; both must agree.
    from acp_toolcalls.check import method_table
    from acp_toolcalls.lifecycle import SENDERS

    senders = {"agent": "client", "client": "agent", "protocol": "either"}
    for version in (1, 2):
        table = method_table("v1" if version == 1 else "v2")
        assert {m: senders[spec.side] for m, spec in table.items()} == {
            m: spec.sender for m, spec in SENDERS.items() if version in spec.versions
        }


def test_convert_starts_without_the_schema_validator_or_rich() -> None:
    script = (
        "import sys\nfrom acp_toolcalls.cli import main\n"
        f"main(['convert', '--to', 'v1', {str(EXAMPLES / 'session-v2.jsonl')!r}])\n"
        "print(sorted({m.split('.')[0] for m in sys.modules} & {'jsonschema', 'rich'}), "
        "file=sys.stderr)"
    )
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, timeout=60)
    assert done.returncode == 0
    assert done.stderr.decode().splitlines()[-1] == "[]"


@pytest.mark.parametrize("case", RECORDED, ids=_case_id)
def test_lines_read_for_a_few_keys_convert_as_read_whole(
    case: tuple[Path, str | None, str],
) -> None:
    # An agent's plain session/update line goes to the bridge as it is (read for a few keys
    # only); the same message given as JSON values takes the full reading: the same output.
    from acp_toolcalls import encode
    from acp_toolcalls.bridge import V1ToV2Bridge

    path, side, to = case
    wanted = {
        "client": ("client->proxy", "proxy->client"),
        "agent": ("proxy->agent", "agent->proxy"),
    }
    messages = []
    for line in path.read_text().splitlines():
        value = json.loads(line)
        if "direction" in value:
            if side is None or value["direction"] not in wanted[side]:
                continue
            value = value["message"]
        messages.append(value)
    outputs = []
    for as_bytes in (True, False):
        bridge = V2ToV1Bridge() if to == "v1" else V1ToV2Bridge()
        converter = SessionConverter("v1" if to == "v1" else "v2", bridge)
        out: list[bytes] = []
        for message in messages:
            data = json.dumps(message).encode() if as_bytes else message
            converted = converter.convert(data)
            out += [encode(m) for m in converted.messages]
            out += [str(loss).encode() for loss in converted.losses]
        outputs.append(out)
    assert outputs[0] == outputs[1]


def test_a_prompt_shown_on_a_call_is_not_left_as_its_title_toward_v1(tmp_path: Path) -> None:
    """Issue 26 item 13: a log that holds the agent's side only (no answer) converted to v1
    and replayed keeps the call's own title and content, not the prompt's ("Approve file
    edit?") forever: the call's next update gives them back. With the answer in the log, the
    answer does (as the bridge does)."""
    ask = request(
        5,
        "session/request_permission",
        {
            "sessionId": S,
            "title": "Approve file edit?",
            "description": "Writes a.py",
            "subject": {"type": "tool_call", "toolCall": {"toolCallId": "e"}},
            "options": [
                {"optionId": "a", "name": "Allow", "kind": "allow_once"},
                {"optionId": "r", "name": "Reject", "kind": "reject_once"},
            ],
        },
    )
    created = note(
        {
            "sessionUpdate": "tool_call_update",
            "toolCallId": "e",
            "title": "Edit a.py",
            "kind": "edit",
            "status": "pending",
        }
    )
    done = note({"sessionUpdate": "tool_call_update", "toolCallId": "e", "status": "completed"})
    code, out, _err = convert("v1", stdin=lines([created, ask, done]))
    assert code in (0, 1), out
    path = tmp_path / "v1.jsonl"
    path.write_bytes(lines(out))
    [call] = replay(path, "--protocol", "v1")["sessions"][S]["toolCalls"]
    assert (call["title"], call["status"], call.get("content")) == ("Edit a.py", "completed", [])
