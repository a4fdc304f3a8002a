"""Throughput of the client-side tool-call store (``ToolCallStore``) and of ``replay --json``.

Four measurements, each with its baseline taken in the same run (issues 3 and 19):

1. Decode-and-apply per message on ``messages.generate_live``: 200,000 mixed v2 lines over 500
   tool calls that are all live at once (first reports, progress, text and diff content chunks,
   permission requests with ``tool_call`` subjects, terminals with output chunks, completions).
   (a) ``orjson.loads(line)`` alone; (b) ``store.apply(line)`` on a fresh ``ToolCallStore`` per
   pass, keeping all the state; (c) the official SDK (``agent-client-protocol``) validating the
   same lines with its v2 pydantic models and keeping nothing: ``orjson.loads(line)`` then
   ``UpdateSessionNotification.model_validate(params)`` for ``session/update`` or
   ``RequestPermissionRequest.model_validate(params)`` for ``session/request_permission``.
   (d) the least a store can do with the same decoder (issue 19's limit): the project's own
   typed decode (``fast_message_decoder``) and a minimal fold written here, which keeps the same
   state (every call's fields and content items, every terminal's fields and output bytes) in
   plain dicts, with no events, no byte accounting, no caps and no diagnostics.
   Targets: b/a <= 1.5, c/b >= 6, b/d <= 1.2 (issue 19, for the compiled build). Breakdown rows:
   the store's typed decode alone (results dropped; and kept, which costs what retaining the
   decoded objects costs), and the state update alone (``apply`` of pre-decoded typed messages;
   these are read back from memory, so the two halves do not add up exactly to (b)).
2. Appending ``tool_call_content_chunk`` lines to ONE call: 10,000 vs 100,000 chunks, fresh
   store each, with ``Limits.unlimited()`` and with the default ``Limits()`` (cap 10,000
   items: the 100,000 run trims). Target: linear, ratio of totals <= 12x.
3. The same 200,000 lines through ``acp-toolcalls replay --json FILE`` as a whole process (wall
   time, stdout to /dev/null), against ``python -c "import orjson; [orjson.loads(l) for l in
   open(F,'rb')]"`` and against the start-up of both processes. Target (issue 19): <= 1.5x.
4. v1 input (issue 19): the same streams as v1 lines (``_v1_corpus``: a first report is a v1
   ``tool_call``, every other tool-call update a ``tool_call_update``, a content chunk a
   ``tool_call_update`` whose ``content`` is that one item, a v2 diff a v1 whole-file diff,
   permission requests v1's; terminal messages have no v1 form and are left out) through
   ``ToolCallStore(version="v1").apply(line)``, against ``orjson.loads`` and a dict fold of
   the same lines (v1's rules: ``null`` leaves a field as it was, every other value replaces
   it). Target: at most 2x.

Method (as ``bench_decode.py``): a warm-up, then ``--reps`` repetitions; in each repetition
every implementation makes one full pass, in an order rotated between repetitions so machine
noise hits all alike; timed with ``time.perf_counter_ns`` with the garbage collector disabled
(rows marked "gc on" keep it enabled); the best (minimum) pass is reported. Freeing a pass's
store is not timed. Processes: best of ``--proc-reps`` (3), rotated the same way.

The store's work is checked, not assumed: after a pass its state is compared with an
independent fold of the same lines (500 calls, every call's content item count, every
terminal's byte count, final statuses, the events), and ``replay --json``'s document with
``store.document()``.

Usage: ``python benchmarks/bench_store.py [--n 200000] [--calls 500] [--reps 5]``; ``--only
store``, ``--only replay`` or ``--only v1`` runs one part (``--only-replay`` is ``--only
replay``).
"""

from __future__ import annotations

import argparse
import binascii
import gc
import shutil
import subprocess
import sys
import tempfile
import time
from base64 import b64decode
from collections import Counter
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import msgspec
import orjson

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # for `benchmarks.*`
from benchmarks.environment import print_environment
from benchmarks.messages import generate_live_labeled

try:
    import acp_toolcalls  # noqa: F401
except ImportError:  # not installed and no PYTHONPATH=src: use the source tree
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "src"))

from acp_toolcalls import ToolCallStore, codec, v2
from acp_toolcalls.codec import fast_message_decoder
from acp_toolcalls.events import (
    ContentAppended,
    DiagnosticReported,
    LimitReached,
    TerminalOutputAppended,
    ToolCallCreated,
)
from acp_toolcalls.store import Limits

Pass = Callable[[Sequence[Any]], Any]

# Projected total SDK timing (all repetitions) above which the SDK is timed on a prefix.
_SDK_BUDGET_S = 40.0
_SDK_PREFIX = 20_000
_SELECT_N = 5_000

TARGET_STORE_VS_ORJSON = 1.5
TARGET_STORE_VS_FOLD = 1.2
TARGET_REPLAY_VS_ORJSON = 1.5
TARGET_V1_VS_FOLD = 2.0
TARGET_SDK_VS_STORE = 6.0
TARGET_CHUNK_RATIO = 12.0


