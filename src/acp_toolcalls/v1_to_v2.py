"""The stateless v1 -> v2 tool-call mapping (shared/spec/TOOL-CALLS.md 9.3-9.5, 9.10).

Rules this module owns:

- A v1 ``tool_call`` and a v1 ``tool_call_update`` both become one plain v2
  ``ToolCallUpdate`` (a patch); no state is needed.
- A v1 ``null`` never becomes a v2 clear: on a tool-call field it reads as omitted (D8).
- A v1 ``tool_call`` cannot tell an omitted field from its default, so the defaults
  (``kind: "other"``, ``status: "pending"``, ``content: []``, ``locations: []``) are omitted
  as well and a repeated create merges instead of resetting (D9). ``title`` is always applied.
- A v1 ``tool_call_update`` copies every value it carries; ``[]`` stays ``[]`` (the only clear
  v1 can express).
- Enum strings are copied verbatim, unknown ones included (D32): v2 enums are open, so a
  leaked ``"cancelled"`` becomes a real v2 ``cancelled``.
- Content blocks are copied. A value v2 constrains and v1 does not (``annotations.priority``
  outside [0, 1], a negative ``size``) is dropped. A location ``line: 0`` means "no line" and
  is dropped (D7). Item-level ``_meta`` is copied.
- A v1 diff becomes a v2 ``add`` (``oldText`` omitted or ``null``) or ``modify`` (any string,
  ``""`` included: D26) with ``fileType: "text"`` and a generated Git patch (9.5), which is
  omitted when the old and new texts are equal.
- A v1 terminal names a client-owned resource that v2 has no equivalent for (D38): strict mode
  raises ``ConversionError``, lossy mode drops the item.
- Unknown keys of v1 objects are not carried across versions (D19).
- A v1 permission request becomes a v2 one about the tool call; its prompt ``title`` is the
  call's title, else a title the caller remembers, else ``"Permission required"`` (D37). With
  no options it cannot be sent (v2 needs one; D5).
- Session updates (9.8): ``tool_call``/``tool_call_update`` as above; message chunks keep their
  variant but need a ``messageId`` v1 may lack; ``plan`` becomes the ``plan_update`` of one fixed
  plan id; commands and config options are renamed into their v2 shapes; the other shared
  variants are copied; ``current_mode_update`` and unknown updates are dropped.
- Everything dropped is reported as a ``Loss`` with its JSON path. Only what the target cannot
  represent depends on ``strict`` (terminals, missing titles and ``messageId``s, dropped
  updates); the other drops are the mapping itself, the same in both modes.

Theory of operation: tool-call fields are converted through ``_TOOL_CALL_FIELDS`` (one row per
field: wire key, converter, and which value a v1 create cannot tell from omitted); content items
through ``_ITEMS``; every other v1 object is copied field by field into its v2 class through
``_STRUCTS``, which names the few fields that need a conversion. Session updates other than
tool calls are opaque JSON values in the models and are mapped as JSON through
``_OPAQUE_TO_V2`` (shared with ``v2_to_v1``, which has the mirror table).
"""

from __future__ import annotations

import difflib
import json
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from functools import cache
from itertools import islice
from typing import Any, TypeVar, cast

import msgspec
from msgspec import UNSET

from . import v1, v2
from .codec import Protocol, decode, to_builtins
from .lenient import DecodeError, Diagnostic
from .loss import NO_LOSSES, UNKNOWN_KEY, ConversionError, Loss, LossReport, unknown_keys
from .wire import WireStruct

__all__ = [
    "DEFAULT_PERMISSION_TITLE",
    "V1_PLAN_ID",
    "content_to_v2",
    "diff_to_v2",
    "git_patch",
    "permission_request_to_v2",
    "session_update_to_v2",
    "tool_call_to_v2",
    "tool_call_update_to_v2",
]

V = TypeVar("V")


class _Losses:
    """Collects the losses of one conversion; raises in strict mode where the spec says so."""

    __slots__ = ("found", "strict")

    def __init__(self, strict: bool) -> None:
        self.strict = strict
        self.found: list[Loss] = []

    def lost(self, path: str, reason: str) -> None:
        """Something dropped by the mapping itself, in every mode."""
        self.found.append(Loss(path, reason))

    def unrepresentable(self, path: str, reason: str) -> None:
        """Something the target cannot represent: strict raises, lossy drops and reports."""
        self.instead(path, reason, "dropped")

    def instead(self, path: str, reason: str, done: str) -> None:
        """Something the target cannot represent: strict raises; lossy reports ``done``."""
        if self.strict:
            raise ConversionError(path, reason)
        self.found.append(Loss(path, f"{reason}; {done}"))

    def report(self) -> LossReport:
        return LossReport(self.found) if self.found else NO_LOSSES


