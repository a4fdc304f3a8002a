"""The lenient reader: salvages what the strict fast path rejected, field by field.

Rules this module owns (D46 (schema markers to field leniency), D11, D19, D32):

- A value that does not fit its field is an *item error*. On a ``DEFAULT_ON_ERROR`` field the
  error is absorbed: the field reads as omitted (``UNSET``, never ``None``: only a literal
  ``null`` clears). Inside a ``SKIP_INVALID_ITEMS`` array the element is dropped. Anywhere else
  the error travels up to the enclosing object, until something absorbs it or the whole message
  fails with a ``DecodeError`` naming the JSON path.
- A tagged union needs a string discriminator. A known discriminator with a bad payload is an
  item error, never the unknown fallback; an unknown one becomes the union's ``Unknown*`` object
  (open unions) or an item error (closed v1 unions).
- Unknown keys of known objects are kept (``extra``), never interpreted.
- A model's own check (``models.InvalidValue`` from its ``__post_init__``) is an item error of
  the field it names, like a value of the wrong type.
- Every absorbed error is recorded as a ``Diagnostic`` (path + reason). In strict mode the first
  one is raised instead.

Theory of operation: a *reader* is compiled once per annotated type from the model classes (the
markers of ``acp_toolcalls.models`` say which rule applies where) and cached. Readers take a plain
JSON value and a path and return the model value or raise ``ItemError``. This path only runs for
the rare message the fast path rejects, so it favours clarity over speed.
"""

from __future__ import annotations

import types
import typing
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import cache, partial
from typing import Any, Union

import msgspec
from msgspec import UNSET, UnsetType

from .._errors import DecodeError
from ..models import (
    CLOSED_ENUM,
    DEFAULT_ON_ERROR,
    SKIP_INVALID_ITEMS,
    AnyOf,
    InvalidValue,
    Open,
    WireStruct,
    with_extra_fields,
)

__all__ = ["DecodeError", "Diagnostic", "ItemError", "Salvage", "key_path", "reader_for"]


@dataclass(frozen=True)
class Diagnostic:
    """Something the lenient reader dropped or kept against the schema, and where."""

    path: str
    """JSON path into the input, e.g. ``$.params.update.content[1]``."""
    reason: str
    """What was wrong and what the reader did about it."""

    def __str__(self) -> str:
        return f"{self.path}: {self.reason}"


class ItemError(Exception):
    """An item does not fit its type (internal: becomes a Diagnostic or a DecodeError)."""

    def __init__(self, path: str, reason: str) -> None:
        super().__init__(path, reason)
        self.path = path
        self.reason = reason


@dataclass
class Salvage:
    """What one lenient read collects: the diagnostics, or the first one raised when strict."""

    strict: bool = False
    diagnostics: list[Diagnostic] = field(default_factory=list)
    first: ItemError | None = None  # the first error absorbed: what strict would have raised

    def absorb(self, error: ItemError, action: str) -> None:
        if self.strict:
            raise DecodeError(error.path, error.reason)
        if self.first is None:
            self.first = error
        self.diagnostics.append(Diagnostic(error.path, f"{error.reason}; {action}"))


Reader = Callable[[Any, str, Salvage], Any]

_NONE_TYPES = (type(None), UnsetType)


def _describe(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, (int, float)):
        return f"a number ({value!r})"
    if isinstance(value, str):
        shown = value if len(value) <= 40 else value[:37] + "..."
        return f"a string ({shown!r})"
    if isinstance(value, list):
        return "an array"
    if isinstance(value, dict):
        return "an object"
    return type(value).__name__


def _expected(what: str, value: Any, path: str) -> ItemError:
    return ItemError(path, f"expected {what}, got {_describe(value)}")


def key_path(path: str, key: str) -> str:
    return f"{path}.{key}" if key.isidentifier() else f'{path}["{key}"]'


# --------------------------------------------------------------------------------------------
# Compiling readers


def reader_for(tp: Any) -> Reader:
    """The lenient reader of an annotated type (compiled once, then cached)."""
    return _cached_reader(tp)


@cache
def _cached_reader(tp: Any) -> Reader:
    return _compile(tp, ())


def _split_annotated(tp: Any) -> tuple[Any, tuple[Any, ...]]:
    if typing.get_origin(tp) is typing.Annotated:
        inner, *extras = typing.get_args(tp)
        return inner, tuple(extras)
    return tp, ()


def _union_args(tp: Any) -> tuple[Any, ...] | None:
    origin = typing.get_origin(tp)
    if origin is Union or origin is types.UnionType:
        return typing.get_args(tp)
    return None


