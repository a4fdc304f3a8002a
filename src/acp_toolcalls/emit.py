"""The agent side: tool calls reported as minimal, correct v2 patches (or v1, through the bridge).

Rules this module owns (shared/spec/TOOL-CALLS.md 7.10, 10.3-10.6, 10.9; D3, D14, D16, D20, D24,
D25, D31). Everything the emitter sends about a tool call is decided here:

- ``ToolCallEmitter`` is per session and sans-I/O: each method returns the messages to send,
  in order; the caller sends them. Time exists only as the ``now`` the caller passes.
- It remembers what the client holds for each field and sends only what changes: a field equal
  to what was sent is left out, ``None`` clears (sent as ``null`` only if something is there to
  clear), an omitted argument is unchanged, and a call with nothing to send sends nothing.
  There is no way to send a literal JSON ``null`` value (D3). ``_meta`` patches by top-level key.
- The first report of a call always has a non-empty ``title`` (and ``name`` when known; a later
  change of ``name`` is logged, D31). Values it originates are checked before anything is sent:
  known or ``_``-prefixed enum values, absolute native paths, ``line`` >= 1, no empty ids,
  terminal sizes 1..65535, 64-bit exit codes, and only what JSON can carry (no lone surrogate,
  NaN or out-of-range integer). A call that raises ``SenderError`` changes nothing.
- Ids: the caller's ids (a model's or provider's) map to session-unique ``toolCallId``\\s. An id
  whose call reached a final status is never reopened: starting it again gets a fresh namespaced
  ``toolCallId`` (``reuse="namespace"``) or raises ``ToolCallIdReused`` (``reuse="refuse"``).
  A finished call takes no more updates; terminal ids are never reused.
- Growing text (one text item whose text grows, e.g. streamed arguments or output) goes out as a
  chunk first, then as throttled whole-content replacements (``TextThrottle``): at most one per
  ``min_interval``, and only after ``min_growth`` characters or ``max_delay`` seconds. Pending
  text is flushed before any other message about the call, before a permission request, on
  finish, on ``flush()`` and at the turn's end; ``poll(now)`` sends what is due.
- Permission prompts: the request's ``title``/``description`` are the prompt's own; the
  ``tool_call`` subject carries only the minimal patch of the call's own fields.
- The turn's end (``finish_open``/``end_turn``) gives every open call a final status, except
  calls listed as background work; ``failed`` for a call the agent forgot is logged as a bug.
- ``protocol_version=1`` sends everything through a ``V2ToV1Bridge``: the same calls produce
  v1 messages, and v1 answers to permission requests are read back as v2.
"""

from __future__ import annotations

import base64
import logging
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any, Literal

import msgspec
from msgspec import UNSET, UnsetType

from . import v2
from .bridge_to_v1 import V2ToV1Bridge
from .codec import EncodeError, canonical_json
from .jsonrpc import JsonRpcMessage, request_key
from .loss import Loss
from .permissions import (
    ALLOW_KINDS,
    DEFAULT_OPTIONS,
    PermissionAnswer,
    SenderError,
    check_absolute_path,
    check_open_value,
    check_subject,
    parse_permission_answer,
    permission_request,
)
from .v1_to_v2 import git_patch
from .wire import replace

__all__ = [
    "PermissionAsk",
    "TextThrottle",
    "ToolCallEmitter",
    "ToolCallIdReused",
    "ToolCallNotOpen",
    "diff_content",
    "text_content",
]

logger = logging.getLogger("acp_toolcalls.emit")

Fields = dict[str, Any]
"""Tool-call fields by ``v2.ToolCallUpdate`` attribute name; ``UNSET`` entries are absent."""


class ToolCallIdReused(SenderError):
    """``start`` of an id that is already in use (open, or final with ``reuse="refuse"``)."""


class ToolCallNotOpen(SenderError):
    """An update, chunk or permission request about a call that was never started or is final."""


# --------------------------------------------------------------------------------------------
# Content helpers


def text_content(text: str) -> v2.Content:
    """A text content item."""
    return v2.Content(content=v2.TextContent(text=text))


def diff_content(path: str, old_text: str | None, new_text: str) -> v2.Diff:
    """A one-file diff (``old_text=None``: a new file) with its ``git_patch`` text."""
    check_absolute_path(path, "diff.path")
    change: v2.DiffChange
    if old_text is None:
        change = v2.AddDiffChange(path=path, file_type="text")
    else:
        change = v2.ModifyDiffChange(path=path, file_type="text")
    text = git_patch(path, old_text, new_text)
    patch = v2.DiffPatch(format="git_patch", text=text) if text else UNSET
    return v2.Diff(changes=[change], patch=patch)