def _key_path(path: str, key: str) -> str:
    # Same form as the lenient reader's diagnostics, so both point into a message alike.
    return f"{path}.{key}" if key.isidentifier() else f"{path}[{json.dumps(key)}]"


def _lookup(table: Mapping[type[Any], V], obj: object) -> V:
    # An object that carries unknown keys is an instance of a same-named subclass (wire.py).
    for cls in type(obj).__mro__:
        found = table.get(cls)
        if found is not None:
            return found
    raise TypeError(f"not a v1 tool-call object: {type(obj).__name__}")


def _report_extra(obj: WireStruct, path: str, losses: _Losses) -> None:
    for loss in unknown_keys(obj, path):
        losses.lost(loss.path, loss.reason)


# --------------------------------------------------------------------------------------------
# Git patches (9.5)

_NO_NEWLINE = "\\ No newline at end of file\n"


_C_ESCAPES = {
    '"': '\\"',
    "\\": "\\\\",
    "\a": "\\a",
    "\b": "\\b",
    "\t": "\\t",
    "\n": "\\n",
    "\v": "\\v",
    "\f": "\\f",
    "\r": "\\r",
}


def _quote_table() -> tuple[str, ...]:
    # Git's quote_c_style: `"` and `\` escaped, C escapes for \a \b \t \n \v \f \r, octal for
    # every other control byte, DEL and every byte of a non-ASCII character.
    table = [chr(b) if 0x20 <= b < 0x7F else f"\\{b:03o}" for b in range(256)]
    for char, escaped in _C_ESCAPES.items():
        table[ord(char)] = escaped
    return tuple(table)


_QUOTE = _quote_table()


def _git_path(path: str) -> str:
    """``path`` as Git writes it in patch headers: as is, or double-quoted and C-escaped."""
    raw = path.encode("utf-8", "surrogatepass")
    quoted = "".join(_QUOTE[b] for b in raw)
    if len(quoted) == len(raw):  # no byte needed escaping
        return path
    return f'"{quoted}"'


def _lines(text: str) -> list[str]:
    # Git lines end at "\n" only (str.splitlines would also split at "\r", "\x0c", ...).
    lines = [line + "\n" for line in text.split("\n")]
    lines[-1] = lines[-1][:-1]
    if not lines[-1]:
        lines.pop()
    return lines


def git_patch(path: str, old: str | None, new: str) -> str:
    """A ``git_patch`` text turning ``old`` into ``new`` (``old=None``: a new file).

    One ``diff --git`` section in Git's format with absolute, unprefixed paths (spec 9.5):
    ``new file mode 100644`` and ``--- /dev/null`` for a new file, unified hunks with 3 lines
    of context and Git hunk headers, and ``\\ No newline at end of file`` after a side's last
    line when it has no trailing newline. Returns ``""`` for an existing file whose text does
    not change, as Git writes nothing for it (and rejects a section without hunks).
    """
    if old is not None and old == new:
        return ""
    name = _git_path(path)
    if old is None:
        head = f"diff --git {name} {name}\nnew file mode 100644\n--- /dev/null\n+++ {name}\n"
    else:
        head = f"diff --git {name} {name}\n--- {name}\n+++ {name}\n"
    out = [head]
    hunks = difflib.unified_diff(_lines(old or ""), _lines(new), n=3, lineterm="\n")
    for line in islice(hunks, 2, None):  # difflib's own ---/+++ lines are replaced by `head`
        # Only a side's last line can lack its newline; difflib leaves it bare.
        out.append(line if line.endswith("\n") else f"{line}\n{_NO_NEWLINE}")
    return "".join(out)


def diff_to_v2(item: v1.Diff) -> v2.Diff:
    """A v1 whole-file diff as a v2 diff: one ``add``/``modify`` change and a Git patch.

    ``oldText`` omitted or ``null`` is a new file (``add``); any string, ``""`` included, is
    the previous content of an existing file (``modify``, D26). The patch is omitted when the
    texts are equal. The item ``_meta`` is copied; unknown keys are not (see ``content_to_v2``).
    """
    old = item.old_text if isinstance(item.old_text, str) else None
    change: v2.DiffChange
    if old is None:
        change = v2.AddDiffChange(path=item.path, file_type="text")
    else:
        change = v2.ModifyDiffChange(path=item.path, file_type="text")
    patch: v2.DiffPatch | msgspec.UnsetType = UNSET
    if old != item.new_text:
        patch = v2.DiffPatch(format="git_patch", text=git_patch(item.path, old, item.new_text))
    return v2.Diff(changes=[change], patch=patch, meta=_copy_meta(item.meta))


