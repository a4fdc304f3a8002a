"""Tool calls both ways: the field tables of ``tool_call``/``tool_call_update`` (D46 (field
mapping); D4, D8-D10, D32, D36, D39).

Rules this module owns:

- v1 -> v2: a v1 ``tool_call`` and a v1 ``tool_call_update`` both become one plain v2
  ``ToolCallUpdate`` (a patch). A v1 ``null`` never becomes a v2 clear: it reads as omitted
  (D8). A repeated v1 ``tool_call`` (of an id the caller knows) cannot tell an omitted field
  from its default, so the defaults (``kind: "other"``, ``status: "pending"``, ``[]``) are left
  out and it merges (D9); ``title`` is always applied. Enum strings are copied verbatim,
  unknown ones included (D32).
- v2 -> v1: an update becomes a v1 ``tool_call_update``; the first sight of an id becomes a v1
  ``tool_call`` whose title is never empty (``display_title``, D10) and which always carries
  ``kind`` and ``status``. ``kind: null`` is ``"other"`` and ``status: null`` ``"pending"``,
  exactly (D4); a collection clear is ``[]``. Substituted, reported (strict raises):
  ``cancelled`` -> ``failed``, ``paused`` and unknown statuses -> ``in_progress``, unknown
  kinds -> ``other``. Omitted, reported (strict raises): clears of ``title``, ``name``,
  ``rawInput``, ``rawOutput`` and ``_meta``, and ``null``-valued ``_meta`` keys (D39). In a
  create a clear is the default and nothing is lost. ``capabilities`` (D36) and unknown keys
  (D19) are dropped and reported in every mode.

Theory of operation: one row per field (``_Field``: wire key, conversion, what a create leaves
out, what a ``null`` becomes) in ``_FIELDS_TO_V2`` and ``_FIELDS_TO_V1``, each held at import to
the fields of its source model (``models.check_handled``, issue 28: a field without a row fails
the import, naming the table); the common loss-free shapes skip the tables (``_plain``), with
the same result.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from functools import partial
from typing import Any

from msgspec import UNSET

from .. import v1, v2
from ..models import KIND_LABELS, TOOL_CALL_FIELDS, V1_TOOL_CALL_FIELDS, check_handled
from ._content import contents_to_v1, contents_to_v2, locations_to_v1, locations_to_v2
from ._kernel import Fix, Losses, empty, equals, meta_fix, report_extra, same
from ._loss import NO_LOSSES, LossReport, key_path
from ._plain import plain_fields, plain_tool_call_fields

DEFAULT_TOOL_CALL_TITLE = "Tool call"
"""The last resort of the D10 title chain."""


def _no_clear(path: str, losses: Losses) -> Any:
    return UNSET


@dataclass(frozen=True)
class _Field:
    attr: str
    """Attribute name, the same on the v1 and v2 models."""
    key: str
    """Wire key, for loss paths."""
    convert: Fix
    """A non-null value."""
    create_default: Callable[[Any], bool] | None = None
    """True for a (converted) value a create leaves out: v1 -> v2, one a repeated v1
    ``tool_call`` cannot tell from omitted (D9); v2 -> v1, a v1 ``tool_call``'s default."""
    clear: Callable[[str, Losses], Any] = _no_clear
    """v2 -> v1: what a ``null`` becomes in a v1 update (``UNSET``: nothing)."""
    create_convert: Fix | None = None
    """v2 -> v1: ``convert`` for a create, when it differs."""


# --------------------------------------------------------------------------------------------
# v1 -> v2

_FIELDS_TO_V2: tuple[_Field, ...] = (
    _Field("title", "title", same),  # always applied, even by a repeated create (D9)
    _Field("name", "name", same),
    _Field("kind", "kind", same, equals("other")),  # unknown strings verbatim (D32)
    _Field("status", "status", same, equals("pending")),
    _Field("content", "content", contents_to_v2, empty),
    _Field("locations", "locations", locations_to_v2, empty),
    _Field("raw_input", "rawInput", same),
    _Field("raw_output", "rawOutput", same),
    _Field("meta", "_meta", meta_fix),
)
check_handled(  # one row per v1 field, under its wire name (issue 28)
    "convert._tool_calls._FIELDS_TO_V2",
    [f.attr for f in _FIELDS_TO_V2],
    V1_TOOL_CALL_FIELDS,
    {f.attr: f.key for f in _FIELDS_TO_V2},
)


def fields_to_v2(
    tc: v1.ToolCall | v1.ToolCallUpdate, merge: bool, path: str, losses: Losses
) -> dict[str, Any]:
    """The v2 patch fields of a v1 call; ``merge``: a repeated ``tool_call`` of a known id,
    whose default values are left out so that it merges (D9)."""
    fast = plain_tool_call_fields(tc, merge)
    if fast is not None:
        return fast
    return _mapped_fields_to_v2(tc, merge, path, losses)


def _mapped_fields_to_v2(
    tc: v1.ToolCall | v1.ToolCallUpdate, merge: bool, path: str, losses: Losses
) -> dict[str, Any]:
    """``fields_to_v2`` through ``_FIELDS_TO_V2`` (the general path)."""
    report_extra(tc, path, losses)
    values: dict[str, Any] = {}
    for field in _FIELDS_TO_V2:
        value = getattr(tc, field.attr)
        if value is UNSET or value is None:  # v1 null: unchanged / not provided (D8)
            continue
        if merge and field.create_default is not None and field.create_default(value):
            continue
        values[field.attr] = field.convert(value, f"{path}.{field.key}", losses)
    return values


