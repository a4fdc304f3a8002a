"""The store's msgspec Structs that users build, decode or convert: ``Limits`` (its memory caps)
and ``ToolCallView`` (what a UI shows of a call).

Rule this module owns: it is not compiled (``_compiled.COMPILED`` leaves it out), and no module
of that group defines a ``msgspec.Struct``. mypyc writes ``type`` for each annotation of a class
it does not compile as native, which is what a Struct is; msgspec reads a field's type from those
annotations, so in the compiled build ``msgspec.json.decode(..., type=Limits)`` refused every
field ("Expected `type`, got `int`"). Compiled modules build and read these classes as any
Python class.
"""

from __future__ import annotations

from typing import Any

import msgspec

from .. import v2


class Limits(msgspec.Struct, frozen=True, kw_only=True):
    """Memory caps of a store and of the bridges built on one. ``None`` disables a cap.

    Counts bound how many things are kept; bytes bound how much memory they hold, as
    ``size_of`` measures it (strings as Python keeps them, a few dozen bytes per object).
    When a cap is hit the store keeps the newest and what a client still needs: a value over
    ``max_value_bytes`` is cut (a string keeps its head) or replaced by a marker saying how
    much was omitted; content keeps its head and tail; finished calls, exited terminals and
    idle sessions go before open ones; and it reports each cut. The last two caps are the
    bridges' (the store keeps no permission request).
    """

    max_content_items: int | None = 10_000
    """Content items kept per tool call."""
    max_terminal_bytes: int | None = 4 * 1024 * 1024
    """Output bytes kept per terminal."""
    max_tool_calls: int | None = 50_000
    """Tool calls kept per session."""
    max_terminals: int | None = 10_000
    """Terminals kept per session."""
    max_sessions: int | None = 1_000
    """Sessions kept; the least recently updated are evicted first."""
    max_value_bytes: int | None = 4 * 1024 * 1024
    """Bytes of one stored value: a field (``title``, ``rawInput``, ...), one content item, one
    ``_meta`` entry, one terminal field."""
    max_call_bytes: int | None = 8 * 1024 * 1024
    """Bytes of one tool call (its id, fields, content, ``_meta``): the middle of its content
    goes first, then its largest values."""
    max_session_bytes: int | None = 64 * 1024 * 1024
    """Bytes of one session: finished calls go first, then exited terminals, then the content
    of open calls and the output of running terminals is cut."""
    max_store_bytes: int | None = 128 * 1024 * 1024
    """Bytes of the whole store: finished calls and exited terminals of the least recently
    updated sessions go first, then idle sessions, then the least recently updated ones."""
    max_meta_keys: int | None = 1_000
    """Keys of one ``_meta`` map (a call's or a terminal's); past it the oldest keys go."""
    max_permission_options: int | None = 100
    """Bridges: options a forwarded permission request may have; a request with more is not
    forwarded and the agent is answered ``cancelled`` (never approval)."""
    max_pending_permissions: int | None = 1_000
    """Bridges: forwarded permission requests awaiting the client's answer; past it the oldest
    is given up and its agent answered ``cancelled``."""
    max_pending_requests: int | None = 10_000
    """The proxy: requests of each side awaiting the other's answer; past it the oldest is
    answered with an error (a permission request: ``cancelled``) and forgotten."""
    max_message_ids: int | None = 10_000
    """The proxy: message ids per session it remembers a v1 client has (to tell a replay from
    a repeat); the oldest are forgotten first."""

    @classmethod
    def unlimited(cls) -> Limits:
        """Every cap disabled: memory grows with the input."""
        return cls(**dict.fromkeys(cls.__struct_fields__))


class ToolCallView(msgspec.Struct, frozen=True, kw_only=True):
    """What a UI shows for one call: effective values with display defaults resolved."""

    session_id: str
    tool_call_id: str
    title: str
    """Non-empty: the call's title, else its name, else a kind label, else "Tool call"."""
    name: str | None
    kind: str
    """Effective kind: ``other`` when unset or cleared; unknown kinds kept as received."""
    status: str
    """Effective status: ``pending`` when unset or cleared; unknown ones kept (v2). What the
    agent said, whatever the client concluded (``ended_locally``)."""
    is_final: bool
    """Whether ``status`` is final (``completed``, ``failed``, ``cancelled``)."""
    content: list[v2.ToolCallContent]
    locations: list[v2.ToolCallLocation]
    raw_input: Any
    raw_output: Any
    meta: dict[str, Any]
    can_cancel: bool
    updated_at: float | None
    dropped_items: int
    ended_locally: str | None = None
    """The client's own conclusion about a call the agent has not finished (``"cancelled"``
    after ``session/cancel``, or what ``sweep`` was given), until the agent sets a status:
    shown, never exported or converted (D14, D15)."""
