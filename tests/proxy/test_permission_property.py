"""Permission integrity of the connection core, as a property (issue 14).

For any interleaving of agent permission requests (reused, colliding and early ids, requests
before the agent has answered ``initialize``), editor answers (to requests it was shown, late,
twice, under ids JSON-RPC does not allow), cancels from either side and ticks:

- the editor never holds two open requests under one id;
- an answer the editor gives reaches exactly the agent request the editor was shown (its
  agent id, the option the editor chose), at most once;
- an agent request is answered at most once, and the proxy's own answers approve nothing.

Each agent request carries a unique tool-call id (``call-N``), which is how a request the editor
is shown is traced back to the one the agent sent.
"""

from __future__ import annotations

import json
from typing import Any, Literal, cast

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from acp_toolcalls.proxy import ConnectionCore

SID = "sess-1"
AGENT_IDS = [1, 2, 5, 99, "a"]
ODD_IDS = [True, 1.0, None, "1", 12345]
OUTCOMES = ["allow", "reject", "cancelled", "error", "garbage"]

_action = st.one_of(
    st.tuples(st.just("ask"), st.sampled_from(AGENT_IDS)),
    st.tuples(st.just("answer"), st.integers(0, 30), st.sampled_from(OUTCOMES)),
    st.tuples(st.just("odd-answer"), st.sampled_from(ODD_IDS), st.sampled_from(OUTCOMES)),
    st.tuples(st.just("session-cancel"), st.booleans()),
    st.tuples(st.just("agent-cancel"), st.sampled_from(AGENT_IDS)),
    st.tuples(st.just("tick"), st.just(0)),
)