# -- timing -------------------------------------------------------------------------------------


def _timed(fn: Pass, data: Sequence[Any], *, gc_on: bool = False) -> int:
    """One pass in ns. What ``fn`` returns (a store) is freed after the clock stops."""
    gc.collect()
    if not gc_on:
        gc.disable()
    try:
        t0 = time.perf_counter_ns()
        result = fn(data)
        elapsed = time.perf_counter_ns() - t0
    finally:
        gc.enable()
    del result
    gc.collect()
    return elapsed


def _best_of(
    impls: Sequence[tuple[str, Pass, Sequence[Any], bool]],
    reps: int,
    t_start: float,
    what: str,
) -> dict[str, float]:
    """Best ns per item of each implementation over ``reps`` rotated repetitions."""
    best: dict[str, float] = {}
    for rep in range(reps):
        shift = rep % len(impls)
        for name, fn, data, gc_on in [*impls[shift:], *impls[:shift]]:
            ns = _timed(fn, data, gc_on=gc_on) / len(data)
            best[name] = min(best.get(name, ns), ns)
        print(
            f"  {what}: repetition {rep + 1}/{reps} done ({time.perf_counter() - t_start:.0f}s)",
            flush=True,
        )
    return best


# -- 1. mixed messages ----------------------------------------------------------------------------


def _pass_empty(lines: Sequence[bytes]) -> None:
    for _line in lines:
        pass


def _pass_orjson(lines: Sequence[bytes]) -> None:
    loads = orjson.loads
    for line in lines:
        loads(line)


def _pass_store(lines: Sequence[bytes]) -> ToolCallStore:
    store = ToolCallStore()
    apply = store.apply
    for line in lines:
        apply(line)
    return store


def _pass_decode_only(lines: Sequence[bytes]) -> None:
    decode = fast_message_decoder("v2")
    for line in lines:
        decode(line)


def _pass_decode_keep(lines: Sequence[bytes]) -> list[Any]:
    decode = fast_message_decoder("v2")
    return [decode(line) for line in lines]


_FOLD_CALL_FIELDS = tuple(
    (f.name, f.encode_name)
    for f in msgspec.structs.fields(v2.ToolCallUpdate)
    if f.name != "tool_call_id"
)
_FOLD_TERMINAL_FIELDS = tuple(
    (f.name, f.encode_name)
    for f in msgspec.structs.fields(v2.TerminalUpdate)
    if f.name not in ("terminal_id", "output")
)


def _pass_minimal_fold(lines: Sequence[bytes]) -> tuple[dict[Any, Any], dict[Any, Any]]:
    """(d): the project's typed decode and the least work that keeps the same state."""
    decode = fast_message_decoder("v2")
    a2b = binascii.a2b_base64
    update_message, chunk_type = v2.SessionUpdateMessage, v2.ToolCallContentChunk
    output_type, terminal_type = v2.TerminalOutputChunk, v2.TerminalUpdate
    call_fields, terminal_fields = _FOLD_CALL_FIELDS, _FOLD_TERMINAL_FIELDS
    unset = msgspec.UNSET
    calls: dict[Any, Any] = {}
    terminals: dict[Any, Any] = {}
    for line in lines:
        message = decode(line)
        params = message.params
        if type(message) is update_message:
            update = params.update
            kind = type(update)
            if kind is chunk_type:
                key = (params.session_id, update.tool_call_id)
                call = calls.get(key)
                if call is None:
                    call = calls[key] = {}
                content = call.get("content")
                if type(content) is not list:
                    content = call["content"] = []
                content.append(update.content)
                continue
            if kind is output_type or kind is terminal_type:
                key = (params.session_id, update.terminal_id)
                terminal = terminals.get(key)
                if terminal is None:
                    terminal = terminals[key] = {}
                if kind is output_type:
                    data = a2b(update.data)
                    output = terminal.get("output")
                    if output is None:
                        terminal["output"] = bytearray(data)
                    else:
                        output += data
                    continue
                output = update.output
                if output is not unset:
                    terminal["output"] = None if output is None else bytearray(a2b(output.data))
                for name, wire in terminal_fields:
                    value = getattr(update, name)
                    if value is not unset:
                        terminal[wire] = value
                continue
        else:
            update = params.subject.tool_call
        key = (params.session_id, update.tool_call_id)
        call = calls.get(key)
        if call is None:
            call = calls[key] = {}
        for name, wire in call_fields:
            value = getattr(update, name)
            if value is not unset:
                call[wire] = list(value) if type(value) is list else value
    return calls, terminals


def _check_minimal_fold(lines: Sequence[bytes], store: ToolCallStore) -> str:
    """The fold keeps what the store keeps: content item counts and terminal bytes."""
    calls, terminals = _pass_minimal_fold(lines)
    held = {
        (sid, tcid): len(tc.content)
        for sid, session in store.sessions.items()
        for tcid, tc in session.tool_calls.items()
    }
    folded = {key: len(call.get("content") or ()) for key, call in calls.items()}
    output = {
        (sid, tid): len(t.output_bytes)
        for sid, session in store.sessions.items()
        for tid, t in session.terminals.items()
    }
    folded_output = {key: len(t.get("output") or b"") for key, t in terminals.items()}
    if held != folded or output != folded_output:
        raise SystemExit("minimal fold check FAILED: it does not hold what the store holds")
    return f"{len(calls)} calls, {sum(folded.values()):,} content items, {len(terminals)} terminals"


