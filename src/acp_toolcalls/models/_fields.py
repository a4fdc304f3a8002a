"""The field shapes the v1 and v2 models are made of, declared once.

Rules this module owns:

- ``Lenient[T]``: an optional, nullable field whose invalid value reads as omitted
  (``DEFAULT_ON_ERROR``); ``LenientList[T]`` adds that invalid array elements are skipped. The
  ``NonNull`` forms are v1's fields that may not be ``null`` (a ``null`` reads as omitted).
- ``_meta`` is an object (``MetaField``), written under the key ``_meta`` (``meta_field()``).
- Integer bounds are msgspec constraints: out of range is an invalid value of the field.
- ``null_is_omitted``: where the schema says omitted and ``null`` are equivalent (T5, Q7), a
  model's ``__post_init__`` reads ``null`` as omitted, so it is never written back.
- ``Struct`` is the base of every wire object of both versions: camelCase keys,
  keyword-only construction.
"""

from __future__ import annotations

from typing import Annotated, Any, TypeVar

import msgspec
from msgspec import UNSET, Meta, UnsetType

from ._wire import DEFAULT_ON_ERROR, SKIP_INVALID_ITEMS, WireStruct

__all__ = [
    "Int64",
    "Lenient",
    "LenientList",
    "LenientNonNull",
    "LenientNonNullList",
    "MetaField",
    "Priority",
    "Struct",
    "UInt16Min1",
    "UInt32",
    "UInt32Min1",
    "UInt64",
    "meta_field",
    "null_is_omitted",
]

T = TypeVar("T")

Lenient = Annotated[T | UnsetType | None, DEFAULT_ON_ERROR]
"""An optional, nullable field whose invalid value reads as omitted."""

LenientList = Annotated[list[T] | UnsetType | None, DEFAULT_ON_ERROR, SKIP_INVALID_ITEMS]
"""An optional, nullable array: non-array reads as omitted, bad elements are skipped."""

LenientNonNull = Annotated[T | UnsetType, DEFAULT_ON_ERROR]
"""An optional field that is not nullable in v1; ``null`` or a bad value reads as omitted."""

LenientNonNullList = Annotated[list[T] | UnsetType, DEFAULT_ON_ERROR, SKIP_INVALID_ITEMS]
"""An optional, non-nullable v1 array: bad value reads as omitted, bad elements are skipped."""

MetaField = Lenient[dict[str, Any]]
"""``_meta``: an object; a non-object reads as omitted."""

UInt32 = Annotated[int, Meta(ge=0, le=2**32 - 1)]
UInt32Min1 = Annotated[int, Meta(ge=1, le=2**32 - 1)]
UInt16Min1 = Annotated[int, Meta(ge=1, le=65535)]
# No upper bound: msgspec cannot express one past int64; a larger value round-trips as is.
UInt64 = Annotated[int, Meta(ge=0)]
Int64 = Annotated[int, Meta(ge=-(2**63), le=2**63 - 1)]
Priority = Annotated[float, Meta(ge=0.0, le=1.0)]


def meta_field() -> Any:
    """The default of a ``_meta`` field: omitted, written under the key ``_meta``."""
    return msgspec.field(default=UNSET, name="_meta")


def null_is_omitted(obj: Any, names: tuple[str, ...]) -> None:
    """Read a ``null`` in each of the attributes ``names`` of ``obj`` as omitted."""
    for name in names:
        if getattr(obj, name) is None:
            setattr(obj, name, UNSET)


class Struct(WireStruct, rename="camel"):
    """Base of the v1 and v2 wire objects: camelCase keys, keyword-only construction."""
