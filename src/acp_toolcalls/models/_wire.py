"""Building blocks shared by the v1 and v2 wire models.

Rules this module owns:

- A field has three states: omitted (``UNSET``), JSON ``null`` (``None``) and a value. ``UNSET``
  fields are never written; ``None`` is always written as ``null``. Nothing here ever turns one
  into the other.
- Leniency rules are declared on the field, next to its type, the way the upstream Rust crate
  declares them with serde attributes: ``DEFAULT_ON_ERROR`` (an invalid value reads as omitted),
  ``SKIP_INVALID_ITEMS`` (invalid array elements are dropped), ``Open`` (a tagged union with an
  unknown-variant fallback), ``AnyOf`` (an untagged union), ``CLOSED_ENUM`` (a v1 enum: an unknown
  string is kept but reported). The strict decoder ignores the markers; the lenient decoder
  (``acp_toolcalls.codec``) obeys them.
- Unknown keys of known objects are kept in ``extra`` and written back after the known fields.
- Unknown variants of open unions are kept verbatim, every key included (``UnknownVariant``).
- A model's own check of a value (``__post_init__``, run by every decode and construction)
  raises ``InvalidValue`` naming the field; the lenient reader treats it as that field's item
  error (e.g. base64 that does not decode, D22: ``base64_bytes`` is the one test of it).

Runtime annotations are what the fast msgspec decoder accepts; where a union cannot be expressed
to msgspec (an unknown-variant fallback, an untagged union of objects), the runtime annotation
names only the fast-path types and the marker names the rest, while ``TYPE_CHECKING`` aliases in
the model modules give type checkers the full union.
"""

from __future__ import annotations

import binascii
from base64 import b64decode
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, ClassVar, TypeVar

import msgspec
from msgspec import UNSET, UnsetType

__all__ = [
    "CLOSED_ENUM",
    "DEFAULT_ON_ERROR",
    "SKIP_INVALID_ITEMS",
    "UNSET",
    "AnyOf",
    "InvalidValue",
    "Open",
    "UnknownVariant",
    "UnsetType",
    "WireStruct",
    "base64_bytes",
    "extra_fields",
    "replace",
]


S = TypeVar("S", bound="WireStruct")


class _Marker:
    __slots__ = ("name",)

    def __init__(self, name: str) -> None:
        self.name = name

    def __repr__(self) -> str:
        return self.name


DEFAULT_ON_ERROR = _Marker("DEFAULT_ON_ERROR")
"""``x-deserialize-default-on-error``: an invalid value behaves as if the key were omitted."""

SKIP_INVALID_ITEMS = _Marker("SKIP_INVALID_ITEMS")
"""``x-deserialize-skip-invalid-items``: invalid elements of the array are skipped."""

CLOSED_ENUM = _Marker("CLOSED_ENUM")
"""A v1 closed string enum: an unknown string is kept verbatim and reported (D32)."""


@dataclass(frozen=True)
class Open:
    """A tagged union with an unknown-variant fallback: unknown tags become ``unknown``.

    ``known_opaque`` marks a union that is closed in its protocol version but whose other
    variants are still kept (v1 ``sessionUpdate``): the tags it lists are kept silently, any
    other tag is kept and reported.
    """

    unknown: type[UnknownVariant]
    known_opaque: frozenset[str] | None = None


class InvalidValue(ValueError):
    """A model's ``__post_init__`` refused the value of ``field`` (its attribute name): the
    lenient reader reports it at that field's path as an item error."""

    def __init__(self, field: str, reason: str) -> None:
        super().__init__(f"{field}: {reason}")
        self.field = field
        self.reason = reason


def base64_bytes(data: str) -> bytes | None:
    """The bytes of standard base64 ``data`` (RFC 4648: padded, no characters outside the
    alphabet), or ``None`` when it is not valid base64. The one test of terminal output."""
    try:
        return b64decode(data, validate=True)
    except (binascii.Error, ValueError):
        return None


