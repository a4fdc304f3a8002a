"""Whole-message v1 <-> v2 conversion with no bridge state: the stateless converters.

Rules this module owns (D46 (conversion modes, permission mapping to v2 to v1 bridge); issue 4):

- ``StatelessV2ToV1`` and ``StatelessV1ToV2`` have the bridges' interface: ``convert(message)``
  takes one message or batch (raw bytes, text, JSON values or typed models) and returns a
  ``Converted`` (messages for the other peer, replies for the sender, losses); ``flush()``
  returns an empty ``Converted``, because nothing is ever held back. They are built only on the
  stateless mappings of this package, in the kernel's converter frame (``_kernel.Frame``).
- v2 -> v1: the one piece of state is, per session, the set of tool-call ids already sent to
  the v1 side. A ``tool_call_update`` for an id not in it goes out as a v1 ``tool_call`` with a
  non-empty title (``tool_call_to_v1``, D10), later ones as ``tool_call_update``; one that
  leaves v1 nothing to show (only ``toolCallId``) is not sent (D46 (v2 to v1 bridge)). A permission
  request goes through ``permission_request_to_v1``; when its (possibly synthetic) tool call is new,
  that call's v1 ``tool_call`` goes out first. ``tool_call_content_chunk`` and terminal updates need
  a bridge's state: dropped and reported. Every other update goes through ``session_update_to_v1``:
  mapped, or dropped and reported, never forwarded raw.
- v1 -> v2: the one piece of state is, per session, the set of tool-call ids already sent.
  Updates go through ``session_update_to_v2`` (the first ``tool_call`` of an id keeps every
  field the agent set, a repeated one merges, D9 amended), permission requests through
  ``permission_request_to_v2``.
- A permission request that cannot be sent is answered ``cancelled`` in ``replies`` (D5, D29):
  never approval.
- Every other message (responses, other methods, extensions) passes through unchanged. A
  stateless converter does not match answers to the requests it forwarded.
- Every loss is reported with its JSON path rooted at the message (``$.params.update.status``;
  ``$[1].params.update.status`` in a batch). What the decoder salvaged from raw input is
  reported as ``input salvaged``, as the bridges do; notification ``_meta`` is kept; unknown keys
  of the envelope and params are reported (D19).
- ``strict=True`` is the mappings' strict mode: ``ConversionError`` (path rooted at the message)
  at the first thing the target version cannot represent. The drops the mappings make in every
  mode (unknown keys, ``capabilities``) are still reported, not raised.
"""

from __future__ import annotations

from typing import Any

import msgspec
from msgspec import UNSET

from .. import v1, v2
from ..codec import VersionName
from ..models import CANCELLED_OUTCOME, InvalidMessage, JsonRpcMessage, WireStruct, response
from ._kernel import Frame, invalid_element
from ._loss import ConversionError, Converted, Loss, unknown_keys
from ._permissions import permission_request_to_v1, permission_request_to_v2
from ._session_updates import session_update_to_v1, session_update_to_v2
from ._tool_calls import display_title, tool_call_to_v1, tool_call_update_to_v1

__all__ = ["StatelessV1ToV2", "StatelessV2ToV1"]


def _meta(out: Frame, meta: Any, root: str) -> Any:
    """A notification's ``_meta``, kept; a ``null`` one is dropped and reported."""
    if meta is None:
        out.losses.append(Loss(f"{root}.params._meta", "`_meta: null` carries nothing; dropped"))
        return UNSET
    return meta


def _extra(out: Frame, obj: WireStruct, root: str) -> None:
    out.losses.extend(unknown_keys(obj, root))


class _Stateless:
    """The shared frame: decoding raw input, batches, pass-through, the result."""

    _version: VersionName

    def __init__(self, *, strict: bool = False) -> None:
        self.strict = strict
        self.seen: dict[str, set[str]] = {}
        """Per session, the tool-call ids the other side has been sent a message about."""

    def convert(self, message: Any) -> Converted:
        """Convert one message (or batch); raises ``DecodeError`` for unreadable raw input
        and, in strict mode, ``ConversionError`` for anything the target cannot represent."""
        out = Frame()
        return out.convert(message, self._version, lambda item, root: self._one(item, root, out))

    def flush(self) -> Converted:
        """Nothing is ever held back: an empty ``Converted``."""
        return Converted()

    def close_session(self, session_id: str) -> Converted:
        """Forget what is kept about the session; nothing to send."""
        self.seen.pop(session_id, None)
        return Converted()

    def _one(self, message: Any, root: str, out: Frame) -> None:
        if isinstance(message, JsonRpcMessage):
            out.messages.append(message)  # not tool-call traffic: unchanged
        elif isinstance(message, InvalidMessage):
            out.losses.append(invalid_element(message))
        elif not self._typed(message, root, out):
            raise TypeError(f"cannot convert a {type(message).__name__}")

    def _typed(self, message: Any, root: str, out: Frame) -> bool:
        raise NotImplementedError


