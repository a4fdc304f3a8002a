"""What a flush sends a v1 client about a call: a first sight, or its changes re-projected.

Rules this module owns (D46 (terminal conversion, v2 to v1 bridge); D10, D39):

- The first v1 message about a ``toolCallId`` is a v1 ``tool_call`` built from the whole stored
  state, with a non-empty title (title, name, the permission's title when a permission request
  saw it first, a kind label, "Tool call"); every later one is a ``tool_call_update`` of the
  fields that changed (held back in ``pending``, latest value per field).
- v1 has no append: every message that changes a call's content carries the whole projected
  v1 content. Each v2 item is projected once and cached (chunks extend the projection); a
  replacement array or a cap that trimmed the content starts it afresh; terminal slots are
  filled from their renderings at every flush. Where a cap dropped items, a text item says
  how many.
- A ``session`` item is a text item naming the session, with its title when the store has
  one (``session_title``: that session's ``session_info_update`` or ``subagent_update`` seen
  so far), reported (D41).
- ``_meta`` goes out whole, merged with the terminal keys (a v1 client replaces it; D39), and
  only when it changed. A prompt shown on the call keeps its title and items ahead of the
  content until its answer.
- No message is longer than ``max_message_bytes``: content items are left out of its middle
  (a marker says how many), and reported.
"""

from __future__ import annotations

from typing import Any

from msgspec import UNSET

from .. import v1, v2
from ..codec import encode
from ..convert import (
    Losses,
    content_to_v1,
    create_defaults,
    create_values,
    plain_stored_fields,
    plain_text_to_v1,
    session_reference_to_v1,
    unknown_keys,
    update_values,
)
from ..models import replace
from ..store import ToolCallState
from . import _to_v1_state
from ._to_v1_state import BridgeState, _Call, _notification, _Session, _text_item
from ._to_v1_terminals import TerminalRendering


