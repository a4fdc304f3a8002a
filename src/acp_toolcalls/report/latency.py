"""Per-method latency of one side of a log: each JSON-RPC request matched with its response.

Rules this module owns (issue 31):

- A request is a message with a ``method`` and an ``id`` (a string or an integer); a
  response is a message with an ``id``, no ``method``, and a ``result`` or an ``error``. A
  batch is read element by element. Notifications are not counted.
- Who sent a request is its record's direction (``SENDERS``); a response answers the
  request of the direction ``ANSWERS`` names for its own, with the same id (in a ``bridge
  --log`` file: the editor's requests to the proxy are answered by the proxy on the client
  side, the proxy's to the agent by the agent on the agent side, and the other way round).
  A line of a plain log has no direction: a request's sender is then read from its method
  (``AGENT_METHODS``: the methods only an agent sends; any other, the editor), and a
  response answers the latest request still waiting on its id, of either sender (an agent's
  request comes within the editor's turn and is answered before the turn's own answer).
- An id may be used again once its request was answered: the new request waits on it. A
  request on an id already waiting, from the same sender, replaces the old one, which is
  counted as never answered; a response that matches no waiting request is ``stray``.
- Latency is the response's record time minus the request's, in milliseconds, never below
  0 (a clock set back is not a negative wait). A request or response without a time (a
  plain log) is counted, never timed: the figures are ``None``, no time is invented. When
  every time the side's records carry is the same (a log written with placeholder times)
  the figures are ``None`` too (``times``: ``"none"``, ``"constant"`` or ``"measured"``).
- Per (sender, method): ``count`` requests, ``answered`` (with a result or an error),
  ``errors``, ``unanswered`` (count - answered: still waiting, or replaced, or dropped), and
  over the timed answers ``p50``, ``p99`` and ``max``. Percentiles by nearest rank: the
  p-th percentile of n sorted durations is the one at rank ``ceil(p / 100 * n)`` (1-based),
  a measured duration, never an interpolation.
- Bounded memory, whatever the log: at most ``MAX_PENDING`` requests wait per side (past
  it the oldest is dropped, never answered as far as this view knows), at most
  ``MAX_METHODS`` rows per side (past them, a new method goes into its sender's row
  ``OTHER_METHODS``: one more row per sender at most), method names cut at
  ``METHOD_CHARS``. Each row keeps its durations exactly, sorted, up to
  ``EXACT_DURATIONS``; past that they go into a histogram of log-spaced buckets
  (``BUCKET_RATIO`` apart: p50 and p99 are then the upper bound of their bucket, within
  ``BUCKET_RATIO - 1`` of the exact figure, and ``exact`` is false; ``max`` and the counts
  stay exact). A histogram, not a random reservoir: the same log gives the same report.
- The view says when a sender was read from a method (``byMethod``).
- ``changes()`` gives the rows changed since its last call (the live page's events carry
  only those: O(rows changed) per event), or every row when ``times`` changed (their
  figures appear); ``view()`` gives them all.
"""

from __future__ import annotations

import math
from array import array
from bisect import insort
from typing import Any

import msgspec

from ..codec import DecodeError, check_depth

__all__ = [
    "AGENT_METHODS",
    "ANSWERS",
    "EXACT_DURATIONS",
    "MAX_METHODS",
    "MAX_PENDING",
    "SENDERS",
    "Durations",
    "Latency",
    "nearest_rank",
    "request_key",
]

SENDERS = {
    "agent->proxy": "agent",
    "proxy->agent": "proxy",
    "client->proxy": "editor",
    "proxy->client": "proxy",
    "agent->client": "agent",  # a wrapped capture's (no proxy)
    "client->agent": "editor",
}
"""Who sent a line, by its direction."""
ANSWERS = {
    "proxy->client": "client->proxy",
    "client->proxy": "proxy->client",
    "agent->proxy": "proxy->agent",
    "proxy->agent": "agent->proxy",
    "agent->client": "client->agent",
    "client->agent": "agent->client",
}
"""The direction of the request a response answers, by the response's direction."""
AGENT_METHODS = frozenset(
    {
        "session/request_permission",
        "fs/read_text_file",
        "fs/write_text_file",
        "terminal/create",
        "terminal/output",
        "terminal/release",
        "terminal/wait_for_exit",
        "terminal/kill",
        "elicitation/create",
    }
)
"""The methods only an agent sends (v1 and v2): a plain log's request's sender."""
_PLAIN = {True: "agent", False: "editor"}  # a plain log's request: sent by an agent method?

