"""Interop over real stdio: ``examples/agent.py`` against the official SDK's clients and ours.

The agent runs as a subprocess (``sys.executable examples/agent.py``) and negotiates v1 or v2
with whatever client starts it:

- v1: the official SDK's v1 ``ClientSideConnection`` in this process. Every message it
  receives must parse with the SDK's own v1 models and validate against our bundled v1
  schema, and the client's view of the tool calls (the SDK's models folded the v1 way, D46
  (v1 store)) must equal our ``ToolCallStore(version="v1")`` fed the same raw messages.
- v2: ``examples/client.py --json`` (the SDK's experimental v2 client + our store) as a
  subprocess: the final store document and every message against our v2 schema.
- Both against the official TypeScript SDK's validators (``interop/ts_sdk.py``).
- What the agent meant (its v2 state) against what a v1 client ends up showing: equal modulo
  the documented v1 losses, ``interop.sessions.V1_LOSSES``.
- Permission rejected, and ``session/cancel`` while a permission request is pending.

Every session is bounded by ``TIMEOUT`` (``asyncio.wait_for``); nothing waits on a clock.
"""

from __future__ import annotations

import base64
import json
from pathlib import Path

import pytest
from acp import schema as v1s

from acp_toolcalls import ToolCallStore
from acp_toolcalls.check import validate_message
from tests.interop.sessions import (
    CALLS,
    NEW_NOTES,
    OLD_NOTES,
    PROMPT,
    SCRIPT_OUTPUT,
    Run,
    assert_v1_shows_v2,
    bounded,
    example_client,
    fold_v1,
    load_example_client,
    prepared,
    sdk_v1_session,
    sdk_v2_session,
    session_document,
    store_view,
)
from tests.interop.ts_sdk import TsMessage, ts_validate

# --------------------------------------------------------------------------------------------
# The two runs most tests look at (one agent process each)


@pytest.fixture(scope="module")
def v1_run(tmp_path_factory: pytest.TempPathFactory) -> Run:
    return bounded(sdk_v1_session(prepared(tmp_path_factory.mktemp("v1") / "work")))


@pytest.fixture(scope="module")
def v2_run(tmp_path_factory: pytest.TempPathFactory) -> Run:
    cwd = prepared(tmp_path_factory.mktemp("v2") / "work")
    return bounded(example_client(cwd, 2, "--approve"))


# --------------------------------------------------------------------------------------------
# v1: the official SDK client


def test_every_message_a_v1_sdk_client_receives_parses_and_validates(v1_run: Run) -> None:
    assert v1_run.stop_reason == "end_turn"
    methods = {message["id"]: message["method"] for message in v1_run.sent() if "method" in message}
    updates = requests = 0
    for message in v1_run.received():
        method = message.get("method")
        if method == "session/update":
            v1s.SessionNotification.model_validate(message["params"])
            updates += 1
        elif method == "session/request_permission":
            v1s.RequestPermissionRequest.model_validate(message["params"])
            requests += 1
        else:  # a response to one of the client's requests
            assert method is None, message
        answered = methods[message["id"]] if method is None else None
        assert validate_message(message, "v1", response_method=answered) == [], message
    assert requests == 1
    # The SDK's own dispatch handed every one of them to the client's callbacks.
    assert len(v1_run.callbacks) == updates + requests


def test_the_v1_sdk_clients_view_equals_our_stores_view(v1_run: Run) -> None:
    folded = fold_v1(v1_run)
    assert list(folded) == CALLS
    assert folded == store_view(v1_run)
    assert (v1_run.cwd / "notes.txt").read_text(encoding="utf-8") == NEW_NOTES


# --------------------------------------------------------------------------------------------
# v2: our client (examples/client.py)


def test_the_v2_client_store_holds_the_turn(v2_run: Run) -> None:
    cwd = str(v2_run.cwd)
    assert v2_run.stop_reason == "end_turn"
    calls = v2_run.calls()
    assert list(calls) == CALLS
    assert [call["status"] for call in calls.values()] == ["completed", "completed", "failed"]

    edit = calls["edit"]
    arguments, diff = edit["content"]
    assert json.loads(arguments["content"]["text"]) == {
        "path": f"{cwd}/notes.txt",
        "line": f"- {PROMPT}\n",
    }
    assert diff["type"] == "diff"
    assert diff["changes"] == [
        {"operation": "modify", "path": f"{cwd}/notes.txt", "fileType": "text"}
    ]
    assert f"+- {PROMPT}\n" in diff["patch"]["text"]
    assert edit.get("rawInput") is None  # cleared once the change was made
    assert (v2_run.cwd / "notes.txt").read_text(encoding="utf-8") == NEW_NOTES

    run = calls["run"]
    assert run["content"] == [{"type": "terminal", "terminalId": "term-1"}]
    assert run["rawOutput"] == {"exitCode": 0}
    [terminal] = v2_run.document["terminals"]
    assert terminal["terminalId"] == "term-1"
    assert terminal["cwd"] == cwd
    assert terminal["command"].startswith("python -c ")
    assert base64.b64decode(terminal["output"]["data"]) == SCRIPT_OUTPUT
    assert terminal["exitStatus"] == {"exitCode": 0}

    read = calls["read"]
    [error] = read["content"]
    assert error["content"]["text"] == f"No such file or directory: {cwd}/missing.txt"
    assert read.get("locations") is None  # cleared: nothing to follow
    assert read["rawInput"] == {"path": f"{cwd}/missing.txt"}


