"""Real agents through ``acp-toolcalls bridge``, as a person at a real editor sees them (issue 26).

The agents are the published ones, pinned in ``tests/interop/agents/package.json``:
``@agentclientprotocol/codex-acp`` (over ``codex app-server``) and
``@agentclientprotocol/claude-agent-acp`` (over Claude Code), each against a fake model server
on 127.0.0.1 (``interop/fake_models.py``) that makes one scripted tool call and then ends the
turn. The editors are the official TypeScript SDK's clients, which parse every message with the
SDK's zod schemas: the v1 and the v2 client (``interop/node/client.mjs --protocol 1|2``).
Every case runs, over real stdio::

    editor  ->  acp-toolcalls bridge --agent-version N --log FILE  ->  node <agent>

- a v1 editor to each agent speaking v2 (``--agent-version 2``): claude's Bash (approved,
  rejected, cancelled), Edit and Write; codex's shell command (``exec_command``) and its
  ``apply_patch`` (approved, rejected, cancelled); once more claude's Bash with the editor
  offering the v1 terminal extension (``clientCapabilities._meta.terminal_output``);
- a v2 editor to each agent pinned to v1 (``--agent-version 1``; claude also by
  ``CLAUDE_AGENT_ACP_PROTOCOL=v1``): claude's Bash and codex's shell command, each approved,
  rejected and cancelled, and an edit of each, approved.

Checked for every case: the turn ends as the answer says and the files change only when
approved; the editor rejected no message (the SDK reported nothing, answered no request with
an error, handed over every update) and every message validates against the bundled schema of
its version; no process of the run is left; no request left for another host. Then what a
person sees is checked against the numbered items of issue 26
(:func:`test_what_a_person_sees`), one case per item.

All cases run concurrently (:data:`WORKERS` at a time) in one module fixture; the whole file
takes well under a minute on an idle machine. Without Node.js, the TypeScript SDK
(``npm ci --prefix tests/interop/node``) or the agents (``npm ci --prefix
tests/interop/agents``) the tests are skipped, and fail instead under ``ACP_REQUIRE_NODE=1``.
"""

from __future__ import annotations

import base64
import contextlib
import json
import os
import re
import signal
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from acp_toolcalls.check import validate_message
from tests.interop.fake_models import (
    FakeMessagesServer,
    FakeModelServer,
    FakeResponsesServer,
    Request,
    Turn,
)
from tests.interop.real_agents import (
    AgentName,
    AgentSetup,
    Protocol,
    bridge_command,
    claude_agent,
    codex_agent,
    leftover_processes,
    require_real_agents,
)
from tests.interop.ts_client import TsClientError, TsClientRun, fold_v1_tool_calls, run_ts_client
from tests.interop.ts_sdk import require_ts_sdk

pytestmark = pytest.mark.slow  # real agents from npm, each turn over a fake model server

WORKERS = 4
CLIENT_TIMEOUT = 90.0
"""Seconds one editor session may take (a few on an idle machine)."""
GONE_WITHIN = 10.0
"""Seconds the processes of a run get to exit after the editor ended."""
PROMPT = "Please do the scripted thing."
NOTES = "one\ntwo\nthree\n"
EDITED_NOTES = "one\nTWO\nthree\n"
COMMAND = "touch made.txt && echo hello"
WRITTEN = "fresh\n"
PATCH = "*** Begin Patch\n*** Update File: notes.txt\n@@\n one\n-two\n+TWO\n three\n*** End Patch\n"
FILES = {"notes.txt": NOTES}


def tool_input(tool: str, cwd: Path) -> dict[str, Any] | str:
    """What the fake model asks the tool to do (codex's apply_patch is a freeform tool)."""
    inputs: dict[str, dict[str, Any] | str] = {
        "Bash": {"command": COMMAND, "description": "Make a file"},
        "Edit": {"file_path": str(cwd / "notes.txt"), "old_string": "two", "new_string": "TWO"},
        "Write": {"file_path": str(cwd / "new.txt"), "content": WRITTEN},
        # Asking to run outside codex's read-only sandbox is what makes codex ask the client.
        "exec_command": {
            "cmd": COMMAND,
            "sandbox_permissions": "require_escalated",
            "justification": "Make a file",
        },
        "apply_patch": PATCH,
    }
    return inputs[tool]


def files_after(tool: str, approved: bool) -> dict[str, str]:
    """The project's files once the turn is over."""
    if not approved:
        return dict(FILES)
    if tool in ("Bash", "exec_command"):
        return {**FILES, "made.txt": ""}
    if tool in ("Edit", "apply_patch"):
        return {"notes.txt": EDITED_NOTES}
    return {**FILES, "new.txt": WRITTEN}


