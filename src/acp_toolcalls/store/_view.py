"""Reading the store: one call's state, views for a UI, and the whole store as a document.

Rules this module owns (D14, D35):

- A ``snapshot`` is the call's state as one v2 ``ToolCallUpdate`` that recreates it on an
  empty store; ``store_document`` (and ``store_document_json``, the same bytes) is every
  session's calls and terminals in that shape, as ``replay --json`` writes them. Neither shows
  ``ended_locally``.
- Views resolve display defaults (``_state.view_of``); calls come in first-seen order.

Each function reads a store's sessions (``StoreState.sessions``) and changes nothing;
``ToolCallStore``'s reading methods are these.
"""

from __future__ import annotations

from typing import Any

from .. import v2
from ..codec import encode, encode_decoded, to_builtins
from ._state import SessionState, ToolCallState, view_of
from ._structs import ToolCallView


def known_call(
    sessions: dict[str, SessionState], session_id: str, tool_call_id: str
) -> ToolCallState:
    """The stored state of one call (``KeyError`` if unknown)."""
    session = sessions.get(session_id)
    tc = session.tool_calls.get(tool_call_id) if session is not None else None
    if tc is None:
        raise KeyError(f"no tool call {tool_call_id!r} in session {session_id!r}")
    return tc


def call_snapshot(
    sessions: dict[str, SessionState], session_id: str, tool_call_id: str
) -> v2.ToolCallUpdate:
    """The call's full state as one v2 ``ToolCallUpdate`` (``KeyError`` if unknown)."""
    return known_call(sessions, session_id, tool_call_id).snapshot()


def call_view(
    sessions: dict[str, SessionState], session_id: str, tool_call_id: str
) -> ToolCallView:
    """What a UI shows for one call (``KeyError`` if unknown)."""
    return view_of(session_id, known_call(sessions, session_id, tool_call_id))


def session_views(sessions: dict[str, SessionState], session_id: str) -> list[ToolCallView]:
    """Every call of the session, in first-seen order."""
    session = sessions.get(session_id)
    if session is None:
        return []
    return [view_of(session_id, tc) for tc in session.tool_calls.values()]


def open_call_views(
    sessions: dict[str, SessionState], session_id: str | None
) -> list[ToolCallView]:
    """Calls not in a final status (of one session, or of all), in first-seen order."""
    if session_id is None:
        chosen = list(sessions.values())
    else:
        session = sessions.get(session_id)
        chosen = [session] if session is not None else []
    return [
        view_of(session.session_id, tc)
        for session in chosen
        for tc in session.tool_calls.values()
        if not tc.is_final
    ]


def store_document(sessions: dict[str, SessionState]) -> dict[str, Any]:
    """Every session as the ``replay --json`` document, in plain JSON values."""
    documents: dict[str, Any] = {}
    for session in sessions.values():
        terminals = _terminal_documents(session)
        documents[session.session_id] = {
            "toolCalls": [to_builtins(tc.snapshot()) for tc in session.tool_calls.values()],
            "terminals": terminals,
        }
    return {"sessions": documents}


def store_document_json(sessions: dict[str, SessionState], decoded_only: bool) -> bytes:
    """``encode(store_document(sessions))``, written from each call's ``snapshot`` without building
    its plain values first; ``decoded_only``: ``codec.encode_decoded`` (no NaN walk)."""
    documents: dict[str, Any] = {}
    for session in sessions.values():
        terminals = _terminal_documents(session)
        documents[session.session_id] = {
            "toolCalls": [tc.snapshot() for tc in session.tool_calls.values()],
            "terminals": terminals,
        }
    whole = {"sessions": documents}
    return encode_decoded(whole) if decoded_only else encode(whole)


def _terminal_documents(session: SessionState) -> list[Any]:
    """A session's terminals as ``store_document`` holds them: each ``snapshot`` as plain values,
    without its ``sessionUpdate`` tag."""
    terminals = []
    for terminal in session.terminals.values():
        plain = to_builtins(terminal.snapshot())
        del plain["sessionUpdate"]
        terminals.append(plain)
    return terminals
