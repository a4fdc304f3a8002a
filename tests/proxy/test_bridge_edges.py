"""``acp-toolcalls bridge`` at its edges (issue 26, items 10-12), over real subprocesses.

- Item 10: nothing on the message path loads lazily mid-stream. The rare session updates
  (``plan``, ``usage_update``, ``config_option_update``, ...) are checked against the target
  schema by structure checks (``schema.first_violation``) that answer as jsonschema does,
  built as the bridge starts: the bridge never imports jsonschema, and every check exists
  before the first line is read.
- Item 11: ``--log`` records the agent's answer and the bridge's retry during the version
  fallback in the version they are in.
- Item 12: an editor request over ``--max-line-bytes`` is answered ``-32600`` with its id, read
  from the line as it streams by (memory stays bounded), in every mode.
"""

from __future__ import annotations

import asyncio
import json
import re
import sys
from pathlib import Path
from typing import Any, cast

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from msgspec import UNSET

from acp_toolcalls import v1, v2
from acp_toolcalls.convert import _session_updates, session_update_to_v1, session_update_to_v2
from acp_toolcalls.schema import first_violation, validate_message, validate_payload
from acp_toolcalls.schema._checks import document
from tests.interop.raw import RawClient
from tests.interop.sessions import bounded
from tests.proxy.test_permission_integrity import (
    CONVERTING,
    PASS_THROUGH,
    SCRIPT_AGENT,
    SID,
    Session,
    agent_init,
    editor_init,
    session_new,
    update,
)
from tests.proxy.test_proxy_faults import turn_end, turn_ended

ROOT = Path(__file__).resolve().parents[2]

# The (protocol, $defs entry) of every rule that is checked against a schema, both directions.
CHECKED = sorted(
    {
        (protocol, rule.schema_def, rule.unstable)
        for protocol, rules in (
            ("v1", _session_updates._OPAQUE_TO_V1),
            ("v1", _session_updates._PLAN_UPDATE_TO_V1),
            ("v2", _session_updates._OPAQUE_TO_V2),
        )
        for rule in rules.values()
        if rule.schema_def is not None
    }
)
"""(protocol, ``$defs`` entry, of the unstable schema) of every check the bridge builds."""


# --------------------------------------------------------------------------------------------
# Item 10: the structure checks answer as jsonschema does


_JUNK = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-3, 3),
    st.floats(allow_nan=False, allow_infinity=False, width=32),
    st.sampled_from(["", "x", "select", "boolean", "text", "pending", "high", "USD"]),
    st.just([]),
    st.just({}),
    st.just([1]),
)


def _resolve(protocol: str, schema: Any) -> Any:
    """``protocol``: ``v1``, ``v2``, or either with ``/unstable`` (its unstable schema)."""
    version, _, flavor = protocol.partition("/")
    while isinstance(schema, dict) and set(schema) - {"description", "title"} == {"$ref"}:
        defs = document(cast(Any, version), flavor == "unstable")["$defs"]
        schema = defs[schema["$ref"].rsplit("/", 1)[1]]
    return schema


def _near(protocol: str, schema: Any, depth: int = 0) -> st.SearchStrategy[Any]:
    """Values shaped by ``schema``, most valid, with junk put anywhere (a wrong type, a value
    that is not one of the consts, a required key left out, an unknown key)."""
    schema = _resolve(protocol, schema)
    if depth > 8 or not isinstance(schema, dict):
        return _JUNK
    shaped = _shaped(protocol, schema, depth)
    container = schema.get("type") in ("object", "array") or "properties" in schema
    odds = 24 if container else 5  # junk: one value in 25 (containers) or in 6 (the rest)
    return st.integers(0, odds).flatmap(lambda n: _JUNK if n == 0 else shaped)


