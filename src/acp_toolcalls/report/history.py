"""One side of a log: every tool call and terminal, and what each line did to it.

Rules this module owns:

- ``SideHistory.feed(line, data)`` hands the line to ``_replayer.Replayer`` over one
  ``ToolCallStore`` without caps, so it is read, salvaged and reported exactly as ``replay``
  reads it, and turns the events the store returned into history entries: one entry per line
  and call (or terminal) the line touched, in first-seen order of the calls.
- The version (D45): under ``auto`` the store reads the side as ``validate`` decides it
  (``check.ProtocolDetector``: the first ``initialize``, else the first message of one version
  only), so a capture that starts after its ``initialize`` is read in the version the report
  names, v1 tool calls and their terminal extension included; lines wait for the decision as
  the validator's do (``LOOKAHEAD_LINES``/``LOOKAHEAD_BYTES``; undecided: v2), and ``finish``
  reads the ones still waiting.
- An entry lists what the line did to each field it named, by wire name: ``set`` (old ->
  new), ``same`` (set to the value it already had), ``clear`` (``null``; for a collection
  also ``[]``), ``replace`` (an array replaced whole: ``locations``, or ``content`` as item
  ranges), ``append`` (a content chunk: the item), plus ``created`` (first sight) and
  ``reopened`` (a finished call made open again). Fields it did not name are not listed.
- Each entry also holds what the line changed of the call's state (``s``), so the page has
  the state after any line by merging the entries up to it, each over the one before (``f``
  merged by name): ``title``, ``kind`` and ``status`` as a client displays them
  (``state.py``'s effective values; in the first entry always, later when they changed),
  ``f`` the index in ``values`` of each field's value the line set (a field never set is
  absent, a cleared one points at ``null``), ``c`` the content as a ``[start, end)`` range of
  the call's item pool when it moved (absent all along: never set; ``None``: cleared by
  ``null``). Only what changed is kept: a big log's entries are mostly a status or a chunk.
- A reader that sets ``touched`` (and ``touched_terminals``) to a dict is told the keys of
  the calls (terminals) recorded since it last emptied it, in first-seen order (the live
  model: a publication looks at what changed, not at every call).
- Values are kept once per call (deduplicated by their JSON), content items once (the pool:
  the content at any time is one contiguous range of it, since only the current content
  grows), terminal text as deltas (``terminal_output``). Old values are the state before the
  line, new ones the state after it, so a batch that touches a field twice shows its net
  change.
- What is kept is kept as JSON (each entry, value and item encoded once, as recorded), so a
  big log's history costs its JSON text, not Python objects; ``take_details`` hands it over
  once as ``msgspec.Raw``, which the page puts into its parts as it is.
- A v1 stream is shown as it crossed the wire: the store still decides which fields a line
  changed (its v1 reading, D46 (field mapping)), but the values and content items listed are the
  ones the v1 message sent (a v1 ``diff`` with ``path``/``oldText``/``newText``, not the v2
  ``changes``/``patch`` the store holds; a ``kind`` v1 does not define as sent, D32), taken from the
  line's ``tool_call``, ``tool_call_update`` or permission ``toolCall`` of that call
  (``wire_calls``). Only ``_meta`` is the store's: the terminal extension's keys are shown as the
  terminal they make (D38 amended), the call's other keys as the store holds them.
"""

from __future__ import annotations

from array import array
from collections.abc import Callable
from typing import Any

import msgspec

from ..check import VersionLookahead
from ..codec import DecodeError, check_depth, encode_decoded
from ..events import (
    ContentAppended,
    Event,
    TerminalCleared,
    TerminalCreated,
    TerminalOutputAppended,
    TerminalPatched,
    ToolCallCleared,
    ToolCallCreated,
    ToolCallPatched,
    ToolCallReopened,
)
from ..models import VersionChoice
from ..store import (
    COLLECTION_FIELDS,
    Limits,
    TerminalState,
    ToolCallState,
    ToolCallStore,
)
from ._json import JsonList, Values, encode, json_list, json_object
from ._replayer import Replayer
from .terminal_output import TerminalText

__all__ = ["CallHistory", "SideHistory", "TerminalHistory", "wire_calls"]

_CALL_EVENTS = (
    ToolCallCreated,
    ToolCallPatched,
    ToolCallCleared,
    ContentAppended,
    ToolCallReopened,
)
_ONE_CALL_EVENTS = (ContentAppended, ToolCallPatched, ToolCallCleared)
_TERMINAL_EVENTS = (TerminalCreated, TerminalPatched, TerminalCleared, TerminalOutputAppended)
_NEVER_SET = "never set"  # a call's content before any update named it
_WIRE_UPDATES = frozenset({"tool_call", "tool_call_update"})
_STORE_FIELDS = frozenset({"_meta"})  # shown as the store holds them, on v1 too
_parse = msgspec.json.Decoder()

