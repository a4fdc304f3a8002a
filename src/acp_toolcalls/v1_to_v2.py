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
- Everything dropped is reported as a ``Loss`` with its JSON path. Only the terminal case
  depends on ``strict``; the other drops are the mapping itself, the same in both modes.

Theory of operation: tool-call fields are converted through ``_TOOL_CALL_FIELDS`` (one row per
field: wire key, converter, and which value a v1 create cannot tell from omitted); content items
through ``_ITEMS``; every other v1 object is copied field by field into its v2 class through
``_STRUCTS``, which names the few fields that need a conversion.
"""

from __future__ import annotations

import difflib
import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from functools import cache
from itertools import islice
from typing import Any, TypeVar

import msgspec
from msgspec import UNSET

from . import v1, v2
from .loss import ConversionError, Loss, LossReport
from .wire import WireStruct, extra_fields

__all__ = [
    "content_to_v2",
    "diff_to_v2",
    "git_patch",
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
        if self.strict:
            raise ConversionError(path, reason)
        self.found.append(Loss(path, f"{reason}; dropped"))

    def report(self) -> LossReport:
        return LossReport(self.found)


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
    for key in extra_fields(obj):
        losses.lost(_key_path(path, key), "unknown field, not carried across versions (D19)")


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


def _struct(obj: WireStruct, path: str, losses: _Losses) -> Any:
    """``obj`` copied into its v2 class (``_STRUCTS``), field by field."""
    target, fixes = _lookup(_STRUCTS, obj)
    _report_extra(obj, path, losses)
    values: dict[str, Any] = {}
    for name, key in _field_keys(type(obj)):
        value = getattr(obj, name)
        if value is UNSET:
            continue
        fix = fixes.get(name)
        if fix is not None and value is not None:  # nested `null` means "none" in v2 too
            value = fix(value, _key_path(path, key), losses)
            if value is UNSET:
                continue
        values[name] = value
    return target(**values)


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


def _tool_call(
    tc: v1.ToolCall | v1.ToolCallUpdate, *, create: bool, strict: bool
) -> tuple[v2.ToolCallUpdate, LossReport]:
    losses = _Losses(strict)
    _report_extra(tc, "$", losses)
    values: dict[str, Any] = {}
    for field in _TOOL_CALL_FIELDS:
        value = getattr(tc, field.attr)
        if value is UNSET or value is None:  # v1 null: unchanged / not provided (D8)
            continue
        if create and field.create_default is not None and field.create_default(value):
            continue
        values[field.attr] = field.convert(value, f"$.{field.key}", losses)
    return v2.ToolCallUpdate(tool_call_id=tc.tool_call_id, **values), losses.report()


def tool_call_to_v2(
    tc: v1.ToolCall, *, strict: bool = False
) -> tuple[v2.ToolCallUpdate, LossReport]:
    """A v1 ``tool_call`` (create) as a v2 ``tool_call_update`` patch, and the losses.

    Default values are omitted so that a repeated create merges (D9); ``title`` is always
    applied; ``null`` fields are omitted. Raises ``ConversionError`` in strict mode for
    content the v2 side cannot represent (a terminal, D38).
    """
    return _tool_call(tc, create=True, strict=strict)


def tool_call_update_to_v2(
    u: v1.ToolCallUpdate, *, strict: bool = False
) -> tuple[v2.ToolCallUpdate, LossReport]:
    """A v1 ``tool_call_update`` (or permission ``toolCall``) as a v2 patch, and the losses.

    ``null`` means unchanged and is omitted (D8); ``[]`` stays ``[]``; every value is copied.
    Raises ``ConversionError`` in strict mode for a terminal item (D38).
    """
    return _tool_call(u, create=False, strict=strict)
