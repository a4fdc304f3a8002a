"""Decode throughput of ACP v2 ``session/update`` tool-call notifications.

Compares, in one run and on the same generated lines (``messages.generate``):

- baseline A: ``orjson.loads(line)``;
- baseline B: the official SDK (``agent-client-protocol``): ``orjson.loads(line)`` then its v2
  pydantic model ``UpdateSessionNotification.model_validate(obj["params"])`` (what the SDK's
  own connection does, with orjson instead of ``json``), or ``model_validate_json`` on the
  params bytes (pre-extracted outside the timed loop), whichever is faster on this machine;
- ours: ``acp_toolcalls.decode_message(line, version="v2")``.

Method: one warm-up pass per implementation, then ``--reps`` repetitions; in each repetition
every implementation makes one full pass (order rotated between repetitions so machine noise
hits all alike), timed with ``time.perf_counter_ns`` with the garbage collector disabled; the
best (minimum) pass is reported. Ours is also timed with the collector enabled.

Usage: ``PYTHONPATH=src python benchmarks/bench_decode.py [--n 100000] [--reps 5]``.
"""

from __future__ import annotations

import argparse
import gc
import importlib
import importlib.metadata
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import orjson

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # for `benchmarks.*`
from benchmarks.environment import print_environment
from benchmarks.messages import generate

Pass = Callable[[Sequence[bytes]], None]

# Projected total SDK timing (all repetitions) above which the SDK is timed on a prefix.
_SDK_BUDGET_S = 75.0
_SDK_PREFIX = 20_000
_SELECT_N = 5_000


def _load_ours() -> Callable[..., Any] | None:
    try:
        module = importlib.import_module("acp_toolcalls")
    except ImportError:
        # Not installed and no PYTHONPATH=src: fall back to the source tree.
        sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "src"))
        try:
            module = importlib.import_module("acp_toolcalls")
        except ImportError:
            return None
    decode = getattr(module, "decode_message", None)
    return decode if callable(decode) else None


def _pass_empty(lines: Sequence[bytes]) -> None:
    for _line in lines:
        pass


def _pass_orjson(lines: Sequence[bytes]) -> None:
    loads = orjson.loads
    for line in lines:
        loads(line)


def _make_sdk_passes() -> tuple[Pass, Pass]:
    from acp.experimental.v2.schema import UpdateSessionNotification

    validate = UpdateSessionNotification.model_validate
    validate_json = UpdateSessionNotification.model_validate_json
    loads = orjson.loads

    def sdk_dict(lines: Sequence[bytes]) -> None:
        for line in lines:
            validate(loads(line)["params"])

    def sdk_json(params_lines: Sequence[bytes]) -> None:
        for params in params_lines:
            validate_json(params)

    return sdk_dict, sdk_json


def _make_ours(decode: Callable[..., Any]) -> Pass:
    def ours(lines: Sequence[bytes]) -> None:
        for line in lines:
            decode(line, version="v2")

    return ours


_FLOOR = "  its msgspec decoder alone (no Python call around it)"


def _make_floor() -> Pass:
    """The typed msgspec decode inside ``decode_message``, without its Python frame: the floor
    that shows how much of the ratio is the interpreter's call overhead."""
    from acp_toolcalls.codec import _decode

    hot = _decode._HOT_DECODE["v2"]

    def floor(lines: Sequence[bytes]) -> None:
        for line in lines:
            hot(line)

    return floor


def _timed(fn: Pass, data: Sequence[bytes], *, gc_on: bool = False) -> int:
    gc.collect()
    if not gc_on:
        gc.disable()
    try:
        t0 = time.perf_counter_ns()
        fn(data)
        return time.perf_counter_ns() - t0
    finally:
        gc.enable()


