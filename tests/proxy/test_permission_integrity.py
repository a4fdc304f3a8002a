"""Permission integrity of ``acp-toolcalls bridge``, over real subprocesses (issue 14).

An approval reaches only the request the user saw, at most once, and the user sees what they
approve. Each scenario runs the proxy with a scripted agent (``interop/script_agent.py``, which
records every line it receives) and a raw editor (``interop/raw.py``), in both converting
pairings (v1 editor / v2 agent, v2 editor / v1 agent) and, where the proxy has a say there, in
same-version pass-through.
"""

from __future__ import annotations

import asyncio
import json
import sys
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest

from tests.interop.raw import RawClient
from tests.interop.sessions import bounded

SCRIPT_AGENT = Path(__file__).resolve().parents[1] / "interop" / "script_agent.py"
SID = "sess-1"
ALLOW = {"optionId": "allow", "name": "Allow", "kind": "allow_once"}
REJECT = {"optionId": "reject", "name": "Reject", "kind": "reject_once"}

CONVERTING = [
    pytest.param((1, 2), id="v1-editor-v2-agent"),
    pytest.param((2, 1), id="v2-editor-v1-agent"),
]
PASS_THROUGH = [
    pytest.param((1, 1), id="pass-through-v1"),
    pytest.param((2, 2), id="pass-through-v2"),
]


# --------------------------------------------------------------------------------------------
# The two sides' messages, in either version


