"""Stored state of tool calls and terminals, and the views a UI reads.

Rules this module owns (shared/spec/TOOL-CALLS.md 6.2, 7.2, 7.3, 7.11; D2, D4, D10, D14, D35):

- A field never set is absent from ``fields``; a cleared one holds ``None`` (or ``[]`` when a
  collection was cleared that way): stored exactly as received, so an export reproduces it.
- Effective values are computed, never stored: kind ``other`` and status ``pending`` when
  unset or cleared, content ``[]``; a status is final only if it is ``completed``, ``failed``
  or ``cancelled`` (unknown ones and ``paused`` count as running).
- Display title: a non-empty ``title``, else ``name``, else the kind's label, else
  "Tool call" (D10).
- ``_meta`` patches by top-level key (``patch_meta``): stored maps never hold ``None`` values.
- ``snapshot()`` gives one update that recreates the state on an empty store (D35).
- A v1 call keeps, beside ``fields`` (which hold what v1 reads: an unknown ``kind`` or
  ``status`` string is not applied, D32), the raw strings the agent sent (``raw``), only to
  send them on: ``snapshot()`` writes them in place of the applied values.
- ``ended_locally`` is the client's own conclusion about an open call (``sweep``,
  ``session/cancel``): a local overlay shown on the view, never protocol state, so never in
  ``snapshot()`` (D14, D15).
"""

from __future__ import annotations

from base64 import b64encode
from collections.abc import Callable, Mapping
from typing import Any

import msgspec
from msgspec import UNSET, UnsetType

from . import v2
from .v2 import FINAL_STATUSES
from .wire import UnknownVariant, with_extra_fields

__all__ = [
    "KIND_LABELS",
    "Limits",
    "SessionState",
    "TerminalState",
    "ToolCallState",
    "ToolCallView",
    "omitted",
    "patch_meta",
    "size_of",
    "view_of",
]


KIND_LABELS: Mapping[str, str] = {
    "read": "Read",
    "edit": "Edit",
    "delete": "Delete",
    "move": "Move",
    "search": "Search",
    "execute": "Execute",
    "think": "Think",
    "fetch": "Fetch",
    "switch_mode": "Switch mode",
}
"""Display fallback titles by kind (D10); ``other`` and unknown kinds have none."""

_CALL_ATTRS: Mapping[str, str] = {
    f.encode_name: f.name for f in msgspec.structs.fields(v2.ToolCallUpdate)
}
_TERMINAL_ATTRS: Mapping[str, str] = {
    f.encode_name: f.name for f in msgspec.structs.fields(v2.TerminalUpdate)
}
COLLECTION_FIELDS = frozenset({"content", "locations"})


def patch_meta(stored: Any, incoming: Any) -> Any:
    """The patch ``_meta`` rule (7.3): ``UNSET`` keeps, ``None`` clears, an object patches."""
    if incoming is UNSET:
        return stored
    if incoming is None:
        return None
    base = dict(stored) if isinstance(stored, dict) else {}
    for key, value in incoming.items():
        if value is None:
            base.pop(key, None)
        else:
            base[key] = value
    return base


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


# --------------------------------------------------------------------------------------------
# Sizes: what a stored value holds in memory, roughly


_STR = str
_CONTENT = v2.Content
_TEXT = v2.TextContent


def _str_size(text: str) -> int:
    # What CPython keeps for a string: one byte a character when it is ASCII, else up to four
    # (counted as four: ``sys.getsizeof`` would also count a cached UTF-8 copy, which depends
    # on whether the string was ever encoded, so the same value would not measure the same).
    return 49 + len(text) if text.isascii() else 76 + 4 * len(text)


def size_of(value: Any) -> int:
    """The memory a stored value holds, in bytes, roughly: a string as CPython keeps it (four
    bytes a character unless it is ASCII), a byte string its length, 16 bytes a number, and a
    list, dict or model its elements plus a few dozen bytes. The same value always measures
    the same. Nesting of any depth costs no recursion past ``_MAX_DEPTH`` levels.

    What it adds up is ``_walk``'s definition; the measurers of ``_MEASURERS`` (a model class's
    own, generated from its fields, and plain dicts' and lists') give the same sums faster.
    """
    kind = type(value)
    if kind is _STR:
        return 49 + len(value) if value.isascii() else 76 + 4 * len(value)
    if kind is _CONTENT:  # the common content item, a text block: measured directly
        inner = value.content
        if type(inner) is _TEXT and inner.annotations is UNSET and inner.meta is UNSET:
            text = inner.text
            return 209 + len(text) if text.isascii() else 236 + 4 * len(text)
    measure = _MEASURERS.get(kind)
    if measure is not None:
        return measure(value, 0)
    if hasattr(kind, "__struct_fields__") and kind not in _NOT_GENERATED:
        return _measurer(kind)(value, 0)
    return _walk(value)


