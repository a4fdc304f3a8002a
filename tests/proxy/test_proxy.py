"""``acp-toolcalls bridge`` end to end: real clients and agents, real subprocesses, real stdio.

- The official Python SDK's v1 client drives ``examples/agent.py`` negotiated at v2 (the SDK's
  experimental v2 agent connection) through the proxy: approve, and cancel while a permission
  request waits. Every message the client receives parses with the SDK's v1 models and
  validates against the v1 schema; every message the agent receives validates against v2
  (read from ``--log``); what the client shows equals what the agent meant, modulo the
  documented v1 losses (``interop.sessions.V1_LOSSES``).
- The reverse: the SDK's experimental v2 client and the TypeScript SDK's v2 client (Node.js)
  drive the same agent negotiated at v1.
- ``tests/interop/fake_agent.py`` misbehaves on purpose: it exits, crashes, writes garbage,
  asks for client-owned ``fs/*``/``terminal/*`` methods, writes a line over the limit.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any, cast

import pytest

from acp_toolcalls.check import validate_message
from acp_toolcalls.cli import main as cli_main
from acp_toolcalls.models import VersionName
from tests.interop.raw import RawClient, bridged
from tests.interop.sessions import (
    CALLS,
    NEW_NOTES,
    OLD_NOTES,
    PROMPT,
    TIMEOUT,
    Run,
    as_stored,
    assert_v1_shows_v2,
    bounded,
    example_client,
    fold_v1,
    prepared,
    sdk_v1_session,
    sdk_v2_session,
    store_view,
)
from tests.interop.ts_client import run_ts_v2_client

FAKE_AGENT = Path(__file__).resolve().parents[1] / "interop" / "fake_agent.py"


def read_log(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def check_side(records: list[dict[str, Any]], side: str, version: int) -> int:
    """Every message of one side of a ``--log`` validates against that side's schema."""
    directions = {
        "client": ("client->proxy", "proxy->client"),
        "agent": ("agent->proxy", "proxy->agent"),
    }
    sent_by = {"client": "client->proxy", "agent": "proxy->agent"}[side]
    asked: dict[str, str] = {}
    checked = 0
    for record in records:
        if record["direction"] not in directions[side]:
            continue
        assert record["protocol"] == version, record
        message = record["message"]
        key = (record["direction"] == sent_by, json.dumps(message.get("id")))
        if "method" in message and "id" in message:
            asked[json.dumps(key)] = message["method"]
        answered = None
        if "method" not in message:
            answered = asked.get(json.dumps((not key[0], key[1])))
        protocol = cast(VersionName, f"v{version}")
        assert validate_message(message, protocol, response_method=answered) == [], message
        checked += 1
    return checked


# --------------------------------------------------------------------------------------------
# v1 client (official SDK) -> proxy -> v2 agent (official SDK, experimental v2)


@pytest.fixture(scope="module")
def direct_v2(tmp_path_factory: pytest.TempPathFactory) -> Run:
    """The same turn, the agent at v2 with a v2 client and no proxy: what the agent meant."""
    cwd = prepared(tmp_path_factory.mktemp("direct") / "work")
    return bounded(example_client(cwd, 2, "--approve"))


@pytest.fixture(scope="module")
def v1_through(tmp_path_factory: pytest.TempPathFactory) -> tuple[Run, list[dict[str, Any]]]:
    base = tmp_path_factory.mktemp("v1-through")
    log = base / "traffic.jsonl"
    agent = bridged("--agent-version", "2", "--log", str(log))
    run = bounded(sdk_v1_session(prepared(base / "work"), "approve", agent=agent))
    return run, read_log(log)


def test_a_v1_sdk_client_runs_a_turn_with_a_v2_agent(
    v1_through: tuple[Run, list[dict[str, Any]]],
) -> None:
    run, records = v1_through
    assert run.stop_reason == "end_turn"
    assert (run.cwd / "notes.txt").read_text(encoding="utf-8") == NEW_NOTES
    folded = fold_v1(run)
    assert list(folded) == CALLS
    assert [folded[c]["status"] for c in CALLS] == ["completed", "completed", "failed"]
    assert as_stored(folded) == store_view(run)  # the SDK's models and our store agree
    # The agent really spoke v2: chunks, terminal updates and state updates on its side.
    tags = {
        r["message"]["params"]["update"]["sessionUpdate"]
        for r in records
        if r["direction"] == "agent->proxy" and r["message"].get("method") == "session/update"
    }
    assert {"tool_call_content_chunk", "terminal_output_chunk", "state_update"} <= tags
    assert "tool_call" not in tags
    # The agent's streamed message reaches the v1 client chunk by chunk, under its id.
    said = [u for u in run.callbacks if getattr(u, "session_update", "") == "agent_message_chunk"]
    assert len(said) > 2 and {u.message_id for u in said} == {"msg-agent-1"}
    text = "".join(u.content.text for u in said)
    assert text.startswith("added a line to notes.txt; the script exited 0;")


