"""Fuzz the stateful bridges: ``V2ToV1Bridge`` (convert, flush, close_session) and
``V1ToV2Bridge`` (convert, close_session), with streams of broken and interleaved lines, the
client's answers to permission requests, flushes and session closes.

Invariants, after every step:

- only ``DecodeError`` leaves ``convert``, and a refused line changes nothing: a second bridge
  fed only the lines the first accepted produces exactly the same output, step by step;
- every typed message sent validates against the target version's schema and is a session
  update that version defines (never a v2-only update to v1, nor ``tool_call`` or a chunk to
  v2); everything else sent is a message of the input passed through unchanged, or the
  mapped answer to a forwarded permission request, which approves only what the client chose;
- a step only speaks about the sessions it names (``flush(s)``/``close_session(s)``: ``s``);
- answers the bridge gives on the peer's behalf are valid responses that approve nothing;
- toward v1: a call's first message is a ``tool_call`` (D46 (v2 to v1 bridge)), and a permission
  request only names a call the client has been sent; toward v2: no ``null`` is invented (a v1
  ``null`` changes nothing, D46 (v1 to v2 bridge));
- loss paths are JSON paths.

At the end (default caps) the v1 client's view of the bridge's output, after ``flush()``,
shows for every call the same status, kind, content and locations as a fresh bridge shows
when fed only the final v2 state (each call's and terminal's snapshot): the incremental
projection, coalescing and terminal rendering agree with a projection from scratch. Toward
v2, the v2 client's view of the output equals a v1 client's view of the input.
"""

from __future__ import annotations

from typing import Any

from hypothesis import event, given, settings
from hypothesis import strategies as st

from acp_toolcalls.store import Limits

from .strategies import SESSION_IDS, client_answer, examples, line, traffic, weighted
from .targets import run_v1_to_v2, run_v2_to_v1

SMALL_LIMITS = st.builds(
    Limits,
    max_content_items=st.integers(1, 4),
    max_terminal_bytes=st.integers(1, 64),
    max_tool_calls=st.integers(1, 3),
    max_sessions=st.none() | st.integers(1, 3),
    max_value_bytes=st.none() | st.integers(100, 2_000),
    max_call_bytes=st.none() | st.integers(500, 4_000),
    max_session_bytes=st.none() | st.integers(1_000, 10_000),
    max_store_bytes=st.none() | st.integers(2_000, 20_000),
    max_meta_keys=st.none() | st.integers(1, 4),
)


def steps(protocol: str) -> st.SearchStrategy[list[tuple[str, Any]]]:
    """A script: lines to convert (mostly meaningful traffic, or mostly noise), client
    answers, flushes and session closes."""
    answer = client_answer().map(lambda raw: ("convert", raw))
    session = st.sampled_from(SESSION_IDS)

    def script(
        lines: st.SearchStrategy[bytes], min_size: int
    ) -> st.SearchStrategy[list[tuple[str, Any]]]:
        feed = lines.map(lambda raw: ("convert", raw))
        flush = st.tuples(st.just("flush"), st.none() | session)
        close = st.tuples(st.just("close"), session)
        step = weighted((6, feed), (1, answer), (1, flush), (1, close))
        return st.lists(step, min_size=min_size, max_size=40)

    # Traffic scripts are long enough to build up state: hypothesis draws lists of about
    # twice `min_size` elements on average (six for `min_size=1`).
    return script(traffic(protocol), 6) | script(line(protocol, weight=8), 1)


@settings(max_examples=examples(1.0))
@given(
    coalesce=st.booleans(),
    profile=st.sampled_from(["text", "meta"]),
    limits=st.none() | SMALL_LIMITS,
    script=steps("v2"),
)
def test_v2_to_v1_bridge(
    coalesce: bool, profile: Any, limits: Limits | None, script: list[tuple[str, Any]]
) -> None:
    run_v2_to_v1(script, coalesce=coalesce, profile=profile, limits=limits, note=event)


@settings(max_examples=examples(1.0))
@given(script=steps("v1"))
def test_v1_to_v2_bridge(script: list[tuple[str, Any]]) -> None:
    run_v1_to_v2(script, event)