class StatelessV2ToV1(_Stateless):
    """A v2 agent's messages for a v1 client, message by message, with no bridge state.

    Remembers only which tool-call ids each session's v1 side has been sent (``seen``), so
    that the first message about an id is a v1 ``tool_call``. Chunks and terminal updates are
    dropped and reported; ``V2ToV1Bridge`` is the converter that can carry them.
    """

    _version: VersionName = "v2"

    def _typed(self, message: Any, root: str, out: Frame) -> bool:
        if isinstance(message, v2.SessionUpdateMessage):
            self._update(message, root, out)
        elif isinstance(message, v2.PermissionRequestMessage):
            self._permission(message, root, out)
        else:
            return False
        return True

    @staticmethod
    def _emit(session_id: str, update: v1.SessionUpdate, meta: Any = UNSET) -> Any:
        notification = v1.SessionNotification(session_id=session_id, update=update, meta=meta)
        return v1.SessionUpdateMessage(params=notification)

    def _update(self, message: v2.SessionUpdateMessage, root: str, out: Frame) -> None:
        _extra(out, message, root)
        params = message.params
        _extra(out, params, f"{root}.params")
        session_id = params.session_id
        update = params.update
        where = f"{root}.params.update"
        strict = self.strict
        mapped: v1.SessionUpdate | None
        if isinstance(update, v2.ToolCallUpdate):
            seen = self.seen.setdefault(session_id, set())
            if update.tool_call_id not in seen:
                mapped = out.mapped(where, lambda: tool_call_to_v1(update, strict=strict))
                seen.add(update.tool_call_id)
            else:
                patch = out.mapped(where, lambda: tool_call_update_to_v1(update, strict=strict))
                body = msgspec.structs.asdict(patch)
                if all(value is UNSET for key, value in body.items() if key != "tool_call_id"):
                    return  # nothing v1 can show changed (D46 (v2 to v1 bridge))
                mapped = v1.SessionToolCallUpdate(**body)
        else:
            mapped = out.mapped(where, lambda: session_update_to_v1(update, strict=strict))
        if mapped is not None:
            out.messages.append(self._emit(session_id, mapped, _meta(out, params.meta, root)))

    def _permission(self, message: v2.PermissionRequestMessage, root: str, out: Frame) -> None:
        _extra(out, message, root)
        params = message.params
        request = out.mapped(
            f"{root}.params",
            lambda: permission_request_to_v1(params, strict=self.strict, request_id=message.id),
        )
        if request is None:  # nothing a v1 client can show (D29): never approval
            out.replies.append(response(message.id, CANCELLED_OUTCOME))
            return
        call = request.tool_call
        seen = self.seen.setdefault(params.session_id, set())
        if call.tool_call_id not in seen:  # the v1 client sees the call before the prompt
            out.messages.append(self._emit(params.session_id, _first_sight(call, params.title)))
            seen.add(call.tool_call_id)
        out.messages.append(v1.PermissionRequestMessage(id=message.id, params=request))


def _first_sight(call: v1.ToolCallUpdate, prompt_title: str) -> v1.ToolCall:
    """The v1 ``tool_call`` for a permission's tool call the v1 client has not seen: the
    request's own ``toolCall`` (already mapped) as a create, with a non-empty title (D10)."""
    body = {
        key: value
        for key, value in msgspec.structs.asdict(call).items()
        if value is not None and value != []  # a create leaves empty collections out
    }
    body["title"] = display_title(
        body.get("title"), body.get("name"), body.get("kind"), prompt_title
    )
    return v1.ToolCall(**body)


class StatelessV1ToV2(_Stateless):
    """A v1 agent's messages for a v2 client, message by message; ``seen`` holds, per session,
    the tool-call ids already sent (so that a repeated ``tool_call`` merges, D9).

    ``V1ToV2Bridge`` adds remembered titles for permission prompts (D37) and a report when a
    finished call is re-created (D20).
    """

    _version: VersionName = "v1"

    def _typed(self, message: Any, root: str, out: Frame) -> bool:
        if isinstance(message, v1.SessionUpdateMessage):
            self._update(message, root, out)
        elif isinstance(message, v1.PermissionRequestMessage):
            self._permission(message, root, out)
        else:
            return False
        return True

    def _update(self, message: v1.SessionUpdateMessage, root: str, out: Frame) -> None:
        _extra(out, message, root)
        params = message.params
        _extra(out, params, f"{root}.params")
        update = params.update
        seen = self.seen.setdefault(params.session_id, set())
        repeated = isinstance(update, v1.ToolCall) and update.tool_call_id in seen
        mapped = out.mapped(
            f"{root}.params.update",
            lambda: session_update_to_v2(update, strict=self.strict, repeated=repeated),
        )
        if isinstance(update, (v1.ToolCall, v1.ToolCallUpdate)):
            seen.add(update.tool_call_id)
        if mapped is not None:
            notification = v2.UpdateSessionNotification(
                session_id=params.session_id, update=mapped, meta=_meta(out, params.meta, root)
            )
            out.messages.append(v2.SessionUpdateMessage(params=notification))

    def _permission(self, message: v1.PermissionRequestMessage, root: str, out: Frame) -> None:
        _extra(out, message, root)
        params = message.params
        request = out.mapped(
            f"{root}.params", lambda: permission_request_to_v2(params, strict=self.strict)
        )
        self.seen.setdefault(params.session_id, set()).add(params.tool_call.tool_call_id)
        if request is None:  # v2 needs an option (D5): never approval
            out.replies.append(response(message.id, CANCELLED_OUTCOME))
            return
        if message.id is None:
            reason = "a v2 request needs an id"
            if self.strict:
                raise ConversionError(f"{root}.id", reason)
            out.losses.append(Loss(f"{root}.id", f"{reason}: request not sent"))
            return
        out.messages.append(v2.PermissionRequestMessage(id=message.id, params=request))
