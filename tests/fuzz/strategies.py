"""Hypothesis strategies: real messages, mutated, truncated, corrupted and interleaved.

- ``message(protocol)``: a seed message (``corpus.py``, picked evenly across kinds), its
  session, tool-call, terminal and request ids re-drawn from small pools (so that sessions and
  calls interleave and collide), then mutated 0-4 times: a key deleted, renamed or added, a
  value replaced by garbage, set to ``null`` or given another JSON type, a discriminator set to
  an unknown or other-version variant, array elements deleted, duplicated or inserted.
- Garbage includes numbers no decoder represents (``2**64``, ``1e999``), and raw tokens written
  into the JSON text after encoding: ``NaN``, ``Infinity``, huge or malformed numbers, escaped
  lone surrogates, duplicate keys, 300-deep nesting, truncated literals.
- ``line(protocol)``: bytes of one line: such a message, a batch of them, a byte prefix of a
  seed line, a seed line with invalid UTF-8 spliced in, arbitrary JSON or arbitrary bytes.
- ``traffic(protocol)``: like ``line`` but mostly clean tool-call messages, for the stateful
  targets to reach deep states (a call created, then streamed to, then finished, ...).
- ``client_answer()``: a client's JSON-RPC answer to a permission request id from the pool.
"""

from __future__ import annotations

import copy
import json
import re
from collections.abc import Iterator
from typing import Any

from hypothesis import settings
from hypothesis import strategies as st

from . import corpus

__all__ = [
    "CALL_IDS",
    "GARBAGE",
    "REQUEST_IDS",
    "SESSION_IDS",
    "TERMINAL_IDS",
    "client_answer",
    "dump",
    "examples",
    "line",
    "message",
    "mutated",
    "seed",
    "traffic",
    "weighted",
]

S = st.SearchStrategy


def examples(fraction: float) -> int:
    """A share of the loaded hypothesis profile's example count (at least 10)."""
    profile = settings.default
    assert profile is not None  # hypothesis always has a profile loaded
    return max(10, round(profile.max_examples * fraction))


SESSION_IDS = ("s1", "s2", "sess_abc123def456")
CALL_IDS = ("c1", "c2", "call_001", "call_002")
TERMINAL_IDS = ("t1", "t2", "term_001")
# Re-drawn ids favour the first of each pool, so that a stream says several things about a call.
_FAVOURED = {"sessionId": 3, "toolCallId": 2, "terminalId": 2}
REQUEST_IDS: tuple[Any, ...] = (0, 1, 7, "p1")

# Written into the JSON text after encoding: what `json.dumps` cannot produce.
RAW_TOKENS = (
    "NaN",
    "Infinity",
    "-Infinity",
    "1e999",
    "-1e999",
    "1e-400",
    "18446744073709551616",
    "-9223372036854775809",
    "123456789012345678901234567890",
    "-0",
    "01",
    "+1",
    ".5",
    "1.",
    '"\\ud800"',
    '"x\\udc00"',
    '"\\ud800\\u0041"',
    '"\\u0000"',
    '{"a":1,"a":null}',
    "[" * 300 + "]" * 300,
    "tru",
    "nul",
)
_RAW = "\x00RAW:"
_RAW_JSON = re.compile(rb'"\\u0000RAW:(\d+)"')


def dump(value: Any, ensure_ascii: bool = False) -> bytes:
    """JSON bytes of ``value``; lone surrogates go out as invalid UTF-8 (CESU-8) unless
    escaped, and placeholders from ``RAW_TOKENS`` become their raw token."""
    text = json.dumps(value, separators=(",", ":"), ensure_ascii=ensure_ascii)
    data = text.encode("utf-8", "surrogatepass")
    if b"RAW:" in data:
        data = _RAW_JSON.sub(lambda m: RAW_TOKENS[int(m.group(1))].encode(), data)
    return data


TAGS = (
    "_x", "lookup", "", "TOOL_CALL_UPDATE", "tool_call", "tool_call_update",
    "tool_call_content_chunk", "terminal_update", "terminal_output_chunk", "state_update",
    "plan", "plan_update", "current_mode_update", "agent_message_chunk", "agent_message",
    "diff", "content", "terminal", "text", "image", "resource_link", "resource", "selected",
    "cancelled", "session/update", "session/request_permission", "initialize", "move", "copy",
    "git_patch", "idle", "command",
)  # fmt: skip
DISCRIMINATORS = ("type", "sessionUpdate", "operation", "outcome", "method", "state", "format")
UNKNOWN_KEYS = ("zzUnknown", "_meta", "tool_call_id", "sessionUpdate", "type", "content", "")

