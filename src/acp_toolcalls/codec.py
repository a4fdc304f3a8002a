"""Decode bytes, text or JSON values into the wire models, and encode them back to bytes.

Rules this module owns:

- ``decode(x)`` then ``encode`` gives back the same JSON value for every valid message: omitted
  stays omitted, ``null`` stays ``null``, unknown keys and unknown variants come back verbatim.
- Reading is lenient by default (``acp_toolcalls.lenient``); every salvage is returned as a
  ``Diagnostic`` next to the value. ``strict=True`` raises the first one as a ``DecodeError``.
- Bad input of every kind (not JSON, not an object, invalid UTF-8, NaN, numbers out of range,
  nesting too deep, over ``max_bytes``) raises ``DecodeError`` and nothing else.
- ``decode_message`` is ``_fastpath``'s, compiled by mypyc when the package was built so and
  the build's stamp (the SHA-256 of its source) matches the ``_fastpath.py`` beside it;
  otherwise that source, interpreted, after one ``StaleBuildWarning``. ``FAST_PATH`` says which.

Theory of operation: the fast path is one strict msgspec decode straight into the structs
(``forbid_unknown_fields``, exact types); almost every real message takes it and costs about
what parsing into dicts costs. When it fails, the input is parsed into plain values once and
handed to the lenient reader. Encoding is one msgspec encode; unknown variants and opaque
messages go out through ``enc_hook``, and only an object tree that holds unknown keys takes the
slower route through plain values.
"""

from __future__ import annotations

import json
import math
import re
import typing
from collections.abc import Callable, Mapping
from functools import cache
from typing import Any, Generic, Literal, TypeVar, Union

import msgspec
from msgspec import UNSET

from . import v1, v2, wire
from ._errors import AcpToolcallsError
from .jsonrpc import Batch, InvalidMessage, JsonRpcMessage
from .lenient import DecodeError, Diagnostic, ItemError, Salvage, _key_path, reader_for
from .wire import UnknownVariant, WireStruct, extra_fields

__all__ = [
    "DEFAULT_MAX_BYTES",
    "Decoded",
    "EncodeError",
    "Protocol",
    "StaleBuildWarning",
    "decode",
    "decode_message",
    "duplicate_keys",
    "encode",
]

T = TypeVar("T")

Protocol = Literal["v1", "v2"]

DEFAULT_MAX_BYTES = 16 * 1024 * 1024
"""Default limit on one encoded message (one line of JSON Lines), in bytes."""

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


class EncodeError(AcpToolcallsError):
    """The object cannot be written as JSON (for example a string with a lone surrogate)."""


# --------------------------------------------------------------------------------------------
# Decoding


_DECODERS: dict[int, tuple[Any, msgspec.json.Decoder[Any]]] = {}


def _fast_decoder(tp: Any) -> msgspec.json.Decoder[Any]:
    # Keyed by identity: hashing an `Annotated` union (what `functools.cache` would do) walks
    # the whole type on every call, about 1 us. The entry keeps `tp` alive, so ids stay unique.
    found = _DECODERS.get(id(tp))
    if found is None or found[0] is not tp:
        found = _DECODERS[id(tp)] = (tp, msgspec.json.Decoder(tp))
    return found[1]


_MESSAGE_UNIONS: dict[str, Any] = {
    protocol: Union[tuple(types.values())] for protocol, types in _MESSAGE_TYPES.items()
}
_HOT_DECODE = {protocol: _fast_decoder(tp).decode for protocol, tp in _MESSAGE_UNIONS.items()}
FAST_PATH_MISSES = (msgspec.ValidationError, msgspec.DecodeError, RecursionError)
"""What ``fast_message_decoder`` raises for input that ``decode_message`` must look at."""


def fast_message_decoder(protocol: Protocol) -> Callable[[bytes], Any]:
    """The strict decoder behind ``decode_message``'s fast path, for hot loops with their own
    fallback: it returns the typed ``session/update`` or ``session/request_permission``
    message of ``protocol`` for valid input, and raises one of ``FAST_PATH_MISSES`` for
    anything else (another method, a salvage, bad JSON), which ``decode_message`` then reads.
    The caller enforces its own size limit."""
    return _HOT_DECODE[protocol]