# --------------------------------------------------------------------------------------------
# Content


def _copy_meta(meta: Any) -> Any:
    # A fresh dict: the receiver (a store merging by key) must not share the sender's object.
    return dict(meta) if isinstance(meta, dict) else meta


_Fix = Callable[[Any, str, _Losses], Any]
"""Converts one non-null field value at ``path``; returns ``UNSET`` to drop the field."""


def _copy_fields(
    obj: WireStruct,
    target: type[WireStruct],
    fixes: Mapping[str, _Fix],
    path: str,
    losses: _Losses,
    *,
    fix_nulls: bool,
) -> Any:
    """``obj`` copied into ``target`` field by field, through ``fixes`` where one is named (for
    a ``null`` value too when ``fix_nulls``); unknown keys are reported (D19)."""
    _report_extra(obj, path, losses)
    values: dict[str, Any] = {}
    for name, key in _field_keys(type(obj)):
        value = getattr(obj, name)
        if value is UNSET:
            continue
        fix = fixes.get(name)
        if fix is not None and (fix_nulls or value is not None):
            value = fix(value, _key_path(path, key), losses)
            if value is UNSET:
                continue
        values[name] = value
    return target(**values)


def _struct(obj: WireStruct, path: str, losses: _Losses) -> Any:
    """``obj`` copied into its v2 class (``_STRUCTS``), field by field."""
    target, fixes = _lookup(_STRUCTS, obj)
    # A nested `null` means "none" in v2 too: copied, never fixed.
    return _copy_fields(obj, target, fixes, path, losses, fix_nulls=False)


@cache
def _field_keys(cls: type[WireStruct]) -> tuple[tuple[str, str], ...]:
    return tuple((f.name, f.encode_name) for f in msgspec.structs.fields(cls))


def _priority(value: float, path: str, losses: _Losses) -> Any:
    if 0.0 <= value <= 1.0:
        return value
    losses.lost(path, f"priority {value!r} is outside [0, 1], which v2 requires; dropped")
    return UNSET


def _size(value: int, path: str, losses: _Losses) -> Any:
    if value >= 0:
        return value
    losses.lost(path, f"negative size {value} is invalid in v2; dropped")
    return UNSET


def _line(value: int, path: str, losses: _Losses) -> Any:
    if value >= 1:
        return value
    losses.lost(path, f"line {value} is not a 1-based line number, read as no line (D7); dropped")
    return UNSET


def _meta_fix(value: Any, path: str, losses: _Losses) -> Any:
    return _copy_meta(value)


_STRUCTS: dict[type[Any], tuple[type[WireStruct], dict[str, _Fix]]] = {
    # v1 class: (v2 class, {field: conversion}); fields not listed are copied as they are.
    v1.Content: (v2.Content, {"content": _struct, "meta": _meta_fix}),
    v1.TextContent: (v2.TextContent, {"annotations": _struct, "meta": _meta_fix}),
    v1.ImageContent: (v2.ImageContent, {"annotations": _struct, "meta": _meta_fix}),
    v1.AudioContent: (v2.AudioContent, {"annotations": _struct, "meta": _meta_fix}),
    v1.ResourceLink: (
        v2.ResourceLink,
        {"annotations": _struct, "size": _size, "meta": _meta_fix},
    ),
    v1.EmbeddedResource: (
        v2.EmbeddedResource,
        {"resource": _struct, "annotations": _struct, "meta": _meta_fix},
    ),
    # v1 embeds the same resource classes; rebuilt only to leave unknown keys behind.
    v2.TextResourceContents: (v2.TextResourceContents, {"meta": _meta_fix}),
    v2.BlobResourceContents: (v2.BlobResourceContents, {"meta": _meta_fix}),
    v1.Annotations: (
        v2.Annotations,
        {"audience": lambda roles, _p, _l: list(roles), "priority": _priority, "meta": _meta_fix},
    ),
    v1.ToolCallLocation: (v2.ToolCallLocation, {"line": _line, "meta": _meta_fix}),
}