def _init(version: int) -> dict[str, Any]:
    if version == 1:
        params: dict[str, Any] = {"protocolVersion": 1, "clientCapabilities": {}}
    else:
        params = {"protocolVersion": 2, "info": {"name": "e", "version": "0"}, "capabilities": {}}
    return {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": params}


def _agent_init(version: int) -> dict[str, Any]:
    if version == 1:
        return {"protocolVersion": 1, "agentInfo": {"name": "a", "version": "0"}}
    return {"protocolVersion": 2, "info": {"name": "a", "version": "0"}, "capabilities": {}}


def _ask(version: int, request_id: Any, call_id: str) -> dict[str, Any]:
    options = [
        {"optionId": "allow", "name": "Allow", "kind": "allow_once"},
        {"optionId": "reject", "name": "Reject", "kind": "reject_once"},
    ]
    params: dict[str, Any] = {"sessionId": SID, "options": options}
    if version == 1:
        params["toolCall"] = {"toolCallId": call_id, "title": f"Ask {call_id}"}
    else:
        params["title"] = f"Ask {call_id}"
        params["subject"] = {"type": "tool_call", "toolCall": {"toolCallId": call_id}}
    return {
        "jsonrpc": "2.0",
        "id": request_id,
        "method": "session/request_permission",
        "params": params,
    }


def _answer(request_id: Any, outcome: str) -> bytes:
    if outcome == "garbage":
        return b'{"jsonrpc":"2.0","id":' + json.dumps(request_id).encode() + b',"result":'
    if outcome == "error":
        body: dict[str, Any] = {"error": {"code": -32800, "message": "cancelled"}}
    elif outcome == "cancelled":
        body = {"result": {"outcome": {"outcome": "cancelled"}}}
    else:
        body = {"result": {"outcome": {"outcome": "selected", "optionId": outcome}}}
    return json.dumps({"jsonrpc": "2.0", "id": request_id, **body}).encode()


def _key(request_id: Any) -> str:
    return json.dumps(request_id)  # `true`, `1.0` and `1` differ, as on the wire


def _call_of(message: dict[str, Any], editor_version: int) -> str:
    params = message["params"]
    if editor_version == 1:
        return str(params["toolCall"]["toolCallId"])
    return str(params["subject"]["toolCall"]["toolCallId"])


class World:
    """Both sides of one ConnectionCore, and what each was sent."""

    def __init__(self, editor: int, agent: int) -> None:
        self.editor, self.agent = editor, agent
        self.core = ConnectionCore(agent_version=cast(Literal[1, 2], agent))
        self.now = 0.0
        self.sent: dict[str, Any] = {}  # call id -> the agent id it asked under
        self.outstanding: dict[str, str] = {}  # agent id key -> call id of the open request
        self.reuses: dict[str, list[str]] = {}  # agent id key -> calls sent while it is open
        self.answered: dict[str, int] = {}  # call id -> answers the agent got for it
        self.shown: list[tuple[Any, str]] = []  # every request the editor got: (id, call)
        self.open: dict[str, str] = {}  # editor id key -> call id, while the editor may answer
        self.initialized = False
        self.asks = 0
        self._take(self.core.from_client(json.dumps(_init(editor)).encode(), self.now), None)

    # -- the sides act

    def agent_init(self) -> None:
        init = next(m for m in self.to_agent_requests if m.get("method") == "initialize")
        line = {"jsonrpc": "2.0", "id": init["id"], "result": _agent_init(self.agent)}
        self.initialized = True
        self._take(self.core.from_agent(json.dumps(line).encode(), self.now), None)

    def ask(self, request_id: Any) -> None:
        self.asks += 1
        call = f"call-{self.asks}"
        self.sent[call] = request_id
        key = _key(request_id)
        if key in self.outstanding:  # a reuse of a pending id: it must be refused
            self.reuses.setdefault(key, []).append(call)
        else:
            self.outstanding[key] = call
        out = self.core.from_agent(
            json.dumps(_ask(self.agent, request_id, call)).encode(), self.now
        )
        self._take(out, None)

    def answer(self, index: int, outcome: str) -> None:
        if not self.shown:
            return
        editor_id, call = self.shown[index % len(self.shown)]
        self.open.pop(_key(editor_id), None)
        out = self.core.from_client(_answer(editor_id, outcome), self.now)
        self._take(out, (call, outcome))

    def odd_answer(self, request_id: Any, outcome: str) -> None:
        out = self.core.from_client(_answer(request_id, outcome), self.now)
        self._take(out, ("<none>", outcome))

    def session_cancel(self, with_id: bool) -> None:
        cancel: dict[str, Any] = {
            "jsonrpc": "2.0",
            "method": "session/cancel",
            "params": {"sessionId": SID},
        }
        if with_id:
            cancel["id"] = 777
        self._take(self.core.from_client(json.dumps(cancel).encode(), self.now), None)

    def agent_cancel(self, request_id: Any) -> None:
        cancel = {
            "jsonrpc": "2.0",
            "method": "$/cancel_request",
            "params": {"requestId": request_id},
        }
        self._take(self.core.from_agent(json.dumps(cancel).encode(), self.now), None)

    def tick(self) -> None:
        self.now += 1.0
        self._take(self.core.poll(self.now), None)

    # -- what the proxy wrote, checked

    to_agent_requests: list[dict[str, Any]]

    def _take(self, out: Any, editor_answer: tuple[str, str] | None) -> None:
        self.to_agent_requests = getattr(self, "to_agent_requests", [])
        for line in out.to_client:
            message = json.loads(line)
            if message.get("method") == "session/request_permission":
                key = _key(message["id"])
                assert key not in self.open, f"two open requests under one id: {message['id']!r}"
                call = _call_of(message, self.editor)
                self.open[key] = call
                self.shown.append((message["id"], call))
            elif message.get("method") == "$/cancel_request":
                withdrawn = _key(message["params"]["requestId"])
                assert withdrawn in self.open, (
                    f"withdrew a request the editor does not have: {message}"
                )
                del self.open[withdrawn]
        for line in out.to_agent:
            message = json.loads(line)
            if "method" in message:
                self.to_agent_requests.append(message)
                continue
            self._agent_got(message, editor_answer)

    def _agent_got(self, message: dict[str, Any], editor_answer: tuple[str, str] | None) -> None:
        key = _key(message.get("id"))
        if self.reuses.get(key) and message.get("error", {}).get("code") == -32600:
            # The refusal of a request that reused a pending id: its own (one) answer.
            refused = self.reuses[key].pop(0)
            self.answered[refused] = self.answered.get(refused, 0) + 1
            return
        call = self.outstanding.pop(key, None)
        assert call is not None, f"an answer for no open agent request: {message}"
        self.answered[call] = self.answered.get(call, 0) + 1
        assert self.answered[call] == 1, f"{call} answered twice"
        outcome = message.get("result", {}).get("outcome", {}) if "result" in message else {}
        if outcome.get("outcome") == "selected":  # only the editor selects, for what it saw
            assert editor_answer is not None, f"the proxy approved on its own: {message}"
            assert editor_answer == (call, outcome["optionId"]), (
                f"the editor's answer {editor_answer} reached {call}: {message}"
            )
        elif editor_answer is not None and editor_answer[0] != call:
            raise AssertionError(f"the editor's answer about {editor_answer[0]} reached {call}")


def _run(editor: int, agent: int, before_init: list[Any], after_init: list[Any]) -> World:
    world = World(editor, agent)
    for step in before_init:
        if step[0] == "ask":
            world.ask(step[1])
    world.agent_init()
    for step in after_init:
        kind = step[0]
        if kind == "ask":
            world.ask(step[1])
        elif kind == "answer":
            world.answer(step[1], step[2])
        elif kind == "odd-answer":
            world.odd_answer(step[1], step[2])
        elif kind == "session-cancel":
            world.session_cancel(step[1])
        elif kind == "agent-cancel":
            world.agent_cancel(step[1])
        else:
            world.tick()
    return world


@settings(deadline=None)
@given(
    pairing=st.sampled_from([(1, 2), (2, 1)]),
    before_init=st.lists(st.tuples(st.just("ask"), st.sampled_from(AGENT_IDS)), max_size=3),
    after_init=st.lists(_action, max_size=40),
)
def test_every_answer_reaches_the_request_the_editor_saw_at_most_once(
    pairing: tuple[int, int], before_init: list[Any], after_init: list[Any]
) -> None:
    world = _run(*pairing, before_init, after_init)
    assert all(count == 1 for count in world.answered.values())


def test_the_checker_catches_two_open_requests_under_one_editor_id(monkeypatch: Any) -> None:
    """The checker can fail: ids allocated for the editor that collide (issue 14, item 1)."""
    from acp_toolcalls.models import request_key
    from acp_toolcalls.proxy._routing import RequestIds

    def collide(self: RequestIds, pending: Any) -> int:
        self.pending[1] = pending
        self.by_origin[request_key(pending.origin_id)] = 1
        return 1

    monkeypatch.setattr(RequestIds, "allocate", collide)
    world = World(1, 2)
    world.agent_init()
    world.ask(1)
    with pytest.raises(AssertionError, match="two open requests under one id"):
        world.ask(99)


def test_the_checker_catches_an_answer_routed_to_another_request(monkeypatch: Any) -> None:
    """The checker can fail: an answer mapped back to the wrong pending request."""
    from acp_toolcalls.proxy._routing import Pending, RequestIds

    def newest(self: RequestIds, request_id: Any) -> Pending | None:
        if not self.pending:
            return None
        return self.pending.pop(next(reversed(self.pending)))

    world = World(1, 2)
    world.agent_init()
    world.ask(1)
    world.ask(2)
    monkeypatch.setattr(RequestIds, "pop", newest)
    with pytest.raises(AssertionError, match="reached call-2"):
        world.answer(0, "allow")