# --- the cases --------------------------------------------------------------------------------


@dataclass(frozen=True)
class Case:
    editor: int  # the editor's ACP version; the agent speaks the other one
    agent: AgentName
    tool: str
    mode: str  # approve | reject | cancel
    terminal_output: bool = False  # the v1 editor offers the terminal extension

    @property
    def id(self) -> str:
        short = {"exec_command": "exec", "apply_patch": "patch"}.get(self.tool, self.tool.lower())
        suffix = "-terminal-output" if self.terminal_output else ""
        return f"v{self.editor}-editor-{self.agent}-{short}-{self.mode}{suffix}"

    @property
    def agent_version(self) -> int:
        return 2 if self.editor == 1 else 1

    @property
    def stop_reason(self) -> str:
        if self.mode == "cancel":
            return "cancelled"
        if self.mode == "reject" and self.agent == "codex":
            return "cancelled"  # codex's only "no" is "No, and tell Codex what to do differently"
        return "end_turn"


MODES = ("approve", "reject", "cancel")
CASES = [
    *(Case(1, "claude", "Bash", mode) for mode in MODES),
    Case(1, "claude", "Edit", "approve"),
    Case(1, "claude", "Write", "approve"),
    Case(1, "claude", "Bash", "approve", terminal_output=True),
    Case(1, "codex", "exec_command", "approve"),
    *(Case(1, "codex", "apply_patch", mode) for mode in MODES),
    *(Case(2, "claude", "Bash", mode) for mode in MODES),
    Case(2, "claude", "Edit", "approve"),
    *(Case(2, "codex", "exec_command", mode) for mode in MODES),
    Case(2, "codex", "apply_patch", "approve"),
]
BY_ID = {case.id: case for case in CASES}


@dataclass
class Outcome:
    """One case, run: what the editor recorded, the bridge logged and the fake model saw."""

    case: Case
    setup: AgentSetup
    run: TsClientRun | None
    error: str | None
    requests: list[Request]
    server_errors: list[str]
    stray: list[Request]
    leftovers: list[str]
    log: list[dict[str, Any]] = field(repr=False)
    files: dict[str, str] = field(default_factory=dict)
    seconds: float = 0.0

    def ran(self) -> TsClientRun:
        assert self.run is not None, f"{self.case.id}: {self.error}"
        return self.run


def _server(agent: AgentName) -> FakeModelServer:
    return FakeResponsesServer() if agent == "codex" else FakeMessagesServer()


def _kill(leftovers: list[str]) -> None:
    for line in leftovers:
        with contextlib.suppress(OSError, ValueError):
            os.kill(int(line.split(":", 1)[0]), signal.SIGKILL)


def _run_case(case: Case, base: Path) -> Outcome:
    started = time.monotonic()
    with _server(case.agent) as server:
        protocol: Protocol = "v2" if case.agent_version == 2 else "v1"
        if isinstance(server, FakeResponsesServer):
            setup = codex_agent(base, server, FILES, protocol)
        else:
            assert isinstance(server, FakeMessagesServer)
            setup = claude_agent(base, server, FILES, protocol)
        server.turn = Turn(case.tool, tool_input(case.tool, setup.cwd))
        log = base / "bridge.jsonl"
        command = bridge_command(setup, agent_version=case.agent_version, log=log)
        run: TsClientRun | None = None
        error = None
        try:
            run = run_ts_client(
                case.editor, command, setup.cwd, PROMPT, case.mode, CLIENT_TIMEOUT,
                terminal_output=case.terminal_output, env=setup.env, run_in=setup.cwd,
            )  # fmt: skip
        except TsClientError as exc:
            error = str(exc)
        deadline = time.monotonic() + GONE_WITHIN
        leftovers = leftover_processes(setup.marker)
        while leftovers and time.monotonic() < deadline:
            time.sleep(0.1)
            leftovers = leftover_processes(setup.marker)
        _kill(leftovers)  # ours (they carry the run's marker): reported, not left running
        requests = list(server.requests)
    records = []
    if log.is_file():
        records = [json.loads(line) for line in log.read_text(encoding="utf-8").splitlines()]
    files = {
        path.name: path.read_text(encoding="utf-8")
        for path in sorted(setup.cwd.iterdir())
        if path.is_file()
    }
    return Outcome(
        case, setup, run, error, requests, list(server.errors), server.stray_requests(),
        leftovers, records, files, time.monotonic() - started,
    )  # fmt: skip


