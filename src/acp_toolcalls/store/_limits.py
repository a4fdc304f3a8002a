"""How a memory cap (a field of ``Limits``, in ``_structs``) cuts: what is kept, what stands
for what went.

Rules this module owns:

- ``None`` disables a cap; the hot path compares with ``as_cap()`` of it, which a disabled cap
  never exceeds.
- A cut goes an eighth of the cap past it (``trim_block``), so that growth past a cap costs
  amortised O(1), not a cut at every append.
- A buffer past its cap keeps its head (a quarter of the cap) and its tail (``middle``).
- A value over a cap stays valid where it is (``cut_value``): a string keeps its head and says what
  went (``omitted``), a list keeps the items that fit, a model is cleared, any other value is
  replaced by the saying.
- Every cut is reported twice: a ``LimitReached`` for the UI and a ``limit`` diagnostic for the
  log (``limit_reached``); nothing is dropped silently.
"""

from __future__ import annotations

import sys
from typing import Any

import msgspec

from ..events import DiagnosticReported, Event, LimitReached
from ._sizes import size_of

_NO_CAP = sys.maxsize


def as_cap(limit: int | None) -> int:
    """A cap as the hot path compares with it: disabled (``None``) is larger than any size."""
    return _NO_CAP if limit is None else limit


def trim_block(cap: int) -> int:
    """How far past a cap a cut goes (an eighth of it, at least one)."""
    # Trim in blocks so that a stream of appends past a cap costs amortised O(1), not a
    # memmove of the whole buffer each time.
    return max(1, cap // 8)


def omitted(size: int, limit: str) -> str:
    """The marker that stands for what a cap cut: ``[… 8,000,123 bytes omitted (limit)]``."""
    return f"[\u2026 {size:,} bytes omitted ({limit})]"


def trim_middle(buffer: list[Any] | bytearray, cap: int) -> tuple[int, int]:
    """Cut ``buffer`` (longer than ``cap``) to keep its first quarter-cap and its tail.

    Cuts an extra block past the cap so that appending past it stays amortised O(1).
    Returns the head kept and how many elements went.
    """
    head, excess = middle(len(buffer), cap)
    del buffer[head : head + excess]
    return head, excess


def middle(length: int, cap: int) -> tuple[int, int]:
    """Where ``trim_middle`` cuts a buffer of ``length`` elements: the head kept and how many
    elements go after it."""
    head = cap // 4
    return head, min(length - cap + trim_block(cap), length - head)


def until(held: list[Any], need: int) -> list[Any]:
    """The first of ``held`` (things with a ``size``) whose sizes add up to ``need`` bytes."""
    chosen: list[Any] = []
    freed = 0
    for item in held:
        if freed >= need:
            break
        chosen.append(item)
        freed += item.size
    return chosen


def text_head(text: str, cap: int) -> str:
    """The head of ``text`` that keeps it well under ``cap`` bytes (a quarter of it)."""
    return text[: max(0, cap // 4)]


def cut_value(value: Any, size: int, cap: int, limit: str = "max_value_bytes") -> tuple[Any, int]:
    """A value over a cap of ``cap`` bytes, made to fit and stay valid where it is: a string
    keeps its head and says what went; a list (``locations``) keeps the items that fit; a
    model (``capabilities``, ``size``) is cleared; any other JSON value is replaced by the
    saying."""
    kept: Any
    if isinstance(value, str):
        kept = text_head(value, cap) + " " + omitted(size, limit)
    elif isinstance(value, list):
        kept, room = [], cap // 2
        for item in value:
            room -= size_of(item) + 8
            if room < 0:
                break
            kept.append(item)
    elif isinstance(value, msgspec.Struct):
        kept = None
    else:
        kept = omitted(size, limit)
    return kept, size_of(kept)


def limit_reached(
    events: list[Event], session_id: str, limit: str, subject: str, detail: str
) -> None:
    """Report a cut: an event for the UI and a diagnostic for the log."""
    events.append(LimitReached(session_id, limit, subject, detail))
    events.append(DiagnosticReported(session_id, "$", f"{limit}: {subject}: {detail}", "limit"))