def _compile(tp: Any, outer_extras: tuple[Any, ...]) -> Reader:
    inner, extras = _split_annotated(tp)
    extras = outer_extras + extras
    args = _union_args(inner)
    if args is not None and any(a in _NONE_TYPES for a in args):
        return _compile_optional(args, extras)
    if any(isinstance(e, AnyOf) for e in extras):
        anyof = next(e for e in extras if isinstance(e, AnyOf))
        return _compile_anyof(anyof.types)
    if args is not None and not all(_tag_of(a) is not None for a in args):
        return _compile_anyof(args)  # a union of scalars, e.g. a JSON-RPC id `int | str`
    if args is not None:
        return _compile_tagged_union(args, extras)
    if isinstance(inner, type) and issubclass(inner, WireStruct):
        return _compile_struct(inner)
    origin = typing.get_origin(inner)
    if origin is list:
        (item_type,) = typing.get_args(inner)
        return _compile_list(item_type, SKIP_INVALID_ITEMS in extras, extras)
    if origin is typing.Literal:
        return _compile_literal(typing.get_args(inner), CLOSED_ENUM in extras)
    if origin is dict or inner is dict:
        return _read_object
    if inner is Any:
        return _read_any
    if inner is str:
        return _read_str
    constraints = tuple(e for e in extras if isinstance(e, msgspec.Meta))
    if inner is int:
        return _compile_number(int, constraints)
    if inner is float:
        return _compile_number(float, constraints)
    raise TypeError(f"no lenient reader for {tp!r}")  # a model bug, caught by the tests


def _compile_optional(args: tuple[Any, ...], extras: tuple[Any, ...]) -> Reader:
    nullable = type(None) in args
    rest = tuple(a for a in args if a not in _NONE_TYPES)
    core_type = rest[0] if len(rest) == 1 else Union[rest]
    field_extras = tuple(e for e in extras if e is not DEFAULT_ON_ERROR)
    core = _compile(core_type, field_extras)
    default_on_error = DEFAULT_ON_ERROR in extras

    def read(value: Any, path: str, s: Salvage) -> Any:
        if value is None:
            if nullable:
                return None
            error = ItemError(path, "null is not allowed here")
        else:
            try:
                return core(value, path, s)
            except ItemError as exc:
                error = exc
        if default_on_error:
            s.absorb(error, "treated as omitted")
            return UNSET
        raise error

    return read


def _read_any(value: Any, path: str, s: Salvage) -> Any:
    return value


def _read_object(value: Any, path: str, s: Salvage) -> Any:
    if not isinstance(value, dict):
        raise _expected("an object", value, path)
    return value


def _read_str(value: Any, path: str, s: Salvage) -> Any:
    if not isinstance(value, str):
        raise _expected("a string", value, path)
    return value


def _compile_number(kind: type, constraints: tuple[msgspec.Meta, ...]) -> Reader:
    lo_inclusive = [m.ge for m in constraints if m.ge is not None]
    hi_inclusive = [m.le for m in constraints if m.le is not None]
    lo = max(lo_inclusive) if lo_inclusive else None
    hi = min(hi_inclusive) if hi_inclusive else None
    what = "an integer" if kind is int else "a number"

    def read(value: Any, path: str, s: Salvage) -> Any:
        ok = isinstance(value, int) if kind is int else isinstance(value, (int, float))
        if not ok or isinstance(value, bool):
            raise _expected(what, value, path)
        if (lo is not None and value < lo) or (hi is not None and value > hi):
            bounds = f"{lo if lo is not None else '-inf'}..{hi if hi is not None else 'inf'}"
            raise ItemError(path, f"{value!r} is out of range {bounds}")
        return float(value) if kind is float else value

    return read


def _compile_literal(values: tuple[Any, ...], closed_enum: bool) -> Reader:
    allowed = frozenset(values)
    shown = ", ".join(repr(v) for v in values)

    def read(value: Any, path: str, s: Salvage) -> Any:
        if isinstance(value, str) and value in allowed:
            return value
        if closed_enum and isinstance(value, str):
            s.absorb(ItemError(path, f"unknown value {value!r} (expected one of {shown})"), "kept")
            return value
        raise ItemError(path, f"expected one of {shown}, got {_describe(value)}")

    return read


def _compile_list(item_type: Any, skip_invalid: bool, extras: tuple[Any, ...]) -> Reader:
    item_reader: list[Reader] = []  # filled lazily: item types may be recursive
    constraints = [e for e in extras if isinstance(e, msgspec.Meta)]
    min_length = max((m.min_length or 0 for m in constraints), default=0)

    def read(value: Any, path: str, s: Salvage) -> Any:
        if not isinstance(value, list):
            raise _expected("an array", value, path)
        if not item_reader:
            item_reader.append(_compile(item_type, ()))
        item = item_reader[0]
        out = []
        for index, element in enumerate(value):
            item_path = f"{path}[{index}]"
            if skip_invalid:
                try:
                    out.append(item(element, item_path, s))
                except ItemError as exc:
                    s.absorb(exc, "item skipped")
            else:
                out.append(item(element, item_path, s))
        if len(out) < min_length:  # `minItems` binds senders; receivers accept (D5)
            error = ItemError(path, f"expected at least {min_length} item(s), got {len(out)}")
            s.absorb(error, "accepted")
        return out

    return read