MAX_PENDING = 4096
"""Requests waiting for their response, per side, at most."""
MAX_METHODS = 100
"""Rows (sender, method) per side, at most; past them, each sender's ``OTHER_METHODS``."""
OTHER_METHODS = "(other methods)"
METHOD_CHARS = 100
"""Characters of a method name kept."""
EXACT_DURATIONS = 2048
"""Durations a row keeps exactly; past it, a histogram."""
BUCKET_RATIO = 1.05
"""The ratio between two histogram buckets' bounds (5%)."""
_LOG_RATIO = math.log(BUCKET_RATIO)
_ZERO = -(10**9)  # the bucket of 0 ms


def request_key(value: Any) -> bytes | None:
    """A JSON-RPC id as a key (its JSON), or ``None`` when it is no string or integer."""
    if isinstance(value, (str, int)) and not isinstance(value, bool):
        return msgspec.json.encode(value)
    return None


def nearest_rank(count: int, percent: float) -> int:
    """The 1-based rank of the ``percent``-th percentile of ``count`` sorted values."""
    return max(1, math.ceil(percent / 100 * count))


class Durations:
    """One row's durations (ms): exact and sorted up to ``EXACT_DURATIONS``, then a
    histogram of log-spaced buckets."""

    __slots__ = ("buckets", "count", "exact", "largest")

    def __init__(self) -> None:
        self.exact: array[float] | None = array("d")
        self.buckets: dict[int, int] = {}
        self.count = 0
        self.largest = 0.0

    def add(self, ms: float) -> None:
        self.count += 1
        self.largest = max(self.largest, ms)
        exact = self.exact
        if exact is not None:
            insort(exact, ms)
            if len(exact) <= EXACT_DURATIONS:
                return
            self.exact = None
            for value in exact:
                self._bucket(value)
            return
        self._bucket(ms)

    def _bucket(self, ms: float) -> None:
        key = math.floor(math.log(ms) / _LOG_RATIO) if ms > 0 else _ZERO
        self.buckets[key] = self.buckets.get(key, 0) + 1

    def percentile(self, percent: float) -> float | None:
        """The nearest-rank percentile; ``None`` without durations."""
        if not self.count:
            return None
        rank = nearest_rank(self.count, percent)
        if self.exact is not None:
            return self.exact[rank - 1]
        seen = 0
        for key in sorted(self.buckets):
            seen += self.buckets[key]
            if seen >= rank:
                return 0.0 if key == _ZERO else min(BUCKET_RATIO ** (key + 1), self.largest)
        return self.largest  # not reached: the buckets hold every duration


class _Row:
    __slots__ = ("answered", "count", "durations", "errors", "method", "sender")

    def __init__(self, sender: str, method: str) -> None:
        self.sender, self.method = sender, method
        self.count = self.answered = self.errors = 0
        self.durations = Durations()


class _Message(msgspec.Struct):
    id: Any = None
    method: Any = None
    result: msgspec.Raw | msgspec.UnsetType = msgspec.UNSET  # a null result is a result
    error: msgspec.Raw | msgspec.UnsetType = msgspec.UNSET


_read = msgspec.json.Decoder(list[_Message] | _Message)
_ID_HINT = b'"id"'