def _diff_item(item: v1.Diff, path: str, losses: _Losses) -> v2.ToolCallContent | None:
    _report_extra(item, path, losses)
    return diff_to_v2(item)


def _terminal_item(item: v1.Terminal, path: str, losses: _Losses) -> v2.ToolCallContent | None:
    losses.unrepresentable(
        path,
        f"terminal {item.terminal_id!r} is a client-owned v1 terminal with no v2 equivalent (D38)",
    )
    return None


_ITEMS: dict[type[Any], Callable[[Any, str, _Losses], v2.ToolCallContent | None]] = {
    v1.Content: _struct,
    v1.Diff: _diff_item,
    v1.Terminal: _terminal_item,
}


def content_to_v2(
    item: v1.ToolCallContent, *, path: str = "$", strict: bool = False
) -> tuple[v2.ToolCallContent | None, LossReport]:
    """One v1 tool-call content item as a v2 item (``None`` if it was dropped), and the losses.

    ``path`` is where the item sits in the message, for the loss paths (``$.content[2]``).
    Raises ``ConversionError`` in strict mode for a terminal item (D38).
    """
    losses = _Losses(strict)
    converted = _lookup(_ITEMS, item)(item, path, losses)
    return converted, losses.report()


def _content(items: list[v1.ToolCallContent], path: str, losses: _Losses) -> Any:
    out: list[v2.ToolCallContent] = []
    for index, item in enumerate(items):
        converted = _lookup(_ITEMS, item)(item, f"{path}[{index}]", losses)
        if converted is not None:
            out.append(converted)
    return out  # may be [] when every item was dropped: it still replaces (9.3)


def _locations(items: list[v1.ToolCallLocation], path: str, losses: _Losses) -> Any:
    return [_struct(item, f"{path}[{index}]", losses) for index, item in enumerate(items)]


# --------------------------------------------------------------------------------------------
# Tool calls (9.3)


def _same(value: Any, path: str, losses: _Losses) -> Any:
    return value


@dataclass(frozen=True)
class _Field:
    attr: str
    """Attribute name, the same on the v1 and v2 models."""
    key: str
    """Wire key, for loss paths."""
    convert: _Fix
    create_default: Callable[[Any], bool] | None = None
    """True for a value a v1 ``tool_call`` cannot tell from omitted (D9); ``None``: none."""


def _is(default: str) -> Callable[[Any], bool]:
    return lambda value: value == default


def _empty(value: Any) -> bool:
    return not value


_TOOL_CALL_FIELDS: tuple[_Field, ...] = (
    _Field("title", "title", _same),  # always applied, even by a repeated create (D9)
    _Field("name", "name", _same),
    _Field("kind", "kind", _same, _is("other")),  # unknown strings verbatim (D32)
    _Field("status", "status", _same, _is("pending")),
    _Field("content", "content", _content, _empty),
    _Field("locations", "locations", _locations, _empty),
    _Field("raw_input", "rawInput", _same),
    _Field("raw_output", "rawOutput", _same),
    _Field("meta", "_meta", _meta_fix),
)


def _tool_call_fields(
    tc: v1.ToolCall | v1.ToolCallUpdate, merge: bool, path: str, losses: _Losses
) -> dict[str, Any]:
    """The v2 patch fields of a v1 call; ``merge``: a repeated ``tool_call`` of a known id,
    whose default values are left out so that it merges (D9)."""
    fast = plain_tool_call_fields(tc, merge)
    if fast is not None:
        return fast
    return _mapped_tool_call_fields(tc, merge, path, losses)


def _mapped_tool_call_fields(
    tc: v1.ToolCall | v1.ToolCallUpdate, merge: bool, path: str, losses: _Losses
) -> dict[str, Any]:
    """``_tool_call_fields`` through ``_TOOL_CALL_FIELDS`` (the general path)."""
    _report_extra(tc, path, losses)
    values: dict[str, Any] = {}
    for field in _TOOL_CALL_FIELDS:
        value = getattr(tc, field.attr)
        if value is UNSET or value is None:  # v1 null: unchanged / not provided (D8)
            continue
        if merge and field.create_default is not None and field.create_default(value):
            continue
        values[field.attr] = field.convert(value, f"{path}.{field.key}", losses)
    return values


_PLAIN_CALLS = (v1.ToolCall, v1.ToolCallUpdate, v1.SessionToolCallUpdate)


