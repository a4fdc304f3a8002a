"""Permission requests of a v2 agent, as a v1 client is asked them, and their answers.

Rules this module owns (D46 (permission mapping); D5, D28, D29):

- The subject is applied first, the session's pending changes are flushed, a first-seen call
  gets its v1 ``tool_call``, then the v1 request goes out (D46 (permission mapping)). A v1 client
  renders the prompt from the request's ``toolCall``, so the user sees what they approve there: the
  prompt's title, then its description and command ahead of the call's content (D28, amended). While
  the prompt is open, the call's updates keep that overlay; the answer (or a cancel) restores the
  call's own title and content with a ``tool_call_update``. The prompt never enters the store.
  Subject-less, unknown and ``command`` subjects the client does not show get a synthetic call
  (D28), which ends with the outcome: ``completed`` when an allow option was chosen, else
  ``failed``. Repeated option ids keep the first (D5).
- Each forwarded request is answered once: by the client's answer (mapped; one that is not a
  known outcome is never approval, nor is one with both ``result`` and ``error`` or naming an
  id never offered: D34 amended), or by the bridge, which answers ``cancelled`` when it gives
  the request up (a cap, ``withdraw``, the agent's ``$/cancel_request``) and then sends the
  client ``$/cancel_request`` and drops the client's late answer. A request reusing the id of a
  pending one is refused (``-32600``). A request the client cannot be shown (no options, D29)
  or with more than ``max_permission_options`` options is not forwarded: the agent is
  answered ``cancelled``. Past ``max_pending_permissions`` unanswered requests the oldest is
  given up (as above). The agent's ``$/cancel_request`` is a flush point.
- Any other message passes through unchanged.
"""

from __future__ import annotations

from typing import Any

import msgspec
from msgspec import UNSET

from .. import v1, v2
from ..codec import DecodeError, decode, to_builtins
from ..convert import (
    answer_ambiguity,
    permission_request_to_v1,
    permission_response_to_v2,
    prompt_items,
    unknown_keys,
)
from ..models import CANCELLED_OUTCOME, REQUEST_CANCELLED, JsonRpcMessage, response
from ..v2 import ALLOW_OPTION_KINDS
from ._forwarded import Forwarded
from ._to_v1_calls import SessionUpdates
from ._to_v1_projection import Projection
from ._to_v1_state import (
    SUBJECT_PATH,
    UPDATE_PATH,
    BridgeState,
    _notification,
    _Overlay,
    _Session,
)


class _Asked:
    """A permission request forwarded to the v1 client, until its answer."""

    __slots__ = ("allow", "offered", "session_id", "synthetic", "tool_call_id")

    def __init__(
        self,
        session_id: str,
        tool_call_id: str,
        allow: frozenset[str],
        synthetic: bool,
        offered: frozenset[str],
    ) -> None:
        self.session_id = session_id
        self.tool_call_id = tool_call_id  # the `toolCall` the client shows the prompt on
        self.allow = allow  # offered option ids of an approving kind
        self.synthetic = synthetic  # the bridge made the call up: it ends with the outcome
        self.offered = offered  # every option id the client was shown