def _check_size(data: bytes | bytearray | memoryview | str, max_bytes: int) -> None:
    size = len(data)
    if isinstance(data, str) and size * 4 > max_bytes:
        size = len(data.encode("utf-8", "surrogatepass"))
    if size > max_bytes:
        raise DecodeError("$", f"message of {size} bytes exceeds the limit of {max_bytes} bytes")


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
        _check_size(data, max_bytes)
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
            if encoded is not None and b"null" in encoded and _holds_non_finite(plain):
                encoded = None
        except (msgspec.EncodeError, TypeError, OverflowError, RecursionError, UnicodeEncodeError):
            encoded = None  # not JSON values after all (a str with a lone surrogate: convert)
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


def decode_message_slow(data: Any, protocol: str, strict: bool, max_bytes: int) -> Decoded[Any]:
    """``decode_message`` for everything its fast path (``_fastpath``) does not take."""
    table = _MESSAGE_TYPES.get(protocol)
    if table is None:
        raise ValueError(f"unknown protocol {protocol!r}: expected 'v1' or 'v2'")

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

    return _read(data, _MESSAGE_UNIONS[protocol], slow, strict, max_bytes)


# --------------------------------------------------------------------------------------------
# The fast path: compiled when the package was built with mypyc and the build matches the source


class StaleBuildWarning(RuntimeWarning):
    """The compiled fast path was not built from the ``_fastpath.py`` beside it (an edit since
    the build, or a build from before builds were stamped): the pure-Python source is used."""


FAST_PATH: Literal["compiled", "interpreted"] = "interpreted"
"""Which ``decode_message`` this process runs: the mypyc-compiled ``_fastpath`` or its source.
Both behave the same; the compiled one saves a few hundred nanoseconds a message."""


def _load_fast_path() -> Callable[..., Decoded[Any]]:
    """``_fastpath.decode_message``, from the extension only when it was built from the
    ``_fastpath.py`` beside it (hatch_build.py compiles the source's SHA-256 into
    ``_fastpath_digest``): an edited source is never shadowed by an old build, and a fresh
    install is never taken for a stale one, whatever the files' times say."""
    global FAST_PATH
    import importlib
    import importlib.util
    import os

    module = importlib.import_module("._fastpath", __package__)
    built = module.__file__ or ""
    if built.endswith(".py"):
        return typing.cast("Callable[..., Decoded[Any]]", module.decode_message)
    source = os.path.join(os.path.dirname(built), "_fastpath.py")
    try:
        with open(source, "rb") as file:
            text = file.read()
    except OSError:  # an installation without sources: nothing to be stale against
        FAST_PATH = "compiled"
        return typing.cast("Callable[..., Decoded[Any]]", module.decode_message)
    import hashlib

    try:
        stamp: object = importlib.import_module("._fastpath_digest", __package__).DIGEST
    except (ImportError, AttributeError):
        stamp = None
    if stamp == hashlib.sha256(text).hexdigest():
        FAST_PATH = "compiled"
        return typing.cast("Callable[..., Decoded[Any]]", module.decode_message)
    import warnings

    warnings.warn(
        f"acp_toolcalls: the compiled fast path {os.path.basename(built)} was not built from "
        f"the {source} beside it; using that source instead (same results, slower decoding). "
        "Rebuild with `HATCH_BUILD_HOOKS_ENABLE=1 pip install .` (add -e for a checkout), or "
        "delete the stale _fastpath*.so files.",
        StaleBuildWarning,
        stacklevel=2,
    )
    spec = importlib.util.spec_from_file_location(f"{__package__}._fastpath_source", source)
    if spec is None or spec.loader is None:  # pragma: no cover - a .py path always has a loader
        raise ImportError(source)
    interpreted = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(interpreted)
    return typing.cast("Callable[..., Decoded[Any]]", interpreted.decode_message)


