"""Which engine answers "is this message valid?" for ``acp-toolcalls validate`` (issue 17).

Measured in one run, on the bundled v2 schema and messages of ``messages.generate`` (valid
tool-call traffic) plus a mutated copy of each (a third of them invalid):

1. the yes/no question for ``params`` against ``$defs/UpdateSessionNotification``, per message:
   jsonschema (the yes/no validator ``acp_toolcalls.schema`` builds on it, the baseline),
   fastjsonschema (Python code generated from the schema) and jsonschema-rs (Rust); best and
   median of N rounds, and the ratio to jsonschema;
2. whether each engine agrees with jsonschema's full validator on every message, valid and
   mutated (fastjsonschema implements drafts 4 to 7: the schema's ``unevaluatedProperties``,
   a 2019-09 keyword, is not checked);
3. ``schema.validate_message`` per message with each engine ``acp_toolcalls`` can use.

fastjsonschema is not a dependency: ``pip install fastjsonschema`` to include it.
"""

from __future__ import annotations

import argparse
import copy
import random
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import orjson

from acp_toolcalls.check import validate_message
from acp_toolcalls.schema import _schemas as schema

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # for `benchmarks.*`
from benchmarks.environment import print_environment
from benchmarks.messages import generate

POINTER = "#/$defs/UpdateSessionNotification"


def _mutate(message: dict[str, Any], rng: random.Random) -> dict[str, Any]:
    """One random change to ``params.update``: a value of another type, a key dropped, an
    unknown key (where the schema closes the object), or a bad discriminator."""
    out = copy.deepcopy(message)
    update = out["params"]["update"]
    key = rng.choice(sorted(update))
    choice = rng.randrange(4)
    if choice == 0:
        update[key] = rng.choice([42, None, "x", [], {}, True])
    elif choice == 1:
        del update[key]
    elif choice == 2:
        update[f"unknown_{rng.randrange(9)}"] = 1
    else:
        update["sessionUpdate"] = "tool_call_updat"
    return out


def _timed(check: Callable[[Any], bool], values: list[Any], rounds: int) -> tuple[float, float]:
    times = []
    for _ in range(rounds):
        start = time.perf_counter()
        for value in values:
            check(value)
        times.append((time.perf_counter() - start) / len(values))
    return min(times), statistics.median(times)


def _engines() -> dict[str, Callable[[Any], bool]]:
    quick, _full = schema._validators_of("v2", POINTER, "jsonschema")
    engines: dict[str, Callable[[Any], bool]] = {"jsonschema": quick.is_valid}
    root = schema._schema("v2")
    try:
        import fastjsonschema
    except ImportError:
        print("fastjsonschema: not installed (pip install fastjsonschema to include it)")
    else:
        compiled = fastjsonschema.compile(
            {"$ref": POINTER, "$defs": root["$defs"]}, use_formats=False
        )

        def fast(value: Any) -> bool:
            try:
                compiled(value)
            except fastjsonschema.JsonSchemaException:
                return False
            return True

        engines["fastjsonschema"] = fast
    if schema._compiled_engine() is not None:
        rs, _ = schema._validators_of("v2", POINTER, "jsonschema-rs")
        engines["jsonschema-rs"] = rs.is_valid
    else:
        print("jsonschema-rs: not installed")
    return engines


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--messages", type=int, default=20_000)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    print_environment()
    rng = random.Random(args.seed)
    valid = [orjson.loads(line) for line in generate(args.messages, args.seed)]
    mutated = [_mutate(m, rng) for m in valid]
    _, full = schema._validators_of("v2", POINTER, "jsonschema")
    truth = [full.is_valid(m["params"]) for m in valid + mutated]
    print(
        f"\ncorpus: {len(valid)} generated messages (seed {args.seed}) and a mutated copy of each "
        f"({truth[len(valid) :].count(False)} of them invalid); best / median of {args.rounds}"
    )
    print("\n1-2. params against $defs/UpdateSessionNotification, yes/no per message")
    engines = _engines()
    baseline = None
    for name, check in engines.items():
        params = [m["params"] for m in valid + mutated]
        best, median = _timed(check, params, args.rounds)
        baseline = baseline or best
        wrong = sum(check(p) != t for p, t in zip(params, truth, strict=True))
        print(
            f"  {name:15s} {best * 1e6:9.2f} us  (median {median * 1e6:9.2f} us)  "
            f"{baseline / best:7.1f}x jsonschema   disagrees on {wrong} of {len(params)}"
        )
    print("\n3. schema.validate_message per message (envelope, method, params), valid corpus")
    saved = schema.ENGINE
    try:
        for name in ("jsonschema", "jsonschema-rs"):
            if name == "jsonschema-rs" and schema._compiled_engine() is None:
                continue
            schema.ENGINE = name  # type: ignore[assignment]  # switched for the run, by name
            best, median = _timed(lambda m: not validate_message(m, "v2"), valid, args.rounds)
            print(f"  ENGINE={name:15s} {best * 1e6:9.2f} us  (median {median * 1e6:9.2f} us)")
    finally:
        schema.ENGINE = saved


if __name__ == "__main__":
    main()