def plain_tool_call_fields(
    tc: v1.ToolCall | v1.ToolCallUpdate, merge: bool = False
) -> dict[str, Any] | None:
    """``_mapped_tool_call_fields(tc, merge, ...)`` for a call whose fields all copy without a
    loss (no unknown keys, plain text content, locations whose ``line`` v2 accepts): the
    values, copied as that path copies them, without its per-field calls and paths; ``None``
    for any other call, which takes that path (a property test holds the two equal)."""
    if type(tc) not in _PLAIN_CALLS:
        return None  # unknown keys are reported by the general path
    values: dict[str, Any] = {}
    value: Any = tc.title
    if value is not UNSET and value is not None:
        values["title"] = value
    value = tc.name
    if value is not UNSET and value is not None:
        values["name"] = value
    value = tc.kind
    if value is not UNSET and value is not None and not (merge and value == "other"):
        values["kind"] = value
    value = tc.status
    if value is not UNSET and value is not None and not (merge and value == "pending"):
        values["status"] = value
    value = tc.content
    if value is not UNSET and value is not None and not (merge and not value):
        if type(value) is not list:
            return None
        content = []
        for item in value:
            if type(item) is not v1.Content or item.meta is not UNSET:
                return None
            block = item.content
            if type(block) is not v1.TextContent or block.annotations is not UNSET:
                return None
            if block.meta is not UNSET:
                return None
            content.append(v2.Content(content=v2.TextContent(text=block.text)))
        values["content"] = content
    value = tc.locations
    if value is not UNSET and value is not None and not (merge and not value):
        if type(value) is not list:
            return None
        locations = []
        for item in value:
            if type(item) is not v1.ToolCallLocation:
                return None
            line = item.line
            if not (line is UNSET or line is None or (type(line) is int and line >= 1)):
                return None  # 0 (no line) is dropped and reported (D7)
            meta = item.meta
            if meta is not UNSET and meta is not None:
                meta = _copy_meta(meta)
            locations.append(v2.ToolCallLocation(path=item.path, line=line, meta=meta))
        values["locations"] = locations
    value = tc.raw_input
    if value is not UNSET and value is not None:
        values["raw_input"] = value
    value = tc.raw_output
    if value is not UNSET and value is not None:
        values["raw_output"] = value
    value = tc.meta
    if value is not UNSET and value is not None:
        values["meta"] = _copy_meta(value)
    return values


def _tool_call(
    tc: v1.ToolCall | v1.ToolCallUpdate, *, merge: bool, strict: bool
) -> tuple[v2.ToolCallUpdate, LossReport]:
    losses = _Losses(strict)
    values = _tool_call_fields(tc, merge, "$", losses)
    return v2.ToolCallUpdate(tool_call_id=tc.tool_call_id, **values), losses.report()


def tool_call_to_v2(
    tc: v1.ToolCall, *, strict: bool = False, repeated: bool = False
) -> tuple[v2.ToolCallUpdate, LossReport]:
    """A v1 ``tool_call`` (create) as a v2 ``tool_call_update`` patch, and the losses.

    The first ``tool_call`` of an id keeps every field the agent set (``status: "pending"``
    included: real v1 clients do not apply defaults). A ``repeated`` one, for an id the caller
    knows, leaves default values out so that it merges (D9, amended 2026-12-04); ``title`` is
    always applied. ``null`` fields are omitted. Raises ``ConversionError`` in strict mode for
    content the v2 side cannot represent (a terminal, D38).
    """
    return _tool_call(tc, merge=repeated, strict=strict)


def tool_call_update_to_v2(
    u: v1.ToolCallUpdate, *, strict: bool = False
) -> tuple[v2.ToolCallUpdate, LossReport]:
    """A v1 ``tool_call_update`` (or permission ``toolCall``) as a v2 patch, and the losses.

    ``null`` means unchanged and is omitted (D8); ``[]`` stays ``[]``; every value is copied.
    Raises ``ConversionError`` in strict mode for a terminal item (D38).
    """
    return _tool_call(u, merge=False, strict=strict)


# --------------------------------------------------------------------------------------------
# Permissions (9.7, D5, D37)

DEFAULT_PERMISSION_TITLE = "Permission required"
"""The prompt title of a v1 permission request whose tool call has no title (D37)."""


