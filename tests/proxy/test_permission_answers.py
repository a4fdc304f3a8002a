"""Ambiguous permission answers and capabilities the bridge denied (issue 27, items 6 and 10).

Over real subprocesses, with the harness of tests/proxy/test_permission_integrity.py (a scripted
agent that records every line it reads, a raw editor):

- Only an exactly offered option id in an unambiguous answer is a selection (D34, amended
  2026-12-06). An answer that repeats a key (which of two ``outcome``s did the editor mean?),
  has both ``result`` and ``error``, or names an id never offered (``"Allow"`` for ``"allow"``)
  reaches the agent as exactly one ``cancelled``, with one stderr note, in every pairing.
- A v2 agent's ``fs/*`` and ``terminal/*`` requests through the bridge to a v1 editor are
  answered ``-32601`` with one note: the bridge offered neither (v2 has no client file system
  or terminals), and the editor never sees them. The converse (a v1 agent, a v2 editor, D38)
  holds too.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any, cast

import pytest

from acp_toolcalls import V1ToV2Bridge, V2ToV1Bridge
from acp_toolcalls.schema import validate_message
from tests.interop.raw import RawClient
from tests.proxy.test_permission_integrity import (
    CONVERTING,
    PASS_THROUGH,
    SID,
    Session,
    ask,
    chosen,
    run,
)

NOTE = "ambiguous answer to a permission request"
CANCELLED = {"outcome": "cancelled"}


def _selected(option: str) -> str:
    return json.dumps({"outcome": "selected", "optionId": option})


def _line(request_id: Any, body: str) -> bytes:
    return b'{"jsonrpc":"2.0","id":' + json.dumps(request_id).encode() + b"," + body.encode() + b"}"


# What the editor answers (its request id filled in): each is no selection of an offered id.
AMBIGUOUS: dict[str, Any] = {
    # An editor whose reader keeps the first key meant the opposite of one keeping the last.
    "outcome-twice-reject-first": lambda rid: _line(
        rid, f'"result":{{"outcome":{_selected("reject")},"outcome":{_selected("allow")}}}'
    ),
    "outcome-twice-allow-first": lambda rid: _line(
        rid, f'"result":{{"outcome":{_selected("allow")},"outcome":{_selected("reject")}}}'
    ),
    "option-id-twice": lambda rid: _line(
        rid,
        '"result":{"outcome":{"outcome":"selected","optionId":"reject","optionId":"allow"}}',
    ),
    "result-twice": lambda rid: _line(
        rid,
        f'"result":{{"outcome":{_selected("reject")}}},"result":{{"outcome":{_selected("allow")}}}',
    ),
    "result-and-error": lambda rid: _line(
        rid,
        f'"result":{{"outcome":{_selected("allow")}}},'
        '"error":{"code":-32603,"message":"Internal error"}',
    ),
    "error-and-result": lambda rid: _line(
        rid,
        '"error":{"code":-32800,"message":"Request cancelled"},'
        f'"result":{{"outcome":{_selected("allow")}}}',
    ),
    "not-offered": lambda rid: _line(rid, f'"result":{{"outcome":{_selected("allow_always")}}}'),
    "case-changed": lambda rid: _line(rid, f'"result":{{"outcome":{_selected("Allow")}}}'),
}


def _valid_answers(session: Session, request_id: Any) -> list[dict[str, Any]]:
    """The agent's answers under ``request_id``, each valid against the agent's schema."""
    answers = session.answers(request_id)
    version = cast(Any, f"v{session.agent}")
    for answer in answers:
        found = validate_message(answer, version, response_method="session/request_permission")
        assert found == [], (answer, found)
    return answers


@pytest.mark.parametrize("answer", list(AMBIGUOUS.values()), ids=list(AMBIGUOUS))
@pytest.mark.parametrize("pairing", CONVERTING + PASS_THROUGH)
def test_an_ambiguous_answer_reaches_the_agent_as_one_cancelled(
    tmp_path: Path, pairing: tuple[int, int], answer: Any
) -> None:
    _editor_version, agent_version = pairing
    steps = [{"send": ask(agent_version, 7, "edit", "Edit a.py?")}]

    async def editor(client: RawClient, session: Session) -> None:
        asked = await client.request("session/request_permission")
        await client.send(answer(asked["id"]))
        await asyncio.sleep(0.3)

    session, _client, code, err = run(tmp_path, pairing, steps, editor)
    assert code == 0, err
    assert [a.get("result") for a in _valid_answers(session, 7)] == [{"outcome": CANCELLED}]
    assert err.count(NOTE) == 1, err


@pytest.mark.parametrize("pairing", CONVERTING + PASS_THROUGH)
def test_an_exactly_offered_id_still_selects_without_a_note(
    tmp_path: Path, pairing: tuple[int, int]
) -> None:
    _editor_version, agent_version = pairing
    steps = [
        {"send": ask(agent_version, 7, "edit", "Edit a.py?")},
        {"send": ask(agent_version, 8, "rm", "Run rm?")},
    ]

    async def editor(client: RawClient, session: Session) -> None:
        first = await client.request("session/request_permission")
        second = await client.request("session/request_permission")
        await client.send(chosen(first["id"], "allow"))
        await client.send(chosen(second["id"], "reject"))
        await asyncio.sleep(0.3)

    session, _client, code, err = run(tmp_path, pairing, steps, editor)
    assert code == 0, err
    outcomes = [a["result"]["outcome"] for a in _valid_answers(session, 7)]
    assert outcomes == [{"outcome": "selected", "optionId": "allow"}]
    outcomes = [a["result"]["outcome"] for a in _valid_answers(session, 8)]
    assert outcomes == [{"outcome": "selected", "optionId": "reject"}]
    assert NOTE not in err


def _batch_of_two_answers(tmp_path: Path, pairing: tuple[int, int]) -> tuple[Session, str]:
    """Two permission requests (7, 8), answered in one batch line: 7 rejected, 8 with its
    ``outcome`` twice; what the agent read, and stderr."""
    _editor_version, agent_version = pairing
    steps = [
        {"send": ask(agent_version, 7, "edit", "Edit a.py?")},
        {"send": ask(agent_version, 8, "rm", "Run rm?")},
    ]

    async def editor(client: RawClient, session: Session) -> None:
        first = await client.request("session/request_permission")
        second = await client.request("session/request_permission")
        bad = AMBIGUOUS["outcome-twice-reject-first"](second["id"])
        await client.send(
            b"[" + json.dumps(chosen(first["id"], "reject")).encode() + b"," + bad + b"]"
        )
        await asyncio.sleep(0.3)

    session, _client, code, err = run(tmp_path, pairing, steps, editor)
    assert code == 0, err
    return session, err


@pytest.mark.parametrize("pairing", PASS_THROUGH)
def test_in_a_pass_through_batch_only_the_ambiguous_answer_is_cancelled(
    tmp_path: Path, pairing: tuple[int, int]
) -> None:
    session, err = _batch_of_two_answers(tmp_path, pairing)
    [batch] = [m for m in session.received() if isinstance(m, list)]
    outcomes = {json.dumps(m["id"]): m["result"]["outcome"] for m in batch}
    assert outcomes == {
        "7": {"outcome": "selected", "optionId": "reject"},
        "8": CANCELLED,
    }
    assert err.count(NOTE) == 1, err


@pytest.mark.parametrize("pairing", CONVERTING)
def test_in_a_batch_to_a_converting_bridge_a_repeated_key_is_still_seen(
    tmp_path: Path, pairing: tuple[int, int]
) -> None:
    """The bridge re-encodes each element of a batch, which keeps only the last value of a
    repeated key: the repeat is read from the line's text first."""
    session, err = _batch_of_two_answers(tmp_path, pairing)
    outcomes = [a["result"]["outcome"] for a in _valid_answers(session, 7)]
    assert outcomes == [{"outcome": "selected", "optionId": "reject"}]
    assert [a["result"]["outcome"] for a in _valid_answers(session, 8)] == [CANCELLED]
    assert err.count(NOTE) == 1, err


