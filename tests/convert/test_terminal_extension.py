"""The ``_meta`` terminal extension of v1 agents, for v2 editors (issue 26, items 6 and 7; D38
amended 2026-12-06).

A v1 agent offered ``clientCapabilities._meta.terminal_output`` (or ``terminal_output_delta``)
streams a command in its tool call's ``_meta``: ``terminal_info``, ``terminal_output`` (the
whole output so far), ``terminal_output_delta`` (appended), ``terminal_exit``. Through
``acp-toolcalls bridge`` a v2 editor gets display terminals (``terminal_update``,
``terminal_output_chunk``, a ``terminal`` item on the call), and what a v1 agent resends costs
it only what was added. ``convert --to v2``, the store reading a v1 log (``replay``) and
``inspect`` read the extension the same way.

The subprocess scenarios run the proxy with a scripted v1 agent (``interop/script_agent.py``)
whose messages copy the shapes claude-agent-acp 0.101.0 and codex-acp 2.6.0 send (their
``dist`` in tests/interop/agents), and a raw v2 editor (``interop/raw.py``) that folds what it
gets into a v2 ``ToolCallStore``.
"""

from __future__ import annotations

import base64
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from msgspec import UNSET

from acp_toolcalls import ToolCallStore, encode, v1
from acp_toolcalls.bridge import V1ToV2Bridge
from acp_toolcalls.check import validate_message
from acp_toolcalls.events import DiagnosticReported
from acp_toolcalls.report.model import ReportBuilder
from tests.interop.raw import RawClient
from tests.interop.sessions import bounded
from tests.report.test_inspect import plain

SCRIPT_AGENT = Path(__file__).resolve().parents[1] / "interop" / "script_agent.py"
SID = "sess-1"
ALLOW = {"optionId": "allow-once", "name": "Yes", "kind": "allow_once"}
REJECT = {"optionId": "reject", "name": "No", "kind": "reject_once"}


# --------------------------------------------------------------------------------------------
# Messages


def update(body: dict[str, Any], session_id: str = SID) -> dict[str, Any]:
    params = {"sessionId": session_id, "update": body}
    return {"jsonrpc": "2.0", "method": "session/update", "params": params}


def line(body: dict[str, Any]) -> bytes:
    return json.dumps(update(body)).encode()


def call_update(call_id: str, **fields: Any) -> dict[str, Any]:
    return {"sessionUpdate": "tool_call_update", "toolCallId": call_id, **fields}


def text_item(text: str) -> dict[str, Any]:
    return {"type": "content", "content": {"type": "text", "text": text}}


def claude_bash(call_id: str = "toolu_bash") -> list[dict[str, Any]]:
    """A Bash call as claude-agent-acp 0.101.0 reports it to a v1 client that offered the
    extension with ``terminal_output_delta`` (``dist/tool-calls/renderer.js``: ``toolCall``,
    ``permissionToolCall``, ``result``), the permission request between, answered ``allow``."""
    terminal = [{"terminalId": call_id, "type": "terminal"}]
    ask = {
        "sessionId": SID,
        "options": [ALLOW, REJECT],
        "toolCall": {
            "toolCallId": call_id,
            "name": "Bash",
            "status": "pending",
            "rawInput": {"command": "ls -la", "description": "List files"},
            "title": "ls -la",
            "kind": "execute",
            "content": terminal,
        },
    }
    return [
        {
            "send": update(
                {
                    "_meta": {
                        "claudeCode": {"toolName": "Bash"},
                        "terminal_info": {"terminal_id": call_id},
                    },
                    "toolCallId": call_id,
                    "sessionUpdate": "tool_call",
                    "name": "Bash",
                    "rawInput": {},
                    "status": "pending",
                    "title": "Terminal",
                    "kind": "execute",
                    "content": terminal,
                }
            )
        },
        {"send": update(call_update(call_id, title="ls -la"))},
        {
            "send": {
                "jsonrpc": "2.0",
                "id": 7,
                "method": "session/request_permission",
                "params": ask,
            }
        },
        {"await": {"id": 7}, "as": "answer"},
        {
            "send": update(
                call_update(
                    call_id,
                    _meta={"terminal_output_delta": {"terminal_id": call_id, "data": "a.ts\nb.ts"}},
                )
            )
        },
        {
            "send": update(
                call_update(
                    call_id,
                    _meta={
                        "claudeCode": {"toolName": "Bash"},
                        "terminal_exit": {"terminal_id": call_id, "exit_code": 0, "signal": None},
                    },
                    status="completed",
                    content=terminal,
                )
            )
        },
    ]


