"""What a cross-version conversion could not carry over: ``Loss``, ``LossReport``, the codes.

Rules this module owns (D46 (conversion modes)):

- Every field or item a conversion could not carry is listed with its JSON path and why;
  nothing is dropped silently. A lossy conversion returns its result together with a
  ``LossReport``; a strict one raises ``ConversionError`` at the first thing the target version
  cannot represent.
- Paths are rooted at the object that was converted (``$``), use the wire key names and index
  arrays: ``$.content[2]``, ``$.locations[0].line``, ``$.content[1].content.annotations``.
- Each loss has a stable ``code``, one of ``LOSS_CODES`` (docs/conversion.md lists them): what
  kind of loss it is, for a program to act on; the ``reason`` is for people and may change.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from functools import cache
from typing import Any

import msgspec

from .._errors import AcpToolcallsError
from ..models import extra_fields, extras_seen

__all__ = ["LOSS_CODES", "ConversionError", "Converted", "Loss", "LossReport"]

LOSS_CODES: dict[str, str] = {
    "lossy-mapping": "the mapping drops or changes it in every mode, strict too (the default)",
    "unrepresentable": "the target version cannot represent it: strict mode raises instead",
    "unknown-key": "a key the source version does not define, not carried across",
    "input-salvaged": "the lenient reader repaired raw input before it was converted",
    "invalid-message": "a batch element that is no JSON-RPC message, dropped",
}
"""Every ``Loss.code``, and what it means (docs/conversion.md, "Loss codes", lists them)."""

UNKNOWN_KEY = "unknown field, not carried across versions"
"""Why an unknown key of a converted object is reported: it has no meaning in the other
version, so it is dropped, never silently."""


@dataclass(frozen=True)
class Loss:
    """One field or item a conversion dropped or changed, and why."""

    path: str
    """JSON path into the converted object, e.g. ``$.content[2]``."""
    reason: str
    """What could not be carried over and what the conversion did instead."""
    code: str = field(default="lossy-mapping", compare=False)
    """What kind of loss it is, one of ``LOSS_CODES``; not compared (the path and reason say
    which loss it is)."""

    def __str__(self) -> str:
        return f"{self.path}: {self.reason}"


class LossReport:
    """The losses of one conversion, in the order they were found.

    Immutable; iterates over ``Loss`` entries and is false when nothing was lost, so
    ``if report:`` reads as "something was lost".
    """

    __slots__ = ("_losses",)

    def __init__(self, losses: Iterable[Loss] = ()) -> None:
        self._losses = tuple(losses)

    @property
    def losses(self) -> tuple[Loss, ...]:
        """Every loss, in the order found."""
        return self._losses

    def __iter__(self) -> Iterator[Loss]:
        return iter(self._losses)

    def __len__(self) -> int:
        return len(self._losses)

    def __bool__(self) -> bool:
        return bool(self._losses)

    def __add__(self, other: LossReport) -> LossReport:
        if not isinstance(other, LossReport):
            return NotImplemented
        return LossReport(self._losses + other._losses)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, LossReport) and other._losses == self._losses

    def __hash__(self) -> int:
        return hash(self._losses)

    def __repr__(self) -> str:
        return f"LossReport({list(self._losses)!r})"

    def __str__(self) -> str:
        return "\n".join(str(loss) for loss in self._losses)

    def __setattr__(self, name: str, value: object) -> None:
        if hasattr(self, "_losses"):
            raise AttributeError("LossReport is immutable")
        object.__setattr__(self, name, value)


NO_LOSSES = LossReport()
"""The empty report, shared: a conversion that lost nothing returns it instead of building one
(immutable, so one is enough)."""


class ConversionError(AcpToolcallsError):
    """Strict conversion met something the target version cannot represent."""


class Converted(msgspec.Struct, frozen=True):
    """What a bridge produced for one input message (or a flush).

    ``messages`` go on to the other peer, in order; ``replies`` go back to the sender of the
    input (answers the bridge gives on the peer's behalf, e.g. ``cancelled`` for a permission
    request the other version cannot show); ``losses`` says what could not be carried.
    A msgspec struct, not a dataclass: one is made per message on the bridges' hot path.
    """

    messages: tuple[Any, ...] = ()
    replies: tuple[Any, ...] = ()
    losses: LossReport = msgspec.field(default_factory=LossReport)


def key_path(path: str, key: str) -> str:
    """The JSON path of ``key`` under ``path`` (``$.a.b``, or ``$.a["x y"]`` for a key that is
    not an identifier)."""
    return f"{path}.{key}" if key.isidentifier() else f"{path}[{json.dumps(key)}]"


def unknown_keys(obj: Any, path: str, *, nested: bool = False) -> list[Loss]:
    """One loss per unknown key ``obj`` carries (D19), at its path under ``path``; with
    ``nested``, those of every model inside it too (for what is dropped or never mapped
    field by field)."""
    if not extras_seen():  # no model in this process was given an unknown key
        return []
    found: list[Loss] = []
    # (where, item): `where` is the path, or (parent where, ".key" or "[i]") until needed
    stack: list[tuple[Any, Any]] = [(path, obj)]
    while stack:
        where, item = stack.pop()
        if type(item) is list:
            stack.extend(((where, f"[{i}]"), value) for i, value in enumerate(item))
            continue
        if not isinstance(item, msgspec.Struct):
            continue
        keys = extra_fields(item)  # type: ignore[arg-type]  # any model of the package
        if keys:
            base = _path(where)
            found.extend(Loss(key_path(base, key), UNKNOWN_KEY, "unknown-key") for key in keys)
        if nested:
            for name, wire in wire_names(type(item)):
                value = getattr(item, name)
                if type(value) is list or isinstance(value, msgspec.Struct):
                    stack.append(((where, f".{wire}"), value))
    return found


def _path(where: Any) -> str:
    parts: list[str] = []
    while type(where) is tuple:
        where, part = where
        parts.append(part)
    return str(where) + "".join(reversed(parts))


@cache
def wire_names(cls: type[msgspec.Struct]) -> tuple[tuple[str, str], ...]:
    """(attribute, wire key) of each field of a model class."""
    return tuple((f.name, f.encode_name) for f in msgspec.structs.fields(cls))