# --------------------------------------------------------------------------------------------
# Item 10: the client's file system and terminals, which the bridge did not offer

CLIENT_OWNED_REQUESTS: list[dict[str, Any]] = [
    {"method": "fs/read_text_file", "params": {"sessionId": SID, "path": "/etc/passwd"}},
    {
        "method": "fs/write_text_file",
        "params": {"sessionId": SID, "path": "/tmp/x", "content": "pwned"},
    },
    {"method": "terminal/create", "params": {"sessionId": SID, "command": "rm", "args": ["-rf"]}},
    {"method": "terminal/output", "params": {"sessionId": SID, "terminalId": "t1"}},
    {"method": "terminal/kill", "params": {"sessionId": SID, "terminalId": "t1"}},
]


@pytest.mark.parametrize("pairing", CONVERTING)
def test_file_system_and_terminal_requests_the_bridge_did_not_offer_are_method_not_found(
    tmp_path: Path, pairing: tuple[int, int]
) -> None:
    """v1 editor / v2 agent: fixed in issue 27; v2 editor / v1 agent: D38, kept."""
    _editor_version, agent_version = pairing
    steps: list[dict[str, Any]] = []
    for index, request in enumerate(CLIENT_OWNED_REQUESTS):
        steps.append({"send": {"jsonrpc": "2.0", "id": f"c{index}", **request}})
        steps.append({"await": {"id": f"c{index}"}, "as": f"c{index}"})

    async def editor(client: RawClient, session: Session) -> None:
        await asyncio.sleep(0.5)

    session, client, code, err = run(tmp_path, pairing, steps, editor)
    assert code == 0, err
    for index, request in enumerate(CLIENT_OWNED_REQUESTS):
        [answer] = session.answers(f"c{index}")
        assert answer["error"]["code"] == -32601, answer
        assert validate_message(answer, cast(Any, f"v{agent_version}")) == []
        assert err.count(f"{request['method']} is not available") == 1, err
    methods = {m.get("method") for m in client.received}
    assert not methods & {r["method"] for r in CLIENT_OWNED_REQUESTS}