def _walk(value: Any) -> int:
    """The definition of ``size_of``, iterative: what every measurer must add up to."""
    total = 0
    stack = [value]
    while stack:
        item = stack.pop()
        kind = type(item)
        if kind is _STR:
            total += _str_size(item)
        elif kind is bytes or kind is bytearray:
            total += 33 + len(item)
        elif kind is int or kind is float:
            total += 16
        elif item is None or kind is bool or item is UNSET:
            continue
        elif kind is list or kind is tuple:
            total += 56 + 8 * len(item)
            stack.extend(item)
        elif kind is dict:
            total += 64 + 24 * len(item)
            stack.extend(item)
            stack.extend(item.values())
        elif hasattr(kind, "__struct_fields__"):
            fields = kind.__struct_fields__
            total += 48 + 8 * len(fields)
            stack.extend(getattr(item, name) for name in fields)
            extra = getattr(item, "__dict__", None)  # unknown keys kept on the model
            if extra:
                stack.append(extra.get("_extra"))
        elif isinstance(item, UnknownVariant):
            total += 48
            stack.append(dict(item.data))
        elif isinstance(item, Mapping):
            total += 64 + 24 * len(item)
            stack.extend(item)
            stack.extend(item.values())
        else:
            total += 64
    return total


_MAX_DEPTH = 48
"""Levels the recursive measurers go down; deeper values are measured by ``_walk``."""

_Measurer = Callable[[Any, int], int]


def _value_size(value: Any, depth: int) -> int:
    """``size_of`` of a value nested ``depth`` levels down in what is being measured."""
    kind = type(value)
    if kind is _STR:
        return 49 + len(value) if value.isascii() else 76 + 4 * len(value)
    measure = _MEASURERS.get(kind)
    if measure is not None:
        return measure(value, depth)
    if kind is int or kind is float:
        return 16
    if value is None or kind is bool or value is UNSET:
        return 0
    if hasattr(kind, "__struct_fields__") and kind not in _NOT_GENERATED:
        return _measurer(kind)(value, depth)
    return _walk(value)


def _dict_size(value: dict[Any, Any], depth: int) -> int:
    if depth >= _MAX_DEPTH:
        return _walk(value)
    total = 64 + 24 * len(value)
    depth += 1
    for key, item in value.items():
        if type(key) is _STR:
            total += 49 + len(key) if key.isascii() else 76 + 4 * len(key)
        else:
            total += _value_size(key, depth)
        kind = type(item)
        if kind is _STR:
            total += 49 + len(item) if item.isascii() else 76 + 4 * len(item)
        elif kind is int or kind is float:
            total += 16
        elif kind is dict:
            total += _dict_size(item, depth)
        elif kind is list:
            total += _list_size(item, depth)
        elif item is not None and kind is not bool:
            total += _value_size(item, depth)
    return total


def _list_size(value: list[Any] | tuple[Any, ...], depth: int) -> int:
    if depth >= _MAX_DEPTH:
        return _walk(value)
    total = 56 + 8 * len(value)
    depth += 1
    for item in value:
        kind = type(item)
        if kind is _STR:
            total += 49 + len(item) if item.isascii() else 76 + 4 * len(item)
        elif kind is int or kind is float:
            total += 16
        elif kind is dict:
            total += _dict_size(item, depth)
        elif item is not None and kind is not bool:
            measure = _MEASURERS.get(kind)
            total += _value_size(item, depth) if measure is None else measure(item, depth)
    return total


def _bytes_size(value: bytes | bytearray, depth: int) -> int:
    return 33 + len(value)


def _number_size(value: float, depth: int) -> int:
    return 16


def _nothing(value: Any, depth: int) -> int:  # None, a bool, UNSET: counted in their holder
    return 0