def test_the_v2_wire_carries_chunks_clears_and_terminal_updates(v2_run: Run) -> None:
    # The streamed arguments: a first chunk, then the whole text as a replacement.
    [chunk] = [u for u in v2_run.updates("tool_call_content_chunk") if u["toolCallId"] == "edit"]
    whole = v2_run.calls()["edit"]["content"][0]["content"]["text"]
    assert whole.startswith(chunk["content"]["content"]["text"]) and len(whole) > 16
    # The clears are real `null`s on the wire, not omissions.
    updates = list(v2_run.updates("tool_call_update"))
    assert any(u["toolCallId"] == "edit" and u.get("rawInput", 0) is None for u in updates)
    assert any(u["toolCallId"] == "read" and u.get("locations", 0) is None for u in updates)
    output = b"".join(base64.b64decode(u["data"]) for u in v2_run.updates("terminal_output_chunk"))
    assert output == SCRIPT_OUTPUT
    states = [u["state"] for u in v2_run.updates("state_update")]
    assert states == ["running", "requires_action", "running", "idle"]


def test_replaying_the_v2_log_gives_the_live_store(v2_run: Run) -> None:
    # What `acp-toolcalls replay` does with the client's `--log`: the same document as the
    # store the client kept live from the SDK's raw stream.
    replayed = ToolCallStore(version="auto")
    for _, message in v2_run.wire:
        replayed.apply(message)
    assert session_document(replayed, v2_run.session_id) == v2_run.document


def test_every_message_the_v2_client_receives_validates(v2_run: Run) -> None:
    methods = {message["id"]: message["method"] for message in v2_run.sent() if "method" in message}
    for message in v2_run.received():
        answered = methods.get(message["id"]) if "method" not in message else None
        assert validate_message(message, "v2", response_method=answered) == [], message
    assert any(
        message.get("method") == "session/request_permission" for message in v2_run.received()
    )


# --------------------------------------------------------------------------------------------
# The official TypeScript SDK


def ts_inputs(run: Run) -> list[TsMessage]:
    """What the SDK validates: the agent's ``session/update`` and ``session/request_permission``
    messages, and the client's answers to the permission requests."""
    asked = {m["id"] for m in run.received() if m.get("method") == "session/request_permission"}
    inputs = [
        TsMessage(run.protocol, message)
        for message in run.received()
        if message.get("method") in ("session/update", "session/request_permission")
    ]
    inputs += [
        TsMessage(run.protocol, message, response_to="session/request_permission")
        for message in run.sent()
        if "method" not in message and message.get("id") in asked
    ]
    return inputs


def test_the_typescript_sdk_accepts_every_message(v1_run: Run, v2_run: Run) -> None:
    inputs = ts_inputs(v1_run) + ts_inputs(v2_run)
    assert {item.version for item in inputs} == {1, 2}
    verdicts = ts_validate(inputs)
    rejected = [
        (item.message, error) for item, error in zip(inputs, verdicts, strict=True) if error
    ]
    assert rejected == []


# --------------------------------------------------------------------------------------------
# What the agent meant (v2) and what a v1 client shows


def test_a_v1_client_shows_what_the_agent_meant_modulo_documented_losses(
    v1_run: Run, v2_run: Run
) -> None:
    assert_v1_shows_v2(v1_run, v2_run)


# --------------------------------------------------------------------------------------------
# Rejected, cancelled


@pytest.mark.parametrize("protocol", [1, 2])
def test_a_rejected_edit_fails_and_leaves_the_file_alone(tmp_path: Path, protocol: int) -> None:
    client = load_example_client()
    cwd = prepared(tmp_path / "work")
    store, stop = bounded(client.run(version=protocol, approve=False, cwd=cwd, prompt=PROMPT))
    assert stop == "end_turn"
    [session] = store.sessions
    statuses = {view.tool_call_id: view.status for view in store.views(session)}
    assert statuses == {"edit": "failed", "run": "completed", "read": "failed"}
    assert (cwd / "notes.txt").read_text(encoding="utf-8") == OLD_NOTES


def test_cancel_during_a_v1_permission_request(tmp_path: Path) -> None:
    cwd = prepared(tmp_path / "work")
    run = bounded(sdk_v1_session(cwd, mode="cancel"))
    assert run.stop_reason == "cancelled"
    assert [(c["toolCallId"], c["status"]) for c in run.document["toolCalls"]] == [
        ("edit", "failed")  # V1_LOSSES["cancelled"]
    ]
    assert (cwd / "notes.txt").read_text(encoding="utf-8") == OLD_NOTES


def test_cancel_during_a_v2_permission_request(tmp_path: Path) -> None:
    cwd = prepared(tmp_path / "work")
    run = bounded(sdk_v2_session(cwd, mode="cancel"))
    assert run.stop_reason == "cancelled"
    assert [(c["toolCallId"], c["status"]) for c in run.document["toolCalls"]] == [
        ("edit", "cancelled")
    ]
    assert (cwd / "notes.txt").read_text(encoding="utf-8") == OLD_NOTES
    # The client never answered: the agent withdrew its request.
    [ask] = [m for m in run.received() if m.get("method") == "session/request_permission"]
    withdrawn = [m for m in run.received() if m.get("method") == "$/cancel_request"]
    assert [m["params"]["requestId"] for m in withdrawn] == [ask["id"]]
    for message in run.received():
        if "method" in message:
            assert validate_message(message, "v2") == [], message
