"""The hot entry points of the codec, compiled with mypyc when the package is built so (optional).

Rules this module owns: the raw-bytes fast decode, and nothing else. ``decode_message`` decodes
a raw line into its typed message by the strict decoder alone, wrapped in a ``Decoded``, and
sends everything else (text, JSON values, batches, other methods, salvage, errors, oversized
input, input with more opening brackets than ``codec._limits.MAX_DEPTH``, which the strict
decoder refuses) to ``codec._decode.decode_message_slow``, so the result never depends on
whether this module is compiled.

Why compiled: on CPython 3.11 the interpreted call around the decoder (argument handling, the
size check, the ``try``, the ``Decoded`` wrapper) costs about a sixth of a ~1 us decode; as a
mypyc function it costs a few tens of nanoseconds (docs/benchmarks.md). Compiling is optional
(``HATCH_BUILD_HOOKS_ENABLE=1 pip install .``, see hatch_build.py); without it this source runs
interpreted. It is one of the compiled group (``acp_toolcalls._compiled.COMPILED``): its
extension runs only while the build's stamp matches every source of the group, so an edit takes
effect at once (interpreted, after one ``StaleBuildWarning``) until the next compiled build.
This module imports ``codec._decode`` only, never the ``codec`` package, which imports this one.
"""

from __future__ import annotations

from typing import Any

from .codec._decode import (
    DEFAULT_MAX_BYTES,
    FAST_PATH_MISSES,
    Decoded,
    decode_message_slow,
    fast_message_decoder,
)
from .models import VersionName

__all__ = ["decode_message"]

_V2 = fast_message_decoder("v2")
_V1 = fast_message_decoder("v1")


def decode_message(
    data: Any,
    *,
    version: VersionName = "v2",
    strict: bool = False,
    max_bytes: int = DEFAULT_MAX_BYTES,
) -> Decoded[Any]:
    """Decode one JSON-RPC message or batch (one line of an ACP stream).

    Returns a ``Decoded`` whose value is a typed ``SessionUpdateMessage`` or
    ``PermissionRequestMessage`` of the protocol's module, a ``JsonRpcMessage`` for any other
    message, or a ``Batch`` of those (with ``InvalidMessage`` for unreadable elements). A single
    message that cannot be read raises ``DecodeError``: per the spec, a malformed tool-call
    notification is discarded whole and reported, and nothing else is affected.
    """
    if type(data) is bytes and len(data) <= max_bytes:
        fast = _V2 if version == "v2" else _V1 if version == "v1" else None
        if fast is not None:
            try:
                return Decoded(fast(data))
            except FAST_PATH_MISSES:
                pass
    return decode_message_slow(data, version, strict, max_bytes)
