"""The fast paths of the tool-call mapping: the common loss-free shapes, without the tables.

Rules this module owns: ``plain_tool_call_fields`` (v1 -> v2), ``plain_fields`` and
``plain_stored_fields`` (v2 -> v1) return exactly what the general path (``_tool_calls``'s
field tables) returns for a call whose fields all map without a loss (no unknown keys, known
enum values, plain text content, locations and ``_meta`` the target accepts), without its
per-field calls and paths; ``None`` for any other call, which takes that path. Property tests
(tests/bridge/test_fast_paths.py) hold the two equal. They are the bulk of streamed traffic,
which is why they exist (docs/benchmarks.md).

Each path is written out field by field (a loop over a table is what they save), so each
declares the fields it reads (``*_READS``, checked at import against the models' fields,
``models.check_handled``; issue 28): a field added to a model without its lines here fails the
import, naming the path, instead of being dropped. tests/models/test_field_registry.py holds each
declaration to the attributes its function reads. ``plain_stored_fields`` needs none: it takes
the general path for any key it does not know.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from msgspec import UNSET

from .. import v1, v2
from ..models import TOOL_CALL_FIELDS, V1_TOOL_CALL_FIELDS, check_handled
from ._kernel import copy_meta

# --------------------------------------------------------------------------------------------
# v1 -> v2

_PLAIN_CALLS = (v1.ToolCall, v1.ToolCallUpdate, v1.SessionToolCallUpdate)
PLAIN_TOOL_CALL_FIELDS_READS = (
    "title", "name", "kind", "status", "content", "locations", "raw_input", "raw_output", "meta",
)  # fmt: skip
"""The fields of the v1 call ``plain_tool_call_fields`` reads, in its order."""
check_handled(
    "convert._plain.plain_tool_call_fields", PLAIN_TOOL_CALL_FIELDS_READS, V1_TOOL_CALL_FIELDS
)


def plain_tool_call_fields(
    tc: v1.ToolCall | v1.ToolCallUpdate, merge: bool = False
) -> dict[str, Any] | None:
    """``_mapped_fields_to_v2(tc, merge, ...)`` (``_tool_calls``) for a call whose fields all
    copy without a loss (no unknown keys, plain text content, locations whose ``line`` v2
    accepts): the values, copied as that path copies them, without its per-field calls and
    paths; ``None`` for any other call, which takes that path (a property test holds the two
    equal)."""
    unset = UNSET  # a local: compiled, a module's global is a lookup at each use
    if type(tc) not in _PLAIN_CALLS:
        return None  # unknown keys are reported by the general path
    values: dict[str, Any] = {}
    value: Any = tc.title
    if value is not unset and value is not None:
        values["title"] = value
    value = tc.name
    if value is not unset and value is not None:
        values["name"] = value
    value = tc.kind
    if value is not unset and value is not None and not (merge and value == "other"):
        values["kind"] = value
    value = tc.status
    if value is not unset and value is not None and not (merge and value == "pending"):
        values["status"] = value
    value = tc.content
    if value is not unset and value is not None and not (merge and not value):
        if type(value) is not list:
            return None
        content = []
        v1_item, v1_text, v2_item, v2_text = v1.Content, v1.TextContent, v2.Content, v2.TextContent
        for item in value:
            if type(item) is not v1_item or item.meta is not unset:
                return None
            block = item.content
            if type(block) is not v1_text or block.annotations is not unset:
                return None
            if block.meta is not unset:
                return None
            content.append(v2_item(content=v2_text(text=block.text)))
        values["content"] = content
    value = tc.locations
    if value is not unset and value is not None and not (merge and not value):
        if type(value) is not list:
            return None
        locations = []
        for item in value:
            if type(item) is not v1.ToolCallLocation:
                return None
            line: Any = item.line  # (any value a model built in code holds: compiled, typed)
            if not (line is unset or line is None or (type(line) is int and line >= 1)):
                return None  # 0 (no line) is dropped and reported (D7)
            meta = item.meta
            if meta is not unset and meta is not None:
                meta = copy_meta(meta)
            locations.append(v2.ToolCallLocation(path=item.path, line=line, meta=meta))
        values["locations"] = locations
    value = tc.raw_input
    if value is not unset and value is not None:
        values["raw_input"] = value
    value = tc.raw_output
    if value is not unset and value is not None:
        values["raw_output"] = value
    value = tc.meta
    if value is not unset and value is not None:
        values["meta"] = copy_meta(value)
    return values


# --------------------------------------------------------------------------------------------
# v2 -> v1

_PLAIN_UPDATES = (v2.ToolCallUpdate, v2.SessionToolCallUpdate)
_V1_KINDS = frozenset(v1.KNOWN_KINDS)
_V1_STATUSES = frozenset(v1.KNOWN_STATUSES)
PLAIN_FIELDS_READS = (
    "title", "name", "kind", "status", "content", "locations", "raw_input", "raw_output",
    "capabilities", "meta",
)  # fmt: skip
"""The fields of the v2 update ``plain_fields`` reads, in its order."""
check_handled("convert._plain.plain_fields", PLAIN_FIELDS_READS, TOOL_CALL_FIELDS)


def plain_fields(u: v2.ToolCallUpdate, create: bool = False) -> dict[str, Any] | None:
    """``_mapped_fields_to_v1(u, create, ...)`` (``_tool_calls``) for an update whose fields all
    map without a loss (no unknown keys, known kind and status, no ``capabilities``, no clear
    v1 cannot send, plain text content, locations and ``_meta`` without ``null`` keys): the
    values, copied as that path copies them; ``None`` for any other update, which takes that
    path. The common shapes skip the table's per-field calls and paths (a property test holds
    the two equal)."""
    unset = UNSET  # a local: compiled, a module's global is a lookup at each use
    if type(u) is not v2.SessionToolCallUpdate and type(u) is not v2.ToolCallUpdate:
        return None  # unknown keys are reported by the general path
    values: dict[str, Any] = {}
    value: Any = u.title
    if value is not unset:
        if value is not None:
            values["title"] = value
        elif not create:
            return None
    value = u.name
    if value is not unset:
        if value is not None:
            values["name"] = value
        elif not create:
            return None
    value = u.kind
    if value is not unset:
        if value is None:
            if not create:
                values["kind"] = "other"
        elif value in _V1_KINDS:
            values["kind"] = value
        else:
            return None
    value = u.status
    if value is not unset:
        if value is None:
            if not create:
                values["status"] = "pending"
        elif value in _V1_STATUSES:
            values["status"] = value
        else:
            return None
    value = u.content
    if value is not unset:
        if value:
            content = _plain_content(value)
            if content is None:
                return None
            values["content"] = content
        elif not create:
            values["content"] = []
    value = u.locations
    if value is not unset:
        if value:
            locations = _plain_locations(value)
            if locations is None:
                return None
            values["locations"] = locations
        elif not create:
            values["locations"] = []
    value = u.raw_input
    if value is not unset:
        if value is not None:
            values["raw_input"] = value
        elif not create:
            return None
    value = u.raw_output
    if value is not unset:
        if value is not None:
            values["raw_output"] = value
        elif not create:
            return None
    if u.capabilities is not unset and (u.capabilities is not None or not create):
        return None  # dropped, reported (D36)
    value = u.meta
    if value is not unset:
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
    unset = UNSET  # a local: compiled, a module's global is a lookup at each use
    out: list[Any] = []
    for item in items:
        if type(item) is not v2.ToolCallLocation:
            return None
        meta = item.meta
        if meta is not unset:
            meta = copy_meta(meta)
        out.append(v1.ToolCallLocation(path=item.path, line=item.line, meta=meta))
    return out


def _plain_content(items: list[Any]) -> list[Any] | None:
    """v1 copies of content items that are all plain text (no annotations, ``_meta`` or
    unknown keys), else ``None``."""
    unset = UNSET  # a local: compiled, a module's global is a lookup at each use
    out = []
    v2_item, v2_text, v1_item, v1_text = v2.Content, v2.TextContent, v1.Content, v1.TextContent
    for item in items:
        if type(item) is not v2_item or item.meta is not unset:
            return None
        block = item.content
        if type(block) is not v2_text or block.annotations is not unset:
            return None
        if block.meta is not unset:
            return None
        out.append(v1_item(content=v1_text(text=block.text)))
    return out