if typing.TYPE_CHECKING:
    from ._fastpath import decode_message
else:
    decode_message = _load_fast_path()

# --------------------------------------------------------------------------------------------
# Duplicate keys

_JSONRPC = b'{"jsonrpc"'  # a message that opens with it has it at the top level


def _written_back(decoded: Any, raw: bytes) -> bytes:
    """``decoded`` as written (``b""`` when it cannot stand in for the text ``raw``)."""
    if decoded is UNSET or isinstance(decoded, Batch):
        return b""
    if not raw.startswith(_JSONRPC) and not raw.lstrip().startswith(_JSONRPC):
        return b""
    try:
        return _written(decoded)
    except _ENCODE_ERRORS:
        return b""


_ESCAPED_COLON = re.compile(rb"\\u003[aA]")
_ESCAPE_OF_COLON = b"\\u003"  # what the pattern starts with: a plain search rules most lines out


class _Repeated(dict[str, Any]):
    """An object of ``duplicate_keys``' parse that had keys more than once: (key, count)."""

    __slots__ = ("repeated",)
    repeated: list[tuple[str, int]]


def _pairs(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    obj = dict(pairs)
    if len(obj) == len(pairs):
        return obj
    counts: dict[str, int] = {}
    for key, _ in pairs:
        counts[key] = counts.get(key, 0) + 1
    repeated = _Repeated(obj)
    repeated.repeated = [(key, n) for key, n in counts.items() if n > 1]
    return repeated


def duplicate_keys(
    data: bytes | bytearray | memoryview | str, decoded: Any = UNSET
) -> tuple[Diagnostic, ...]:
    """One ``Diagnostic`` per key that occurs more than once in one object of the JSON text
    ``data``, at the key's path (``$.params.update.title``), in document order.

    ``decode``, ``decode_message`` and the store keep the last value of a repeated key, as
    ``JSON.parse`` and ``serde_json::Value`` do, and say nothing: finding repeats is this
    separate check (the CLI commands run it on every line). ``decoded``: what
    ``decode_message`` gave for ``data`` (its ``.value``), when at hand: writing it back stands
    in for a second parse, which is then needed only when the counts differ. Text the decoder
    cannot read, or nested too deeply to check, gives ``()``.
    """
    raw = data.encode("utf-8", "surrogatepass") if isinstance(data, str) else bytes(data)
    try:
        if _ESCAPE_OF_COLON not in raw or _ESCAPED_COLON.search(raw) is None:
            # Outside strings a ':' follows each key, and msgspec writes a string's ':' as
            # is: the text written back has fewer ':' when a repeat was dropped. A decoded
            # model writes no pair the text did not have (unset fields are not written), but
            # ``jsonrpc``, which has a default: it stands in when the text opens with that key.
            colons = raw.count(b":")
            if _written_back(decoded, raw).count(b":") == colons:
                return ()
            if msgspec.json.encode(msgspec.json.decode(raw)).count(b":") == colons:
                return ()
        tree = json.loads(raw, object_pairs_hook=_pairs)
    except (ValueError, RecursionError, msgspec.DecodeError, msgspec.EncodeError):
        return ()
    found: list[Diagnostic] = []
    stack: list[tuple[Any, str]] = [(tree, "$")]
    while stack:
        value, path = stack.pop()
        if isinstance(value, dict):
            if isinstance(value, _Repeated):
                for key, count in value.repeated:
                    found.append(
                        Diagnostic(
                            _key_path(path, key),
                            f"key {key!r} occurs {count} times in one object; the last value "
                            "is used",
                        )
                    )
            stack.extend((item, _key_path(path, key)) for key, item in reversed(value.items()))
        elif isinstance(value, list):
            stack.extend((item, f"{path}[{i}]") for i, item in reversed(list(enumerate(value))))
    return tuple(found)


# --------------------------------------------------------------------------------------------
# Encoding


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
    if isinstance(obj, WireStruct):
        if extra_fields(obj):
            return True
        nested = _NESTED.get(type(obj))
        if nested is None:
            nested = _NESTED[type(obj)] = _struct_layout(type(obj))[0]
        for name in nested:
            value = getattr(obj, name)
            if (isinstance(value, (WireStruct, list))) and _has_extra(value):
                return True
        return False
    if isinstance(obj, (list, tuple)):
        return any(_has_extra(item) for item in obj if isinstance(item, _CONTAINERS))
    if isinstance(obj, dict):
        return any(_has_extra(item) for item in obj.values() if isinstance(item, _CONTAINERS))
    if isinstance(obj, Batch):
        return any(_has_extra(item) for item in obj.items)
    return False


_NESTED: dict[type, tuple[str, ...]] = {}
_CONTAINERS = (WireStruct, list, tuple, dict)


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
    if isinstance(obj, (list, tuple)):
        return [_to_plain(item) for item in obj]
    if isinstance(obj, dict):
        return {key: _to_plain(value) for key, value in obj.items()}
    if isinstance(obj, Batch):
        return [_to_plain(item) for item in obj.items]
    return obj


def _holds_non_finite(obj: Any) -> bool:
    """Whether ``obj`` holds a NaN or infinite float (which msgspec would write as ``null``)."""
    kind = type(obj)
    if kind is str or kind is int or obj is None or obj is UNSET or kind is bool:
        return False
    if kind is float:
        return not math.isfinite(obj)
    if kind is list or kind is tuple:
        return any(map(_holds_non_finite, obj))
    if kind is dict:
        return any(map(_holds_non_finite, obj.values()))
    if isinstance(obj, WireStruct):
        if any(map(_holds_non_finite, msgspec.structs.astuple(obj))):
            return True
        return wire.extras_seen() and _holds_non_finite(extra_fields(obj))
    if isinstance(obj, (UnknownVariant, JsonRpcMessage, InvalidMessage)):
        return _holds_non_finite(obj.data)
    if isinstance(obj, Batch):
        return _holds_non_finite(obj.items)
    if isinstance(obj, float):
        return not math.isfinite(obj)
    if isinstance(obj, (list, tuple)):
        return any(map(_holds_non_finite, obj))
    if isinstance(obj, Mapping):
        return any(map(_holds_non_finite, obj.values()))
    return False


def to_builtins(obj: Any) -> Any:
    """Plain JSON values (dicts, lists, str, ...) of a model, message or batch, exactly as
    ``encode`` would write them: unknown keys and unknown variants included, ``UNSET`` fields
    left out, ``None`` kept as ``None``."""
    try:
        if wire.extras_seen() and _has_extra(obj):
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
        return _written(obj)
    except _ENCODE_ERRORS as exc:
        raise EncodeError(str(exc)) from None


def canonical_json(obj: Any) -> bytes:
    """The bytes ``encode`` writes for ``obj``, as a key for equality of wire values (the
    emitter's minimal patches): a ``True`` is not a ``1`` here, unlike with ``==``."""
    return _encode(obj)


_ENCODE_ERRORS = (
    msgspec.EncodeError,
    UnicodeEncodeError,
    TypeError,
    NotImplementedError,
    RecursionError,
)
"""What writing a value can raise; ``encode`` turns each into ``EncodeError``."""


def _written(obj: Any) -> bytes:
    """``obj`` as JSON, unknown keys included (the one writer; raises ``_ENCODE_ERRORS``)."""
    if wire.extras_seen() and _has_extra(obj):
        obj = _to_plain(obj)
    out: bytes = _encoder.encode(obj)
    return out


def _encode(obj: Any) -> bytes:
    try:
        out = _written(obj)
        # JSON has no NaN/Infinity and msgspec writes them as `null`, which on a patch field
        # (`rawInput`, `rawOutput`) would be a clear: refuse instead.
        if b"null" in out and _holds_non_finite(obj):
            raise EncodeError("cannot encode a NaN or infinite number as JSON")
        return out
    except _ENCODE_ERRORS as exc:
        raise EncodeError(str(exc)) from None