def _shaped(protocol: str, schema: dict[str, Any], depth: int) -> st.SearchStrategy[Any]:
    parts = [schema]
    if "$ref" in schema:
        parts.append(_resolve(protocol, {"$ref": schema["$ref"]}))
    for sub in schema.get("allOf", []):
        parts.append(_resolve(protocol, sub))
    unions = [schema[key] for key in ("oneOf", "anyOf") if key in schema]
    for part in parts[1:]:
        unions += [part[key] for key in ("oneOf", "anyOf") if key in part]
        parts += [_resolve(protocol, sub) for sub in part.get("allOf", [])]
    if unions:
        branches = unions[0]

        def merged(index: int) -> st.SearchStrategy[Any]:
            branch = _resolve(protocol, branches[index])
            rest = {k: v for k, v in schema.items() if k not in ("oneOf", "anyOf")}
            if len(unions) > 1:
                rest["anyOf"] = unions[1]
            both = {"allOf": [rest, branch]} if rest else branch
            return _shaped(protocol, both, depth + 1) if isinstance(both, dict) else _JUNK

        return st.integers(0, len(branches) - 1).flatmap(merged)
    for part in parts:
        if "const" in part:
            return st.just(part["const"])
        if "enum" in part:
            return st.sampled_from(part["enum"])
    types: list[str] = []
    for part in parts:
        if "type" in part:
            found = part["type"]
            types = [found] if isinstance(found, str) else list(found)
            break
    properties: dict[str, Any] = {}
    required: set[str] = set()
    items: Any = None
    for part in parts:
        properties.update(part.get("properties", {}))
        required.update(part.get("required", []))
        items = part.get("items", items)
    if not types:
        types = ["object"] if properties else ["string", "integer", "null"]
    strategies: list[st.SearchStrategy[Any]] = []
    for kind in types:
        if kind == "object":
            fixed = {
                name: _near(protocol, properties.get(name, {}), depth + 1) for name in required
            }
            optional = {
                name: _near(protocol, sub, depth + 1)
                for name, sub in properties.items()
                if name not in required
            }
            made = st.fixed_dictionaries(fixed, optional=optional)
            strategies.append(
                st.tuples(made, st.sampled_from([None, *sorted(required)]), st.booleans()).map(
                    _spoil
                )
            )
        elif kind == "array":
            strategies.append(st.lists(_near(protocol, items or {}, depth + 1), max_size=3))
        elif kind == "string":
            strategies.append(st.sampled_from(["", "a", "id-1", "2026-12-06T00:00:00Z"]))
        elif kind == "integer":
            strategies.append(st.one_of(st.integers(-2, 2**64), st.just(3.0)))
        elif kind == "number":
            strategies.append(st.one_of(st.integers(-5, 5), st.floats(-1e6, 1e6)))
        elif kind == "boolean":
            strategies.append(st.booleans())
        elif kind == "null":
            strategies.append(st.none())
    return st.one_of(strategies) if strategies else _JUNK


def _spoil(made: tuple[dict[str, Any], str | None, bool]) -> dict[str, Any]:
    """Rarely a required key left out; sometimes a key no schema names."""
    value, drop, extra = made
    if drop is not None and len(drop) % 5 == 0:
        value.pop(drop, None)
    if extra:
        value["x-unknown"] = 1
    return value


@pytest.mark.filterwarnings("ignore::hypothesis.errors.HypothesisWarning")
@pytest.mark.parametrize(("protocol", "def_name", "unstable"), CHECKED, ids=lambda x: str(x))
@settings(
    max_examples=150,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much],
)
@given(data=st.data())
def test_the_structure_checks_answer_as_jsonschema(
    protocol: Any, def_name: str, unstable: bool, data: st.DataObject
) -> None:
    schema = {"$ref": f"#/$defs/{def_name}"}
    value = data.draw(_near(protocol + "/unstable" * unstable, schema))
    violations = validate_payload(value, def_name, protocol, unstable=unstable)
    found = first_violation(value, def_name, protocol, unstable=unstable)
    assert (found is None) == (not violations), (value, found, violations)


