"""Stored state of tool calls, terminals and sessions, and the view a UI reads of a call
(``view_of``; its class, ``ToolCallView``, is in ``_structs``).

Rules this module owns (D46 (tool-call update, patch semantics, meta patches, client store); D2,
D4, D10, D14, D35):

- A field never set is absent from ``fields``; a cleared one holds ``None`` (or ``[]`` when a
  collection was cleared that way): stored exactly as received, so an export reproduces it.
- Effective values are computed, never stored: kind ``other`` and status ``pending`` when
  unset or cleared, content ``[]``; a status is final only if it is ``completed``, ``failed``
  or ``cancelled`` (unknown ones and ``paused`` count as running).
- Display title: a non-empty ``title``, else ``name``, else the kind's label, else
  "Tool call" (D10).
- ``snapshot()`` gives one update that recreates the state on an empty store (D35).
- A v1 call keeps, beside ``fields`` (which hold what v1 reads: an unknown ``kind`` or
  ``status`` string is not applied, D32), the raw strings the agent sent (``raw``), only to
  send them on: ``snapshot()`` writes them in place of the applied values.
- ``ended_locally`` is the client's own conclusion about an open call (``sweep``,
  ``session/cancel``): a local overlay shown on the view, never protocol state, so never in
  ``snapshot()`` (D14, D15).
- Each state knows the bytes it holds (``size``, and ``sizes`` per wire name), which the store
  keeps up to date as it stores values (``_sizes.size_of``); a store whose limits cap no byte
  does not measure a call's values until it is given a cap (``_sessions``).
"""

from __future__ import annotations

from base64 import b64encode
from collections.abc import Mapping
from typing import Any

import msgspec
from msgspec import UNSET, UnsetType

from .. import v2
from ..convert import display_title
from ..models import TOOL_CALL_FIELDS, replace, with_extra_fields
from ..v2 import FINAL_STATUSES
from ._sizes import str_size
from ._structs import ToolCallView

_CALL_ATTRS: Mapping[str, str] = {
    f.encode_name: f.name for f in msgspec.structs.fields(v2.ToolCallUpdate)
}
_TERMINAL_ATTRS: Mapping[str, str] = {
    f.encode_name: f.name for f in msgspec.structs.fields(v2.TerminalUpdate)
}
COLLECTION_FIELDS = frozenset(
    name for f in TOOL_CALL_FIELDS if f.collection for name in (f.attr, f.key)
)
"""The fields that hold whole arrays (stored as received: ``[]`` stays ``[]``, D2), by
attribute and wire name (``content``, ``locations``: the same), read from the model (issue 28)."""


