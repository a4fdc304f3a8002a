"""The agent's session updates, as they reach the v2 -> v1 bridge: held back or sent on.

Rules this module owns (D46 (session-update mapping, v2 to v1 bridge); D22, D30, D39):

- Every update is applied to the store first; what it changed of a call waits in the call's
  ``pending`` (latest value per field; content and ``_meta`` are read back from the store).
- Coalescing (opt-in) is pure and timer-free: a call's first sight goes out at once, then
  its changes wait and merge until a permission request, a final status, a ``state_update``
  or any other forwarded update but message text, the session's close, an eviction, or
  ``flush()``; a message about another call is no flush point. Per call, order is always
  kept; a time bound belongs to the I/O layer (``flush()``). Without coalescing every change
  goes out at once (the common shapes by fast paths that send what the flush would).
- Terminal output waits in the store until a call's content refers to the terminal (D22);
  then every call showing it is re-sent.
- v2-only session updates never reach the v1 side raw: mapped when a v1 variant exists,
  otherwise dropped and reported (D46 (session-update mapping), D30). A ``compaction_update``
  carries the compaction's whole merged ``_meta`` (a v1 client replaces it; D39).
- What the store drops, the bridge sends first what it held back about (``on_evict``); a
  dropped call it showed stays known as a ghost (``_MAX_GHOSTS`` at most), so a later update
  of it is not a first sight with another title.
"""

from __future__ import annotations

from typing import Any, cast

import msgspec
from msgspec import UNSET
from msgspec.structs import astuple

from .. import v1, v2
from ..convert import plain_fields, session_update_to_v1, unknown_keys
from ..events import ContentAppended
from ..models import UnhandledFieldError, extras_seen, patch_fields
from ..store import TerminalState, ToolCallState, patch_meta, trim_block
from . import _to_v1_state
from ._to_v1_projection import Projection
from ._to_v1_state import BridgeState, _Call, _final, _notification, _Session

_FLUSHING_TAGS = frozenset({"state_update"})
"""Opaque v2 updates before which everything pending is flushed and which are not forwarded."""

_MAX_GHOSTS = 10_000
"""Calls the client was shown that the store no longer holds, remembered (the oldest go)."""
_GHOST_TITLE = 256
"""Characters of its title a ghost call keeps (the title a restore after a prompt sends)."""
_MAX_COMPACTIONS = 1_000
"""Compactions whose merged ``_meta`` is kept (the least recently updated go)."""
_UNFLUSHING_TAGS = frozenset({"agent_message_chunk", "agent_thought_chunk", "user_message_chunk"})
"""Opaque v2 updates that are no flush point: message text streams beside tool calls."""

_FROM_STORE = frozenset({"content", "meta"})
"""The fields a flush reads back from the store instead of holding them."""


def _hold_fields(update: v2.ToolCallUpdate, pending: dict[str, Any]) -> None:
    """Put the fields ``update`` sets (but ``_FROM_STORE``, which the flush reads from the
    store) into ``pending``, by attribute name: written out, read by position as ``store``'s
    patcher reads them (``check_hold_fields`` holds them to the model's fields, at import)."""
    values = astuple(update)
    unset = UNSET  # a local: compiled, a module's global is a lookup at each use
    value: Any = values[1]
    if value is not unset:
        pending["name"] = value
    value = values[2]
    if value is not unset:
        pending["title"] = value
    value = values[3]
    if value is not unset:
        pending["kind"] = value
    value = values[4]
    if value is not unset:
        pending["status"] = value
    value = values[6]
    if value is not unset:
        pending["locations"] = value
    value = values[7]
    if value is not unset:
        pending["raw_input"] = value
    value = values[8]
    if value is not unset:
        pending["raw_output"] = value
    value = values[9]
    if value is not unset:
        pending["capabilities"] = value


def check_hold_fields(model: type[msgspec.Struct]) -> None:
    """``_hold_fields`` holds every field of ``model`` but ``_FROM_STORE``, each from its own
    place: else an ``UnhandledFieldError`` naming it (issue 28; checked at import)."""
    fields_of = patch_fields(model)
    wanted = {f.attr: f"<{f.attr}>" for f in fields_of if f.attr not in _FROM_STORE}
    marked = model(tool_call_id="probe", **{f.attr: f"<{f.attr}>" for f in fields_of})
    held: dict[str, Any] = {}
    _hold_fields(cast(v2.ToolCallUpdate, marked), held)
    if held != wanted:
        missing = [attr for attr, value in wanted.items() if held.get(attr) != value]
        unknown = sorted(attr for attr in held if attr not in wanted)
        raise UnhandledFieldError("bridge._to_v1_calls._hold_fields", missing, unknown)


