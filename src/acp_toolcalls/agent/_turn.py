"""How calls and turns end: a call's final status, and the turn's end for every open call.

Rules this module owns (D46 (sender obligations, item 8; evidence: unfinished calls); D14, D20):

- ``finish`` gives a call its final status (``completed``, ``failed`` or ``cancelled``) after
  its pending text; an advertised ``cancel`` capability is withdrawn; the call then takes no
  more updates and its id may start a new call.
- The turn's end (``finish_open``/``end_turn``) gives every open call a final status, except
  calls listed as background work: ``cancelled`` when the turn was cancelled, else ``failed``,
  logged as an agent bug (the call should have been finished). ``end_turn`` then sends a v2
  idle ``state_update`` with the stop reason, listing the background work when there is any.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from msgspec import UNSET, UnsetType

from .. import v2
from ._core import EmitterCore, Message
from ._patches import fields_of, logger, patch, update_message
from ._senders import SenderError, check_fields


class TurnMixin(EmitterCore):
    """The emitter's methods that end calls and turns."""

    def finish(
        self,
        call_id: str,
        status: str = "completed",
        *,
        title: str | UnsetType | None = UNSET,
        content: list[v2.ToolCallContent] | UnsetType | None = UNSET,
        locations: list[v2.ToolCallLocation] | UnsetType | None = UNSET,
        raw_output: Any = UNSET,
        meta: dict[str, Any] | UnsetType | None = UNSET,
    ) -> list[Message]:
        """Give the call its final status (``completed``, ``failed`` or ``cancelled``).

        Pending text is flushed first; an advertised ``cancel`` capability is withdrawn. The
        call takes no more updates; its id can be started again as a new call.
        """
        if status not in v2.FINAL_STATUSES:
            raise SenderError("status", f"{status!r} is not final (completed|failed|cancelled)")
        call = self._get(call_id)
        fields = fields_of(
            title=title, content=content, locations=locations, raw_output=raw_output, meta=meta,
            status=status,
        )  # fmt: skip
        check_fields(fields)
        if "capabilities" in call.fields:
            fields["capabilities"] = None  # stop advertising `cancel` once final (D46)
        patched = patch(call, fields)  # raises before the text moves
        if content is not UNSET:
            call.text = None
        else:
            self._flush_text(call_id, call)
        self._texts.pop(call_id, None)
        self._send_patch(call, patched)
        call.final = True
        call.fields, call.items, call.keys, call.meta, call.text = {}, [], [], {}, None
        return self._take()

    def finish_open(
        self, status: str, *, background: Iterable[str] = (), bug: bool = False
    ) -> list[Message]:
        """Finish every open call with ``status``, except the caller's ids in ``background``.

        ``bug=True`` logs each call as an agent bug (it should have been finished already).
        """
        if status not in v2.FINAL_STATUSES:
            raise SenderError("status", f"{status!r} is not final (completed|failed|cancelled)")
        keep = set(background)
        for call_id in self.open_calls():
            if call_id not in keep:
                if bug:
                    logger.warning(
                        "tool call %r was still open at the end of the turn: sent %r",
                        self._calls[call_id].tool_call_id,
                        status,
                    )
                self._queue(self.finish(call_id, status))
        return self._take()

    def end_turn(
        self,
        stop_reason: str = "end_turn",
        *,
        background: Iterable[str] = (),
        background_terminals: Iterable[str] = (),
    ) -> list[Message]:
        """Close the turn: open calls get ``cancelled`` (if the turn was cancelled) or
        ``failed`` (logged as an agent bug), then a v2 idle ``state_update`` with the stop reason.

        ``background``/``background_terminals`` list work that outlives the turn; when given,
        the idle update reports it (an agent that reports background work must always do so).
        """
        calls = list(background)
        terminals = list(background_terminals)
        listed = [self.tool_call_id(c) for c in calls]  # an unknown id raises before any send
        status = "cancelled" if stop_reason == "cancelled" else "failed"
        self._queue(self.flush())
        self._queue(self.finish_open(status, background=calls, bug=stop_reason != "cancelled"))
        state: dict[str, Any] = {
            "sessionUpdate": "state_update",
            "state": "idle",
            "stopReason": stop_reason,
        }
        if calls or terminals:
            state["background"] = [
                *({"type": "tool_call", "toolCallId": tool_call_id} for tool_call_id in listed),
                *({"type": "terminal", "terminalId": t} for t in terminals),
            ]
        self._send(update_message(self.session_id, v2.OpaqueSessionUpdate(state)))
        return self._take()
