"""Decoding: bytes, text or JSON values into the wire models, strictly first, then leniently.

Rules this module owns:

- ``decode(x)`` then ``encode`` gives back the same JSON value for every valid message: omitted
  stays omitted, ``null`` stays ``null``, unknown keys and unknown variants come back verbatim.
- Reading is lenient by default (``_lenient``); every salvage is returned as a ``Diagnostic``
  next to the value. ``strict=True`` raises the first one as a ``DecodeError``.
- Bad input of every kind (not JSON, not an object, invalid UTF-8, NaN, numbers out of range,
  nesting deeper than ``MAX_DEPTH`` (``_limits``), over ``max_bytes``) raises ``DecodeError``
  and nothing else, said plainly (``explain_json_error``).
- Per version, ``session/update`` and ``session/request_permission`` messages are typed
  (``_MESSAGE_TYPES``); every other message stays an opaque ``JsonRpcMessage``. A batch's
  unreadable element becomes an ``InvalidMessage`` and costs nothing else.

Theory of operation: the fast path is one strict msgspec decode straight into the structs
(``forbid_unknown_fields``, exact types); almost every real message takes it and costs about
what parsing into dicts costs. When it fails, the input is parsed into plain values once and
handed to the lenient reader. ``decode_message``'s own fast path is ``acp_toolcalls._fastpath``
(compiled when built so), which calls ``decode_message_slow`` here for everything else.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any, Generic, TypeVar, Union

import msgspec

from .. import v1, v2
from .._errors import DecodeError
from ..models import Batch, InvalidMessage, JsonRpcMessage, VersionName, WireStruct
from ._encode import holds_non_finite
from ._lenient import Diagnostic, ItemError, Salvage, reader_for
from ._limits import DEFAULT_MAX_BYTES, MAX_DEPTH, check_depth, check_size, check_value_depth

__all__ = [
    "DEFAULT_MAX_BYTES",
    "FAST_PATH_MISSES",
    "MAX_DEPTH",
    "Decoded",
    "decode",
    "decode_message_slow",
    "explain_json_error",
    "fast_message_decoder",
]

T = TypeVar("T")

_MESSAGE_TYPES: dict[str, dict[str, type[WireStruct]]] = {
    "v2": {
        "session/update": v2.SessionUpdateMessage,
        "session/request_permission": v2.PermissionRequestMessage,
    },
    "v1": {
        "session/update": v1.SessionUpdateMessage,
        "session/request_permission": v1.PermissionRequestMessage,
    },
}
"""Per protocol: the methods whose messages are typed; every other message stays opaque."""


class Decoded(msgspec.Struct, Generic[T], frozen=True, gc=False):
    """A decoded value and what the lenient reader had to salvage to get it."""

    value: T
    diagnostics: tuple[Diagnostic, ...] = ()


_DECODERS: dict[int, tuple[Any, msgspec.json.Decoder[Any]]] = {}


def _fast_decoder(tp: Any) -> msgspec.json.Decoder[Any]:
    # Keyed by identity: hashing an `Annotated` union (what `functools.cache` would do) walks
    # the whole type on every call, about 1 us. The entry keeps `tp` alive, so ids stay unique.
    found = _DECODERS.get(id(tp))
    if found is None or found[0] is not tp:
        found = _DECODERS[id(tp)] = (tp, msgspec.json.Decoder(tp))
    return found[1]


_MESSAGE_UNIONS: dict[str, Any] = {
    version: Union[tuple(types.values())] for version, types in _MESSAGE_TYPES.items()
}


class TooDeep(msgspec.DecodeError):
    """What a fast decoder raises for a line that may nest deeper than ``MAX_DEPTH`` (more
    opening brackets than that): ``decode_message`` then measures it, and refuses it or reads
    it."""


def _shallow_only(decode: Callable[[bytes], Any]) -> Callable[[bytes], Any]:
    def fast(data: bytes) -> Any:
        if len(data) > 2 * MAX_DEPTH and data.count(b"[") + data.count(b"{") > MAX_DEPTH:
            raise TooDeep("may nest too deep")
        return decode(data)

    return fast


_HOT_DECODE = {
    version: _shallow_only(_fast_decoder(tp).decode) for version, tp in _MESSAGE_UNIONS.items()
}
FAST_PATH_MISSES = (msgspec.ValidationError, msgspec.DecodeError, RecursionError)
"""What ``fast_message_decoder`` raises for input that ``decode_message`` must look at."""


def fast_message_decoder(version: VersionName) -> Callable[[bytes], Any]:
    """The strict decoder behind ``decode_message``'s fast path, for hot loops with their own
    fallback: it returns the typed ``session/update`` or ``session/request_permission``
    message of ``version`` for valid input, and raises one of ``FAST_PATH_MISSES`` for
    anything else (another method, a salvage, bad JSON, a line with more opening brackets
    than ``MAX_DEPTH``, which may nest too deep), which ``decode_message`` then reads. The
    caller enforces its own size limit."""
    return _HOT_DECODE[version]


_LONE_SURROGATE = re.compile(
    rb"\\u[dD][89abAB][0-9a-fA-F]{2}(?!\\u[dD][c-fC-F])"
    rb"|(?<!\\u[dD][89abAB][0-9a-fA-F]{2})\\u[dD][c-fC-F][0-9a-fA-F]{2}"
)


def _lone_surrogate(data: bytes | bytearray | memoryview | str) -> bool:
    raw = data.encode("utf-8", "surrogatepass") if isinstance(data, str) else bytes(data)
    return _LONE_SURROGATE.search(raw) is not None


_AT_BYTE = re.compile(r"invalid character \(byte (\d+)\)$")
_BYTE = re.compile(r"\(byte \d+\)")
_NON_FINITE = re.compile(rb"-?(NaN|Infinity)")


def explain_json_error(data: bytes | bytearray | memoryview | str, reason: str) -> str:
    """msgspec's message for ``data`` that is not JSON (``reason``), said plainly where it
    can be: an escaped lone surrogate (which msgspec calls truncation or a bad pair), and a
    ``NaN``, ``Infinity`` or ``-Infinity`` (which Python's ``json.dumps`` writes)."""
    if "surrogate pair" in reason or (
        reason.startswith("Input data was truncated") and _lone_surrogate(data)
    ):
        at = _BYTE.search(reason)
        where = f" {at.group()}" if at is not None else ""
        return f"a string holds an unpaired UTF-16 surrogate escape{where}"
    at = _AT_BYTE.search(reason)
    if at is not None:
        raw = data.encode("utf-8", "surrogatepass") if isinstance(data, str) else bytes(data)
        start = int(at.group(1))
        start -= 1 if raw[start - 1 : start] == b"-" else 0
        token = _NON_FINITE.match(raw, start)
        if token is not None:
            return f"{token.group().decode()} is not a JSON number (byte {start})"
    return reason


def _parse_plain(data: bytes | bytearray | memoryview | str) -> Any:
    try:
        return msgspec.json.decode(data)
    except msgspec.ValidationError as exc:  # numbers msgspec cannot represent
        raise DecodeError("$", f"not valid JSON: {exc}") from None
    except msgspec.DecodeError as exc:
        raise DecodeError("$", f"not valid JSON: {explain_json_error(data, str(exc))}") from None
    except RecursionError:
        raise DecodeError("$", "not valid JSON: nesting is too deep") from None
    except UnicodeEncodeError:  # text input holding a lone surrogate code point
        raise DecodeError("$", "not valid JSON: text is not valid Unicode") from None


def _read(
    data: Any,
    fast_type: Any,
    slow: Callable[[Any, Salvage], T],
    strict: bool,
    max_bytes: int,
) -> Decoded[T]:
    if isinstance(data, (bytes, bytearray, memoryview, str)):
        check_size(data, max_bytes)
        check_depth(data)
        try:
            return Decoded(_fast_decoder(fast_type).decode(data))
        except (msgspec.ValidationError, msgspec.DecodeError, RecursionError, UnicodeEncodeError):
            pass  # not the common shape, or not JSON: the slow path says which
        plain = _parse_plain(data)
    else:
        plain = data
        try:
            # Through JSON rather than `msgspec.convert`, which rebuilds its plan for an
            # `Annotated` union on every call (about 17 us against 0.7 us for a content block).
            # msgspec writes NaN as `null`, which would read as a clear: those take `convert`.
            encoded: bytes | None = msgspec.json.encode(plain)
            if encoded is not None and b"null" in encoded and holds_non_finite(plain):
                encoded = None
        except (msgspec.EncodeError, TypeError, OverflowError, RecursionError, UnicodeEncodeError):
            encoded = None  # not JSON values after all (a str with a lone surrogate: convert)
        if encoded is not None:
            check_depth(encoded)
        else:
            check_value_depth(plain)
        try:
            if encoded is not None:
                return Decoded(_fast_decoder(fast_type).decode(encoded))
            return Decoded(msgspec.convert(plain, fast_type))
        except (msgspec.ValidationError, msgspec.DecodeError, RecursionError, UnicodeEncodeError):
            pass  # (convert meets a lone surrogate in a union tag as UnicodeEncodeError)
    salvage = Salvage(strict=strict)
    try:
        value = slow(plain, salvage)
    except ItemError as exc:
        raise DecodeError(exc.path, exc.reason) from None
    except RecursionError:
        raise DecodeError("$", "nesting is too deep") from None
    return Decoded(value, tuple(salvage.diagnostics))


def decode(
    data: Any, tp: type[T], *, strict: bool = False, max_bytes: int = DEFAULT_MAX_BYTES
) -> Decoded[T]:
    """Decode one payload (JSON bytes or text, or an already parsed JSON value) as ``tp``.

    ``tp`` is any wire model class, e.g. ``ToolCallUpdate``, ``RequestPermissionResponse`` or
    ``acp_toolcalls.v1.ToolCall``. Raises ``DecodeError`` naming the JSON path when the payload
    cannot be read even leniently.
    """
    reader = reader_for(tp)
    result: Decoded[T] = _read(data, tp, lambda plain, s: reader(plain, "$", s), strict, max_bytes)
    return result


def decode_message_slow(data: Any, version: str, strict: bool, max_bytes: int) -> Decoded[Any]:
    """``decode_message`` for everything its fast path (``_fastpath``) does not take."""
    table = _MESSAGE_TYPES.get(version)
    if table is None:
        raise ValueError(f"unknown protocol {version!r}: expected 'v1' or 'v2'")

    def one(plain: Any, path: str, salvage: Salvage) -> Any:
        if not isinstance(plain, dict):
            raise ItemError(path, "expected a JSON-RPC message object")
        method = plain.get("method")
        cls = table.get(method) if isinstance(method, str) else None
        if cls is None:
            return JsonRpcMessage(plain)
        return reader_for(cls)(plain, path, salvage)

    def slow(plain: Any, salvage: Salvage) -> Any:
        if not isinstance(plain, list):
            return one(plain, "$", salvage)
        if not plain:
            raise ItemError("$", "empty batch")
        items: list[Any] = []
        for index, element in enumerate(plain):
            mark = len(salvage.diagnostics)
            try:
                items.append(one(element, f"$[{index}]", salvage))
            except (ItemError, DecodeError) as exc:
                del salvage.diagnostics[mark:]
                items.append(InvalidMessage(element, DecodeError(exc.path, exc.reason)))
        return Batch(items)

    return _read(data, _MESSAGE_UNIONS[version], slow, strict, max_bytes)