def test_every_message_each_side_receives_validates(
    v1_through: tuple[Run, list[dict[str, Any]]],
) -> None:
    run, records = v1_through
    assert check_side(records, "client", 1) > 10
    assert check_side(records, "agent", 2) > 10
    for message in run.received():
        if message.get("method") == "session/update":
            update = message["params"]["update"]["sessionUpdate"]
            assert update not in ("state_update", "tool_call_content_chunk", "terminal_update")


def test_the_v1_client_shows_what_the_v2_agent_meant(
    v1_through: tuple[Run, list[dict[str, Any]]], direct_v2: Run
) -> None:
    assert_v1_shows_v2(v1_through[0], direct_v2)


def test_the_log_replays_and_validates_per_side(
    v1_through: tuple[Run, list[dict[str, Any]]],
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    run, records = v1_through
    log = tmp_path / "traffic.jsonl"
    log.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    assert cli_main(["replay", "--json", "--side", "client", str(log)]) == 0
    client_view = json.loads(capsys.readouterr().out)["sessions"][run.session_id]
    assert client_view == run.document
    assert cli_main(["replay", "--json", "--side", "agent", str(log)]) == 0
    agent_view = json.loads(capsys.readouterr().out)["sessions"][run.session_id]
    assert [c["status"] for c in agent_view["toolCalls"]] == ["completed", "completed", "failed"]
    assert agent_view["terminals"]  # the v2 side kept the terminal
    assert cli_main(["validate", str(log)]) == 0, capsys.readouterr()


def test_cancel_while_a_v1_client_is_asked_for_permission(tmp_path: Path) -> None:
    cwd = prepared(tmp_path / "work")
    log = tmp_path / "traffic.jsonl"
    agent = bridged("--agent-version", "2", "--log", str(log))
    run = bounded(sdk_v1_session(cwd, "cancel", agent=agent))
    assert run.stop_reason == "cancelled"
    assert [(c["toolCallId"], c["status"]) for c in run.document["toolCalls"]] == [
        ("edit", "failed")  # V1_LOSSES["cancelled"]
    ]
    assert (cwd / "notes.txt").read_text(encoding="utf-8") == OLD_NOTES
    records = read_log(log)
    to_agent = [r["message"] for r in records if r["direction"] == "proxy->agent"]
    assert any(m.get("method") == "session/cancel" for m in to_agent)
    check_side(records, "client", 1)
    check_side(records, "agent", 2)


# --------------------------------------------------------------------------------------------
# v2 clients -> proxy -> v1 agent


def test_a_v2_sdk_client_runs_a_turn_with_a_v1_agent(tmp_path: Path) -> None:
    cwd = prepared(tmp_path / "work")
    log = tmp_path / "traffic.jsonl"
    run = bounded(
        sdk_v2_session(cwd, "approve", agent=bridged("--agent-version", "1", "--log", str(log)))
    )
    assert run.stop_reason == "end_turn"
    calls = run.calls()
    assert list(calls) == CALLS
    assert [calls[c]["status"] for c in CALLS] == ["completed", "completed", "failed"]
    assert (cwd / "notes.txt").read_text(encoding="utf-8") == NEW_NOTES
    # The v1 agent's terminal and diff reach v2 as text (what v1 could carry).
    transcript = calls["run"]["content"][0]["content"]["text"]
    assert "step 3/3" in transcript and "[exit code 0]" in transcript
    states = [u["state"] for u in run.updates("state_update")]
    assert states == ["running", "requires_action", "running", "idle"]
    records = read_log(log)
    assert check_side(records, "client", 2) > 10
    assert check_side(records, "agent", 1) > 10
    to_agent = [r["message"] for r in records if r["direction"] == "proxy->agent"]
    init = next(m for m in to_agent if m.get("method") == "initialize")
    assert init["params"]["clientCapabilities"]["fs"] == {
        "readTextFile": False,
        "writeTextFile": False,
    }


def test_cancel_while_a_v2_sdk_client_is_asked_for_permission(tmp_path: Path) -> None:
    cwd = prepared(tmp_path / "work")
    run = bounded(sdk_v2_session(cwd, "cancel", agent=bridged("--agent-version", "1")))
    assert run.stop_reason == "cancelled"
    assert (cwd / "notes.txt").read_text(encoding="utf-8") == OLD_NOTES
    [ask] = [m for m in run.received() if m.get("method") == "session/request_permission"]
    withdrawn = [m for m in run.received() if m.get("method") == "$/cancel_request"]
    assert [m["params"]["requestId"] for m in withdrawn] == [ask["id"]]


@pytest.mark.parametrize("mode", ["approve", "cancel"])
def test_the_typescript_sdks_v2_client_works_with_a_v1_agent(tmp_path: Path, mode: str) -> None:
    cwd = prepared(tmp_path / "work")
    run = run_ts_v2_client(
        list(bridged("--agent-version", "1")), cwd, PROMPT, mode=mode, timeout=TIMEOUT
    )
    assert run.errors == []
    assert run.stop_reason == ("end_turn" if mode == "approve" else "cancelled")
    calls = run.tool_calls()
    if mode == "approve":
        assert [calls[c]["status"] for c in CALLS] == ["completed", "completed", "failed"]
        assert (cwd / "notes.txt").read_text(encoding="utf-8") == NEW_NOTES
    else:
        assert list(calls) == ["edit"] and calls["edit"]["status"] == "failed"
        assert (cwd / "notes.txt").read_text(encoding="utf-8") == OLD_NOTES
    for message, answered in run.received_with_methods():
        assert validate_message(message, "v2", response_method=answered) == [], message


# --------------------------------------------------------------------------------------------
# Agents that misbehave, and the client going away


def _fake(mode: str, version: int = 1) -> tuple[str, ...]:
    return (sys.executable, str(FAKE_AGENT), mode, str(version))


V2_INIT = {
    "jsonrpc": "2.0",
    "id": 0,
    "method": "initialize",
    "params": {"protocolVersion": 2, "info": {"name": "raw", "version": "0"}},
}
V1_INIT = {
    "jsonrpc": "2.0",
    "id": 0,
    "method": "initialize",
    "params": {"protocolVersion": 1, "clientCapabilities": {}},
}


async def _v2_session(client: RawClient) -> None:
    await client.send(V2_INIT)
    assert (await client.answer_to(0))["result"]["protocolVersion"] == 2
    await client.send(
        {"jsonrpc": "2.0", "id": 1, "method": "session/new", "params": {"cwd": "/tmp"}}
    )


def _prompt(request_id: int) -> dict[str, Any]:
    params = {"sessionId": "sess-1", "prompt": [{"type": "text", "text": "go"}]}
    return {"jsonrpc": "2.0", "id": request_id, "method": "session/prompt", "params": params}


def test_an_agent_that_exits_ends_the_session_with_an_error_for_the_client() -> None:
    async def scenario() -> tuple[dict[str, Any], int, str]:
        client = await RawClient.start("--agent-version", "1", agent=_fake("exit"))
        await _v2_session(client)
        answer = await client.answer_to(1)
        code, err, _ = await client.finish(close=False)
        return answer, code, err

    answer, code, err = bounded(scenario())
    assert answer["error"]["code"] == -32603
    assert "exited with code 3" in answer["error"]["data"]["details"]
    assert code == 1 and "the agent exited with code 3" in err
    assert "Traceback" not in err


def test_an_agent_that_crashes_mid_turn_ends_the_v2_turn_in_error() -> None:
    async def scenario() -> tuple[list[dict[str, Any]], int, str]:
        client = await RawClient.start("--agent-version", "1", agent=_fake("crash"))
        await _v2_session(client)
        await client.answer_to(1)
        await client.send(_prompt(2))
        while True:
            message = await client.receive()
            update = message.get("params", {}).get("update", {})
            if update.get("state") == "idle":
                break
        code, err, _ = await client.finish(close=False)
        return client.received, code, err

    received, code, err = bounded(scenario())
    idle = received[-1]["params"]["update"]
    assert idle["stopReason"] == "error" and "SIGKILL" in idle["error"]["message"]
    assert code == 1 and "killed by signal SIGKILL" in err


def test_an_agent_that_writes_garbage_is_stopped_and_the_client_answered() -> None:
    async def scenario() -> tuple[dict[str, Any], int, str]:
        client = await RawClient.start("--agent-version", "2", agent=_fake("garbage", 2))
        await client.send(V1_INIT)
        await client.answer_to(0)
        await client.send(
            {
                "jsonrpc": "2.0",
                "id": 1,
                "method": "session/new",
                "params": {"cwd": "/tmp", "mcpServers": []},
            }
        )
        await client.answer_to(1)
        await client.send(_prompt(2))
        answer = await client.answer_to(2)
        code, err, _ = await client.finish(close=False)
        return answer, code, err

    answer, code, err = bounded(scenario())
    assert answer["error"]["code"] == -32603
    assert "not JSON-RPC" in answer["error"]["data"]["details"]
    assert code == 1 and "agent line" in err and "not JSON-RPC" in err


def test_a_v1_agents_fs_and_terminal_requests_are_refused_for_a_v2_client() -> None:
    async def scenario() -> list[dict[str, Any]]:
        client = await RawClient.start("--agent-version", "1", agent=_fake("fs"))
        await _v2_session(client)
        await client.answer_to(1)
        await client.send(_prompt(2))
        while True:
            message = await client.receive()
            if message.get("params", {}).get("update", {}).get("state") == "idle":
                break
        code, _, _ = await client.finish()
        assert code == 0
        return client.received

    received = bounded(scenario())
    assert not any(m.get("method", "").startswith(("fs/", "terminal/")) for m in received)
    [chunk] = [
        m["params"]["update"]
        for m in received
        if m.get("params", {}).get("update", {}).get("sessionUpdate") == "agent_message_chunk"
    ]
    errors = json.loads(chunk["content"]["text"])
    assert [e["code"] for e in errors] == [-32601, -32601]
    assert "fs/read_text_file" in errors[0]["message"] and "file system" in errors[0]["message"]
    assert "terminal/create" in errors[1]["message"]


def test_a_line_over_the_limit_is_reported_and_skipped_not_fatal() -> None:
    async def scenario() -> tuple[list[dict[str, Any]], int, str]:
        client = await RawClient.start(
            "--agent-version", "1", "--max-line-bytes", "1048576", agent=_fake("long-line")
        )
        await _v2_session(client)
        await client.answer_to(1)
        await client.send(_prompt(2))
        while True:
            message = await client.receive()
            if message.get("params", {}).get("update", {}).get("state") == "idle":
                break
        code, err, _ = await client.finish()
        return client.received, code, err

    received, code, err = bounded(scenario())
    texts = [
        m["params"]["update"]["content"]["text"]
        for m in received
        if m.get("params", {}).get("update", {}).get("sessionUpdate") == "agent_message_chunk"
    ]
    assert texts == ["after the long line"]
    assert received[-1]["params"]["update"]["stopReason"] == "end_turn"
    assert code == 0
    assert "agent line" in err and "over the limit of 1048576 bytes; skipped" in err


def test_the_clients_eof_ends_the_agent_cleanly() -> None:
    async def scenario() -> tuple[int, str]:
        client = await RawClient.start("--agent-version", "1", agent=_fake("echo"))
        await _v2_session(client)
        await client.answer_to(1)
        code, err, _ = await client.finish()
        return code, err

    code, err = bounded(scenario())
    assert code == 0 and err == ""


def test_an_agent_that_cannot_be_started_is_a_usage_error(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert cli_main(["bridge", "--", "/nonexistent/agent"]) == 2
    assert "cannot start the agent '/nonexistent/agent'" in capsys.readouterr().err
    assert cli_main(["bridge"]) == 2
    assert "agent command is missing" in capsys.readouterr().err


def test_limit_names_a_cap_and_its_value(capsys: pytest.CaptureFixture[str]) -> None:
    for bad in ("max_sessions", "max_nothing=1", "max_sessions=0", "max_sessions=many"):
        assert cli_main(["bridge", "--limit", bad, "--", "cat"]) == 2
        err = capsys.readouterr().err
        assert "argument --limit" in err and "Traceback" not in err, err


def test_limit_reaches_the_connection() -> None:
    """Issue 15: `--limit max_pending_requests=2` bites over real processes: the client's
    oldest unanswered request gets an error, a note says which cap."""

    async def scenario() -> tuple[dict[str, Any], str]:
        client = await RawClient.start(
            "--agent-version", "2", "--limit", "max_pending_requests=2", agent=_fake("echo", 2)
        )
        await client.send(V1_INIT)
        assert (await client.answer_to(0))["result"]["protocolVersion"] == 1
        for i in range(100, 103):  # the agent answers none
            await client.send({"jsonrpc": "2.0", "id": i, "method": "_vendor/ping", "params": {}})
        answer = await client.answer_to(100)
        _, err, _ = await client.finish()
        return answer, err

    answer, err = bounded(scenario())
    assert answer["error"]["data"]["details"] == "too many requests wait for the agent"
    assert "max_pending_requests: 2 requests of the client wait for the agent" in err
