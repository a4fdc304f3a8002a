"""Duplicate keys: the separate check that finds keys repeated in one JSON object.

Rules this module owns:

- ``decode``, ``decode_message`` and the store keep the last value of a repeated key, as
  ``JSON.parse`` and ``serde_json::Value`` do, and say nothing; ``duplicate_keys`` reports one
  ``Diagnostic`` per repeated key, at its path, in document order.
- Text that cannot be read, or is nested too deeply to check, has none to report.

Theory of operation: most lines have no repeat, and counting ``:`` proves it without a second
parse: outside strings a ``:`` follows each key, and msgspec writes a string's ``:`` as is, so
the text written back from the decoded value has fewer ``:`` exactly when a repeat was dropped.
Only then (or when the text escapes a ``:``) does a pair-preserving parse find the keys.
"""

from __future__ import annotations

import json
import re
from typing import Any

import msgspec
from msgspec import UNSET

from ..models import Batch
from ._encode import ENCODE_ERRORS, written
from ._lenient import Diagnostic, key_path

__all__ = ["duplicate_keys"]

_JSONRPC = b'{"jsonrpc"'  # a message that opens with it has it at the top level


def _written_back(decoded: Any, raw: bytes) -> bytes:
    """``decoded`` as written (``b""`` when it cannot stand in for the text ``raw``)."""
    if decoded is UNSET or isinstance(decoded, Batch):
        return b""
    if not raw.startswith(_JSONRPC) and not raw.lstrip().startswith(_JSONRPC):
        return b""
    try:
        return written(decoded)
    except ENCODE_ERRORS:
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
                            key_path(path, key),
                            f"key {key!r} occurs {count} times in one object; the last value "
                            "is used",
                        )
                    )
            stack.extend((item, key_path(path, key)) for key, item in reversed(value.items()))
        elif isinstance(value, list):
            stack.extend((item, f"{path}[{i}]") for i, item in reversed(list(enumerate(value))))
    return tuple(found)