def codex_exec(call_id: str = "call_exec") -> list[dict[str, Any]]:
    """A command as codex-acp 2.6.0 reports it to a v1 client that declared
    ``terminal_output_delta`` (``dist/index.js``: ``terminalInfo``, ``outputChunk``,
    ``commandEndMeta``): the cwd announced, the output in deltas, the exit code."""
    terminal = [{"type": "terminal", "terminalId": call_id}]
    return [
        {
            "send": update(
                {
                    "sessionUpdate": "tool_call",
                    "toolCallId": call_id,
                    "title": "pytest -q",
                    "kind": "execute",
                    "status": "in_progress",
                    "rawInput": {"command": ["bash", "-lc", "pytest -q"]},
                    "content": terminal,
                    "_meta": {"terminal_info": {"cwd": "/work/repo", "terminal_id": call_id}},
                }
            )
        },
        *(
            {
                "send": update(
                    call_update(
                        call_id,
                        _meta={"terminal_output_delta": {"data": data, "terminal_id": call_id}},
                    )
                )
            }
            for data in ("..", "..F", "\n1 failed, 4 passed\n")
        ),
        {
            "send": update(
                call_update(
                    call_id,
                    status="failed",
                    _meta={
                        "terminal_exit": {"exit_code": 1, "signal": None, "terminal_id": call_id}
                    },
                )
            )
        },
    ]


# --------------------------------------------------------------------------------------------
# A v2 editor, the bridge, a scripted v1 agent


class Run:
    """One scripted session through the proxy: what the agent read, what the editor got."""

    def __init__(self, tmp: Path, steps: list[dict[str, Any]]) -> None:
        self.script, self.record = tmp / "script.json", tmp / "record.jsonl"
        agent_init = {"protocolVersion": 1, "agentInfo": {"name": "script", "version": "0"}}
        prelude: list[dict[str, Any]] = [
            {"await": {"method": "initialize"}, "as": "init"},
            {"send": {"jsonrpc": "2.0", "id": {"$id": "init"}, "result": agent_init}},
            {"await": {"method": "session/new"}, "as": "new"},
            {"send": {"jsonrpc": "2.0", "id": {"$id": "new"}, "result": {"sessionId": SID}}},
            {"await": {"method": "session/prompt"}, "as": "prompt"},
        ]
        end = {
            "send": {
                "jsonrpc": "2.0",
                "id": {"$id": "prompt"},
                "result": {"stopReason": "end_turn"},
            }
        }
        self.script.write_text(json.dumps([*prelude, *steps, end]), encoding="utf-8")
        self.command = (sys.executable, str(SCRIPT_AGENT), str(self.script), str(self.record))
        self.received: list[dict[str, Any]] = []
        self.sizes: list[int] = []  # bytes of each message the editor got after the prompt
        self.err = ""

    def go(self, answer: str | None = None) -> Run:
        async def scenario() -> None:
            client = await RawClient.start("--agent-version", "1", agent=self.command)
            init = {"protocolVersion": 2, "info": {"name": "editor", "version": "0"}}
            await client.send(
                {
                    "jsonrpc": "2.0",
                    "id": 0,
                    "method": "initialize",
                    "params": {**init, "capabilities": {}},
                }
            )
            assert (await client.answer_to(0))["result"]["protocolVersion"] == 2
            new = {"jsonrpc": "2.0", "id": 1, "method": "session/new", "params": {"cwd": "/tmp"}}
            await client.send(new)
            assert (await client.answer_to(1))["result"]["sessionId"] == SID
            client.received.clear()
            prompt = {"sessionId": SID, "prompt": [{"type": "text", "text": "go"}]}
            await client.send(
                {"jsonrpc": "2.0", "id": 30, "method": "session/prompt", "params": prompt}
            )
            while True:
                message = await client.receive()
                if message.get("method") == "session/request_permission":
                    outcome = {"outcome": "selected", "optionId": answer or "allow-once"}
                    await client.send(
                        {"jsonrpc": "2.0", "id": message["id"], "result": {"outcome": outcome}}
                    )
                body = message.get("params", {}).get("update", {})
                if body.get("sessionUpdate") == "state_update" and body.get("state") == "idle":
                    break
            code, err, rest = await client.finish()
            assert code == 0, err
            self.err = err
            self.received = client.received + [
                json.loads(x) for x in rest.splitlines() if x.strip()
            ]

        bounded(scenario())
        assert "Traceback" not in self.err and "a bug" not in self.err, self.err
        self.sizes = [len(json.dumps(m, separators=(",", ":"))) for m in self.received]
        return self

    def agent_read(self) -> list[dict[str, Any]]:
        return [json.loads(x) for x in self.record.read_bytes().splitlines()]

    def updates(self) -> list[dict[str, Any]]:
        return [m["params"]["update"] for m in self.received if m.get("method") == "session/update"]

    def store(self) -> ToolCallStore:
        store = ToolCallStore(version="v2")
        for message in self.received:
            assert validate_message(message, "v2") == [], message
            store.apply(message)
        return store