def _measurer(cls: type) -> _Measurer:
    """Generate (once per class) the measurer of a model class: ``_walk``'s sum for one of its
    instances, its fields read one by one, strings and numbers measured in place."""
    fields: tuple[str, ...] = cls.__struct_fields__  # type: ignore[attr-defined]
    lines = [
        "def measure(item, depth):",
        "    if depth >= MAX_DEPTH:",
        "        return walk(item)",
        f"    total = {48 + 8 * len(fields)}",
        "    depth += 1",
    ]
    for name in fields:
        lines += [
            f"    value = item.{name}",
            "    kind = type(value)",
            "    if kind is str:",
            "        total += 49 + len(value) if value.isascii() else 76 + 4 * len(value)",
            "    elif value is not UNSET and value is not None:",
            "        measure = measurers.get(kind)",
            "        if measure is None:",
            "            total += value_size(value, depth)",
            "        else:",
            "            total += measure(value, depth)",
        ]
    lines += [
        "    extra = getattr(item, '__dict__', None)",  # unknown keys kept on the model
        "    if extra:",
        "        total += value_size(extra.get('_extra'), depth)",
        "    return total",
    ]
    namespace: dict[str, Any] = {
        "UNSET": UNSET,
        "MAX_DEPTH": _MAX_DEPTH,
        "measurers": _MEASURERS,
        "value_size": _value_size,
        "walk": _walk,
    }
    try:
        exec("\n".join(lines), namespace)
    except SyntaxError:  # a field name that is not an identifier: measured by the walk
        _NOT_GENERATED.add(cls)
        return lambda value, depth: _walk(value)
    measure: _Measurer = namespace["measure"]
    if len(_MEASURERS) < _MAX_MEASURERS:
        _MEASURERS[cls] = measure
    return measure


_MAX_MEASURERS = 4_096
"""Classes given a measurer (models with unknown keys are classes made at run time)."""
_MEASURERS: dict[type, _Measurer] = {
    dict: _dict_size,
    list: _list_size,
    tuple: _list_size,
    bytes: _bytes_size,
    bytearray: _bytes_size,
    int: _number_size,
    float: _number_size,
    bool: _nothing,
    type(None): _nothing,
    type(UNSET): _nothing,
}
_NOT_GENERATED: set[type] = set()


def omitted(size: int, limit: str) -> str:
    """The marker that stands for what a cap cut: ``[… 8,000,123 bytes omitted (limit)]``."""
    return f"[\u2026 {size:,} bytes omitted ({limit})]"


def trim_block(cap: int) -> int:
    # Trim in blocks so that a stream of appends past a cap costs amortised O(1), not a
    # memmove of the whole buffer each time.
    return max(1, cap // 8)


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
        self.size = _str_size(tool_call_id) + 200
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
        """A non-empty title: ``title``, else ``name``, else a kind label, else "Tool call"."""
        for candidate in (self.fields.get("title"), self.fields.get("name")):
            if isinstance(candidate, str) and candidate:
                return candidate
        return KIND_LABELS.get(self.kind, "Tool call")

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
    the middle (the head and the tail are kept).
    """

    __slots__ = (
        "dropped_bytes",
        "fields",
        "meta",
        "output",
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
        self.updated_at: float | None = None
        self.dropped_bytes = 0
        self.sizes: dict[str, int] = {}
        """Bytes held per wire name (``output``: the retained bytes; ``_meta``)."""
        self.size = _str_size(terminal_id) + 200
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
            fields["output"] = v2.TerminalOutput(data=b64encode(self.output).decode("ascii"))
        elif self.output is None:
            fields["output"] = None
        if self.meta is not UNSET:
            fields["meta"] = dict(self.meta) if self.meta is not None else None
        return v2.TerminalUpdate(terminal_id=self.terminal_id, **fields)


class SessionState:
    """The tool calls (first-seen order) and terminals of one session."""

    __slots__ = ("background", "session_id", "size", "terminals", "tool_calls", "touched")

    def __init__(self, session_id: str) -> None:
        self.session_id = session_id
        self.tool_calls: dict[str, ToolCallState] = {}
        self.terminals: dict[str, TerminalState] = {}
        self.background: tuple[frozenset[str], frozenset[str]] | None = None
        """Tool-call ids and terminal ids the latest ``state_update`` listed as background
        work (``v2.background_work``); ``None`` when it listed none."""
        self.touched = 0
        """When the store last switched to this session (its own counter, for eviction)."""
        self.size = _str_size(session_id) + 400
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


def view_of(session_id: str, tc: ToolCallState) -> ToolCallView:
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