class Latency:
    """Every request of one side and its response, folded into rows per (sender, method)."""

    def __init__(self) -> None:
        self._rows: dict[tuple[str, str], _Row] = {}
        # (request's direction or sender, id) -> (row, time, order)
        self._pending: dict[tuple[str, bytes], tuple[_Row, float | None, int]] = {}
        self._order = 0
        self._changed: set[tuple[str, str]] = set()
        self.stray = 0  # responses to no waiting request
        self.by_method = False  # a request's sender was read from its method (no direction)
        self._first_time: float | None = None
        self._times_move = False
        self._times_sent = "none"  # ``times`` as the last ``changes`` said it

    def feed(self, line: int, data: bytes | int, when: float | None, direction: str | None) -> None:
        """One line of the side (its message); lines without an ``"id"`` are not parsed."""
        if when is not None:
            self._saw_time(when)
        if not isinstance(data, bytes) or _ID_HINT not in data:
            return
        try:
            check_depth(data)  # the codec's limit (issue 27): the validation reports the line
            value = _read.decode(data)
        except (msgspec.DecodeError, msgspec.ValidationError, RecursionError, DecodeError):
            return  # reported by the replay and the validation
        for message in value if isinstance(value, list) else [value]:
            self._message(message, when, direction)

    def _saw_time(self, when: float) -> None:
        if self._first_time is None:
            self._first_time = when
        elif when != self._first_time:
            self._times_move = True

    def _message(self, message: _Message, when: float | None, direction: str | None) -> None:
        key = request_key(message.id)
        if key is None:
            return
        if isinstance(message.method, str):
            self._request(message.method, key, when, direction)
        elif message.method is None:
            error = message.error is not msgspec.UNSET
            if error or message.result is not msgspec.UNSET:
                self._response(key, error, when, direction)

    def _request(self, method: str, key: bytes, when: float | None, direction: str | None) -> None:
        if direction is None:
            origin = sender = _PLAIN[method in AGENT_METHODS]
            self.by_method = True
        else:
            origin, sender = direction, SENDERS.get(direction, direction)
        row = self._row(sender, method[:METHOD_CHARS])
        row.count += 1
        self._changed.add((row.sender, row.method))
        pending = self._pending
        pending.pop((origin, key), None)  # replaced: never answered
        if len(pending) >= MAX_PENDING:
            del pending[next(iter(pending))]  # the oldest: never answered, as far as we know
        self._order += 1
        pending[(origin, key)] = (row, when, self._order)

    def _response(self, key: bytes, error: bool, when: float | None, direction: str | None) -> None:
        pending = self._pending
        if direction is None:
            waiting = [(origin, key) for origin in _PLAIN.values() if (origin, key) in pending]
            found = max(waiting, key=lambda k: pending[k][2]) if waiting else None
        else:
            origin = ANSWERS.get(direction)
            found = (origin, key) if origin is not None and (origin, key) in pending else None
        if found is None:
            self.stray += 1
            return
        row, asked, _ = pending.pop(found)
        row.answered += 1
        row.errors += error
        if asked is not None and when is not None:
            row.durations.add(max(0.0, (when - asked) * 1000))
        self._changed.add((row.sender, row.method))

    def _row(self, sender: str, method: str) -> _Row:
        row = self._rows.get((sender, method))
        if row is None:
            if len(self._rows) >= MAX_METHODS:
                method = OTHER_METHODS
                row = self._rows.get((sender, method))
            if row is None:
                row = self._rows[(sender, method)] = _Row(sender, method)
        return row

    # -- the view --------------------------------------------------------------------------------

    @property
    def times(self) -> str:
        """``"none"`` (no record had a time), ``"constant"`` (all had the same) or
        ``"measured"``."""
        if self._first_time is None:
            return "none"
        return "measured" if self._times_move else "constant"

    def view(self) -> dict[str, Any]:
        """Every row, in first-seen order, and the side's counts."""
        return self._view(list(self._rows.values()))

    def changes(self) -> dict[str, Any] | None:
        """The rows changed since the last ``changes`` (``None``: none), and the side's
        counts."""
        if self.times != self._times_sent:
            self._times_sent = self.times
            self._changed.update(self._rows)  # every row's figures appear (or go)
        if not self._changed:
            return None
        rows = [self._rows[key] for key in self._rows if key in self._changed]
        self._changed.clear()
        return self._view(rows)

    def _view(self, rows: list[_Row]) -> dict[str, Any]:
        measured = self.times == "measured"
        return {
            "times": self.times,
            "stray": self.stray,
            "waiting": len(self._pending),
            "byMethod": self.by_method,
            "rows": [_row_view(row, measured) for row in rows],
        }


def _row_view(row: _Row, measured: bool) -> dict[str, Any]:
    durations = row.durations
    timed = measured and durations.count > 0
    return {
        "sender": row.sender,
        "method": row.method,
        "count": row.count,
        "answered": row.answered,
        "errors": row.errors,
        "unanswered": row.count - row.answered,
        "timed": durations.count if measured else 0,
        "p50": durations.percentile(50) if timed else None,
        "p99": durations.percentile(99) if timed else None,
        "max": durations.largest if timed else None,
        "exact": durations.exact is not None,
    }
