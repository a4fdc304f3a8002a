"""The lint on real agents' streams (issue 29): no false alarm on what agents send by design.

- ``prompt-in-tool-call``: a permission subject that repeats a text the call already shows (its
  title, a text item) overwrites nothing: claude-agent-acp 0.101.0 titles its permission
  request with the command the call's title already is.
- ``recreated-after-final``: the history an agent sends again for ``session/load`` (v1) or
  ``session/resume`` with ``replayFrom`` (v2) re-creates nothing: codex-acp 2.6.0 replays its
  finished call as a v1 ``tool_call``.

The real sessions are tests/data/real-agents (README.md there; the replays and the declined
calls recorded by ``record_raw_client.py``); each is validated as ``acp-toolcalls validate
--side`` reads it, with no finding but the named agent bugs (``KNOWN_AGENT_BUGS``).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from acp_toolcalls import decode_message
from acp_toolcalls.check import Finding, ToolCallLinter
from acp_toolcalls.check._replays import MAX_PENDING
from acp_toolcalls.cli import main
from acp_toolcalls.models import VersionName
from tests.check.test_lint import SESSION, tcu, update

REAL = Path(__file__).resolve().parents[1] / "data" / "real-agents"
SIDES = {"agent": ("proxy->agent", "agent->proxy"), "client": ("client->proxy", "proxy->client")}

KNOWN_AGENT_BUGS: dict[tuple[str, str], list[str]] = {
    # codex-acp 2.6.0 never ends a declined apply_patch call: it stays `in_progress` while the
    # turn ends (v1: `cancelled`; v2: `idle`), so a client shows it running for ever.
    ("codex-patch-v1-reject-direct.jsonl", "agent"): ["never-final"],
    ("codex-patch-v2-reject-direct.jsonl", "agent"): ["never-final"],
}
"""(file, side) -> the codes of the real agent bugs it shows, each named in a comment."""


def _real_cases() -> list[tuple[str, str]]:
    cases = []
    for path in sorted(REAL.glob("*.jsonl")):
        directions = {json.loads(line)["direction"] for line in path.open(encoding="utf-8")}
        cases += [(path.name, side) for side, pair in SIDES.items() if directions & set(pair)]
    return cases


@pytest.mark.parametrize(("name", "side"), _real_cases())
def test_real_agents_streams_validate_without_false_alarms(
    name: str, side: str, capsys: pytest.CaptureFixture[str]
) -> None:
    main(["validate", "--json", "--side", side, str(REAL / name)])
    document = json.loads(capsys.readouterr().out)
    codes = [finding["code"] for finding in document["findings"]]
    assert codes == KNOWN_AGENT_BUGS.get((name, side), []), document["findings"]


def test_the_replay_recordings_are_there_and_replay() -> None:
    # What the two rules must know, as the agents sent it.
    def agent_lines(name: str) -> list[dict[str, Any]]:
        lines = (json.loads(line) for line in (REAL / name).open(encoding="utf-8"))
        return [r["message"] for r in lines if r["direction"] == "agent->proxy"]

    codex = agent_lines("codex-exec-v1-load-direct.jsonl")
    creates = [m for m in codex if m.get("params", {}).get("update", {}).get("toolCallId")]
    assert [m["params"]["update"]["sessionUpdate"] for m in creates][-2:] == [
        "tool_call",
        "tool_call_update",
    ]  # the replay: the finished call created again
    claude = agent_lines("claude-bash-v2-resume-direct.jsonl")
    asked = next(m for m in claude if m.get("method") == "session/request_permission")
    assert asked["params"]["title"] == asked["params"]["subject"]["toolCall"]["title"]


# --- helpers --------------------------------------------------------------------------------


def v1_create(call_id: str = "call_1", **fields: Any) -> dict[str, Any]:
    body = {"sessionUpdate": "tool_call", "toolCallId": call_id, "title": "Run", **fields}
    return update(body)


def text_item(text: str) -> dict[str, Any]:
    return {"type": "content", "content": {"type": "text", "text": text}}


def permission(tool_call: dict[str, Any], title: str, description: str | None = None) -> Any:
    params: dict[str, Any] = {
        "sessionId": SESSION,
        "title": title,
        "options": [{"optionId": "allow", "name": "Allow", "kind": "allow_once"}],
        "subject": {"type": "tool_call", "toolCall": tool_call},
    }
    if description is not None:
        params["description"] = description
    return {"jsonrpc": "2.0", "id": 70, "method": "session/request_permission", "params": params}


def request(request_id: Any, method: str, **params: Any) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": request_id, "method": method, "params": params}


def load(request_id: Any = 5, session: str = SESSION) -> dict[str, Any]:
    return request(request_id, "session/load", sessionId=session, cwd="/p", mcpServers=[])


def resume(request_id: Any = 5, **replay: Any) -> dict[str, Any]:
    return request(request_id, "session/resume", sessionId=SESSION, cwd="/p", **replay)


def answer(request_id: Any = 5, error: bool = False) -> dict[str, Any]:
    if error:
        return {"jsonrpc": "2.0", "id": request_id, "error": {"code": -32602, "message": "no"}}
    return {"jsonrpc": "2.0", "id": request_id, "result": {}}


def lint(messages: list[Any], protocol: VersionName = "v2") -> list[tuple[int, str]]:
    """Each message (or batch) one line, from 1; returns (line, code) of every finding."""
    linter = ToolCallLinter()
    out: list[Finding] = []
    for line, raw in enumerate(messages, start=1):
        value = decode_message(json.dumps(raw).encode(), version=protocol).value
        out += linter.feed(value, line, raw=raw)
    out += linter.finish()
    return [(finding.line, finding.code) for finding in out]


# --- prompt-in-tool-call --------------------------------------------------------------------

COMMAND = "touch made.txt && echo hello"


def test_a_prompt_equal_to_the_title_the_call_shows_overwrites_nothing() -> None:
    # claude-agent-acp: the call is titled with its command, then the request too.
    messages = [
        tcu(title="Terminal", status="pending"),
        tcu(title=COMMAND),
        permission({"toolCallId": "call_1", "title": COMMAND, "status": "pending"}, COMMAND),
        tcu(status="completed"),
    ]
    assert lint(messages) == []


def test_a_prompt_that_changes_the_title_is_still_reported() -> None:
    messages = [
        tcu(title="Terminal", status="pending"),
        permission({"toolCallId": "call_1", "title": COMMAND}, COMMAND),
        # the title shown is the prompt now: repeating it again overwrites nothing
        permission({"toolCallId": "call_1", "title": COMMAND, "status": "completed"}, COMMAND),
    ]
    assert lint(messages) == [(2, "prompt-in-tool-call")]


@pytest.mark.parametrize(
    "before",
    [
        [],  # the subject is the call's first report: its title is the prompt
        [tcu(title=COMMAND, status="pending"), tcu(title=None)],  # null unset the title
        [tcu(title=f" {COMMAND}", status="pending")],  # another text shown (exactly compared)
        [tcu("other", title=COMMAND, status="completed")],  # another call shows it
    ],
    ids=["first-report", "title-unset", "other-whitespace", "another-call"],
)
def test_a_title_the_call_does_not_show_yet_is_reported(before: list[Any]) -> None:
    call = {"toolCallId": "call_1", "title": COMMAND, "status": "completed"}
    findings = lint([*before, permission(call, COMMAND)])
    assert (len(before) + 1, "prompt-in-tool-call") in findings


def test_a_text_item_the_call_already_shows_is_no_prompt_copy() -> None:
    reason = "The agent wants to run the setup script."
    shown = [{"type": "terminal", "terminalId": "t"}, text_item(reason)]
    messages = [
        tcu(title="Run setup", status="pending", content=shown),
        permission({"toolCallId": "call_1", "content": [text_item(reason)]}, "Run?", reason),
        tcu(status="completed"),
    ]
    assert lint(messages) == []


def test_a_text_item_replaced_earlier_is_not_shown_any_more() -> None:
    reason = "The agent wants to run the setup script."
    messages = [
        tcu(title="Run setup", status="pending", content=[text_item(reason)]),
        tcu(content=[{"type": "terminal", "terminalId": "t"}]),
        permission({"toolCallId": "call_1", "content": [text_item(reason)]}, "Run?", reason),
        tcu(status="completed"),
    ]
    assert lint(messages) == [(3, "prompt-in-tool-call")]


# --- recreated-after-final: history replays -------------------------------------------------


def test_a_v1_load_replays_finished_calls_without_a_finding() -> None:
    # codex-acp (v1): the finished call comes back as a `tool_call` in the load's replay.
    turn = [v1_create(status="in_progress"), tcu(status="completed")]
    replay = [v1_create(status="completed"), tcu(status="completed")]
    assert lint([*turn, load(), *replay, answer()], "v1") == []
    # Without the request, the same lines re-create a finished call.
    assert lint([*turn, *replay], "v1") == [(3, "recreated-after-final")]


@pytest.mark.parametrize("cursor", [{"type": "start"}, {"type": "_from_message", "id": "m"}])
def test_a_v2_resume_with_replay_replays_calls_as_live_traffic(cursor: dict[str, Any]) -> None:
    turn = [tcu(title="Run", status="pending"), tcu(status="completed")]
    replay = [tcu(title="Run", status="pending"), tcu(status="completed")]
    assert lint([*turn, resume(replayFrom=cursor), *replay, answer()]) == []


@pytest.mark.parametrize("params", [{}, {"replayFrom": None}], ids=["omitted", "null"])
def test_a_resume_without_replay_replays_nothing(params: dict[str, Any]) -> None:
    messages = [tcu(title="Run", status="completed"), resume(**params), tcu(status="pending")]
    assert lint([*messages, answer(), tcu(status="completed")]) == [(3, "recreated-after-final")]


def test_a_refused_load_starts_nothing_over() -> None:
    turn = [v1_create(status="completed")]
    after = [tcu(status="in_progress"), tcu(status="completed")]
    assert lint([*turn, load(), answer(error=True), *after], "v1") == [(4, "recreated-after-final")]


def test_after_its_answer_the_replay_is_over() -> None:
    messages = [
        v1_create(status="completed"),
        load(),
        v1_create(status="completed"),  # the replay
        answer(),
        v1_create(status="in_progress"),  # live again: the id is reused
        tcu(status="completed"),
    ]
    assert lint(messages, "v1") == [(5, "recreated-after-final")]


def test_a_replay_is_linted_as_new_calls() -> None:
    messages = [
        tcu(title="Run", status="completed"),
        tcu("open", title="Open", status="in_progress"),  # replayed open again: never final
        tcu("gone", title="Gone", status="in_progress"),  # not replayed: the client forgot it
        resume(replayFrom={"type": "start"}),
        tcu(status="completed"),  # replayed without a title: new to the client
        tcu("open", title="Open", status="in_progress"),
        tcu(status="pending"),  # within the replay, a re-creation is one
        answer(),
    ]
    assert lint(messages) == [
        (5, "missing-title"),
        (7, "recreated-after-final"),
        (6, "never-final"),
        (7, "never-final"),
    ]


def test_other_sessions_and_requests_are_not_started_over() -> None:
    messages = [
        tcu(title="Run", status="completed"),
        load(5, session="sess_2"),
        request(6, "session/new", cwd="/p", mcpServers=[]),
        tcu(status="pending"),
        answer(5),
        answer(6),
        tcu(status="completed"),
    ]
    assert lint(messages) == [(4, "recreated-after-final")]


def test_the_load_request_in_a_batch_and_string_ids() -> None:
    turn = [v1_create(status="completed")]
    messages = [
        *turn,
        [load("a"), {"jsonrpc": "2.0", "method": "x"}],
        v1_create(status="completed"),
    ]
    assert lint([*messages, answer("a")], "v1") == []


def test_unanswered_requests_are_bounded() -> None:
    # Past MAX_PENDING unanswered replay requests the oldest is forgotten: its session no
    # longer starts over.
    loads = [load(index, session=f"s{index}") for index in range(MAX_PENDING + 1)]
    replayed = [v1_create(status="completed"), load(1000), v1_create(status="completed")]
    assert lint([*replayed[:1], *loads, *replayed[1:]], "v1") == []
    forgotten = [v1_create(status="completed"), load(1000), *loads, v1_create(status="completed")]
    assert lint(forgotten, "v1") == [(MAX_PENDING + 4, "recreated-after-final")]


def test_calls_a_replay_replaced_are_forgotten_first_past_the_cap() -> None:
    linter = ToolCallLinter(max_calls=2)
    messages = [
        tcu("a", title="A", status="in_progress"),  # open, then replaced by the replay
        tcu("b", title="B", status="in_progress"),
        resume(replayFrom={"type": "start"}),
        tcu("b", title="B", status="completed"),
        tcu("c", title="C", status="completed"),  # a third call: one is forgotten
        answer(),
        tcu("b", status="completed"),
    ]
    out: list[Finding] = []
    for line, raw in enumerate(messages, start=1):
        value = decode_message(json.dumps(raw).encode(), version="v2").value
        out += linter.feed(value, line, raw=raw)
    out += linter.finish()
    assert [(f.line, f.code) for f in out] == [(5, "lint-limit")]
    assert [key for key, _ in linter._calls.items()] == [(SESSION, "b"), (SESSION, "c")]
