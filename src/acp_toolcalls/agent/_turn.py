"""How calls and turns end: a call's final status, and the turn's end for every open call.

Rules this module owns (D46 (sender obligations, item 8; evidence: unfinished calls); D14, D20):

- ``finish`` gives a call its final status (``completed``, ``failed`` or ``cancelled``) after
  its pending text; an advertised ``cancel`` capability is withdrawn; the call then takes no
  more updates and its id may start a new call.
- The turn's end (``finish_open``/``end_turn``) gives every open call a final status, except
  calls listed as background work: ``cancelled`` when the turn was cancelled, else ``failed``,
  logged as an agent bug (the call should have been finished). ``end_turn`` then sends a v2
  idle ``state_update`` with the stop reason, listing the background work when there is any.

``CallEndings`` is the emitter's part for them, on the emitter's state; ``ToolCallEmitter``'s
``finish``, ``finish_open`` and ``end_turn`` call it.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from .. import v2
from ._core import EmitterState, Message
from ._patches import logger, patch, update_message
from ._senders import Fields, SenderError, check_fields


class CallEndings:
    """How an emitter's calls and turns end."""

    def __init__(self, state: EmitterState) -> None:
        self.state = state

    def finish(self, call_id: str, status: str, fields: Fields) -> list[Message]:
        """``fields``: the final patch's fields, ``status`` among them."""
        if status not in v2.FINAL_STATUSES:
            raise SenderError("status", f"{status!r} is not final (completed|failed|cancelled)")
        state = self.state
        call = state.get(call_id)
        check_fields(fields)
        if "capabilities" in call.fields:
            fields["capabilities"] = None  # stop advertising `cancel` once final (D46)
        patched = patch(call, fields)  # raises before the text moves
        if "content" in fields:
            call.text = None
        else:
            state.flush_text(call_id, call)
        state.texts.pop(call_id, None)
        state.send_patch(call, patched)
        call.final = True
        call.fields, call.items, call.keys, call.meta, call.text = {}, [], [], {}, None
        return state.take()

    def finish_open(self, status: str, background: Iterable[str], bug: bool) -> list[Message]:
        if status not in v2.FINAL_STATUSES:
            raise SenderError("status", f"{status!r} is not final (completed|failed|cancelled)")
        state = self.state
        keep = set(background)
        for call_id in state.open_calls():
            if call_id not in keep:
                if bug:
                    logger.warning(
                        "tool call %r was still open at the end of the turn: sent %r",
                        state.calls[call_id].tool_call_id,
                        status,
                    )
                state.queue(self.finish(call_id, status, {"status": status}))
        return state.take()

    def end_turn(
        self, stop_reason: str, background: Iterable[str], background_terminals: Iterable[str]
    ) -> list[Message]:
        state = self.state
        calls = list(background)
        terminals = list(background_terminals)
        listed = [state.tool_call_id(c) for c in calls]  # an unknown id raises before any send
        status = "cancelled" if stop_reason == "cancelled" else "failed"
        state.queue(state.flush())
        state.queue(self.finish_open(status, calls, stop_reason != "cancelled"))
        idle: dict[str, Any] = {
            "sessionUpdate": "state_update",
            "state": "idle",
            "stopReason": stop_reason,
        }
        if calls or terminals:
            idle["background"] = [
                *({"type": "tool_call", "toolCallId": tool_call_id} for tool_call_id in listed),
                *({"type": "terminal", "terminalId": t} for t in terminals),
            ]
        state.send(update_message(state.session_id, v2.OpaqueSessionUpdate(idle)))
        return state.take()