def permission_request_to_v2(
    req: v1.RequestPermissionRequest,
    *,
    strict: bool = False,
    stored_title: str | None = None,
) -> tuple[v2.RequestPermissionRequest | None, LossReport]:
    """A v1 ``session/request_permission`` as a v2 one, and the losses.

    The subject is the tool call (``toolCall`` mapped as a v1 update, 9.3). The prompt
    ``title`` is the tool call's non-empty title, else ``stored_title`` (the title a caller that
    tracks the session last saw for that call), else ``"Permission required"`` (D37; reported;
    strict raises). Prompt text a v1 agent put in ``toolCall.content`` stays there. A repeated
    ``optionId`` is dropped, the first kept (D5). ``None``
    when the request has no options: v2 needs at least one, so it must not be sent and the v1
    agent gets ``{"outcome": "cancelled"}`` (D5; strict raises).
    """
    losses = _Losses(strict)
    _report_extra(req, "$", losses)
    call = req.tool_call
    values = _tool_call_fields(call, False, "$.toolCall", losses)
    title = call.title
    if not (isinstance(title, str) and title):
        title = stored_title or DEFAULT_PERMISSION_TITLE
        losses.instead(
            "$.toolCall.title",
            "a v2 permission request needs a title and the v1 tool call has none (D37)",
            f"the prompt title is {title!r}",
        )
    options = []
    offered: set[str] = set()
    for index, option in enumerate(req.options):
        path = f"$.options[{index}]"
        if option.option_id in offered:  # v2: "MUST be unique"; the first one is shown (D5)
            losses.lost(path, f"duplicate option id {option.option_id!r}: dropped, the first kept")
            continue
        offered.add(option.option_id)
        _report_extra(option, path, losses)
        options.append(  # v1 kinds are a subset of v2's; unknown strings go verbatim (D32)
            v2.PermissionOption(
                option_id=option.option_id,
                name=option.name,
                kind=option.kind,
                meta=_copy_meta(option.meta),
            )
        )
    if not options:
        losses.instead(
            "$.options",
            "a v2 permission request needs at least one option (D5)",
            "not sent: answer the v1 agent `cancelled`",
        )
        return None, losses.report()
    subject = v2.ToolCallPermissionSubject(
        tool_call=v2.ToolCallUpdate(tool_call_id=call.tool_call_id, **values)
    )
    request = v2.RequestPermissionRequest(
        session_id=req.session_id,
        title=title,
        options=options,
        subject=subject,
        meta=_copy_meta(req.meta),
    )
    return request, losses.report()


# --------------------------------------------------------------------------------------------
# Session updates (9.8)
#
# Updates other than tool calls are opaque values in our models; they are mapped here as JSON
# values, one converter per `sessionUpdate` (`_OPAQUE_TO_V2`). Keys the target does not define
# are dropped and reported (D19). Message chunks, the common case, are valid by construction
# (their one content block goes through the typed models); every other mapped update is
# checked against the target schema and dropped, reported, if the input was not valid.

V1_PLAN_ID = "plan"
"""The ``planId`` of the one plan a v1 session has, in its v2 ``plan_update``."""

_Json = dict[str, Any]


@dataclass(frozen=True)
class _ToV2:
    message_id: str | None


def _copy_keys(data: Mapping[str, Any], keys: tuple[str, ...], losses: _Losses) -> _Json:
    """``data``'s keys among ``keys`` (plus ``sessionUpdate``); other keys dropped, reported."""
    out: _Json = {}
    for key, value in data.items():
        if key in keys:
            out[key] = value
        elif key != "sessionUpdate":
            losses.lost(_key_path("$", key), UNKNOWN_KEY)
    meta = out.get("_meta")
    if meta is not None and not isinstance(meta, dict):
        del out["_meta"]
        losses.lost("$._meta", "not an object; dropped")
    return out


def _salvaged(path: str, diagnostics: Iterable[Diagnostic], losses: _Losses) -> None:
    for diagnostic in diagnostics:
        losses.lost(path + diagnostic.path[1:], f"invalid: {diagnostic.reason}")


def _block_to_v2(value: Any, path: str, losses: _Losses, dropped: str) -> Any:
    """A v1 content block (JSON) at ``path`` as a v2 one (JSON); ``None`` when it is not a
    valid block, and then ``dropped`` (the block, or the update holding it) is reported."""
    try:
        decoded = decode(value, cast(Any, v1.ContentBlock))
    except DecodeError as exc:
        where = path + exc.path[1:]
        losses.instead(dropped, f"not a valid v1 content block ({where}: {exc.reason})", "dropped")
        return None
    _salvaged(path, decoded.diagnostics, losses)
    return to_builtins(_struct(decoded.value, path, losses))


