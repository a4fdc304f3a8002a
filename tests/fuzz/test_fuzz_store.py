"""Fuzz ``ToolCallStore.apply`` with streams of broken, mutated and interleaved lines.

A stream is up to 40 lines of either protocol (``strategies.traffic``: mostly meaningful
tool-call messages; or ``strategies.line``: mostly noise), sessions and ids drawn from small
pools so that calls of different sessions share ids. The store reads it as v1, v2
or ``auto``, with the default caps or tiny ones. After every line:

- only ``DecodeError`` leaves ``apply``, and then ``document()`` is unchanged;
- a message changes only the calls and terminals it names (``invariants.named``: its
  session's ``toolCallId``/``terminalId``, a permission subject's call); anything else may
  only be evicted or cut by a cap, each reported (an eviction event, or a ``LimitReached``
  naming it); calls keep their first-seen order;
- every change is reported: a new call or terminal by its created event, each changed key of
  an entry by a patched/cleared event naming it (``content`` also by an append or a cap,
  terminal ``output`` by an output append or a cap);
- caps hold: content items per call, output bytes per terminal, calls per session, bytes per
  call, session and store (as the store measures them, which a count from scratch matches);
- a second store fed the same stream as parsed JSON values (the slow path) agrees exactly.

At the end, replaying the document (each call's snapshot as one ``tool_call_update``, each
terminal's as one ``terminal_update``) on an empty store gives the same document (D35), and
every call shows a non-empty title (D10).
"""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import event, given, settings
from hypothesis import strategies as st

from acp_toolcalls.store import Limits

from .strategies import examples, line, traffic
from .targets import run_store

STREAM = st.lists(traffic("v2") | traffic("v1"), min_size=6, max_size=40) | st.lists(
    line("v2", weight=6) | line("v1", weight=6), min_size=1, max_size=30
)
LIMITS = st.none() | st.builds(
    Limits,
    max_content_items=st.integers(1, 4),
    max_terminal_bytes=st.integers(1, 64),
    max_tool_calls=st.integers(1, 3),
    max_value_bytes=st.none() | st.integers(100, 2_000),
    max_call_bytes=st.none() | st.integers(500, 4_000),
    max_session_bytes=st.none() | st.integers(1_000, 10_000),
    max_store_bytes=st.none() | st.integers(2_000, 20_000),
    max_meta_keys=st.none() | st.integers(1, 4),
)


@pytest.mark.slow
@settings(max_examples=examples(1.0))
@given(protocol=st.sampled_from(["v1", "v2", "auto"]), limits=LIMITS, stream=STREAM)
def test_store_changes_only_what_a_message_names(
    protocol: Any, limits: Limits | None, stream: list[bytes]
) -> None:
    run_store(stream, protocol, limits, event)