def output_of(store: ToolCallStore, terminal_id: str) -> bytes:
    terminal = store.sessions[SID].terminals[terminal_id]
    return bytes(terminal.output or b"")


# --------------------------------------------------------------------------------------------
# Item 6: the extension is offered, and read as display terminals


def test_a_v1_agent_is_offered_the_extension_on_a_v2_editors_behalf(tmp_path: Path) -> None:
    run = Run(tmp_path, []).go()
    init = next(m for m in run.agent_read() if m.get("method") == "initialize")
    caps = init["params"]["clientCapabilities"]
    assert caps["_meta"] == {"terminal_output": True, "terminal_output_delta": True}
    assert caps["terminal"] is False  # still no client-owned terminals (D38)
    assert validate_message(init, "v1") == []


def test_claudes_bash_call_reaches_a_v2_editor_as_a_display_terminal(tmp_path: Path) -> None:
    run = Run(tmp_path, claude_bash()).go()
    store = run.store()
    call = store.snapshot(SID, "toolu_bash")
    assert call.content == [v1_terminal_as_v2("toolu_bash")]
    assert call.meta == {"claudeCode": {"toolName": "Bash"}}  # the extension's keys consumed
    assert (call.title, call.status) == ("ls -la", "completed")
    assert output_of(store, "toolu_bash") == b"a.ts\nb.ts"
    terminal = store.sessions[SID].terminals["toolu_bash"]
    assert terminal.exited and terminal.fields["exitStatus"].exit_code == 0
    # The prompt's subject kept the terminal on the call (it was `content: []` before).
    [ask] = [m for m in run.received if m.get("method") == "session/request_permission"]
    subject = ask["params"]["subject"]["toolCall"]
    assert subject.get("content", [{"type": "terminal", "terminalId": "toolu_bash"}]) == [
        {"type": "terminal", "terminalId": "toolu_bash"}
    ]
    # No `_meta` patch carries output: v2 keeps only the last value of a key.
    for body in run.updates():
        assert not set(body.get("_meta") or {}) & {"terminal_output", "terminal_output_delta"}


def v1_terminal_as_v2(terminal_id: str) -> Any:
    from acp_toolcalls import v2

    return v2.Terminal(terminal_id=terminal_id)


def test_codexs_command_reaches_a_v2_editor_with_its_cwd_and_exit_code(tmp_path: Path) -> None:
    run = Run(tmp_path, codex_exec()).go()
    store = run.store()
    terminal = store.sessions[SID].terminals["call_exec"]
    assert terminal.fields["cwd"] == "/work/repo"
    assert output_of(store, "call_exec") == b"....F\n1 failed, 4 passed\n"
    assert terminal.fields["exitStatus"].exit_code == 1
    assert store.snapshot(SID, "call_exec").status == "failed"
    tags = [body["sessionUpdate"] for body in run.updates()]
    assert tags.count("terminal_output_chunk") == 3
    # The terminal exists before the call shows it; its exit comes before the call's status.
    assert tags.index("terminal_update") < tags.index("tool_call_update")


# --------------------------------------------------------------------------------------------
# Item 7: what a v1 agent resends costs the v2 editor what it adds