@pytest.mark.filterwarnings("ignore::hypothesis.errors.HypothesisWarning")
@pytest.mark.parametrize(("protocol", "def_name", "unstable"), CHECKED, ids=lambda x: str(x))
def test_the_generator_reaches_both_answers(protocol: Any, def_name: str, unstable: bool) -> None:
    """The differential test above means something: for each checked entry, it draws valid
    and invalid values, each often enough."""
    answers = {"valid": 0, "invalid": 0}

    @settings(max_examples=100, deadline=None, database=None, derandomize=True)
    @given(st.data())
    def count(data: st.DataObject) -> None:
        value = data.draw(_near(protocol + "/unstable" * unstable, {"$ref": f"#/$defs/{def_name}"}))
        found = first_violation(value, def_name, protocol, unstable=unstable)
        answers["valid" if found is None else "invalid"] += 1

    count()
    assert min(answers.values()) >= 5, answers


def test_a_violation_is_reported_with_its_path() -> None:
    bad = {"sessionUpdate": "usage_update", "used": -1, "size": 10, "cost": None}
    assert first_violation(bad, "UsageUpdate", "v1") == (
        "$.used",
        "-1 is less than the minimum of 0",
    )
    wrong_type = {"sessionUpdate": "session_info_update", "title": 5}
    assert first_violation(wrong_type, "SessionInfoUpdate", "v2") == (
        "$.title",
        "5 is not of type 'string', 'null'",
    )
    cost = {"sessionUpdate": "usage_update", "used": 1, "size": 2, "cost": {"amount": 1}}
    assert first_violation(cost, "UsageUpdate", "v2") == (
        "$.cost",
        "'currency' is a required property",
    )
    update_v2 = v2.OpaqueSessionUpdate(bad | {"used": 2.5})
    converted, losses = session_update_to_v1(update_v2)
    assert converted is None
    (loss,) = [loss for loss in losses.losses if "not a valid v1 `UsageUpdate`" in loss.reason]
    assert "$.used: 2.5 is not of type 'integer'" in loss.reason
    plan = v1.OpaqueSessionUpdate({"sessionUpdate": "plan", "entries": [{"content": "x"}]})
    assert session_update_to_v2(plan)[0] is None


def test_nothing_on_the_message_path_loads_a_validator_mid_stream(tmp_path: Path) -> None:
    """Through a real bridge (v1 editor, v2 agent, and the other way), a turn that opens with
    every rare update: each reaches the editor converted, every check was built before the
    bridge read its first line, and jsonschema is never imported (before issue 26 the first
    rare update imported it and built a validator: 50-155 ms, the turn behind it waiting)."""
    for editor, agent in ((1, 2), (2, 1)):
        probe = tmp_path / f"probe-{editor}{agent}.json"
        steps = [*_prelude(agent), *_rare_turn(agent)]
        script = tmp_path / f"script-{editor}{agent}.json"
        script.write_text(json.dumps(steps), encoding="utf-8")
        agent_command = [sys.executable, str(SCRIPT_AGENT), str(script), str(tmp_path / "rec")]
        out, err = _probed_bridge(probe, ["--agent-version", str(agent)], agent_command, editor)
        assert "Traceback" not in err and "a bug" not in err, err
        seen = json.loads(probe.read_text(encoding="utf-8"))
        assert seen["jsonschema_at_first_line"] is False
        assert seen["jsonschema_at_end"] is False
        assert seen["checks_at_first_line"] == seen["checks_at_end"] == len(CHECKED)
        updates = [
            m["params"]["update"]["sessionUpdate"]
            for m in out
            if m.get("method") == "session/update"
            and m["params"]["update"]["sessionUpdate"] not in ("user_message", "state_update")
        ]
        wanted = (
            ["usage_update", "session_info_update", "plan", "agent_message_chunk"]
            if editor == 1
            else ["usage_update", "session_info_update", "plan_update", "agent_message_chunk"]
        )
        assert updates[: len(wanted)] == wanted, (updates, err)