class Permissions:
    """Permission requests, their answers and other messages (a component of
    ``V2ToV1Bridge``)."""

    def __init__(self, state: BridgeState, projection: Projection, updates: SessionUpdates) -> None:
        self.state = state
        self.projection = projection
        self.updates = updates
        self.forwarded: Forwarded[_Asked] = Forwarded(state.store.limits.max_pending_permissions)

    def on_permission(self, message: v2.PermissionRequestMessage) -> None:
        state = self.state
        state.losses.extend(unknown_keys(message, "$"))
        params = message.params
        session_id = params.session_id
        subject = params.subject
        refusal = self.forwarded.refusal(message.id)
        if refusal is not None:  # two answers would go back under one id
            state.replies.append(refusal[0])
            state.losses += [refusal[1], *unknown_keys(params, "$.params", nested=True)]
            return
        session = state.session(session_id)
        named: str | None = None
        if isinstance(subject, v2.ToolCallPermissionSubject):
            named = subject.tool_call.tool_call_id
            state.apply(message)
        elif isinstance(subject, v2.CommandPermissionSubject):
            named = subject.tool_call_id if isinstance(subject.tool_call_id, str) else None
        self.projection.flush_session(session_id)
        shown_before = False  # the client showed the subject's call before this request
        if isinstance(subject, v2.ToolCallPermissionSubject) and named is not None:
            known = state.call(session, named)
            shown_before = known.known
            if not known.known:  # the call goes out first, titled by the prompt if need be
                known.title_fallback = params.title
                state.update_path = SUBJECT_PATH  # what its first sight loses is the subject's
                try:
                    self.projection.flush_call(session_id, session, named)
                finally:
                    state.update_path = UPDATE_PATH
        cap = state.store.limits.max_permission_options
        if cap is not None and len(params.options) > cap:
            state.loss(
                "$.params.options",
                f"{len(params.options)} options, over the cap of {cap} (max_permission_options): "
                "request not sent; answered the agent `cancelled`",
            )
            state.losses.extend(unknown_keys(params, "$.params", nested=True))
            state.replies.append(response(message.id, CANCELLED_OUTCOME))
            if shown_before and isinstance(subject, v2.ToolCallPermissionSubject):
                self._unasked_subject(session_id, subject.tool_call)
            return
        carried = isinstance(subject, v2.ToolCallPermissionSubject) and (
            subject.tool_call.content is not UNSET
        )
        if carried:  # what projecting the content it set loses is the subject's
            state.update_path = SUBJECT_PATH
        try:
            shown = self._shown(session_id, session, named)
        finally:
            state.update_path = UPDATE_PATH
        request, losses = permission_request_to_v1(params, request_id=message.id, shown=shown)
        state.extend_once(losses, "$.params")  # a first sight above reported the subject's keys
        if request is None or not request.options:
            # Nothing a v1 client can show (D29): answer the agent ourselves; never approval.
            state.replies.append(response(message.id, CANCELLED_OUTCOME))
            if shown_before and isinstance(subject, v2.ToolCallPermissionSubject):
                self._unasked_subject(session_id, subject.tool_call)
            return
        tool_call_id = request.tool_call.tool_call_id
        call = state.call(session, tool_call_id)
        synthetic = not call.known
        if synthetic:  # a synthetic call for the prompt (D28)
            create = _synthetic_tool_call(request.tool_call, params.title)
            state.emit_update(session_id, create)
            call.known, call.title = True, create.title
            self.updates.ghost(
                session_id, session, tool_call_id, call
            )  # the store holds none of it
        elif shown is not None:
            own = self.projection.own_title(session_id, tool_call_id, call)
            items = prompt_items(params)
            # The subject is an update like any other: what it set is the call's own state,
            # which the answer restores (D28, amended 2026-12-06).
            if request.tool_call.title != own or items:
                if call.prompt is None:
                    call.prompt = _Overlay(params.title, items)
                else:  # another prompt on the same call: the newest is shown
                    call.prompt.title, call.prompt.items = params.title, items
                    call.prompt.items_shown = call.prompt.items_shown or bool(items)
                    call.prompt.open += 1
                call.prompt.items_shown = call.prompt.items_shown or carried
        allow = frozenset(
            option.option_id for option in request.options if option.kind in ALLOW_OPTION_KINDS
        )
        offered = frozenset(option.option_id for option in request.options)
        asked = _Asked(session_id, tool_call_id, allow, synthetic, offered)
        oldest = self.forwarded.add(message.id, asked)
        if oldest is not None:  # past the cap: the oldest is given up
            state.losses.append(oldest[1])
            self.give_up(oldest[0])
        state.out.append(v1.PermissionRequestMessage(id=message.id, params=request))

    def forget_session(self, session_id: str) -> None:
        """Forget the session's forwarded requests (it is closed: no answer is waited for)."""
        self.forwarded.forget(lambda asked: asked.session_id == session_id)

    def _unasked_subject(self, session_id: str, subject: v2.ToolCallUpdate) -> None:
        """A request the client is not asked: what its subject changed of a call the client
        shows (the store applied it) goes to the client as the agent's update would, else the
        client would never see it (found by the fuzz test's comparison with a fresh bridge)."""
        session, call = self.updates.touch(session_id, subject.tool_call_id)
        self.updates.hold(session_id, session, call, subject)

    def _shown(
        self, session_id: str, session: _Session, tool_call_id: str | None
    ) -> list[Any] | None:
        """The v1 content the client holds for a call it shows (``None``: it shows no such
        call), where a prompt on that call is shown ahead of it."""
        call = session.calls.get(tool_call_id) if tool_call_id is not None else None
        if call is None or not call.known:
            return None
        tc = (
            self.state.store.tool_call(session_id, tool_call_id)
            if tool_call_id is not None
            else None
        )
        return (
            self.projection.project(session_id, call, tc, send=False)[0] if tc is not None else []
        )

    def give_up(self, request_id: Any) -> None:
        """Answer a forwarded request ``cancelled`` on the client's behalf: the agent gets the
        answer, the client ``$/cancel_request`` and the call's own state."""
        state = self.state
        gone = self.forwarded.give_up(request_id)
        if gone is not None:
            state.replies.append(gone.reply)
            state.out.append(gone.cancel)
            state.out.extend(self._settled(gone.value, None))

    def _settled(self, asked: _Asked, selected: str | None) -> list[Any]:
        """What the v1 client is sent once a prompt has its outcome (``selected``: the option
        chosen, ``None``: not approved): a synthetic call ends (D28); a call that showed the
        prompt gets its own title and content back."""
        state = self.state
        session_id, tool_call_id = asked.session_id, asked.tool_call_id
        session = state.sessions.get(session_id)
        call = session.calls.get(tool_call_id) if session is not None else None
        if call is None:
            return []
        tc = state.store.tool_call(session_id, tool_call_id)
        if asked.synthetic and tc is None:
            status = "completed" if selected in asked.allow else "failed"
            update = v1.SessionToolCallUpdate(tool_call_id=tool_call_id, status=status)
            return [_notification(session_id, update)]
        overlay = call.prompt
        if overlay is None:
            return []
        overlay.open -= 1
        if overlay.open > 0:
            return []
        call.prompt = None
        changes: dict[str, Any] = {}
        own = self.projection.own_title(session_id, tool_call_id, call)
        if own is not None and overlay.title != own:
            changes["title"] = call.title = own
        if overlay.items_shown:  # (an earlier prompt's items too: the client still shows them)
            shown = (
                self.projection.project(session_id, call, tc, send=False)[0]
                if tc is not None
                else []
            )
            changes["content"] = shown
            call.content_dirty = False
        if not changes:
            return []
        update = v1.SessionToolCallUpdate(tool_call_id=tool_call_id, **changes)
        return [_notification(session_id, update)]

    def on_other_message(self, message: JsonRpcMessage) -> None:
        state = self.state
        data = message.data
        method = data.get("method")
        if method == "$/cancel_request":  # the agent withdraws a request it sent the client
            for session_id in list(state.dirty):  # a flush point: what was held goes first
                self.projection.flush_session(session_id)
            params = data.get("params")
            request_id = params.get("requestId") if isinstance(params, dict) else None
            if request_id is not None and request_id in self.forwarded:
                self.give_up(request_id)  # answered `cancelled` at once (D46 (permission mapping))
                return
        elif method is None and "id" in data:  # the client's answer
            known, asked, late = self.forwarded.answered(data.get("id"))
            if late is not None:
                state.losses.append(late)
            if asked is not None:
                answer, selected = self._answer(data, asked.offered)
                state.out.append(answer)
                state.replies.extend(self._settled(asked, selected))
            if known:
                return
        state.out.append(message)  # not a tool-call message: passed through unchanged

    def _answer(self, data: Any, offered: frozenset[str]) -> tuple[JsonRpcMessage, str | None]:
        """The client's answer as the agent's, and the option it selected (``None``: none).
        Only an exactly offered id in an unambiguous answer is a selection (D34 amended)."""
        state = self.state
        ambiguity = answer_ambiguity(data, offered) if isinstance(data, dict) else None
        if ambiguity is not None:
            state.loss("$.result", f"{ambiguity}: answered the agent `cancelled`")
            return response(data.get("id"), CANCELLED_OUTCOME), None
        error = data.get("error")
        if isinstance(error, dict):
            if error.get("code") == REQUEST_CANCELLED:  # cancelled by the client
                return response(data.get("id"), CANCELLED_OUTCOME), None
            return JsonRpcMessage(data), None  # the agent reads any error as not approved
        try:
            answer = decode(data.get("result"), v1.RequestPermissionResponse).value
        except DecodeError:
            state.loss("$.result", "unreadable permission answer: answered `cancelled`")
            return response(data.get("id"), CANCELLED_OUTCOME), None
        mapped = permission_response_to_v2(answer)
        outcome = mapped.outcome
        selected = outcome.option_id if isinstance(outcome, v2.SelectedPermissionOutcome) else None
        return response(data.get("id"), to_builtins(mapped)), selected


def _synthetic_tool_call(tool_call: v1.ToolCallUpdate, title: str) -> v1.ToolCall:
    body = {k: v for k, v in msgspec.structs.asdict(tool_call).items() if v is not None}
    if not isinstance(body.get("title"), str) or not body["title"]:
        body["title"] = title or "Permission required"
    body["content"] = body["content"] if body.get("content") else UNSET
    return v1.ToolCall(**body)
