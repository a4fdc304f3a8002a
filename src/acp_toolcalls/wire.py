"""Deprecated alias of ``acp_toolcalls.models`` (issue 18); kept for one release.

The wire building blocks (``WireStruct``, the leniency markers, unknown keys and variants) now
live in ``acp_toolcalls.models._wire``; import them from ``acp_toolcalls.models``.
"""

from __future__ import annotations

from .models import (
    CLOSED_ENUM,
    DEFAULT_ON_ERROR,
    SKIP_INVALID_ITEMS,
    UNSET,
    AnyOf,
    InvalidValue,
    Open,
    UnknownVariant,
    UnsetType,
    WireStruct,
    base64_bytes,
    extra_fields,
    replace,
)
from .models import extras_seen as extras_seen  # (not in __all__ before either)
from .models import with_extra_fields as with_extra_fields

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
