"""Benchmark of the v2 -> v1 bridge on one tool call streaming 10,000 content chunks.

Prints, measured in one run (issue 4's targets):

1. bytes of v1 output without and with coalescing (target: coalesced <= 1% of uncoalesced),
   and that replaying both outputs with the v1 rules gives the same state as the v2 input;
2. the bridge's cost per message (``convert`` + ``encode`` of what it emits) against
   ``orjson.loads`` + ``orjson.dumps`` of the same lines (target: at most 3x), best of N.

v1 has no append: without coalescing every chunk resends the call's whole content, so that
output grows quadratically (gigabytes for 10,000 chunks); it is counted while streaming and
never kept.
"""

from __future__ import annotations

import argparse
import gc
import random
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import orjson

from acp_toolcalls import ToolCallStore, encode, v1, v2
from acp_toolcalls.bridge import V2ToV1Bridge
from acp_toolcalls.codec import fast_message_decoder

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # for `benchmarks.*`
from benchmarks.environment import print_environment

_WORDS = [
    "collected",
    "passed",
    "failed",
    "tests",
    "module",
    "fixture",
    "assert",
    "expected",
    "value",
    "line",
    "file",
    "path",
    "import",
    "error",
    "warning",
    "build",
    "compile",
    "link",
    "target",
    "cache",
    "hit",
    "miss",
    "retry",
    "timeout",
    "done",
]


def stream(chunks: int, seed: int = 0) -> list[bytes]:
    """One call: a first report, ``chunks`` text chunks of 40-120 characters, completion."""
    rng = random.Random(seed)

    def line(update: dict[str, object]) -> bytes:
        return orjson.dumps(
            {
                "jsonrpc": "2.0",
                "method": "session/update",
                "params": {"sessionId": "sess_bench", "update": update},
            }
        )

    out = [
        line(
            {
                "sessionUpdate": "tool_call_update",
                "toolCallId": "call_stream",
                "title": "Run the test suite",
                "kind": "execute",
                "status": "in_progress",
                "rawInput": {"command": "pytest -q"},
            }
        )
    ]
    for _ in range(chunks):
        words: list[str] = []
        while sum(len(w) + 1 for w in words) < rng.randint(40, 120):
            words.append(rng.choice(_WORDS))
        text = " ".join(words)[:120]
        out.append(
            line(
                {
                    "sessionUpdate": "tool_call_content_chunk",
                    "toolCallId": "call_stream",
                    "content": {"type": "content", "content": {"type": "text", "text": text}},
                }
            )
        )
    out.append(
        line(
            {
                "sessionUpdate": "tool_call_update",
                "toolCallId": "call_stream",
                "status": "completed",
            }
        )
    )
    return out


def through_bridge(lines: Sequence[bytes], coalesce: bool) -> tuple[int, int, ToolCallStore]:
    """(bytes out, messages out, v1 replay of the output) of the lines through a bridge."""
    bridge = V2ToV1Bridge(coalesce=coalesce)
    replay = ToolCallStore(version="v1")
    size = count = 0
    for line in lines:
        for message in bridge.convert(line).messages:
            data = encode(message)
            size += len(data)
            count += 1
            replay.apply(data)
    for message in bridge.flush().messages:
        data = encode(message)
        size += len(data)
        count += 1
        replay.apply(data)
    return size, count, replay