def _pass_apply_typed(messages: Sequence[Any]) -> ToolCallStore:
    store = ToolCallStore()
    apply = store.apply
    for message in messages:
        apply(message)
    return store


def _make_sdk_pass() -> Pass:
    from acp.experimental.v2.schema import RequestPermissionRequest, UpdateSessionNotification

    validators = {
        "session/update": UpdateSessionNotification.model_validate,
        "session/request_permission": RequestPermissionRequest.model_validate,
    }
    loads = orjson.loads

    def sdk(lines: Sequence[bytes]) -> None:
        for line in lines:
            obj = loads(line)
            validators[obj["method"]](obj["params"])

    return sdk


def _check_sdk(lines: Sequence[bytes]) -> str:
    """Validate ``lines`` with the SDK once (also a warm-up); raise on a surprise."""
    from acp.experimental.v2.schema import RequestPermissionRequest, UpdateSessionNotification

    kinds: Counter[str] = Counter()
    for line in lines:
        obj = orjson.loads(line)
        if obj["method"] == "session/update":
            update = UpdateSessionNotification.model_validate(obj["params"]).update
            kinds[type(update).__name__] += 1
        else:
            subject = RequestPermissionRequest.model_validate(obj["params"]).subject
            kinds[f"RequestPermissionRequest/{type(subject).__name__}"] += 1
    expected = {
        "SessionToolCallUpdate",
        "ToolCallContentChunkUpdate",
        "SessionTerminalUpdate",
        "SessionTerminalOutputChunk",
        "RequestPermissionRequest/ToolCallPermissionSubjectVariant",
    }
    if set(kinds) - expected:
        raise SystemExit(f"SDK read unexpected variants: {kinds}")
    return ", ".join(f"{k} x{v:,}" for k, v in kinds.most_common())


def _reference_fold(lines: Sequence[bytes]) -> dict[str, Any]:
    """What the store must hold after ``lines``, folded independently from plain JSON."""
    content: dict[tuple[str, str], int] = {}
    status: dict[tuple[str, str], Any] = {}
    output: dict[tuple[str, str], int] = {}
    chunks = output_chunks = 0
    for line in lines:
        msg = orjson.loads(line)
        params = msg["params"]
        sid = params["sessionId"]
        if msg["method"] == "session/request_permission":
            upd = params["subject"]["toolCall"]
            kind = "tool_call_update"
        else:
            upd = params["update"]
            kind = upd["sessionUpdate"]
        if kind == "tool_call_update":
            key = (sid, upd["toolCallId"])
            content.setdefault(key, 0)
            if "content" in upd:
                content[key] = len(upd["content"] or ())
            if "status" in upd:
                status[key] = upd["status"]
        elif kind == "tool_call_content_chunk":
            key = (sid, upd["toolCallId"])
            content[key] = content.get(key, 0) + 1
            chunks += 1
        elif kind == "terminal_update":
            key = (sid, upd["terminalId"])
            output.setdefault(key, 0)
            if "output" in upd:
                output[key] = len(b64decode(upd["output"]["data"])) if upd["output"] else 0
        elif kind == "terminal_output_chunk":
            key = (sid, upd["terminalId"])
            output[key] = output.get(key, 0) + len(b64decode(upd["data"]))
            output_chunks += 1
    return {
        "content": content,
        "status": status,
        "output": output,
        "chunks": chunks,
        "output_chunks": output_chunks,
    }