def editor_init(version: int) -> dict[str, Any]:
    params: dict[str, Any] = (
        {"protocolVersion": 1, "clientCapabilities": {}}
        if version == 1
        else {"protocolVersion": 2, "info": {"name": "editor", "version": "0"}, "capabilities": {}}
    )
    return {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": params}


def agent_init(version: int) -> dict[str, Any]:
    if version == 1:
        return {"protocolVersion": 1, "agentInfo": {"name": "script", "version": "0"}}
    return {"protocolVersion": 2, "info": {"name": "script", "version": "0"}, "capabilities": {}}


def session_new(version: int) -> dict[str, Any]:
    params: dict[str, Any] = {"cwd": "/tmp"}
    if version == 1:
        params["mcpServers"] = []
    return {"jsonrpc": "2.0", "id": 1, "method": "session/new", "params": params}


def update(body: dict[str, Any]) -> dict[str, Any]:
    params = {"sessionId": SID, "update": body}
    return {"jsonrpc": "2.0", "method": "session/update", "params": params}


def tool_call(version: int, call_id: str, title: str) -> dict[str, Any]:
    tag = "tool_call" if version == 1 else "tool_call_update"
    body = {"sessionUpdate": tag, "toolCallId": call_id, "title": title, "kind": "read"}
    return update({**body, "status": "pending"})


def ask(
    version: int,
    request_id: Any,
    call_id: str,
    title: str,
    options: list[dict[str, Any]] | None = None,
    **v2_params: Any,
) -> dict[str, Any]:
    """An agent's permission request about ``call_id``; v2: ``title`` is the prompt."""
    params: dict[str, Any] = {"sessionId": SID, "options": options or [ALLOW, REJECT]}
    if version == 1:
        params["toolCall"] = {"toolCallId": call_id, "title": title}
    else:
        subject = {"type": "tool_call", "toolCall": {"toolCallId": call_id}}
        params.update({"title": title, "subject": subject, **v2_params})
    return {
        "jsonrpc": "2.0",
        "id": request_id,
        "method": "session/request_permission",
        "params": params,
    }


def chosen(request_id: Any, option: str | None) -> dict[str, Any]:
    outcome = {"outcome": "selected", "optionId": option} if option else {"outcome": "cancelled"}
    return {"jsonrpc": "2.0", "id": request_id, "result": {"outcome": outcome}}


def shown_title(version: int, request: dict[str, Any]) -> str:
    """The title an editor of ``version`` shows for a permission request."""
    params = request["params"]
    return str(params["toolCall"]["title"] if version == 1 else params["title"])


# --------------------------------------------------------------------------------------------
# A session: a scripted agent behind the proxy, and the editor


class Session:
    def __init__(self, tmp: Path, editor: int, agent: int, steps: list[dict[str, Any]]) -> None:
        self.editor, self.agent = editor, agent
        self.script, self.record = tmp / "script.json", tmp / "record.jsonl"
        prelude: list[dict[str, Any]] = [
            {"await": {"method": "initialize"}, "as": "init"},
            {"send": {"jsonrpc": "2.0", "id": {"$id": "init"}, "result": agent_init(agent)}},
            {"await": {"method": "session/new"}, "as": "new"},
            {"send": {"jsonrpc": "2.0", "id": {"$id": "new"}, "result": {"sessionId": SID}}},
        ]
        steps = (
            steps
            if any("await" in s and s["await"].get("method") == "initialize" for s in steps)
            else prelude + steps
        )
        self.script.write_text(json.dumps(steps), encoding="utf-8")
        self.command = (sys.executable, str(SCRIPT_AGENT), str(self.script), str(self.record))

    async def start(self, *options: str) -> RawClient:
        client = await RawClient.start(
            "--agent-version", str(self.agent), *options, agent=self.command
        )
        await client.send(editor_init(self.editor))
        answer = await client.answer_to(0)
        assert answer["result"]["protocolVersion"] == self.editor, answer
        await client.send(session_new(self.editor))
        assert (await client.answer_to(1))["result"]["sessionId"] == SID
        return client

    def received(self) -> list[Any]:
        """Every line the agent read, as JSON values (a line that is not JSON as bytes)."""
        out: list[Any] = []
        for line in self.record.read_bytes().splitlines():
            try:
                out.append(json.loads(line))
            except ValueError:
                out.append(line)
        return out

    def answers(self, request_id: Any) -> list[dict[str, Any]]:
        """The answers the agent received under ``request_id`` (same JSON type, so `true` is
        not `1`)."""
        return [
            m
            for m in self.received()
            if isinstance(m, dict)
            and "method" not in m
            and "id" in m
            and _same_id(m["id"], request_id)
        ]


def _same_id(a: Any, b: Any) -> bool:
    return type(a) is type(b) and a == b


def run(
    tmp: Path,
    pairing: tuple[int, int],
    steps: list[dict[str, Any]],
    editor: Callable[[RawClient, Session], Awaitable[None]],
    *options: str,
) -> tuple[Session, RawClient, int, str]:
    session = Session(tmp, *pairing, steps)

    async def scenario() -> tuple[RawClient, int, str]:
        client = await session.start(*options)
        await editor(client, session)
        code, err, rest = await client.finish()
        client.received += [json.loads(line) for line in rest.splitlines() if line.strip()]
        return client, code, err

    client, code, err = bounded(scenario())
    assert "Traceback" not in err and "a bug" not in err, err
    return session, client, code, err


def _is_tag(tag: str) -> Callable[[dict[str, Any]], bool]:
    def found(message: dict[str, Any]) -> bool:
        params: Any = message.get("params")
        body = params.get("update") if message.get("method") == "session/update" else None
        return isinstance(body, dict) and body.get("sessionUpdate") == tag

    return found


def permission_requests(client: RawClient) -> list[dict[str, Any]]:
    return [m for m in client.received if m.get("method") == "session/request_permission"]


# --------------------------------------------------------------------------------------------
# 1. An approval is routed to the request the user saw, from the first byte on


@pytest.mark.parametrize("pairing", CONVERTING + PASS_THROUGH)
def test_an_approval_reaches_the_request_the_user_saw_even_for_a_request_before_initialize(
    tmp_path: Path, pairing: tuple[int, int]
) -> None:
    editor_version, agent_version = pairing
    steps: list[dict[str, Any]] = [
        {"await": {"method": "initialize"}, "as": "init"},
        # A harmless request before the agent has answered initialize, under its id 1...
        {"send": ask(agent_version, 1, "read", "Read README.md?")},
        {"send": {"jsonrpc": "2.0", "id": {"$id": "init"}, "result": agent_init(agent_version)}},
        {"await": {"method": "session/new"}, "as": "new"},
        {"send": {"jsonrpc": "2.0", "id": {"$id": "new"}, "result": {"sessionId": SID}}},
        # ... and a dangerous one after session/new, under its id 99.
        {"send": ask(agent_version, 99, "rm", "Run `rm -rf ~`?")},
    ]

    async def editor(client: RawClient, session: Session) -> None:
        first = await client.request("session/request_permission")
        second = await client.request("session/request_permission")
        assert first["id"] != second["id"]  # never two pending requests under one id
        titles = {shown_title(editor_version, r): r["id"] for r in (first, second)}
        await client.send(chosen(titles["Read README.md?"], "allow"))  # the user allows the read
        await client.send(chosen(titles["Run `rm -rf ~`?"], "reject"))  # and refuses rm -rf
        await asyncio.sleep(0.2)

    session, _client, code, _err = run(tmp_path, pairing, steps, editor)
    assert code == 0
    assert [a["result"]["outcome"] for a in session.answers(1)] == [
        {"outcome": "selected", "optionId": "allow"}
    ]
    assert [a["result"]["outcome"] for a in session.answers(99)] == [
        {"outcome": "selected", "optionId": "reject"}
    ]


# --------------------------------------------------------------------------------------------
# 2. Never two answers for one request


@pytest.mark.parametrize("pairing", CONVERTING)
def test_a_request_reusing_a_pending_id_is_refused_and_the_first_gets_its_one_answer(
    tmp_path: Path, pairing: tuple[int, int]
) -> None:
    editor_version, agent_version = pairing
    steps = [
        {"send": ask(agent_version, 5, "read", "Read README.md?")},
        {"send": ask(agent_version, 5, "rm", "Run `rm -rf ~`?")},  # the same id, still pending
    ]

    async def editor(client: RawClient, session: Session) -> None:
        request = await client.request("session/request_permission")
        assert shown_title(editor_version, request) == "Read README.md?"
        await asyncio.sleep(0.3)  # the second request never comes
        await client.send(chosen(request["id"], "allow"))
        await asyncio.sleep(0.2)

    session, client, code, err = run(tmp_path, pairing, steps, editor)
    assert len(permission_requests(client)) == 1
    answers = session.answers(5)
    assert [a.get("error", {}).get("code") for a in answers] == [-32600, None]
    assert answers[1]["result"]["outcome"]["optionId"] == "allow"  # the request the user saw
    assert "reuses the id of a request still waiting" in err and code == 0


@pytest.mark.parametrize("pairing", CONVERTING)
def test_past_the_pending_cap_the_oldest_is_withdrawn_from_the_editor_and_answered_once(
    tmp_path: Path, pairing: tuple[int, int]
) -> None:
    _editor_version, agent_version = pairing
    cap = 1_000  # Limits.max_pending_permissions
    steps = [{"send": ask(agent_version, n, f"c{n}", f"Call {n}?")} for n in range(cap + 1)]

    async def editor(client: RawClient, session: Session) -> None:
        oldest = await client.request("session/request_permission")
        withdrawn = await client.until(lambda m: m.get("method") == "$/cancel_request")
        assert withdrawn["params"]["requestId"] == oldest["id"]
        await client.send(chosen(oldest["id"], "allow"))  # the user clicks Allow, too late
        await asyncio.sleep(0.3)

    session, client, _code, err = run(tmp_path, pairing, steps, editor)
    assert [a["result"]["outcome"] for a in session.answers(0)] == [{"outcome": "cancelled"}]
    assert len(permission_requests(client)) == cap + 1
    assert "answered already" in err or "dropped" in err


# --------------------------------------------------------------------------------------------
# 3. A cancel is a cancel, with or without an id


@pytest.mark.parametrize("pairing", CONVERTING)
@pytest.mark.parametrize("with_id", [True, False], ids=["cancel-with-id", "cancel"])
def test_a_session_cancel_settles_pending_permissions_and_a_late_allow_is_dropped(
    tmp_path: Path, pairing: tuple[int, int], with_id: bool
) -> None:
    _editor_version, agent_version = pairing
    steps = [{"send": ask(agent_version, 7, "edit", "Edit a.py?")}]

    async def editor(client: RawClient, session: Session) -> None:
        request = await client.request("session/request_permission")
        cancel: dict[str, Any] = {
            "jsonrpc": "2.0",
            "method": "session/cancel",
            "params": {"sessionId": SID},
        }
        if with_id:
            cancel["id"] = 42
        await client.send(cancel)
        if with_id:
            assert "result" in await client.answer_to(42)  # the id gets its answer
        withdrawn = await client.until(lambda m: m.get("method") == "$/cancel_request")
        assert withdrawn["params"]["requestId"] == request["id"]
        await client.send(chosen(request["id"], "allow"))  # late
        await asyncio.sleep(0.3)

    session, _client, code, _err = run(tmp_path, pairing, steps, editor)
    assert [a["result"]["outcome"] for a in session.answers(7)] == [{"outcome": "cancelled"}]
    cancels = [
        m for m in session.received() if isinstance(m, dict) and m.get("method") == "session/cancel"
    ]
    assert len(cancels) == 1 and "id" not in cancels[0]  # the agent gets the notification
    assert code == 0


# --------------------------------------------------------------------------------------------
# 4. A v1 editor sees what it approves; 6. a synthetic call ends


def test_a_v1_editor_sees_the_command_it_approves_and_gets_the_call_back(tmp_path: Path) -> None:
    command = {
        "type": "command",
        "command": "rm -rf ~",
        "cwd": "/home/user",
        "toolCallId": "read",
    }
    request = ask(2, 3, "read", "Run `rm -rf ~`?", description="Frees disk space.")
    request["params"]["subject"] = command
    steps = [{"send": tool_call(2, "read", "Read README.md")}, {"send": request}]

    async def editor(client: RawClient, session: Session) -> None:
        asked = await client.request("session/request_permission")
        shown = asked["params"]["toolCall"]
        assert shown["toolCallId"] == "read"
        assert shown["title"] == "Run `rm -rf ~`?"
        texts = [item["content"]["text"] for item in shown["content"]]
        assert (
            texts[0] == "Frees disk space."
            and "$ rm -rf ~" in texts[1]
            and "/home/user" in texts[1]
        )
        await client.send(chosen(asked["id"], "reject"))
        restored = await client.until(_is_tag("tool_call_update"))
        assert restored["params"]["update"] == {
            "sessionUpdate": "tool_call_update",
            "toolCallId": "read",
            "title": "Read README.md",
            "content": [],
        }

    session, _client, code, _err = run(tmp_path, (1, 2), steps, editor)
    assert [a["result"]["outcome"] for a in session.answers(3)] == [
        {"outcome": "selected", "optionId": "reject"}
    ]
    assert code == 0


@pytest.mark.parametrize(("option", "status"), [("allow", "completed"), ("reject", "failed")])
def test_a_synthetic_permission_call_ends_with_the_outcome(
    tmp_path: Path, option: str, status: str
) -> None:
    request = ask(2, 4, "x", "Continue?")
    del request["params"]["subject"]

    async def editor(client: RawClient, session: Session) -> None:
        asked = await client.request("session/request_permission")
        call_id = asked["params"]["toolCall"]["toolCallId"]
        await client.send(chosen(asked["id"], option))
        end = await client.until(_is_tag("tool_call_update"))
        assert end["params"]["update"] == {
            "sessionUpdate": "tool_call_update",
            "toolCallId": call_id,
            "status": status,
        }

    _session, _client, code, _err = run(tmp_path, (1, 2), [{"send": request}], editor)
    assert code == 0


# --------------------------------------------------------------------------------------------
# 5. Repeated option ids


@pytest.mark.parametrize("pairing", CONVERTING + PASS_THROUGH)
def test_an_option_id_offered_twice_reaches_the_editor_once(
    tmp_path: Path, pairing: tuple[int, int]
) -> None:
    _editor_version, agent_version = pairing
    twins = [{**ALLOW, "optionId": "a"}, {**REJECT, "optionId": "a"}, {**REJECT, "optionId": "b"}]
    steps = [{"send": ask(agent_version, 6, "edit", "Edit a.py?", twins)}]

    async def editor(client: RawClient, session: Session) -> None:
        asked = await client.request("session/request_permission")
        assert [o["optionId"] for o in asked["params"]["options"]] == ["a", "b"]
        assert asked["params"]["options"][0]["kind"] == "allow_once"  # the first one is kept
        await client.send(chosen(asked["id"], "b"))
        await asyncio.sleep(0.2)

    session, _client, code, err = run(tmp_path, pairing, steps, editor)
    assert [a["result"]["outcome"]["optionId"] for a in session.answers(6)] == ["b"]
    assert "duplicate" in err or "--verbose" not in err  # reported (verbose notes)
    assert code == 0


# --------------------------------------------------------------------------------------------
# 7. Smaller holes


@pytest.mark.parametrize("pairing", CONVERTING)
def test_an_answer_with_id_true_is_not_an_answer_to_request_1(
    tmp_path: Path, pairing: tuple[int, int]
) -> None:
    _editor_version, agent_version = pairing
    steps = [{"send": ask(agent_version, 50, "edit", "Edit a.py?")}]

    async def editor(client: RawClient, session: Session) -> None:
        asked = await client.request("session/request_permission")
        assert asked["id"] == 1
        await client.send(chosen(True, "allow"))
        await asyncio.sleep(0.3)

    session, _client, _code, _err = run(tmp_path, pairing, steps, editor)
    assert session.answers(50) == []


@pytest.mark.parametrize("pairing", CONVERTING)
def test_a_permission_request_with_a_null_id_is_answered_invalid_request(
    tmp_path: Path, pairing: tuple[int, int]
) -> None:
    _editor_version, agent_version = pairing
    steps = [{"send": ask(agent_version, None, "edit", "Edit a.py?")}]

    async def editor(client: RawClient, session: Session) -> None:
        await asyncio.sleep(0.5)

    session, client, _code, _err = run(tmp_path, pairing, steps, editor)
    assert permission_requests(client) == []
    [answer] = session.answers(None)
    assert answer["error"]["code"] == -32600


@pytest.mark.parametrize("pairing", CONVERTING)
def test_a_request_as_a_notification_and_a_notification_as_a_request_never_pass_raw(
    tmp_path: Path, pairing: tuple[int, int]
) -> None:
    editor_version, agent_version = pairing
    no_id = ask(agent_version, 0, "edit", "Edit a.py?")
    del no_id["id"]
    with_id = {**tool_call(agent_version, "c", "Read a.py"), "id": 8}
    steps = [{"send": no_id}, {"send": with_id}]

    async def editor(client: RawClient, session: Session) -> None:
        call = await client.until(lambda m: m.get("method") == "session/update")
        tag = call["params"]["update"]["sessionUpdate"]
        assert tag == ("tool_call" if editor_version == 1 else "tool_call_update")  # converted
        assert "id" not in call

    session, client, _code, err = run(tmp_path, pairing, steps, editor)
    assert permission_requests(client) == []
    assert "request but came without an id" in err
    assert [a["result"] for a in session.answers(8)] == [{}]


def test_a_reject_option_of_a_kind_v1_lacks_never_leaves_a_v1_editor_only_allow(
    tmp_path: Path,
) -> None:
    custom = {"optionId": "no", "name": "No, and tell the agent why", "kind": "_reject_with_reason"}
    steps = [{"send": ask(2, 12, "edit", "Edit a.py?", [ALLOW, custom])}]

    async def editor(client: RawClient, session: Session) -> None:
        await asyncio.sleep(0.5)

    session, client, _code, _err = run(tmp_path, (1, 2), steps, editor)
    assert permission_requests(client) == []  # not sent with only "Allow" left
    assert [a["result"]["outcome"] for a in session.answers(12)] == [{"outcome": "cancelled"}]


# --------------------------------------------------------------------------------------------
# 8. Lone surrogates; 9. editor lines that used to get no answer


def _chunk(version: int, text_escape: str) -> str:
    """A message chunk whose text is written with ``text_escape`` as it is (JSON escapes)."""
    body = {"sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": "@"}}
    if version == 2:
        body["messageId"] = "m1"
    return json.dumps(update(body)).replace('"@"', f'"{text_escape}"')


