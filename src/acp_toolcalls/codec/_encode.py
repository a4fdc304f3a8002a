"""Encoding: models, messages and batches to compact JSON bytes, unknown keys included.

Rules this module owns:

- ``encode`` writes what was decoded: omitted fields stay omitted, ``null`` stays ``null``,
  unknown keys (after the known fields) and unknown variants come back verbatim.
- JSON has no NaN or infinity, and msgspec would write them as ``null`` (a clear, on a patch
  field): ``encode`` refuses them. ``encode_decoded`` skips that walk for objects made only of
  decoded JSON text, which cannot hold one.
- Every failure to write is an ``EncodeError``, and nothing else (``ENCODE_ERRORS``).

Theory of operation: one msgspec encode; unknown variants and opaque messages go out through
``enc_hook``, and only an object tree that holds unknown keys (``extras_seen`` says whether any
can exist yet) takes the slower route through plain values.
"""

from __future__ import annotations

import math
import typing
from collections.abc import Mapping
from functools import cache
from typing import Any

import msgspec
from msgspec import UNSET

from .._errors import AcpToolcallsError
from ..models import (
    Batch,
    InvalidMessage,
    JsonRpcMessage,
    UnknownVariant,
    WireStruct,
    extra_fields,
    extras_seen,
)

__all__ = [
    "ENCODE_ERRORS",
    "EncodeError",
    "canonical_json",
    "encode",
    "encode_decoded",
    "holds_non_finite",
    "to_builtins",
    "written",
]


class EncodeError(AcpToolcallsError):
    """The object cannot be written as JSON (for example a string with a lone surrogate)."""

    def __init__(self, reason: str, path: str = "$") -> None:
        super().__init__(path, reason)


def _enc_hook(obj: Any) -> Any:
    if isinstance(obj, (UnknownVariant, JsonRpcMessage, InvalidMessage)):
        return obj.data
    if isinstance(obj, Batch):
        return list(obj.items)
    raise NotImplementedError(f"cannot encode {type(obj).__name__}")


_encoder = msgspec.json.Encoder(enc_hook=_enc_hook)


@cache
def _struct_layout(cls: type[WireStruct]) -> tuple[tuple[str, ...], tuple[tuple[str, str], ...]]:
    """Fields that may hold structs (to look for unknown keys), and (attribute, key) pairs."""
    hints = typing.get_type_hints(cls)
    fields = msgspec.structs.fields(cls)

    def holds_structs(tp: Any) -> bool:
        if isinstance(tp, type):
            return issubclass(tp, msgspec.Struct)
        return any(holds_structs(arg) for arg in typing.get_args(tp))

    nested = tuple(f.name for f in fields if holds_structs(hints[f.name]))
    return nested, tuple((f.name, f.encode_name) for f in fields)


def _has_extra(obj: Any) -> bool:
    """Whether ``obj`` holds a struct with unknown keys; walked without recursion, so that a
    value nested ``MAX_DEPTH`` deep costs no stack (issue 27)."""
    todo = [obj]
    while todo:
        item = todo.pop()
        if isinstance(item, WireStruct):
            if extra_fields(item):
                return True
            nested = _NESTED.get(type(item))
            if nested is None:
                nested = _NESTED[type(item)] = _struct_layout(type(item))[0]
            for name in nested:
                value = getattr(item, name)
                if isinstance(value, (WireStruct, list)):
                    todo.append(value)
        elif isinstance(item, (list, tuple)):
            todo.extend(value for value in item if isinstance(value, _CONTAINERS))
        elif isinstance(item, dict):
            todo.extend(value for value in item.values() if isinstance(value, _CONTAINERS))
        elif isinstance(item, Batch):
            todo.extend(item.items)
    return False


def _holds_struct(obj: list[Any] | tuple[Any, ...] | dict[Any, Any]) -> bool:
    """Whether plain containers ``obj`` hold a struct or a batch anywhere (no recursion)."""
    todo: list[Any] = [obj]
    while todo:
        item = todo.pop()
        if isinstance(item, (WireStruct, Batch)):
            return True
        if isinstance(item, (list, tuple)):
            todo.extend(value for value in item if isinstance(value, _WALKED))
        elif isinstance(item, dict):
            todo.extend(value for value in item.values() if isinstance(value, _WALKED))
    return False


_NESTED: dict[type, tuple[str, ...]] = {}
_CONTAINERS = (WireStruct, list, tuple, dict)
_WALKED = (WireStruct, Batch, list, tuple, dict)