def _verify_store(lines: Sequence[bytes], calls: int) -> tuple[str, dict[str, Any]]:
    """Apply ``lines`` once, compare with the reference fold; return a summary and the doc."""
    ref = _reference_fold(lines)
    store = ToolCallStore()
    events: Counter[type] = Counter()
    for line in lines:
        for event in store.apply(line):
            events[type(event)] += 1
    problems = []
    got_calls = {
        (sid, tcid): tc for sid, s in store.sessions.items() for tcid, tc in s.tool_calls.items()
    }
    got_terms = {
        (sid, tid): t for sid, s in store.sessions.items() for tid, t in s.terminals.items()
    }
    if len(got_calls) != calls or set(got_calls) != set(ref["content"]):
        problems.append(f"{len(got_calls)} tool calls stored, expected {calls}")
    wrong = [k for k, n in ref["content"].items() if len(got_calls[k].content) != n]
    if wrong:
        problems.append(f"{len(wrong)} calls with the wrong number of content items")
    wrong = [k for k, s in ref["status"].items() if got_calls[k].fields.get("status") != s]
    if wrong:
        problems.append(f"{len(wrong)} calls with the wrong status")
    open_calls = sum(not tc.is_final for tc in got_calls.values())
    if open_calls:
        problems.append(f"{open_calls} calls still open at the end")
    wrong = [k for k, n in ref["output"].items() if len(got_terms[k].output_bytes) != n]
    if set(got_terms) != set(ref["output"]) or wrong:
        problems.append(f"terminals differ ({len(got_terms)} stored, {len(wrong)} wrong sizes)")
    if events[ToolCallCreated] != calls:
        problems.append(f"{events[ToolCallCreated]} ToolCallCreated events")
    if events[ContentAppended] != ref["chunks"]:
        problems.append(f"{events[ContentAppended]} ContentAppended, {ref['chunks']} chunks")
    if events[TerminalOutputAppended] != ref["output_chunks"]:
        problems.append(f"{events[TerminalOutputAppended]} TerminalOutputAppended events")
    if events[LimitReached] or events[DiagnosticReported]:
        problems.append(f"{events[LimitReached]} caps hit, {events[DiagnosticReported]} diags")
    if problems:
        raise SystemExit("store check FAILED: " + "; ".join(problems))
    items = sum(ref["content"].values())
    out_bytes = sum(ref["output"].values())
    summary = (
        f"{len(got_calls)} tool calls in {len(store.sessions)} sessions, all final, "
        f"{items:,} content items held ({ref['chunks']:,} appended by chunks), "
        f"{len(got_terms)} terminals with {out_bytes / 1e6:.1f} MB of output, "
        f"{sum(events.values()):,} events, no diagnostics, no cap hit: matches an "
        f"independent fold"
    )
    return summary, store.document()


def _part_mixed(
    lines: Sequence[bytes], labels: Sequence[str], calls: int, reps: int, t_start: float
) -> tuple[float, float, float, dict[str, Any]]:
    n = len(lines)
    sizes = sorted(len(line) for line in lines)
    print()
    print(f"== 1. decode-and-apply: {n:,} mixed v2 messages over {calls} live tool calls")
    print(
        f"corpus       {n:,} lines, {sizes[0]}-{sizes[-1]} bytes, median {sizes[n // 2]}, "
        f"{sum(sizes) / 1e6:.1f} MB; mix:"
    )
    for label, count in Counter(labels).most_common():
        print(f"  {count / n:6.2%} {count:8,}  {label}")

    summary, document = _verify_store(lines, calls)
    print(f"store check  {summary}")
    print(
        f"fold check   the minimal fold holds what the store holds: "
        f"{_check_minimal_fold(lines, _pass_store(lines))}"
    )

    decode = fast_message_decoder("v2")
    typed = [decode(line) for line in lines]
    sdk = _make_sdk_pass()
    sdk_kinds = _check_sdk(lines[: min(n, _SELECT_N)])
    print(f"SDK check    first {min(n, _SELECT_N):,} lines validated: {sdk_kinds}")

    warm = lines[: min(n, 2_000)]
    for fn in (
        _pass_empty,
        _pass_orjson,
        _pass_store,
        _pass_minimal_fold,
        _pass_decode_only,
        _pass_decode_keep,
        sdk,
    ):
        fn(warm)
    _pass_apply_typed(typed[: len(warm)])
    sel = min(n, _SELECT_N)
    t_sdk = min(_timed(sdk, lines[:sel]) for _ in range(2)) / sel
    sdk_lines = lines
    if t_sdk * n * reps / 1e9 > _SDK_BUDGET_S and n > _SDK_PREFIX:
        sdk_lines = lines[:_SDK_PREFIX]
        print(
            f"note: the SDK is timed on the first {len(sdk_lines):,} messages only (same "
            f"mix; a full pass would take {t_sdk * n / 1e9:.0f}s per repetition)"
        )

    a, b, c = "(a) orjson.loads", "(b) ToolCallStore().apply(line)", "(c) SDK"
    d = "(d) own typed decode + minimal fold"
    b_gc = f"{b}, gc on"
    b_dec = "    its typed decode alone (fast_message_decoder)"
    b_keep = "    its typed decode, keeping every message (no state)"
    b_app = "    its state update alone (apply of pre-decoded messages)"
    c_name = f"{c}: orjson.loads + model_validate(params)"
    impls: list[tuple[str, Pass, Sequence[Any], bool]] = [
        ("(empty loop)", _pass_empty, lines, False),
        (a, _pass_orjson, lines, False),
        (b, _pass_store, lines, False),
        (b_gc, _pass_store, lines, True),
        (b_dec, _pass_decode_only, lines, False),
        (b_keep, _pass_decode_keep, lines, False),
        (b_app, _pass_apply_typed, typed, False),
        (d, _pass_minimal_fold, lines, False),
        (c_name, sdk, sdk_lines, False),
    ]
    best = _best_of(impls, reps, t_start, "mixed")
    base = best[a]
    width = max(len(name) for name, *_ in impls)
    print()
    print(
        f"best of {reps} passes, gc disabled unless noted; {n:,} messages per pass"
        + (f" ({len(sdk_lines):,} for the SDK)" if len(sdk_lines) != n else "")
    )
    print(f"{'implementation':<{width}}  {'ns/msg':>9}  {'vs orjson.loads':>15}")
    for name, *_ in impls:
        ratio = "" if name == "(empty loop)" else f"{best[name] / base:.2f}x"
        print(f"{name:<{width}}  {best[name]:>9,.0f}  {ratio:>15}")
    ours_ratio = best[b] / base
    sdk_ratio = best[c_name] / best[b]
    fold_ratio = best[b] / best[d]
    print()
    print(
        f"store/orjson = {ours_ratio:.2f} (target <= {TARGET_STORE_VS_ORJSON}: "
        f"{'met' if ours_ratio <= TARGET_STORE_VS_ORJSON else 'NOT MET'}); "
        f"gc on {best[b_gc] / base:.2f}; "
        f"sdk/store = {sdk_ratio:.1f} (target >= {TARGET_SDK_VS_STORE:g}: "
        f"{'met' if sdk_ratio >= TARGET_SDK_VS_STORE else 'NOT MET'})"
    )
    print(
        f"store/minimal fold = {fold_ratio:.2f} (issue 19 target <= {TARGET_STORE_VS_FOLD}, "
        f"compiled build: {'met' if fold_ratio <= TARGET_STORE_VS_FOLD else 'NOT MET'}; "
        f"fast path {codec.FAST_PATH}, store {_store_build()})"
    )
    del typed
    return ours_ratio, sdk_ratio, fold_ratio, document


