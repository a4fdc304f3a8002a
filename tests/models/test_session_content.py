"""The ``session`` content variant (issue 28, part 3): a tool call's reference to another
session it operates on, such as a subagent's (``{"type":"session","sessionId","_meta"?}``).

- Both versions' models read it as a known item (``SessionReference``) and write it back as
  it came; lint knows it; ``validate`` finds nothing in a v2 log that uses it.
- ``convert --to v2`` keeps it one to one; ``--to v1`` sends a text item naming the session
  (and its title, from the session's ``session_info_update``, when known), with a reported
  loss, and every v1 message validates against the v1 schema. Agent text in it never becomes
  Markdown markup.
- ``replay --json`` keeps it as a known item, and keeps the calls of a session the client
  never created (the subagent's) under their own session.
- Through ``acp-toolcalls bridge``: a v1 editor gets the text item (in a ``tool_call`` and after
  a ``tool_call_content_chunk``), valid v1, and the loss is reported; a v2 editor of a v1
  agent gets the item one to one.
- ``inspect`` shows a session item as a link to that session's calls when the log has them
  (the session filter), plain text otherwise (a real headless Chromium).
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from acp_toolcalls import v1, v2
from acp_toolcalls.bridge import V1ToV2Bridge, V2ToV1Bridge
from acp_toolcalls.check import validate_message
from acp_toolcalls.codec import decode_message, encode
from acp_toolcalls.convert import content_to_v1, content_to_v2
from acp_toolcalls.store import ToolCallStore
from tests.interop.raw import RawClient
from tests.interop.scripted import SID, ScriptedAgent, answer, update
from tests.interop.sessions import bounded

FIXTURE = Path(__file__).parents[1] / "data" / "session-content.jsonl"
CHILD = "sess_child_1"
REFERENCE = {"type": "session", "sessionId": CHILD, "_meta": {"example.com/role": "tester"}}
LOSS = "v1 editors on today's SDKs reject a `session` content item"


def _cli(*args: str, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    command = [sys.executable, "-m", "acp_toolcalls", *args]
    return subprocess.run(
        command, input=stdin, capture_output=True, text=True, timeout=120, check=False
    )


def _call(content: list[Any], tag: str = "tool_call_update") -> dict[str, Any]:
    body = {"sessionUpdate": tag, "toolCallId": "c1", "title": "Delegate", "content": content}
    params = {"sessionId": SID, "update": body}
    return {"jsonrpc": "2.0", "method": "session/update", "params": params}


# --------------------------------------------------------------------------------------------
# Models, conversion of one item


@pytest.mark.parametrize(("version", "model"), [("v2", v2), ("v1", v1)])
def test_both_models_read_it_as_a_known_item_and_write_it_back(version: str, model: Any) -> None:
    tag = "tool_call_update" if version == "v2" else "tool_call"
    raw = _call([REFERENCE], tag)
    decoded = decode_message(json.dumps(raw).encode(), version=version)  # type: ignore[arg-type]
    assert decoded.diagnostics == ()
    message = decoded.value
    (item,) = message.params.update.content
    assert type(item) is model.SessionReference
    assert (item.session_id, item.meta) == (CHILD, REFERENCE["_meta"])
    assert json.loads(encode(message)) == raw


def test_v1_to_v2_is_one_to_one_and_v2_to_v1_names_the_session() -> None:
    item = v1.SessionReference(session_id=CHILD, meta={"k": 1})
    converted, losses = content_to_v2(item)
    assert converted == v2.SessionReference(session_id=CHILD, meta={"k": 1}) and not losses
    items, losses = content_to_v1(v2.SessionReference(session_id=CHILD), path="$.content[0]")
    assert items == [v1.Content(content=v1.TextContent(text=f"Session `{CHILD}`"))]
    assert [(loss.path, loss.code) for loss in losses] == [("$.content[0]", "lossy-mapping")]
    assert LOSS in losses.losses[0].reason
    # strict mode too: it is the mapping, not something v1 cannot hold
    assert content_to_v1(v2.SessionReference(session_id=CHILD), strict=True)[0] == items


def test_agent_text_in_the_v1_text_never_becomes_markup() -> None:
    store_line = {
        "jsonrpc": "2.0",
        "method": "session/update",
        "params": {
            "sessionId": "s`x`*",
            "update": {"sessionUpdate": "session_info_update", "title": "*a* [b](http://c)\n<i>"},
        },
    }
    bridge = V2ToV1Bridge()
    bridge.convert(json.dumps(store_line).encode())
    out = bridge.convert(json.dumps(_call([{"type": "session", "sessionId": "s`x`*"}])).encode())
    (message,) = [json.loads(encode(m)) for m in out.messages]
    text = message["params"]["update"]["content"][0]["content"]["text"]
    assert text == "Session \u201c\\*a\\* \\[b\\]\\(http\\:\\/\\/c\\) \\<i\\>\u201d (``s`x`*``)"


def test_the_bridge_names_the_session_with_its_subagent_update_title() -> None:
    subagent = {
        "sessionUpdate": "subagent_update",
        "sessionId": CHILD,
        "title": "Test runner",
        "state": {"state": "running", "background": []},
    }
    params = {"sessionId": SID, "update": subagent}
    bridge = V2ToV1Bridge()  # no `subagents`: the update itself is a reported loss
    announced = bridge.convert(json.dumps({"jsonrpc": "2.0", "method": "session/update",
                                           "params": params}).encode())  # fmt: skip
    assert not announced.messages and announced.losses
    out = bridge.convert(json.dumps(_call([REFERENCE])).encode())
    (message,) = [json.loads(encode(m)) for m in out.messages]
    text = message["params"]["update"]["content"][0]["content"]["text"]
    assert text == f"Session \u201cTest runner\u201d (`{CHILD}`)"


# --------------------------------------------------------------------------------------------
# The CLI on the fixture


def test_validate_finds_nothing_in_a_v2_log_that_uses_it() -> None:
    done = _cli("validate", str(FIXTURE))
    assert done.returncode == 0, done.stdout + done.stderr
    assert "no findings" in done.stdout + done.stderr


def test_convert_to_v1_names_the_session_and_its_title_with_a_reported_loss() -> None:
    done = _cli("convert", "--to", "v1", str(FIXTURE))
    assert done.returncode == 0, done.stderr
    lines = [json.loads(line) for line in done.stdout.splitlines()]
    methods: dict[str, str] = {}
    texts: list[str] = []
    for message in lines:
        if "method" in message and "id" in message:
            methods[json.dumps(message["id"])] = message["method"]
        answered = None if "method" in message else methods.get(json.dumps(message["id"]))
        assert validate_message(message, "v1", response_method=answered) == [], message
        body = message.get("params", {}).get("update", {})
        for item in body.get("content") or []:
            assert item["type"] != "session"
            if item["type"] == "content" and item["content"]["type"] == "text":
                texts.append(item["content"]["text"])
    assert f"Session \u201cTest runner\u201d (`{CHILD}`)" in texts  # titled before it was named
    assert "Session `sess_child_2`" in texts  # no title known
    assert done.stderr.count(LOSS) == 2, done.stderr  # the call, then its chunk's re-send


def test_convert_to_v2_keeps_it_one_to_one(tmp_path: Path) -> None:
    v1_log = tmp_path / "v1.jsonl"
    init = {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {"protocolVersion": 1}}
    v1_log.write_text(
        json.dumps(init) + "\n" + json.dumps(_call([REFERENCE], "tool_call")) + "\n",
        encoding="utf-8",
    )
    done = _cli("convert", "--to", "v2", str(v1_log))
    assert done.returncode == 0, done.stderr
    (update_line,) = [json.loads(x) for x in done.stdout.splitlines() if "session/update" in x]
    assert update_line["params"]["update"]["content"] == [REFERENCE]
    assert "session" not in done.stderr


def test_replay_json_keeps_it_as_a_known_item_and_the_subagents_calls_per_session() -> None:
    done = _cli("replay", "--json", str(FIXTURE))
    assert done.returncode == 0 and done.stderr == "", done.stderr
    sessions = json.loads(done.stdout)["sessions"]
    assert list(sessions) == ["sess_parent", CHILD]  # the child was never created by session/new
    (delegate,) = sessions["sess_parent"]["toolCalls"]
    assert delegate["content"][1:] == [REFERENCE, {"type": "session", "sessionId": "sess_child_2"}]
    (child,) = sessions[CHILD]["toolCalls"]
    assert (child["toolCallId"], child["status"]) == ("toolu_child_01", "completed")
    store = ToolCallStore()
    for line in FIXTURE.read_bytes().splitlines():
        store.apply(line)
    held = store.tool_call("sess_parent", "toolu_delegate")
    assert held is not None
    assert [type(item) for item in held.content[1:]] == [v2.SessionReference] * 2
    assert store.session_title(CHILD) == "Test runner" and store.session_title("x") is None


def test_a_v1_stream_gives_the_title_too_and_a_v1_session_item_is_known() -> None:
    init = {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {"protocolVersion": 1}}
    info = {"sessionUpdate": "session_info_update", "title": "Kid"}
    store = ToolCallStore(version="auto")
    store.apply(json.dumps(init).encode())
    store.apply(
        json.dumps({**_call([], "tool_call"), "params": {"sessionId": "kid", "update": info}})
    )
    store.apply(json.dumps(_call([REFERENCE], "tool_call")).encode())
    assert store.session_title("kid") == "Kid"
    held = store.tool_call(SID, "c1")
    assert held is not None and held.content == [
        v2.SessionReference(session_id=CHILD, meta={"example.com/role": "tester"})
    ]
    store.apply(
        json.dumps(
            {
                **_call([], "tool_call"),
                "params": {"sessionId": "kid", "update": {**info, "title": None}},
            }
        )
    )
    assert store.session_title("kid") is None  # `null` forgets it
    assert "kid" not in store.sessions  # a title is no tool-call state


def test_replay_table_names_the_session_its_title_and_its_calls() -> None:
    done = _cli("replay", "--width", "300", str(FIXTURE))
    assert done.returncode == 0, done.stderr
    assert f"session {CHILD} \u201cTest runner\u201d (1 tool call(s) in this log)" in done.stdout
    assert "session sess_child_2 (no tool call(s) in this log)" in done.stdout
    headings = [line.strip() for line in done.stdout.splitlines() if line.startswith("session ")]
    assert headings == ["session sess_parent", f"session {CHILD}"]  # the child has its table


# --------------------------------------------------------------------------------------------
# Through `acp-toolcalls bridge`

V2_AGENT = {"protocolVersion": 2, "info": {"name": "agent", "version": "2"}, "capabilities": {}}
V1_AGENT = {"protocolVersion": 1, "agentCapabilities": {}, "authMethods": []}
END_TURN = {"stopReason": "end_turn"}


def _steps(agent: int, bodies: list[dict[str, Any]]) -> list[dict[str, Any]]:
    steps = [
        {"await": {"method": "initialize"}, "as": "init"},
        answer("init", V2_AGENT if agent == 2 else V1_AGENT),
        {"await": {"method": "session/new"}, "as": "new"},
        answer("new", {"sessionId": SID}),
        {"await": {"method": "session/prompt"}, "as": "prompt"},
    ]
    if agent == 1:
        return [*steps, *(update(body) for body in bodies), answer("prompt", END_TURN)]
    idle = {"sessionUpdate": "state_update", "state": "idle", "stopReason": "end_turn"}
    steps.append(answer("prompt", {"messageId": "u1"}))
    return [*steps, *(update(body) for body in [*bodies, idle])]


def _through_bridge(
    tmp_path: Path, editor: int, agent: int, bodies: list[dict[str, Any]]
) -> tuple[list[dict[str, Any]], str]:
    """The ``session/update`` bodies an editor of version ``editor`` receives in a turn in
    which the agent sends ``bodies`` (every message checked against the editor's schema),
    and the bridge's stderr."""
    scripted = ScriptedAgent(tmp_path, _steps(agent, bodies))
    version: Any = f"v{editor}"
    init: dict[str, Any] = {"protocolVersion": 1, "clientCapabilities": {}}
    new: dict[str, Any] = {"cwd": "/tmp", "mcpServers": []}
    if editor == 2:
        init = {"protocolVersion": 2, "info": {"name": "e", "version": "0"}, "capabilities": {}}
        new = {"cwd": "/tmp"}
    prompt = {"sessionId": SID, "prompt": [{"type": "text", "text": "go"}]}
    asked: dict[int, str] = {}

    async def scenario() -> tuple[list[dict[str, Any]], str]:
        client = await RawClient.start(
            "--agent-version", str(agent), "--verbose", agent=scripted.command
        )
        for request_id, method, params in [
            (0, "initialize", init),
            (1, "session/new", new),
            (2, "session/prompt", prompt),
        ]:
            asked[request_id] = method
            await client.send(
                {"jsonrpc": "2.0", "id": request_id, "method": method, "params": params}
            )
            reply = await client.answer_to(request_id)
            assert "result" in reply, reply
        code, err, rest = await client.finish()
        assert code == 0 and "Traceback" not in err, err
        return client.received + [json.loads(x) for x in rest.splitlines() if x.strip()], err

    received, err = bounded(scenario())
    for message in received:
        method = None if "method" in message else asked.get(message["id"])
        assert validate_message(message, version, response_method=method) == [], message
    updates = [m["params"]["update"] for m in received if m.get("method") == "session/update"]
    return updates, err


def test_a_v1_editor_gets_text_naming_the_session_and_the_loss_is_reported(
    tmp_path: Path,
) -> None:
    bodies: list[dict[str, Any]] = [
        {"sessionUpdate": "session_info_update", "title": "Test runner"},
        {
            "sessionUpdate": "tool_call_update",
            "toolCallId": "c1",
            "title": "Delegate",
            "status": "in_progress",
            "content": [{"type": "session", "sessionId": SID}],
        },
        {
            "sessionUpdate": "tool_call_content_chunk",
            "toolCallId": "c1",
            "content": {"type": "session", "sessionId": "sess-other"},
        },
    ]
    updates, err = _through_bridge(tmp_path, 1, 2, bodies)
    assert updates[0] == bodies[0]
    calls = [u for u in updates if u["sessionUpdate"] in ("tool_call", "tool_call_update")]
    assert calls[0]["sessionUpdate"] == "tool_call"
    named = f"Session \u201cTest runner\u201d (`{SID}`)"
    # v1 has no append: the last message about the call carries its whole content
    texts = [i["content"]["text"] for i in calls[-1]["content"]]
    assert texts == [named, "Session `sess-other`"]
    assert 1 <= err.count(LOSS) <= 2 and "$.params.update.content[1]" in err, err


def test_a_v2_editor_of_a_v1_agent_gets_the_item_one_to_one(tmp_path: Path) -> None:
    body = {
        "sessionUpdate": "tool_call",
        "toolCallId": "c1",
        "title": "Delegate",
        "content": [REFERENCE],
    }
    updates, err = _through_bridge(tmp_path, 2, 1, [body])
    (call,) = [u for u in updates if u["sessionUpdate"] == "tool_call_update"]
    assert call["content"] == [REFERENCE], call
    assert LOSS not in err


def test_the_in_process_bridges_agree() -> None:
    to_v1 = V2ToV1Bridge().convert(json.dumps(_call([REFERENCE])).encode())
    (item,) = json.loads(encode(to_v1.messages[0]))["params"]["update"]["content"]
    assert item == {
        "type": "content",
        "content": {"type": "text", "text": f"Session `{CHILD}`"},
        "_meta": REFERENCE["_meta"],
    }
    to_v2 = V1ToV2Bridge().convert(json.dumps(_call([REFERENCE], "tool_call")).encode())
    assert json.loads(encode(to_v2.messages[0]))["params"]["update"]["content"] == [REFERENCE]
    assert not to_v2.losses


# --------------------------------------------------------------------------------------------
# inspect, in a real headless Chromium


def test_inspect_links_a_session_item_to_that_sessions_calls(tmp_path: Path) -> None:
    from tests.report.test_inspect_browser import new_browser, open_report, wait_for

    page = tmp_path / "report.html"
    done = _cli("inspect", str(FIXTURE), "-o", str(page))
    assert done.returncode == 0, done.stderr
    driver = new_browser()
    try:
        open_report(driver, page)
        ids = "return [...document.querySelectorAll('#cards > .card')].map(c => c.dataset.id)"
        # every session's calls are shown, the subagent's (never created by the client) too
        assert driver.execute_script(ids) == ["toolu_delegate", "toolu_child_01"]
        card = '.card[data-id="toolu_delegate"] '
        linked = driver.find_element(
            "css selector", card + f'a.session-link[data-session="{CHILD}"]'
        )
        assert linked.text == f"session {CHILD} \u201cTest runner\u201d"
        plain = driver.find_element(
            "css selector", card + '.session-ref[data-session="sess_child_2"]'
        )
        assert plain.text == "session sess_child_2 (no calls of it in this log)"
        assert plain.find_elements("css selector", "a") == []
        driver.execute_script("delete document.body.dataset.shown")
        linked.click()
        wait_for(driver, "return document.body.dataset.shown", "the list drawn again")
        assert driver.execute_script(ids) == ["toolu_child_01"]
        chosen = driver.execute_script("return document.getElementById('f-session').value")
        assert chosen == CHILD
    finally:
        driver.quit()