def _prompt(request_id: int, text: bytes, extra: bytes = b"") -> bytes:
    """A ``session/prompt`` line whose text is ``text`` as it is (bytes, JSON escapes)."""
    params = {"sessionId": SID, "prompt": [{"type": "text", "text": "@"}]}
    line = {"jsonrpc": "2.0", "id": request_id, "method": "session/prompt", "params": params}
    return json.dumps(line).encode().replace(b'"@"', b'"' + text + b'"' + extra)


@pytest.mark.parametrize("pairing", CONVERTING + PASS_THROUGH)
def test_half_an_emoji_from_a_javascript_agent_does_not_end_the_session(
    tmp_path: Path, pairing: tuple[int, int]
) -> None:
    _editor_version, agent_version = pairing
    steps: list[dict[str, Any]] = [
        {"raw": _chunk(agent_version, "smile \\ud83d")},
        {"raw": _chunk(agent_version, "\\ude00 after")},
        {"send": ask(agent_version, 9, "edit", "Edit a.py?")},
    ]

    async def editor(client: RawClient, session: Session) -> None:
        await client.request("session/request_permission")  # the session goes on

    _session, client, code, _err = run(tmp_path, pairing, steps, editor)
    texts = [
        m["params"]["update"]["content"]["text"]
        for m in client.received
        if m.get("method") == "session/update"
        and m["params"]["update"]["sessionUpdate"] == "agent_message_chunk"
    ]
    assert texts[0].startswith("smile ") and texts[1].endswith(" after")
    assert code == 0
    assert not any("error" in m and m.get("id") is None for m in client.received)