def _tool_call_to_v2(
    tc: v1.ToolCall | v1.ToolCallUpdate, *, merge: bool, strict: bool
) -> tuple[v2.ToolCallUpdate, LossReport]:
    losses = Losses(strict)
    values = fields_to_v2(tc, merge, "$", losses)
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
    return _tool_call_to_v2(tc, merge=repeated, strict=strict)


def tool_call_update_to_v2(
    u: v1.ToolCallUpdate, *, strict: bool = False
) -> tuple[v2.ToolCallUpdate, LossReport]:
    """A v1 ``tool_call_update`` (or permission ``toolCall``) as a v2 patch, and the losses.

    ``null`` means unchanged and is omitted (D8); ``[]`` stays ``[]``; every value is copied.
    Raises ``ConversionError`` in strict mode for a terminal item (D38).
    """
    return _tool_call_to_v2(u, merge=False, strict=strict)


# --------------------------------------------------------------------------------------------
# v2 -> v1


def closed_enum(
    table: Mapping[str, tuple[str, str | None]], unknown: str, note: str, what: str
) -> Fix:
    """A conversion of an open v2 enum into v1's closed one: known values kept, substitutions
    from ``table`` (value -> (v1 value, note)), anything else -> ``unknown``."""

    def convert(value: Any, path: str, losses: Losses) -> Any:
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

_status = closed_enum(
    _STATUSES, "in_progress", "an unrecognized status is still in progress", "status"
)
_kind = closed_enum(_KINDS, "other", "an unrecognized kind displays as `other`", "kind")


def _keep_previous(path: str, losses: Losses) -> Any:
    losses.instead(
        path, "a v1 update cannot clear a field", "omitted: the v1 client keeps the old value"
    )
    return UNSET


def _capabilities(value: Any, path: str, losses: Losses) -> Any:
    losses.lost(path, "v1 has no per-tool-call controls (`tool_call/cancel`); dropped")
    return UNSET


def _meta_patch(meta: dict[str, Any], path: str, losses: Losses) -> Any:
    out: dict[str, Any] = {}
    for key, value in meta.items():
        if value is None:
            losses.instead(
                key_path(path, key),
                "v1 cannot remove a `_meta` key",
                "left out: a merging v1 client keeps the old value",
            )
        else:
            out[key] = value
    return out


def _meta_object(meta: dict[str, Any], path: str, losses: Losses) -> Any:
    # A new call's `_meta` patch applies to an empty map: `null` keys are simply absent (D13).
    return {key: value for key, value in meta.items() if value is not None}


_FIELDS_TO_V1: tuple[_Field, ...] = (
    _Field("title", "title", same, clear=_keep_previous),
    _Field("name", "name", same, clear=_keep_previous),
    _Field("kind", "kind", _kind, clear=lambda path, losses: "other"),  # exact (D4)
    _Field("status", "status", _status, clear=lambda path, losses: "pending"),
    _Field("content", "content", contents_to_v1, empty, lambda path, losses: []),  # clear: []
    _Field("locations", "locations", locations_to_v1, empty, lambda path, losses: []),
    _Field("raw_input", "rawInput", same, clear=_keep_previous),
    _Field("raw_output", "rawOutput", same, clear=_keep_previous),
    _Field("capabilities", "capabilities", _capabilities, clear=partial(_capabilities, None)),
    _Field("meta", "_meta", _meta_patch, empty, _keep_previous, _meta_object),
)
check_handled(  # one row per v2 field, under its wire name (issue 28)
    "convert._tool_calls._FIELDS_TO_V1",
    [f.attr for f in _FIELDS_TO_V1],
    TOOL_CALL_FIELDS,
    {f.attr: f.key for f in _FIELDS_TO_V1},
)


def fields_to_v1(u: v2.ToolCallUpdate, create: bool, path: str, losses: Losses) -> dict[str, Any]:
    """The v1 fields of a v2 call (attribute name -> value); ``create``: for a v1 ``tool_call``
    (the first sight), which leaves defaults and clears out."""
    fast = plain_fields(u, create)
    if fast is not None:
        return fast
    return _mapped_fields_to_v1(u, create, path, losses)


def _mapped_fields_to_v1(
    u: v2.ToolCallUpdate, create: bool, path: str, losses: Losses
) -> dict[str, Any]:
    """The v1 values of ``u``'s fields through ``_FIELDS_TO_V1`` (the general path)."""
    report_extra(u, path, losses)
    values: dict[str, Any] = {}
    for field in _FIELDS_TO_V1:
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


def tool_call_update_to_v1(
    u: v2.ToolCallUpdate, *, strict: bool = False
) -> tuple[v1.ToolCallUpdate, LossReport]:
    """A v2 ``tool_call_update`` as a v1 ``tool_call_update``, and the losses (D46 (field mapping)).

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
    losses = Losses(strict)
    return _mapped_fields_to_v1(u, False, "$", losses), losses.report()


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
    """The v1 ``tool_call`` for the first sight of ``u``'s id, and the losses (D46 (v2 to v1
    bridge)).

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
        losses = Losses(strict)
        values = _mapped_fields_to_v1(u, True, "$", losses)
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