# What the probed bridge records: whether jsonschema is loaded and how many structure checks
# exist, when the bridge handles its first line and at its end.
_PROBE = """
import json, sys
from acp_toolcalls.cli import main
from acp_toolcalls.proxy import _stdio
from acp_toolcalls.schema import _checks

seen = {}
def state(when):
    seen["jsonschema_" + when] = "jsonschema" in sys.modules
    seen["checks_" + when] = _checks._check.cache_info().currsize

handle = _stdio._Proxy._handle
async def first(self, side, batch):
    if "checks_at_first_line" not in seen:
        state("at_first_line")
    return await handle(self, side, batch)
_stdio._Proxy._handle = first
code = main(sys.argv[2:])
state("at_end")
with open(sys.argv[1], "w") as out:
    json.dump(seen, out)
sys.exit(code)
"""


def _probed_bridge(
    probe: Path, options: list[str], agent: list[str], editor: int
) -> tuple[list[dict[str, Any]], str]:
    """A turn through the bridge in a subprocess that records its ``_PROBE`` state: the editor
    initializes, opens a session and prompts; what it read until the turn ended, and stderr."""
    command = [sys.executable, "-c", _PROBE, str(probe), "bridge", *options, "--", *agent]

    async def scenario() -> tuple[list[dict[str, Any]], str]:
        process = await asyncio.create_subprocess_exec(
            *command,
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
            cwd=ROOT,
        )
        client = RawClient(process)
        await client.send(editor_init(editor))
        await client.answer_to(0)
        await client.send(session_new(editor))
        await client.answer_to(1)
        await client.send(_prompt(editor, 2))
        await client.until(turn_ended(editor, 2))
        code, err, _ = await client.finish()
        assert code == 0, err
        return client.received, err

    return bounded(scenario())


def _prelude(agent: int) -> list[dict[str, Any]]:
    return [
        {"await": {"method": "initialize"}, "as": "init"},
        {"send": {"jsonrpc": "2.0", "id": {"$id": "init"}, "result": agent_init(agent)}},
        {"await": {"method": "session/new"}, "as": "new"},
        {"send": {"jsonrpc": "2.0", "id": {"$id": "new"}, "result": {"sessionId": SID}}},
    ]


def _rare_turn(agent: int) -> list[dict[str, Any]]:
    """The agent's turn: usage, session info and a plan first, then a message, then the end."""
    usage: dict[str, Any] = {"sessionUpdate": "usage_update", "used": 1200, "size": 200000}
    info: dict[str, Any] = {"sessionUpdate": "session_info_update", "title": "Fix the tests"}
    entry = {"content": "Run the tests", "priority": "high", "status": "pending"}
    plan: dict[str, Any]
    chunk: dict[str, Any] = {
        "sessionUpdate": "agent_message_chunk",
        "content": {"type": "text", "text": "Done."},
    }
    if agent == 2:
        plan = {
            "sessionUpdate": "plan_update",
            "plan": {"type": "items", "planId": "p1", "entries": [entry]},
        }
        chunk["messageId"] = "m1"
        idle = {"sessionUpdate": "state_update", "state": "idle", "stopReason": "end_turn"}
        end = [
            {"send": {"jsonrpc": "2.0", "id": {"$id": "prompt"}, "result": {"messageId": "u1"}}},
            *[{"send": update(body)} for body in (usage, info, plan, chunk, idle)],
        ]
    else:
        plan = {"sessionUpdate": "plan", "entries": [entry]}
        answer = {"stopReason": "end_turn"}
        end = [
            *[{"send": update(body)} for body in (usage, info, plan, chunk)],
            {"send": {"jsonrpc": "2.0", "id": {"$id": "prompt"}, "result": answer}},
        ]
    return [{"await": {"method": "session/prompt"}, "as": "prompt"}, *end]


