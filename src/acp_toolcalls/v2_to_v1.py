"""The stateless v2 -> v1 mapping (shared/spec/TOOL-CALLS.md 9.2-9.8, 9.11; D4, D10, D27-D30,
D36, D39).

Rules this module owns:

- A v2 ``tool_call_update`` becomes a v1 ``tool_call_update``; for the first sight of an id a
  caller asks for a v1 ``tool_call`` instead, whose title is never empty (D10: title, name,
  the caller's fallback such as a permission title, kind label, ``"Tool call"``).
- Values v1 has are copied. ``kind: null`` is ``"other"`` and ``status: null`` is
  ``"pending"``, exactly (D4); a collection clear (``null`` or ``[]``) is ``[]``.
- Substituted, reported (strict mode raises instead): ``cancelled`` -> ``failed``,
  ``paused`` and unknown statuses -> ``in_progress``, unknown kinds -> ``other``. Omitted,
  reported (strict raises): clears of ``title``, ``name``, ``rawInput``, ``rawOutput`` and
  ``_meta``, and ``null``-valued ``_meta`` keys; the v1 client keeps its previous value (D39).
  In a create (first sight) a clear is simply the default and nothing is lost.
- Dropped and reported in every mode, never raising: ``capabilities`` (D36) and unknown keys
  (D19), as in ``v1_to_v2``.
- Content (9.4): content blocks are copied; ``ResourceLink.icons``, unknown audience roles and
  a ``size`` past int64 are removed; unknown blocks and unknown items are dropped. A diff that
  adds one text file with its whole text in a Git patch is a v1 diff; any other diff is one
  text item with a line per change and the patch in a fenced block (9.5, D27). A terminal
  reference is a text item naming the terminal: the output is terminal state only a
  stateful bridge has (9.6).
- Permissions (9.7): a ``tool_call`` subject is the v1 ``toolCall``; the prompt title fills
  ``toolCall.title`` only when the call has none (and the caller does not know what the v1
  client shows), and the description never reaches a known call's content (D28). Subject-less,
  ``command`` and unknown subjects get a synthetic tool call (D28). Unknown option kinds are
  dropped; with none left the request is not sent (D29). An unknown outcome is ``cancelled``,
  never approval, in every mode.
- Session updates (9.8): each has a v1 form or is dropped and reported, never forwarded raw:
  ``tool_call_content_chunk`` and terminal updates need a stateful bridge; ``notice`` and
  compaction updates go only to clients that advertised them (D30); ``state_update``, message
  upserts and unknown updates have no v1 form.
- Every loss is a ``Loss`` with its JSON path (rooted at the converted object, ``$``).

Theory of operation: the mirror image of ``v1_to_v2``, with its helpers. Tool-call fields go
through ``_FIELDS`` (one row per field: value conversion, what a ``null`` becomes in an update,
and which value a create leaves out), content items through ``_ITEMS``, every other object is
copied into its v1 class through ``_STRUCTS``, enum values through ``_STATUSES``/``_KINDS``,
permission subjects through ``_SUBJECTS``, session updates through ``_UPDATES`` and, for the
opaque ones, the JSON-level rules of ``_OPAQUE_TO_V1``.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from functools import partial
from typing import Any, TypeVar, cast

from msgspec import UNSET, UnsetType

from . import v1, v2
from .codec import decode, to_builtins
from .lenient import DecodeError
from .loss import NO_LOSSES, LossReport
from .state import KIND_LABELS
from .terminal_text import fenced
from .v1_to_v2 import (
    DEFAULT_PERMISSION_TITLE,
    _compaction,
    _copied,
    _copy_fields,
    _copy_keys,
    _copy_meta,
    _each_item,
    _Json,
    _key_path,
    _Losses,
    _opaque,
    _OpaqueConvert,
    _OpaqueRule,
    _renamed,
    _report_extra,
    _salvaged,
    _summary_chunk,
)
from .wire import WireStruct

__all__ = [
    "DEFAULT_TOOL_CALL_TITLE",
    "SYNTHETIC_ID_PREFIX",
    "content_to_v1",
    "diff_summary",
    "display_title",
    "permission_request_to_v1",
    "permission_response_to_v1",
    "permission_response_to_v2",
    "session_update_to_v1",
    "synthetic_tool_call_id",
    "tool_call_to_v1",
    "tool_call_update_to_v1",
]

DEFAULT_TOOL_CALL_TITLE = "Tool call"
"""The last resort of the D10 title chain."""

SYNTHETIC_ID_PREFIX = "_acp_permission_"
"""Prefix of the ids of tool calls synthesised for permission requests (D28)."""

V = TypeVar("V")


def _find(table: Mapping[type[Any], V], obj: object) -> V:
    # An object that carries unknown keys is an instance of a same-named subclass (wire.py).
    for cls in type(obj).__mro__:
        found = table.get(cls)
        if found is not None:
            return found
    raise TypeError(f"no v2 -> v1 conversion for a {type(obj).__name__}")


# --------------------------------------------------------------------------------------------
# Objects copied field by field (content blocks, annotations, locations)

_Fix = Callable[[Any, str, _Losses], Any]
"""Converts one field value (``null`` included) at ``path``; returns ``UNSET`` to drop it."""


def _struct(obj: WireStruct, path: str, losses: _Losses) -> Any:
    """``obj`` copied into its v1 class (``_STRUCTS``), field by field."""
    target, fixes = _find(_STRUCTS, obj)
    # Fixes see `null` too: `icons: null` must go, as v1 has no such field.
    return _copy_fields(obj, target, fixes, path, losses, fix_nulls=True)


def _nested(value: Any, path: str, losses: _Losses) -> Any:
    return None if value is None else _struct(value, path, losses)


def _meta(value: Any, path: str, losses: _Losses) -> Any:
    return _copy_meta(value)  # item `_meta` is scoped to its object, copied as is


_ROLES = {"user": "user", "assistant": "assistant"}


def _audience(roles: Any, path: str, losses: _Losses) -> Any:
    if roles is None:
        return None
    kept: list[str] = []
    for index, role in enumerate(roles):
        known = _ROLES.get(role)
        if known is None:
            losses.instead(f"{path}[{index}]", f"v1 has no audience role {role!r}", "removed")
        else:
            kept.append(known)
    return kept


def _icons(icons: Any, path: str, losses: _Losses) -> Any:
    if icons:  # `null` and `[]` carry nothing
        losses.instead(path, "v1 resource links have no `icons`", "dropped")
    return UNSET


_INT64_MAX = 2**63 - 1


def _size(size: Any, path: str, losses: _Losses) -> Any:
    if size is not None and size > _INT64_MAX:
        losses.instead(path, f"size {size} does not fit v1's int64", "dropped")
        return UNSET
    return size


_STRUCTS: dict[type[Any], tuple[type[WireStruct], dict[str, _Fix]]] = {
    # v2 class: (v1 class, {field: conversion}); fields not listed are copied as they are.
    v2.Content: (v1.Content, {"content": _nested, "meta": _meta}),
    v2.TextContent: (v1.TextContent, {"annotations": _nested, "meta": _meta}),
    v2.ImageContent: (v1.ImageContent, {"annotations": _nested, "meta": _meta}),
    v2.AudioContent: (v1.AudioContent, {"annotations": _nested, "meta": _meta}),
    v2.ResourceLink: (
        v1.ResourceLink,
        {"icons": _icons, "size": _size, "annotations": _nested, "meta": _meta},
    ),
    v2.EmbeddedResource: (
        v1.EmbeddedResource,
        {"resource": _nested, "annotations": _nested, "meta": _meta},
    ),
    # v1 embeds the same resource classes; rebuilt only to leave unknown keys behind.
    v2.TextResourceContents: (v2.TextResourceContents, {"meta": _meta}),
    v2.BlobResourceContents: (v2.BlobResourceContents, {"meta": _meta}),
    v2.Annotations: (v1.Annotations, {"audience": _audience, "meta": _meta}),
    v2.ToolCallLocation: (v1.ToolCallLocation, {"meta": _meta}),
}


# --------------------------------------------------------------------------------------------
# Diffs (9.5, D27)

# One Git section adding a file: optional `diff --git` and `index` lines, then either the
# ---/+++ pair and at most one hunk `@@ -0,0 +1[,N] @@` of `+` lines (with the no-newline
# marker after the last), or neither (Git writes no ---/+++ lines for an empty new file).
_PURE_ADD = re.compile(
    r"(?:diff --git [^\n]*\n)?"
    r"(?P<mode>new file mode [0-7]+\n)?"
    r"(?:index [^\n]*\n)?"
    r"(?:(?P<files>--- /dev/null\n\+\+\+ (?!/dev/null\n)[^\n]*\n)"
    r"(?:@@ -0,0 \+1(?:,(?P<count>[0-9]+))? @@\n"
    r"(?P<body>(?:\+[^\n]*\n)*)"
    r"(?P<eof>\\ No newline at end of file\n)?)?)?"
)


def _added_text(patch: str) -> str | None:
    """The whole new text of a Git patch that only adds one file, else ``None``."""
    match = _PURE_ADD.fullmatch(patch)
    if match is None or not (match["mode"] or match["files"]):
        return None
    body = match["body"] or ""
    if match["count"] is None and not body:
        return "" if not match["eof"] else None  # no hunk: an empty file
    lines = body.count("\n")
    if lines != int(match["count"] or 1):
        return None
    text = "".join(line[1:] + "\n" for line in body.split("\n")[:-1])
    return text[:-1] if match["eof"] else text


def _whole_new_file(diff: v2.Diff) -> tuple[v2.AddDiffChange, v2.DiffPatch, str] | None:
    """9.5 step 1: one text ``add`` whose ``git_patch`` holds the whole file."""
    patch = diff.patch
    if len(diff.changes) != 1 or not isinstance(patch, v2.DiffPatch):
        return None
    change = diff.changes[0]
    if not isinstance(change, v2.AddDiffChange) or change.file_type not in (UNSET, None, "text"):
        return None  # omitted/null fileType: "the content kind is unknown"
    if patch.format != "git_patch":
        return None
    text = _added_text(patch.text)
    return None if text is None else (change, patch, text)


_CHANGE_LINES: dict[type[Any], Callable[[Any], str]] = {
    v2.AddDiffChange: lambda c: f"Added {c.path}",
    v2.DeleteDiffChange: lambda c: f"Deleted {c.path}",
    v2.ModifyDiffChange: lambda c: f"Modified {c.path}",
    v2.MoveDiffChange: lambda c: f"Moved {c.old_path} -> {c.path}",
    v2.CopyDiffChange: lambda c: f"Copied {c.old_path} -> {c.path}",
}


def _change_line(change: v2.DiffChange) -> str:
    if isinstance(change, v2.UnknownDiffChange):
        path = change.data.get("path")
        line = f"{change.tag} {path}" if isinstance(path, str) else change.tag
        file_type = change.data.get("fileType")
    else:
        line = _find(_CHANGE_LINES, change)(change)
        file_type = change.file_type
    if isinstance(file_type, str) and file_type != "text":  # omitted/null: not known
        line += f" ({file_type})"
    return line


def diff_summary(diff: v2.Diff) -> str:
    """The text a v1 client is shown for a v2 diff (9.5 step 2).

    One line per change (``Added``, ``Deleted``, ``Modified``, ``Moved a -> b``, ``Copied a ->
    b``, or the operation's name; `` (fileType)`` when the type is given and not ``text``),
    then a blank line and the patch in a fenced block that nothing inside can close (info
    string ``diff`` for ``git_patch``).
    """
    parts = ["\n".join(_change_line(change) for change in diff.changes)]
    if isinstance(diff.patch, v2.DiffPatch):
        info = "diff" if diff.patch.format == "git_patch" else ""
        parts.append(fenced(diff.patch.text, info))
    return "\n\n".join(part for part in parts if part)


def _diff_item(item: v2.Diff, path: str, losses: _Losses) -> list[Any]:
    new_file = _whole_new_file(item)
    if new_file is not None:
        change, patch, text = new_file
        _report_extra(item, path, losses)
        _report_extra(change, f"{path}.changes[0]", losses)
        _report_extra(patch, f"{path}.patch", losses)
        for where, value in (
            (f"{path}.changes[0].mimeType", change.mime_type),
            (f"{path}.changes[0]._meta", change.meta),
            (f"{path}.patch._meta", patch.meta),
        ):
            if value is not UNSET and value is not None:
                losses.instead(where, "a v1 diff has no place for it", "dropped")
        return [v1.Diff(path=change.path, new_text=text, meta=_copy_meta(item.meta))]
    text = diff_summary(item)
    if not text:
        losses.instead(path, "a diff with no changes and no patch has no v1 form", "dropped")
        return []
    losses.instead(
        path,
        "there is no mechanical mapping from a v2 diff back to v1 `oldText`/`newText` (D27)",
        "sent as a text item: a line per change and the patch",
    )
    return [v1.Content(content=v1.TextContent(text=text), meta=_copy_meta(item.meta))]


# --------------------------------------------------------------------------------------------
# Content items (9.4)


def _content_item(item: v2.Content, path: str, losses: _Losses) -> list[Any]:
    block = item.content
    if isinstance(block, v2.UnknownContentBlock):
        losses.instead(path, f"its content block has unknown type {block.tag!r}", "dropped")
        return []
    return [_struct(item, path, losses)]


def _terminal_item(item: v2.Terminal, path: str, losses: _Losses) -> list[Any]:
    losses.instead(
        path,
        "a v2 terminal is an agent-owned display stream with no v1 form; its output is "
        "terminal state only a stateful bridge has (9.6)",
        "sent as a text item naming the terminal",
    )
    text = f"[terminal {item.terminal_id}: output not available]"
    return [v1.Content(content=v1.TextContent(text=text), meta=_copy_meta(item.meta))]


def _unknown_item(item: v2.UnknownToolCallContent, path: str, losses: _Losses) -> list[Any]:
    losses.instead(path, f"unknown content type {item.tag!r} has no v1 form", "dropped")
    return []


_ITEMS: dict[type[Any], Callable[[Any, str, _Losses], list[Any]]] = {
    v2.Content: _content_item,
    v2.Diff: _diff_item,
    v2.Terminal: _terminal_item,
    v2.UnknownToolCallContent: _unknown_item,
}


def content_to_v1(
    item: v2.ToolCallContent, *, path: str = "$", strict: bool = False
) -> tuple[list[v1.ToolCallContent], LossReport]:
    """One v2 tool-call content item as v1 items (none or one), and the losses.

    ``path`` is where the item sits in its message, for the loss paths (``$.content[2]``).
    Content blocks are copied (``icons`` and unknown audience roles removed); a diff is a v1
    diff when it adds one text file whose whole text is in its Git patch, otherwise a text
    item (9.5); a terminal is a text item naming it; unknown blocks and items are dropped.
    Strict mode raises ``ConversionError`` for anything but an exact mapping.
    """
    if type(item) is v2.Content:  # fast path: a plain text item, the bulk of streamed output
        block = item.content
        if (
            type(block) is v2.TextContent
            and block.annotations is UNSET
            and block.meta is UNSET
            and item.meta is UNSET
        ):
            return [v1.Content(content=v1.TextContent(text=block.text))], NO_LOSSES
    losses = _Losses(strict)
    converted = _find(_ITEMS, item)(item, path, losses)
    return converted, losses.report()


# --------------------------------------------------------------------------------------------
# Tool calls (9.3)


def _content(items: list[Any], path: str, losses: _Losses) -> Any:
    out: list[Any] = []
    for index, item in enumerate(items):
        out += _find(_ITEMS, item)(item, f"{path}[{index}]", losses)
    return out


def _locations(items: list[Any], path: str, losses: _Losses) -> Any:
    return [_struct(item, f"{path}[{index}]", losses) for index, item in enumerate(items)]


def _enum(table: Mapping[str, tuple[str, str | None]], unknown: str, note: str, what: str) -> _Fix:
    """A conversion of an open v2 enum into v1's closed one: known values kept, substitutions
    from ``table`` (value -> (v1 value, note)), anything else -> ``unknown``."""

    def convert(value: Any, path: str, losses: _Losses) -> Any:
        mapped, why = table.get(value) or (unknown, note)
        if why is not None:
            losses.instead(path, f"v1 has no {what} {value!r}", f"sent as {mapped!r} ({why})")
        return mapped

    return convert


_STATUSES: dict[str, tuple[str, str | None]] = {
    **{status: (status, None) for status in v1.KNOWN_STATUSES},
    "cancelled": ("failed", "final and not successful"),
    "paused": ("in_progress", "not final"),
}
_KINDS: dict[str, tuple[str, str | None]] = {kind: (kind, None) for kind in v1.KNOWN_KINDS}

_status = _enum(_STATUSES, "in_progress", "an unrecognized status is still in progress", "status")
_kind = _enum(_KINDS, "other", "an unrecognized kind displays as `other`", "kind")


def _same(value: Any, path: str, losses: _Losses) -> Any:
    return value


def _keep_previous(path: str, losses: _Losses) -> Any:
    losses.instead(
        path, "a v1 update cannot clear a field", "omitted: the v1 client keeps the old value"
    )
    return UNSET


def _capabilities(value: Any, path: str, losses: _Losses) -> Any:
    losses.lost(path, "v1 has no per-tool-call controls (`tool_call/cancel`); dropped (D36)")
    return UNSET


def _meta_patch(meta: dict[str, Any], path: str, losses: _Losses) -> Any:
    out: dict[str, Any] = {}
    for key, value in meta.items():
        if value is None:
            losses.instead(
                _key_path(path, key),
                "v1 cannot remove a `_meta` key",
                "left out: a merging v1 client keeps the old value (D39)",
            )
        else:
            out[key] = value
    return out


def _meta_object(meta: dict[str, Any], path: str, losses: _Losses) -> Any:
    # A new call's `_meta` patch applies to an empty map: `null` keys are simply absent (D13).
    return {key: value for key, value in meta.items() if value is not None}


def _is(default: str) -> Callable[[Any], bool]:
    return lambda value: value == default


def _empty(value: Any) -> bool:
    return not value


@dataclass(frozen=True)
class _Field:
    attr: str
    """Attribute name, the same on the v2 and v1 models."""
    key: str
    """Wire key, for loss paths."""
    convert: _Fix
    """A non-null value."""
    clear: Callable[[str, _Losses], Any]
    """What a ``null`` becomes in a v1 update (``UNSET``: nothing)."""
    create_default: Callable[[Any], bool] | None = None
    """True for a converted value a v1 ``tool_call`` leaves out (it is the default)."""
    create_convert: _Fix | None = None
    """``convert`` for a create, when it differs."""


_FIELDS: tuple[_Field, ...] = (
    _Field("title", "title", _same, _keep_previous),
    _Field("name", "name", _same, _keep_previous),
    _Field("kind", "kind", _kind, lambda path, losses: "other"),  # exact (D4)
    _Field("status", "status", _status, lambda path, losses: "pending"),
    _Field("content", "content", _content, lambda path, losses: [], _empty),  # clear: []
    _Field("locations", "locations", _locations, lambda path, losses: [], _empty),
    _Field("raw_input", "rawInput", _same, _keep_previous),
    _Field("raw_output", "rawOutput", _same, _keep_previous),
    _Field("capabilities", "capabilities", _capabilities, partial(_capabilities, None)),
    _Field("meta", "_meta", _meta_patch, _keep_previous, _empty, _meta_object),
)


def _fields(u: v2.ToolCallUpdate, create: bool, path: str, losses: _Losses) -> dict[str, Any]:
    fast = plain_fields(u, create)
    if fast is not None:
        return fast
    return _mapped_fields(u, create, path, losses)


def _mapped_fields(
    u: v2.ToolCallUpdate, create: bool, path: str, losses: _Losses
) -> dict[str, Any]:
    """The v1 values of ``u``'s fields through ``_FIELDS`` (the general path)."""
    _report_extra(u, path, losses)
    values: dict[str, Any] = {}
    for field in _FIELDS:
        value = getattr(u, field.attr)
        if value is UNSET:
            continue
        where = f"{path}.{field.key}"
        if value is None:
            if create:
                continue  # clearing a call nobody has seen leaves its defaults: nothing lost
            out = field.clear(where, losses)
        else:
            convert = field.create_convert if create and field.create_convert else field.convert
            out = convert(value, where, losses)
            if create and field.create_default is not None and field.create_default(out):
                continue
        if out is not UNSET:
            values[field.attr] = out
    return values


_PLAIN_UPDATES = (v2.ToolCallUpdate, v2.SessionToolCallUpdate)
_V1_KINDS = frozenset(v1.KNOWN_KINDS)
_V1_STATUSES = frozenset(v1.KNOWN_STATUSES)


def plain_fields(u: v2.ToolCallUpdate, create: bool = False) -> dict[str, Any] | None:
    """``_mapped_fields(u, create, ...)`` for an update whose fields all map without a loss
    (no unknown keys, known kind and status, no ``capabilities``, no clear v1 cannot send,
    plain text content, locations and ``_meta`` without ``null`` keys): the values, copied as
    that path copies them; ``None`` for any other update, which takes that path. The common
    shapes skip the table's per-field calls and paths (a property test holds the two equal)."""
    if type(u) is not v2.SessionToolCallUpdate and type(u) is not v2.ToolCallUpdate:
        return None  # unknown keys are reported by the general path
    values: dict[str, Any] = {}
    value: Any = u.title
    if value is not UNSET:
        if value is not None:
            values["title"] = value
        elif not create:
            return None
    value = u.name
    if value is not UNSET:
        if value is not None:
            values["name"] = value
        elif not create:
            return None
    value = u.kind
    if value is not UNSET:
        if value is None:
            if not create:
                values["kind"] = "other"
        elif value in _V1_KINDS:
            values["kind"] = value
        else:
            return None
    value = u.status
    if value is not UNSET:
        if value is None:
            if not create:
                values["status"] = "pending"
        elif value in _V1_STATUSES:
            values["status"] = value
        else:
            return None
    value = u.content
    if value is not UNSET:
        if value:
            content = _plain_content(value)
            if content is None:
                return None
            values["content"] = content
        elif not create:
            values["content"] = []
    value = u.locations
    if value is not UNSET:
        if value:
            locations = _plain_locations(value)
            if locations is None:
                return None
            values["locations"] = locations
        elif not create:
            values["locations"] = []
    value = u.raw_input
    if value is not UNSET:
        if value is not None:
            values["raw_input"] = value
        elif not create:
            return None
    value = u.raw_output
    if value is not UNSET:
        if value is not None:
            values["raw_output"] = value
        elif not create:
            return None
    if u.capabilities is not UNSET and (u.capabilities is not None or not create):
        return None  # dropped, reported (D36)
    value = u.meta
    if value is not UNSET:
        if type(value) is not dict:
            if value is not None or not create:
                return None
        elif None in value.values():
            if not create:
                return None
            value = {key: item for key, item in value.items() if item is not None}
            if value:
                values["meta"] = value
        elif value or not create:
            values["meta"] = dict(value)
    return values


def plain_stored_fields(fields: Mapping[str, Any], meta: Any) -> dict[str, Any] | None:
    """``plain_fields(snapshot, create=True)`` of a call as a store holds it, read from its
    ``fields`` (wire name -> value) and ``_meta`` without building the snapshot; ``content``
    is left out (a bridge projects it itself). ``None`` where the general path must map the
    call (a property test holds the two equal)."""
    values: dict[str, Any] = {}
    for key, value in fields.items():
        if value is None or key == "content":
            continue  # in a create, a clear is simply the default
        if key == "title" or key == "name":
            values[key] = value
        elif key == "kind":
            if value not in _V1_KINDS:
                return None
            values["kind"] = value
        elif key == "status":
            if value not in _V1_STATUSES:
                return None
            values["status"] = value
        elif key == "rawInput":
            values["raw_input"] = value
        elif key == "rawOutput":
            values["raw_output"] = value
        elif key == "locations":
            if value:
                locations = _plain_locations(value)
                if locations is None:
                    return None
                values["locations"] = locations
        else:
            return None  # `capabilities`: dropped, reported
    if type(meta) is dict:
        if None in meta.values():
            meta = {key: item for key, item in meta.items() if item is not None}
        if meta:
            values["meta"] = dict(meta)
    elif meta is not UNSET and meta is not None:
        return None
    return values


def _plain_locations(items: Any) -> list[Any] | None:
    """v1 copies of locations without unknown keys, else ``None``."""
    out: list[Any] = []
    for item in items:
        if type(item) is not v2.ToolCallLocation:
            return None
        meta = item.meta
        if meta is not UNSET:
            meta = _copy_meta(meta)
        out.append(v1.ToolCallLocation(path=item.path, line=item.line, meta=meta))
    return out


def _plain_content(items: list[Any]) -> list[Any] | None:
    """v1 copies of content items that are all plain text (no annotations, ``_meta`` or
    unknown keys), else ``None``."""
    out = []
    for item in items:
        if type(item) is not v2.Content or item.meta is not UNSET:
            return None
        block = item.content
        if type(block) is not v2.TextContent or block.annotations is not UNSET:
            return None
        if block.meta is not UNSET:
            return None
        out.append(v1.Content(content=v1.TextContent(text=block.text)))
    return out


def tool_call_update_to_v1(
    u: v2.ToolCallUpdate, *, strict: bool = False
) -> tuple[v1.ToolCallUpdate, LossReport]:
    """A v2 ``tool_call_update`` as a v1 ``tool_call_update``, and the losses (9.3).

    For an id the v1 client already shows; the first message about an id should be
    ``tool_call_to_v1``. Strict mode raises ``ConversionError`` at the first substitution or
    omitted clear; ``capabilities`` and unknown keys are dropped and reported in both modes.
    """
    values, losses = update_values(u, strict=strict)
    return v1.ToolCallUpdate(tool_call_id=u.tool_call_id, **values), losses


def update_values(
    u: v2.ToolCallUpdate, *, strict: bool = False
) -> tuple[dict[str, Any], LossReport]:
    """The fields of ``tool_call_update_to_v1(u)`` (attribute name -> v1 value, only those it
    sets), and the losses: for a caller that builds the v1 model itself."""
    fast = plain_fields(u, False)
    if fast is not None:
        return fast, NO_LOSSES
    losses = _Losses(strict)
    return _mapped_fields(u, False, "$", losses), losses.report()


def display_title(title: Any, name: Any, kind: Any, title_fallback: str | None = None) -> str:
    """The D10 title chain: non-empty ``title``, ``name``, ``title_fallback`` (a permission's
    title when a permission request is the first sight), the kind's label, ``"Tool call"``."""
    for candidate in (title, name, title_fallback):
        if isinstance(candidate, str) and candidate:
            return candidate
    label = KIND_LABELS.get(kind) if isinstance(kind, str) else None
    return label or DEFAULT_TOOL_CALL_TITLE


def tool_call_to_v1(
    u: v2.ToolCallUpdate, *, strict: bool = False, title_fallback: str | None = None
) -> tuple[v1.ToolCall, LossReport]:
    """The v1 ``tool_call`` for the first sight of ``u``'s id, and the losses (9.9 step 2).

    ``u`` is all that is known of the call (an update or a store snapshot). The title is never
    empty (D10, ``display_title``), and ``kind`` and ``status`` are always there (their
    defaults ``other`` and ``pending`` when ``u`` sets none: real v1 clients do not apply
    defaults, D9 amended). Empty collections and ``_meta`` are left out, and so is every clear:
    on a call nobody has seen it is the default. Substitutions are reported (strict mode
    raises).
    """
    values, losses = create_values(u, strict=strict, title_fallback=title_fallback)
    return v1.ToolCall(tool_call_id=u.tool_call_id, **values), losses


def create_values(
    u: v2.ToolCallUpdate, *, strict: bool = False, title_fallback: str | None = None
) -> tuple[dict[str, Any], LossReport]:
    """The fields of ``tool_call_to_v1(u, ...)`` (attribute name -> v1 value; ``title``,
    ``kind`` and ``status`` always there), and the losses: for a caller that builds the v1
    model itself."""
    values = plain_fields(u, True)
    report = NO_LOSSES
    if values is None:
        losses = _Losses(strict)
        values = _mapped_fields(u, True, "$", losses)
        report = losses.report()
    return create_defaults(values, u.kind, title_fallback), report


def create_defaults(
    values: dict[str, Any], kind: Any, title_fallback: str | None
) -> dict[str, Any]:
    """``values`` of a v1 ``tool_call`` with what it always carries: a non-empty title (D10,
    from ``values``, ``kind`` as the v2 call has it and ``title_fallback``), and ``kind`` and
    ``status`` (their defaults when not set)."""
    values["title"] = display_title(values.get("title"), values.get("name"), kind, title_fallback)
    values.setdefault("kind", "other")
    values.setdefault("status", "pending")
    return values


# --------------------------------------------------------------------------------------------
# Permissions (9.7, D28, D29)


@dataclass(frozen=True)
class _Prompt:
    req: v2.RequestPermissionRequest
    request_id: int | str | None
    shown: list[Any] | None
    """The v1 content the client holds for the subject's call, for a caller that tracks it (a
    bridge); ``None`` when the call is not known to be shown."""


def synthetic_tool_call_id(
    req: v2.RequestPermissionRequest, request_id: int | str | None = None
) -> str:
    """The id of the tool call synthesised for a permission request with no usable subject.

    ``_acp_permission_<request id>`` when the JSON-RPC id of the request is known (D28);
    otherwise ``_acp_permission_`` and the first 16 hex digits of the SHA-256 of the request's
    canonical JSON (keys sorted, no spaces, UTF-8), so equal requests get equal ids.
    """
    if request_id is not None:
        return f"{SYNTHETIC_ID_PREFIX}{request_id}"
    canonical = json.dumps(to_builtins(req), sort_keys=True, separators=(",", ":"))
    return f"{SYNTHETIC_ID_PREFIX}{hashlib.sha256(canonical.encode()).hexdigest()[:16]}"


def _text(text: str) -> v1.Content:
    return v1.Content(content=v1.TextContent(text=text))


def prompt_items(req: v2.RequestPermissionRequest) -> list[Any]:
    """What a v1 client must show of a prompt besides its title (D28, amended): the request's
    description, then for a ``command`` subject the command and its working directory."""
    items: list[Any] = []
    if isinstance(req.description, str) and req.description:
        items.append(_text(req.description))
    subject = req.subject
    if isinstance(subject, v2.CommandPermissionSubject):
        items.append(_text(fenced(f"$ {subject.command}") + f"\nWorking directory: {subject.cwd}"))
    return items


def _drop_subject_meta(subject: Any, losses: _Losses) -> None:
    _report_extra(subject, "$.subject", losses)
    if subject.meta is not UNSET and subject.meta is not None:
        losses.instead("$.subject._meta", "a v1 request has no subject `_meta`", "dropped")


def _prompt_shown(prompt: _Prompt, losses: _Losses, what: str) -> None:
    """Report that the prompt is shown in a known call's ``toolCall`` (strict raises)."""
    after = (
        "the bridge restores the call's own title and content after the answer"
        if prompt.shown is not None
        else "a stateless converter cannot restore the call's own title and content afterwards"
    )
    losses.instead("$.title", f"v1 has no prompt apart from {what}", f"shown there; {after}")


def _tool_call_subject(subject: Any, prompt: _Prompt, losses: _Losses) -> v1.ToolCallUpdate:
    req = prompt.req
    _drop_subject_meta(subject, losses)
    call: v2.ToolCallUpdate = subject.tool_call
    values = _fields(call, False, "$.subject.toolCall", losses)
    items = prompt_items(req)
    own_title = values.get("title")
    if items or not (isinstance(own_title, str) and own_title == req.title):
        # A v1 client renders the prompt from `toolCall`: the prompt goes there (D28, amended).
        _prompt_shown(prompt, losses, "the tool call's title and content")
    values["title"] = req.title
    if items:
        own = prompt.shown if prompt.shown is not None else values.get("content") or []
        values["content"] = [*items, *own]
    return v1.ToolCallUpdate(tool_call_id=call.tool_call_id, **values)


def _command_subject(subject: Any, prompt: _Prompt, losses: _Losses) -> v1.ToolCallUpdate:
    req = prompt.req
    known = subject.tool_call_id if isinstance(subject.tool_call_id, str) else None
    _drop_subject_meta(subject, losses)
    if isinstance(subject.terminal_id, str):
        losses.lost("$.subject.terminalId", "v1 cannot tie a prompt to a v2 terminal; dropped")
    items = prompt_items(req)
    if known is not None and prompt.shown is not None:
        # A call the v1 client shows: the prompt and the command go into it for the prompt.
        losses.instead(
            "$.subject", "v1 has no command permission subject", "shown in the named tool call"
        )
        _prompt_shown(prompt, losses, "the tool call's title and content")
        return v1.ToolCallUpdate(
            tool_call_id=known, title=req.title, content=[*items, *prompt.shown]
        )
    losses.instead(
        "$.subject", "v1 has no command permission subject", "sent as a synthetic tool call (D28)"
    )
    return v1.ToolCallUpdate(
        tool_call_id=known or synthetic_tool_call_id(req, prompt.request_id),
        title=req.title or DEFAULT_PERMISSION_TITLE,
        kind="execute",
        status="pending",
        content=items,
        raw_input={"command": subject.command, "cwd": subject.cwd},
    )


def _no_subject(subject: Any, prompt: _Prompt, losses: _Losses) -> v1.ToolCallUpdate:
    req = prompt.req
    if isinstance(subject, v2.UnknownPermissionSubject):
        reason = f"v1 has no permission subject of type {subject.tag!r}"
    else:
        reason = "a v1 request needs a tool call and this one has no subject"
    losses.instead("$.subject", reason, "a synthetic tool call carries the prompt (D28)")
    items = prompt_items(req)  # the bridge owns a synthetic card: the prompt may go into it
    return v1.ToolCallUpdate(
        tool_call_id=synthetic_tool_call_id(req, prompt.request_id),
        title=req.title or DEFAULT_PERMISSION_TITLE,
        kind="other",
        status="pending",
        content=items or UNSET,
    )


_SUBJECTS: dict[type[Any], Callable[[Any, _Prompt, _Losses], v1.ToolCallUpdate]] = {
    v2.ToolCallPermissionSubject: _tool_call_subject,
    v2.CommandPermissionSubject: _command_subject,
    v2.UnknownPermissionSubject: _no_subject,
    type(None): _no_subject,
    UnsetType: _no_subject,
}

_OPTION_KINDS = {kind: kind for kind in v1.KNOWN_OPTION_KINDS}


def _options(options: list[v2.PermissionOption], losses: _Losses) -> list[v1.PermissionOption]:
    out: list[v1.PermissionOption] = []
    offered: set[str] = set()
    unknown = False
    for index, option in enumerate(options):
        path = f"$.options[{index}]"
        if option.option_id in offered:  # "MUST be unique": the first one is the one shown (D5)
            losses.lost(path, f"duplicate option id {option.option_id!r}: dropped, the first kept")
            continue
        offered.add(option.option_id)
        kind = _OPTION_KINDS.get(option.kind)
        if kind is None:  # guessing allow or reject could mislead into approving (D29)
            losses.instead(path, f"v1 has no option kind {option.kind!r}", "option dropped")
            unknown = True
            continue
        _report_extra(option, path, losses)
        out.append(
            v1.PermissionOption(
                option_id=option.option_id,
                name=option.name,
                kind=kind,
                meta=_copy_meta(option.meta),
            )
        )
    if unknown and out and not any(option.kind in v2.REJECT_OPTION_KINDS for option in out):
        # A dropped option may have been the way to say no: never leave the user only yes.
        losses.lost(
            "$.options",
            "no reject option is left once the kinds v1 lacks are dropped: request not sent",
        )
        return []
    return out


def permission_request_to_v1(
    req: v2.RequestPermissionRequest,
    *,
    strict: bool = False,
    request_id: int | str | None = None,
    shown: list[Any] | None = None,
) -> tuple[v1.RequestPermissionRequest | None, LossReport]:
    """A v2 ``session/request_permission`` as a v1 one, and the losses (9.7, D28 amended).

    A v1 client renders a permission from its ``toolCall``, so that is where the prompt goes:
    ``toolCall.title`` is the request's ``title``, and when the request has a description or
    a ``command`` subject, ``toolCall.content`` starts with the description and the command
    (with its cwd), followed by the call's own content: ``shown``, the v1 content the client
    holds for the call when the caller tracks it (a bridge, which restores the call's own
    title and content after the answer), else the subject's own content. A ``tool_call``
    subject is otherwise the 9.3 update mapping of ``subject.toolCall``.

    Subject-less, unknown and ``command`` subjects the client does not show (``shown`` is
    ``None`` or the subject names no call) get a synthetic ``toolCall`` (D28): id
    ``subject.toolCallId`` for a command that names one, else
    ``synthetic_tool_call_id(req, request_id)``; title the prompt title; kind ``execute`` with
    ``rawInput`` ``{command, cwd}`` for a command, else ``other``; the prompt as content.

    Options: a repeated ``optionId`` is dropped (the first is kept, D5); kinds v1 lacks are
    dropped (D29), and when that leaves no reject option, or no option at all, the result is
    ``None``: do not send the request, answer the v2 agent ``{"outcome": "cancelled"}``.
    Strict mode raises ``ConversionError`` instead of any substitution.
    """
    losses = _Losses(strict)
    _report_extra(req, "$", losses)
    prompt = _Prompt(req, request_id, shown)
    subject = req.subject
    tool_call = _find(_SUBJECTS, subject)(subject, prompt, losses)
    options = _options(req.options, losses)
    if not options:
        losses.instead(
            "$.options",
            "no option a v1 client can show is left (D29)",
            "request not sent: answer the v2 agent `cancelled`",
        )
        return None, losses.report()
    request = v1.RequestPermissionRequest(
        session_id=req.session_id,
        tool_call=tool_call,
        options=options,
        meta=_copy_meta(req.meta),
    )
    return request, losses.report()


def permission_response_to_v2(resp: v1.RequestPermissionResponse) -> v2.RequestPermissionResponse:
    """A v1 client's answer as the v2 answer (9.7): ``selected`` and ``cancelled`` map one to
    one, ``_meta`` is copied. Nothing else exists in v1 (unknown keys are not carried, D19)."""
    outcome: v2.PermissionOutcome
    if isinstance(resp.outcome, v1.SelectedPermissionOutcome):
        outcome = v2.SelectedPermissionOutcome(
            option_id=resp.outcome.option_id, meta=_copy_meta(resp.outcome.meta)
        )
    else:
        outcome = v2.CancelledPermissionOutcome()
    return v2.RequestPermissionResponse(outcome=outcome, meta=_copy_meta(resp.meta))


def permission_response_to_v1(
    resp: v2.RequestPermissionResponse, *, strict: bool = False
) -> tuple[v1.RequestPermissionResponse, LossReport]:
    """A v2 client's answer as the v1 answer, and the losses (9.7).

    ``selected`` keeps its ``optionId`` and ``_meta``; ``cancelled`` loses its ``_meta``; an
    unknown outcome is ``cancelled``, never approval. This never raises, ``strict`` or not: an
    answer must reach the agent, and the spec maps an unknown outcome the same way in every mode.
    """
    losses = _Losses(strict=False)
    _report_extra(resp, "$", losses)
    found = resp.outcome
    outcome: v1.PermissionOutcome
    if isinstance(found, v2.SelectedPermissionOutcome):
        _report_extra(found, "$.outcome", losses)
        outcome = v1.SelectedPermissionOutcome(
            option_id=found.option_id, meta=_copy_meta(found.meta)
        )
    else:
        outcome = v1.CancelledPermissionOutcome()
        if isinstance(found, v2.UnknownPermissionOutcome):
            losses.lost("$.outcome", f"unknown outcome {found.tag!r}: sent as `cancelled`")
        else:
            _report_extra(found, "$.outcome", losses)
            if found.meta is not UNSET and found.meta is not None:
                losses.lost("$.outcome._meta", "v1's `cancelled` outcome has no `_meta`; dropped")
    response = v1.RequestPermissionResponse(outcome=outcome, meta=_copy_meta(resp.meta))
    return response, losses.report()


# --------------------------------------------------------------------------------------------
# Session updates (9.8, D30)


@dataclass(frozen=True)
class _ToV1:
    notices: bool
    compaction: bool


def _block_to_v1(value: Any, path: str, losses: _Losses, dropped: str) -> Any:
    """A v2 content block (JSON) at ``path`` as a v1 one (JSON); ``None`` when v1 cannot have
    it, and then ``dropped`` (the block, or the update holding it) is reported."""
    try:
        decoded = decode(value, cast(Any, v2.ContentBlock))
    except DecodeError as exc:
        where = path + exc.path[1:]
        losses.instead(dropped, f"not a valid v2 content block ({where}: {exc.reason})", "dropped")
        return None
    _salvaged(path, decoded.diagnostics, losses)
    block = decoded.value
    if isinstance(block, v2.UnknownContentBlock):
        losses.instead(
            dropped, f"content block at {path} has unknown type {block.tag!r}", "dropped"
        )
        return None
    return to_builtins(_struct(block, path, losses))


def _message_chunk_to_v1(data: Mapping[str, Any], losses: _Losses, opts: _ToV1) -> _Json | None:
    out = _copy_keys(data, ("content", "messageId", "_meta"), losses)
    block = _block_to_v1(data.get("content"), "$.content", losses, "$")
    if block is None:
        return None
    out["content"] = block
    if "messageId" in out and not isinstance(out["messageId"], str):  # optional in v1
        del out["messageId"]
        losses.lost("$.messageId", "not a string; dropped")
    return out


_PLAN_STATUSES: dict[str, tuple[str, str | None]] = {
    status: (status, None) for status in ("pending", "in_progress", "completed")
}
_PLAN_PRIORITIES: dict[str, tuple[str, str | None]] = {
    priority: (priority, None) for priority in ("high", "medium", "low")
}
_plan_priority = _enum(_PLAN_PRIORITIES, "medium", "neutral", "plan priority")
_plan_status = _enum(_PLAN_STATUSES, "pending", "not done", "plan entry status")


def _plan_entry(entry: Any, path: str, losses: _Losses) -> Any:
    if not isinstance(entry, dict):
        return entry  # the schema check reports it
    if entry.get("status") == "cancelled":  # neither done nor still to do
        losses.instead(path, "v1 plan entries cannot be cancelled", "entry left out")
        return None
    out = dict(entry)
    for key, convert in (("status", _plan_status), ("priority", _plan_priority)):
        if isinstance(out.get(key), str):
            out[key] = convert(out[key], f"{path}.{key}", losses)
    return out


def _plan_to_v1(data: Mapping[str, Any], losses: _Losses, opts: _ToV1) -> _Json | None:
    out = _copy_keys(data, ("plan", "_meta"), losses)
    plan = out.pop("plan", None)
    if not isinstance(plan, dict) or plan.get("type") != "items":
        kind = plan.get("type") if isinstance(plan, dict) else None
        losses.instead("$", f"v1 has no plan of type {kind!r}", "dropped")
        return None
    losses.lost(
        "$.plan.planId",
        "a v1 session has one plan: dropped (plans with different ids replace each other)",
    )
    if plan.get("_meta") is not None:
        losses.lost("$.plan._meta", "v1 plans have one `_meta`, the update's; dropped")
    entries = plan.get("entries")
    if isinstance(entries, list):
        converted = (_plan_entry(e, f"$.plan.entries[{i}]", losses) for i, e in enumerate(entries))
        entries = [entry for entry in converted if entry is not None]
    return {"entries": entries, **out}


def _command_to_v1(command: Any, path: str, losses: _Losses) -> Any:
    if not isinstance(command, dict):
        return command  # the schema check reports it
    if command.get("type") != "command":
        losses.instead(path, f"v1 has no command of type {command.get('type')!r}", "dropped")
        return None
    out = {key: value for key, value in command.items() if key != "type"}
    command_input = out.get("input")
    if isinstance(command_input, dict):
        if command_input.get("type") == "text":
            out["input"] = {key: value for key, value in command_input.items() if key != "type"}
        else:
            del out["input"]
            losses.instead(
                f"{path}.input",
                f"v1 has no command input of type {command_input.get('type')!r}",
                "dropped",
            )
    return out


def _config_option_to_v1(option: Any, path: str, losses: _Losses) -> Any:
    if not isinstance(option, dict):
        return option  # the schema check reports it
    if option.get("type") not in ("select", "boolean"):
        losses.instead(path, f"v1 has no config option of type {option.get('type')!r}", "dropped")
        return None
    option = dict(_renamed(option, "configId", "id"))  # never change the input
    if isinstance(option.get("options"), list):
        option["options"] = [_renamed(o, "groupId", "group") for o in option["options"]]
    return option


def _if_advertised(capability: str, convert: _OpaqueConvert) -> _OpaqueConvert:
    def guarded(data: Mapping[str, Any], losses: _Losses, opts: _ToV1) -> _Json | None:
        if not getattr(opts, capability):
            losses.instead(
                "$",
                f"v1 agents send `{data['sessionUpdate']}` only to clients that advertised "
                f"`session.{capability}` (D30)",
                "dropped",
            )
            return None
        return convert(data, losses, opts)

    return guarded


_OPAQUE_TO_V1: dict[str, _OpaqueRule] = {
    "user_message_chunk": _OpaqueRule(_message_chunk_to_v1, "user_message_chunk", None),
    "agent_message_chunk": _OpaqueRule(_message_chunk_to_v1, "agent_message_chunk", None),
    "agent_thought_chunk": _OpaqueRule(_message_chunk_to_v1, "agent_thought_chunk", None),
    "plan_update": _OpaqueRule(_plan_to_v1, "plan", "Plan"),
    "available_commands_update": _OpaqueRule(
        _each_item("availableCommands", _command_to_v1),
        "available_commands_update",
        "AvailableCommandsUpdate",
    ),
    "config_option_update": _OpaqueRule(
        _each_item("configOptions", _config_option_to_v1),
        "config_option_update",
        "ConfigOptionUpdate",
    ),
    "session_info_update": _OpaqueRule(
        _copied("title", "updatedAt"), "session_info_update", "SessionInfoUpdate"
    ),
    "usage_update": _OpaqueRule(_copied("used", "size", "cost"), "usage_update", "UsageUpdate"),
    "notice": _OpaqueRule(
        _if_advertised("notices", _copied("severity", "title", "description")), "notice", "Notice"
    ),
    "compaction_update": _OpaqueRule(
        _if_advertised("compaction", _compaction(_block_to_v1)),
        "compaction_update",
        "CompactionUpdate",
    ),
    "compaction_summary_chunk": _OpaqueRule(
        _if_advertised("compaction", _summary_chunk(_block_to_v1)),
        "compaction_summary_chunk",
        "CompactionSummaryChunk",
    ),
}

_MESSAGE_UPSERT = (
    "a message upsert replaces content a v1 client only appends to; only a stateful adapter "
    "that knows what the v1 side received can map it (9.8)"
)
_UNSTABLE = "an unstable-only v2 update with no v1 form (9.8)"

_NOT_TO_V1: dict[str, str] = {
    "state_update": "v1 has no `state_update` (9.8)",
    "user_message": _MESSAGE_UPSERT,
    "agent_message": _MESSAGE_UPSERT,
    "agent_thought": _MESSAGE_UPSERT,
    "plan_removed": _UNSTABLE,
    "subagent_update": _UNSTABLE,
    "session_message": _UNSTABLE,
    "session_message_chunk": _UNSTABLE,
}


def _tool_call_update(update: Any, losses: _Losses, opts: _ToV1) -> v1.SessionUpdate | None:
    values = _fields(update, False, "$", losses)
    return v1.SessionToolCallUpdate(tool_call_id=update.tool_call_id, **values)


def _content_chunk(update: Any, losses: _Losses, opts: _ToV1) -> v1.SessionUpdate | None:
    losses.instead(
        "$",
        "`tool_call_content_chunk` cannot be represented by a stateless v2-to-v1 adapter: "
        "v1 content updates replace the whole array (9.3)",
        "dropped",
    )
    return None


_TERMINAL_TAGS: dict[type[Any], str] = {
    v2.TerminalUpdate: "terminal_update",
    v2.TerminalOutputChunk: "terminal_output_chunk",
}


def _terminal_update(update: Any, losses: _Losses, opts: _ToV1) -> v1.SessionUpdate | None:
    losses.instead(
        "$",
        f"`{_find(_TERMINAL_TAGS, update)}` has no v1 form; rendering terminals into tool-call "
        "content needs the state a stateful bridge keeps (9.6)",
        "dropped",
    )
    return None


def _opaque_update(update: Any, losses: _Losses, opts: _ToV1) -> v1.SessionUpdate | None:
    out = _opaque(update.data, _OPAQUE_TO_V1, _NOT_TO_V1, "v1", losses, opts)
    return None if out is None else v1.OpaqueSessionUpdate(out)


_UPDATES: dict[type[Any], Callable[[Any, _Losses, _ToV1], v1.SessionUpdate | None]] = {
    v2.SessionToolCallUpdate: _tool_call_update,
    v2.ToolCallContentChunk: _content_chunk,
    v2.TerminalUpdate: _terminal_update,
    v2.TerminalOutputChunk: _terminal_update,
    v2.OpaqueSessionUpdate: _opaque_update,
}


def session_update_to_v1(
    update: v2.SessionUpdate,
    *,
    strict: bool = False,
    notices: bool = False,
    compaction: bool = False,
) -> tuple[v1.SessionUpdate | None, LossReport]:
    """A v2 ``session/update`` payload as a v1 one (``None``: nothing to send), and the losses.

    ``tool_call_update`` becomes a v1 ``tool_call_update`` (9.3; a caller that tracks which ids
    the client has seen sends ``tool_call_to_v1`` for a new one). Message chunks, ``plan_update``
    (as ``plan``), commands, config options, session info and usage are mapped into their v1
    shapes; ``notice`` and compaction updates only when the client advertised
    ``session.notices`` / ``session.compaction`` (``notices``/``compaction``, D30). Everything
    else (``tool_call_content_chunk``, terminal updates, ``state_update``, message upserts,
    unknown updates) is dropped and reported, never forwarded raw. Strict mode raises
    ``ConversionError`` instead of any drop or substitution.
    """
    losses = _Losses(strict)
    opts = _ToV1(notices=notices, compaction=compaction)
    return _find(_UPDATES, update)(update, losses, opts), losses.report()