def _store_build() -> str:
    """Whether ``acp_toolcalls.store`` runs compiled (an extension module) or as source."""
    import acp_toolcalls.store._reducer

    return (
        "compiled"
        if not (acp_toolcalls.store._reducer.__file__ or "").endswith(".py")
        else "source"
    )


# -- 4. v1 input ---------------------------------------------------------------------------------

_V1_STATUS = {"cancelled": "failed"}  # v1 has no `cancelled`
_V1_DROPPED_KEYS = ("capabilities",)  # v2-only keys of a tool call


def _v1_item(item: dict[str, Any]) -> dict[str, Any] | None:
    """A v2 content item as v1 has it (``None``: no v1 form, a display terminal)."""
    if item.get("type") == "diff":
        change = item["changes"][0]
        patch = (item.get("patch") or {}).get("text", "")
        old = "\n".join(x[1:] for x in patch.splitlines() if x.startswith("-") and x[:3] != "---")
        new = "\n".join(x[1:] for x in patch.splitlines() if x.startswith("+") and x[:3] != "+++")
        v1_diff: dict[str, Any] = {"type": "diff", "path": change["path"], "newText": new}
        if change.get("operation") != "add":
            v1_diff["oldText"] = old
        return v1_diff
    if item.get("type") == "terminal":
        return None
    return item


def _v1_call(call: dict[str, Any]) -> dict[str, Any]:
    out = {key: value for key, value in call.items() if key not in _V1_DROPPED_KEYS}
    if out.get("status") in _V1_STATUS:
        out["status"] = _V1_STATUS[out["status"]]
    if isinstance(out.get("content"), list):
        out["content"] = [x for x in map(_v1_item, out["content"]) if x is not None]
    return out


def _v1_corpus(lines: Sequence[bytes]) -> list[bytes]:
    """The v2 corpus as v1 lines (see part 4 of the module's docstring)."""
    out: list[bytes] = []
    seen: set[tuple[str, str]] = set()
    for line in lines:
        msg = orjson.loads(line)
        params = msg["params"]
        if msg["method"] == "session/request_permission":
            call = _v1_call(params["subject"]["toolCall"])
            msg["params"] = {
                "sessionId": params["sessionId"],
                "toolCall": call,
                "options": params["options"],
            }
            seen.add((params["sessionId"], call["toolCallId"]))
            out.append(orjson.dumps(msg))
            continue
        update = params["update"]
        kind = update["sessionUpdate"]
        if kind == "tool_call_content_chunk":
            item = _v1_item(update["content"])
            if item is None:
                continue
            update = {
                "sessionUpdate": "tool_call_update",
                "toolCallId": update["toolCallId"],
                "content": [item],
            }
        elif kind == "tool_call_update":
            update = _v1_call(update)
            key = (params["sessionId"], update["toolCallId"])
            if key not in seen and "title" in update:
                update["sessionUpdate"] = "tool_call"
            seen.add(key)
        else:  # terminal updates and output: no v1 form
            continue
        params["update"] = update
        out.append(orjson.dumps(msg))
    return out


def _pass_v1_store(lines: Sequence[bytes]) -> ToolCallStore:
    store = ToolCallStore(version="v1")
    apply = store.apply
    for line in lines:
        apply(line)
    return store


def _pass_v1_fold(lines: Sequence[bytes]) -> dict[Any, Any]:
    """orjson and a dict fold with v1's rules: ``null`` changes nothing, a value replaces."""
    loads = orjson.loads
    calls: dict[Any, Any] = {}
    for line in lines:
        msg = loads(line)
        params = msg["params"]
        update = params.get("update") or params["toolCall"]
        key = (params["sessionId"], update["toolCallId"])
        call = calls.get(key)
        if call is None:
            call = calls[key] = {}
        for name, value in update.items():
            if value is not None:
                call[name] = value
    return calls