def _timed(fn: Callable[[], object], reps: int) -> float:
    best = float("inf")
    for _ in range(reps):
        gc.collect()
        gc.disable()
        try:
            start = time.perf_counter_ns()
            fn()
            best = min(best, time.perf_counter_ns() - start)
        finally:
            gc.enable()
    return best


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--chunks", type=int, default=10_000)
    parser.add_argument("--reps", type=int, default=5)
    parser.add_argument("--cost-only", action="store_true", help="skip the bytes (part 1)")
    parser.add_argument(
        "--sequential",
        type=int,
        metavar="CALLS",
        help="only: CALLS sequential calls, uncoalesced, against a minimal dict bridge",
    )
    parser.add_argument(
        "--breakdown",
        action="store_true",
        help="with --sequential: the cost per message kind, and of its parts",
    )
    args = parser.parse_args(argv)
    print_environment()
    if args.sequential:
        _sequential_cost(args.sequential, args.reps)
        if args.breakdown:
            _breakdown(args.sequential, args.reps)
        return 0
    lines = stream(args.chunks)
    print(f"input  {len(lines):,} v2 lines, {sum(map(len, lines)):,} bytes")

    # 1. Bytes, and the replayed state.
    if args.cost_only:
        return _cost(lines, args.reps)
    v2_state = ToolCallStore()
    for line in lines:
        v2_state.apply(line)
    start = time.perf_counter()
    plain_bytes, plain_count, plain_state = through_bridge(lines, coalesce=False)
    plain_s = time.perf_counter() - start
    coalesced_bytes, coalesced_count, coalesced_state = through_bridge(lines, coalesce=True)
    same = coalesced_state.document() == plain_state.document()
    v2_texts = _texts(v2_state)
    v1_texts = _texts(coalesced_state)
    print(
        f"uncoalesced  {plain_count:,} v1 messages, {plain_bytes:,} bytes "
        f"({plain_s:.1f} s to produce and replay)"
    )
    print(f"coalesced    {coalesced_count:,} v1 messages, {coalesced_bytes:,} bytes")
    print(
        f"coalesced / uncoalesced = {coalesced_bytes / plain_bytes:.4%} (target <= 1%); "
        f"replayed states identical: {same}; same content as the v2 replay: "
        f"{v1_texts == v2_texts} ({len(v1_texts):,} items)"
    )

    return _cost(lines, args.reps)


def _texts(state: ToolCallStore) -> list[str]:
    """The texts of the streamed call's content items (all of them text ``content`` items)."""
    items: Sequence[Any] = state.view("sess_bench", "call_stream").content
    return [c.content.text for c in items]


def _cost(lines: Sequence[bytes], reps: int) -> int:
    # 2. Cost per message, coalesced, against orjson.loads + orjson.dumps.
    loads, dumps = orjson.loads, orjson.dumps

    def baseline() -> None:
        for line in lines:
            dumps(loads(line))

    def bridged() -> None:
        bridge = V2ToV1Bridge(coalesce=True)
        for line in lines:
            for message in bridge.convert(line).messages:
                encode(message)
        for message in bridge.flush().messages:
            encode(message)

    base = _timed(baseline, reps) / len(lines)
    ours = _timed(bridged, reps) / len(lines)
    print(
        f"per message: orjson.loads+dumps {base:,.0f} ns; bridge convert+encode (coalesced) "
        f"{ours:,.0f} ns; ratio {ours / base:.2f}x (target <= 3x), best of {reps}"
    )
    return 0


# --------------------------------------------------------------------------------------------
# Sequential calls, uncoalesced, against a minimal dict bridge (issue 19)

_V1_UPDATE_ORDER: tuple[str, ...] = (
    "toolCallId",
    "kind",
    "status",
    "title",
    "content",
    "locations",
)
_V1_UPDATE_ORDER += ("rawInput", "rawOutput")
_V1_CALL_ORDER: tuple[str, ...] = ("toolCallId", "title", "kind", "status", "content", "locations")
_V1_CALL_ORDER += ("rawInput", "rawOutput")


