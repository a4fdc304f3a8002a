"""What ``ToolCallStore.apply`` reports, so a UI re-renders only what changed.

Rules this module owns:

- Events are small immutable values, one per observable change, in the order the changes
  happened. They name fields by their wire names (``rawInput``, ``_meta``, unknown extra keys).
- A field set to ``null`` (or a collection set to ``[]``) is a *clear*, reported by
  ``ToolCallCleared``; any other value is a *patch*, reported by ``ToolCallPatched``. A field
  given the value it already had is still reported: the store does not compare values.
- Warnings and salvages travel as events too (``ToolCallReopened``, ``LimitReached``,
  ``DiagnosticReported``): nothing the store does to the data is silent.
- The client's own conclusions are not protocol state and have their own event
  (``ToolCallEndedLocally``); the agent's next status for the call is a ``ToolCallPatched``.
"""

from __future__ import annotations

from typing import Literal, Union

import msgspec

__all__ = [
    "ContentAppended",
    "DiagnosticKind",
    "DiagnosticReported",
    "Event",
    "LimitReached",
    "SessionEvicted",
    "TerminalCleared",
    "TerminalCreated",
    "TerminalEvicted",
    "TerminalOutputAppended",
    "TerminalPatched",
    "ToolCallCleared",
    "ToolCallCreated",
    "ToolCallEndedLocally",
    "ToolCallEvicted",
    "ToolCallPatched",
    "ToolCallReopened",
]


class _Event(msgspec.Struct, frozen=True, gc=False):
    session_id: str


class ToolCallCreated(_Event, frozen=True, gc=False):
    """First sight of ``tool_call_id`` in the session (update, chunk or permission subject)."""

    tool_call_id: str


class ToolCallPatched(_Event, frozen=True, gc=False):
    """``fields`` (wire names) were given new values."""

    tool_call_id: str
    fields: tuple[str, ...]


class ToolCallCleared(_Event, frozen=True, gc=False):
    """``fields`` (wire names) were cleared: ``null``, or ``[]`` for a collection."""

    tool_call_id: str
    fields: tuple[str, ...]


class ContentAppended(_Event, frozen=True, gc=False):
    """A chunk appended one content item, now at ``index`` of the call's content."""

    tool_call_id: str
    index: int


class ToolCallReopened(_Event, frozen=True, gc=False):
    """A call that had reached a final status got a non-final one, or a v1 ``tool_call``
    re-created it (an id reused, D20/D23).

    The update is applied as received (a v1 re-create merges, D9); this is a warning for the
    UI and the log. ``status`` is the status the update asked for.
    """

    tool_call_id: str
    previous_status: str
    status: str


class ToolCallEndedLocally(_Event, frozen=True, gc=False):
    """The client concluded that a call the agent has not finished ended with ``status``
    (``session/cancel``, ``tool_call/cancel``, ``ToolCallStore.sweep``): a local overlay on the
    view (``ended_locally``), not protocol state; the agent's next status replaces it (D15)."""

    tool_call_id: str
    status: str


class ToolCallEvicted(_Event, frozen=True, gc=False):
    """The per-session cap on retained tool calls dropped this call from the store."""

    tool_call_id: str
    status: str


class TerminalCreated(_Event, frozen=True, gc=False):
    """First sight of ``terminal_id`` in the session (update or output chunk)."""

    terminal_id: str


class TerminalPatched(_Event, frozen=True, gc=False):
    """``fields`` (wire names) of the terminal were given new values (``output``: a snapshot)."""

    terminal_id: str
    fields: tuple[str, ...]


class TerminalCleared(_Event, frozen=True, gc=False):
    """``fields`` (wire names) of the terminal were set to ``null``."""

    terminal_id: str
    fields: tuple[str, ...]


class TerminalOutputAppended(_Event, frozen=True, gc=False):
    """A ``terminal_output_chunk`` appended ``size`` decoded bytes."""

    terminal_id: str
    size: int


class TerminalEvicted(_Event, frozen=True, gc=False):
    """The per-session cap on retained terminals dropped this terminal (exited ones first)."""

    terminal_id: str


class SessionEvicted(_Event, frozen=True, gc=False):
    """The cap on retained sessions dropped this session, least recently updated first, with
    its ``tool_calls`` calls and ``terminals`` terminals."""

    tool_calls: int
    terminals: int


class LimitReached(_Event, frozen=True, gc=False):
    """A memory cap dropped data: ``limit`` names the cap, ``subject`` the call or terminal id."""

    limit: str
    subject: str
    detail: str


DiagnosticKind = Literal["invalid", "ignored", "lossy", "limit"]


class DiagnosticReported(_Event, frozen=True, gc=False):
    """Input the store salvaged, ignored or could not carry, with the JSON path and what was
    done about it.

    ``kind`` says which: ``invalid`` (the input broke the protocol: a value salvaged or
    dropped, an unreadable batch element, bad base64), ``ignored`` (valid input the store
    does not apply, e.g. a v1-only ``tool_call`` on a v2 stream), ``lossy`` (what the v1 -> v2
    mapping cannot carry) or ``limit`` (a cap dropped data; a ``LimitReached`` comes with it).
    ``session_id`` is ``""`` when the problem is not tied to a session.
    """

    path: str
    reason: str
    kind: DiagnosticKind = "invalid"

    def __str__(self) -> str:
        return f"{self.path}: {self.reason}"


Event = Union[
    ToolCallCreated,
    ToolCallPatched,
    ToolCallCleared,
    ContentAppended,
    ToolCallReopened,
    ToolCallEndedLocally,
    ToolCallEvicted,
    TerminalCreated,
    TerminalPatched,
    TerminalCleared,
    TerminalOutputAppended,
    TerminalEvicted,
    SessionEvicted,
    LimitReached,
    DiagnosticReported,
]
"""Every event ``ToolCallStore.apply`` can return."""
