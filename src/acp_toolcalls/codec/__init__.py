"""Decode bytes, text or JSON values into the wire models, and encode them back to bytes.

Layout (implementation modules are private; their public names are exported here):

- ``_limits``: the limits on one message: its size (``DEFAULT_MAX_BYTES``) and its nesting
  (``MAX_DEPTH``, ``check_depth``), the one depth limit every writer is held to.
- ``_decode``: ``decode``, the typed-message tables, the strict decoders and the slow path of
  ``decode_message``; JSON errors said plainly.
- ``_lenient``: the lenient reader, which salvages what the strict decoder rejected
  (``Diagnostic`` per salvage).
- ``_encode``: ``encode``, ``to_builtins``, ``canonical_json``; unknown keys written back.
- ``_duplicates``: ``duplicate_keys``, the separate check for repeated keys.
- ``acp_toolcalls._fastpath``: ``decode_message``, the raw-bytes fast decode, a top-level
  module because the optional build compiles it; whether it runs compiled is
  ``acp_toolcalls._compiled``'s rule for its whole group (``FAST_PATH`` says which).

Every error of bad input is a ``DecodeError``, of unwritable output an ``EncodeError``.
"""

from __future__ import annotations

from typing import Literal

from .._compiled import BUILDS, StaleBuildWarning
from .._errors import DecodeError
from .._fastpath import decode_message
from ..models import VersionName
from ._decode import (
    DEFAULT_MAX_BYTES,
    FAST_PATH_MISSES,
    Decoded,
    decode,
    explain_json_error,
    fast_message_decoder,
)
from ._duplicates import duplicate_keys
from ._encode import EncodeError, canonical_json, encode, encode_decoded, to_builtins
from ._lenient import Diagnostic
from ._limits import MAX_DEPTH, check_depth

__all__ = [
    "DEFAULT_MAX_BYTES",
    "FAST_PATH",
    "FAST_PATH_MISSES",
    "MAX_DEPTH",
    "DecodeError",
    "Decoded",
    "Diagnostic",
    "EncodeError",
    "StaleBuildWarning",
    "VersionName",
    "canonical_json",
    "check_depth",
    "decode",
    "decode_message",
    "duplicate_keys",
    "encode",
    "encode_decoded",
    "explain_json_error",
    "fast_message_decoder",
    "to_builtins",
]

FAST_PATH: Literal["compiled", "interpreted"] = BUILDS["_fastpath"]
"""Which ``decode_message`` this process runs: the mypyc-compiled ``_fastpath`` or its source.
Both behave the same; the compiled one saves a few hundred nanoseconds a message."""
