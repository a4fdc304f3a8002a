"""Patch application: how one update's fields land in the stored ``fields`` map.

Rules this module owns (D46 (patch semantics, meta patches); D2, D13):

- A field that is ``UNSET`` (omitted) leaves the stored value; ``null`` clears it (stored as
  ``None``); a value replaces it. Stored by wire name (``rawInput``).
- ``content`` and ``locations`` are whole arrays, stored as received: ``[]`` stays ``[]`` and
  is listed as cleared, ``null`` stays ``None``. They are copied, because chunks later append
  to the stored list.
- ``_meta`` patches by top-level key (``patch_meta``): ``UNSET`` keeps, ``None`` clears, a key
  set to ``null`` is removed; stored maps never hold ``None`` values.
- Unknown keys of an update (a call's or a terminal's) are kept beside the fields and patched
  the same way, by key (``patch_extra``, D19).
- Each patcher lists every wire name it set, in the model's field order, in ``patched`` or in
  ``cleared``: the events and the byte accounting follow that order.

The patchers are written out field by field (the store's hot path: about twice as fast as a
loop over a field table); ``check_patcher`` makes sure, at import, that they cover every field
of their model (``models.patch_fields``, issue 28) but those the store applies itself.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import msgspec
from msgspec import UNSET
from msgspec.structs import astuple

from .. import v2
from ..models import UnhandledFieldError, extra_fields, patch_fields

PLAIN_UPDATES = frozenset({v2.ToolCallUpdate, v2.SessionToolCallUpdate})
"""Update types that never carry unknown keys (those come as same-named subclasses)."""


def patch_meta(stored: Any, incoming: Any) -> Any:
    """The patch ``_meta`` rule (D46 (meta patches)): ``UNSET`` keeps, ``None`` clears, an object
    patches."""
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


def patch_extra(
    update: Any, stored: dict[str, Any] | None, patched: list[str], cleared: list[str]
) -> dict[str, Any] | None:
    """The unknown keys of ``update`` patched into ``stored`` (D19): each replaces, ``null``
    included (then listed as cleared); the map that holds them (``None``: there are none)."""
    extra = extra_fields(update)
    if not extra:
        return stored
    if stored is None:
        stored = {}
    stored.update(extra)
    for key, value in extra.items():
        (cleared if value is None else patched).append(key)
    return stored


def patch_call(
    update: v2.ToolCallUpdate, fields: dict[str, Any], patched: list[str], cleared: list[str]
) -> None:
    """Patch a tool call's ``fields`` with ``update`` (all but ``toolCallId`` and ``_meta``)."""
    # The values by position (``check_patcher`` holds the positions to the model's fields): one read
    # of the struct instead of ten attribute lookups, which compiled code makes generically.
    values = astuple(update)
    unset = UNSET  # a local: compiled, a module's global is a dict lookup at each use
    value: Any = values[1]
    if value is not unset:
        fields["name"] = value
        (cleared if value is None else patched).append("name")
    value = values[2]
    if value is not unset:
        fields["title"] = value
        (cleared if value is None else patched).append("title")
    value = values[3]
    if value is not unset:
        fields["kind"] = value
        (cleared if value is None else patched).append("kind")
    value = values[4]
    if value is not unset:
        fields["status"] = value
        (cleared if value is None else patched).append("status")
    value = values[5]
    if value is not unset:
        fields["content"] = value if value is None else list(value)
        (patched if value else cleared).append("content")
    value = values[6]
    if value is not unset:
        fields["locations"] = value if value is None else list(value)
        (patched if value else cleared).append("locations")
    value = values[7]
    if value is not unset:
        fields["rawInput"] = value
        (cleared if value is None else patched).append("rawInput")
    value = values[8]
    if value is not unset:
        fields["rawOutput"] = value
        (cleared if value is None else patched).append("rawOutput")
    value = values[9]
    if value is not unset:
        fields["capabilities"] = value
        (cleared if value is None else patched).append("capabilities")


def patch_terminal(
    update: v2.TerminalUpdate, fields: dict[str, Any], patched: list[str], cleared: list[str]
) -> None:
    """Patch a terminal's ``fields`` with ``update`` (all but ``terminalId``, ``output`` and
    ``_meta``)."""
    value: Any = update.command
    if value is not UNSET:
        fields["command"] = value
        (cleared if value is None else patched).append("command")
    value = update.cwd
    if value is not UNSET:
        fields["cwd"] = value
        (cleared if value is None else patched).append("cwd")
    value = update.exit_status
    if value is not UNSET:
        fields["exitStatus"] = value
        (cleared if value is None else patched).append("exitStatus")
    value = update.size
    if value is not UNSET:
        fields["size"] = value
        (cleared if value is None else patched).append("size")
    value = update.capabilities
    if value is not UNSET:
        fields["capabilities"] = value
        (cleared if value is None else patched).append("capabilities")


_PATCHERS: tuple[tuple[str, Callable[..., None], type[msgspec.Struct], frozenset[str]], ...] = (
    ("store._patch.patch_call", patch_call, v2.ToolCallUpdate, frozenset({"toolCallId", "_meta"})),
    (
        "store._patch.patch_terminal",
        patch_terminal,
        v2.TerminalUpdate,
        frozenset({"terminalId", "output", "_meta"}),
    ),
)
"""Each patcher (by name), its model and the wire names the store applies itself."""


def check_patcher(
    name: str, patcher: Callable[..., None], model: type[msgspec.Struct], own: frozenset[str]
) -> None:
    """Every patch field of ``model`` (``models.patch_fields``) is patched by ``patcher`` (in the
    model's order, each from its own value) or in ``own`` (applied by the store itself): a
    field added to a model without a line above, or moved, is an ``UnhandledFieldError`` naming
    the patcher (issue 28)."""
    fields_of = patch_fields(model)
    wanted = [f.key for f in fields_of if f.key not in own]
    probe = model(**{f.attr: None for f in fields_of}, **{_id(model): "probe"})
    fields: dict[str, Any] = {}
    patched: list[str] = []
    cleared: list[str] = []
    patcher(probe, fields, patched, cleared)
    if cleared != wanted or list(fields) != wanted or patched:
        missing = [f.attr for f in fields_of if f.key in wanted and f.key not in cleared]
        raise UnhandledFieldError(name, missing, [key for key in cleared if key not in wanted])
    marked = model(**{f.attr: [f.key] for f in fields_of}, **{_id(model): "probe"})
    fields = {}
    patcher(marked, fields, [], [])
    if any(value != [key] for key, value in fields.items()):
        raise RuntimeError(f"{name} reads a field from another's place")


def _id(model: type[msgspec.Struct]) -> str:
    return msgspec.structs.fields(model)[0].name


for _name, _patcher, _model, _own in _PATCHERS:
    check_patcher(_name, _patcher, _model, _own)