SPECIAL: tuple[Any, ...] = (
    {"type": "diff"},
    {"type": "diff", "changes": [{"operation": "add", "path": "/a"}]},
    {"type": "terminal"},
    {"type": "terminal", "terminalId": "t1"},
    {"type": "content"},
    {"type": "content", "content": {"type": "text", "text": "x"}},
    {"type": "content", "content": {"type": "_blob", "x": 1}},
    {"type": "_x", "y": [1, None]},
    {"type": "chart"},
    {"operation": "move", "path": "/b"},
    {"operation": "_link", "path": "/c"},
    {"outcome": "selected"},
    {"sessionUpdate": "tool_call_update"},
    {"sessionUpdate": "_x"},
    {"path": "relative/p.py", "line": 0},
    {"cancel": {}},
    {},
    [],
    "",
)

SCALARS: S[Any] = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(2**70), max_value=2**70),
    st.sampled_from([2**63, 2**64, -(2**63) - 1, 2**32, -1, 0, 2**53 + 1]),
    st.floats(allow_nan=False, allow_infinity=False),
    st.text(max_size=12),
    st.sampled_from(["\ud800", "a\udc80", "\x00", "\u2028", "🧪" * 3]),
    st.sampled_from([300, 3000]).map(lambda n: "x" * n),
    st.sampled_from(TAGS),
    st.integers(min_value=0, max_value=len(RAW_TOKENS) - 1).map(lambda i: f"{_RAW}{i}"),
)
GARBAGE: S[Any] = st.one_of(
    st.recursive(
        SCALARS,
        lambda inner: (
            st.lists(inner, max_size=3)
            | st.dictionaries(
                st.text(max_size=6) | st.sampled_from(UNKNOWN_KEYS), inner, max_size=3
            )
        ),
        max_leaves=6,
    ),
    st.sampled_from(SPECIAL).map(copy.deepcopy),
)


def _containers(value: Any, path: tuple[Any, ...] = ()) -> Iterator[tuple[Any, ...]]:
    if isinstance(value, dict):
        yield path
        for key, item in value.items():
            yield from _containers(item, (*path, key))
    elif isinstance(value, list):
        yield path
        for index, item in enumerate(value):
            yield from _containers(item, (*path, index))


def _at(value: Any, path: tuple[Any, ...]) -> Any:
    for part in path:
        value = value[part]
    return value


def _retyped(value: Any) -> Any:
    """The same information as another JSON type."""
    if isinstance(value, bool):
        return int(value)
    if isinstance(value, int | float):
        return str(value)
    if isinstance(value, str):
        return [value]
    if isinstance(value, list):
        return {str(index): item for index, item in enumerate(value)}
    if isinstance(value, dict):
        return list(value.values())
    return False


_CAMEL = re.compile(r"(?<!^)(?=[A-Z])")


def _mutate_dict(draw: st.DrawFn, target: dict[str, Any]) -> None:
    keys = list(target)
    op = draw(st.sampled_from(("delete", "garbage", "null", "retype", "tag", "add", "rename")))
    if op == "add" or not keys:
        target[draw(st.sampled_from(UNKNOWN_KEYS) | st.text(max_size=4))] = draw(GARBAGE)
        return
    key = draw(st.sampled_from(keys))
    if op == "delete":
        del target[key]
    elif op == "garbage":
        target[key] = draw(GARBAGE)
    elif op == "null":
        target[key] = None
    elif op == "retype":
        target[key] = _retyped(target[key])
    elif op == "tag":
        present = [k for k in DISCRIMINATORS if k in target]
        target[draw(st.sampled_from(present or list(DISCRIMINATORS)))] = draw(st.sampled_from(TAGS))
    else:  # rename: camelCase -> snake_case, or a near miss
        target[_CAMEL.sub("_", key).lower() if key != key.lower() else key + "_"] = target.pop(key)


def _mutate_list(draw: st.DrawFn, target: list[Any]) -> None:
    op = draw(st.sampled_from(("delete", "insert", "duplicate", "replace", "clear", "reverse")))
    if not target or op == "insert":
        target.insert(draw(st.integers(0, len(target))), draw(GARBAGE))
        return
    index = draw(st.integers(0, len(target) - 1))
    if op == "delete":
        del target[index]
    elif op == "duplicate":
        target.insert(index, copy.deepcopy(target[index]))
    elif op == "replace":
        target[index] = draw(GARBAGE)
    elif op == "clear":
        target.clear()
    else:
        target.reverse()


@st.composite
def mutated(draw: st.DrawFn, value: Any, max_mutations: int = 4) -> Any:
    """``value`` (a deep copy) with 0 to ``max_mutations`` random mutations (none in about
    a third of the draws, so that streams also carry enough valid messages)."""
    value = copy.deepcopy(value)
    count = min(max_mutations, draw(st.sampled_from((0, 0, 0, 1, 1, 2, 3, 4))))
    for _ in range(count):
        paths = list(_containers(value))
        if not paths:
            return draw(GARBAGE)
        target = _at(value, draw(st.sampled_from(paths)))
        if isinstance(target, dict):
            _mutate_dict(draw, target)
        else:
            _mutate_list(draw, target)
    return value