def _prompt(editor: int, request_id: int) -> dict[str, Any]:
    params: dict[str, Any] = {"sessionId": SID, "prompt": [{"type": "text", "text": "go"}]}
    return {"jsonrpc": "2.0", "id": request_id, "method": "session/prompt", "params": params}


# --------------------------------------------------------------------------------------------
# Item 11: --log during the version fallback


@pytest.mark.parametrize(
    ("editor", "options", "first_answer"),
    [
        pytest.param(1, ("--agent-version", "2"), "v1", id="v1-editor-asked-v2-answers-v1"),
        pytest.param(2, (), "v1", id="v2-editor-auto-answers-v1"),
        pytest.param(2, (), "refused", id="v2-editor-auto-refused"),
    ],
)
def test_the_log_records_the_fallback_in_the_version_spoken(
    tmp_path: Path, editor: int, options: tuple[str, ...], first_answer: str
) -> None:
    """The agent is asked in v2 and answers in v1 (or refuses): the proxy asks again in v1.
    The agent's v1 answer, the retry and everything after are recorded as protocol 1 (they
    were recorded as 2 before issue 26), each record valid against the schema it names."""
    answer: dict[str, Any] = (
        {"result": agent_init(1)}
        if first_answer == "v1"
        else {"error": {"code": -32600, "message": "unsupported protocol version"}}
    )
    steps: list[dict[str, Any]] = [
        {"await": {"method": "initialize"}, "as": "first"},
        {"send": {"jsonrpc": "2.0", "id": {"$id": "first"}, **answer}},
        {"await": {"method": "initialize"}, "as": "again"},
        {"send": {"jsonrpc": "2.0", "id": {"$id": "again"}, "result": agent_init(1)}},
        {"await": {"method": "session/new"}, "as": "new"},
        {"send": {"jsonrpc": "2.0", "id": {"$id": "new"}, "result": {"sessionId": SID}}},
    ]
    script, log = tmp_path / "script.json", tmp_path / "traffic.jsonl"
    script.write_text(json.dumps(steps), encoding="utf-8")
    agent = (sys.executable, str(SCRIPT_AGENT), str(script), str(tmp_path / "record.jsonl"))

    async def scenario() -> tuple[int, str]:
        client = await RawClient.start(*options, "--log", str(log), agent=agent)
        await client.send(editor_init(editor))
        assert (await client.answer_to(0))["result"]["protocolVersion"] == editor
        await client.send(session_new(editor))
        assert (await client.answer_to(1))["result"]["sessionId"] == SID
        return (await client.finish())[:2]

    code, err = bounded(scenario())
    assert code == 0, err
    records = [json.loads(line) for line in log.read_text(encoding="utf-8").splitlines()]
    agent_side = [r for r in records if r["direction"] in ("proxy->agent", "agent->proxy")]
    methods = [r["message"].get("method") for r in agent_side]
    assert methods == ["initialize", None, "initialize", None, "session/new", None], agent_side
    recorded = [r["protocol"] for r in agent_side]
    assert recorded == [2, 1, 1, 1, 1, 1], agent_side
    asked: dict[str, str] = {}
    for record in agent_side:
        message = record["message"]
        stated = (message.get("params") or message.get("result") or {}).get("protocolVersion")
        if stated is not None:
            assert record["protocol"] == stated, record
        if "method" in message:
            asked[json.dumps(message["id"])] = message["method"]
        method = None if "method" in message else asked.get(json.dumps(message["id"]))
        version: Any = f"v{record['protocol']}"
        assert validate_message(message, version, response_method=method) == [], record
    client_side = [r for r in records if r["direction"] in ("client->proxy", "proxy->client")]
    assert {r["protocol"] for r in client_side} == {editor}


