"""Reading the store: one call's state, views for a UI, and the whole store as a document.

Rules this module owns (D14, D35):

- ``snapshot`` is the call's state as one v2 ``ToolCallUpdate`` that recreates it on an empty
  store; ``document`` (and ``document_json``, the same bytes) is every session's calls and
  terminals in that shape, as ``replay --json`` writes them. Neither shows ``ended_locally``.
- Views resolve display defaults (``_state.view_of``); calls come in first-seen order.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from .. import v2
from .._mypyc import mypyc_attr
from ..codec import encode, encode_decoded, to_builtins
from ._state import SessionState, ToolCallState, ToolCallView, view_of


@mypyc_attr(allow_interpreted_subclasses=True)  # (the public class's base)
class _Views:
    """The reading side of the store, the base of its layers: nothing here changes state."""

    sessions: dict[str, SessionState]

    def tool_call(self, session_id: str, tool_call_id: str) -> ToolCallState | None:
        """The stored state of one call, or ``None``."""
        session = self.sessions.get(session_id)
        return session.tool_calls.get(tool_call_id) if session is not None else None

    def snapshot(self, session_id: str, tool_call_id: str) -> v2.ToolCallUpdate:
        """The call's full state as one v2 ``ToolCallUpdate`` (``KeyError`` if unknown)."""
        tc = self.tool_call(session_id, tool_call_id)
        if tc is None:
            raise KeyError(f"no tool call {tool_call_id!r} in session {session_id!r}")
        return tc.snapshot()

    def view(self, session_id: str, tool_call_id: str) -> ToolCallView:
        """What a UI shows for one call (``KeyError`` if unknown)."""
        tc = self.tool_call(session_id, tool_call_id)
        if tc is None:
            raise KeyError(f"no tool call {tool_call_id!r} in session {session_id!r}")
        return view_of(session_id, tc)

    def views(self, session_id: str) -> list[ToolCallView]:
        """Every call of the session, in first-seen order."""
        session = self.sessions.get(session_id)
        if session is None:
            return []
        return [view_of(session_id, tc) for tc in session.tool_calls.values()]

    def open_calls(self, session_id: str | None = None) -> list[ToolCallView]:
        """Calls not in a final status (of one session, or of all), in first-seen order."""
        return [
            view_of(session.session_id, tc)
            for session in self._sessions(session_id)
            for tc in session.tool_calls.values()
            if not tc.is_final
        ]

    def document(self) -> dict[str, Any]:
        """Every session as the ``replay --json`` document, in plain JSON values.

        ``{"sessions": {id: {"toolCalls": [...], "terminals": [...]}}}``: each tool call in the
        v2 ``ToolCallUpdate`` shape, each terminal in the ``terminal_update`` shape without its
        ``sessionUpdate`` tag, both as ``snapshot`` gives them.
        """
        sessions: dict[str, Any] = {}
        for session in self.sessions.values():
            terminals = _terminal_documents(session)
            sessions[session.session_id] = {
                "toolCalls": [to_builtins(tc.snapshot()) for tc in session.tool_calls.values()],
                "terminals": terminals,
            }
        return {"sessions": sessions}

    def document_json(self, *, decoded_only: bool = False) -> bytes:
        """``encode(self.document())``: the same bytes, written from each call's ``snapshot``
        without building its plain values first.

        ``decoded_only``: the caller applied nothing but what this package decoded from JSON text
        (raw lines, or what ``decode_message`` gave for them), so nothing held is a NaN or an
        infinite number, and the walk that refuses them is skipped (``codec.encode_decoded``).
        """
        sessions: dict[str, Any] = {}
        for session in self.sessions.values():
            terminals = _terminal_documents(session)
            sessions[session.session_id] = {
                "toolCalls": [tc.snapshot() for tc in session.tool_calls.values()],
                "terminals": terminals,
            }
        document = {"sessions": sessions}
        return encode_decoded(document) if decoded_only else encode(document)

    def _sessions(self, session_id: str | None) -> Iterator[SessionState]:
        if session_id is None:
            yield from self.sessions.values()
        elif session_id in self.sessions:
            yield self.sessions[session_id]


def _terminal_documents(session: SessionState) -> list[Any]:
    """A session's terminals as ``document`` holds them: each ``snapshot`` as plain values,
    without its ``sessionUpdate`` tag."""
    terminals = []
    for terminal in session.terminals.values():
        plain = to_builtins(terminal.snapshot())
        del plain["sessionUpdate"]
        terminals.append(plain)
    return terminals