def _schema_valid(value: _Json, def_name: str, protocol: Protocol, losses: _Losses) -> bool:
    """Whether ``value`` validates against ``$defs[def_name]``; reported (strict: raises) if not."""
    from .schema import validate_payload  # jsonschema only for these rare updates

    violations = validate_payload(value, def_name, protocol)
    if violations:
        first = violations[0]
        losses.instead(
            "$", f"not a valid {protocol} `{def_name}` ({first.path}: {first.message})", "dropped"
        )
    return not violations


def _message_chunk_to_v2(data: Mapping[str, Any], losses: _Losses, opts: _ToV2) -> _Json | None:
    out = _copy_keys(data, ("content", "messageId", "_meta"), losses)
    block = _block_to_v2(data.get("content"), "$.content", losses, "$")
    if block is None:
        return None
    out["content"] = block
    if not isinstance(out.get("messageId"), str):
        if opts.message_id is None:
            losses.instead(
                "$", "v2 requires `messageId`, which a stateless converter cannot assign", "dropped"
            )
            return None
        out["messageId"] = opts.message_id
    return out


def _plan_to_v2(data: Mapping[str, Any], losses: _Losses, opts: _ToV2) -> _Json | None:
    out = _copy_keys(data, ("entries", "_meta"), losses)
    plan = {"type": "items", "planId": V1_PLAN_ID, "entries": out.pop("entries", None)}
    return {"plan": plan, **out}


def _command_to_v2(command: Any, path: str, losses: _Losses) -> Any:
    if not isinstance(command, dict):
        return command  # the schema check reports it
    out = {**command, "type": "command"}
    if isinstance(command.get("input"), dict):
        out["input"] = {**command["input"], "type": "text"}  # v1's only, unstructured, input
    return out


def _renamed(value: Any, old: str, new: str) -> Any:
    if not isinstance(value, dict) or old not in value:
        return value
    return {(new if key == old else key): item for key, item in value.items()}


def _config_option_to_v2(option: Any, path: str, losses: _Losses) -> Any:
    option = _renamed(option, "id", "configId")
    if isinstance(option, dict) and isinstance(option.get("options"), list):
        option = {**option, "options": [_renamed(o, "group", "groupId") for o in option["options"]]}
    return option


_OpaqueConvert = Callable[[Mapping[str, Any], _Losses, Any], _Json | None]
"""Maps the payload of an opaque update (JSON) into the target's; ``None``: dropped, reported."""


def _each_item(key: str, convert: _Fix) -> _OpaqueConvert:
    """The rule of an update that holds one list, ``key``, converted item by item with
    ``convert(item, path, losses)``; an item it returns ``None`` for is left out."""

    def rule(data: Mapping[str, Any], losses: _Losses, opts: Any) -> _Json | None:
        out = _copy_keys(data, (key, "_meta"), losses)
        items = out.get(key)
        if isinstance(items, list):
            converted = (convert(item, f"$.{key}[{i}]", losses) for i, item in enumerate(items))
            out[key] = [item for item in converted if item is not None]
        return out

    return rule


_BlockConverter = Callable[[Any, str, _Losses, str], Any]


def _compaction(convert: _BlockConverter) -> _OpaqueConvert:
    def compaction(data: Mapping[str, Any], losses: _Losses, opts: Any) -> _Json | None:
        out = _copy_keys(data, ("compactionId", "status", "summary", "error", "_meta"), losses)
        summary = out.get("summary")
        if isinstance(summary, list):
            blocks = (
                convert(b, f"$.summary[{i}]", losses, f"$.summary[{i}]")
                for i, b in enumerate(summary)
            )
            out["summary"] = [block for block in blocks if block is not None]
        return out

    return compaction


def _summary_chunk(convert: _BlockConverter) -> _OpaqueConvert:
    def summary_chunk(data: Mapping[str, Any], losses: _Losses, opts: Any) -> _Json | None:
        out = _copy_keys(data, ("compactionId", "content", "_meta"), losses)
        block = convert(data.get("content"), "$.content", losses, "$")
        if block is None:
            return None
        out["content"] = block
        return out

    return summary_chunk


def _copied(*keys: str) -> _OpaqueConvert:
    return lambda data, losses, opts: _copy_keys(data, (*keys, "_meta"), losses)


@dataclass(frozen=True)
class _OpaqueRule:
    convert: _OpaqueConvert
    tag: str
    """The ``sessionUpdate`` of the result."""
    schema_def: str | None
    """The target ``$defs`` entry the result is checked against; ``None``: valid by construction."""