@pytest.fixture(scope="module")
def outcomes(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Outcome]:
    require_ts_sdk()  # skip (or fail) here, not in a worker thread
    require_real_agents()
    bases = {case.id: tmp_path_factory.mktemp(case.id) for case in CASES}
    with ThreadPoolExecutor(WORKERS) as pool:
        futures = {case.id: pool.submit(_run_case, case, bases[case.id]) for case in CASES}
        return {case_id: future.result() for case_id, future in futures.items()}


def _cases(**where: Any) -> list[Any]:
    chosen = [c for c in CASES if all(getattr(c, k) == v for k, v in where.items())]
    return [pytest.param(c, id=c.id) for c in chosen]


# --- what every case must do ------------------------------------------------------------------


@pytest.mark.parametrize("case", _cases())
def test_the_turn_ends_as_the_answer_says(outcomes: dict[str, Outcome], case: Case) -> None:
    outcome = outcomes[case.id]
    run = outcome.ran()
    assert run.stop_reason == case.stop_reason
    assert run.agent_exit == {"code": 0, "signal": None}  # the bridge, after the editor left
    assert outcome.files == files_after(case.tool, case.mode == "approve")

    # One question, answered as the editor chose.
    [ask] = run.permission_requests
    answers = [m for m in run.sent() if "result" in m]
    assert len(answers) == 1
    outcome_sent = answers[0]["result"]["outcome"]
    if case.mode == "cancel":
        assert outcome_sent == {"outcome": "cancelled"}
        methods = [m.get("method") for m in run.sent()]
        assert methods.index("session/cancel") < run.sent().index(answers[0])
    else:
        [chosen] = [o for o in ask["options"] if o["optionId"] == outcome_sent["optionId"]]
        assert chosen["kind"].startswith("allow" if case.mode == "approve" else "reject")

    # Each call the editor saw ends with the status the agent last gave it (codex-acp gives
    # its declined or cancelled patch none after "in_progress": the turn just ends).
    calls = _calls(case, run)
    assert len(calls) == 1, calls
    [call] = calls.values()
    expected = _agent_status(outcomes[case.id], call["toolCallId"])
    if case.editor == 1 and expected == "cancelled":
        expected = "failed"  # v1 has no "cancelled" tool-call status
    assert call.get("status") == expected
    if case.mode == "approve":
        assert call.get("status") == "completed"


def _agent_status(outcome: Outcome, call_id: str) -> str | None:
    """The last status the agent itself sent for the call (in the bridge's log)."""
    status = None
    for record in outcome.log:
        message = record["message"]
        if record["direction"] != "agent->proxy" or message.get("method") != "session/update":
            continue
        update = message["params"]["update"]
        if update.get("toolCallId") == call_id and update.get("status") is not None:
            status = update["status"]
    return status


def _calls(case: Case, run: TsClientRun) -> dict[str, dict[str, Any]]:
    if case.editor == 1:
        return fold_v1_tool_calls(run.sdk_updates())
    return run.tool_calls()


@pytest.mark.parametrize("case", _cases())
def test_no_editor_rejected_a_message(outcomes: dict[str, Outcome], case: Case) -> None:
    run = outcomes[case.id].ran()
    assert run.errors == []  # the SDK dropped nothing and reported nothing
    assert run.unparsed_lines() == []
    assert [m for m in run.sent() if "error" in m] == []  # no request of the agent refused
    # The SDK handed the editor every update and question that came on the wire.
    wire = [m["params"] for m in run.received() if m.get("method") == "session/update"]
    assert len(run.updates) == len(wire)
    asked = [m for m in run.received() if m.get("method") == "session/request_permission"]
    assert len(run.permission_requests) == len(asked)


@pytest.mark.parametrize("case", _cases())
def test_every_message_validates_against_its_schema(
    outcomes: dict[str, Outcome], case: Case
) -> None:
    run = outcomes[case.id].ran()
    version: Protocol = "v1" if case.editor == 1 else "v2"
    for message, answered in run.received_with_methods():
        if "method" not in message:
            assert answered is not None, message  # every response answers a sent request
        problems = validate_message(message, version, response_method=answered)
        assert problems == [], (problems, message)


