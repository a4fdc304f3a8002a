"""The tool-call field registry: the models are the one list of a tool call's fields (issue 28).

Rules this module owns:

- A tool call's patch fields are read from its model, never listed by hand: every field of
  ``v2.ToolCallUpdate`` (``TOOL_CALL_FIELDS``) or of v1's ``ToolCallUpdate``
  (``V1_TOOL_CALL_FIELDS``; v1's ``ToolCall`` has the same ones, a test holds it) but the id,
  in the model's order. Each is three-state (``UNSET``, ``None``, a value; in v2 ``None`` is a
  clear, D2) and has its attribute name, wire name, position in ``msgspec.structs.astuple``
  (the id is 0) and whether it holds a whole array (``collection``).
- Every module that handles the fields one by one (a table, a hand-unrolled fast path, a
  patcher) declares which it handles and is checked against the registry at import
  (``check_handled``): a field it misses, or one it names that the model does not have, is an
  ``UnhandledFieldError`` naming the consumer and the fields. A module that derives its list
  from the registry handles every field by construction. docs/design.md ("Adding a field")
  lists the consumers; tests/models/test_field_registry.py holds them to this.
"""

from __future__ import annotations

import typing
from collections.abc import Iterable, Mapping
from functools import cache
from typing import Any, NamedTuple

import msgspec

from . import _v1
from ._v2_tool_calls import ToolCallUpdate

__all__ = [
    "TOOL_CALL_FIELDS",
    "V1_TOOL_CALL_FIELDS",
    "PatchField",
    "UnhandledFieldError",
    "check_handled",
    "patch_fields",
]


class PatchField(NamedTuple):
    """One patch field of a tool-call model."""

    attr: str
    """Attribute name (``raw_input``)."""
    key: str
    """Wire name (``rawInput``)."""
    position: int
    """Index in ``msgspec.structs.astuple`` of the model (the id is 0)."""
    collection: bool
    """Whether it holds a whole array (``[]`` stays ``[]``, D2)."""


class UnhandledFieldError(RuntimeError):
    """A consumer of the tool-call fields does not handle a field of its model (issue 28)."""

    def __init__(self, consumer: str, missing: list[str], unknown: list[str]) -> None:
        self.consumer = consumer
        self.missing = missing
        self.unknown = unknown
        parts = []
        if missing:
            parts.append(f"does not handle the field(s) {', '.join(missing)}")
        if unknown:
            parts.append(f"names field(s) the model does not have: {', '.join(unknown)}")
        super().__init__(
            f"{consumer} {'; '.join(parts)} (issue 28: see docs/design.md, 'Adding a field')"
        )


def _holds_list(tp: Any) -> bool:
    return typing.get_origin(tp) is list or any(_holds_list(a) for a in typing.get_args(tp))


@cache
def patch_fields(model: type[msgspec.Struct]) -> tuple[PatchField, ...]:
    """The patch fields of a tool-call model: every field but the first (the id), in order
    (read once per model)."""
    return tuple(
        PatchField(f.name, f.encode_name, position, _holds_list(f.type))
        for position, f in enumerate(msgspec.structs.fields(model))
        if position
    )


TOOL_CALL_FIELDS = patch_fields(ToolCallUpdate)
"""The patch fields of ``v2.ToolCallUpdate``: the one list of a v2 tool call's fields."""

V1_TOOL_CALL_FIELDS = patch_fields(_v1.ToolCallUpdate)
"""The patch fields of v1's ``ToolCallUpdate`` (its order, which is not v2's)."""


def check_handled(
    consumer: str,
    handled: Iterable[str],
    fields: tuple[PatchField, ...] = TOOL_CALL_FIELDS,
    keys: Mapping[str, str] | None = None,
) -> None:
    """Raise ``UnhandledFieldError`` naming ``consumer`` unless the attribute names it
    ``handled`` are exactly those of ``fields`` (and the wire names it gives in ``keys``, by
    attribute name, are theirs)."""
    names = set(handled)
    wire = {f.attr: f.key for f in fields}
    missing = [f.attr for f in fields if f.attr not in names]
    unknown = sorted(names - set(wire))
    if keys is not None:
        unknown += [
            f"{key!r} as the wire name of {attr}"
            for attr, key in keys.items()
            if attr in wire and wire[attr] != key
        ]
    if missing or unknown:
        raise UnhandledFieldError(consumer, missing, unknown)