LINE = "collected 1 item :: tests/store/test_store.py::test_case PASSED [ 42%]\n"


def cumulative_output(updates: int, lines_per_update: int) -> list[dict[str, Any]]:
    steps: list[dict[str, Any]] = [
        {
            "send": update(
                {
                    "sessionUpdate": "tool_call",
                    "toolCallId": "run",
                    "title": "pytest",
                    "kind": "execute",
                    "status": "in_progress",
                    "content": [{"type": "terminal", "terminalId": "run"}],
                    "_meta": {"terminal_info": {"terminal_id": "run", "cwd": "/w"}},
                }
            )
        }
    ]
    for n in range(1, updates + 1):
        whole = LINE * (n * lines_per_update)
        meta = {"terminal_output": {"terminal_id": "run", "data": whole}}
        steps.append({"send": update(call_update("run", _meta=meta))})
    return steps


def test_a_resent_whole_terminal_output_costs_the_editor_what_was_added(tmp_path: Path) -> None:
    updates, per = 20, 100
    run = Run(tmp_path, cumulative_output(updates, per)).go()
    store = run.store()
    output = LINE * (updates * per)
    assert output_of(store, "run") == output.encode()
    sent = sum(
        size
        for size, m in zip(run.sizes, run.received, strict=True)
        if m.get("method") == "session/update"
        and m["params"]["update"].get("sessionUpdate") != "state_update"
    )
    # Before: each update's `_meta` carried the whole output, 10.5x the output in all. Base64
    # (v2 terminal bytes) alone is 4/3.
    assert sent / len(output) < 1.45, sent / len(output)


def test_resent_content_items_go_as_chunks_and_fold_to_the_same_content(tmp_path: Path) -> None:
    items = [text_item(f"match {n}: src/acp_toolcalls/file_{n}.py:{n}\n" * 20) for n in range(30)]
    steps: list[dict[str, Any]] = [
        {"send": update({"sessionUpdate": "tool_call", "toolCallId": "grep", "title": "grep"})}
    ]
    for n in range(1, len(items) + 1):
        steps.append({"send": update(call_update("grep", content=items[:n]))})
    steps.append({"send": update(call_update("grep", status="completed", content=items))})
    run = Run(tmp_path, steps).go()
    store = run.store()
    v1_store = ToolCallStore(version="v1")
    for step in steps:
        v1_store.apply(step["send"])
    assert store.snapshot(SID, "grep") == v1_store.snapshot(SID, "grep")
    tags = [body["sessionUpdate"] for body in run.updates()]
    assert tags.count("tool_call_content_chunk") == len(items) - 1
    sent = sum(run.sizes)
    content = len(json.dumps(items))
    assert sent / content < 1.5, sent / content  # before: 15.5x (every update resent it all)


# --------------------------------------------------------------------------------------------
# The reader (convert.TerminalReader): one per session, shared by the bridge and the store


def reader_of(**options: Any) -> Any:
    from acp_toolcalls.convert import TerminalReader  # (imported here: the scenarios above run
    # on a tree without it, to show what they fixed)

    return TerminalReader(**options)


def read(reader: Any, body: dict[str, Any]) -> tuple[Any, list[Any], list[str]]:
    from acp_toolcalls.convert import Losses

    losses = Losses(False)
    update = v1.SessionToolCallUpdate(
        tool_call_id="c", meta=body.get("_meta"), content=body.get("content", UNSET)
    )
    call, out = reader.read(update, "$", losses)
    return call, [json.loads(encode(u)) for u in out], [loss.reason for loss in losses.found]


def output_meta(data: str, key: str = "terminal_output") -> dict[str, Any]:
    return {"_meta": {key: {"terminal_id": "t", "data": data}}}


def b64(text: str) -> str:
    return base64.b64encode(text.encode()).decode()