def _part_v1(lines: Sequence[bytes], reps: int, t_start: float) -> float:
    v1_lines = _v1_corpus(lines)
    n = len(v1_lines)
    print()
    print(f"== 4. v1 input: {n:,} v1 lines (the same streams without terminal messages)")
    kinds = Counter(
        "tool_call"
        if b'"sessionUpdate":"tool_call"' in line
        else "session/request_permission"
        if b'"session/request_permission"' in line
        else "tool_call_update, one content item"
        if b'"content":[' in line
        else "tool_call_update"
        for line in v1_lines
    )
    for label, count in kinds.most_common():
        print(f"  {count / n:6.2%} {count:8,}  {label}")
    store = ToolCallStore(version="v1")
    diagnostics: Counter[str] = Counter()
    for line in v1_lines:
        for event in store.apply(line):
            if isinstance(event, DiagnosticReported):
                diagnostics[event.reason] += 1
    folded = _pass_v1_fold(v1_lines)
    held = {
        (sid, tcid): tc
        for sid, session in store.sessions.items()
        for tcid, tc in session.tool_calls.items()
    }
    wrong = [
        key
        for key, call in folded.items()
        if key not in held
        or len(held[key].content) != len(call.get("content") or ())
        or held[key].status != call.get("status", "pending")
    ]
    if diagnostics or wrong or set(held) != set(folded):
        raise SystemExit(f"v1 check FAILED: {len(wrong)} calls differ, {dict(diagnostics)}")
    print(
        f"check        {len(held)} tool calls, content counts and statuses as the dict fold's, "
        "no diagnostic"
    )
    for fn in (_pass_orjson, _pass_v1_store, _pass_v1_fold):
        fn(v1_lines[:2_000])
    a, b, c = "orjson.loads", 'ToolCallStore(version="v1").apply(line)', "orjson.loads + dict fold"
    impls: list[tuple[str, Pass, Sequence[Any], bool]] = [
        (a, _pass_orjson, v1_lines, False),
        (b, _pass_v1_store, v1_lines, False),
        (c, _pass_v1_fold, v1_lines, False),
    ]
    best = _best_of(impls, reps, t_start, "v1")
    print()
    print(f"best of {reps} passes, gc disabled; {n:,} messages per pass")
    width = max(len(name) for name, *_ in impls)
    print(f"{'implementation':<{width}}  {'ns/msg':>9}  {'vs dict fold':>12}")
    for name, *_ in impls:
        print(f"{name:<{width}}  {best[name]:>9,.0f}  {best[name] / best[c]:>11.2f}x")
    ratio = best[b] / best[c]
    print()
    print(
        f"v1 store/dict fold = {ratio:.2f} (target <= {TARGET_V1_VS_FOLD}: "
        f"{'met' if ratio <= TARGET_V1_VS_FOLD else 'NOT MET'})"
    )
    return ratio


# -- 2. chunks to one call ------------------------------------------------------------------------


def _chunk_lines(lines: Sequence[bytes], count: int) -> list[bytes]:
    """A first report and ``count`` content chunks for one call, from the corpus's chunks."""
    sid, tcid = "sess_chunks", "toolu_01ChunkBenchmark0000000"
    first = {
        "jsonrpc": "2.0",
        "method": "session/update",
        "params": {
            "sessionId": sid,
            "update": {
                "sessionUpdate": "tool_call_update",
                "toolCallId": tcid,
                "title": "Run the test suite",
                "kind": "execute",
                "status": "in_progress",
            },
        },
    }
    out = [orjson.dumps(first)]
    sources = [line for line in lines if b'"tool_call_content_chunk"' in line]
    if not sources:
        raise SystemExit("the corpus has no content chunks")
    while len(out) <= count:
        for line in sources[: count + 1 - len(out)]:
            msg = orjson.loads(line)
            msg["params"]["sessionId"] = sid
            msg["params"]["update"]["toolCallId"] = tcid
            out.append(orjson.dumps(msg))
    return out


def _make_chunk_pass(limits: Limits) -> Pass:
    def run(lines: Sequence[bytes]) -> ToolCallStore:
        store = ToolCallStore(limits=limits)
        apply = store.apply
        for line in lines:
            apply(line)
        return store

    return run


def _check_chunks(lines: Sequence[bytes], limits: Limits) -> str:
    store = ToolCallStore(limits=limits)
    caps = 0
    for line in lines:
        caps += sum(isinstance(e, LimitReached) for e in store.apply(line))
    (session,) = store.sessions.values()
    (tc,) = session.tool_calls.values()
    chunks = len(lines) - 1
    held, dropped = len(tc.content), tc.dropped_items
    cap = limits.max_content_items
    ok = held + dropped == chunks and (
        held == chunks if cap is None else held <= cap and (caps > 0) == (chunks > cap)
    )
    if not ok:
        raise SystemExit(f"chunk check FAILED: {held} held, {dropped} dropped, {caps} caps hit")
    return f"{held:,} held" + (f", {dropped:,} dropped in {caps} trims" if caps else "")


