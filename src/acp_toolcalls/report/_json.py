"""JSON kept as JSON: what ``history`` holds of a big log, without an object per value.

Rules this module owns:

- ``JsonList``: a JSON array grown one encoded value at a time in one buffer; ``take`` hands
  its JSON over once.
- ``Values``: a pool of JSON values, each kept once (by its encoding), referred to by index.
- ``json_list`` / ``json_object``: arrays and objects of values already encoded.
"""

from __future__ import annotations

import msgspec

__all__ = ["JsonList", "Values", "encode", "json_list", "json_object"]

encode = msgspec.json.Encoder().encode


def json_list(items: list[bytes]) -> bytes:
    """The JSON array of values already encoded."""
    return b"[" + b",".join(items) + b"]"


def json_object(**members: bytes) -> msgspec.Raw:
    """The JSON object of ``members``' JSON values, by name."""
    pairs = (b'"%s":%s' % (name.encode(), value) for name, value in members.items())
    return msgspec.Raw(b"{" + b",".join(pairs) + b"}")


class JsonList:
    """A JSON array grown one encoded value at a time, held as one buffer (no object per
    value: a big log's history is mostly these)."""

    __slots__ = ("_buffer", "count")

    def __init__(self) -> None:
        self._buffer = bytearray(b"[")
        self.count = 0

    def append(self, encoded: bytes) -> None:
        if self.count:
            self._buffer += b","
        self._buffer += encoded
        self.count += 1

    def take(self) -> bytes:
        """The array's JSON; the list is left empty."""
        self._buffer += b"]"
        data = bytes(self._buffer)
        self._buffer, self.count = bytearray(b"["), 0
        return data


class Values:
    """A pool of plain JSON values, each kept once (as JSON); values are referred to by
    index."""

    __slots__ = ("_index", "values")

    def __init__(self) -> None:
        self.values: list[bytes] = []
        self._index: dict[bytes, int] = {}

    def add(self, key: bytes) -> int:
        """The index of the value whose JSON is ``key``."""
        index = self._index.get(key)
        if index is None:
            index = self._index[key] = len(self.values)
            self.values.append(key)
        return index
