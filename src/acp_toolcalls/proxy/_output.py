"""What the connection core sends and notes: ``Output``, a component the core holds.

Rules this module owns:

- Output goes into one ``Outbox`` per call: lines to each side, in order, and notes
  (``ConnectionNote``), each naming the index of the line it is about in a ``from_*_lines``
  call (``line``).
- No line the proxy writes is longer than the lines it reads (``fits``): a longer answer is
  replaced by an error answer; a longer request is not sent and its sender is answered with an
  error; anything else is not sent (noted).
- Coalesced tool-call changes wait at most the interval asked (``FlushDeadline``: when
  ``poll`` sends them; ``0``: they are sent with the line that made them).
- A memory cap that bites is noted at most once every ``LIMIT_NOTE_INTERVAL`` seconds per cap,
  saying how many more times it bit since; a bridge's cap is one of its ``$.max_*`` losses.

Nothing here reads a clock or does I/O: time is the ``now`` the core sets from its caller's.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

from msgspec import UNSET

from ..codec import encode
from ..lifecycle import jsonrpc
from ..models import INTERNAL_ERROR
from ..records import Side
from . import _routing as rpc

Version = Literal[1, 2]
VersionOption = Literal[1, 2, "auto"]

LIMIT_NOTE_INTERVAL = 10.0
"""Seconds between two notes about the same cap."""


@dataclass(frozen=True)
class ConnectionNote:
    """Something to tell the person running the proxy (stderr, the log)."""

    side: Side
    """Whose message it is about."""
    text: str
    kind: Literal["loss", "error", "limit"] = "loss"
    """``loss``: what a conversion could not carry (for ``--verbose``); ``error``: a peer broke
    the protocol or went away; ``limit``: a memory cap dropped something (at most one line
    per cap every ``LIMIT_NOTE_INTERVAL`` seconds, saying how many more it bit since)."""
    line: int | None = None
    """The index of the line it is about in the lines given to ``from_client_lines`` or
    ``from_agent_lines`` (``None``: not one of them, or another call)."""


@dataclass
class Outbox:
    """Lines to write (without their newline), in order, and notes."""

    to_client: list[bytes] = field(default_factory=list)
    to_agent: list[bytes] = field(default_factory=list)
    notes: list[ConnectionNote] = field(default_factory=list)

    def __bool__(self) -> bool:
        return bool(self.to_client or self.to_agent or self.notes)


class FlushDeadline:
    """When the coalesced tool-call changes are due (``at``; ``None``: none waits), at most
    ``interval`` seconds after the first of them."""

    def __init__(self, interval: float) -> None:
        self.interval = interval
        self.at: float | None = None

    def start(self, now: float) -> None:
        """A change waits in a bridge now: due ``interval`` from now, unless one waits already."""
        if self.interval > 0 and self.at is None:
            self.at = now + self.interval


class Output:
    """The lines and notes of one call of the core (``box``, handed over by ``take``); the
    core holds one and gives it to its policies."""

    def __init__(
        self, max_line_bytes: int, to_agent: rpc.RequestIds, to_client: rpc.RequestIds
    ) -> None:
        self.box = Outbox()
        self.max_line_bytes = max_line_bytes
        self._to_agent = to_agent  # the core's request ids: a request not sent is answered
        self._to_client = to_client
        self.now = 0.0  # the time of the line being handled
        self.line: int | None = None  # its index in the lines of from_*_lines, for notes
        self._limit_notes: dict[str, tuple[float, int]] = {}  # cap -> (last note, bitten since)

    def take(self) -> Outbox:
        """What was sent and noted since the last ``take``."""
        out, self.box = self.box, Outbox()
        return out

    def client(self, message: Any) -> None:
        line = self.fits(encode(message), "client")
        if line is not None:
            self.box.to_client.append(line)

    def agent(self, message: Any) -> None:
        line = self.fits(encode(message), "agent")
        if line is not None:
            self.box.to_agent.append(line)

    def fits(self, line: bytes, to: Side) -> bytes | None:
        """No line the proxy writes is longer than the lines it reads. A longer answer is
        replaced by an error answer; a longer request is not sent and its sender is answered
        with an error; anything else is not sent (noted)."""
        if len(line) <= self.max_line_bytes:
            return line
        envelope = rpc.read_envelope.decode(line)
        what = f"a message of {len(line)} bytes, over the line limit of {self.max_line_bytes}"
        self.note("agent" if to == "client" else "client", f"{what}: not sent", "error")
        detail = {"details": f"{what} once converted"}
        if envelope.method is UNSET and envelope.id is not UNSET:
            return encode(jsonrpc.error(envelope.id, INTERNAL_ERROR, "Internal error", detail))
        if envelope.id is not UNSET:  # a request: its sender gets the answer
            pending = (self._to_agent if to == "agent" else self._to_client).pop(envelope.id)
            if pending is not None:
                answer = jsonrpc.error(pending.origin_id, INTERNAL_ERROR, "Internal error", detail)
                (self.client if to == "agent" else self.agent)(answer)
        return None

    def note(self, side: Side, text: str, kind: Literal["loss", "error", "limit"] = "loss") -> None:
        self.box.notes.append(ConnectionNote(side, text, kind, self.line))

    def bug(self, side: Side, exc: Exception) -> None:
        self.note(side, f"not handled ({type(exc).__name__}: {exc}); a bug", "error")

    def losses(self, side: Side, what: str, losses: Any) -> None:
        for loss in losses:
            if loss.path.startswith("$.max_"):  # a cap of the bridge's store bit
                self.limit(loss.path[2:], f"{what}: {loss.reason}")
            else:
                self.note(side, f"{what}: {loss}")

    def limit(self, cap: str, text: str) -> None:
        """A memory cap bit: one note, unless one about the same cap went out in the last
        ``LIMIT_NOTE_INTERVAL`` seconds (then it is counted, and the next note says so)."""
        last, since = self._limit_notes.get(cap, (None, 0))
        if last is not None and self.now - last < LIMIT_NOTE_INTERVAL:
            self._limit_notes[cap] = (last, since + 1)
            return
        more = f" (and {since} more time(s) since the last note)" if since else ""
        self.note("agent", f"{cap}: {text}{more}", "limit")
        self._limit_notes[cap] = (self.now, 0)