# --------------------------------------------------------------------------------------------
# Sender checks: one table of what each field's value must be (7.10 items 1-6)

_KINDS = frozenset(k.value for k in v2.ToolKind)
_STATUSES = frozenset(s.value for s in v2.ToolCallStatus)
_CONTENT_TYPES = frozenset({"content", "diff", "terminal"})
_BLOCK_TYPES = frozenset({"text", "image", "audio", "resource_link", "resource"})
_OPERATIONS = frozenset({"add", "delete", "modify", "move", "copy"})
_FILE_TYPES = frozenset({"text", "binary", "directory", "symlink"})
_PATCH_FORMATS = frozenset({"git_patch"})
_MAX_LINE = 2**32 - 1
_MAX_TERMINAL_SIDE = 2**16 - 1
_CHANGES = (
    v2.AddDiffChange, v2.DeleteDiffChange, v2.ModifyDiffChange, v2.MoveDiffChange,
    v2.CopyDiffChange,
)  # fmt: skip


def _check_str(value: Any, where: str) -> None:
    if not isinstance(value, str):
        raise SenderError(where, f"expected a string, got {type(value).__name__}")


def _check_location(item: Any, where: str) -> None:
    if not isinstance(item, v2.ToolCallLocation):
        raise SenderError(where, f"expected a ToolCallLocation, got {type(item).__name__}")
    check_absolute_path(item.path, f"{where}.path")
    line = item.line
    valid = line is UNSET or line is None or (type(line) is int and 1 <= line <= _MAX_LINE)
    if not valid:
        raise SenderError(f"{where}.line", f"lines are 1-based integers, got {line!r}")


def _check_change(change: Any, where: str) -> None:
    if isinstance(change, v2.UnknownDiffChange):
        check_open_value(change.tag, _OPERATIONS, f"{where}.operation")
        return
    if not isinstance(change, _CHANGES):
        raise SenderError(where, f"expected a diff change, got {type(change).__name__}")
    check_absolute_path(change.path, f"{where}.path")
    if isinstance(change, (v2.MoveDiffChange, v2.CopyDiffChange)):
        check_absolute_path(change.old_path, f"{where}.oldPath")
    if isinstance(change.file_type, str):
        check_open_value(change.file_type, _FILE_TYPES, f"{where}.fileType")


def _check_item(item: Any, where: str) -> None:
    if isinstance(item, v2.Content):
        block = item.content
        if isinstance(block, v2.UnknownContentBlock):
            check_open_value(block.tag, _BLOCK_TYPES, f"{where}.content.type")
    elif isinstance(item, v2.Diff):
        if not item.changes:
            raise SenderError(f"{where}.changes", "a diff needs at least one change")
        for index, change in enumerate(item.changes):
            _check_change(change, f"{where}.changes[{index}]")
        if isinstance(item.patch, v2.DiffPatch):
            check_open_value(item.patch.format, _PATCH_FORMATS, f"{where}.patch.format")
    elif isinstance(item, v2.Terminal):
        if not isinstance(item.terminal_id, str) or not item.terminal_id:
            raise SenderError(f"{where}.terminalId", "must be a non-empty string")
    elif isinstance(item, v2.UnknownToolCallContent):
        check_open_value(item.tag, _CONTENT_TYPES, f"{where}.type")
    else:
        raise SenderError(where, f"expected a tool-call content item, got {type(item).__name__}")


def _check_list(check: Callable[[Any, str], object]) -> Callable[[Any, str], None]:
    def checked(value: Any, where: str) -> None:
        if not isinstance(value, list):
            raise SenderError(where, f"expected a list, got {type(value).__name__}")
        for index, item in enumerate(value):
            check(item, f"{where}[{index}]")

    return checked


def _check_size(value: Any, where: str) -> None:
    if not isinstance(value, v2.TerminalSize):
        raise SenderError(where, f"expected a TerminalSize, got {type(value).__name__}")
    for name in ("cols", "rows"):
        count = getattr(value, name)
        if not (type(count) is int and 1 <= count <= _MAX_TERMINAL_SIDE):
            raise SenderError(f"{where}.{name}", f"expected 1..{_MAX_TERMINAL_SIDE}, got {count!r}")


def _check_capabilities(value: Any, where: str) -> None:
    if not isinstance(value, v2.ToolCallCapabilities):
        raise SenderError(where, f"expected ToolCallCapabilities, got {type(value).__name__}")


def _check_meta(value: Any, where: str) -> None:
    if not isinstance(value, dict) or not all(isinstance(k, str) for k in value):
        raise SenderError(where, "`_meta` is an object with string keys")