# --------------------------------------------------------------------------------------------
# The library's bridges, without the proxy: the same rule (the proxy alone reads the line's
# text, so a repeated key is its check)

BRIDGE_CASES: dict[str, Any] = {
    "result-and-error": {
        "result": {"outcome": {"outcome": "selected", "optionId": "allow"}},
        "error": {"code": -32603, "message": "Internal error"},
    },
    "not-offered": {"result": {"outcome": {"outcome": "selected", "optionId": "allow_always"}}},
    "case-changed": {"result": {"outcome": {"outcome": "selected", "optionId": "Allow"}}},
    "not-a-string": {"result": {"outcome": {"outcome": "selected", "optionId": 1}}},
}


@pytest.mark.parametrize("body", list(BRIDGE_CASES.values()), ids=list(BRIDGE_CASES))
@pytest.mark.parametrize("agent_version", [1, 2], ids=["V1ToV2Bridge", "V2ToV1Bridge"])
def test_the_bridges_answer_cancelled_to_an_answer_that_selects_no_offered_option(
    agent_version: int, body: dict[str, Any]
) -> None:
    bridge: V1ToV2Bridge | V2ToV1Bridge = V2ToV1Bridge() if agent_version == 2 else V1ToV2Bridge()
    if agent_version == 2:
        bridge.convert(
            {
                "jsonrpc": "2.0",
                "method": "session/update",
                "params": {
                    "sessionId": SID,
                    "update": {"sessionUpdate": "tool_call_update", "toolCallId": "edit"},
                },
            }
        )
    bridge.convert(ask(agent_version, 7, "edit", "Edit a.py?"))
    converted = bridge.convert({"jsonrpc": "2.0", "id": 7, **body})
    assert [m.data if hasattr(m, "data") else m for m in converted.messages] == [
        {"jsonrpc": "2.0", "id": 7, "result": {"outcome": CANCELLED}}
    ]
    assert any("answered the agent `cancelled`" in loss.reason for loss in converted.losses)
    exact = bridge.convert(ask(agent_version, 8, "edit", "Edit a.py?"))
    assert exact.messages
    chosen_allow = bridge.convert(chosen(8, "allow"))
    assert [m.data["result"] for m in chosen_allow.messages] == [
        {"outcome": {"outcome": "selected", "optionId": "allow"}}
    ]