def _to_plain(obj: Any) -> Any:
    """Plain JSON values, unknown keys included (the route for trees that hold them)."""
    if isinstance(obj, WireStruct):
        config = obj.__struct_config__
        out: dict[str, Any] = {}
        if config.tag_field is not None:
            out[config.tag_field] = config.tag
        for name, key in _struct_layout(type(obj))[1]:
            value = getattr(obj, name)
            if value is not UNSET:
                out[key] = _to_plain(value)
        for key, value in extra_fields(obj).items():
            out.setdefault(key, value)
        return out
    if isinstance(obj, (list, tuple, dict)) and not _holds_struct(obj):
        return obj  # plain JSON values as they are: no recursion down a deep value
    if isinstance(obj, (list, tuple)):
        return [_to_plain(item) for item in obj]
    if isinstance(obj, dict):
        return {key: _to_plain(value) for key, value in obj.items()}
    if isinstance(obj, Batch):
        return [_to_plain(item) for item in obj.items]
    return obj


def holds_non_finite(obj: Any) -> bool:
    """Whether ``obj`` holds a NaN or infinite float (which msgspec would write as ``null``);
    walked without recursion (issue 27)."""
    todo = [obj]
    while todo:
        item = todo.pop()
        kind = type(item)
        if kind is str or kind is int or item is None or item is UNSET or kind is bool:
            continue
        if kind is float:
            if not math.isfinite(item):
                return True
        elif kind is list or kind is tuple:
            todo.extend(item)
        elif kind is dict:
            todo.extend(item.values())
        elif isinstance(item, WireStruct):
            todo.extend(msgspec.structs.astuple(item))
            if extras_seen():
                todo.append(extra_fields(item))
        elif isinstance(item, (UnknownVariant, JsonRpcMessage, InvalidMessage)):
            todo.append(item.data)
        elif isinstance(item, Batch):
            todo.append(item.items)
        elif isinstance(item, float):
            if not math.isfinite(item):
                return True
        elif isinstance(item, (list, tuple)):
            todo.extend(item)
        elif isinstance(item, Mapping):
            todo.extend(item.values())
    return False


def to_builtins(obj: Any) -> Any:
    """Plain JSON values (dicts, lists, str, ...) of a model, message or batch, exactly as
    ``encode`` would write them: unknown keys and unknown variants included, ``UNSET`` fields
    left out, ``None`` kept as ``None``."""
    try:
        if extras_seen() and _has_extra(obj):
            obj = _to_plain(obj)
        return msgspec.to_builtins(obj, enc_hook=_enc_hook)
    except (TypeError, NotImplementedError, RecursionError) as exc:
        raise EncodeError(str(exc)) from None


def encode(obj: Any) -> bytes:
    """Encode a model, a message or a batch as compact JSON bytes (no trailing newline)."""
    return _encode(obj)


def encode_decoded(obj: Any) -> bytes:
    """``encode(obj)`` for an object made only of what this package's decoders read from JSON
    text (a store fed only lines it or ``decode_message`` decoded, as ``replay`` does): the
    same bytes, without the walk ``encode`` makes to refuse a NaN or an infinite number. Such
    an object holds none: the decoders refuse them (``NaN`` is not JSON, ``1e400`` is "Number
    out of range"), and nothing the store or the mappings compute is a float."""
    try:
        return written(obj)
    except ENCODE_ERRORS as exc:
        raise EncodeError(str(exc)) from None


def canonical_json(obj: Any) -> bytes:
    """The bytes ``encode`` writes for ``obj``, as a key for equality of wire values (the
    emitter's minimal patches): a ``True`` is not a ``1`` here, unlike with ``==``."""
    return _encode(obj)


ENCODE_ERRORS = (
    msgspec.EncodeError,
    UnicodeEncodeError,
    TypeError,
    NotImplementedError,
    RecursionError,
)
"""What writing a value can raise; ``encode`` turns each into ``EncodeError``."""


def written(obj: Any) -> bytes:
    """``obj`` as JSON, unknown keys included (the one writer; raises ``ENCODE_ERRORS``)."""
    if extras_seen() and _has_extra(obj):
        obj = _to_plain(obj)
    out: bytes = _encoder.encode(obj)
    return out


def _encode(obj: Any) -> bytes:
    try:
        out = written(obj)
        # JSON has no NaN/Infinity and msgspec writes them as `null`, which on a patch field
        # (`rawInput`, `rawOutput`) would be a clear: refuse instead.
        if b"null" in out and holds_non_finite(obj):
            raise EncodeError("cannot encode a NaN or infinite number as JSON")
        return out
    except ENCODE_ERRORS as exc:
        raise EncodeError(str(exc)) from None