_OPAQUE_TO_V2: dict[str, _OpaqueRule] = {
    "user_message_chunk": _OpaqueRule(_message_chunk_to_v2, "user_message_chunk", None),
    "agent_message_chunk": _OpaqueRule(_message_chunk_to_v2, "agent_message_chunk", None),
    "agent_thought_chunk": _OpaqueRule(_message_chunk_to_v2, "agent_thought_chunk", None),
    "plan": _OpaqueRule(_plan_to_v2, "plan_update", "PlanUpdate"),
    "available_commands_update": _OpaqueRule(
        _each_item("availableCommands", _command_to_v2),
        "available_commands_update",
        "AvailableCommandsUpdate",
    ),
    "config_option_update": _OpaqueRule(
        _each_item("configOptions", _config_option_to_v2),
        "config_option_update",
        "ConfigOptionUpdate",
    ),
    "session_info_update": _OpaqueRule(
        _copied("title", "updatedAt"), "session_info_update", "SessionInfoUpdate"
    ),
    "usage_update": _OpaqueRule(_copied("used", "size", "cost"), "usage_update", "UsageUpdate"),
    "notice": _OpaqueRule(_copied("severity", "title", "description"), "notice", "Notice"),
    "compaction_update": _OpaqueRule(
        _compaction(_block_to_v2), "compaction_update", "CompactionUpdate"
    ),
    "compaction_summary_chunk": _OpaqueRule(
        _summary_chunk(_block_to_v2), "compaction_summary_chunk", "CompactionSummaryChunk"
    ),
}

_NOT_TO_V2: dict[str, str] = {
    "current_mode_update": "v2 replaced modes with config options; mapping a mode change needs "
    "the session's option list (9.8)",
}


def _opaque(
    data: Mapping[str, Any],
    rules: Mapping[str, _OpaqueRule],
    not_mapped: Mapping[str, str],
    protocol: Protocol,
    losses: _Losses,
    opts: Any,
) -> _Json | None:
    """An opaque update as the target's JSON value, or ``None`` (dropped and reported)."""
    tag = data["sessionUpdate"]
    rule = rules.get(tag)
    if rule is None:
        reason = not_mapped.get(tag) or f"`{tag}` has no {protocol} form; never forwarded raw"
        losses.instead("$", reason, "dropped")
        return None
    out = rule.convert(data, losses, opts)
    if out is None:
        return None
    out = {"sessionUpdate": rule.tag, **out}
    if rule.schema_def is not None and not _schema_valid(out, rule.schema_def, protocol, losses):
        return None
    return out


def _session_tool_call(u: v2.ToolCallUpdate) -> v2.SessionToolCallUpdate:
    return v2.SessionToolCallUpdate(**{name: getattr(u, name) for name in u.__struct_fields__})


def session_update_to_v2(
    update: v1.SessionUpdate,
    *,
    strict: bool = False,
    message_id: str | None = None,
    repeated: bool = False,
) -> tuple[v2.SessionUpdate | None, LossReport]:
    """A v1 ``session/update`` payload as a v2 one (``None``: nothing to send), and the losses.

    ``tool_call`` and ``tool_call_update`` become ``tool_call_update`` (9.3); a ``repeated``
    ``tool_call`` (of an id the caller knows) merges (``tool_call_to_v2``). Message chunks
    keep their variant; v2 requires ``messageId``, so a chunk without one takes
    ``message_id`` (a stateful caller's choice) or is dropped. ``plan`` becomes a
    ``plan_update`` of the plan ``V1_PLAN_ID``. ``available_commands_update`` and
    ``config_option_update`` are renamed into their v2 shapes; the other shared variants are
    copied. ``current_mode_update`` and unknown updates are dropped. Every drop is reported;
    strict mode raises instead.
    """
    losses = _Losses(strict)
    if isinstance(update, v1.ToolCall):
        values = _tool_call_fields(update, repeated, "$", losses)
    elif isinstance(update, v1.ToolCallUpdate):
        values = _tool_call_fields(update, False, "$", losses)
    else:
        out = _opaque(update.data, _OPAQUE_TO_V2, _NOT_TO_V2, "v2", losses, _ToV2(message_id))
        return (None if out is None else v2.OpaqueSessionUpdate(out)), losses.report()
    tc = v2.SessionToolCallUpdate(tool_call_id=update.tool_call_id, **values)
    return tc, losses.report()