Wire = dict[tuple[str, str], dict[str, Any]]
"""The tool-call fields a line sent, by ``(sessionId, toolCallId)``, as plain JSON."""


def wire_calls(data: bytes) -> Wire:
    """The fields each v1 ``tool_call``, ``tool_call_update`` and permission ``toolCall`` of
    a line (or of each element of a batch) sent, by call; later messages over earlier ones."""
    try:
        check_depth(data)  # the codec's limit (issue 27)
        value = _parse.decode(data)
    except (msgspec.DecodeError, RecursionError, DecodeError):
        return {}
    found: Wire = {}
    for message in value if isinstance(value, list) else [value]:
        params = message.get("params") if isinstance(message, dict) else None
        if not isinstance(params, dict):
            continue
        method = message.get("method")
        fields: Any = None
        if method == "session/update":
            fields = params.get("update")
            if not isinstance(fields, dict) or fields.get("sessionUpdate") not in _WIRE_UPDATES:
                continue
        elif method == "session/request_permission":
            fields = params.get("toolCall")
        session = params.get("sessionId")
        call = fields.get("toolCallId") if isinstance(fields, dict) else None
        if isinstance(session, str) and isinstance(call, str):
            found.setdefault((session, call), {}).update(fields)
    return found


class _RecordingStore(ToolCallStore):
    """The store, remembering the events of the last ``apply`` for the history."""

    def __init__(self, version: VersionChoice) -> None:
        super().__init__(version=version, limits=Limits.unlimited())
        self.events: list[Event] = []

    def apply(self, message: Any, *, now: float | None = None) -> list[Event]:
        events = super().apply(message, now=now)
        self.events.extend(events)
        return events


class CallHistory:
    """One tool call: its entries, value pool, content item pool and compact timelines."""

    __slots__ = (
        "content",
        "entries",
        "fields",
        "first",
        "items",
        "kinds",
        "last",
        "lines",
        "session_id",
        "shown",
        "statuses",
        "titles",
        "tool_call_id",
        "values",
    )

    def __init__(self, session_id: str, tool_call_id: str, first: int) -> None:
        self.session_id = session_id
        self.tool_call_id = tool_call_id
        self.first = first
        self.last = first
        self.lines = array("L")  # of the entries, in order
        self.entries = JsonList()
        self.values = Values()
        self.items = JsonList()
        self.fields: dict[str, int] = {}
        self.content: list[int] | str | None = _NEVER_SET
        self.shown: list[Any] = [None, None, None, _NEVER_SET]  # title, kind, status, content
        # [line, value] whenever the displayed value changes: what the page filters on.
        self.statuses: list[list[Any]] = []
        self.kinds: list[list[Any]] = []
        self.titles: list[list[Any]] = []

    def record(
        self,
        line: int,
        tc: ToolCallState,
        events: list[Event],
        when: float | None,
        wire: dict[str, Any] | None = None,
    ) -> None:
        """Add the entry of ``line``, which returned ``events`` about this call; ``wire``: the
        fields a v1 line sent for it, shown instead of the store's v2 values."""
        changes: list[list[Any]] = []
        named: dict[str, None] = {}
        appended = False
        for event in events:
            if isinstance(event, ToolCallCreated):
                changes.append(["created"])
            elif isinstance(event, (ToolCallPatched, ToolCallCleared)):
                named.update(dict.fromkeys(event.fields))
            elif isinstance(event, ContentAppended):
                appended = True
            elif isinstance(event, ToolCallReopened):
                changes.append(["reopened", event.previous_status, event.status])
        # Only what names a field, creates or reopens can change the title, kind or status.
        displayed = bool(named or changes) or not self.lines
        for name in named:
            if name != "content":
                changes.append(self._field(name, _value_of(tc, name, wire)))
        if "content" in named:
            changes.append(self._replace_content(_value_of(tc, "content", wire)))
        elif appended:
            changes += self._append_content(tc.content)
        if displayed:
            title, kind, status = tc.display_title, tc.kind, tc.status
            state = self._state_change(title, kind, status, named)
        else:
            state = self._content_change({})
        entry: dict[str, Any] = {"l": line, "c": changes, "s": state}
        if when is not None:
            entry["t"] = when
        self.entries.append(encode(entry))
        self.lines.append(line)
        self.last = line
        if displayed:
            statuses, kinds, titles = self.statuses, self.kinds, self.titles
            if not statuses or statuses[-1][1] != status:
                statuses.append([line, status])
            if not kinds or kinds[-1][1] != kind:
                kinds.append([line, kind])
            if not titles or titles[-1][1] != title:
                titles.append([line, title])

    def _state_change(
        self, title: str, kind: str, status: str, named: dict[str, None]
    ) -> dict[str, Any]:
        """What of the call's state changed with this entry: ``title``/``kind``/``status``
        when they differ from the last entry's, ``f`` the fields this line set, ``c`` the
        content range when it moved (the first entry has them all)."""
        shown, first = self.shown, not self.lines
        state: dict[str, Any] = {}
        if first or shown[0] != title:
            state["title"] = shown[0] = title
        if first or shown[1] != kind:
            state["kind"] = shown[1] = kind
        if first or shown[2] != status:
            state["status"] = shown[2] = status
        fields = self.fields
        changed = {name: fields[name] for name in named if name in fields}
        if changed:
            state["f"] = changed
        return self._content_change(state)

    def _content_change(self, state: dict[str, Any]) -> dict[str, Any]:
        """``state`` with the content's range when it moved since the last entry."""
        shown, content = self.shown, self.content
        if content != shown[3]:
            shown[3] = list(content) if isinstance(content, list) else content
            state["c"] = shown[3]
        return state

    def _field(self, name: str, value: Any) -> list[Any]:
        old = self.fields.get(name, -1)
        key = encode_decoded(value)
        new = self.fields[name] = self.values.add(key)
        if value is None or (name in COLLECTION_FIELDS and key == b"[]"):
            return ["clear", name, old, new]
        if old == new:
            return ["same", name, new]
        return ["replace" if key[:1] == b"[" else "set", name, old, new]

    def _replace_content(self, content: Any) -> list[Any]:
        old = self.content if self.content != _NEVER_SET else -1
        if content is None:
            self.content = None
            return ["clear", "content", old, None]
        start = self.items.count
        for item in content:
            self.items.append(encode_decoded(item))
        self.content = [start, self.items.count]
        kind = "clear" if not content else "replace"
        return [kind, "content", old, list(self.content)]

    def _append_content(self, content: list[Any]) -> list[list[Any]]:
        if not isinstance(self.content, list):  # appending to no content starts a new range
            self.content = [self.items.count, self.items.count]
        held = self.content[1] - self.content[0]
        changes: list[list[Any]] = []
        for item in content[held:]:
            changes.append(["append", "content", self.items.count])
            self.items.append(encode_decoded(item))
        self.content[1] = self.items.count
        return changes

    def index(self) -> dict[str, Any]:
        """What the page needs of the call before it loads its details: for the card list,
        the filters and the scrubber."""
        return {
            "session": self.session_id,
            "id": self.tool_call_id,
            "first": self.first,
            "last": self.last,
            "status": self.statuses,
            "kind": self.kinds,
            "title": self.titles,
        }

    def take_details(self) -> msgspec.Raw:
        """The entries and the pools they refer to: ``{"entries", "values", "items"}``, handed
        over once (the call keeps its index and ``lines``)."""
        details = json_object(
            entries=self.entries.take(),
            values=json_list(self.values.values),
            items=self.items.take(),
        )
        self.values = Values()
        return details