def sequential(calls: int) -> list[bytes]:
    """``calls`` tool calls one after another, each: a first report (title, kind, status,
    rawInput, locations), four text chunks, completion with rawOutput."""
    out = []
    for i in range(calls):
        call = f"call_{i}"
        first: dict[str, object]
        first = {"sessionUpdate": "tool_call_update", "toolCallId": call, "title": f"Read {i}.py"}
        first |= {"kind": "read", "status": "in_progress", "rawInput": {"path": f"/src/{i}.py"}}
        out.append(_update_line({**first, "locations": [{"path": f"/src/{i}.py"}]}))
        for j in range(4):
            text = {"type": "text", "text": f"line {j} of the file {i} with some words in it"}
            chunk = {"sessionUpdate": "tool_call_content_chunk", "toolCallId": call}
            out.append(_update_line({**chunk, "content": {"type": "content", "content": text}}))
        done = {"sessionUpdate": "tool_call_update", "toolCallId": call, "status": "completed"}
        out.append(_update_line({**done, "rawOutput": {"bytes": 1234}}))
    return out


def _update_line(update: dict[str, object]) -> bytes:
    params = {"sessionId": "sess_bench", "update": update}
    return orjson.dumps({"jsonrpc": "2.0", "method": "session/update", "params": params})


def minimal_bridge(lines: Sequence[bytes]) -> list[bytes]:
    """What ``V2ToV1Bridge()`` writes for these lines, with dicts and orjson: the first report
    of a call becomes a v1 ``tool_call``, a chunk a ``tool_call_update`` with the whole
    content, any other update a ``tool_call_update`` with its fields (only what this stream
    uses: text content, no clears, no terminals, no unknown keys)."""
    loads, dumps = orjson.loads, orjson.dumps
    calls: dict[tuple[str, str], list[object]] = {}
    out = []
    for line in lines:
        params = loads(line)["params"]
        session, update = params["sessionId"], params["update"]
        key = (session, update["toolCallId"])
        content = calls.get(key)
        if update["sessionUpdate"] == "tool_call_content_chunk":
            assert content is not None
            content.append(update["content"])
            body = {"sessionUpdate": "tool_call_update", "toolCallId": key[1], "content": content}
        elif content is None:
            calls[key] = []
            body = {"sessionUpdate": "tool_call"}
            body |= {name: update[name] for name in _V1_CALL_ORDER if name in update}
        else:
            body = {"sessionUpdate": "tool_call_update"}
            body |= {name: update[name] for name in _V1_UPDATE_ORDER if name in update}
        message = {"method": "session/update", "jsonrpc": "2.0"}
        out.append(dumps({**message, "params": {"sessionId": session, "update": body}}))
    return out


def _sequential_cost(calls: int, reps: int) -> None:
    lines = sequential(calls)

    def ours() -> list[bytes]:
        bridge = V2ToV1Bridge()
        return [encode(m) for line in lines for m in bridge.convert(line).messages]

    same = ours() == minimal_bridge(lines)
    base = _timed(lambda: minimal_bridge(lines), reps) / len(lines)
    mine = _timed(ours, reps) / len(lines)
    print(
        f"sequential calls, uncoalesced: {len(lines):,} lines; byte-identical to the minimal "
        f"dict bridge: {same}; per line: minimal {base:,.0f} ns, V2ToV1Bridge {mine:,.0f} ns, "
        f"ratio {mine / base:.2f}x (target <= 1.5x), best of {reps}"
    )


