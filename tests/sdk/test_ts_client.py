"""The official TypeScript SDK's v2 client (``interop/node/client.mjs --protocol 2``) against
``examples/agent.py`` over real stdio, which negotiates v2 with it.

One session per permission answer (approve, reject, cancel), each in its own directory
prepared like ``test_interop.py`` does; the three runs go concurrently (each is a ``node``
process with an agent subprocess). The checks are what a user of that client would notice:
how the turn ends, whether the file changed, the final status of each tool call as folded
from what the SDK handed to the client; and that every message the client received (and
sent) validates against the bundled v2 schema.
"""

from __future__ import annotations

import json
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from acp_toolcalls.check import validate_message
from tests.interop.ts_client import MODES, TsClientRun, run_ts_v2_client
from tests.interop.ts_sdk import require_ts_sdk

REPO = Path(__file__).resolve().parents[2]
AGENT = [sys.executable, str(REPO / "examples" / "agent.py")]
TIMEOUT = 30.0
PROMPT = "Remember to water the plants"
OLD_NOTES = "- buy milk\n"
NEW_NOTES = OLD_NOTES + f"- {PROMPT}\n"

STOP_REASONS = {"approve": "end_turn", "reject": "end_turn", "cancel": "cancelled"}
STATUSES = {
    "approve": {"edit": "completed", "run": "completed", "read": "failed"},
    "reject": {"edit": "failed", "run": "completed", "read": "failed"},
    "cancel": {"edit": "cancelled"},  # the turn stops at the permission request
}
NOTES = {"approve": NEW_NOTES, "reject": OLD_NOTES, "cancel": OLD_NOTES}


def prepared(directory: Path) -> Path:
    directory.mkdir(parents=True, exist_ok=True)
    (directory / "notes.txt").write_text(OLD_NOTES, encoding="utf-8")
    return directory.resolve()


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, tuple[Path, TsClientRun]]:
    require_ts_sdk()  # skip (or fail) here, not in a worker thread
    cwds = {mode: prepared(tmp_path_factory.mktemp(mode) / "work") for mode in MODES}
    with ThreadPoolExecutor(len(MODES)) as pool:
        futures = {
            mode: pool.submit(run_ts_v2_client, AGENT, cwd, PROMPT, mode, TIMEOUT)
            for mode, cwd in cwds.items()
        }
        return {mode: (cwds[mode], future.result()) for mode, future in futures.items()}


@pytest.mark.parametrize("mode", MODES)
def test_the_turn_ends_and_the_file_changes_only_on_approve(
    runs: dict[str, tuple[Path, TsClientRun]], mode: str
) -> None:
    cwd, run = runs[mode]
    assert run.initialize["protocolVersion"] == 2
    assert run.initialize["info"]["name"] == "acp-toolcalls-example-agent"
    assert run.prompt_result["messageId"]  # v2: the prompt response only acknowledges
    assert run.stop_reason == STOP_REASONS[mode]
    [idle] = [u for u in run.sdk_updates("state_update") if u["state"] == "idle"]
    assert idle["stopReason"] == STOP_REASONS[mode]
    assert run.sdk_updates()[-1] == idle
    assert (cwd / "notes.txt").read_text(encoding="utf-8") == NOTES[mode]
    assert run.agent_exit == {"code": 0, "signal": None}
    assert run.errors == []


@pytest.mark.parametrize("mode", MODES)
def test_the_tool_calls_the_client_saw_end_with_the_agents_statuses(
    runs: dict[str, tuple[Path, TsClientRun]], mode: str
) -> None:
    cwd, run = runs[mode]
    calls = run.tool_calls()
    assert {call_id: call["status"] for call_id, call in calls.items()} == STATUSES[mode]
    assert list(calls) == list(STATUSES[mode])  # in the order the agent started them

    # One question, about the edit; the client's answer is on the wire.
    [ask] = run.permission_requests
    assert ask["subject"]["toolCall"]["toolCallId"] == "edit"
    [answer] = [m for m in run.sent() if "result" in m]
    expected = {"approve": "allow", "reject": "reject"}.get(mode)
    if expected is None:
        assert answer["result"] == {"outcome": {"outcome": "cancelled"}}
        methods = [m.get("method") for m in run.sent()]
        assert methods.index("session/cancel") < run.sent().index(answer)
    else:
        assert answer["result"] == {"outcome": {"outcome": "selected", "optionId": expected}}

    # The streamed arguments: a chunk, then the whole text as the first content item.
    edit = calls["edit"]
    arguments = json.loads(edit["content"][0]["content"]["text"])
    assert arguments == {"path": f"{cwd}/notes.txt", "line": f"- {PROMPT}\n"}
    if mode == "approve":
        assert "rawInput" not in edit  # the agent's `null` clear reached the client
    if mode != "cancel":
        assert calls["run"]["rawOutput"] == {"exitCode": 0}
        [error] = calls["read"]["content"]
        assert error["content"]["text"] == f"No such file or directory: {cwd}/missing.txt"
        assert "locations" not in calls["read"]  # cleared: nothing to follow


@pytest.mark.parametrize("mode", MODES)
def test_every_message_validates_against_the_v2_schema(
    runs: dict[str, tuple[Path, TsClientRun]], mode: str
) -> None:
    _, run = runs[mode]
    assert run.unparsed_lines() == []
    received = list(run.received_with_methods())
    assert len(received) == len(run.received())
    for message, answered in received:
        if "method" not in message:
            assert answered is not None, message  # every response answers a sent request
        assert validate_message(message, "v2", response_method=answered) == [], message
    for message in run.sent():
        answered = None if "method" in message else "session/request_permission"
        assert validate_message(message, "v2", response_method=answered) == [], message
    # The SDK handed the client every update and question, as they were on the wire.
    wire = [m["params"] for m in run.received() if m.get("method") == "session/update"]
    assert run.updates == wire
    asked = [m["params"] for m in run.received() if m.get("method") == "session/request_permission"]
    assert run.permission_requests == asked