check_hold_fields(v2.ToolCallUpdate)


class SessionUpdates:
    """The agent's session updates and the store's evictions (a component of
    ``V2ToV1Bridge``)."""

    def __init__(self, state: BridgeState, projection: Projection) -> None:
        self.state = state
        self.projection = projection

    def evicted(self, session_id: str, dropped: Any) -> None:
        """The store is about to drop ``dropped`` (a call, terminal or session's state): what is
        held back about it goes out now; a call the client was shown stays known (a ghost), so
        a later update of it is no first sight (the store's ``on_evict``)."""
        session = self.state.sessions.get(session_id)
        if session is None:
            return
        flush_call = self.projection.flush_call
        if isinstance(dropped, ToolCallState):
            call = session.calls.get(dropped.tool_call_id)
            if call is not None:
                flush_call(session_id, session, dropped.tool_call_id, dropped)
                self.ghost(session_id, session, dropped.tool_call_id, call)
        elif isinstance(dropped, TerminalState):  # its readers go out while it can render
            for tool_call_id in list(session.readers.pop(dropped.terminal_id, ())):
                if tool_call_id in session.order:
                    flush_call(session_id, session, tool_call_id)
            self.state.forget_terminal(session_id, dropped.terminal_id)
        else:
            for tool_call_id in list(session.order):
                held = dropped.tool_calls.get(tool_call_id)
                flush_call(session_id, session, tool_call_id, held)
            for tool_call_id, call in list(session.calls.items()):
                self.ghost(session_id, session, tool_call_id, call)
            session.readers.clear()
            self.state.forget_terminals(session_id)

    def ghost(self, session_id: str, session: _Session, tool_call_id: str, call: _Call) -> None:
        """Keep only what the client was shown of a call the store no longer holds (bounded:
        ``_MAX_GHOSTS`` in all, the oldest forgotten first)."""
        state = self.state
        self.projection.unqueue(session_id, session, tool_call_id)
        if not call.known:
            del session.calls[tool_call_id]
            return
        for terminal_id in call.terminals:
            session.readers.get(terminal_id, set()).discard(tool_call_id)
        call.terminals = set()
        call.source, call.flat, call.slots, call.count = None, [], [], 0
        call.pending.clear()
        call.content_dirty = call.meta_dirty = False
        call.meta_sent = None
        if call.title is not None and len(call.title) > _GHOST_TITLE:
            call.title = call.title[:_GHOST_TITLE]
        call.ghost = True
        state.ghosts[(session_id, tool_call_id)] = None
        cap = _MAX_GHOSTS
        if len(state.ghosts) > cap:
            forgotten = list(state.ghosts)[: trim_block(cap)]
            for key in forgotten:
                del state.ghosts[key]
                held = state.sessions.get(key[0])
                if held is not None:
                    held.calls.pop(key[1], None)
                    if not held.calls and key[0] not in state.store.sessions:
                        del state.sessions[key[0]]
            state.loss(
                "$.max_tool_calls",
                f"forgot {len(forgotten)} tool call(s) the store no longer holds (the bridge "
                f"remembers {cap}): a later update of one is sent as a first sight",
            )

    def _revive(self, session_id: str, tool_call_id: str, call: _Call) -> None:
        """A ghost gets an update: the store holds it again."""
        call.ghost = False
        self.state.ghosts.pop((session_id, tool_call_id), None)

    def touch(self, session_id: str, tool_call_id: str) -> tuple[_Session, _Call]:
        """A message about ``tool_call_id`` arrives: its changes wait (coalescing) with those
        of other calls; switching calls is no flush point (time is, ``flush``)."""
        state = self.state
        session = state.session(session_id)
        call = state.call(session, tool_call_id)
        if call.ghost:
            self._revive(session_id, tool_call_id, call)
        session.order[tool_call_id] = None
        state.dirty[session_id] = None
        return session, call

    def _settle(self, session_id: str, session: _Session, tool_call_id: str, final: bool) -> None:
        if final or not self.state.coalesce:
            self.projection.flush_call(session_id, session, tool_call_id)

    def _unknown_keys(self, update: Any, nested: bool = False) -> None:
        """Report the unknown keys of an update (``nested``: of every object in it, for
        terminals, which v1 is shown as text, not field by field)."""
        self.state.losses.extend(unknown_keys(update, "$.params.update", nested=nested))

    def on_update(self, session_id: str, update: v2.ToolCallUpdate) -> None:
        state = self.state
        session = state.sessions.get(session_id)
        call = session.calls.get(update.tool_call_id) if session is not None else None
        if (
            _to_v1_state.FAST_PATHS
            and call is not None
            and call.known
            and not state.coalesce
            and not state.dirty
            and call.prompt is None
            and not (call.ghost or call.pending or call.content_dirty or call.meta_dirty)
            and update.content is UNSET
            and update.meta is UNSET
        ):
            values = plain_fields(update)
            if values is not None:
                assert session is not None
                self._update_shown(session_id, session, call, update, values)
                return
        session, call = self.touch(session_id, update.tool_call_id)
        if call.known and extras_seen():  # a first sight reports them with the whole call
            self._unknown_keys(update)
        state.absorb(state.store.apply_update(session_id, update))
        self.hold(session_id, session, call, update)

    def hold(self, session_id: str, session: _Session, call: _Call, update: Any) -> None:
        """What an applied update changes of the call waits in ``pending`` (or goes out)."""
        _hold_fields(update, call.pending)
        if update.content is not UNSET:
            call.content_dirty = True
        if update.meta is not UNSET:
            call.meta_dirty = True
        final = isinstance(update.status, str) and update.status in v2.FINAL_STATUSES
        self._settle(session_id, session, update.tool_call_id, final or not call.known)

    def _update_shown(
        self,
        session_id: str,
        session: _Session,
        call: _Call,
        update: v2.ToolCallUpdate,
        values: dict[str, Any],
    ) -> None:
        """``on_update`` for a call the client shows with nothing held back, without
        coalescing, of an update without content, ``_meta`` or unknown keys whose fields map
        to v1 as they are (``values``): what ``Projection.flush_call`` would send once the
        store applied it. Where the store dropped the call, the general path goes on.
        (``touch`` is left out: with nothing held back anywhere, the flush takes back what it
        would mark, and an eviction meanwhile flushes nothing of a call with nothing
        pending.)"""
        state = self.state
        tool_call_id = update.tool_call_id
        state.absorb(state.store.apply_update(session_id, update))
        tc = state.store.tool_call(session_id, tool_call_id)
        if tc is None or call.ghost:
            self.hold(session_id, session, call, update)
            return
        if not values:
            return  # nothing v1 can show changed
        title = values.get("title")
        if isinstance(title, str):
            call.title = title
        update_v1 = v1.SessionToolCallUpdate(tool_call_id=tool_call_id, **values)
        if tc.size * 2 + 65_536 >= state.max_message_bytes:  # (`Projection.fit`'s own first test)
            update_v1 = self.projection.fit(tc, update_v1)
        state.out.append(_notification(session_id, update_v1))
        if _final(tc):  # its projection is rebuilt if it ever changes again
            call.source, call.flat, call.slots, call.count = None, [], [], 0

    def on_chunk(self, session_id: str, chunk: v2.ToolCallContentChunk) -> None:
        state = self.state
        tool_call_id = chunk.tool_call_id
        session = state.sessions.get(session_id)
        if session is not None:
            call = session.calls.get(tool_call_id)
            if (
                _to_v1_state.FAST_PATHS
                and call is not None
                and call.known
                and not state.coalesce
                and not state.dirty
                and call.prompt is None
                and not (call.ghost or call.pending or call.content_dirty or call.meta_dirty)
            ):
                # A call the client shows, nothing held back: the chunk goes out at once.
                self._append_shown(session_id, session, call, chunk)
                return
            if tool_call_id in session.order:
                call = session.calls[tool_call_id]  # the coalescing case: this call is pending
            else:
                session, call = self.touch(session_id, tool_call_id)
        else:
            session, call = self.touch(session_id, tool_call_id)
        if extras_seen():
            self._unknown_keys(chunk, nested=True)  # at the chunk's paths, when it comes
        state.absorb(state.store.apply_update(session_id, chunk))
        call.content_dirty = True
        if not state.coalesce or not call.known:  # a first sight goes out at once (D46)
            self.projection.flush_call(session_id, session, tool_call_id)

    def _append_shown(
        self, session_id: str, session: _Session, call: _Call, chunk: v2.ToolCallContentChunk
    ) -> None:
        """``on_chunk`` for a call the client shows with nothing held back, without coalescing:
        what ``touch`` and ``Projection.flush_call`` would do, where the store only appended
        the item (no cap, no eviction) and the item is plain text appended to a projection
        with no terminal and nothing dropped; anything else is flushed after the apply."""
        state = self.state
        if extras_seen():
            self._unknown_keys(chunk, nested=True)  # at the chunk's paths, when it comes
        tool_call_id = chunk.tool_call_id
        events = state.store.apply_update(session_id, chunk)
        tc = None
        if len(events) == 1 and type(events[0]) is ContentAppended:
            held = state.store.sessions.get(session_id)  # (`store.tool_call`, without the call)
            tc = held.tool_calls.get(tool_call_id) if held is not None else None
        if tc is not None and not call.slots and not tc.dropped_items:
            items: list[Any] = tc.fields["content"]
            count = call.count
            item = None
            if len(items) == count + 1 and (items is call.source or not (count or call.terminals)):
                item = items[count]  # appended to what was projected (or to nothing)
            if type(item) is v2.Content and item.meta is UNSET and not call.source_dropped:
                block = item.content
                if (
                    type(block) is v2.TextContent
                    and block.annotations is UNSET
                    and block.meta is UNSET
                ):
                    flat = call.flat
                    flat.append(v1.Content(content=v1.TextContent(text=block.text)))
                    call.count = count + 1
                    if not count:
                        call.source, call.cut_at = items, 0
                    update = v1.SessionToolCallUpdate(tool_call_id=tool_call_id, content=list(flat))
                    if (tc.size + call.wide) * 2 + 65_536 >= state.max_message_bytes:
                        update = self.projection.fit(tc, update, call.wide)
                    state.out.append(_notification(session_id, update))
                    if _final(tc):  # its projection is rebuilt if it ever changes again
                        call.source, call.flat, call.slots, call.count = None, [], [], 0
                    return
        state.absorb(events)
        call.content_dirty = True
        self.projection.flush_call(session_id, session, tool_call_id)

    def on_terminal(self, session_id: str, update: Any) -> None:
        state = self.state
        self._unknown_keys(update, nested=True)
        state.apply_update(session_id, update)
        session = state.session(session_id)
        terminal_id = update.terminal_id
        state.rendered.pop((session_id, terminal_id), None)
        if type(update) is v2.TerminalUpdate and update.output is not UNSET:
            stream = state.streams.get((session_id, terminal_id))
            if stream is not None:  # what the `_meta` extension sent may not be its start
                stream.replaced = True
        readers = [tid for tid in session.readers.get(terminal_id, ()) if tid in session.calls]
        if not readers:
            return  # bytes wait in the store until a reference appears (D22)
        for tool_call_id in readers:
            session.calls[tool_call_id].content_dirty = True
            session.order[tool_call_id] = None
            state.dirty[session_id] = None
            self._settle(session_id, session, tool_call_id, False)

    def on_other_update(self, session_id: str, update: Any) -> None:
        state = self.state
        tag = update.tag if isinstance(update, v2.OpaqueSessionUpdate) else type(update).__name__
        if tag == "session_info_update":  # the store keeps its title: `session` items
            state.apply_update(session_id, update)
        if tag not in _UNFLUSHING_TAGS:
            self.projection.flush_session(session_id)  # keeps the client's view in stream order
        if tag in _FLUSHING_TAGS:
            state.loss("$.params.update", f"`{tag}` has no v1 form: not forwarded")
            return
        if tag == "compaction_update" and state.compaction:
            update = self._compaction_meta(session_id, update)
        mapped, losses = session_update_to_v1(
            update, notices=state.notices, compaction=state.compaction
        )
        state.extend(losses, "$.params.update")
        if mapped is not None:
            state.emit_update(session_id, mapped)

    def _compaction_meta(self, session_id: str, update: Any) -> Any:
        """A ``compaction_update`` whose ``_meta`` patch (v2: by top-level key) is replaced by
        the compaction's whole merged ``_meta``: a v1 client replaces it (D39, D46 (session-update
        mapping))."""
        state = self.state
        data = update.data
        compaction_id = data.get("compactionId")
        patch = data.get("_meta", UNSET)
        if not isinstance(compaction_id, str) or not (patch is None or isinstance(patch, dict)):
            return update  # nothing to merge (a `_meta` that is no object is reported later)
        key = (session_id, compaction_id)
        merged = patch_meta(state.compactions.pop(key, None), patch)
        if isinstance(merged, dict):
            cap = state.store.limits.max_meta_keys
            if cap is not None and len(merged) > cap:
                for name in list(merged)[: len(merged) - cap]:
                    del merged[name]
                state.loss("$.params.update._meta", f"more than {cap} keys: the oldest dropped")
            state.compactions[key] = merged
            if len(state.compactions) > _MAX_COMPACTIONS:
                del state.compactions[next(iter(state.compactions))]
        return v2.OpaqueSessionUpdate({**data, "_meta": merged})