def _breakdown(calls: int, reps: int) -> None:
    """Per message kind of the sequential stream, timed line by line (best of ``reps`` rounds
    per kind; outputs kept, as above): the minimal dict bridge; the parts of the bridge's work
    that no bridge built on the typed models and the store can skip (the typed decode, the
    store's apply, building the v1 message and encoding it: the floor of this design); and
    V2ToV1Bridge. Each figure includes the timer (the empty step)."""
    lines = sequential(calls)
    decode = fast_message_decoder("v2")

    def empty() -> Callable[[bytes], object]:
        return lambda line: line

    def minimal() -> Callable[[bytes], object]:
        contents: dict[str, list[object]] = {}
        loads, dumps = orjson.loads, orjson.dumps

        def step(line: bytes) -> object:
            params = loads(line)["params"]
            update = params["update"]
            content = contents.get(update["toolCallId"])
            if update["sessionUpdate"] == "tool_call_content_chunk":
                assert content is not None
                content.append(update["content"])
                body = {"sessionUpdate": "tool_call_update", "toolCallId": update["toolCallId"]}
                body["content"] = content
            elif content is None:
                contents[update["toolCallId"]] = []
                body = {"sessionUpdate": "tool_call"}
                body |= {name: update[name] for name in _V1_CALL_ORDER if name in update}
            else:
                body = {"sessionUpdate": "tool_call_update"}
                body |= {name: update[name] for name in _V1_UPDATE_ORDER if name in update}
            message = {"method": "session/update", "jsonrpc": "2.0"}
            return dumps({**message, "params": {"sessionId": params["sessionId"], "update": body}})

        return step

    def decoded() -> Callable[[bytes], object]:
        return decode

    def stored() -> Callable[[bytes], object]:
        store = ToolCallStore()

        def step(line: bytes) -> object:
            params = decode(line).params
            return store.apply_update(params.session_id, params.update)

        return step

    def floor() -> Callable[[bytes], object]:
        store = ToolCallStore()
        shown: dict[str, list[v1.ToolCallContent]] = {}

        def step(line: bytes) -> object:
            params = decode(line).params
            update = params.update
            store.apply_update(params.session_id, update)
            tool_call_id = update.tool_call_id
            out: object
            if type(update) is v2.ToolCallContentChunk:
                flat = shown[tool_call_id]
                item: Any = update.content  # a text `content` item: the stream has no other
                flat.append(v1.Content(content=v1.TextContent(text=item.content.text)))
                out = v1.SessionToolCallUpdate(tool_call_id=tool_call_id, content=list(flat))
            elif tool_call_id not in shown:
                shown[tool_call_id] = []
                locations = [v1.ToolCallLocation(path=loc.path) for loc in update.locations]
                out = v1.ToolCall(
                    tool_call_id=tool_call_id,
                    title=update.title,
                    kind=update.kind,
                    status=update.status,
                    raw_input=update.raw_input,
                    locations=locations,
                )
            else:
                out = v1.SessionToolCallUpdate(
                    tool_call_id=tool_call_id, status=update.status, raw_output=update.raw_output
                )
            notification = v1.SessionNotification(session_id=params.session_id, update=out)
            return encode(v1.SessionUpdateMessage(params=notification))

        return step

    def bridged() -> Callable[[bytes], object]:
        bridge = V2ToV1Bridge()
        return lambda line: [encode(m) for m in bridge.convert(line).messages]

    check = floor()
    assert [check(line) for line in lines] == minimal_bridge(lines)  # the same bytes
    kinds = ("first report", "chunk", "completion")
    clock = time.perf_counter_ns
    rows = []
    for name, make in (
        ("(empty step)", empty),
        ("minimal dict bridge", minimal),
        ("typed decode", decoded),
        ("  + store.apply_update", stored),
        ("  + v1 message + encode (floor)", floor),
        ("V2ToV1Bridge convert + encode", bridged),
    ):
        best = [float("inf")] * 3
        for _ in range(reps):
            step, kept, spent = make(), [], [0, 0, 0]
            gc.collect()
            gc.disable()
            try:
                for index, line in enumerate(lines):
                    kind = 0 if index % 6 == 0 else 2 if index % 6 == 5 else 1
                    start = clock()
                    kept.append(step(line))
                    spent[kind] += clock() - start
            finally:
                gc.enable()
            best = [min(b, s) for b, s in zip(best, spent, strict=True)]
        rows.append((name, [best[0] / calls, best[1] / (4 * calls), best[2] / calls]))
        rows[-1][1].append(sum(best) / len(lines))
    print(f"per message kind, ns (best of {reps}; each includes the timer)")
    print(f"{'':34}" + "".join(f"{k:>14}" for k in (*kinds, "per line")))
    for name, figures in rows:
        print(f"{name:34}" + "".join(f"{f:>14,.0f}" for f in figures))


if __name__ == "__main__":
    raise SystemExit(main())
