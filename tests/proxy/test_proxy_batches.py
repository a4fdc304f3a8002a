"""The proxy handles what it reads a read at a time (issue 19), never differently from line by
line.

- ``proxy._batches``: the lines of any input, cut into reads anywhere, are the lines the
  line-by-line reader gave (blank lines left out, a trailing ``\\r`` dropped, a line over the
  limit as its size, read as an ``Oversized``, the last line without its newline);
- ``ConnectionCore.from_agent_lines`` / ``from_client_lines``: for any traffic (the fuzz
  strategies: clean tool calls, mutations, garbage), cut into batches anywhere, the same lines
  to each side and the same notes, each naming the same line, as ``from_agent`` /
  ``from_client`` line by line with the fast paths for compact updates off (the general path
  alone), in both directions, with and without coalescing;
- a line the core fails on costs that line alone; pass-through still settles every request
  the agent answers when the lines before the answer open with a method.
"""

from __future__ import annotations

import asyncio
import io
import itertools
import json
from collections.abc import Sequence
from typing import Any, Literal, cast

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from acp_toolcalls.proxy import (
    ConnectionCore,
    Outbox,
    ProxyConfig,
    _input,
    _stdio,
    _updates,
    _writers,
)
from tests.fuzz.strategies import SESSION_IDS, examples, traffic

# --------------------------------------------------------------------------------------------
# Reading


def _reference(data: bytes, max_bytes: int) -> list[bytes | int]:
    """What the line-by-line reader yielded for ``data``."""
    out: list[bytes | int] = []
    pieces = data.split(b"\n")
    for index, line in enumerate(pieces):
        last = index == len(pieces) - 1
        if len(line) > max_bytes:
            out.append(len(line) + (0 if last else 1))
        elif line.strip():
            out.append(line.rstrip(b"\r"))
    return out


def _read(data: bytes, cuts: list[int], max_bytes: int) -> list[bytes | int]:
    async def run() -> list[bytes | int]:
        reader = asyncio.StreamReader(limit=1 << 16)

        async def feed() -> None:
            start = 0
            for cut in [*sorted(cuts), len(data)]:
                if cut > start:
                    reader.feed_data(data[start:cut])
                    start = cut
                await asyncio.sleep(0)
            reader.feed_eof()

        feeding = asyncio.ensure_future(feed())
        got: list[bytes | int] = []
        async for batch in _input._batches(reader, max_bytes):
            assert batch  # never an empty batch
            got += [i.size if isinstance(i, _input.Oversized) else i for i in batch]
        await feeding
        return got

    return asyncio.run(run())


_LINES = st.lists(
    st.sampled_from([b"", b" ", b"\r", b"{}", b'{"a":1}', b"x" * 30, b"\t{}\r\r", b"y" * 9]),
    max_size=12,
)


@settings(max_examples=examples(1.0))
@given(
    lines=_LINES,
    newline_at_end=st.booleans(),
    cuts=st.lists(st.integers(0, 200), max_size=8),
    chunk=st.sampled_from([1, 3, 7, 64, 1 << 16]),
    max_bytes=st.sampled_from([8, 10, 1000]),
)
def test_batches_read_the_lines_the_line_by_line_reader_read(
    lines: list[bytes], newline_at_end: bool, cuts: list[int], chunk: int, max_bytes: int
) -> None:
    data = b"\n".join(lines) + (b"\n" if newline_at_end and lines else b"")
    with pytest.MonkeyPatch.context() as monkeypatch:
        monkeypatch.setattr(_input, "_READ_CHUNK", chunk)
        got = _read(data, [c for c in cuts if c < len(data)], max_bytes)
    assert got == _reference(data, max_bytes)


