"""Prompt turns across versions: the prompt's params, and how a turn ends in each version.

Rules this module owns:

- ``session/prompt`` maps its params here; its result does not map (v1 answers at the end of
  the turn, v2 at once): the connection answers it (``proxy._core``). The turn's end is mapped
  here: a v1 result (``prompt_result_to_v2``) or error (``prompt_error_to_v2``) is the v2 idle
  ``state_update`` that ends the turn; a v2 idle ``state_update`` with a stop reason is the v1
  response (``prompt_end_to_v1``: ``error`` becomes a JSON-RPC error, a stop reason v1 lacks
  ``end_turn``, reported; the idle state's unstable ``usage``, reported).
- A v2 message upsert reaches v1 as chunks of its content, one per block, under its
  ``messageId`` (``message_chunks``).
"""

from __future__ import annotations

from collections.abc import Callable, Container, Mapping
from typing import Any

from ..convert import UNKNOWN_KEY
from ..convert import Json as _Json
from ..convert import Losses as _Losses
from ..models import INTERNAL_ERROR as _PROMPT_ERROR  # an error without a usable code
from ._common import Mapped, _Mapper, _meta, _obj, _pick
from ._jsonrpc import result as _result
from ._jsonrpc import update as _update


def _prompt_to(block: Callable[[Any, str, _Losses, str], Any]) -> _Mapper:
    def prompt(params: Any, losses: _Losses) -> _Json:
        out = _pick(params, ("sessionId", "prompt", "messageId", "_meta"), "$", losses)
        blocks = out.get("prompt")
        if isinstance(blocks, list):
            converted = (
                block(b, f"$.prompt[{i}]", losses, f"$.prompt[{i}]") for i, b in enumerate(blocks)
            )
            out["prompt"] = [b for b in converted if b is not None]
        return out

    return prompt


V1_STOP_REASONS = frozenset({"end_turn", "max_tokens", "max_turn_requests", "refusal", "cancelled"})
"""The stop reasons a v1 ``session/prompt`` result can carry."""

MESSAGE_UPSERTS: Mapping[str, str] = {
    "user_message": "user_message_chunk",
    "agent_message": "agent_message_chunk",
    "agent_thought": "agent_thought_chunk",
}
"""v2 message upserts and the v1 chunk each is sent to a v1 client as."""
MESSAGE_CHUNKS = frozenset(MESSAGE_UPSERTS.values())
"""The message chunks (v1's only message updates; v2 has them too)."""
USER_ECHOES = frozenset({"user_message_chunk", "user_message"})
"""Updates that echo the user's prompt (a v1 client shows its own prompt)."""
MODE_UPDATES = frozenset({"current_mode_update", "config_option_update"})
"""Updates that change a session's modes (v1) or its config options (v2)."""
CLIENT_OWNED = ("fs/", "terminal/")
"""Method prefixes of what only a v1 client serves (a v2 agent does these itself)."""


def _error_parts(error: Any) -> tuple[int, str]:
    """An error object's code and message, made usable (an integer, a non-empty string)."""
    error = _obj(error)
    code, message = error.get("code"), error.get("message")
    return (
        code if isinstance(code, int) and not isinstance(code, bool) else _PROMPT_ERROR,
        message if isinstance(message, str) and message else "the agent reported an error",
    )


def prompt_result_to_v2(result: Any) -> Mapped:
    """A v1 ``session/prompt`` result as the v2 idle ``state_update`` that ends the turn (a v2
    prompt is answered at once; its end is this update). ``_meta`` is carried."""
    losses = _Losses(False)
    result = _obj(result)
    stop = result.get("stopReason")
    if not isinstance(stop, str):
        losses.lost("$.stopReason", f"not a stop reason ({stop!r}): the turn ends `end_turn`")
        stop = "end_turn"
    for key in sorted(result.keys() - {"stopReason", "_meta"}):
        losses.lost(f"$.{key}", UNKNOWN_KEY)
    idle: _Json = {"sessionUpdate": "state_update", "state": "idle", "stopReason": stop}
    return Mapped(_meta(result, idle), losses.report())


def prompt_error_to_v2(error: Any) -> _Json:
    """A v1 ``session/prompt`` error, for a turn a v2 client was told had started, as the idle
    ``state_update`` that ends it with stop reason ``error`` (the error's code, message and
    ``data``)."""
    code, message = _error_parts(error)
    body: _Json = {"code": code, "message": message}
    if isinstance(error, Mapping) and "data" in error:
        body["data"] = error["data"]
    return {"sessionUpdate": "state_update", "state": "idle", "stopReason": "error", "error": body}


def prompt_end_to_v1(state: Any) -> Mapped:
    """The v2 idle ``state_update`` that ends a turn as the v1 ``session/prompt`` response:
    ``{"result": {"stopReason": ...}}``, or for stop reason ``error`` ``{"error": {code,
    message, data}}``; a stop reason v1 lacks is ``end_turn`` (reported)."""
    state = _obj(state)
    stop = state.get("stopReason")
    if stop == "error":
        code, message = _error_parts(state.get("error"))
        error: _Json = {"code": code, "message": message}
        data = _obj(state.get("error")).get("data")
        if data is not None:
            error["data"] = data
        return Mapped({"error": error})
    losses = _Losses(False)
    if state.get("usage") is not None:  # (the unstable v1 response has one; the stable, none)
        losses.lost("$.usage", "the turn's token usage has no form in a v1 prompt response")
    if stop not in V1_STOP_REASONS:
        losses.lost("$.stopReason", f"stop reason {stop!r} has no v1 form: sent `end_turn`")
        stop = "end_turn"
    return Mapped({"result": {"stopReason": stop}}, losses.report())


def prompt_accepted(request_id: Any, session_id: Any, number: int, content: Any) -> list[_Json]:
    """A v2 client's prompt, accepted for a v1 agent (which answers only at the turn's end):
    the answer with the user message's id (the ``number``-th the proxy made), the echo of the
    prompt as that message, and the session running."""
    message_id = f"acp-toolcalls-user-{number}"
    echo = {"sessionUpdate": "user_message", "messageId": message_id, "content": content}
    return [
        _result(request_id, {"messageId": message_id}),
        _update(session_id, echo),
        _update(session_id, {"sessionUpdate": "state_update", "state": "running"}),
    ]


def upsert_as_chunks(update: Any, sent: Container[str]) -> tuple[str | None, list[_Json]]:
    """A v2 message upsert toward v1, whose client can only append: ``(None, chunks)`` (none
    when it has no content), or why it cannot go when v1 already has content of its message
    (``sent``: the message ids already sent as chunks) or it names none. The caller records
    the message id as sent once it sends chunks."""
    update = _obj(update)
    message_id = update.get("messageId")
    if not isinstance(message_id, str) or message_id in sent:
        tag = update.get("sessionUpdate")
        return f"`{tag}` replaces content a v1 client already has (messageId {message_id!r})", []
    return None, message_chunks(update)


def message_chunks(update: Any) -> list[_Json]:
    """A v2 message upsert (``MESSAGE_UPSERTS``) as the v1 chunks of its content, one per
    block, under its ``messageId`` (the v2 shape of each: the caller maps the blocks); none
    when it has no content list (a ``_meta`` patch, a clear of nothing)."""
    update = _obj(update)
    tag = MESSAGE_UPSERTS.get(update.get("sessionUpdate"))
    content = update.get("content")
    if tag is None or not isinstance(content, list):
        return []
    message_id = update.get("messageId")
    return [{"sessionUpdate": tag, "messageId": message_id, "content": block} for block in content]