_POOLS: dict[str, tuple[Any, ...]] = {
    "sessionId": SESSION_IDS,
    "toolCallId": CALL_IDS,
    "terminalId": TERMINAL_IDS,
}


def _renamed(draw: st.DrawFn, value: Any) -> Any:
    if isinstance(value, dict):
        out = {}
        for key, item in value.items():
            pool = _POOLS.get(key)
            if pool is not None and isinstance(item, str):
                out[key] = draw(st.sampled_from((pool[0],) * _FAVOURED[key] + pool))
            else:
                out[key] = _renamed(draw, item)
        return out
    if isinstance(value, list):
        return [_renamed(draw, item) for item in value]
    return value


TOOL_CALL_KINDS = frozenset(
    {"tool_call", "tool_call_update", "tool_call_content_chunk", "terminal", "permission"}
)
"""Seed kinds that carry tool-call state (``corpus.kind_of``)."""


@st.composite
def seed(
    draw: st.DrawFn, protocol: str, rename: bool = True, kinds: frozenset[str] | None = None
) -> Any:
    """A seed message (a deep copy) of one of ``kinds`` (default: any), its ids re-drawn from
    the pools (``rename``)."""
    groups = corpus.BY_KIND[protocol]
    names = sorted(kind for kind in groups if kinds is None or kind in kinds)
    value = copy.deepcopy(draw(st.sampled_from(groups[draw(st.sampled_from(names))])))
    if not rename:
        return value
    value = _renamed(draw, value)
    if isinstance(value, dict) and "id" in value:
        value["id"] = draw(st.sampled_from(REQUEST_IDS))
    return value


@st.composite
def message(draw: st.DrawFn, protocol: str, max_mutations: int = 4) -> Any:
    """A seed message with re-drawn ids, mutated 0 to ``max_mutations`` times."""
    return draw(mutated(draw(seed(protocol)), max_mutations))


@st.composite
def _truncated(draw: st.DrawFn, protocol: str) -> bytes:
    data = draw(st.sampled_from(corpus.LINES[protocol]))
    return data[: draw(st.integers(0, len(data) - 1))]


@st.composite
def _corrupted(draw: st.DrawFn, protocol: str) -> bytes:
    data = bytearray(draw(st.sampled_from(corpus.LINES[protocol])))
    for _ in range(draw(st.integers(1, 3))):
        at = draw(st.integers(0, len(data)))
        bad = draw(
            st.sampled_from([b"\xff", b"\xc3", b"\xed\xa0\x80", b"\xf4\x90\x80\x80", b"\x00"])
        )
        data[at : at + draw(st.integers(0, 2))] = bad
    return bytes(data)


def weighted(*choices: tuple[int, S[Any]]) -> S[Any]:
    """One of the strategies, each as likely as its weight (``st.one_of`` drops duplicates,
    so repeating a branch there does not weight it)."""
    pool = [strategy for weight, strategy in choices for _ in range(weight)]
    return st.sampled_from(pool).flatmap(lambda strategy: strategy)


def line(protocol: str, weight: int = 3) -> S[bytes]:
    """One line of input for a reader of ``protocol`` (see the module docstring); ``weight``:
    how many times likelier a single message is than each other kind of line."""
    return weighted(
        (weight, st.tuples(message(protocol), st.booleans()).map(lambda pair: dump(*pair))),
        (1, st.lists(message(protocol), min_size=1, max_size=3).map(dump)),
        (1, _truncated(protocol)),
        (1, _corrupted(protocol)),
        (1, GARBAGE.map(dump)),
        (1, st.binary(max_size=40)),
    )


def traffic(protocol: str) -> S[bytes]:
    """A line of mostly meaningful tool-call traffic: seeds that carry tool-call state (five
    in nine clean, two mutated once), else any other line (``line``)."""
    clean = st.tuples(seed(protocol, kinds=TOOL_CALL_KINDS), st.booleans())
    once = st.tuples(
        seed(protocol, kinds=TOOL_CALL_KINDS).flatmap(lambda value: mutated(value, 1)),
        st.booleans(),
    )
    return weighted(
        (5, clean.map(lambda pair: dump(*pair))),
        (2, once.map(lambda pair: dump(*pair))),
        (1, line(protocol, weight=1)),
        (1, seed(protocol).map(dump)),
    )


@st.composite
def client_answer(draw: st.DrawFn) -> bytes:
    """A client's answer (a JSON-RPC response) to a request id of the pool."""
    answer: dict[str, Any] = {"jsonrpc": "2.0", "id": draw(st.sampled_from(REQUEST_IDS))}
    if draw(st.integers(0, 4)) == 0:
        answer["error"] = {"code": draw(st.sampled_from([-32800, -32603])), "message": "no"}
    else:
        answer["result"] = copy.deepcopy(draw(st.sampled_from(corpus.CLIENT_ANSWERS)))
    return dump(answer)
