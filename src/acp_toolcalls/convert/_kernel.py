"""The kernel both conversion directions share: losses, table lookups, copying, the frame.

Rules this module owns:

- ``Losses`` collects the losses of one mapping call: ``lost`` for what the mapping itself
  drops or changes, the same in every mode; ``instead``/``unrepresentable`` for what the target
  version cannot represent, where strict mode raises ``ConversionError`` instead; ``unknown``
  for a key the source version does not define (D19).
- A model class is found in a table through its MRO (``lookup``): an object that carries
  unknown keys is an instance of a same-named subclass (wire.py).
- An object is copied field by field into the other version's class (``copy_fields``),
  through the fix a table names for a field; its unknown keys are reported, never carried
  (D19). A ``_meta`` object is copied fresh (``copy_meta``): the receiver (a store merging by
  key) must not share the sender's dict. A JSON object is copied key by key (``copy_keys``):
  keys the target does not define are dropped and reported.
- Loss paths are rooted at the converted object (``$``); ``rooted`` re-roots a path at the
  place that object sits in its message.
- The converter frame, once for every converter: ``read_input`` decodes raw input (what the
  lenient reader salvaged is reported as ``input salvaged``), ``Frame.convert`` converts a
  message or each element of a batch (at ``$[i]``) and returns a ``Converted`` in which two or
  more messages of a batch stay one batch (``batched``), and ``Frame.mapped`` re-roots a
  mapping's losses and strict error at the message. The stateless and session converters run
  on a ``Frame``; the bridges, which keep their own output lists, use ``read_input`` and
  ``batched``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from typing import Any, TypeVar

from msgspec import UNSET

from ..codec import Diagnostic, VersionName, decode_message
from ..models import Batch, InvalidMessage, WireStruct
from ._loss import (
    NO_LOSSES,
    UNKNOWN_KEY,
    ConversionError,
    Converted,
    Loss,
    LossReport,
    key_path,
    unknown_keys,
    wire_names,
)

V = TypeVar("V")
R = TypeVar("R")

Json = dict[str, Any]
"""A JSON object, as the opaque mappings (session updates, the proxy's methods) build them."""

TO_V2_MISSING = "not a v1 tool-call object: {}"
TO_V1_MISSING = "no v2 -> v1 conversion for a {}"
"""``lookup``'s error for a class a table of that direction does not have."""


class Losses:
    """Collects the losses of one conversion; raises in strict mode where the spec says so."""

    __slots__ = ("found", "strict")

    def __init__(self, strict: bool) -> None:
        self.strict = strict
        self.found: list[Loss] = []

    def lost(self, path: str, reason: str) -> None:
        """Something dropped by the mapping itself, in every mode."""
        self.found.append(Loss(path, reason))

    def unknown(self, path: str) -> None:
        """A key the source version does not define: dropped in every mode (D19)."""
        self.found.append(Loss(path, UNKNOWN_KEY, "unknown-key"))

    def unrepresentable(self, path: str, reason: str) -> None:
        """Something the target cannot represent: strict raises, lossy drops and reports."""
        self.instead(path, reason, "dropped")

    def instead(self, path: str, reason: str, done: str) -> None:
        """Something the target cannot represent: strict raises; lossy reports ``done``."""
        if self.strict:
            raise ConversionError(path, reason)
        self.found.append(Loss(path, f"{reason}; {done}", "unrepresentable"))

    def report(self) -> LossReport:
        return LossReport(self.found) if self.found else NO_LOSSES


def rooted(path: str, root: str) -> str:
    """``path`` (rooted at a converted object, ``$...``) as a path from ``root``."""
    return root + path[1:] if path.startswith("$") else f"{root}.{path}"


def lookup(table: Mapping[type[Any], V], obj: object, missing: str) -> V:
    """The entry of ``obj``'s class (or the nearest base) in ``table``; ``TypeError`` with
    ``missing`` (formatted with the class name) when there is none."""
    # An object that carries unknown keys is an instance of a same-named subclass (wire.py).
    for cls in type(obj).__mro__:
        found = table.get(cls)
        if found is not None:
            return found
    raise TypeError(missing.format(type(obj).__name__))


def report_extra(obj: WireStruct, path: str, losses: Losses) -> None:
    """The unknown keys of ``obj`` (at ``path``), reported (D19)."""
    losses.found.extend(unknown_keys(obj, path))


def copy_meta(meta: Any) -> Any:
    """A ``_meta`` value copied: a fresh dict (the receiver, a store merging by key, must not
    share the sender's object)."""
    return dict(meta) if isinstance(meta, dict) else meta


Fix = Callable[[Any, str, Losses], Any]
"""Converts one field value at ``path``; returns ``UNSET`` to drop the field."""


def same(value: Any, path: str, losses: Losses) -> Any:
    """The ``Fix`` of a value copied as it is."""
    return value


def meta_fix(value: Any, path: str, losses: Losses) -> Any:
    """The ``Fix`` of an item ``_meta``: scoped to its object, copied as is (``copy_meta``)."""
    return copy_meta(value)


def equals(default: str) -> Callable[[Any], bool]:
    """Whether a value is ``default`` (a create's default value, left out)."""
    return lambda value: value == default


def empty(value: Any) -> bool:
    """Whether a value is empty (an empty collection or ``_meta``, left out of a create)."""
    return not value


def copy_fields(
    obj: WireStruct,
    target: type[WireStruct],
    fixes: Mapping[str, Fix],
    path: str,
    losses: Losses,
    *,
    fix_nulls: bool,
) -> Any:
    """``obj`` copied into ``target`` field by field, through ``fixes`` where one is named (for
    a ``null`` value too when ``fix_nulls``); unknown keys are reported (D19)."""
    report_extra(obj, path, losses)
    values: dict[str, Any] = {}
    for name, key in wire_names(type(obj)):
        value = getattr(obj, name)
        if value is UNSET:
            continue
        fix = fixes.get(name)
        if fix is not None and (fix_nulls or value is not None):
            value = fix(value, key_path(path, key), losses)
            if value is UNSET:
                continue
        values[name] = value
    return target(**values)


def copy_keys(data: Mapping[str, Any], keys: tuple[str, ...], losses: Losses) -> Json:
    """``data``'s keys among ``keys`` (plus ``sessionUpdate``); other keys dropped, reported."""
    out: Json = {}
    for key, value in data.items():
        if key in keys:
            out[key] = value
        elif key != "sessionUpdate":
            losses.unknown(key_path("$", key))
    meta = out.get("_meta")
    if meta is not None and not isinstance(meta, dict):
        del out["_meta"]
        losses.lost("$._meta", "not an object; dropped")
    return out


def renamed(value: Any, old: str, new: str) -> Any:
    """A JSON object with its key ``old`` renamed ``new`` (in place of it), else as it is."""
    if not isinstance(value, dict) or old not in value:
        return value
    return {(new if key == old else key): item for key, item in value.items()}


def salvaged(path: str, diagnostics: Iterable[Diagnostic], losses: Losses) -> None:
    """What the lenient reader repaired in a value at ``path``, reported."""
    for diagnostic in diagnostics:
        losses.lost(path + diagnostic.path[1:], f"invalid: {diagnostic.reason}")


# --------------------------------------------------------------------------------------------
# The converter frame

RAW_INPUT = (bytes, bytearray, memoryview, str, dict, list)
"""Input a converter decodes first (raw bytes, text, JSON values); models are taken as is."""


def read_input(message: Any, version: VersionName, losses: list[Loss]) -> Any:
    """``message`` as models: raw input decoded, what was salvaged appended to ``losses``;
    raises ``DecodeError`` for input that cannot be read."""
    if not isinstance(message, RAW_INPUT):
        return message
    decoded = decode_message(message, version=version)
    losses.extend(
        Loss(d.path, f"input salvaged: {d.reason}", "input-salvaged") for d in decoded.diagnostics
    )
    return decoded.value


def batched(messages: list[Any]) -> tuple[Any, ...]:
    """The output messages of one input: two or more (of a batch) as one ``Batch``."""
    return (Batch(messages),) if len(messages) > 1 else tuple(messages)


def invalid_element(message: InvalidMessage) -> Loss:
    """The loss of a batch element that is no JSON-RPC message (dropped)."""
    error = message.error
    return Loss(error.path, f"batch element dropped: {error.reason}", "invalid-message")


class Frame:
    """What converting one input collects: ``messages`` for the other peer, ``replies`` for
    the sender, ``losses``; ``take`` hands them over as a ``Converted`` and starts again."""

    __slots__ = ("losses", "messages", "replies")

    def __init__(self) -> None:
        self.messages: list[Any] = []
        self.replies: list[Any] = []
        self.losses: list[Loss] = []

    def convert(
        self, message: Any, version: VersionName, one: Callable[[Any, str], None]
    ) -> Converted:
        """``one(message, root)`` for the (decoded) message, or for each element of a batch at
        ``$[i]``; what it collected, as a ``Converted``."""
        message = read_input(message, version, self.losses)
        if isinstance(message, Batch):
            for index, item in enumerate(message.items):
                one(item, f"$[{index}]")
            return self.take(batch=True)
        one(message, "$")
        return self.take()

    def mapped(self, root: str, convert: Callable[[], tuple[R, LossReport]]) -> R:
        """Run one stateless mapping; its losses (and a strict error) get ``root``-ed paths."""
        try:
            result, report = convert()
        except ConversionError as exc:
            raise ConversionError(rooted(exc.path, root), exc.reason) from None
        self.losses.extend(Loss(rooted(loss.path, root), loss.reason, loss.code) for loss in report)
        return result

    def take(self, *, batch: bool = False) -> Converted:
        """What was collected (the messages of a ``batch`` as one, ``batched``), handed over."""
        messages = batched(self.messages) if batch else tuple(self.messages)
        converted = Converted(messages, tuple(self.replies), LossReport(self.losses))
        self.messages, self.replies, self.losses = [], [], []
        return converted