# --------------------------------------------------------------------------------------------
# Item 12: a line over --max-line-bytes is answered, in every mode

LIMIT = 65536
HUGE = "x" * (2 * LIMIT)


@pytest.mark.parametrize("pairing", [*CONVERTING, *PASS_THROUGH])
def test_a_request_over_the_line_limit_is_answered_in_every_mode(
    tmp_path: Path, pairing: tuple[int, int]
) -> None:
    """Requests over ``--max-line-bytes`` are answered ``-32600`` with their id, read from the
    line as it streams by (at its start or at its end), never reaching the other side: the
    editor's, and the agent's; the editor's answer over the limit to an agent request is an
    error for the agent in its place. The session goes on (before issue 26 they were skipped
    with a note and the sender waited forever)."""
    editor, agent = pairing
    big_request = {"jsonrpc": "2.0", "id": "agent-big", "method": "_x/big", "params": {"t": HUGE}}
    ask = {"jsonrpc": "2.0", "id": "agent-ask", "method": "_x/ask", "params": {}}
    steps: list[dict[str, Any]] = [
        {"send": big_request},
        {"await": {"id": "agent-big"}, "as": "refused"},
        {"send": ask},
        {"await": {"id": "agent-ask"}, "as": "settled"},
        {"await": {"method": "session/prompt"}, "as": "prompt"},
        *turn_end(agent),
    ]
    session = Session(tmp_path, editor, agent, steps)
    big_prompt = _prompt(editor, 7)
    big_prompt["params"]["prompt"][0]["text"] = HUGE
    late = {"jsonrpc": "2.0", "method": "session/prompt", "params": big_prompt["params"]}
    late_line = json.dumps(late).encode()[:-1] + b', "id": "late"}'  # the id after the text
    params = {"sessionId": SID, "_meta": {"t": HUGE}}
    cancel = {"jsonrpc": "2.0", "method": "session/cancel", "params": params}

    async def scenario() -> tuple[RawClient, int, str]:
        client = await session.start("--max-line-bytes", str(LIMIT))
        await client.send(big_prompt)
        await client.send(late_line)
        await client.send(cancel)  # a notification: noted, nothing to answer
        for request_id in (7, "late"):
            answer = await client.answer_to(request_id)
            assert answer["error"]["code"] == -32600, answer
            assert "over the line limit of 65536 bytes" in answer["error"]["data"]["details"]
            assert validate_message(answer, cast(Any, f"v{editor}")) == []
        asked = await client.request("_x/ask")
        await client.send({"jsonrpc": "2.0", "id": asked["id"], "result": {"t": HUGE}})
        await client.send(_prompt(editor, 8))
        await client.until(turn_ended(editor, 8))
        code, err, _ = await client.finish()
        return client, code, err

    client, code, err = bounded(scenario())
    assert code == 0, err
    assert "Traceback" not in err and "a bug" not in err, err
    received = session.received()
    assert all(len(json.dumps(m)) < LIMIT for m in received)  # nothing over the limit passed
    [refused] = session.answers("agent-big")
    assert refused["error"]["code"] == -32600
    [settled] = session.answers("agent-ask")
    assert settled["error"]["code"] == -32603
    for answer in (refused, settled):
        assert validate_message(answer, cast(Any, f"v{agent}")) == []
    assert "could not be read" in settled["error"]["data"]["details"]
    prompts = [m for m in received if isinstance(m, dict) and m.get("method") == "session/prompt"]
    assert [p["params"]["prompt"][0]["text"] for p in prompts] == ["go"]
    assert not [m for m in client.received if m.get("method") == "_x/big"]
    notes = [line for line in err.splitlines() if "over the limit of 65536 bytes" in line]
    assert len(notes) == 5, err
    assert sum("answered -32600" in line for line in notes) == 3, err
    assert sum("in its place" in line for line in notes) == 1, err


