"""Cost of one terminal output chunk through ``V2ToV1Bridge``, by how much output the
terminal holds (issue 19).

A call shows a terminal; the agent streams ``terminal_output_chunk``s of about 1 KiB of
coloured test-runner lines. Uncoalesced, every chunk re-renders the call's v1 content: the
terminal's sanitized tail (``tail_chars``, 64 Ki characters) in a fenced block. Per chunk, in
one run, best of ``--reps`` rounds of ``--chunks`` chunks:

- the bridge: ``convert`` of the chunk line and ``encode`` of what it emits;
- the limit: the same render over the tail only (decode the chunk line, sanitize the last
  ``tail_chars`` bytes the terminal holds, keep the tail, fence it, and encode the v1
  ``tool_call_update`` that carries it), written here in a few lines.

The terminal first holds ``--held`` bytes (the bridge caps what it keeps at 4 x
``tail_chars``, 256 KiB; the larger sizes raise that cap on the bridge's store, to show that
the cost no longer grows with what is held).

    python benchmarks/bench_terminal.py [--held 65536,262144,1048576,4194304] [--chunks 500]
"""

from __future__ import annotations

import argparse
import base64
import gc
import random
import statistics
import sys
import time
from collections.abc import Sequence
from pathlib import Path

import msgspec
import orjson

from acp_toolcalls import encode
from acp_toolcalls.bridge import DEFAULT_TAIL_CHARS, V2ToV1Bridge, fenced, sanitize, tail

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # for `benchmarks.*`
from benchmarks.environment import print_environment

SID = "sess_bench"
_WORDS = ["PASSED", "FAILED", "tests/store/test_store.py", "::test_case", "collected", "in 0.12s"]


def _line(update: dict[str, object]) -> bytes:
    params = {"sessionId": SID, "update": update}
    return orjson.dumps({"jsonrpc": "2.0", "method": "session/update", "params": params})


def output(size: int, rng: random.Random) -> bytes:
    """About ``size`` bytes of test-runner output with colours and a progress ``\\r``."""
    out = bytearray()
    while len(out) < size:
        words = " ".join(rng.choice(_WORDS) for _ in range(rng.randint(3, 9)))
        colour = rng.choice(["\x1b[32m", "\x1b[31m", "\x1b[1m"])
        out += f"{colour}{words}\x1b[0m [{rng.randint(0, 100):3d}%]\r\n".encode()
    return bytes(out[:size])


def chunk_line(data: bytes) -> bytes:
    encoded = base64.b64encode(data).decode()
    return _line({"sessionUpdate": "terminal_output_chunk", "terminalId": "t", "data": encoded})


def bridge_holding(held: int, rng: random.Random) -> V2ToV1Bridge:
    bridge = V2ToV1Bridge()
    if held > 4 * DEFAULT_TAIL_CHARS:  # let the store keep more than the bridge would
        limits = msgspec.structs.replace(bridge.store.limits, max_terminal_bytes=2 * held)
        bridge.store.limits = limits
    bridge.convert(_line({"sessionUpdate": "terminal_update", "terminalId": "t", "command": "t"}))
    item = {"type": "terminal", "terminalId": "t"}
    first = {"sessionUpdate": "tool_call_update", "toolCallId": "c", "title": "Run tests"}
    bridge.convert(_line({**first, "kind": "execute", "content": [item]}))
    bridge.convert(chunk_line(output(held, rng)))
    return bridge


def per_chunk(held: int, chunks: Sequence[bytes], reps: int) -> tuple[float, float, float]:
    """(bridge median, bridge mean, limit median) in ns per chunk, best round of ``reps``."""
    bridge_medians, bridge_means, limit_medians = [], [], []
    for rep in range(reps):
        bridge = bridge_holding(held, random.Random(rep))
        times = []
        gc.collect()
        gc.disable()
        try:
            for line in chunks:
                start = time.perf_counter_ns()
                for message in bridge.convert(line).messages:
                    encode(message)
                times.append(time.perf_counter_ns() - start)
        finally:
            gc.enable()
        bridge_medians.append(statistics.median(times))
        bridge_means.append(statistics.fmean(times))
        # The limit: render over the tail only, from a buffer holding as much.
        buffer = bytearray(output(held, random.Random(rep)))
        times = []
        gc.disable()
        try:
            for line in chunks:
                start = time.perf_counter_ns()
                update = orjson.loads(line)["params"]["update"]
                buffer += base64.b64decode(update["data"])
                text = fenced("$ t\n" + tail(sanitize(bytes(buffer[-DEFAULT_TAIL_CHARS:]))))
                body = {"sessionUpdate": "tool_call_update", "toolCallId": "c"}
                content = [{"type": "content", "content": {"type": "text", "text": text}}]
                orjson.dumps(
                    {
                        "jsonrpc": "2.0",
                        "method": "session/update",
                        "params": {"sessionId": SID, "update": {**body, "content": content}},
                    }
                )
                times.append(time.perf_counter_ns() - start)
        finally:
            gc.enable()
        limit_medians.append(statistics.median(times))
    return min(bridge_medians), min(bridge_means), min(limit_medians)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--held", default="65536,262144,1048576,4194304")
    parser.add_argument("--chunks", type=int, default=500)
    parser.add_argument("--reps", type=int, default=3)
    args = parser.parse_args(argv)
    print_environment()
    rng = random.Random(7)
    chunks = [chunk_line(output(rng.randint(800, 1200), rng)) for _ in range(args.chunks)]
    print(f"{args.chunks} chunks of about 1 KiB each, best of {args.reps} rounds")
    print("held bytes   bridge median   bridge mean   limit median   median ratio")
    for held in (int(size) for size in args.held.split(",")):
        ours, mean, limit = per_chunk(held, chunks, args.reps)
        print(
            f"{held:>10,}   {ours / 1e6:10.3f} ms   {mean / 1e6:8.3f} ms   "
            f"{limit / 1e6:9.3f} ms   {ours / limit:8.2f}x"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
