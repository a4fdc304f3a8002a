"""Growing text: when a text item that keeps growing is sent again.

Rules this module owns (D46 (sender obligations, item 12; evidence: resends)). One text item of a
call grows (streamed arguments or output). Its first piece goes out at once as a chunk; later growth
goes out as whole-content replacements, throttled by ``TextThrottle``: at most one per
``min_interval``, and only after enough growth or after the oldest unsent character waited
``max_delay``. The emitter flushes pending text before any other message about the call; this module
only says what is due (``due``) and when (``deadline``).
"""

from __future__ import annotations

import msgspec


class TextThrottle(msgspec.Struct, frozen=True, kw_only=True):
    """When a growing text item is re-sent (each send carries the call's whole ``content``).

    A send is due when ``min_interval`` seconds passed since the last one and either the text
    grew by ``max(min_growth, growth_ratio * sent)`` characters (``sent``: its length on the
    client) or its oldest unsent character waited ``max_delay`` seconds.

    Cost, for a text of ``T`` characters streamed over ``D`` seconds: growth-triggered sends
    grow the text geometrically, so together they carry at most about ``T / growth_ratio``
    characters; delay-triggered ones add at most ``T`` per ``max_delay`` of streaming. Linear in
    ``T`` instead of the quadratic cost of resending on every piece; the other content items of
    the call ride along on each send. docs/agent-guide.md has measured figures.
    """

    min_interval: float = 0.1
    min_growth: int = 1024
    growth_ratio: float = 0.5
    max_delay: float = 1.0


class GrowingText:
    """The open growing text item of a call."""

    __slots__ = ("first_pending", "index", "last_sent", "parts", "pending", "sent")

    def __init__(self, index: int, text: str, now: float) -> None:
        self.index = index  # its position in the call's content
        self.parts = [text]  # joined on send: `+=` on a long str would copy it every time
        self.sent = len(text)  # characters the client shows
        self.pending = 0  # characters not yet sent
        self.first_pending = now
        self.last_sent = now

    def threshold(self, throttle: TextThrottle) -> float:
        return max(throttle.min_growth, throttle.growth_ratio * self.sent)

    def due(self, throttle: TextThrottle, now: float) -> bool:
        """Whether the pending text is to be sent at ``now``."""
        waited = now - self.last_sent >= throttle.min_interval
        grown = self.pending >= self.threshold(throttle)
        return waited and (grown or now - self.first_pending >= throttle.max_delay)

    def deadline(self, throttle: TextThrottle) -> float | None:
        """When the pending text becomes due (``None``: nothing is pending)."""
        if not self.pending:
            return None
        due = self.last_sent + throttle.min_interval
        if self.pending < self.threshold(throttle):
            due = max(due, self.first_pending + throttle.max_delay)
        return due
