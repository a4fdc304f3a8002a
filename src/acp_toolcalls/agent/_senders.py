"""Sender checks: what a value an agent originates must be before anything is sent.

Rules this module owns (D46 (sender obligations, items 1-6); D3, D24, D25). The permission
builder and the emitter check their arguments with these, so both refuse the same things:

- ``SenderError`` names the offending argument by its wire path (``options[1].optionId``).
- Paths are absolute and native (POSIX ``/``, ``C:\\``, ``\\\\server``); ``file:`` URIs are
  refused (D25).
- Open-enum values are known ones (the lint's ``KNOWN_V2_VALUES``) or ``_``-prefixed custom
  ones.
- Only what JSON can carry is sent: no lone surrogate, NaN or out-of-range integer
  (``encoded`` gives the canonical JSON the emitter compares, or raises).
- Per ``ToolCallUpdate`` field, one check (``FIELD_CHECKS``): strings, known or ``_`` kinds and
  statuses, content items (a diff has at least one change, known operations, file types and
  patch formats, non-empty terminal ids), locations (``line`` is 1-based and 32-bit), terminal
  sizes 1..65535, ``_meta`` objects with string keys.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping
from typing import Any

import msgspec
from msgspec import UNSET

from .. import v2
from .._errors import AcpToolcallsError
from ..check import KNOWN_V2_VALUES
from ..codec import EncodeError, canonical_json

Fields = dict[str, Any]
"""Tool-call fields by ``v2.ToolCallUpdate`` attribute name; ``UNSET`` entries are absent."""


class SenderError(AcpToolcallsError):
    """An agent tried to send something the protocol (or our sender rules) forbids.

    ``path`` names the offending argument, e.g. ``options[1].optionId``.
    """


_WINDOWS_ABSOLUTE = re.compile(r"^[A-Za-z]:\\|^\\\\")


def check_absolute_path(path: object, where: str) -> str:
    """``path`` if it is an absolute native path (D25), else ``SenderError`` naming ``where``."""
    if not isinstance(path, str) or not path:
        raise SenderError(where, "a path must be a non-empty string")
    if path.lower().startswith("file:"):
        raise SenderError(where, f"paths are native, not URIs: {path!r}")
    if not (path.startswith("/") or _WINDOWS_ABSOLUTE.match(path)):
        raise SenderError(where, f"the path must be absolute: {path!r}")
    return path


def check_encodable(value: object, where: str) -> None:
    """``SenderError`` naming ``where`` for a value JSON cannot carry (a lone surrogate, a NaN,
    an integer out of range), so that nothing unsendable is built, recorded or sent. ``UNSET``
    (an omitted value) passes."""
    if value is UNSET:
        return
    try:
        canonical_json(value)
    except EncodeError as exc:
        raise SenderError(where, str(exc)) from None


def check_open_value(value: object, known: Iterable[str], where: str) -> str:
    """An open-enum value a sender may originate: a known one or a ``_``-prefixed custom one."""
    if not isinstance(value, str):
        raise SenderError(where, f"expected a string, got {type(value).__name__}")
    if value not in known and not value.startswith("_"):
        raise SenderError(
            where, f"{value!r} is neither a known value nor a `_`-prefixed custom one"
        )
    return value


def encoded(value: Any, where: str) -> bytes:
    """The canonical JSON of a value to send; ``SenderError`` for what JSON cannot carry."""
    try:
        return canonical_json(value)
    except EncodeError as exc:
        raise SenderError(where, str(exc)) from None


# --------------------------------------------------------------------------------------------
# The emitter's fields: one table of what each field's value must be (D46 (sender obligations, items
# 1-6))

_KINDS: frozenset[str] = KNOWN_V2_VALUES["tool kind"]
_STATUSES: frozenset[str] = KNOWN_V2_VALUES["tool call status"]
_CONTENT_TYPES: frozenset[str] = KNOWN_V2_VALUES["tool call content type"]
_BLOCK_TYPES: frozenset[str] = KNOWN_V2_VALUES["content block type"]
_OPERATIONS: frozenset[str] = KNOWN_V2_VALUES["diff operation"]
_FILE_TYPES: frozenset[str] = KNOWN_V2_VALUES["diff fileType"]
_PATCH_FORMATS: frozenset[str] = KNOWN_V2_VALUES["diff patch format"]
_MAX_LINE = 2**32 - 1
_MAX_TERMINAL_SIDE = 2**16 - 1
_CHANGES = (
    v2.AddDiffChange, v2.DeleteDiffChange, v2.ModifyDiffChange, v2.MoveDiffChange,
    v2.CopyDiffChange,
)  # fmt: skip


def check_str(value: Any, where: str) -> None:
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


def check_item(item: Any, where: str) -> None:
    """One tool-call content item the agent sends."""
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
    elif isinstance(item, v2.SessionReference):
        if not isinstance(item.session_id, str) or not item.session_id:
            raise SenderError(f"{where}.sessionId", "must be a non-empty string")
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


def check_size(value: Any, where: str) -> None:
    """A terminal size: 1..65535 columns and rows."""
    if not isinstance(value, v2.TerminalSize):
        raise SenderError(where, f"expected a TerminalSize, got {type(value).__name__}")
    for name in ("cols", "rows"):
        count = getattr(value, name)
        if not (type(count) is int and 1 <= count <= _MAX_TERMINAL_SIDE):
            raise SenderError(f"{where}.{name}", f"expected 1..{_MAX_TERMINAL_SIDE}, got {count!r}")


def _check_capabilities(value: Any, where: str) -> None:
    if not isinstance(value, v2.ToolCallCapabilities):
        raise SenderError(where, f"expected ToolCallCapabilities, got {type(value).__name__}")


def check_meta(value: Any, where: str) -> None:
    """A ``_meta`` value: an object with string keys."""
    if not isinstance(value, dict) or not all(isinstance(k, str) for k in value):
        raise SenderError(where, "`_meta` is an object with string keys")


def _check_any(value: Any, where: str) -> None:
    encoded(value, where)


FIELD_CHECKS: Mapping[str, Callable[[Any, str], object]] = {
    "name": check_str,
    "title": check_str,
    "kind": lambda value, where: check_open_value(value, _KINDS, where),
    "status": lambda value, where: check_open_value(value, _STATUSES, where),
    "content": _check_list(check_item),
    "locations": _check_list(_check_location),
    "raw_input": _check_any,
    "raw_output": _check_any,
    "capabilities": _check_capabilities,
    "meta": check_meta,
}
"""Per ``ToolCallUpdate`` attribute: the check a non-null value must pass before it is sent."""

WIRE_NAMES = {f.name: f.encode_name for f in msgspec.structs.fields(v2.ToolCallUpdate)}
"""Per ``ToolCallUpdate`` attribute: its wire name (the path a ``SenderError`` names)."""


def check_fields(fields: Fields) -> None:
    """Every non-null field passes its ``FIELD_CHECKS`` entry."""
    for attr, value in fields.items():
        if value is not None:
            FIELD_CHECKS[attr](value, WIRE_NAMES[attr])