def test_a_line_over_the_limit_read_in_pieces_is_its_size_and_the_next_line_is_whole(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(_input, "_READ_CHUNK", 4)
    data = b"a" * 50 + b"\r\n" + b'{"ok":1}\n' + b"b" * 11
    assert _read(data, [], 10) == [52, b'{"ok":1}', 11]


# --------------------------------------------------------------------------------------------
# The core, a batch at a time


def _line(message: Any) -> bytes:
    return json.dumps(message, separators=(",", ":")).encode()


def _request(request_id: Any, method: str, params: Any) -> bytes:
    return _line({"jsonrpc": "2.0", "id": request_id, "method": method, "params": params})


def _answer(out: Outbox, value: Any) -> bytes:
    request = json.loads(out.to_agent[-1])
    return _line({"jsonrpc": "2.0", "id": request["id"], "result": value})


def _ready(client: int, agent: int, coalesce: float) -> ConnectionCore:
    """A core past initialize with the fuzz pools' sessions set up, a prompt running in the
    first."""
    core = ConnectionCore(
        client_version=cast(Literal[1, 2], client),
        agent_version=cast(Literal[1, 2], agent),
        coalesce_interval=coalesce,
    )
    if client == 1:
        init: dict[str, Any] = {"protocolVersion": 1, "clientCapabilities": {}}
        new: dict[str, Any] = {"cwd": "/p", "mcpServers": []}
    else:
        init = {"protocolVersion": 2, "info": {"name": "e", "version": "0"}, "capabilities": {}}
        new = {"cwd": "/p"}
    info: dict[str, Any] = (
        {"info": {"name": "a", "version": "0"}, "capabilities": {}}
        if agent == 2
        else {"agentInfo": {"name": "a", "version": "0"}, "agentCapabilities": {}}
    )
    out = core.from_client(_request(0, "initialize", init), 0.0)
    core.from_agent(_answer(out, {"protocolVersion": agent, **info}), 0.0)
    for number, session in enumerate(SESSION_IDS[:-1], 1):
        out = core.from_client(_request(number, "session/new", new), 0.0)
        core.from_agent(_answer(out, {"sessionId": session}), 0.0)
    for number, session in ((8, SESSION_IDS[0]), (9, SESSION_IDS[-1])):
        # the last session was not set up here: a v2 client's prompt in it is acknowledged
        # when the v1 agent first says something about it
        prompt = {"sessionId": session, "prompt": [{"type": "text", "text": "go"}]}
        core.from_client(_request(number, "session/prompt", prompt), 0.0)
    return core


Seen = tuple[list[bytes], list[bytes], list[tuple[int | None, str, str]]]


def _one_by_one(core: ConnectionCore, lines: list[bytes], agent: bool) -> Seen:
    to_client: list[bytes] = []
    to_agent: list[bytes] = []
    notes: list[tuple[int | None, str, str]] = []
    for number, line in enumerate(lines):
        try:
            out = core.from_agent(line, 0.0) if agent else core.from_client(line, 0.0)
        except Exception as exc:  # as the proxy said of a line the core failed on
            side = "agent" if agent else "client"
            notes.append((number, side, f"not handled ({type(exc).__name__}: {exc}); a bug"))
            continue
        to_client += out.to_client
        to_agent += out.to_agent
        notes += [(number, note.side, note.text) for note in out.notes]
    return to_client, to_agent, notes


def _batched(core: ConnectionCore, lines: list[bytes], cuts: list[int], agent: bool) -> Seen:
    to_client: list[bytes] = []
    to_agent: list[bytes] = []
    notes: list[tuple[int | None, str, str]] = []
    bounds = [0, *sorted(c for c in cuts if 0 < c < len(lines)), len(lines)]
    for start, end in itertools.pairwise(bounds):
        batch = lines[start:end]
        if not batch:
            continue
        handle = core.from_agent_lines if agent else core.from_client_lines
        out = handle(batch, 0.0)
        to_client += out.to_client
        to_agent += out.to_agent
        notes += [
            (None if note.line is None else start + note.line, note.side, note.text)
            for note in out.notes
        ]
    return to_client, to_agent, notes


def _tail(core: ConnectionCore) -> list[Seen]:
    """What a tick past the coalescing deadline sends, then a flush, then the agent's end."""
    return [
        (out.to_client, out.to_agent, [(note.line, note.side, note.text) for note in out.notes])
        for out in (core.poll(10.0), core.flush(), core.agent_gone("gone"))
    ]


def _general_only(core: ConnectionCore, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(_updates, "compact_update", lambda core, policy, line, now: False)


_TEXT = st.fixed_dictionaries({"type": st.just("text"), "text": st.sampled_from(["a", "b"])})


@st.composite
def _other_update(draw: st.DrawFn, version: int) -> bytes:
    """A compact ``session/update`` of a kind the fuzz traffic seldom has: message chunks
    and upserts (repeated message ids), user echoes, state, plans, modes."""
    message_id = draw(st.sampled_from(["m1", "m2", None]))
    tag = draw(
        st.sampled_from(
            [
                "agent_message_chunk",
                "agent_thought_chunk",
                "user_message_chunk",
                "plan",
                "current_mode_update",
            ]
            + (["agent_message", "user_message", "state_update"] if version == 2 else [])
        )
    )
    body: dict[str, Any] = {"sessionUpdate": tag}
    if tag.endswith("_chunk"):
        body["content"] = draw(_TEXT)
    elif tag in ("agent_message", "user_message"):
        body["content"] = draw(st.lists(_TEXT, max_size=2))
    elif tag == "state_update":
        body["state"] = draw(st.sampled_from(["idle", "running"]))
        stop = draw(st.sampled_from(["end_turn", "error", "weird", None]))
        if stop is not None:
            body["stopReason"] = stop
    elif tag == "plan":
        body["entries"] = []
    else:
        body["currentModeId"] = "ask"
    if message_id is not None and version == 2 and tag != "state_update":
        body["messageId"] = message_id
    params = {"sessionId": draw(st.sampled_from(SESSION_IDS)), "update": body}
    return _line({"jsonrpc": "2.0", "method": "session/update", "params": params})


@pytest.mark.parametrize(("client", "agent"), [(1, 2), (2, 1), (2, 2), (1, 1)])
@settings(max_examples=examples(0.5))
@given(data=st.data(), coalesce=st.sampled_from([0.0, 0.05]))
def test_agent_lines_in_batches_are_handled_as_line_by_line(
    client: int, agent: int, data: st.DataObject, coalesce: float
) -> None:
    line = st.one_of(traffic(f"v{agent}"), _other_update(agent))
    lines = data.draw(st.lists(line, max_size=25))
    cuts = data.draw(st.lists(st.integers(0, 25), max_size=6))
    with pytest.MonkeyPatch.context() as monkeypatch:
        reference = _ready(client, agent, coalesce)
        _general_only(reference, monkeypatch)
        expected = _one_by_one(reference, lines, agent=True)
        expected_tail = _tail(reference)
    batched = _ready(client, agent, coalesce)
    assert _batched(batched, lines, cuts, agent=True) == expected
    assert _tail(batched) == expected_tail


@pytest.mark.parametrize(("client", "agent"), [(1, 2), (2, 1), (2, 2)])
@settings(max_examples=examples(0.25))
@given(data=st.data())
def test_client_lines_in_batches_are_handled_as_line_by_line(
    client: int, agent: int, data: st.DataObject
) -> None:
    lines = data.draw(st.lists(traffic(f"v{client}"), max_size=15))
    cuts = data.draw(st.lists(st.integers(0, 15), max_size=4))
    expected = _one_by_one(_ready(client, agent, 0.0), lines, agent=False)
    assert _batched(_ready(client, agent, 0.0), lines, cuts, agent=False) == expected


@pytest.mark.parametrize("agent", [1, 2])
def test_a_compact_tool_call_update_takes_the_typed_path(agent: int) -> None:
    core = _ready(3 - agent, agent, 0.0)
    update = {"sessionUpdate": "tool_call_update", "toolCallId": "c1", "status": "pending"}
    if agent == 2:
        update["title"] = "Read"
    params = {"sessionId": SESSION_IDS[0], "update": update}
    line = _line({"jsonrpc": "2.0", "method": "session/update", "params": params})
    policy = core.negotiation.policy
    assert policy.typed_update(core, line, 0.0)
    assert not policy.typed_update(core, line.replace(b'"jsonrpc"', b'"id":1,"jsonrpc"'), 0.0)


def test_a_note_names_its_line_in_the_batch() -> None:
    core = _ready(2, 1, 0.0)
    ok = _request(20, "session/list", {})
    out = core.from_client_lines([ok, b"not json", ok.replace(b"20", b"21")], 0.0)
    [note] = out.notes
    assert note.line == 1 and note.side == "client" and "-32700" in note.text


def test_a_line_the_core_fails_on_costs_that_line_alone(monkeypatch: pytest.MonkeyPatch) -> None:
    core = _ready(1, 2, 0.0)
    general = core._agent_line

    def failing(line: bytes, now: float) -> None:
        if b"boom" in line:
            raise RuntimeError("boom")
        general(line, now)

    monkeypatch.setattr(core, "_agent_line", failing)
    chunk = {"sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": "hi"}}
    good = _line(
        {
            "jsonrpc": "2.0",
            "method": "session/update",
            "params": {"sessionId": SESSION_IDS[0], "update": {**chunk, "messageId": "m"}},
        }
    )
    out = core.from_agent_lines([good, b'{"boom":1}', good.replace(b'"hi"', b'"ho"')], 0.0)
    assert [json.loads(line)["params"]["update"]["content"]["text"] for line in out.to_client] == [
        "hi",
        "ho",
    ]
    [note] = out.notes
    assert (note.line, note.kind, note.text) == (
        1,
        "error",
        "not handled (RuntimeError: boom); a bug",
    )


@pytest.mark.parametrize("spaced", [False, True])
def test_pass_through_settles_an_answer_after_lines_that_open_with_a_method(spaced: bool) -> None:
    core = _ready(2, 2, 0.0)
    core.from_client(_request(30, "session/list", {}), 0.0)
    note = {"jsonrpc": "2.0", "method": "session/update", "params": {"sessionId": "s1"}}
    notification = json.dumps(note).encode() if spaced else _line(note)
    # An answer whose result holds a "method" member is an answer all the same.
    answer = _line({"jsonrpc": "2.0", "id": 30, "result": {"method": "x", "sessions": []}})
    out = core.from_agent_lines([notification, answer, notification], 0.0)
    assert out.to_client == [notification, answer, notification]
    gone = core.agent_gone("the agent exited with code 1")
    answered = [json.loads(line).get("id") for line in gone.to_client]
    assert 30 not in answered  # the agent answered it: not again
    assert 9 in answered  # the prompt it never answered is


# --------------------------------------------------------------------------------------------
# Writing


def test_what_a_read_makes_goes_out_in_bursts_as_the_side_reads() -> None:
    """A read whose lines make much more (terminal output toward v1, say) is not put into the
    writer whole: past a burst, the next lines wait until the side has read enough; what waits
    is handed to the transport a piece at a time as it drains, never copied whole into it."""

    class Transport:
        """A pipe transport's buffer and flow control, drained by the test."""

        def __init__(self, writer: _writers._Writer) -> None:
            self.writer = writer
            self.writes: list[int] = []
            self.buffered = 0
            self.high = 0
            self.most = 0
            self.paused = False

        def write(self, data: bytes) -> None:
            self.writes.append(len(data))
            self.buffered += len(data)
            self.most = max(self.most, self.buffered)
            if self.buffered > self.high and not self.paused:
                self.paused = True
                self.writer.pause()

        def drain(self) -> None:
            self.buffered = 0
            if self.paused:
                self.paused = False
                self.writer.resume()

        def get_write_buffer_size(self) -> int:
            return self.buffered

        def is_closing(self) -> bool:
            return False

        def set_write_buffer_limits(self, high: int) -> None:
            self.high = high

    async def scenario() -> None:
        notes = _writers._Notes(io.StringIO())
        bridge = _stdio._Proxy(ProxyConfig(command=["true"]), notes, False)
        transport = Transport(bridge.to_client)
        bridge.to_client.attach(transport)
        handled: list[bytes] = []
        waiting: list[int] = []

        def expand(lines: Sequence[bytes], now: float) -> Outbox:
            handled.extend(lines)
            waiting.append(bridge.to_client._waiting_bytes)
            return Outbox(to_client=[b"x" * 100_000 for _ in lines])

        bridge.core.from_agent_lines = expand  # type: ignore[method-assign]  # a spy
        task = asyncio.ensure_future(bridge._handle("agent", [b"{}"] * 200))
        await asyncio.sleep(0.05)
        assert not task.done()  # the client reads nothing: one step's lines, then a wait
        assert len(handled) == _stdio._STEP
        assert transport.buffered <= _writers._FEED_BYTES + 100_001
        for _ in range(10_000):
            if task.done() and not bridge.to_client._waiting:
                break
            transport.drain()
            await asyncio.sleep(0)
        await asyncio.wait_for(task, 5)
        assert len(handled) == 200 and sum(transport.writes) == 200 * 100_001
        assert transport.most <= 2 * _writers._FEED_BYTES  # the transport holds pieces
        assert max(waiting) <= _writers.QUEUE_BYTES + _stdio._STEP * 100_001
        notes.close(1.0)

    asyncio.run(scenario())


@pytest.mark.parametrize(("client", "agent"), [(1, 2), (2, 1), (2, 2), (1, 1)])
@pytest.mark.parametrize("tag", [b'{"type":"diff"}', b"[1]", b"7", b"null"])
def test_an_update_whose_tag_is_not_a_string_is_reported_not_a_crash(
    client: int, agent: int, tag: bytes
) -> None:
    # Found by the batch property above: a v1 agent's `"sessionUpdate":{...}` toward a v2
    # client raised TypeError (unhashable) in the core, which cost the whole read's lines.
    core = _ready(client, agent, 0.0)
    line = (
        b'{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"%s","update":'
        b'{"sessionUpdate":%s,"toolCallId":"c1","title":"t"}}}' % (SESSION_IDS[0].encode(), tag)
    )
    out = core.from_agent(line, 0.0)
    assert out.to_agent == []
    if client != agent:  # converted: the bridge cannot read it, and says so
        assert any("sessionUpdate" in note.text for note in out.notes), out.notes