def test_a_whole_output_resent_sends_what_it_adds_and_a_new_one_replaces() -> None:
    reader = reader_of()
    _, out, _ = read(reader, output_meta("one\n"))
    assert out == [
        {"sessionUpdate": "terminal_update", "terminalId": "t"},
        {"sessionUpdate": "terminal_output_chunk", "terminalId": "t", "data": b64("one\n")},
    ]
    _, out, _ = read(reader, output_meta("one\ntwo\n"))
    assert out == [
        {"sessionUpdate": "terminal_output_chunk", "terminalId": "t", "data": b64("two\n")}
    ]
    assert read(reader, output_meta("one\ntwo\n"))[1] == []  # the same again: nothing new
    _, out, losses = read(reader, output_meta("cleared\n"))  # a new whole output: a snapshot
    assert out == [
        {
            "sessionUpdate": "terminal_update",
            "terminalId": "t",
            "output": {"data": b64("cleared\n")},
        }
    ]
    assert losses == []


def test_new_output_under_terminal_output_is_appended_and_reported_once() -> None:
    """Zed appends `terminal_output`, and codex-acp sends its chunks under it to a client that
    offers only that key: a value that does not repeat the output before any resend."""
    reader = reader_of()
    read(reader, output_meta("..."))
    _, out, losses = read(reader, output_meta("F.."))
    assert out == [
        {"sessionUpdate": "terminal_output_chunk", "terminalId": "t", "data": b64("F..")}
    ]
    assert len(losses) == 1 and "appended" in losses[0]
    _, out, losses = read(reader, output_meta("...F..more"))  # stays appended, no new report
    assert out == [
        {"sessionUpdate": "terminal_output_chunk", "terminalId": "t", "data": b64("...F..more")}
    ]
    assert losses == []


def test_the_extensions_keys_are_consumed_and_other_meta_kept() -> None:
    reader = reader_of()
    body = {
        "_meta": {
            "claudeCode": {"toolName": "Bash"},
            "terminal_info": {"terminal_id": "t", "cwd": "/w", "label": "x"},
            "terminal_exit": {"terminal_id": "t", "exit_code": None, "signal": "SIGTERM"},
        },
        "content": [v1.Terminal(terminal_id="t"), v1.Terminal(terminal_id="client-owned")],
    }
    call, out, losses = read(reader, body)
    assert call.meta == {"claudeCode": {"toolName": "Bash"}}
    assert out == [
        {
            "sessionUpdate": "terminal_update",
            "terminalId": "t",
            "cwd": "/w",
            "exitStatus": {"signal": "SIGTERM"},
        }
    ]
    assert losses == ["not a key of the terminal extension: dropped"]
    patch, dropped = _to_v2(call)
    assert [item.terminal_id for item in patch.content] == ["t"]  # the client-owned one: D38
    assert "client-owned v1 terminal" in dropped[0]


def _to_v2(call: Any) -> tuple[Any, list[str]]:
    from acp_toolcalls.convert import tool_call_update_to_v2

    patch, losses = tool_call_update_to_v2(call)
    return patch, [loss.reason for loss in losses]


def test_a_value_not_of_the_extensions_shape_stays_in_meta_and_is_reported() -> None:
    reader = reader_of()
    bad = {"terminal_output": {"terminal_id": 5, "data": "x"}, "terminal_exit": "done"}
    call, out, losses = read(reader, {"_meta": bad})
    assert call.meta == bad and out == []
    assert len(losses) == 2 and all("kept in `_meta`" in reason for reason in losses)


def test_the_reader_remembers_a_bounded_number_of_terminals() -> None:
    reader = reader_of(max_terminals=2)
    reasons: list[str] = []
    for n in range(4):
        exit_ = {"terminal_id": f"t{n}", "exit_code": 0}
        reasons += read(reader, {"_meta": {"terminal_exit": exit_}})[2]
    assert len(reader.terminals) == 2 and any("forgot" in r for r in reasons)


# --------------------------------------------------------------------------------------------
# The store, `convert --to v2` and `inspect` read a v1 log the same way


def claude_log() -> list[bytes]:
    """The v1 lines of ``claude_bash`` and a cumulative resend, with a malformed value."""
    out = [
        json.dumps(step["send"]).encode()
        for step in claude_bash() + cumulative_output(3, 2)
        if "send" in step and step["send"].get("method") == "session/update"
    ]
    bad = call_update("run", _meta={"terminal_output": {"terminal_id": "run"}})
    return [*out, line(bad)]