def _part_chunks(
    lines: Sequence[bytes], small: int, large: int, reps: int, t_start: float
) -> float:
    print()
    print(f"== 2. appending tool_call_content_chunk lines to ONE call: {small:,} vs {large:,}")
    big = _chunk_lines(lines, large)
    little = big[: small + 1]
    configs = [
        # No cap at all: since issue 15 a call is also capped in bytes (8 MiB by default),
        # which 100,000 chunks pass.
        ("Limits.unlimited()", Limits.unlimited()),
        (f"default cap ({Limits().max_content_items:,})", Limits()),
    ]
    impls: list[tuple[str, Pass, Sequence[Any], bool]] = []
    for label, limits in configs:
        run = _make_chunk_pass(limits)
        run(little[:2_000])
        checks = [_check_chunks(data, limits) for data in (little, big)]
        print(f"check        {label}: {small:,} chunks -> {checks[0]}; {large:,} -> {checks[1]}")
        for gc_on in (False, True):
            suffix = ", gc on" if gc_on else ""
            impls.append((f"{label}{suffix} | {small:,}", run, little, gc_on))
            impls.append((f"{label}{suffix} | {large:,}", run, big, gc_on))
    best = _best_of(impls, reps, t_start, "chunks")
    print()
    print(f"best of {reps} passes (fresh store each; a first report + the chunks, per line)")
    width = max(len(name.split(" | ")[0]) for name, *_ in impls)
    print(
        f"{'limits':<{width}}  {f'{small:,}: ms':>10}  {'ns/chunk':>9}  "
        f"{f'{large:,}: ms':>11}  {'ns/chunk':>9}  {'ratio of totals':>15}"
    )
    ratios = []
    for i in range(0, len(impls), 2):
        name_s, _, data_s, _ = impls[i]
        name_l, _, data_l, _ = impls[i + 1]
        per_s, per_l = best[name_s], best[name_l]
        tot_s, tot_l = per_s * len(data_s), per_l * len(data_l)
        ratios.append(tot_l / tot_s)
        print(
            f"{name_s.split(' | ')[0]:<{width}}  {tot_s / 1e6:>10.1f}  {per_s:>9,.0f}  "
            f"{tot_l / 1e6:>11.1f}  {per_l:>9,.0f}  {tot_l / tot_s:>14.1f}x"
        )
    worst = max(ratios)
    print()
    print(
        f"ratio of totals {', '.join(f'{r:.1f}x' for r in ratios)} for {large // small}x the "
        f"chunks (target <= {TARGET_CHUNK_RATIO:g}x: "
        f"{'met' if worst <= TARGET_CHUNK_RATIO else 'NOT MET'})"
    )
    return worst


# -- 3. replay --json as a process ----------------------------------------------------------------


def _replay_command() -> list[str]:
    script = Path(sys.executable).parent / "acp-toolcalls"
    if script.exists():
        return [str(script)]
    found = shutil.which("acp-toolcalls")
    return [found] if found else [sys.executable, "-m", "acp_toolcalls.cli"]


def _run(cmd: Sequence[str]) -> float:
    t0 = time.perf_counter()
    proc = subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, check=False)
    elapsed = time.perf_counter() - t0
    if proc.returncode != 0 or proc.stderr:
        raise SystemExit(f"{' '.join(cmd)} exited {proc.returncode}: {proc.stderr[:500]!r}")
    return elapsed