class ToolCallState:
    """One tool call as the wire has set it, plus what the store tracks about it.

    ``fields`` maps wire names (``rawInput``) to values for every patch field that any
    update has set; a cleared field maps to ``None`` (``[]`` for a collection cleared that
    way); a field never set is absent. ``meta`` is ``UNSET``, ``None`` or a dict without
    ``None`` values; ``extra`` holds unknown update fields by wire name. ``raw`` holds, by
    wire name, the ``kind``/``status`` strings a v1 agent sent that v1 does not define (not
    applied, kept to re-emit); ``ended_locally`` the status the client concluded on its own.
    """

    __slots__ = (
        "dropped_at",
        "dropped_items",
        "ended_locally",
        "extra",
        "fields",
        "meta",
        "raw",
        "size",
        "sizes",
        "tool_call_id",
        "updated_at",
    )

    def __init__(self, tool_call_id: str) -> None:
        self.tool_call_id = tool_call_id
        self.fields: dict[str, Any] = {}
        self.meta: dict[str, Any] | UnsetType | None = UNSET
        self.extra: dict[str, Any] | None = None
        self.raw: dict[str, str] | None = None
        """v1 strings not applied (an unknown ``kind``/``status``), by wire name (D32)."""
        self.ended_locally: str | None = None
        """The client's own conclusion (a final status), shown until the agent sets a status."""
        self.updated_at: float | None = None
        self.dropped_items = 0
        """Content items dropped by a cap (``max_content_items``, ``max_call_bytes``, ...)."""
        self.dropped_at = 0
        """Where in the content they were: the number of items kept before them."""
        self.sizes: dict[str, int] = {}
        """Bytes held per wire name (``content``: its items; ``_meta``; extra keys)."""
        self.size = str_size(tool_call_id) + 200
        """Bytes held in all: the id, every value and a fixed overhead."""

    @property
    def kind(self) -> str:
        """The effective kind: ``other`` when never set, cleared (D4) or not a string."""
        kind = self.fields.get("kind")
        return kind if isinstance(kind, str) else "other"

    @property
    def status(self) -> str:
        """The effective status: ``pending`` when never set or cleared (D4)."""
        status = self.fields.get("status")
        return status if isinstance(status, str) else "pending"

    @property
    def content(self) -> list[v2.ToolCallContent]:
        """The effective content (``[]`` when never set or cleared)."""
        content = self.fields.get("content")
        return content if isinstance(content, list) else []

    @property
    def is_final(self) -> bool:
        """Whether the status is final; unknown statuses count as still running (D14)."""
        return self.status in FINAL_STATUSES

    @property
    def display_title(self) -> str:
        """A non-empty title: ``title``, else ``name``, else a kind label, else "Tool call"
        (the D10 chain, ``convert.display_title``)."""
        return display_title(self.fields.get("title"), self.fields.get("name"), self.kind)

    def snapshot(self) -> v2.ToolCallUpdate:
        """The state as one ``ToolCallUpdate`` that recreates it on an empty store (D35)."""
        fields = {_CALL_ATTRS[wire]: value for wire, value in self.fields.items()}
        for name in COLLECTION_FIELDS:
            if isinstance(fields.get(name), list):
                fields[name] = list(fields[name])
        if self.meta is not UNSET:
            fields["meta"] = dict(self.meta) if self.meta is not None else None
        if self.raw:  # what a v1 agent sent, re-emitted as sent (D32)
            for wire, value in self.raw.items():
                fields[_CALL_ATTRS[wire]] = value
        if self.extra:
            return with_extra_fields(
                v2.ToolCallUpdate, self.extra, tool_call_id=self.tool_call_id, **fields
            )
        return v2.ToolCallUpdate(tool_call_id=self.tool_call_id, **fields)


class TerminalState:
    """One agent-owned display terminal.

    ``output`` is ``UNSET`` (never set), ``None`` (cleared, nothing appended since) or the
    retained bytes; ``dropped_bytes`` counts what the ``max_terminal_bytes`` cap dropped from
    the middle (the head and the tail are kept). ``extra`` holds unknown update keys by wire
    name, ``output_object`` the last ``output`` snapshot's ``_meta`` and unknown keys (that
    object, its ``data`` emptied; ``None`` when it had neither): both written back (D19).
    """

    __slots__ = (
        "dropped_bytes",
        "extra",
        "fields",
        "meta",
        "output",
        "output_object",
        "size",
        "sizes",
        "terminal_id",
        "updated_at",
    )

    def __init__(self, terminal_id: str) -> None:
        self.terminal_id = terminal_id
        self.fields: dict[str, Any] = {}
        self.meta: dict[str, Any] | UnsetType | None = UNSET
        self.output: bytearray | UnsetType | None = UNSET
        self.output_object: v2.TerminalOutput | None = None
        self.extra: dict[str, Any] | None = None
        self.updated_at: float | None = None
        self.dropped_bytes = 0
        self.sizes: dict[str, int] = {}
        """Bytes held per wire name (``output``: the retained bytes and ``output_object``;
        ``_meta``; extra keys)."""
        self.size = str_size(terminal_id) + 200
        """Bytes held in all."""

    @property
    def command(self) -> str | None:
        """The command the terminal shows, if one is set."""
        command = self.fields.get("command")
        return command if isinstance(command, str) else None

    @property
    def cwd(self) -> str | None:
        """The working directory, if one is set."""
        cwd = self.fields.get("cwd")
        return cwd if isinstance(cwd, str) else None

    @property
    def exit_status(self) -> v2.TerminalExitStatus | None:
        """The exit status, if the terminal exited."""
        status = self.fields.get("exitStatus")
        return status if isinstance(status, v2.TerminalExitStatus) else None

    @property
    def exited(self) -> bool:
        """Whether an ``exitStatus`` is set (even ``{}``)."""
        return self.exit_status is not None

    @property
    def output_bytes(self) -> bytes:
        """The retained output bytes (empty when never set or cleared)."""
        return bytes(self.output) if isinstance(self.output, bytearray) else b""

    def snapshot(self) -> v2.TerminalUpdate:
        """The state as one ``terminal_update`` with an ``output`` snapshot (D35)."""
        fields = {_TERMINAL_ATTRS[wire]: value for wire, value in self.fields.items()}
        if isinstance(self.output, bytearray):
            data = b64encode(self.output).decode("ascii")
            shell = self.output_object
            fields["output"] = (
                v2.TerminalOutput(data=data) if shell is None else replace(shell, data=data)
            )
        elif self.output is None:
            fields["output"] = None
        if self.meta is not UNSET:
            fields["meta"] = dict(self.meta) if self.meta is not None else None
        if self.extra:
            return with_extra_fields(
                v2.TerminalUpdate, self.extra, terminal_id=self.terminal_id, **fields
            )
        return v2.TerminalUpdate(terminal_id=self.terminal_id, **fields)