def _value_of(tc: ToolCallState, name: str, wire: dict[str, Any] | None = None) -> Any:
    """The value of field ``name`` after the line: as the v1 line sent it (a v1 ``null``
    changes nothing, so the store holds the value), else as the store holds it."""
    sent = wire.get(name) if wire is not None and name not in _STORE_FIELDS else None
    if sent is not None and (name != "content" or isinstance(sent, list)):
        return sent
    if name == "_meta":
        return tc.meta
    if name in tc.fields:
        return tc.fields[name]
    return (tc.extra or {}).get(name)


class TerminalHistory:
    """One terminal: its fields and output text after each line that touched it."""

    __slots__ = ("entries", "fields", "first", "session_id", "terminal_id", "text", "values")

    def __init__(self, session_id: str, terminal_id: str, first: int) -> None:
        self.session_id = session_id
        self.terminal_id = terminal_id
        self.first = first
        self.entries = JsonList()
        self.values = Values()
        self.fields: dict[str, int] = {}
        self.text = TerminalText()

    def record(self, line: int, terminal: TerminalState, events: list[Event]) -> None:
        """Add the entry of ``line``, which returned ``events`` about this terminal."""
        named: dict[str, None] = {}
        appended = False
        for event in events:
            if isinstance(event, (TerminalPatched, TerminalCleared)):
                named.update(dict.fromkeys(event.fields))
            elif isinstance(event, TerminalOutputAppended):
                appended = True
        for name in named:
            if name != "output":
                value = (
                    terminal.meta
                    if name == "_meta"
                    else terminal.fields.get(name, (terminal.extra or {}).get(name))
                )
                self.fields[name] = self.values.add(encode_decoded(value))
        entry: dict[str, Any] = {"l": line, "f": dict(self.fields)}
        if "output" in named or appended:
            output = terminal.output if isinstance(terminal.output, bytearray) else None
            delta = self.text.update(output, appended="output" not in named)
            if delta is not None:
                entry["o"] = list(delta)
        self.entries.append(encode(entry))

    def take_details(self) -> msgspec.Raw:
        """The entries and the values they refer to: ``{"entries", "values"}``, handed over
        once."""
        details = json_object(entries=self.entries.take(), values=json_list(self.values.values))
        self.values = Values()
        return details