def _tag_of(cls: type) -> tuple[str, str] | None:
    if not (isinstance(cls, type) and issubclass(cls, msgspec.Struct)):
        return None
    config = cls.__struct_config__
    if config.tag_field is None or not isinstance(config.tag, str):
        return None
    return config.tag_field, config.tag


def _compile_tagged_union(members: tuple[type, ...], extras: tuple[Any, ...]) -> Reader:
    table: dict[str, Callable[[], Reader]] = {}
    fields = set()
    for member in members:
        tag = _tag_of(member)
        if tag is None:
            raise TypeError(f"union member {member!r} is not a tagged struct")
        fields.add(tag[0])
        table[tag[1]] = partial(reader_for, member)  # lazy: unions may be recursive
    (tag_field,) = fields
    fallback = next((e for e in extras if isinstance(e, Open)), None)
    known = ", ".join(repr(t) for t in table)

    def read(value: Any, path: str, s: Salvage) -> Any:
        if not isinstance(value, dict):
            raise _expected("an object", value, path)
        if tag_field not in value:
            raise ItemError(path, f"missing discriminator `{tag_field}`")
        tag = value[tag_field]
        if not isinstance(tag, str):
            raise _expected(f"a string `{tag_field}`", tag, key_path(path, tag_field))
        make = table.get(tag)
        if make is not None:
            return make()(value, path, s)
        if fallback is None:
            raise ItemError(path, f"unknown {tag_field} {tag!r} (expected one of {known})")
        if fallback.known_opaque is not None and tag not in fallback.known_opaque:
            s.absorb(ItemError(path, f"unknown {tag_field} {tag!r} in a closed union"), "kept")
        try:
            return fallback.unknown(value)
        except ValueError as exc:  # pragma: no cover - the tag was checked above
            raise ItemError(path, str(exc)) from None

    return read


def _compile_anyof(members: tuple[type, ...]) -> Reader:
    def read(value: Any, path: str, s: Salvage) -> Any:
        errors = []
        for member in members:
            # Leniently, strict or not: strict mode picks the member lenient mode picks, and
            # raises what lenient mode salvaged first in it, not "matches none".
            attempt = Salvage()
            try:
                result = reader_for(member)(value, path, attempt)
            except (ItemError, DecodeError) as exc:
                errors.append(str(exc.reason))
                continue
            if attempt.first is not None:
                if s.strict:
                    raise DecodeError(attempt.first.path, attempt.first.reason)
                s.first = s.first or attempt.first
            s.diagnostics.extend(attempt.diagnostics)
            return result
        names = " or ".join(_split_annotated(m)[0].__name__ for m in members)
        raise ItemError(path, f"matches none of {names} ({'; '.join(errors)})")

    return read


def _compile_struct(cls: type[WireStruct]) -> Reader:
    hints = typing.get_type_hints(cls, include_extras=True)
    tag = _tag_of(cls)
    plan: list[tuple[str, str, Reader, bool]] = []
    for info in msgspec.structs.fields(cls):
        plan.append((info.encode_name, info.name, _compile(hints[info.name], ()), info.required))
    known = {key for key, _, _, _ in plan}
    if tag is not None:
        known.add(tag[0])
    wire_keys = {name: key for key, name, _, _ in plan}

    def read(value: Any, path: str, s: Salvage) -> Any:
        if not isinstance(value, dict):
            raise _expected("an object", value, path)
        if tag is not None and value.get(tag[0]) != tag[1]:
            raise ItemError(path, f"expected `{tag[0]}` {tag[1]!r}")
        kwargs: dict[str, Any] = {}
        for key, name, field_reader, required in plan:
            if key in value:
                result = field_reader(value[key], key_path(path, key), s)
                if result is not UNSET:
                    kwargs[name] = result
            elif required:
                raise ItemError(path, f"missing required field `{key}`")
        try:
            if len(value) > len(kwargs):
                extra = {k: v for k, v in value.items() if k not in known}
                return with_extra_fields(cls, extra, **kwargs)
            return cls(**kwargs)
        except InvalidValue as exc:  # the model's own check of one field
            key = wire_keys.get(exc.field, exc.field)
            raise ItemError(key_path(path, key), exc.reason) from None

    return read
