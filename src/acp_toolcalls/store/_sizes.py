"""Byte accounting: what a stored value holds in memory, roughly (``size_of``).

Rules this module owns (the ``Limits`` byte caps measure with it):

- A string counts as CPython keeps it: 49 bytes plus one a character when it is ASCII, else
  76 plus four a character (never ``sys.getsizeof``, which also counts a cached UTF-8 copy
  when there is one, so the same value would not always measure the same).
- A byte string counts 33 plus its length, a number 16; ``None``, a bool and ``UNSET`` count
  nothing (their holder counts their slot).
- A list or tuple counts 56 plus 8 a slot, a dict or mapping 64 plus 24 an entry, a model 48
  plus 8 a field and the unknown keys it keeps, plus what each element holds.
- The same value always measures the same, whatever its depth: nesting past ``_MAX_DEPTH``
  levels is measured without recursion.

Theory of operation: ``_walk`` is the definition, an iterative walk of any value. The
measurers of ``_MEASURERS`` give the same sums faster, recursively: plain dicts' and lists'
written out, and a model class's made once per class from its field table (``_measurer``).
``size_of`` measures the most common content item, a plain text block, in place.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, Final

from msgspec import UNSET
from msgspec.structs import astuple

from .. import v2
from ..models import UnknownVariant

_CONTENT = v2.Content
_TEXT = v2.TextContent


def str_size(text: str) -> int:
    """What CPython keeps for a string, as ``size_of`` counts it."""
    return 49 + len(text) if text.isascii() else 76 + 4 * len(text)


def size_of(value: Any) -> int:
    """The memory a stored value holds, in bytes, roughly: a string as CPython keeps it (four
    bytes a character unless it is ASCII), a byte string its length, 16 bytes a number, and a
    list, dict or model its elements plus a few dozen bytes. The same value always measures
    the same. Nesting of any depth costs no recursion past ``_MAX_DEPTH`` levels.

    What it adds up is ``_walk``'s definition; the measurers of ``_MEASURERS`` (a model class's
    own, made from its fields, and plain dicts' and lists') give the same sums faster.
    """
    kind = type(value)
    if kind is str:
        return 49 + len(value) if value.isascii() else 76 + 4 * len(value)
    if kind is _CONTENT:  # the common content item, a text block: measured directly
        inner = value.content
        if type(inner) is _TEXT and inner.annotations is UNSET and inner.meta is UNSET:
            text = inner.text
            return 209 + len(text) if text.isascii() else 236 + 4 * len(text)
    measure = _MEASURERS.get(kind)
    if measure is not None:
        return measure(value, 0)
    if hasattr(kind, "__struct_fields__"):
        return _measurer(kind)(value, 0)
    return _walk(value)


def _walk(value: Any) -> int:
    """The definition of ``size_of``, iterative: what every measurer must add up to."""
    total = 0
    stack = [value]
    while stack:
        item = stack.pop()
        kind = type(item)
        if kind is str:
            total += str_size(item)
        elif kind is bytes or kind is bytearray:
            total += 33 + len(item)
        elif kind is int or kind is float:
            total += 16
        elif item is None or kind is bool or item is UNSET:
            continue
        elif kind is list or kind is tuple:
            total += 56 + 8 * len(item)
            stack.extend(item)
        elif kind is dict:
            total += 64 + 24 * len(item)
            stack.extend(item)
            stack.extend(item.values())
        elif hasattr(kind, "__struct_fields__"):
            fields = kind.__struct_fields__
            total += 48 + 8 * len(fields)
            stack.extend(getattr(item, name) for name in fields)
            extra = getattr(item, "__dict__", None)  # unknown keys kept on the model
            if extra:
                stack.append(extra.get("_extra"))
        elif isinstance(item, UnknownVariant):
            total += 48
            stack.append(dict(item.data))
        elif isinstance(item, Mapping):
            total += 64 + 24 * len(item)
            stack.extend(item)
            stack.extend(item.values())
        else:
            total += 64
    return total


_MAX_DEPTH: Final = 48
"""Levels the recursive measurers go down; deeper values are measured by ``_walk``."""

_Measurer = Callable[[Any, int], int]


def _value_size(value: Any, depth: int) -> int:
    """``size_of`` of a value nested ``depth`` levels down in what is being measured."""
    kind = type(value)
    if kind is str:
        return 49 + len(value) if value.isascii() else 76 + 4 * len(value)
    measure = _MEASURERS.get(kind)
    if measure is not None:
        return measure(value, depth)
    if kind is int or kind is float:
        return 16
    if value is None or kind is bool or value is UNSET:
        return 0
    if hasattr(kind, "__struct_fields__"):
        return _measurer(kind)(value, depth)
    return _walk(value)


def _dict_size(value: dict[Any, Any], depth: int) -> int:
    if depth >= _MAX_DEPTH:
        return _walk(value)
    total = 64 + 24 * len(value)
    depth += 1
    for key, item in value.items():
        if type(key) is str:
            total += 49 + len(key) if key.isascii() else 76 + 4 * len(key)
        else:
            total += _value_size(key, depth)
        kind = type(item)
        if kind is str:
            total += 49 + len(item) if item.isascii() else 76 + 4 * len(item)
        elif kind is int or kind is float:
            total += 16
        elif kind is dict:
            total += _dict_size(item, depth)
        elif kind is list:
            total += _list_size(item, depth)
        elif item is not None and kind is not bool:
            total += _value_size(item, depth)
    return total


def _list_size(value: list[Any] | tuple[Any, ...], depth: int) -> int:
    if depth >= _MAX_DEPTH:
        return _walk(value)
    total = 56 + 8 * len(value)
    depth += 1
    for item in value:
        kind = type(item)
        if kind is str:
            total += 49 + len(item) if item.isascii() else 76 + 4 * len(item)
        elif kind is int or kind is float:
            total += 16
        elif kind is dict:
            total += _dict_size(item, depth)
        elif item is not None and kind is not bool:
            measure = _MEASURERS.get(kind)
            total += _value_size(item, depth) if measure is None else measure(item, depth)
    return total


def _bytes_size(value: bytes | bytearray, depth: int) -> int:
    return 33 + len(value)


def _number_size(value: float, depth: int) -> int:
    return 16


def _nothing(value: Any, depth: int) -> int:  # None, a bool, UNSET: counted in their holder
    return 0


def _measurer(cls: type) -> _Measurer:
    """The measurer of a model class (made once per class): ``_walk``'s sum for one of its
    instances, its field values read at once (``astuple``: in field order, by position, with
    no attribute lookup), strings measured in place."""
    names: tuple[str, ...] = cls.__struct_fields__  # type: ignore[attr-defined]
    values = astuple
    own = 48 + 8 * len(names)
    measurers = _MEASURERS
    unset = UNSET  # (closed over: compiled, a module's global is a lookup at each use)
    # Only a class whose instances may hold unknown keys (``models.with_extra_fields``) has a
    # ``__dict__`` to look in: asking the others costs an AttributeError each (compiled).
    holds_extra = getattr(cls, "__dictoffset__", 0) != 0

    def measure(item: Any, depth: int) -> int:
        if depth >= _MAX_DEPTH:
            return _walk(item)
        total = own
        depth += 1
        for value in values(item):
            kind = type(value)
            if kind is str:
                total += 49 + len(value) if value.isascii() else 76 + 4 * len(value)
            elif value is not unset and value is not None:
                found = measurers.get(kind)
                total += _value_size(value, depth) if found is None else found(value, depth)
        if holds_extra:
            extra = getattr(item, "__dict__", None)  # unknown keys kept on the model
            if extra:
                total += _value_size(extra.get("_extra"), depth)
        return total

    if len(_MEASURERS) < _MAX_MEASURERS:
        _MEASURERS[cls] = measure
    return measure


_MAX_MEASURERS: Final = 4_096
"""Classes given a measurer (models with unknown keys are classes made at run time)."""
_MEASURERS: Final[dict[type, _Measurer]] = {
    dict: _dict_size,
    list: _list_size,
    tuple: _list_size,
    bytes: _bytes_size,
    bytearray: _bytes_size,
    int: _number_size,
    float: _number_size,
    bool: _nothing,
    type(None): _nothing,
    type(UNSET): _nothing,
}