def test_the_v1_store_holds_what_a_v2_store_holds_of_the_bridges_output() -> None:
    v1_store, v2_store, bridge = (
        ToolCallStore(version="v1"),
        ToolCallStore(version="v2"),
        V1ToV2Bridge(),
    )
    diagnostics: list[str] = []
    for data in claude_log():
        events = v1_store.apply(data)
        diagnostics += [e.reason for e in events if isinstance(e, DiagnosticReported)]
        for message in bridge.convert(data).messages:
            v2_store.apply(encode(message))
    assert v1_store.document() == v2_store.document()
    terminals = {t["terminalId"]: t for t in v1_store.document()["sessions"][SID]["terminals"]}
    assert base64.b64decode(terminals["run"]["output"]["data"]) == (LINE * 6).encode()
    assert terminals["toolu_bash"]["exitStatus"] == {"exitCode": 0}
    assert any("kept in `_meta`" in reason for reason in diagnostics)


def test_replay_of_a_v1_log_shows_the_terminal(tmp_path: Path) -> None:
    log = tmp_path / "claude.jsonl"
    log.write_bytes(b"".join(data + b"\n" for data in claude_log()))
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "acp_toolcalls.cli",
            "replay",
            "--protocol",
            "v1",
            "--json",
            str(log),
        ],
        capture_output=True,
        check=True,
    )
    document = json.loads(done.stdout)
    [call] = [c for c in document["sessions"][SID]["toolCalls"] if c["toolCallId"] == "toolu_bash"]
    assert call["content"] == [{"type": "terminal", "terminalId": "toolu_bash"}]
    assert b"kept in `_meta`" in done.stderr  # the malformed value, on its line


def test_convert_to_v2_of_a_v1_log_writes_display_terminals(tmp_path: Path) -> None:
    log = tmp_path / "claude.jsonl"
    log.write_bytes(b"".join(data + b"\n" for data in claude_log()))
    done = subprocess.run(
        [sys.executable, "-m", "acp_toolcalls.cli", "convert", "--to", "v2", str(log)],
        capture_output=True,
        check=True,
    )
    store = ToolCallStore(version="v2")
    for text in done.stdout.splitlines():
        message = json.loads(text)
        assert validate_message(message, "v2") == [], message
        store.apply(message)
    assert output_of(store, "toolu_bash") == b"a.ts\nb.ts"
    assert output_of(store, "run") == (LINE * 6).encode()
    assert b"kept in `_meta`" in done.stderr


def test_inspect_of_a_v1_log_shows_the_terminals_output() -> None:
    builder = ReportBuilder(version="v1")
    for number, data in enumerate(claude_log(), 1):
        builder.feed(number, data)
    report = plain(builder.finish())  # the details as JSON
    [side] = report["sides"]
    texts = {
        t["id"]: "".join(e["o"][1] for e in t["details"]["entries"] if "o" in e)
        for t in side["terminals"]
    }
    assert texts["toolu_bash"] == "a.ts\nb.ts"
    assert texts["run"] == LINE * 6
    [card] = [c for c in report["calls"][0] if c["id"] == "toolu_bash"]
    assert {"type": "terminal", "terminalId": "toolu_bash"} in card["details"]["items"]


@pytest.mark.parametrize("fast", [True, False], ids=["fast-path", "tables"])
def test_both_paths_of_the_bridge_send_the_same(
    fast: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    from acp_toolcalls.bridge import _to_v2

    monkeypatch.setattr(_to_v2, "_FAST_PATHS", fast)
    bridge = V1ToV2Bridge()
    out = [encode(m) for data in claude_log() for m in bridge.convert(data).messages]
    monkeypatch.setattr(_to_v2, "_FAST_PATHS", not fast)
    other = V1ToV2Bridge()
    assert out == [encode(m) for data in claude_log() for m in other.convert(data).messages]


def test_the_offer_keeps_the_v2_clients_own_meta() -> None:
    from acp_toolcalls.lifecycle import TO_V1, map_params

    own = {"zed.dev": {"x": 1}}
    params = {"protocolVersion": 2, "info": {"name": "e", "version": "0"}}
    _, mapped = map_params(TO_V1, "initialize", {**params, "capabilities": {"_meta": own}})
    meta = mapped.value["clientCapabilities"]["_meta"]
    assert meta == {**own, "terminal_output": True, "terminal_output_delta": True}
    assert own == {"zed.dev": {"x": 1}}  # the client's value is not changed