def _key(value: Any, where: str) -> bytes:
    """The canonical JSON of a value to send; ``SenderError`` for what JSON cannot carry."""
    try:
        return canonical_json(value)
    except EncodeError as exc:
        raise SenderError(where, str(exc)) from None


def _check_any(value: Any, where: str) -> None:
    _key(value, where)


def _keys_of(attr: str, value: Any) -> Any:
    """What the minimal patch compares for one field: the canonical JSON of the value, per
    item of ``content``, per key of ``_meta``. ``SenderError`` names what JSON cannot carry."""
    if value is None:
        return None
    if attr == "content":
        return [_key(item, f"content[{index}]") for index, item in enumerate(value)]
    if attr == "meta":
        return {k: _key(item, f"_meta.{k}") for k, item in value.items() if item is not None}
    return _key(value, _WIRE_NAMES[attr])


_CHECKS: Mapping[str, Callable[[Any, str], object]] = {
    "name": _check_str,
    "title": _check_str,
    "kind": lambda value, where: check_open_value(value, _KINDS, where),
    "status": lambda value, where: check_open_value(value, _STATUSES, where),
    "content": _check_list(_check_item),
    "locations": _check_list(_check_location),
    "raw_input": _check_any,
    "raw_output": _check_any,
    "capabilities": _check_capabilities,
    "meta": _check_meta,
}
"""Per ``ToolCallUpdate`` attribute: the check a non-null value must pass before it is sent."""

_WIRE_NAMES = {f.name: f.encode_name for f in msgspec.structs.fields(v2.ToolCallUpdate)}


# --------------------------------------------------------------------------------------------
# Growing text


class TextThrottle(msgspec.Struct, frozen=True, kw_only=True):
    """When a growing text item is re-sent (each send carries the call's whole ``content``).

    A send is due when ``min_interval`` seconds passed since the last one and either the text
    grew by ``max(min_growth, growth_ratio * sent)`` characters (``sent``: its length on the
    client) or its oldest unsent character waited ``max_delay`` seconds.

    Cost, for a text of ``T`` characters streamed over ``D`` seconds: growth-triggered sends
    grow the text geometrically, so together they carry at most about ``T / growth_ratio``
    characters; delay-triggered ones add at most ``T`` per ``max_delay`` of streaming. Linear in
    ``T`` instead of the quadratic cost of resending on every piece; the other content items of
    the call ride along on each send. docs/agent-guide.md has measured figures.
    """

    min_interval: float = 0.1
    min_growth: int = 1024
    growth_ratio: float = 0.5
    max_delay: float = 1.0


class _Text:
    """The open growing text item of a call."""

    __slots__ = ("first_pending", "index", "last_sent", "parts", "pending", "sent")

    def __init__(self, index: int, text: str, now: float) -> None:
        self.index = index  # its position in the call's content
        self.parts = [text]  # joined on send: `+=` on a long str would copy it every time
        self.sent = len(text)  # characters the client shows
        self.pending = 0  # characters not yet sent
        self.first_pending = now
        self.last_sent = now

    def threshold(self, throttle: TextThrottle) -> float:
        return max(throttle.min_growth, throttle.growth_ratio * self.sent)


class _Call:
    """What the client holds for one tool call, as this emitter sent it."""

    __slots__ = ("fields", "final", "items", "keys", "meta", "text", "tool_call_id")

    def __init__(self, tool_call_id: str) -> None:
        self.tool_call_id = tool_call_id
        self.fields: dict[str, bytes] = {}  # attribute -> canonical JSON of the value sent
        self.items: list[Any] = []  # content as the client holds it
        self.keys: list[bytes] = []  # canonical JSON of each item
        self.meta: dict[str, bytes] = {}  # `_meta` key -> canonical JSON
        self.text: _Text | None = None
        self.final = False


class PermissionAsk(msgspec.Struct, frozen=True, kw_only=True):
    """A permission request ready to send, and what is needed to read its answer.

    ``messages`` are sent in order (the request last). When the bridge could not show the
    request to a v1 client it answered on the client's behalf: ``settled`` is that answer
    and nothing needs sending.
    """

    request_id: int | str
    messages: tuple[Any, ...]
    options: tuple[v2.PermissionOption, ...]
    settled: PermissionAnswer | None = None


# --------------------------------------------------------------------------------------------
# The emitter

Reuse = Literal["namespace", "refuse"]