def _part_replay(
    lines: Sequence[bytes], document: dict[str, Any], reps: int, t_start: float
) -> float:
    n = len(lines)
    replay = _replay_command()
    print()
    print(f"== 3. the same {n:,} lines through `acp-toolcalls replay --json FILE` (a process)")
    with tempfile.TemporaryDirectory(prefix="bench_store_") as tmp:
        corpus = Path(tmp) / "corpus.jsonl"
        corpus.write_bytes(b"\n".join(lines) + b"\n")
        empty = Path(tmp) / "empty.jsonl"
        empty.write_bytes(b"")
        loop = "import orjson; [orjson.loads(l) for l in open(F,'rb')]"
        cmds = {
            "python -c 'import orjson' (start-up)": [sys.executable, "-c", "import orjson"],
            "python -c orjson loop over FILE": [
                sys.executable,
                "-c",
                f"F = {str(corpus)!r}; {loop}",
            ],
            "acp-toolcalls replay --json EMPTY": [*replay, "replay", "--json", str(empty)],
            "acp-toolcalls replay --json FILE": [*replay, "replay", "--json", str(corpus)],
        }
        print(f"command      {' '.join(replay)} replay --json {corpus} > /dev/null")
        print(f'baseline     {sys.executable} -c "{loop}"')
        # Check: the replayed document is the one the store builds in process.
        out = subprocess.run(
            cmds["acp-toolcalls replay --json FILE"], capture_output=True, check=False
        )
        if out.returncode != 0 or out.stderr:
            raise SystemExit(f"replay failed ({out.returncode}): {out.stderr[:500]!r}")
        replayed = orjson.loads(out.stdout)
        if replayed != orjson.loads(orjson.dumps(document)):
            raise SystemExit("replay --json check FAILED: document differs from store.document()")
        tool_calls = sum(len(s["toolCalls"]) for s in replayed["sessions"].values())
        print(
            f"check        stdout is one JSON document of {len(out.stdout) / 1e6:.1f} MB, "
            f"{tool_calls} tool calls, equal to store.document(); nothing on stderr"
        )
        del out, replayed
        names = list(cmds)
        best: dict[str, float] = {}
        for rep in range(reps):
            shift = rep % len(names)
            for name in names[shift:] + names[:shift]:
                best[name] = min(best.get(name, float("inf")), _run(cmds[name]))
            print(
                f"  processes: repetition {rep + 1}/{reps} done "
                f"({time.perf_counter() - t_start:.0f}s)",
                flush=True,
            )
    print()
    print(f"wall time, best of {reps}, stdout to /dev/null")
    width = max(len(name) for name in names)
    for name in names:
        print(f"{name:<{width}}  {best[name]:>7.3f} s")
    start_py = best["python -c 'import orjson' (start-up)"]
    loop_t = best["python -c orjson loop over FILE"]
    start_rp = best["acp-toolcalls replay --json EMPTY"]
    replay_t = best["acp-toolcalls replay --json FILE"]
    per_loop = (loop_t - start_py) / n * 1e9
    per_replay = (replay_t - start_rp) / n * 1e9
    print()
    print(
        f"replay / orjson process = {replay_t / loop_t:.2f}x (whole processes); "
        f"per message after start-up: replay {per_replay:,.0f} ns, orjson loop "
        f"{per_loop:,.0f} ns ({per_replay / per_loop:.2f}x); "
        f"all in: {replay_t / n * 1e9:,.0f} ns/msg"
    )
    return replay_t / loop_t


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--n", type=int, default=200_000, help="mixed messages")
    parser.add_argument("--calls", type=int, default=500, help="live tool calls")
    parser.add_argument("--reps", type=int, default=5, help="repetitions (best is reported)")
    parser.add_argument("--proc-reps", type=int, default=3, help="repetitions of part 3")
    parser.add_argument("--chunks", type=int, nargs=2, default=(10_000, 100_000))
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--skip-replay", action="store_true", help="skip part 3")
    parser.add_argument("--only-replay", action="store_true", help="run part 3 only")
    parser.add_argument("--only", choices=("store", "replay", "v1"), help="run one part: 1, 3 or 4")
    args = parser.parse_args(argv)
    if args.only_replay:
        args.only = "replay"

    print_environment()
    t_start = time.perf_counter()
    labeled = generate_live_labeled(args.n, args.calls, args.seed)
    labels = [label for label, _ in labeled]
    lines = [line for _, line in labeled]
    del labeled
    print(
        f"messages     generate_live({args.n:,}, calls={args.calls}, seed={args.seed}) in "
        f"{time.perf_counter() - t_start:.1f}s"
    )

    replay: float | None  # None: part 3 skipped
    if args.only == "replay":
        document = _pass_store(lines).document()
        replay = _part_replay(lines, document, args.proc_reps, t_start)
        print(f"  replay/orjson     {replay:6.2f}x   process wall time (target <= 1.5, issue 19)")
        return 0
    if args.only == "v1":
        v1 = _part_v1(lines, args.reps, t_start)
        print(f"  v1 store/fold     {v1:6.2f}x   target <= {TARGET_V1_VS_FOLD:g} (issue 19)")
        return 0
    ours, sdk, fold, document = _part_mixed(lines, labels, args.calls, args.reps, t_start)
    if args.only == "store":
        print(f"  store/fold        {fold:6.2f}x   target <= {TARGET_STORE_VS_FOLD} (issue 19)")
        return 0
    chunks = _part_chunks(lines, args.chunks[0], args.chunks[1], args.reps, t_start)
    replay = None
    if not args.skip_replay:
        replay = _part_replay(lines, document, args.proc_reps, t_start)
    v1 = _part_v1(lines, args.reps, t_start)

    print()
    print("summary")
    print(f"  store/orjson      {ours:6.2f}x   target <= {TARGET_STORE_VS_ORJSON}")
    print(f"  sdk/store         {sdk:6.1f}x   target >= {TARGET_SDK_VS_STORE:g}")
    print(f"  store/fold        {fold:6.2f}x   target <= {TARGET_STORE_VS_FOLD} (issue 19)")
    print(f"  chunks 10x ratio  {chunks:6.1f}x   target <= {TARGET_CHUNK_RATIO:g} (worst row)")
    if replay is not None:
        print(
            f"  replay/orjson     {replay:6.2f}x   process wall time "
            f"(target <= {TARGET_REPLAY_VS_ORJSON}, issue 19)"
        )
    print(f"  v1 store/fold     {v1:6.2f}x   target <= {TARGET_V1_VS_FOLD:g} (issue 19)")
    print(f"total time {time.perf_counter() - t_start:.0f}s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