@pytest.mark.parametrize("case", _cases())
def test_no_process_is_left_and_nothing_leaves_the_machine(
    outcomes: dict[str, Outcome], case: Case
) -> None:
    outcome = outcomes[case.id]
    assert outcome.leftovers == []
    assert outcome.stray == []  # nothing asked for another host (the proxy variables point here)
    assert outcome.server_errors == []
    model = [r for r in outcome.requests if r.method == "POST" and r.path.split("?")[0].endswith(
        ("/responses", "/v1/messages")
    )]  # fmt: skip
    assert len(model) >= 1  # the agent did ask the fake model
    # The bridge spoke the version asked of it with the agent.
    [init] = [
        r["message"]
        for r in outcome.log
        if r["direction"] == "agent->proxy" and r["message"].get("id") is not None
        and "protocolVersion" in (r["message"].get("result") or {})
    ][:1]  # fmt: skip
    assert init["result"]["protocolVersion"] == case.agent_version


# --- what a person sees: the numbered items of issue 26 ---------------------------------------


def _text_of(item: dict[str, Any]) -> str:
    """The text of a content item as an editor renders it (a v1/v2 text block, a v1 diff)."""
    if item.get("type") == "content":
        inner = item.get("content") or {}
        return str(inner.get("text", "")) if inner.get("type") == "text" else ""
    if item.get("type") == "diff":
        return f"{item.get('path')}\n{item.get('oldText')}\n{item.get('newText')}"
    return ""


def _texts(items: list[dict[str, Any]] | None) -> str:
    return "\n".join(_text_of(item) for item in items or [])


def _v1_call_when_asked(run: TsClientRun) -> tuple[dict[str, Any], dict[str, Any]]:
    """The v1 call as the editor held it when the permission request came, and the request."""
    updates: list[dict[str, Any]] = []
    for message in run.received():
        if message.get("method") == "session/request_permission":
            call_id = message["params"]["toolCall"]["toolCallId"]
            return fold_v1_tool_calls(updates).get(call_id, {}), message["params"]
        if message.get("method") == "session/update":
            updates.append(message["params"]["update"])
    raise AssertionError("no permission request")


def _after_answer(run: TsClientRun) -> list[dict[str, Any]]:
    """The updates the editor received after it answered the permission request."""
    answered = False
    updates = []
    for entry in run.wire:
        message = entry.get("message") or {}
        if entry["direction"] == "outgoing" and "result" in message:
            answered = True
        elif answered and message.get("method") == "session/update":
            updates.append(message["params"]["update"])
    return updates


def item_1(outcomes: dict[str, Outcome]) -> None:
    """A v1 user approving claude's Bash sees the command (not ``[terminal …: output not
    available]``) in the request and in the call while the prompt is open."""
    for mode in MODES:
        run = outcomes[Case(1, "claude", "Bash", mode).id].ran()
        call, ask = _v1_call_when_asked(run)
        shown = _texts(ask["toolCall"].get("content"))
        assert "output not available" not in shown, shown
        assert COMMAND in shown, shown
        assert COMMAND in _texts(call.get("content")), call


def item_2(outcomes: dict[str, Outcome]) -> None:
    """codex's edit permission (no description: "Make edits?") carries the change to v1."""
    for mode in MODES:
        outcome = outcomes[Case(1, "codex", "apply_patch", mode).id]
        [ask] = outcome.ran().permission_requests
        content = ask["toolCall"].get("content") or []
        diffs = [
            item
            for item in content
            if item.get("type") == "diff" and item.get("path", "").endswith("notes.txt")
        ]
        as_diff = any("two" in d["oldText"] and "TWO" in d["newText"] for d in diffs)
        as_text = "-two" in _texts(content) and "+TWO" in _texts(content)
        assert as_diff or as_text, ask["toolCall"]


def _v1_diffs(outcome: Outcome) -> list[dict[str, Any]]:
    calls = fold_v1_tool_calls(outcome.ran().sdk_updates())
    return [
        {k: v for k, v in item.items() if k != "_meta"}
        for call in calls.values()
        for item in call.get("content") or []
        if item.get("type") == "diff"
    ]


def item_3(outcomes: dict[str, Outcome]) -> None:
    """An edit under the session's cwd reaches the v1 editor as a v1 diff, old and new text
    rebuilt from the file and the patch."""
    for case in (Case(1, "claude", "Edit", "approve"), Case(1, "codex", "apply_patch", "approve")):
        outcome = outcomes[case.id]
        path = str(outcome.setup.cwd / "notes.txt")
        expected = {"type": "diff", "path": path, "oldText": NOTES, "newText": EDITED_NOTES}
        assert expected in _v1_diffs(outcome), (case.id, _v1_diffs(outcome))