@dataclass(frozen=True)
class AnyOf:
    """An untagged union: the first of ``types`` that reads the value wins."""

    types: tuple[type[Any], ...]


class WireStruct(msgspec.Struct, kw_only=True, forbid_unknown_fields=True, gc=False):
    """Base of every known wire object.

    ``forbid_unknown_fields`` makes the strict fast path fail on any unknown key, so that the
    lenient path can keep it in ``extra``; ``dict=True`` gives instances a place to hold it.
    """

    @property
    def extra(self) -> Mapping[str, Any]:
        """Unknown keys received with this object, kept for same-version re-encoding (D19)."""
        return extra_fields(self)


_NO_EXTRA: Mapping[str, Any] = {}


def extra_fields(obj: WireStruct) -> Mapping[str, Any]:
    """The unknown keys kept on ``obj`` (empty when there are none)."""
    d = getattr(obj, "__dict__", None)  # only objects built with unknown keys have one
    if d:
        extra: Mapping[str, Any] = d["_extra"]
        return extra
    return _NO_EXTRA


_WITH_EXTRA: dict[type[WireStruct], type[WireStruct]] = {}
_extras = {"seen": False}


def with_extra_fields(cls: type[S], extra: Mapping[str, Any], **fields: Any) -> S:
    """Build ``cls(**fields)`` carrying the unknown keys ``extra`` (used by the lenient reader).

    Objects with unknown keys are instances of a same-named subclass of ``cls`` that has room for
    them (a ``__dict__``), so that the common objects without any stay small and fast.
    """
    if not extra:
        return cls(**fields)
    sub = _WITH_EXTRA.get(cls)
    if sub is None:
        made: Any = msgspec.defstruct(
            cls.__name__, [], bases=(cls,), module=cls.__module__, gc=True, dict=True
        )
        made.__qualname__ = cls.__qualname__
        made.__doc__ = cls.__doc__
        sub = _WITH_EXTRA[cls] = made
    obj = sub(**fields)
    obj.__dict__["_extra"] = dict(extra)
    _extras["seen"] = True
    return obj  # type: ignore[return-value]


def replace(obj: S, **changes: Any) -> S:
    """``obj`` with ``changes`` (attribute names), keeping the unknown keys it carries:
    ``msgspec.structs.replace`` makes a plain copy, which loses them silently (D19)."""
    extra = extra_fields(obj)
    if not extra:
        return msgspec.structs.replace(obj, **changes)
    fields = {name: getattr(obj, name) for name in obj.__struct_fields__}
    fields.update(changes)
    return with_extra_fields(type(obj).__mro__[1], extra, **fields)


def extras_seen() -> bool:
    """Whether any object in this process was given unknown keys.

    Only a speed hint for the encoder: until the first one, no object tree can hold unknown
    keys, so encoding skips looking for them.
    """
    return _extras["seen"]


class UnknownVariant:
    """A variant of an open union that this version of the library does not know.

    ``data`` is the whole object as received, discriminator and every other key included; it is
    written back unchanged. Subclasses name the union and its discriminator key.
    """

    __slots__ = ("data",)
    tag_field: ClassVar[str] = "type"

    def __init__(self, data: Mapping[str, Any]) -> None:
        tag = data.get(self.tag_field)
        if not isinstance(tag, str):
            raise ValueError(f"{type(self).__name__} needs a string `{self.tag_field}`")
        self.data: Mapping[str, Any] = data

    @property
    def tag(self) -> str:
        """The discriminator value, e.g. ``"_chart"``."""
        value: str = self.data[self.tag_field]
        return value

    def __eq__(self, other: object) -> bool:
        return (
            isinstance(other, UnknownVariant)
            and type(other) is type(self)
            and (other.data == self.data)
        )

    def __hash__(self) -> int:
        return hash((type(self), self.tag))

    def __repr__(self) -> str:
        return f"{type(self).__name__}({dict(self.data)!r})"