class SessionState:
    """The tool calls (first-seen order) and terminals of one session."""

    __slots__ = (
        "background",
        "session_id",
        "size",
        "terminals",
        "tool_calls",
        "touched",
        "v1_terminals",
    )

    def __init__(self, session_id: str) -> None:
        self.session_id = session_id
        self.tool_calls: dict[str, ToolCallState] = {}
        self.terminals: dict[str, TerminalState] = {}
        self.v1_terminals: Any = None
        """A v1 stream's reader of the ``_meta`` terminal extension (``convert.TerminalReader``),
        once the session used it (D38 amended)."""
        self.background: tuple[frozenset[str], frozenset[str]] | None = None
        """Tool-call ids and terminal ids the latest ``state_update`` listed as background
        work (``v2.background_work``); ``None`` when it listed none."""
        self.touched = 0
        """When the store last switched to this session (its own counter, for eviction)."""
        self.size = str_size(session_id) + 400
        """Bytes held: its id, its calls and its terminals."""

    def in_background(self, tc: ToolCallState) -> bool:
        """Whether the latest background list names the call, or a terminal it shows (D15)."""
        if self.background is None:
            return False
        calls, terminals = self.background
        if tc.tool_call_id in calls:
            return True
        return bool(terminals) and any(
            isinstance(item, v2.Terminal) and item.terminal_id in terminals for item in tc.content
        )

    @property
    def live(self) -> bool:
        """Whether it has an open call or a running terminal."""
        return any(not tc.is_final for tc in self.tool_calls.values()) or any(
            not terminal.exited for terminal in self.terminals.values()
        )


def view_of(session_id: str, tc: ToolCallState) -> ToolCallView:
    """What a UI shows for the call ``tc`` of a session."""
    fields = tc.fields
    name = fields.get("name")
    locations = fields.get("locations")
    caps = fields.get("capabilities")
    return ToolCallView(
        session_id=session_id,
        tool_call_id=tc.tool_call_id,
        title=tc.display_title,
        name=name if isinstance(name, str) else None,
        kind=tc.kind,
        status=tc.status,
        is_final=tc.is_final,
        content=list(tc.content),
        locations=list(locations) if isinstance(locations, list) else [],
        raw_input=fields.get("rawInput"),
        raw_output=fields.get("rawOutput"),
        meta=dict(tc.meta) if isinstance(tc.meta, dict) else {},
        can_cancel=isinstance(caps, v2.ToolCallCapabilities)
        and isinstance(caps.cancel, v2.ToolCallCancelCapabilities),
        updated_at=tc.updated_at,
        dropped_items=tc.dropped_items,
        ended_locally=tc.ended_locally,
    )
