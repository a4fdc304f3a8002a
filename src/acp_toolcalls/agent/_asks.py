"""The emitter's permission requests: asked about a call or a command, answers read back.

Rules this module owns (D46 (permissions, evidence: prompt text); D5, D6, D34):

- The request's ``title``/``description`` are the prompt's own; the ``tool_call`` subject
  carries only the minimal patch of the call's own fields (never the prompt's text), and a call
  waiting for permission is not final.
- Everything that can fail is checked before state moves; pending text of the call (and what a
  coalescing bridge holds) is flushed before the request goes out.
- A request id waits for one answer; ``answer`` reads it (a v1 client's answer mapped to v2
  first) and ``abandon`` stops waiting (not approved; a late answer is then refused with
  ``KeyError``). When the bridge cannot show a request to a v1 client, it answers for it:
  the ask is ``settled`` at once.

``Asks`` is the emitter's part for them: it holds the emitter's state and the open requests
(their options, by request id); ``ToolCallEmitter``'s permission methods call it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import msgspec
from msgspec import UNSET, UnsetType

from .. import v2
from ..models import JsonRpcMessage, replace, request_key
from ._core import EmitterState
from ._patches import patch
from ._permissions import (
    PermissionAnswer,
    check_subject,
    parse_permission_answer,
    permission_request,
)
from ._senders import Fields, SenderError, check_fields, check_meta, encoded


class PermissionAsk(msgspec.Struct, frozen=True, kw_only=True):
    """A permission request ready to send, and what is needed to read its answer.

    ``messages`` are sent in order (the request last). When the bridge could not show the
    request to a v1 client it answered on the client's behalf: ``settled`` is that answer
    and nothing needs sending.
    """

    request_id: int | str
    messages: tuple[Any, ...]
    options: tuple[v2.PermissionOption, ...]
    settled: PermissionAnswer | None = None


class Asks:
    """An emitter's permission requests and the answers to them."""

    def __init__(self, state: EmitterState) -> None:
        self.state = state
        self.open: dict[Any, tuple[v2.PermissionOption, ...]] = {}  # request key -> options

    def request(
        self,
        call_id: str,
        request_id: int | str,
        title: str,
        description: str | UnsetType,
        options: Sequence[v2.PermissionOption | tuple[str, str, str]],
        subject_meta: dict[str, Any] | UnsetType,
        fields: Fields,
    ) -> PermissionAsk:
        """``fields``: the call's own fields given (sent as the subject's patch)."""
        state = self.state
        call = state.get(call_id)
        status = fields.get("status")
        if isinstance(status, str) and status in v2.FINAL_STATUSES:
            raise SenderError("status", "a call waiting for permission is not final")
        check_fields(fields)
        request = self._check_prompt(request_id, title, description, options)
        intended = v2.ToolCallUpdate(tool_call_id=call.tool_call_id, **fields)
        check_subject(title, description, v2.ToolCallPermissionSubject(tool_call=intended))
        if subject_meta is not UNSET:
            check_meta(subject_meta, "subject._meta")
            encoded(subject_meta, "subject._meta")
        patched = patch(call, fields)  # raises before the text moves
        if "content" in fields:
            state.texts.pop(call_id, None)
            call.text = None
        state.queue(state.flush())
        update = v2.ToolCallUpdate(tool_call_id=call.tool_call_id, **patched)
        subject = v2.ToolCallPermissionSubject(tool_call=update, meta=subject_meta)
        return self._ask(request_id, request, subject)

    def request_command(
        self,
        request_id: int | str,
        title: str,
        command: v2.CommandPermissionSubject,
        description: str | UnsetType,
        options: Sequence[v2.PermissionOption | tuple[str, str, str]],
    ) -> PermissionAsk:
        if not isinstance(command, v2.CommandPermissionSubject):
            raise SenderError("subject", "build the subject with `command_subject`")
        request = self._check_prompt(request_id, title, description, options)
        check_subject(title, description, command)
        self.state.queue(self.state.flush())
        return self._ask(request_id, request, command)

    def answer(self, response: Any) -> PermissionAnswer:
        state = self.state
        data = response.data if isinstance(response, JsonRpcMessage) else response
        if not isinstance(data, Mapping):
            raise TypeError("expected a JSON-RPC response object")
        key = request_key(data.get("id"))
        options = self.open.pop(key)
        if state.bridge is not None:
            converted = state.bridge.convert(dict(data))
            for loss in converted.losses:
                state.on_loss(loss)
            data = converted.messages[0] if converted.messages else data
            state.queue(list(converted.replies))  # to the v1 client: the call restored
        return parse_permission_answer(data, options, allow_kinds=state.allow_kinds)

    def abandon(self, request_id: int | str) -> PermissionAnswer:
        state = self.state
        if self.open.pop(request_key(request_id), None) is not None and state.bridge is not None:
            withdrawn = state.bridge.withdraw(request_id)
            for loss in withdrawn.losses:
                state.on_loss(loss)
            state.queue([m for m in withdrawn.messages if not _is_cancel_request(m)])
        return PermissionAnswer(outcome="cancelled")

    def _check_prompt(
        self,
        request_id: int | str,
        title: str,
        description: str | UnsetType,
        options: Sequence[v2.PermissionOption | tuple[str, str, str]],
    ) -> v2.RequestPermissionRequest:
        """Everything about a permission request that can fail, checked before state moves;
        the subject is filled in by ``_ask``."""
        if isinstance(request_id, bool) or not isinstance(request_id, (int, str)):
            raise SenderError("id", "a JSON-RPC request id is an integer or a string")
        if request_key(request_id) in self.open:
            raise SenderError("id", f"request id {request_id!r} is still waiting for an answer")
        return permission_request(
            self.state.session_id, title=title, description=description, options=options
        )

    def _ask(
        self, request_id: int | str, request: v2.RequestPermissionRequest, subject: Any
    ) -> PermissionAsk:
        request = replace(request, subject=subject)
        checked = tuple(request.options)
        key = request_key(request_id)
        message = v2.PermissionRequestMessage(id=request_id, params=request)
        settled = None
        state = self.state
        if state.bridge is None:
            state.out.append(message)
        else:
            replies = state.bridged(state.bridge.convert(message))
            if replies:  # the bridge answered for a v1 client that cannot be asked
                settled = parse_permission_answer(replies[0], checked)
        if settled is None:
            self.open[key] = checked
        return PermissionAsk(
            request_id=request_id, messages=tuple(state.take()), options=checked, settled=settled
        )


def _is_cancel_request(message: Any) -> bool:
    return isinstance(message, JsonRpcMessage) and message.method == "$/cancel_request"
