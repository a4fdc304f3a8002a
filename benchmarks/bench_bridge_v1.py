"""v1 input: ``V1ToV2Bridge`` and ``ToolCallStore(version="v1")`` against orjson and a minimal
dict bridge / fold of the same stream (issue 19).

Stream: ``CALLS`` tool calls one after another, as a v1 agent sends them: a ``tool_call``
(title, kind, ``pending``, rawInput, locations), four ``tool_call_update``s each carrying the
whole content so far (v1 has no append; the first also sets ``in_progress``), and a
``tool_call_update`` ``completed`` with rawOutput. Measured in one run, best of ``--reps``
rounds, gc off (as in the other benchmarks), per line:

1. the bridge: ``V1ToV2Bridge().convert(line)`` and ``encode`` of what it emits, against a
   minimal dict bridge that writes the same bytes (``orjson.loads``, a v2 ``tool_call_update``
   with the fields the line sets, in the v2 order, ``orjson.dumps``; since issue 26, content
   that begins with the items the client holds as a ``tool_call_content_chunk`` per new item,
   the update only when something else is left): checked byte-identical before timing.
   Target: at most 2x.
2. the store: ``ToolCallStore(version="v1").apply(line)`` against ``orjson.loads`` and a dict
   fold (the call's dict updated with the fields the line sets), for comparison (the store's
   own row of the issue belongs to it).

    python benchmarks/bench_bridge_v1.py [--calls 2000] [--reps 7]
"""

from __future__ import annotations

import argparse
import gc
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import orjson

from acp_toolcalls import ToolCallStore, encode
from acp_toolcalls.bridge import V1ToV2Bridge

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # for `benchmarks.*`
from benchmarks.environment import print_environment
from benchmarks.v1_messages import SID, sequential

_V2_ORDER = ("title", "kind", "status", "content", "locations", "rawInput", "rawOutput")
"""The v2 ``ToolCallUpdate`` keys this stream sets, in the order the v2 model writes them."""


def minimal_bridge(lines: Sequence[bytes]) -> list[bytes]:
    """What ``V1ToV2Bridge()`` writes for these lines, with dicts and orjson: every
    ``tool_call`` and ``tool_call_update`` becomes a v2 ``tool_call_update`` with the fields the
    line sets (only what this stream uses: text content, first creates, no nulls); content
    that begins with the items the client holds goes as a chunk per new item (issue 26)."""
    loads, dumps = orjson.loads, orjson.dumps
    held: dict[str, list[Any]] = {}
    out = []
    for line in lines:
        params = loads(line)["params"]
        update = params["update"]
        call = update["toolCallId"]
        message = {"method": "session/update", "jsonrpc": "2.0"}
        body = {"sessionUpdate": "tool_call_update", "toolCallId": call}
        body |= {name: update[name] for name in _V2_ORDER if name in update}
        content, known = body.get("content"), held.get(call)
        if content is not None:
            held[call] = content
            if known is not None and content[: len(known)] == known:
                del body["content"]
                for item in content[len(known) :]:
                    chunk = {"sessionUpdate": "tool_call_content_chunk", "toolCallId": call}
                    update_params = {"sessionId": params["sessionId"], "update": chunk}
                    chunk["content"] = item
                    out.append(dumps({**message, "params": update_params}))
                if len(body) == 2:
                    continue
        out.append(dumps({**message, "params": {"sessionId": params["sessionId"], "update": body}}))
    return out


def dict_fold(lines: Sequence[bytes]) -> dict[tuple[str, str], dict[str, Any]]:
    """The calls' state as dicts: each call's dict updated with the fields a line sets."""
    loads = orjson.loads
    calls: dict[tuple[str, str], dict[str, Any]] = {}
    for line in lines:
        params = loads(line)["params"]
        update = params["update"]
        key = (params["sessionId"], update["toolCallId"])
        held = calls.get(key)
        if held is None:
            held = calls[key] = {}
        held.update({k: v for k, v in update.items() if k != "sessionUpdate" and v is not None})
    return calls


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
    parser.add_argument("--calls", type=int, default=2_000)
    parser.add_argument("--reps", type=int, default=7)
    args = parser.parse_args(argv)
    print_environment()
    lines = sequential(args.calls)
    size = sum(map(len, lines))
    print(f"input        {len(lines):,} v1 lines, {size:,} bytes, {args.calls:,} calls")

    def bridged() -> list[bytes]:
        bridge = V1ToV2Bridge()
        return [encode(m) for line in lines for m in bridge.convert(line).messages]

    def stored() -> ToolCallStore:
        store = ToolCallStore(version="v1")
        for line in lines:
            store.apply(line)
        return store

    same = bridged() == minimal_bridge(lines)
    folded = dict_fold(lines)
    state = stored()
    views = {(SID, view.tool_call_id): view for view in state.views(SID)}
    agree = len(views) == len(folded) and all(
        views[key].status == held["status"] and len(views[key].content) == len(held["content"])
        for key, held in folded.items()
    )
    print(f"check        bridge output byte-identical to the minimal dict bridge: {same}")
    print(f"check        store and dict fold agree (calls, statuses, content counts): {agree}")

    n = len(lines)
    base = _timed(lambda: minimal_bridge(lines), args.reps) / n
    mine = _timed(bridged, args.reps) / n
    fold = _timed(lambda: dict_fold(lines), args.reps) / n
    store = _timed(stored, args.reps) / n
    print(f"best of {args.reps} rounds, gc off, per line")
    print(f"  minimal dict bridge (orjson)       {base:8,.0f} ns")
    ratio = mine / base
    print(f"  V1ToV2Bridge convert + encode      {mine:8,.0f} ns   {ratio:5.2f}x (target <= 2x)")
    print(f"  orjson.loads + dict fold           {fold:8,.0f} ns")
    print(f"  ToolCallStore(version='v1').apply  {store:8,.0f} ns   {store / fold:5.2f}x")
    return 0 if same and agree else 1


if __name__ == "__main__":
    raise SystemExit(main())