def item_4(outcomes: dict[str, Outcome]) -> None:
    """After the answer, codex's edit call has the title its permission subject set ("Edit
    files"), not the older "Editing files"."""
    for mode in ("approve",):
        outcome = outcomes[Case(1, "codex", "apply_patch", mode).id]
        run = outcome.ran()
        [call] = fold_v1_tool_calls(run.sdk_updates()).values()
        assert call["title"] == "Edit files", call["title"]
        titles = [u["title"] for u in _after_answer(run) if u.get("title") is not None]
        assert "Editing files" not in titles, titles


EMPTY_FENCE = re.compile(r"\A\s*(`{3,}|~{3,})[^\n]*\n\s*\1\s*\Z")


def item_5(outcomes: dict[str, Outcome]) -> None:
    """No empty code block for a terminal that has no command yet (claude's Bash, first
    sight), in any update or request the v1 editor got."""
    for case in CASES:
        if case.editor != 1 or case.tool != "Bash":
            continue
        run = outcomes[case.id].ran()
        items = [
            item
            for update in run.sdk_updates()
            for item in update.get("content") or []
            if isinstance(item, dict)
        ]
        items += [
            item for ask in run.permission_requests for item in ask["toolCall"].get("content") or []
        ]
        empty = [item for item in items if EMPTY_FENCE.match(_text_of(item))]
        assert empty == [], (case.id, empty)


def item_6(outcomes: dict[str, Outcome]) -> None:
    """A v2 editor gets a v1 agent's terminal (offered the ``_meta`` terminal extension by the
    bridge): ``terminal_update``, ``terminal_output_chunk`` with the output, and a
    ``terminal`` content item in the call."""
    agents: tuple[tuple[AgentName, str], ...] = (("claude", "Bash"), ("codex", "exec_command"))
    for agent, tool in agents:
        outcome = outcomes[Case(2, agent, tool, "approve").id]
        run = outcome.ran()
        terminals = {u["terminalId"] for u in run.sdk_updates("terminal_update")}
        assert terminals, (agent, "no terminal_update")
        output = b"".join(
            base64.b64decode(u["data"]) for u in run.sdk_updates("terminal_output_chunk")
        )
        assert b"hello" in output, (agent, output)
        [call] = run.tool_calls().values()
        items = [i for i in call.get("content") or [] if i.get("type") == "terminal"]
        assert [i["terminalId"] for i in items] == [*terminals][:1], (agent, call)
        # The bridge offered the extension to the agent.
        [init] = [
            r["message"] for r in outcome.log
            if r["direction"] == "proxy->agent" and r["message"].get("method") == "initialize"
        ]  # fmt: skip
        meta = init["params"]["clientCapabilities"].get("_meta") or {}
        assert meta.get("terminal_output") is True or meta.get("terminal_output_delta") is True


def item_6_v1_editor(outcomes: dict[str, Outcome]) -> None:
    """A v1 editor that offers ``_meta.terminal_output`` (Zed does) gets a v2 agent's terminal
    as the extension (``_meta.terminal_info``, ``terminal_output``, ``terminal_exit``), a live
    terminal, instead of fenced text."""
    run = outcomes[Case(1, "claude", "Bash", "approve", terminal_output=True).id].ran()
    metas = [u.get("_meta") or {} for u in run.sdk_updates() if "toolCallId" in u]
    info = [m["terminal_info"] for m in metas if "terminal_info" in m]
    output = [m["terminal_output"] for m in metas if "terminal_output" in m]
    exits = [m["terminal_exit"] for m in metas if "terminal_exit" in m]
    assert info and output and exits, metas
    assert any("hello" in str(o.get("data")) for o in output), output
    assert exits[-1].get("exit_code") == 0, exits


ITEMS: list[Any] = [
    pytest.param(item_1, id="item-1-bash-command-in-v1-permission"),
    pytest.param(item_2, id="item-2-codex-edit-permission-carries-the-diff"),
    pytest.param(item_3, id="item-3-edits-as-v1-diffs"),
    pytest.param(item_4, id="item-4-title-after-permission"),
    pytest.param(item_5, id="item-5-no-empty-code-block"),
    pytest.param(item_6, id="item-6-v2-editor-gets-v1-agent-terminals"),
    pytest.param(item_6_v1_editor, id="item-6-v1-editor-offering-terminal-output"),
]


@pytest.mark.parametrize("check", ITEMS)
def test_what_a_person_sees(
    outcomes: dict[str, Outcome], check: Callable[[dict[str, Outcome]], None]
) -> None:
    check(outcomes)
