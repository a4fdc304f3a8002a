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
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import msgspec
from msgspec import UNSET, UnsetType

from .. import v2
from ..models import JsonRpcMessage, replace, request_key
from ._core import EmitterCore
from ._patches import fields_of, patch
from ._permissions import (
    DEFAULT_OPTIONS,
    PermissionAnswer,
    check_subject,
    parse_permission_answer,
    permission_request,
)
from ._senders import SenderError, check_fields, check_meta, encoded


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


class PermissionsMixin(EmitterCore):
    """The emitter's permission requests."""

    def request_permission(
        self,
        call_id: str,
        *,
        request_id: int | str,
        title: str,
        description: str | UnsetType = UNSET,
        options: Sequence[v2.PermissionOption | tuple[str, str, str]] = DEFAULT_OPTIONS,
        subject_meta: dict[str, Any] | UnsetType = UNSET,
        kind: str | UnsetType | None = UNSET,
        status: str | UnsetType | None = UNSET,
        content: list[v2.ToolCallContent] | UnsetType | None = UNSET,
        locations: list[v2.ToolCallLocation] | UnsetType | None = UNSET,
        raw_input: Any = UNSET,
        meta: dict[str, Any] | UnsetType | None = UNSET,
    ) -> PermissionAsk:
        """Ask permission for an open call. ``title``/``description`` are the prompt's text;
        the tool-call fields, if any, are the call's own state, sent as the subject's patch.

        Pending text is flushed first. Read the answer with ``answer``.
        """
        call = self._get(call_id)
        if isinstance(status, str) and status in v2.FINAL_STATUSES:
            raise SenderError("status", "a call waiting for permission is not final")
        fields = fields_of(
            kind=kind, status=status, content=content, locations=locations,
            raw_input=raw_input, meta=meta,
        )  # fmt: skip
        check_fields(fields)
        request = self._check_prompt(request_id, title, description, options)
        intended = v2.ToolCallUpdate(tool_call_id=call.tool_call_id, **fields)
        check_subject(title, description, v2.ToolCallPermissionSubject(tool_call=intended))
        if subject_meta is not UNSET:
            check_meta(subject_meta, "subject._meta")
            encoded(subject_meta, "subject._meta")
        patched = patch(call, fields)  # raises before the text moves
        if content is not UNSET:
            self._texts.pop(call_id, None)
            call.text = None
        self._queue(self.flush())
        update = v2.ToolCallUpdate(tool_call_id=call.tool_call_id, **patched)
        subject = v2.ToolCallPermissionSubject(tool_call=update, meta=subject_meta)
        return self._ask(request_id, request, subject)

    def request_command_permission(
        self,
        *,
        request_id: int | str,
        title: str,
        command: v2.CommandPermissionSubject,
        description: str | UnsetType = UNSET,
        options: Sequence[v2.PermissionOption | tuple[str, str, str]] = DEFAULT_OPTIONS,
    ) -> PermissionAsk:
        """Ask permission to run a command (a subject from ``command_subject``)."""
        if not isinstance(command, v2.CommandPermissionSubject):
            raise SenderError("subject", "build the subject with `command_subject`")
        request = self._check_prompt(request_id, title, description, options)
        check_subject(title, description, command)
        self._queue(self.flush())
        return self._ask(request_id, request, command)

    def answer(self, response: Any) -> PermissionAnswer:
        """Read the client's JSON-RPC response to a request of ``request_permission``.

        A v1 client's answer is mapped to v2 first; what gives the v1 client's card back its
        own title and content after the prompt is queued and goes out first with the next
        messages (``flush()`` sends it at once). Raises ``KeyError`` for a response to no open
        request (already answered, or abandoned with ``abandon``).
        """
        data = response.data if isinstance(response, JsonRpcMessage) else response
        if not isinstance(data, Mapping):
            raise TypeError("expected a JSON-RPC response object")
        key = request_key(data.get("id"))
        options = self._asks.pop(key)
        if self._bridge is not None:
            converted = self._bridge.convert(dict(data))
            for loss in converted.losses:
                self._on_loss(loss)
            data = converted.messages[0] if converted.messages else data
            self._queue(list(converted.replies))  # to the v1 client: the call restored
        return parse_permission_answer(data, options, allow_kinds=self.allow_kinds)

    def abandon(self, request_id: int | str) -> PermissionAnswer:
        """Stop waiting for an answer (after ``session/cancel``): not approved; a late answer
        is then ignored (``answer`` raises ``KeyError`` for it). For a v1 client, what gives
        its card back its own title and content is queued and goes out with the next messages
        (``flush()`` sends it at once). Withdrawing the request from the client
        (``$/cancel_request``) is the transport's: it knows the id the request went out
        under (the official SDK sends it when the awaiting task is cancelled)."""
        if self._asks.pop(request_key(request_id), None) is not None and self._bridge is not None:
            withdrawn = self._bridge.withdraw(request_id)
            for loss in withdrawn.losses:
                self._on_loss(loss)
            self._queue([m for m in withdrawn.messages if not _is_cancel_request(m)])
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
        if request_key(request_id) in self._asks:
            raise SenderError("id", f"request id {request_id!r} is still waiting for an answer")
        return permission_request(
            self.session_id, title=title, description=description, options=options
        )

    def _ask(
        self, request_id: int | str, request: v2.RequestPermissionRequest, subject: Any
    ) -> PermissionAsk:
        request = replace(request, subject=subject)
        checked = tuple(request.options)
        key = request_key(request_id)
        message = v2.PermissionRequestMessage(id=request_id, params=request)
        settled = None
        if self._bridge is None:
            self._out.append(message)
        else:
            replies = self._bridged(self._bridge.convert(message))
            if replies:  # the bridge answered for a v1 client that cannot be asked
                settled = parse_permission_answer(replies[0], checked)
        if settled is None:
            self._asks[key] = checked
        return PermissionAsk(
            request_id=request_id, messages=tuple(self._take()), options=checked, settled=settled
        )


def _is_cancel_request(message: Any) -> bool:
    return isinstance(message, JsonRpcMessage) and message.method == "$/cancel_request"
