"""Protocol versions of a store: the one word ``version``, and how raw input is read.

Rules this module owns:

- ``ToolCallStore(version=...)`` takes ``"v1"``, ``"v2"`` or ``"auto"`` (the ``initialize``
  exchange decides: the response wins over the request; with none, v2), or the ints 1 and 2,
  which mean ``"v1"`` and ``"v2"``. Anything else is a ``ValueError``; the default is ``"v2"``.
- A ``protocolVersion`` an ``initialize`` exchange carries (an int) of 1 or less means v1, any
  greater one v2; anything else decides nothing.
"""

from __future__ import annotations

from ..models import VersionChoice, VersionName

"""What a store reads raw input as: ``"v1"``, ``"v2"``, or ``"auto"`` (negotiated)."""

_VERSIONS: dict[object, VersionChoice] = {"v1": "v1", "v2": "v2", "auto": "auto", 1: "v1", 2: "v2"}


def store_version(version: object) -> VersionChoice:
    """The version a store was given as ``version=`` (``None``: the default, ``"v2"``)."""
    if version is None:
        return "v2"
    found = _VERSIONS.get(version) if isinstance(version, (str, int)) else None
    if found is None or isinstance(version, bool):
        raise ValueError(
            f"unknown protocol version {version!r}: expected 'v1', 'v2' or 'auto' (or 1, 2)"
        )
    return found


def negotiated_version(version: object) -> VersionName | None:
    """The protocol an ``initialize`` exchange's ``protocolVersion`` selects, if any."""
    if isinstance(version, int) and not isinstance(version, bool):
        return "v1" if version <= 1 else "v2"
    return None
