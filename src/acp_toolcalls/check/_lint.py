"""Tool-call lint: sender mistakes that are schema-valid but break clients.

Rules this module owns (D46 (permissions, sender obligations, its evidence rows); D10, D17, D20,
D23, D24). Every finding has a stable code, a message and the JSON path it is about:

- ``missing-title``: the first report of a ``toolCallId`` in a session carries no non-empty
  ``title`` (D10, D24: the client has nothing to show). v2: the first report may be a
  ``tool_call_update``, a ``tool_call_content_chunk`` or a permission ``subject.toolCall``. v1: a
  ``tool_call_update`` or a permission ``toolCall`` for an unseen id, or a ``tool_call`` with an
  empty title (v1 ``tool_call`` requires ``title``; a missing one is a schema violation).
- ``custom-value-prefix`` (v2 only; v1 enums are closed and the schema reports them): a value of
  an open enum or discriminator that is neither known nor ``_``-prefixed (D46, obligation 3): tool
  ``kind``, ``status``, permission option ``kind``, tool-call content ``type``, content block
  ``type``, diff ``operation``, ``fileType``, patch ``format``, permission subject ``type`` and
  ``sessionUpdate``. Update types the v2 schema knows (``agent_message_chunk``, ...; with
  ``known``, those too: ``validate --unstable``) are known though the codec carries
  them opaquely; removed v1 types (``tool_call``, ``plan``, ``current_mode_update``) are
  reported with a pointer to D17.
- ``recreated-after-final``: a tool call that reached ``completed``/``failed``/``cancelled``
  later gets a non-final status (v2 ``status: null`` resets to ``pending``, so it counts; a v1
  ``null`` means "unchanged" and does not, nor does a status v1 does not define, such as a
  leaked ``cancelled``, which a v1 client does not apply: D32), or, in v1, a new ``tool_call``
  (D20, D23). A history replay is no re-creation (D44): after a ``session/load`` (v1) or
  a ``session/resume`` with ``replayFrom`` (v2), from its first tool-call report until the
  answer, the session starts over (``_replays``) and every call is new, as to the client.
- ``never-final``: at the end of the log a tool call has no final status (D46, its evidence
  rows). Reported at the line and path of its last update. Exempt: the session's latest
  ``state_update`` is ``idle`` and its well-formed ``background`` names it (D46, obligation 8).
- ``prompt-in-tool-call`` (v2): a permission request whose ``subject.toolCall`` ``title`` or a
  text content item equals or contains the request's own ``title`` or ``description``
  (whitespace-normalised; empty strings ignored): prompt copy that would overwrite the displayed
  tool call (D46 (permissions, evidence: prompt text)). A text the call already shows (its title, a
  text item of its content, exactly) overwrites nothing and is not reported (D44).
- ``invalid-base64`` (v2): a ``terminal_output_chunk`` ``data`` that is not valid base64 (bad
  padding, stray characters): a client drops the chunk (D22). (In a ``terminal_update``
  ``output.data`` it is an invalid value the decoder reads as omitted and reports.)
- ``lint-limit``: more than ``max_calls`` tool calls (default ``MAX_CALLS``) are tracked; the
  oldest finished ones, then the oldest open ones, are forgotten, so their id reuse, final
  status and first title are no longer checked. Reported once per forgotten block.

State is kept per ``(sessionId, toolCallId)``, at most ``max_calls`` of them, with a hash of
its shown title and texts; per session, its epoch (``_replays``). The linter is sans-I/O: it is
fed decoded messages (``decode_message`` values) in log order with an opaque position (the
line number) and returns findings; ``finish()`` returns the end-of-log ones.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from msgspec import UNSET

from .. import v1, v2
from ..codec import DecodeError, decode
from ..models import Batch, JsonRpcMessage, base64_bytes
from ._known import KNOWN_V2_SESSION_UPDATES, KNOWN_V2_VALUES, REMOVED_V1_UPDATES
from ._replays import Replays

__all__ = [
    "CODES",
    "KNOWN_V2_SESSION_UPDATES",
    "KNOWN_V2_VALUES",
    "MAX_CALLS",
    "Finding",
    "FindingKind",
    "ToolCallLinter",
]

FindingKind = Literal["schema", "lint", "decode"]


@dataclass(frozen=True)
class Finding:
    """One problem at one place: ``line`` is the position the caller fed, ``path`` a JSON path."""

    line: int
    path: str
    code: str
    message: str
    kind: FindingKind = "lint"


CODES: Mapping[str, str] = {
    "missing-title": "first report of a tool call without a non-empty title",
    "custom-value-prefix": "unknown enum or discriminator value without the `_` prefix",
    "recreated-after-final": "a finished tool call is re-created or made non-final again",
    "never-final": "a tool call never reaches a final status",
    "prompt-in-tool-call": "permission prompt text inside the tool-call subject",
    "invalid-base64": "terminal output that is not valid base64 (the client drops it)",
    "lint-limit": "too many tool calls to track: the oldest are no longer checked",
}
"""The lint codes and what each means."""

_FINAL = v2.FINAL_STATUSES
_V1_STATUSES = v1.TOOL_CALL_ENUMS["status"]
_WHITESPACE = re.compile(r"\s+")

MAX_CALLS = 100_000
"""Tool calls the linter tracks by default; past it the oldest are forgotten (``lint-limit``)."""


def _norm(text: str) -> str:
    return _WHITESPACE.sub(" ", text).strip()


def _quote(text: str, limit: int = 60) -> str:
    shown = text if len(text) <= limit else text[: limit - 3] + "..."
    return repr(shown)


def _has_title(title: object) -> bool:
    # D24: an empty (or blank) title displays as nothing, so it counts as missing.
    return isinstance(title, str) and bool(title.strip())


def _text(item: Any) -> str | None:  # a v2 text content item's text
    if isinstance(item, v2.Content) and isinstance(item.content, v2.TextContent):
        return item.content.text
    return None


def _child(raw: Any, key: str) -> Any:
    return raw.get(key) if isinstance(raw, dict) else None


def _kept_items(
    decoded: Sequence[Any], raw: Any, path: str, item_type: Any
) -> Iterator[tuple[Any, str, Any]]:
    """``(item, raw path, raw item)`` for each decoded element of a skip-invalid-items list.

    The lenient reader drops invalid elements, so decoded index ``i`` is not the raw index when
    something before it was dropped. When the raw array is at hand and longer, the kept raw
    elements are found again by reading each one alone (rare: only salvaged messages).
    """
    indices: Sequence[int] = range(len(decoded))
    if isinstance(raw, list) and len(raw) != len(decoded):
        kept: list[int] = []
        for index, element in enumerate(raw):
            try:
                decode(element, item_type)
            except DecodeError:
                continue
            kept.append(index)
        if len(kept) == len(decoded):
            indices = kept
    for item, index in zip(decoded, indices, strict=True):
        raw_item = raw[index] if isinstance(raw, list) and index < len(raw) else None
        yield item, f"{path}[{index}]", raw_item


# --------------------------------------------------------------------------------------------
# The linter


_NO_TEXTS: frozenset[int] = frozenset()


@dataclass(slots=True)
class _Call:
    """What the linter remembers about one tool call."""

    status: str  # the status as last set ("pending" until told)
    final_line: int  # where it became final (meaningful while final)
    line: int  # position of its last report
    path: str  # JSON path of its last report
    epoch: int  # its session's epoch when first reported (_replays)
    title: int | None = None  # hash of the title shown (v2; None: none)
    texts: frozenset[int] = _NO_TEXTS  # hashes of the text items shown (v2)

    @property
    def final(self) -> bool:
        return self.status in _FINAL


class ToolCallLinter:
    """Feed decoded messages in log order; collect findings; call ``finish()`` at the end."""

    def __init__(self, *, max_calls: int | None = MAX_CALLS, known: Iterable[str] = ()) -> None:
        self.max_calls = max_calls
        self._known_updates = KNOWN_V2_SESSION_UPDATES | frozenset(known)
        self._calls: dict[tuple[str, str], _Call] = {}
        # Per session: tool-call ids listed as background work by its latest state_update, when
        # that update was `idle` with a well-formed list; otherwise absent.
        self._idle_background: dict[str, frozenset[str]] = {}
        self._replays = Replays()
        self._line = 0
        self._out: list[Finding] = []
        self._dispatch: Mapping[type, Callable[[Any, str, Any], None]] = {
            v2.SessionUpdateMessage: self._v2_update_message,
            v2.PermissionRequestMessage: self._v2_permission,
            v1.SessionUpdateMessage: self._v1_update_message,
            v1.PermissionRequestMessage: self._v1_permission,
            JsonRpcMessage: lambda message, path, raw: self._replays.message(message.data),
        }

    # -- public --------------------------------------------------------------------------------

    def feed(self, value: Any, line: int, raw: Any = None) -> list[Finding]:
        """Lint one decoded line (a message or a ``Batch``); ``raw`` is its parsed JSON, if known.

        ``raw`` only sharpens paths into arrays the lenient reader shortened. Messages outside
        the tool-call surface (``JsonRpcMessage``) and unreadable batch elements are ignored.
        """
        self._line = line
        self._out = []
        if isinstance(value, Batch):
            for index, item in enumerate(value.items):
                raw_item = raw[index] if isinstance(raw, list) and index < len(raw) else None
                self._message(item, f"$[{index}]", raw_item)
        else:
            self._message(value, "$", raw)
        return self._out

    def feed_element(self, value: Any, line: int, path: str, raw: Any = None) -> list[Finding]:
        """Lint one message of a batch line, ``value`` decoded on its own, at ``path``
        (``$[i]``): what ``feed`` of the whole batch gives for that element."""
        self._line = line
        self._out = []
        self._message(value, path, raw)
        return self._out

    def finish(self) -> list[Finding]:
        """End of the log: ``never-final`` for every open call, in order of last report."""
        out = []
        for (session, call_id), call in self._calls.items():
            replayed = call.epoch != self._replays.epoch(session)  # its session started over
            if replayed or call.final or call_id in self._idle_background.get(session, ()):
                continue
            out.append(
                Finding(
                    call.line,
                    call.path,
                    "never-final",
                    f"tool call {_quote(call_id)} never reached a final status "
                    f"(last status {call.status!r}); report completed, failed or cancelled",
                )
            )
        out.sort(key=lambda finding: finding.line)
        return out

    # -- helpers -------------------------------------------------------------------------------

    def _report(self, path: str, code: str, message: str) -> None:
        self._out.append(Finding(self._line, path, code, message))

    def _message(self, message: Any, path: str, raw: Any) -> None:
        # By MRO, not exact type: a message carrying unknown keys is a subclass (wire.py).
        for cls in type(message).__mro__:
            handler = self._dispatch.get(cls)
            if handler is not None:
                handler(message, path, raw)
                return

    def _custom(self, what: str, value: object, path: str) -> None:
        """``custom-value-prefix`` when ``value`` is a string neither known nor ``_``-prefixed."""
        known = self._known_updates if what == "sessionUpdate" else KNOWN_V2_VALUES[what]
        if not isinstance(value, str) or value in known or value.startswith("_"):
            return
        hint = REMOVED_V1_UPDATES.get(value) if what == "sessionUpdate" else None
        detail = hint or "custom values must start with `_`; others are reserved for ACP"
        self._report(path, "custom-value-prefix", f"unknown {what} {value!r}: {detail}")

    def _current(self, session: str, call_id: str) -> _Call | None:
        """The call as a client knows it at a report: ``None`` when unseen or last seen before a
        history replay started its session over (D44: new to the client, not re-created)."""
        key = (session, call_id)
        call = self._calls.get(key)
        if call is not None and call.epoch != self._replays.report(session):
            del self._calls[key]
            return None
        return call

    def _touch(self, session: str, call_id: str, path: str, title: object) -> _Call | None:
        """Record a report of a tool call; returns its previous state (``None`` when new)."""
        key = (session, call_id)
        call = self._current(session, call_id)
        if call is None:
            if not _has_title(title):
                shown = "an empty title" if title is not UNSET else "no title"
                self._report(
                    path,
                    "missing-title",
                    f"first report of tool call {_quote(call_id)} has {shown}; "
                    "clients have nothing to display (send `title` on the first report)",
                )
            self._calls[key] = _Call("pending", 0, self._line, path, self._replays.report(session))
            if self.max_calls is not None and len(self._calls) > self.max_calls:
                self._forget(key, self.max_calls)
            return None
        call.line, call.path = self._line, path
        return call

    def _forget(self, keep: tuple[str, str], cap: int) -> None:
        """Past the cap: forget a block of calls, the oldest finished ones first."""
        count = max(1, cap // 8)
        epoch = self._replays.epoch
        victims = [
            k for k, c in self._calls.items() if (c.final or c.epoch != epoch(k[0])) and k != keep
        ][:count]
        finished = len(victims)
        if finished < count:
            chosen = set(victims)
            for k in self._calls:
                if len(victims) == count:
                    break
                if k != keep and k not in chosen:
                    victims.append(k)
        for k in victims:
            del self._calls[k]
        self._report(
            "$",
            "lint-limit",
            f"more than {cap} tool calls to track: forgot the {finished} oldest finished and "
            f"{len(victims) - finished} oldest open one(s); their id reuse, final status and "
            "first title are no longer checked",
        )

    def _set_status(self, session: str, call_id: str, status: str, path: str) -> None:
        call = self._calls[(session, call_id)]
        if call.final and status not in _FINAL:
            self._report(
                path,
                "recreated-after-final",
                f"tool call {_quote(call_id)} reached {call.status!r} on line {call.final_line} "
                f"and now gets status {status!r}; use a new toolCallId for new work",
            )
        if status in _FINAL and not call.final:
            call.final_line = self._line
        call.status = status

    # -- v2 ------------------------------------------------------------------------------------

    def _v2_update_message(self, message: v2.SessionUpdateMessage, path: str, raw: Any) -> None:
        session = message.params.session_id
        update = message.params.update
        upath = f"{path}.params.update"
        raw_update = _child(_child(raw, "params"), "update")
        if isinstance(update, v2.SessionToolCallUpdate):
            self._v2_tool_call(session, update, upath, raw_update)
        elif isinstance(update, v2.ToolCallContentChunk):
            self._touch(session, update.tool_call_id, upath, UNSET)
            self._v2_content_item(update.content, f"{upath}.content")
        elif isinstance(update, v2.TerminalOutputChunk):
            self._base64(update.data, f"{upath}.data")
        elif isinstance(update, v2.OpaqueSessionUpdate):
            self._custom("sessionUpdate", update.tag, f"{upath}.sessionUpdate")
            if update.tag == "state_update":
                self._state_update(session, update.data)

    def _v2_tool_call(self, session: str, update: v2.ToolCallUpdate, path: str, raw: Any) -> None:
        self._touch(session, update.tool_call_id, path, update.title)
        call = self._calls[(session, update.tool_call_id)]
        if update.title is not UNSET:  # what the client shows now (D46: null unsets)
            call.title = hash(update.title) if isinstance(update.title, str) else None
        if update.content is not UNSET:
            texts = [hash(t) for i in update.content or () if (t := _text(i)) is not None]
            call.texts = frozenset(texts) if texts else _NO_TEXTS
        self._custom("tool kind", update.kind, f"{path}.kind")
        self._custom("tool call status", update.status, f"{path}.status")
        if update.status is not UNSET:
            # A v2 null resets the status to pending (D46 (tool-call update)).
            status = "pending" if update.status is None else update.status
            self._set_status(session, update.tool_call_id, status, f"{path}.status")
        if isinstance(update.content, list):
            for item, item_path, raw_item in _kept_items(
                update.content, _child(raw, "content"), f"{path}.content", v2.ToolCallContent
            ):
                self._v2_content_item(item, item_path, raw_item)

    def _v2_content_item(self, item: Any, path: str, raw: Any = None) -> None:
        if isinstance(item, v2.UnknownToolCallContent):
            self._custom("tool call content type", item.tag, f"{path}.type")
        elif isinstance(item, v2.Content):
            if isinstance(item.content, v2.UnknownContentBlock):
                self._custom("content block type", item.content.tag, f"{path}.content.type")
        elif isinstance(item, v2.Diff):
            for change, change_path, _ in _kept_items(
                item.changes, _child(raw, "changes"), f"{path}.changes", v2.DiffChange
            ):
                if isinstance(change, v2.UnknownDiffChange):
                    self._custom("diff operation", change.tag, f"{change_path}.operation")
                else:
                    self._custom("diff fileType", change.file_type, f"{change_path}.fileType")
            if isinstance(item.patch, v2.DiffPatch):
                self._custom("diff patch format", item.patch.format, f"{path}.patch.format")

    def _base64(self, data: str, path: str) -> None:
        if base64_bytes(data) is None:
            self._report(
                path,
                "invalid-base64",
                f"terminal output {_quote(data, 24)} is not valid base64 (padded, no stray "
                "characters): a client cannot decode it and the chunk is dropped",
            )

    def _state_update(self, session: str, data: Mapping[str, Any]) -> None:
        # A malformed list is "not reported" (D46 (state updates)): one bad element voids it.
        listed = v2.background_work(data) if data.get("state") == "idle" else None
        if listed is not None:
            self._idle_background[session] = listed[0]
        else:
            self._idle_background.pop(session, None)

    def _v2_permission(self, message: v2.PermissionRequestMessage, path: str, raw: Any) -> None:
        params = message.params
        ppath = f"{path}.params"
        for index, option in enumerate(params.options):
            self._custom("permission option kind", option.kind, f"{ppath}.options[{index}].kind")
        subject = params.subject
        if isinstance(subject, v2.UnknownPermissionSubject):
            self._custom("permission subject type", subject.tag, f"{ppath}.subject.type")
        elif isinstance(subject, v2.ToolCallPermissionSubject):
            tpath = f"{ppath}.subject.toolCall"
            raw_call = _child(_child(_child(raw, "params"), "subject"), "toolCall")
            call = self._current(params.session_id, subject.tool_call.tool_call_id)
            before = (call.title, call.texts) if call is not None else (None, _NO_TEXTS)
            self._v2_tool_call(params.session_id, subject.tool_call, tpath, raw_call)
            self._prompt_in_tool_call(params, subject.tool_call, tpath, raw_call, before)

    def _prompt_in_tool_call(
        self,
        params: v2.RequestPermissionRequest,
        call: v2.ToolCallUpdate,
        path: str,
        raw: Any,
        before: tuple[int | None, frozenset[int]],  # the title and texts shown before it
    ) -> None:
        prompts = [
            (name, _norm(text))
            for name, text in (("title", params.title), ("description", params.description))
            if isinstance(text, str) and _norm(text)
        ]
        if not prompts:
            return
        # Issue 29: agents repeat the call's title as the prompt, which overwrites nothing.
        title, texts = before
        fields: list[tuple[str, str]] = []  # (path, tool-call text the request would show)
        if isinstance(call.title, str) and hash(call.title) != title:
            fields.append((f"{path}.title", call.title))
        if isinstance(call.content, list):
            for item, item_path, _ in _kept_items(
                call.content, _child(raw, "content"), f"{path}.content", v2.ToolCallContent
            ):
                text = _text(item)
                if text is not None and hash(text) not in texts:
                    fields.append((f"{item_path}.content.text", text))
        for field_path, text in fields:
            shown = _norm(text)
            for name, prompt in prompts:
                if prompt in shown:
                    self._report(
                        field_path,
                        "prompt-in-tool-call",
                        f"the permission request's {name} {_quote(prompt)} is repeated in the "
                        "tool call, where it would overwrite what the client displays; keep "
                        "prompt text in the request's title/description",
                    )
                    break

    # -- v1 ------------------------------------------------------------------------------------

    def _v1_update_message(self, message: v1.SessionUpdateMessage, path: str, raw: Any) -> None:
        session = message.params.session_id
        update = message.params.update
        upath = f"{path}.params.update"
        if isinstance(update, v1.ToolCall):
            self._v1_tool_call(session, update, upath)
        elif isinstance(update, v1.SessionToolCallUpdate):
            self._v1_update(session, update, upath)

    def _v1_tool_call(self, session: str, create: v1.ToolCall, path: str) -> None:
        previous = self._touch(session, create.tool_call_id, path, create.title)
        if previous is not None and previous.final:
            self._report(
                path,
                "recreated-after-final",
                f"tool call {_quote(create.tool_call_id)} reached {previous.status!r} on line "
                f"{previous.final_line} and is created again; use a new toolCallId",
            )
        status = create.status if create.status in _V1_STATUSES else None
        # D9: a repeated `tool_call` merges, and its default `pending` counts as omitted.
        if status is not None and (previous is None or status != "pending"):
            call = self._calls[(session, create.tool_call_id)]
            if status in _FINAL and not call.final:
                call.final_line = self._line
            call.status = status

    def _v1_update(self, session: str, update: v1.ToolCallUpdate, path: str) -> None:
        self._touch(session, update.tool_call_id, path, update.title)
        # v1 null means "unchanged" (D8), and so does a status v1 does not define (D32).
        if isinstance(update.status, str) and update.status in _V1_STATUSES:
            self._set_status(session, update.tool_call_id, update.status, f"{path}.status")

    def _v1_permission(self, message: v1.PermissionRequestMessage, path: str, raw: Any) -> None:
        params = message.params
        self._v1_update(params.session_id, params.tool_call, f"{path}.params.toolCall")
