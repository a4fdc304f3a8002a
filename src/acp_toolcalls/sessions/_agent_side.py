"""The session converter's side of the agent: its requests, its updates, the prompt turns.

Rules this module owns (issue 16; docs/conversion.md, "Converting whole sessions"):

- Tool calls, permission requests and every other session update of the agent go through the
  tool-call converter (a stateful bridge or a stateless converter); what the target version
  has no counterpart for is left out and reported: a v1 agent's ``fs/*`` and ``terminal/*``
  requests toward v2, a permission request the tool-call converter did not send (its answer
  to the agent is in ``replies``), a ``$/cancel_request`` naming a request left out.
- Prompt turns follow the state machine of ``lifecycle`` (``Turns``, one a session), whose
  effects are written here (``_turn``). Toward v2: ``Acknowledge`` is ``{messageId}``, a
  ``user_message`` echo of the prompt and ``running`` (when the session is set up, the prompt
  is sent to a session set up already, or the agent says anything about it);
  ``RequiresAction`` and ``Running`` frame permission requests; the v1 response's ``End`` is
  an idle ``state_update``, ``EndInError`` one with stop reason ``error`` (before the
  acknowledgement, the prompt's error response stays). Toward v1: the acknowledgement and the
  agent's echo of the user message are left out (a v1 client shows its own prompt), and the
  ``End`` of a turn, at the idle ``state_update`` with a stop reason, is its v1 response; other
  ``state_update``s have no v1 form (reported by the tool-call converter).
- Toward v1, a v2 message upsert is sent as chunks (``upsert_as_chunks``) when the v1 side has no
  chunk of that ``messageId`` yet, else dropped (reported). Toward v2, a v1 agent's modes are
  the config option ``MODE_CONFIG_ID`` (``Modes``): ``current_mode_update`` is its
  ``config_option_update``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from .. import v1, v2
from ..bridge import V2ToV1Bridge
from ..lifecycle import CLIENT_OWNED as _CLIENT_OWNED
from ..lifecycle import MESSAGE_CHUNKS as _CHUNKS
from ..lifecycle import MODE_UPDATES as _MODE_UPDATES
from ..lifecycle import USER_ECHOES as _USER_ECHOES
from ..lifecycle import (
    Acknowledge,
    End,
    EndInError,
    NotFollowed,
    RequiresAction,
    Running,
    TurnEffect,
    jsonrpc,
    prompt_accepted,
    prompt_end_to_v1,
    prompt_error_to_v2,
    prompt_result_to_v2,
    upsert_as_chunks,
)
from ._state import (
    _NO_V2_AGENT,
    _UPSERTS,
    _Asked,
    _id_key,
    _Session,
    _SessionBase,
)


class _AgentSide(_SessionBase):
    """What a ``SessionConverter`` does with the agent's messages and the prompt turns."""

    # ----------------------------------------------------------------------------------------
    # The agent's messages

    def _agent_request(
        self, data: dict[str, Any], raw: bytes | str | None, method: str, params: Any
    ) -> None:
        request_id = data["id"]
        session_id = params.get("sessionId") if isinstance(params, dict) else None
        if self.to == "v2" and method.startswith(_CLIENT_OWNED):
            why = _NO_V2_AGENT["fs/" if method.startswith("fs/") else "terminal/"]
            self._lost("$.method", f"{method}: {why}: the request and its answer are left out")
            self._ask("agent", request_id, _Asked(method, "drop"))
            return
        if method != "session/request_permission":
            self._ask("agent", request_id, _Asked(method, "pass", session_id=session_id))
            self._emit(data)
            return
        if self.to == "v2":
            self._works_on(session_id)
        converted = self.tool_calls.convert(raw if raw is not None else data)
        sent = any(
            isinstance(m, (v1.PermissionRequestMessage, v2.PermissionRequestMessage))
            for m in converted.messages
        )
        session = self._session(session_id)
        if sent:
            self._turn(session_id, session.turns.permission_asked())
        self._converted(converted)
        if not sent:  # answered by the converter (in `replies`): the client's answer goes too
            self._ask("agent", request_id, _Asked(method, "drop"))
            return
        self._ask("agent", request_id, _Asked(method, "permission", session_id=session_id))

    def _agent_notification(
        self, data: dict[str, Any], raw: bytes | str | None, method: str, params: Any
    ) -> None:
        if method == "$/cancel_request":
            key = _id_key(params.get("requestId")) if isinstance(params, dict) else None
            asked = self._pending.get(("agent", key))
            if asked is not None and asked.how == "drop":
                self._lost("$", "a cancel of a request left out: left out")
                return
            # The converter settles what it forwarded; its own answer to the agent is not
            # written: the client's answer in the log is.
            self._converted(self.tool_calls.convert(data), replies=False)
            return
        if method != "session/update" or not isinstance(params, dict):
            self._tool(data, raw)
            return
        update = params.get("update")
        tag = update.get("sessionUpdate") if isinstance(update, dict) else None
        session_id = params.get("sessionId")
        if self.to == "v2":
            self._v1_update(data, raw, session_id, tag, update)
        else:
            self._v2_update(data, raw, session_id, tag, update)

    def _v1_update(
        self, data: dict[str, Any], raw: bytes | str | None, session_id: Any, tag: Any, update: Any
    ) -> None:
        self._works_on(session_id)
        session = self._sessions.get(_id_key(session_id))
        if session is not None and session.modes is not None and tag in _MODE_UPDATES:
            mapped = session.modes.update(update)
            self._mapped_losses(mapped.losses, "$.params.update")
            if mapped.value is not None:
                params = data["params"]
                out: dict[str, Any] = {"sessionId": session_id, "update": mapped.value}
                if isinstance(params.get("_meta"), dict):
                    out["_meta"] = params["_meta"]
                self._emit(jsonrpc.notification("session/update", out))
            return
        self._tool(data, raw)

    def _v2_update(
        self, data: dict[str, Any], raw: bytes | str | None, session_id: Any, tag: Any, update: Any
    ) -> None:
        session = self._session(session_id)
        if tag in _USER_ECHOES and session.turns.open:
            return  # the prompt's echo: a v1 client shows its own prompt
        if tag in _UPSERTS:
            self._fan_out(session_id, session, update)
            return
        if tag == "state_update" and self._ends_turn(session_id, session, update):
            return
        if tag in _CHUNKS and isinstance(update.get("messageId"), str):
            self._remember_message(session, update["messageId"])
        self._tool(data, raw)

    def _fan_out(self, session_id: Any, session: _Session, update: dict[str, Any]) -> None:
        """A v2 message upsert toward v1: chunks of its content, when v1 has none of it."""
        refused, chunks = upsert_as_chunks(update, session.messages)
        if refused is not None:
            self._lost("$.params.update", f"{refused}: not sent")
            return
        if not chunks:
            return
        self._remember_message(session, update["messageId"])
        for chunk in chunks:
            self._tool(jsonrpc.update(session_id, chunk), None)

    # ----------------------------------------------------------------------------------------
    # Prompt turns

    def _start_prompt(self, request_id: Any, session_id: Any, params: Any) -> list[TurnEffect]:
        """The client's prompt (mapped ``params``) goes to the agent; the effects to write
        once the request is written (toward v2, in a session set up already: acknowledged)."""
        content = params.get("prompt") if isinstance(params, dict) and self.to == "v2" else None
        session = self._session(session_id)
        return session.turns.prompt_sent(request_id, content, accepted=session.established)

    def _turn(self, session_id: Any, effects: Iterable[TurnEffect]) -> None:
        """The effects of a turn event that need nothing but the session, written."""
        for effect in effects:
            if isinstance(effect, Acknowledge):
                self._acknowledge(session_id, effect)
            elif isinstance(effect, End) and effect.stop is not None:  # toward v1
                mapped = prompt_end_to_v1(effect.stop)
                self._mapped_losses(mapped.losses, "$.params.update")
                self._emit({"jsonrpc": "2.0", "id": effect.prompt_id, **mapped.value})
            elif isinstance(effect, (RequiresAction, Running)):
                self._emit(jsonrpc.update(session_id, effect.update))

    def _acknowledge(self, session_id: Any, acknowledged: Acknowledge) -> None:
        """Toward v2: the prompt was inserted (``messageId``, its echo, ``running``)."""
        self._end_message(session_id)
        self._acks += 1
        for message in prompt_accepted(
            acknowledged.prompt_id, session_id, self._acks, acknowledged.content
        ):
            self._emit(message)

    def _end_message(self, session_id: Any) -> None:
        end_message: Callable[[Any], None] | None = getattr(self.tool_calls, "end_message", None)
        if end_message is not None:
            end_message(session_id)

    def _works_on(self, session_id: Any) -> None:
        """Toward v2: the agent said something about the session, so its prompts are in."""
        session = self._sessions.get(_id_key(session_id))
        if session is not None:
            self._turn(session_id, session.turns.agent_spoke())

    def _prompt_answered(self, data: dict[str, Any], asked: _Asked) -> None:
        error = data.get("error")
        session = self._session(asked.session_id)
        for effect in session.turns.answered(data["id"], error=error is not None):
            if isinstance(effect, End) and effect.stop is None:  # toward v2: the v1 result
                self._end_message(asked.session_id)
                mapped = prompt_result_to_v2(data.get("result"))
                self._mapped_losses(mapped.losses, "$.result")
                self._emit(jsonrpc.update(asked.session_id, mapped.value))
            elif isinstance(effect, EndInError) and effect.as_update:
                self._end_message(asked.session_id)
                self._emit(jsonrpc.update(asked.session_id, prompt_error_to_v2(error)))
            elif isinstance(effect, EndInError):  # refused: the error is the answer
                self._emit(data)
            elif isinstance(effect, NotFollowed):
                self._lost("$.result", "the acknowledgement of a prompt not followed: left out")
            else:
                self._turn(asked.session_id, (effect,))

    def _ends_turn(self, session_id: Any, session: _Session, update: dict[str, Any]) -> bool:
        """Toward v1: an idle ``state_update`` with a stop reason ends the oldest open prompt
        of the session (its v1 response); ``False``: it ends none."""
        if update.get("state") != "idle" or update.get("stopReason") is None:
            return False
        if not session.turns.open:
            return False
        if isinstance(self.tool_calls, V2ToV1Bridge) and isinstance(session_id, str):
            self._converted(self.tool_calls.flush(session_id))  # the turn's last changes first
        self._turn(session_id, session.turns.idle(update))
        return True