_SCALARS = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-(2**70), 2**70),
    st.floats(allow_nan=False, allow_infinity=False),
    st.text(alphabet='ab"\\\n{}[],:ü\u2028', max_size=12),
)
_JSON = st.recursive(
    _SCALARS,
    lambda inner: st.one_of(
        st.lists(inner, max_size=4),
        st.dictionaries(st.sampled_from(["id", "method", "k", 'a"', "\\", "{"]), inner, max_size=4),
    ),
    max_leaves=12,
)


@st.composite
def _messages(draw: st.DrawFn) -> tuple[bytes, Any, bool]:
    """A JSON-RPC-like line, its keys in any order, and what ``_Head`` must read of it."""
    message: dict[str, Any] = {}
    keys = draw(st.permutations(["jsonrpc", "id", "method", "params", "result"]))
    kind = draw(st.sampled_from(["request", "notification", "answer"]))
    for key in keys:
        if key == "id" and kind != "notification":
            message["id"] = draw(st.one_of(st.integers(), st.text(max_size=20), st.none()))
        elif key == "method" and kind != "answer":
            message["method"] = draw(st.text(max_size=10))
        elif key == "params" or (key == "result" and kind == "answer"):
            message[key] = draw(_JSON)
        elif key == "jsonrpc":
            message[key] = "2.0"
    line = json.dumps(message, ensure_ascii=draw(st.booleans())).encode()
    return line, message.get("id", _NO_ID), "method" in message


_NO_ID = object()


@pytest.mark.parametrize("patterns", ["possessive", "plain"])
@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(message=_messages(), cuts=st.lists(st.integers(1, 40), min_size=1, max_size=60))
def test_the_head_of_a_line_over_the_limit_is_read_in_any_chunks(
    patterns: str, message: tuple[bytes, Any, bool], cuts: list[int]
) -> None:
    """``_Head`` reads the top-level id and whether there is a method, however the line's
    bytes arrive; with the possessive patterns (Python 3.11) and the plain ones (3.10)."""
    from acp_toolcalls.proxy import _input

    line, request_id, has_method = message
    saved = _input._STRING_REST, _input._NESTED
    if patterns == "plain":
        _input._STRING_REST = re.compile(_input._STRING_REST_PATTERNS[1], re.DOTALL)
        _input._NESTED = re.compile(_input._NESTED_PATTERNS[1], re.DOTALL)
    try:
        head = _input._Head()
        position = 0
        for cut in cuts * (len(line) // sum(cuts) + 1):
            head.feed(line[position : position + cut])
            position += cut
            if position >= len(line):
                break
        read = head.result(len(line))
    finally:
        _input._STRING_REST, _input._NESTED = saved
    assert read.has_method == has_method
    if request_id is _NO_ID:
        assert read.request_id is UNSET
    else:
        assert type(read.request_id) is type(request_id) and read.request_id == request_id


def test_what_the_head_holds_is_bounded() -> None:
    """An id too long to answer with is not read (nor held); a 32 MiB line costs the reader
    the few counters it keeps."""
    from acp_toolcalls.proxy._input import _MAX_ID, _Head

    long_id = b'{"id": "' + b"i" * (2 * _MAX_ID) + b'", "method": "m"}'
    head = _Head()
    for start in range(0, len(long_id), 100):
        head.feed(long_id[start : start + 100])
        assert head.kept is None or len(head.kept) <= _MAX_ID + 1
    assert head.result(len(long_id)).request_id is UNSET
    chunk = b'"x\\"y", [1, {"a": "]"}], ' * 2600
    head = _Head()
    head.feed(b'{"jsonrpc": "2.0", "params": [')
    for _ in range(32 * 1024 * 1024 // len(chunk)):
        head.feed(chunk)
        assert head.kept is None and head.id_value is None and head.depth == 2
    head.feed(b'0], "method": "m", "id": 3}')
    read = head.result(0)
    assert (read.request_id, read.has_method) == (3, True)
