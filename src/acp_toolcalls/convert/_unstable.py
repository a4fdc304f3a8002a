"""The unstable session updates both versions share: their rules, one table per direction.

Rules this module owns (D42, extending D30 to the unstable surface; the subagents RFD,
agentclientprotocol.com/rfds/subagents):

- ``subagent_update``, ``session_message``, ``session_message_chunk`` and ``plan_removed``
  exist in the unstable schemas of both versions, with the same shapes. v1 -> v2 they map one
  to one (their content blocks converted; a v2 client understands them as baseline).
- v2 -> v1 they go as their v1 form only to a client that advertised the capability that
  covers them: ``clientCapabilities.subagents`` (``subagent_update`` and the session
  messages) or ``clientCapabilities.plan`` (``plan_removed``); otherwise they are dropped and
  reported here (a stateful bridge shows a session message's content as agent message text
  instead: ``session_message_as_text``).
- A v2 child ``state`` toward v1 loses its ``background`` list (a v1 child state has none):
  reported. An update without its string id (``_REQUIRED``) is dropped and reported, and so
  is a result the target's unstable schema does not accept (its entries of the same names).
- ``UNSTABLE_SESSION_UPDATES``: the tags each version's unstable schema adds, known (kept, not
  reported as unknown) wherever a log is read.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..models import UNSTABLE_SESSION_UPDATES
from ._kernel import Json, Losses, copy_keys
from ._opaque import (
    OpaqueConvert,
    OpaqueRule,
    ToV1,
    block_chunk,
    block_to_v1,
    block_to_v2,
    convert_blocks,
)

__all__ = [
    "UNSTABLE_SESSION_UPDATES",
    "UNSTABLE_TO_V1",
    "UNSTABLE_TO_V2",
    "session_message_as_text",
]

_SUBAGENT_KEYS = (
    "sessionId", "title", "description", "capabilities", "state", "cwd",
    "additionalDirectories", "_meta",
)  # fmt: skip
_MESSAGE_KEYS = (
    "messageId", "senderSessionId", "recipientSessionId", "senderMessageId",
    "recipientMessageId", "content", "_meta",
)  # fmt: skip
_STATE_KEYS_V1 = ("state", "stopReason", "usage", "error", "_meta")
"""What a v1 child state carries (its idle variant: a stop reason and usage)."""

_CAPABILITY: Mapping[str, str] = {
    "subagent_update": "subagents",
    "session_message": "subagents",
    "session_message_chunk": "subagents",
    "plan_removed": "plan",
}
"""v2 -> v1: the v1 client capability each unstable update needs."""


_REQUIRED: Mapping[str, str] = {
    "subagent_update": "sessionId",
    "session_message": "messageId",
    "session_message_chunk": "messageId",
    "plan_removed": "planId",
}
"""The id each unstable update must carry, a string (the schemas' one required key; a chunk
also needs its content, which its conversion checks)."""


def _identified(tag: str, convert: OpaqueConvert) -> OpaqueConvert:
    """``convert``, for an update that names what it is about (``_REQUIRED``); one that does
    not is dropped and reported (no schema entry checks these results: the stable schemas have
    none)."""
    key = _REQUIRED[tag]

    def checked(data: Mapping[str, Any], losses: Losses, opts: Any) -> Json | None:
        if not isinstance(data.get(key), str):
            losses.instead("$", f"not a valid `{tag}`: no string `{key}`", "dropped")
            return None
        return convert(data, losses, opts)

    return checked


def _blocks(convert: Any) -> OpaqueConvert:
    """A session message upsert: its ``content`` list converted block by block."""

    def message(data: Mapping[str, Any], losses: Losses, opts: Any) -> Json | None:
        out = copy_keys(data, _MESSAGE_KEYS, losses)
        convert_blocks(out, "content", convert, losses)
        return out

    return message


def _subagent_to_v1(data: Mapping[str, Any], losses: Losses, opts: Any) -> Json | None:
    out = copy_keys(data, _SUBAGENT_KEYS, losses)
    state = out.get("state")
    if isinstance(state, dict):
        if "background" in state:
            losses.lost("$.state.background", "a v1 child state has no background list; dropped")
        out["state"] = {key: state[key] for key in _STATE_KEYS_V1 if key in state}
    return out


def _subagent_to_v2(data: Mapping[str, Any], losses: Losses, opts: Any) -> Json | None:
    return copy_keys(data, _SUBAGENT_KEYS, losses)


def _plan_removed(data: Mapping[str, Any], losses: Losses, opts: Any) -> Json | None:
    return copy_keys(data, ("planId", "_meta"), losses)


def _advertised(tag: str, convert: OpaqueConvert) -> OpaqueConvert:
    capability = _CAPABILITY[tag]
    checked = _identified(tag, convert)

    def guarded(data: Mapping[str, Any], losses: Losses, opts: ToV1) -> Json | None:
        if not getattr(opts, capability):
            losses.instead(
                "$",
                f"`{tag}` has a v1 form only in the unstable v1 schema, for clients that "
                f"advertised `clientCapabilities.{capability}`",
                "dropped",
            )
            return None
        return checked(data, losses, opts)

    return guarded


_SHARED: Mapping[str, tuple[OpaqueConvert, OpaqueConvert, str]] = {
    "subagent_update": (_subagent_to_v1, _subagent_to_v2, "SubagentUpdate"),
    "session_message": (_blocks(block_to_v1), _blocks(block_to_v2), "SessionMessage"),
    "session_message_chunk": (
        block_chunk("messageId", block_to_v1),
        block_chunk("messageId", block_to_v2),
        "SessionMessageChunk",
    ),
    "plan_removed": (_plan_removed, _plan_removed, "PlanRemoved"),
}
"""The updates both unstable schemas have: their rule toward v1, toward v2, and the entry of
both unstable schemas their results are checked against."""

UNSTABLE_TO_V1: Mapping[str, OpaqueRule] = {
    tag: OpaqueRule(_advertised(tag, to_v1), tag, entry, unstable=True)
    for tag, (to_v1, _, entry) in _SHARED.items()
}
"""v2 -> v1: the unstable updates, for a client that advertised their capability, checked
against the unstable v1 schema."""

UNSTABLE_TO_V2: Mapping[str, OpaqueRule] = {
    **{
        tag: OpaqueRule(_identified(tag, to_v2), tag, entry, unstable=True)
        for tag, (_, to_v2, entry) in _SHARED.items()
    },
    "plan_update": OpaqueRule(
        lambda data, losses, opts: copy_keys(data, ("plan", "_meta"), losses),
        "plan_update",
        "PlanUpdate",
    ),
}
"""v1 (its unstable schema) -> v2: one to one, checked against the unstable v2 schema
(``plan_update``, stable in v2, against the stable one)."""


def session_message_as_text(data: Mapping[str, Any], losses: Losses) -> list[Json]:
    """A v2 ``session_message_chunk``, or a ``session_message`` upsert's content, as v1
    ``agent_message_chunk`` values under its ``messageId``, for a client that did not
    advertise ``subagents``: its content shown as agent message text; its participants are not
    said (reported)."""
    content = data.get("content")
    if data.get("sessionUpdate") == "session_message_chunk":
        blocks = [("$.content", content)]
    else:
        items = content if isinstance(content, list) else []
        blocks = [(f"$.content[{i}]", block) for i, block in enumerate(items)]
    message_id = data.get("messageId")
    chunks: list[Json] = []
    for path, value in blocks:
        block = block_to_v1(value, path, losses, path)
        if block is None:
            continue
        chunk: Json = {"sessionUpdate": "agent_message_chunk", "content": block}
        if isinstance(message_id, str):
            chunk["messageId"] = message_id
        chunks.append(chunk)
    losses.instead(
        "$",
        f"`{data.get('sessionUpdate')}` has a v1 form only for clients that advertised "
        "`clientCapabilities.subagents`; its sender and recipient are not shown",
        "shown as agent message text",
    )
    return chunks