def _check_ours(decode: Callable[..., Any], lines: Sequence[bytes]) -> str | None:
    """Decode a sample once (also a warm-up); return a problem description or None."""
    with_diagnostics = 0
    types: dict[str, int] = {}
    attr = "message"
    for i, line in enumerate(lines):
        try:
            result = decode(line, version="v2")
        except Exception as exc:
            return f"decode_message raised on message #{i}: {type(exc).__name__}: {exc}"
        # The brief names the typed model ``.message``; the codec calls it ``.value``.
        value = getattr(result, "message", None)
        if value is None:
            attr, value = "value", getattr(result, "value", None)
        if value is None:
            return f"decode_message returned no .message/.value for message #{i}: {result!r}"
        types[type(value).__name__] = types.get(type(value).__name__, 0) + 1
        if getattr(result, "diagnostics", ()):
            with_diagnostics += 1
    print(
        f"ours         checked on {len(lines):,} messages: ."
        f"{attr} is {', '.join(f'{k} x{v:,}' for k, v in types.items())}; "
        f"{with_diagnostics:,} with diagnostics"
    )
    if with_diagnostics:
        print("note: every generated message is schema-valid; diagnostics are unexpected")
    return None


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--n", type=int, default=100_000, help="messages per pass")
    parser.add_argument("--reps", type=int, default=5, help="repetitions (best is reported)")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    n, reps = args.n, args.reps

    print_environment()
    t_start = time.perf_counter()
    lines = generate(n, args.seed)
    sizes = sorted(len(line) for line in lines)
    print(
        f"messages     {n:,} session/update tool-call notifications (seed {args.seed}), "
        f"{sizes[0]}-{sizes[-1]} bytes, median {sizes[n // 2]}, "
        f"{sum(sizes) / 1e6:.1f} MB; generated in {time.perf_counter() - t_start:.1f}s"
    )

    decode = _load_ours()
    ours: Pass | None = None
    if decode is None:
        print("acp_toolcalls.decode_message not available yet")
    else:
        problem = _check_ours(decode, lines[: min(n, 20_000)])
        if problem is None:
            ours = _make_ours(decode)
        else:
            print(f"acp_toolcalls.decode_message not benchmarked: {problem}")

    sdk_dict, sdk_json = _make_sdk_passes()
    params_lines = [orjson.dumps(orjson.loads(line)["params"]) for line in lines]

    # Warm-up (lazy imports, pydantic/msgspec caches, branch predictors), and the choice of
    # the faster SDK route on a prefix.
    warm = lines[: min(n, 2_000)]
    for fn in (_pass_empty, _pass_orjson, sdk_dict, *((ours,) if ours else ())):
        fn(warm)
    sdk_json(params_lines[: len(warm)])
    sel = min(n, _SELECT_N)
    t_dict = min(_timed(sdk_dict, lines[:sel]) for _ in range(2)) / sel
    t_json = min(_timed(sdk_json, params_lines[:sel]) for _ in range(2)) / sel
    if t_dict <= t_json:
        sdk_name = "SDK: orjson.loads + model_validate(params)"
        sdk_fn, sdk_data = sdk_dict, lines
    else:
        sdk_name = "SDK: model_validate_json(params bytes)"
        sdk_fn, sdk_data = sdk_json, params_lines
    print(
        f"SDK route    on the first {sel:,} messages: orjson.loads + "
        f"UpdateSessionNotification.model_validate(obj['params']) {t_dict:,.0f} ns/msg; "
        f"UpdateSessionNotification.model_validate_json(params bytes, pre-extracted, "
        f"extraction not timed) {t_json:,.0f} ns/msg -> using "
        f"{'model_validate' if sdk_fn is sdk_dict else 'model_validate_json'}"
    )
    sdk_n = n
    if min(t_dict, t_json) * n * reps / 1e9 > _SDK_BUDGET_S and n > _SDK_PREFIX:
        sdk_n = _SDK_PREFIX
        sdk_data = sdk_data[:sdk_n]
        print(
            f"note: the SDK is timed on the first {sdk_n:,} messages only "
            f"(a full pass would take {min(t_dict, t_json) * n / 1e9:.0f}s per repetition)"
        )

    impls: list[tuple[str, Pass, Sequence[bytes], bool]] = [
        ("(empty loop)", _pass_empty, lines, False),
        ("orjson.loads", _pass_orjson, lines, False),
        (sdk_name, sdk_fn, sdk_data, False),
    ]
    if ours is not None:
        impls.append(('acp_toolcalls.decode_message(version="v2")', ours, lines, False))
        impls.append(('acp_toolcalls.decode_message(version="v2"), gc on', ours, lines, True))
        impls.append((_FLOOR, _make_floor(), lines, False))

    best: dict[str, float] = {}
    for rep in range(reps):
        shift = rep % len(impls)
        for name, fn, data, gc_on in impls[shift:] + impls[:shift]:
            ns = _timed(fn, data, gc_on=gc_on) / len(data)
            best[name] = min(best.get(name, ns), ns)
        print(
            f"  repetition {rep + 1}/{reps} done ({time.perf_counter() - t_start:.0f}s)", flush=True
        )

    base = best["orjson.loads"]
    width = max(len(name) for name, *_ in impls)
    print()
    print(
        f"best of {reps} passes, gc disabled unless noted; {n:,} messages per pass"
        + (f" ({sdk_n:,} for the SDK)" if sdk_n != n else "")
    )
    print(f"{'implementation':<{width}}  {'ns/msg':>9}  {'vs orjson.loads':>15}")
    for name, *_ in impls:
        ratio = "" if name == "(empty loop)" else f"{best[name] / base:.2f}x"
        print(f"{name:<{width}}  {best[name]:>9,.0f}  {ratio:>15}")
    print()
    sdk = best[sdk_name]
    if ours is not None:
        mine = best['acp_toolcalls.decode_message(version="v2")']
        print(
            f"ours/orjson = {mine / base:.2f} (target <= 1.00); "
            f"sdk/ours = {sdk / mine:.1f} (target >= 8)"
        )
    else:
        print(
            f"ours/orjson = n/a; sdk/orjson = {sdk / base:.1f} "
            f"(acp_toolcalls.decode_message not available yet)"
        )
    print(f"total time {time.perf_counter() - t_start:.0f}s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
