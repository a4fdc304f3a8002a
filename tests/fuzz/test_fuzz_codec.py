"""Fuzz the codec: ``decode_message`` (v1 and v2) and ``decode`` of bare payloads.

Invariants, for every input (``strategies.line``: mutated, truncated, corrupted real lines,
batches, arbitrary JSON and bytes), read as bytes, as text and as parsed JSON values:

- only ``DecodeError`` leaves the codec, and its path names a place in the input;
- bytes and text of the same line decode alike; so does the parsed value of a readable line;
- ``encode`` writes every decoded value, and decoding that again is a fixpoint: the same
  bytes, with no new salvage (only "kept" notes, which are values kept on purpose);
- a message keeps what it is about: its method, session and tool-call/terminal ids survive
  salvage (``invariants.named``), and a message of any other method comes back verbatim;
- every diagnostic names a place in the input; ``strict=True`` raises exactly when the lenient
  read salvaged something, at the first diagnostic's path.
"""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import event, given, settings
from hypothesis import strategies as st

from acp_toolcalls import v1, v2
from acp_toolcalls.models import VersionName

from . import corpus
from .strategies import GARBAGE, dump, examples, line, mutated
from .targets import check_decode, check_payload

LINES = line("v1") | line("v2")


@pytest.mark.parametrize("protocol", ["v1", "v2"])
@pytest.mark.encodes_invalid  # fuzzed lines, decoded and written back: kept unknown variants
@settings(max_examples=examples(1.0))  # and keys come back as they came, invalid or not
@given(data=LINES)
def test_decode_message_never_fails_but_with_decode_error(
    protocol: VersionName, data: bytes
) -> None:
    check_decode(data, protocol, event)


def _payloads() -> list[Any]:
    """Sub-objects of the seeds that are payloads of some model: updates, params, subjects,
    tool calls, content items, permission answers."""
    out: list[Any] = list(corpus.CLIENT_ANSWERS)
    for values in corpus.VALUES.values():
        for value in values:
            params = value.get("params") if isinstance(value, dict) else None
            if not isinstance(params, dict):
                continue
            out.append(params)
            update, subject = params.get("update"), params.get("subject")
            for holder in (update, subject, params.get("toolCall")):
                if isinstance(holder, dict):
                    out.append(holder)
                    content = holder.get("content")
                    out += content if isinstance(content, list) else [content]
                    call = holder.get("toolCall")
                    if isinstance(call, dict):
                        out.append(call)
    return [payload for payload in out if payload is not None]


PAYLOADS = _payloads()
MODELS: tuple[type, ...] = (
    v2.ToolCallUpdate,
    v2.SessionToolCallUpdate,
    v2.ToolCallContentChunk,
    v2.TerminalUpdate,
    v2.TerminalOutputChunk,
    v2.RequestPermissionRequest,
    v2.RequestPermissionResponse,
    v2.Diff,
    v2.Content,
    v2.UpdateSessionNotification,
    v1.ToolCall,
    v1.ToolCallUpdate,
    v1.RequestPermissionRequest,
    v1.RequestPermissionResponse,
    v1.SessionNotification,
    v1.Content,
)


@pytest.mark.encodes_invalid  # fuzzed payloads, decoded and written back: kept unknown variants
@settings(max_examples=examples(1.0))
@given(
    model=st.sampled_from(MODELS),
    payload=st.sampled_from(PAYLOADS).flatmap(mutated) | GARBAGE,
    ensure_ascii=st.booleans(),
)
def test_decode_of_bare_payloads(model: type, payload: Any, ensure_ascii: bool) -> None:
    check_payload(dump(payload, ensure_ascii), model, event)