_Line = tuple[int, "bytes | int", "float | None"]
"""A line as ``SideHistory.feed`` takes it: number, data, time."""


class SideHistory:
    """Every call and terminal of one side of a log (or of a whole plain log)."""

    def __init__(
        self,
        version: VersionChoice,
        report: Callable[[str], None],
        max_line_bytes: int,
    ) -> None:
        self.store = _RecordingStore(version)
        self._report, self._max_line_bytes = report, max_line_bytes
        self._replayer = Replayer(self.store, report, max_line_bytes)
        self.calls: dict[tuple[str, str], CallHistory] = {}
        self.terminals: dict[tuple[str, str], TerminalHistory] = {}
        self.touched: dict[tuple[str, str], None] | None = None
        self.touched_terminals: dict[tuple[str, str], None] | None = None
        # `validate`'s own reading of the version, under auto (D45).
        self._lookahead: VersionLookahead[_Line] | None = (
            VersionLookahead() if version == "auto" else None
        )

    def feed(self, line: int, data: bytes | int, when: float | None = None) -> None:
        """Apply one numbered line (``read_lines`` output) and record what it did; under
        ``auto``, once the version is decided."""
        lookahead = self._lookahead
        if lookahead is None:
            self._apply(line, data, when)
            return
        self._read(lookahead.feed((line, data, when), line, data))

    def finish(self) -> None:
        """Read the lines still waiting for the version: as decided, or as the store reads
        them undecided."""
        if self._lookahead is not None:
            self._read(self._lookahead.settle())

    def release(self) -> None:
        """Let go of the store's state, before the page is made (its objects may be frozen
        for the collector, ``gc.freeze``: their memory is given back at once, not at a
        collection that would never come)."""
        self.store.sessions.clear()
        self.store = _RecordingStore(self.store.version)
        self._replayer = Replayer(self.store, self._report, self._max_line_bytes)

    def _read(self, lines: list[_Line]) -> None:
        lookahead = self._lookahead
        if not lines or lookahead is None:
            return
        self._lookahead = None
        if lookahead.version != "auto":
            self.store = _RecordingStore(lookahead.version)  # nothing applied yet
            self._replayer = Replayer(self.store, self._report, self._max_line_bytes)
        for line, data, when in lines:
            self._apply(line, data, when)

    def _apply(self, line: int, data: bytes | int, when: float | None) -> None:
        self.store.events = []
        v1 = self.store.raw_version == "v1"  # what the replayer reads the line with
        self._replayer.feed(line, data)
        events = self.store.events
        if not events:
            return
        event = events[0]
        if len(events) == 1 and isinstance(event, _ONE_CALL_EVENTS) and not v1:
            # The common line: one event about one call (a chunk, a patch).
            key = (event.session_id, event.tool_call_id)
            history = self.calls.get(key)
            tc = self.store.tool_call(*key)
            if history is not None and tc is not None:
                history.record(line, tc, events, when)
                if self.touched is not None:
                    self.touched[key] = None
                return
        calls: dict[tuple[str, str], list[Event]] = {}
        terminals: dict[tuple[str, str], list[Event]] = {}
        for event in events:
            if isinstance(event, _CALL_EVENTS):
                calls.setdefault((event.session_id, event.tool_call_id), []).append(event)
            elif isinstance(event, _TERMINAL_EVENTS):
                terminals.setdefault((event.session_id, event.terminal_id), []).append(event)
        wire = wire_calls(data) if v1 and calls and isinstance(data, bytes) else {}
        for key, events in calls.items():
            tc = self.store.tool_call(*key)
            if tc is None:  # not kept (never happens without caps)
                continue
            history = self.calls.get(key)
            if history is None:
                history = self.calls[key] = CallHistory(key[0], key[1], line)
            history.record(line, tc, events, when, wire.get(key) if v1 else None)
            if self.touched is not None:
                self.touched[key] = None
        for key, events in terminals.items():
            session = self.store.sessions.get(key[0])
            terminal = session.terminals.get(key[1]) if session is not None else None
            if terminal is None:
                continue
            kept = self.terminals.get(key)
            if kept is None:
                kept = self.terminals[key] = TerminalHistory(key[0], key[1], line)
            kept.record(line, terminal, events)
            if self.touched_terminals is not None:
                self.touched_terminals[key] = None