class Projection:
    """Flushing held-back changes and projecting content (a component of ``V2ToV1Bridge``)."""

    def __init__(self, state: BridgeState, terminals: TerminalRendering) -> None:
        self.state = state
        self.terminals = terminals
        # (tool call id, keys): a call's further terminals' extension keys, sent after its update
        self._meta_after: list[tuple[str, dict[str, Any]]] = []

    def unqueue(self, session_id: str, session: _Session, tool_call_id: str) -> None:
        session.order.pop(tool_call_id, None)
        if not session.order:
            self.state.dirty.pop(session_id, None)

    def flush_session(self, session_id: str) -> None:
        session = self.state.sessions.get(session_id)
        if session is not None:
            for tool_call_id in list(session.order):
                self.flush_call(session_id, session, tool_call_id)

    def flush_call(
        self,
        session_id: str,
        session: _Session,
        tool_call_id: str,
        tc: ToolCallState | None = None,
    ) -> None:
        """Send the call's held-back changes (``tc``: its state, when the store is about to
        drop it)."""
        state = self.state
        self.unqueue(session_id, session, tool_call_id)
        call = session.calls.get(tool_call_id)
        if tc is None:
            tc = state.store.tool_call(session_id, tool_call_id)
        if call is None or tc is None:
            return
        if not call.known:  # first sight: a `tool_call`, even for a bare id
            self._send_create(session_id, call, tc)
            return
        pending = call.pending
        if not (pending or call.content_dirty or call.meta_dirty):
            return
        values: dict[str, Any] = {}  # attribute -> v1 value
        if pending:
            values, losses = update_values(v2.ToolCallUpdate(tool_call_id=tool_call_id, **pending))
            if losses:
                state.extend(losses, "$.params.update")
        meta: dict[str, Any] | None = None
        if call.content_dirty:
            values["content"], meta = self.project(session_id, call, tc)
        if call.meta_dirty or meta:
            stored = tc.meta if isinstance(tc.meta, dict) else {}
            if meta:  # the terminal extension's keys go once, beside the full `_meta` (D39)
                values["meta"] = {**stored, **meta}
                call.meta_sent = dict(stored)
            elif stored != call.meta_sent:  # the full merged `_meta`, only when it changed
                values["meta"] = call.meta_sent = dict(stored)
        title = values.get("title")
        if isinstance(title, str):
            call.title = title
        if call.prompt is not None and state.prompts_end_on_update:  # a log: it was answered
            self._end_prompt(session_id, call, tc, values)
        elif call.prompt is not None:  # a prompt shown on the call stays until its answer
            if isinstance(title, str):
                values["title"] = call.prompt.title
            if "content" in values and call.prompt.items:
                values["content"] = [*call.prompt.items, *values["content"]]
        pending.clear()
        call.content_dirty = call.meta_dirty = False
        if not values:
            return  # nothing v1 can show changed (a capabilities-only patch, say)
        update = v1.SessionToolCallUpdate(tool_call_id=tool_call_id, **values)
        state.emit_update(session_id, self.fit(tc, update, call.wide))
        if self._meta_after:
            self._send_meta_after(session_id, tc)
        if tc.is_final:  # its projection is rebuilt if it ever changes again
            call.source, call.flat, call.slots, call.count = None, [], [], 0

    def own_title(self, session_id: str, tool_call_id: str, call: _Call) -> str | None:
        """The call's own title: the agent's newest (a permission subject's included), else
        the one the client was shown."""
        tc = self.state.store.tool_call(session_id, tool_call_id)
        title = tc.fields.get("title") if tc is not None else None
        return title if isinstance(title, str) and title else call.title

    def _end_prompt(
        self, session_id: str, call: _Call, tc: ToolCallState, values: dict[str, Any]
    ) -> None:
        """The call's next update after a prompt, where no answer is to be waited for (a log
        converted after the fact): the update gives the call its own title and content back
        (``prompts_end_on_update``)."""
        overlay = call.prompt
        if overlay is None:
            return
        call.prompt = None
        own = self.own_title(session_id, tc.tool_call_id, call)
        if "title" not in values and own is not None and own != overlay.title:
            values["title"] = call.title = own
        if overlay.items_shown and "content" not in values:
            values["content"] = self.project(session_id, call, tc, send=False)[0]

    def _send_create(self, session_id: str, call: _Call, tc: ToolCallState) -> None:
        state = self.state
        values = None
        if _to_v1_state.FAST_PATHS and tc.extra is None and tc.raw is None:
            values = plain_stored_fields(tc.fields, tc.meta)  # the common call, read directly
        if values is not None:
            create_defaults(values, tc.fields.get("kind"), call.title_fallback)
        else:
            snapshot = replace(tc.snapshot(), content=UNSET)  # its unknown keys are reported
            values, losses = create_values(snapshot, title_fallback=call.title_fallback)
            if losses:
                state.extend(losses, state.update_path)
        content, meta = self.project(session_id, call, tc)
        if content:
            values["content"] = content
        if meta:  # the terminal extension's keys (sent once) beside the full `_meta`
            stored = tc.meta if isinstance(tc.meta, dict) else {}
            values["meta"] = {**stored, **meta}
            call.meta_sent = dict(stored)
        elif isinstance(tc.meta, dict):
            call.meta_sent = tc.meta
        call.known = True
        call.title = values["title"]
        call.pending.clear()
        call.content_dirty = call.meta_dirty = False
        state.emit_update(
            session_id,
            self.fit(tc, v1.ToolCall(tool_call_id=tc.tool_call_id, **values), call.wide),
        )
        if self._meta_after:
            self._send_meta_after(session_id, tc)

    def _send_meta_after(self, session_id: str, tc: ToolCallState) -> None:
        """The terminal extension's keys of a call's second (third, ...) terminal, each in a
        ``tool_call_update`` of its own after the call's (its keys name one terminal)."""
        stored = tc.meta if isinstance(tc.meta, dict) else {}
        for tool_call_id, keys in self._meta_after:
            update = v1.SessionToolCallUpdate(tool_call_id=tool_call_id, meta={**stored, **keys})
            self.state.emit_update(session_id, update)
        self._meta_after.clear()

    def fit(self, tc: ToolCallState, update: Any, wide: int = 0) -> Any:
        """``update`` with content items left out of its middle when its line would be over
        ``max_message_bytes`` (a marker says how many); the store's count of the call's bytes
        (and ``wide``: what texts read from disk add to its projection) says when to look."""
        state = self.state
        limit = state.max_message_bytes
        content = update.content
        if (tc.size + wide) * 2 + 65_536 < limit or not isinstance(content, list) or not content:
            return update
        session_id = "x" * 64  # the envelope around it, at most about this long
        size = len(encode(_notification(session_id, update)))
        if size <= limit:
            return update
        keep, cut = len(content), content
        while keep > 0 and size > limit:
            keep //= 2
            left = len(content) - keep
            marker = _text_item(f"[\u2026 {left:,} content item(s) omitted to fit a line]")
            cut = [*content[: keep // 2], marker, *content[len(content) - (keep - keep // 2) :]]
            shorter = replace(update, content=cut)
            size = len(encode(_notification(session_id, shorter)))
        state.loss(
            "$.params.update.content",
            f"{tc.tool_call_id}: {len(content) - keep} content item(s) left out so that the line "
            f"stays under {limit} bytes",
        )
        return replace(update, content=cut)

    def project(
        self, session_id: str, call: _Call, tc: ToolCallState, send: bool = True
    ) -> tuple[list[Any], dict[str, Any]]:
        """The v1 content of the call's current content, and the terminal ``_meta`` keys
        (the ``_meta`` extension profiles, with ``send``: the keys are then taken as sent; a
        second terminal's go in a message of their own, ``_meta_after``).

        v2 items are projected once, as they arrive (chunks extend the projection); a
        replacement array or a cap that trimmed the content starts it afresh. Terminal slots
        are filled at every flush from the (cached) rendering of the terminal's state. Where a
        cap dropped items, a text item says how many.
        """
        state = self.state
        items = tc.content
        fast = _to_v1_state.FAST_PATHS
        if fast and not items and not call.count and not call.terminals and not tc.dropped_items:
            # no content yet (the common first sight): what the general path ends with
            call.source, call.source_dropped, call.cut_at = items, 0, 0
            return [], {}
        if (
            items is not call.source
            or len(items) < call.count
            or (tc.dropped_items != call.source_dropped)
        ):
            call.source, call.source_dropped = items, tc.dropped_items
            call.count, call.flat, call.slots, call.wide = 0, [], [], 0
            session = state.session(session_id)
            for terminal_id in call.terminals:
                session.readers.get(terminal_id, set()).discard(tc.tool_call_id)
            call.terminals = set()
        for index in range(call.count, len(items)):
            if index == tc.dropped_at:
                call.cut_at = len(call.flat)
            item = items[index]
            if fast:  # a plain text item, the bulk of streamed output, without the losses
                plain = plain_text_to_v1(item)
                if plain is not None:
                    call.flat.append(plain)
                    continue
            if isinstance(item, v2.Terminal):  # shown as its rendering: its own keys go
                state.losses.extend(unknown_keys(item, f"{state.update_path}.content[{index}]"))
                call.slots.append((len(call.flat), item.terminal_id))
                call.flat.append(None)
                call.terminals.add(item.terminal_id)
                readers = state.session(session_id).readers
                readers.setdefault(item.terminal_id, set()).add(tc.tool_call_id)
                continue
            if isinstance(item, v2.SessionReference):  # named with its title, when known
                found = Losses(False)
                title = state.store.session_title(item.session_id)
                path = f"$.content[{index}]"
                call.flat.append(session_reference_to_v1(item, title, path, found))
                state.extend(found.report(), state.update_path)
                continue
            if type(item) is v2.Diff:  # its files' texts from disk, where they can be
                call.flat.extend(state.diff_to_v1(session_id, call, item, f"$.content[{index}]"))
                continue
            converted, losses = content_to_v1(item, path=f"$.content[{index}]")
            state.extend(losses, state.update_path)
            call.flat.extend(converted)
        if tc.dropped_at >= len(items):
            call.cut_at = len(call.flat)
        call.count = len(items)
        out = list(call.flat)
        meta: dict[str, Any] = {}
        extension = state.terminal_profile != "text"
        for position, terminal_id in call.slots:
            if not extension:
                out[position] = self.terminals.render(session_id, terminal_id)
                continue
            out[position] = v1.Terminal(terminal_id=terminal_id)  # a live terminal
            if send:  # what the client has not been sent of it, once
                keys = self.terminals.meta(session_id, terminal_id)
                if keys and meta:  # one terminal per message: the extension's keys are single
                    self._meta_after.append((tc.tool_call_id, keys))
                else:
                    meta.update(keys)
        if tc.dropped_items:
            marker = f"[\u2026 {tc.dropped_items:,} content item(s) omitted (memory caps)]"
            out.insert(call.cut_at, _text_item(marker))
        if call.slots:
            out = [item for item in out if item is not None]
        return out, meta