class ToolCallEmitter:
    """Tool calls and terminals of one session, as minimal v2 patches (or v1 via the bridge).

    Methods return lists of typed messages (``acp_toolcalls.encode`` writes them); nothing is
    sent by the emitter itself. See the module docstring for every rule it enforces.
    """

    def __init__(
        self,
        session_id: str,
        *,
        protocol_version: int = 2,
        throttle: TextThrottle | None = None,
        reuse: Reuse = "namespace",
        bridge: V2ToV1Bridge | None = None,
        allow_kinds: Iterable[str] = ALLOW_KINDS,
        on_loss: Callable[[Loss], None] | None = None,
    ) -> None:
        if not isinstance(session_id, str) or not session_id:
            raise SenderError("sessionId", "must be a non-empty string")
        if protocol_version not in (1, 2):
            raise ValueError(f"unsupported protocol version {protocol_version!r}")
        if reuse not in ("namespace", "refuse"):
            raise ValueError(f"reuse must be 'namespace' or 'refuse', not {reuse!r}")
        self.session_id = session_id
        self.protocol_version = protocol_version
        self.throttle = throttle or TextThrottle()
        self.reuse: Reuse = reuse
        self.allow_kinds = frozenset(allow_kinds)
        self._bridge = (bridge or V2ToV1Bridge()) if protocol_version == 1 else None
        self._on_loss = on_loss or _log_loss
        self._calls: dict[str, _Call] = {}  # the caller's id -> its current call
        self._used: set[str] = set()  # every toolCallId sent in this session
        self._texts: dict[str, _Call] = {}  # calls with an open growing text, by caller id
        self._terminals: dict[str, bool] = {}  # terminal id -> exited
        self._asks: dict[Any, tuple[v2.PermissionOption, ...]] = {}  # open permission requests
        self._out: list[Any] = []

    # ----------------------------------------------------------------------------------------
    # Tool calls

    def tool_call_id(self, call_id: str) -> str:
        """The ``toolCallId`` the client knows the caller's ``call_id`` by."""
        return self._get(call_id, open_only=False).tool_call_id

    def is_open(self, call_id: str) -> bool:
        """Whether ``call_id`` was started and has not reached a final status."""
        call = self._calls.get(call_id)
        return call is not None and not call.final

    def open_calls(self) -> list[str]:
        """The caller's ids of every started call without a final status, in start order."""
        return [cid for cid, call in self._calls.items() if not call.final]

    def start(
        self,
        call_id: str,
        *,
        title: str,
        kind: str | UnsetType = UNSET,
        status: str = "pending",
        name: str | UnsetType = UNSET,
        content: list[v2.ToolCallContent] | UnsetType = UNSET,
        locations: list[v2.ToolCallLocation] | UnsetType = UNSET,
        raw_input: Any = UNSET,
        raw_output: Any = UNSET,
        capabilities: v2.ToolCallCapabilities | UnsetType = UNSET,
        meta: dict[str, Any] | UnsetType = UNSET,
    ) -> list[Any]:
        """Report a new tool call; ``title`` is required and non-empty."""
        if not isinstance(title, str) or not title.strip():
            raise SenderError("title", "the first report of a tool call needs a non-empty title")
        if status in v2.FINAL_STATUSES:
            raise SenderError("status", "start a call before finishing it (use `finish`)")
        tool_call_id = self._new_id(call_id)
        fields = _fields(
            title=title, kind=kind, status=status, name=name, content=content,
            locations=locations, raw_input=raw_input, raw_output=raw_output,
            capabilities=capabilities, meta=meta,
        )  # fmt: skip
        _check_fields(fields)
        call = _Call(tool_call_id)
        patch = self._patch(call, fields)  # raises before the id is taken
        self._calls[call_id] = call
        self._used.add(tool_call_id)
        self._send_patch(call, patch)
        return self._take()

    def update(
        self,
        call_id: str,
        *,
        title: str | UnsetType | None = UNSET,
        kind: str | UnsetType | None = UNSET,
        status: str | UnsetType | None = UNSET,
        name: str | UnsetType | None = UNSET,
        content: list[v2.ToolCallContent] | UnsetType | None = UNSET,
        locations: list[v2.ToolCallLocation] | UnsetType | None = UNSET,
        raw_input: Any = UNSET,
        raw_output: Any = UNSET,
        capabilities: v2.ToolCallCapabilities | UnsetType | None = UNSET,
        meta: dict[str, Any] | UnsetType | None = UNSET,
    ) -> list[Any]:
        """Patch an open call: an omitted argument is unchanged, ``None`` clears.

        A final ``status`` is ``finish``'s job; ``content`` replaces the whole list (and closes
        an open growing text, whose unsent part is dropped).
        """
        if isinstance(status, str) and status in v2.FINAL_STATUSES:
            raise SenderError("status", f"{status!r} is final: use `finish`")
        call = self._get(call_id)
        fields = _fields(
            title=title, kind=kind, status=status, name=name, content=content,
            locations=locations, raw_input=raw_input, raw_output=raw_output,
            capabilities=capabilities, meta=meta,
        )  # fmt: skip
        _check_fields(fields)
        patch = self._patch(call, fields)  # raises before the text moves
        if content is not UNSET:
            self._texts.pop(call_id, None)
            call.text = None
        self._flush_text(call_id, call)
        self._send_patch(call, patch)
        return self._take()

    def append(self, call_id: str, item: v2.ToolCallContent) -> list[Any]:
        """Append one content item (a ``tool_call_content_chunk``): the cheap way to stream."""
        call = self._get(call_id)
        _check_item(item, "content")
        key = _key(item, "content")
        self._flush_text(call_id, call)
        self._append(call, item, key)
        return self._take()

    def grow_text(self, call_id: str, delta: str, *, now: float) -> list[Any]:
        """Add ``delta`` to the call's growing text item (opened on first use, at the end of
        its content). The first piece goes out at once as a chunk; later growth as throttled
        replacements of the whole content (see ``TextThrottle``)."""
        call = self._get(call_id)
        _check_str(delta, "delta")
        _key(delta, "delta")  # a piece JSON cannot carry would poison every later send
        text = call.text
        if text is None:
            if not delta:
                return []
            item = text_content(delta)
            call.text = _Text(len(call.items), delta, now)
            self._append(call, item, _key(item, "content"))
            return self._take()
        if delta:
            if text.pending == 0:
                text.first_pending = now
            text.parts.append(delta)
            text.pending += len(delta)
            self._texts[call_id] = call
        return self.poll(now)

    def end_text(self, call_id: str) -> list[Any]:
        """Send the rest of the growing text and close it: later items come after it."""
        call = self._get(call_id)
        self._flush_text(call_id, call)
        call.text = None
        return self._take()

    def poll(self, now: float) -> list[Any]:
        """Send the growing texts that are due at ``now``."""
        throttle = self.throttle
        for call_id, call in list(self._texts.items()):
            text = call.text
            if text is None:
                continue
            waited = now - text.last_sent >= throttle.min_interval
            grown = text.pending >= text.threshold(throttle)
            if waited and (grown or now - text.first_pending >= throttle.max_delay):
                self._flush_text(call_id, call, now)
        return self._take()

    def next_deadline(self) -> float | None:
        """When ``poll`` next has something to send (``None``: nothing is pending)."""
        throttle = self.throttle
        deadlines = []
        for call in self._texts.values():
            text = call.text
            if text is not None and text.pending:
                due = text.last_sent + throttle.min_interval
                if text.pending < text.threshold(throttle):
                    due = max(due, text.first_pending + throttle.max_delay)
                deadlines.append(due)
        return min(deadlines, default=None)

    def flush(self) -> list[Any]:
        """Send every pending growing text now (and what a coalescing bridge holds)."""
        for call_id, call in list(self._texts.items()):
            self._flush_text(call_id, call)
        if self._bridge is not None:
            self._bridged(self._bridge.flush(self.session_id))
        return self._take()

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
    ) -> list[Any]:
        """Give the call its final status (``completed``, ``failed`` or ``cancelled``).

        Pending text is flushed first; an advertised ``cancel`` capability is withdrawn. The
        call takes no more updates; its id can be started again as a new call.
        """
        if status not in v2.FINAL_STATUSES:
            raise SenderError("status", f"{status!r} is not final (completed|failed|cancelled)")
        call = self._get(call_id)
        fields = _fields(
            title=title, content=content, locations=locations, raw_output=raw_output, meta=meta,
            status=status,
        )  # fmt: skip
        _check_fields(fields)
        if "capabilities" in call.fields:
            fields["capabilities"] = None  # stop advertising `cancel` once final (7.10 item 8)
        patch = self._patch(call, fields)  # raises before the text moves
        if content is not UNSET:
            call.text = None
        else:
            self._flush_text(call_id, call)
        self._texts.pop(call_id, None)
        self._send_patch(call, patch)
        call.final = True
        call.fields, call.items, call.keys, call.meta, call.text = {}, [], [], {}, None
        return self._take()

    def finish_open(
        self, status: str, *, background: Iterable[str] = (), bug: bool = False
    ) -> list[Any]:
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
    ) -> list[Any]:
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
        self._send(_update_message(self.session_id, v2.OpaqueSessionUpdate(state)))
        return self._take()

    # ----------------------------------------------------------------------------------------
    # Terminals

    def start_terminal(
        self,
        terminal_id: str,
        *,
        command: str | UnsetType = UNSET,
        cwd: str | UnsetType = UNSET,
        size: v2.TerminalSize | UnsetType = UNSET,
        meta: dict[str, Any] | UnsetType = UNSET,
    ) -> list[Any]:
        """Announce a display terminal; show it in a call with ``v2.Terminal(terminal_id=...)``."""
        if not isinstance(terminal_id, str) or not terminal_id:
            raise SenderError("terminalId", "must be a non-empty string")
        if terminal_id in self._terminals:
            raise SenderError("terminalId", f"terminal id {terminal_id!r} was already used")
        for where, value, check in (
            ("command", command, _check_str),
            ("cwd", cwd, check_absolute_path),
            ("size", size, _check_size),
            ("_meta", meta, _check_meta),
        ):
            if value is not UNSET:
                check(value, where)
                _key(value, where)  # what JSON cannot carry is refused before the id is taken
        self._terminals[terminal_id] = False
        update = v2.TerminalUpdate(
            terminal_id=terminal_id, command=command, cwd=cwd, size=size, meta=meta
        )
        self._send(_update_message(self.session_id, update))
        return self._take()

    def terminal_output(self, terminal_id: str, data: bytes) -> list[Any]:
        """Append output bytes (a ``terminal_output_chunk``, base64-encoded on its own)."""
        self._terminal(terminal_id)
        if not data:
            return []
        chunk = v2.TerminalOutputChunk(
            terminal_id=terminal_id, data=base64.b64encode(bytes(data)).decode("ascii")
        )
        self._send(_update_message(self.session_id, chunk))
        return self._take()

    def exit_terminal(
        self, terminal_id: str, *, exit_code: int | None = None, signal: str | None = None
    ) -> list[Any]:
        """Report the terminal's process exit; the terminal takes no more output."""
        self._terminal(terminal_id)
        if exit_code is not None and not (type(exit_code) is int and -(2**63) <= exit_code < 2**63):
            raise SenderError("exitStatus.exitCode", f"not a 64-bit integer: {exit_code!r}")
        if signal is not None:
            _check_str(signal, "exitStatus.signal")
            _key(signal, "exitStatus.signal")
        status = v2.TerminalExitStatus(
            exit_code=UNSET if exit_code is None else exit_code,
            signal=UNSET if signal is None else signal,
        )
        self._terminals[terminal_id] = True
        update = v2.TerminalUpdate(terminal_id=terminal_id, exit_status=status)
        self._send(_update_message(self.session_id, update))
        return self._take()

    # ----------------------------------------------------------------------------------------
    # Permission requests

    def request_permission(
        self,
        call_id: str,
        *,
        request_id: int | str,
        title: str,
        description: str | UnsetType = UNSET,
        options: Sequence[v2.PermissionOption | tuple[str, str, str]] = DEFAULT_OPTIONS,
        subject_meta: dict[str, Any] | UnsetType = UNSET,
        kind: str | UnsetType | None = UNSET,
        status: str | UnsetType | None = UNSET,
        content: list[v2.ToolCallContent] | UnsetType | None = UNSET,
        locations: list[v2.ToolCallLocation] | UnsetType | None = UNSET,
        raw_input: Any = UNSET,
        meta: dict[str, Any] | UnsetType | None = UNSET,
    ) -> PermissionAsk:
        """Ask permission for an open call. ``title``/``description`` are the prompt's text;
        the tool-call fields, if any, are the call's own state, sent as the subject's patch.

        Pending text is flushed first. Read the answer with ``answer``.
        """
        call = self._get(call_id)
        if isinstance(status, str) and status in v2.FINAL_STATUSES:
            raise SenderError("status", "a call waiting for permission is not final")
        fields = _fields(
            kind=kind, status=status, content=content, locations=locations,
            raw_input=raw_input, meta=meta,
        )  # fmt: skip
        _check_fields(fields)
        request = self._check_prompt(request_id, title, description, options)
        intended = v2.ToolCallUpdate(tool_call_id=call.tool_call_id, **fields)
        check_subject(title, description, v2.ToolCallPermissionSubject(tool_call=intended))
        if subject_meta is not UNSET:
            _check_meta(subject_meta, "subject._meta")
            _key(subject_meta, "subject._meta")
        patched = self._patch(call, fields)  # raises before the text moves
        if content is not UNSET:
            self._texts.pop(call_id, None)
            call.text = None
        self._queue(self.flush())
        patch = v2.ToolCallUpdate(tool_call_id=call.tool_call_id, **patched)
        subject = v2.ToolCallPermissionSubject(tool_call=patch, meta=subject_meta)
        return self._ask(request_id, request, subject)

    def request_command_permission(
        self,
        *,
        request_id: int | str,
        title: str,
        command: v2.CommandPermissionSubject,
        description: str | UnsetType = UNSET,
        options: Sequence[v2.PermissionOption | tuple[str, str, str]] = DEFAULT_OPTIONS,
    ) -> PermissionAsk:
        """Ask permission to run a command (a subject from ``permissions.command_subject``)."""
        if not isinstance(command, v2.CommandPermissionSubject):
            raise SenderError("subject", "build the subject with `command_subject`")
        request = self._check_prompt(request_id, title, description, options)
        check_subject(title, description, command)
        self._queue(self.flush())
        return self._ask(request_id, request, command)

    def answer(self, response: Any) -> PermissionAnswer:
        """Read the client's JSON-RPC response to a request of ``request_permission``.

        A v1 client's answer is mapped to v2 first; what gives the v1 client's card back its
        own title and content after the prompt is queued and goes out first with the next
        messages (``flush()`` sends it at once). Raises ``KeyError`` for a response to no open
        request (already answered, or abandoned with ``abandon``).
        """
        data = response.data if isinstance(response, JsonRpcMessage) else response
        if not isinstance(data, Mapping):
            raise TypeError("expected a JSON-RPC response object")
        key = request_key(data.get("id"))
        options = self._asks.pop(key)
        if self._bridge is not None:
            converted = self._bridge.convert(dict(data))
            for loss in converted.losses:
                self._on_loss(loss)
            data = converted.messages[0] if converted.messages else data
            self._queue(list(converted.replies))  # to the v1 client: the call restored
        return parse_permission_answer(data, options, allow_kinds=self.allow_kinds)

    def abandon(self, request_id: int | str) -> PermissionAnswer:
        """Stop waiting for an answer (after ``session/cancel``): not approved; a late answer
        is then ignored (``answer`` raises ``KeyError`` for it). For a v1 client, what gives
        its card back its own title and content is queued and goes out with the next messages
        (``flush()`` sends it at once). Withdrawing the request from the client
        (``$/cancel_request``) is the transport's: it knows the id the request went out
        under (the official SDK sends it when the awaiting task is cancelled)."""
        if self._asks.pop(request_key(request_id), None) is not None and self._bridge is not None:
            withdrawn = self._bridge.withdraw(request_id)
            for loss in withdrawn.losses:
                self._on_loss(loss)
            self._queue([m for m in withdrawn.messages if not _is_cancel_request(m)])
        return PermissionAnswer(outcome="cancelled")

    # ----------------------------------------------------------------------------------------
    # Internals

    def _new_id(self, call_id: str) -> str:
        if not isinstance(call_id, str) or not call_id:
            raise SenderError("toolCallId", "must be a non-empty string")
        current = self._calls.get(call_id)
        if current is None and call_id not in self._used:
            return call_id
        if current is not None and not current.final:
            raise ToolCallIdReused("toolCallId", f"{call_id!r} is already open: use `update`")
        if self.reuse == "refuse":
            raise ToolCallIdReused("toolCallId", f"{call_id!r} already reached a final status")
        n = 2
        while f"{call_id}#{n}" in self._used:
            n += 1
        return f"{call_id}#{n}"

    def _get(self, call_id: str, *, open_only: bool = True) -> _Call:
        call = self._calls.get(call_id)
        if call is None:
            raise ToolCallNotOpen("toolCallId", f"{call_id!r} was never started")
        if open_only and call.final:
            raise ToolCallNotOpen("toolCallId", f"{call_id!r} already reached a final status")
        return call

    def _terminal(self, terminal_id: str) -> None:
        exited = self._terminals.get(terminal_id)
        if exited is None:
            raise SenderError("terminalId", f"terminal {terminal_id!r} was never started")
        if exited:
            raise SenderError("terminalId", f"terminal {terminal_id!r} already exited")

    def _patch(self, call: _Call, fields: Fields) -> Fields:
        """The minimal patch turning what the client holds into ``fields``; records it sent.

        Every value is encoded before anything is recorded: one that JSON cannot carry (a lone
        surrogate, a NaN, an integer out of range) raises ``SenderError`` with nothing changed.
        """
        keys = {attr: _keys_of(attr, value) for attr, value in fields.items()}
        out: Fields = {}
        for attr, value in fields.items():
            key = keys[attr]
            if attr == "content":
                self._patch_content(call, value, key, out)
            elif attr == "meta":
                self._patch_meta(call, value, key, out)
            elif value is None:
                if call.fields.pop(attr, None) is not None:
                    out[attr] = None
            else:
                if call.fields.get(attr) != key:
                    if attr == "name" and "name" in call.fields:
                        logger.warning(
                            "tool call %r changed its name to %r (D31: names should be stable)",
                            call.tool_call_id,
                            value,
                        )
                    call.fields[attr] = key
                    out[attr] = value
        return out

    @staticmethod
    def _patch_content(call: _Call, value: Any, keys: Any, out: Fields) -> None:
        if value is None:
            if call.items:
                out["content"] = None
            call.items, call.keys = [], []
            return
        if keys != call.keys:
            out["content"] = list(value)
            call.items, call.keys = list(value), keys

    @staticmethod
    def _patch_meta(call: _Call, value: Any, keys: Any, out: Fields) -> None:
        if value is None:
            if call.meta:
                out["meta"] = None
            call.meta = {}
            return
        patch: dict[str, Any] = {}
        for key, item in value.items():
            if item is None:
                if call.meta.pop(key, None) is not None:
                    patch[key] = None
                continue
            encoded = keys[key]
            if call.meta.get(key) != encoded:
                call.meta[key] = encoded
                patch[key] = item
        if patch:
            out["meta"] = patch

    def _send_patch(self, call: _Call, patch: Fields) -> None:
        if patch:  # else the client holds all of it already: nothing to send
            update = v2.SessionToolCallUpdate(tool_call_id=call.tool_call_id, **patch)
            self._send(_update_message(self.session_id, update))

    def _append(self, call: _Call, item: Any, key: bytes) -> None:
        call.items.append(item)
        call.keys.append(key)
        chunk = v2.ToolCallContentChunk(tool_call_id=call.tool_call_id, content=item)
        self._send(_update_message(self.session_id, chunk))

    def _flush_text(self, call_id: str, call: _Call, now: float | None = None) -> None:
        text = call.text
        self._texts.pop(call_id, None)
        if text is None or not text.pending:
            return
        whole = "".join(text.parts)
        text.parts = [whole]
        text.sent = len(whole)
        item = text_content(whole)
        call.items[text.index] = item
        call.keys[text.index] = _key(item, "content")
        text.pending = 0
        if now is not None:
            text.last_sent = now
        patch = v2.SessionToolCallUpdate(tool_call_id=call.tool_call_id, content=list(call.items))
        self._send(_update_message(self.session_id, patch))

    def _check_prompt(
        self,
        request_id: int | str,
        title: str,
        description: str | UnsetType,
        options: Sequence[v2.PermissionOption | tuple[str, str, str]],
    ) -> v2.RequestPermissionRequest:
        """Everything about a permission request that can fail, checked before state moves;
        the subject is filled in by ``_ask``."""
        if isinstance(request_id, bool) or not isinstance(request_id, (int, str)):
            raise SenderError("id", "a JSON-RPC request id is an integer or a string")
        if request_key(request_id) in self._asks:
            raise SenderError("id", f"request id {request_id!r} is still waiting for an answer")
        return permission_request(
            self.session_id, title=title, description=description, options=options
        )

    def _ask(
        self, request_id: int | str, request: v2.RequestPermissionRequest, subject: Any
    ) -> PermissionAsk:
        request = replace(request, subject=subject)
        checked = tuple(request.options)
        key = request_key(request_id)
        message = v2.PermissionRequestMessage(id=request_id, params=request)
        settled = None
        if self._bridge is None:
            self._out.append(message)
        else:
            replies = self._bridged(self._bridge.convert(message))
            if replies:  # the bridge answered for a v1 client that cannot be asked
                settled = parse_permission_answer(replies[0], checked)
        if settled is None:
            self._asks[key] = checked
        return PermissionAsk(
            request_id=request_id, messages=tuple(self._take()), options=checked, settled=settled
        )

    def _send(self, message: Any) -> None:
        if self._bridge is None:
            self._out.append(message)
        else:
            self._bridged(self._bridge.convert(message))

    def _bridged(self, converted: Any) -> list[Any]:
        """Queue a bridge result's messages; returns its replies."""
        for loss in converted.losses:
            self._on_loss(loss)
        self._out.extend(converted.messages)
        return list(converted.replies)

    def _queue(self, messages: list[Any]) -> None:
        # `self._out.extend(self.flush())` would extend the list `flush` just took away.
        self._out.extend(messages)

    def _take(self) -> list[Any]:
        out, self._out = self._out, []
        return out


def _log_loss(loss: Loss) -> None:
    logger.info("not carried to the v1 client: %s", loss)


def _fields(**values: Any) -> Fields:
    return {name: value for name, value in values.items() if value is not UNSET}


def _check_fields(fields: Fields) -> None:
    for attr, value in fields.items():
        if value is not None:
            _CHECKS[attr](value, _WIRE_NAMES[attr])


def _is_cancel_request(message: Any) -> bool:
    return isinstance(message, JsonRpcMessage) and message.method == "$/cancel_request"


def _update_message(session_id: str, update: Any) -> v2.SessionUpdateMessage:
    return v2.SessionUpdateMessage(
        params=v2.UpdateSessionNotification(session_id=session_id, update=update)
    )