@pytest.mark.parametrize("pairing", CONVERTING)
def test_every_editor_request_line_gets_exactly_one_answer_with_its_id(
    tmp_path: Path, pairing: tuple[int, int]
) -> None:
    editor_version, agent_version = pairing
    deep = b'{"jsonrpc":"2.0","id":22,"method":"_vendor/deep","params":'
    lines = {
        20: _prompt(20, b"\xff"),  # invalid UTF-8 in a string
        21: _prompt(21, b"x", b',"n":1e400'),  # a number out of range
        22: deep + b"[" * 100_000 + b"]" * 100_000 + b"}",
        23: b'{"jsonrpc":"2.0","id":23,"method":5}',
    }
    steps: list[dict[str, Any]] = [{"await": {"method": "session/prompt"}, "as": "prompt"}]
    if agent_version == 2:
        steps.append(
            {"send": {"jsonrpc": "2.0", "id": {"$id": "prompt"}, "result": {"messageId": "u1"}}}
        )
        steps.append(
            {
                "send": update(
                    {"sessionUpdate": "state_update", "state": "idle", "stopReason": "end_turn"}
                )
            }
        )
    else:
        steps.append(
            {
                "send": {
                    "jsonrpc": "2.0",
                    "id": {"$id": "prompt"},
                    "result": {"stopReason": "end_turn"},
                }
            }
        )

    async def editor(client: RawClient, session: Session) -> None:
        for request_id, line in lines.items():
            await client.send(line)
            answer = await client.answer_to(request_id)
            assert answer["error"]["code"] in (-32700, -32600), answer
        await client.send(b"[]")
        empty = await client.until(lambda m: "error" in m)
        assert empty["id"] is None and empty["error"]["code"] == -32600
        await client.send(_prompt(30, b"hi \\ud83d"))  # a lone surrogate: still a prompt
        if editor_version == 1:
            assert (await client.answer_to(30))["result"]["stopReason"] == "end_turn"
        else:
            assert "messageId" in (await client.answer_to(30))["result"]
            await client.until(
                lambda m: m.get("params", {}).get("update", {}).get("state") == "idle"
            )

    session, client, code, _err = run(tmp_path, pairing, steps, editor)
    answered = [
        m.get("id") for m in client.received if "method" not in m and m.get("id") not in (0, 1)
    ]
    assert sorted(answered, key=repr) == sorted([20, 21, 22, 23, None, 30], key=repr)  # one each
    prompts = [
        m for m in session.received() if isinstance(m, dict) and m.get("method") == "session/prompt"
    ]
    assert len(prompts) == 1 and prompts[0]["params"]["prompt"][0]["text"] == "hi \ufffd"
    assert code == 0
