"""Reading each side's lines, and what input that cannot be routed is answered with.

Rules this module owns (bad input costs nothing else):

- A string with an unpaired surrogate escape is read with U+FFFD in its place (reported).
- A client line that is not JSON is answered ``-32700``, one that is not a message ``-32600``
  (an empty batch too), with its id whenever it can be found; an answer of the client that
  cannot be read, to a permission request, is no approval (``cancelled``), to another request
  an error for the agent.
- An agent line that is JSON but not a message, a batch element that is not one, or a message
  nested too deeply is dropped (a request answered ``-32600``/``-32700``); a payload that
  cannot be read is answered ``-32700`` (a request) or the client gets an error (an answer).
  An agent line that is not JSON ends the session (``agent_gone``), as the agent's crash does.
- A batch costs what its size does (D16 amended): its elements that are not messages with an
  id to answer them under (``0``, ``{}``, ``{"method": 5}``) are counted, not answered or noted
  one by one: the line gets one note saying how many and, from the client, one ``-32600``
  (id null); of the notes about its other elements the first ``_BATCH_NOTES`` are kept, the
  rest counted in that note. With the core's ``slice_batches`` (the stdio edge sets it) a
  batch line is handled ``_SLICE`` elements at a time (``unfinished``, ``more``): the other
  side's lines are handled, and what a slice made is written, before the next slice.
- A line over ``max_line_bytes`` is skipped unread (``_input`` reads its top-level ``id`` and
  whether it has a ``method`` as it streams by) and nothing waits for it forever, in every
  mode: a request of either side is answered ``-32600`` with its id; an answer is one that
  cannot be read (as above: the client's, no approval or an error for the agent; the
  agent's, an error for the client); a notification, or a line whose id cannot be read, is
  only noted (``oversized_line``).
- An agent request whose id is not a string or an integer, or reuses the id of one still
  waiting for its answer, is refused ``-32600`` (``refused_id``).

``LineReader`` is a component of the core: it reads through ``ReadingCore`` (public members)
and hands what it read to the routing steps the core gives it.
"""

from __future__ import annotations

import re
from collections import deque
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

import msgspec
from msgspec import UNSET

from ..codec import Diagnostic, duplicate_keys
from ..lifecycle import jsonrpc
from ..models import (
    CANCELLED_OUTCOME,
    INTERNAL_ERROR,
    INVALID_REQUEST,
    PARSE_ERROR,
    plain_id,
)
from ..records import Side
from . import _routing as rpc
from ._output import Outbox

if TYPE_CHECKING:
    from ._output import Output
    from ._permissions import BridgeOutput
    from ._state import Mode

_BATCH_NOTES = 3
"""Notes about the elements of one batch line kept as they are; the rest are counted."""
_SLICE = 1 << 13
"""Elements of a batch handled at a time when the edge asks for slices (``slice_batches``)."""


@dataclass
class _Left:
    """A batch line handled in part: the rest of it, and the lines of its call after it."""

    steps: Iterator[None]
    handle: Callable[[bytes, float], None]
    lines: Sequence[bytes]
    index: int


Route = Callable[[rpc.Envelope, bytes, float], None]  # a routing step of the core


class ReadingCore(Protocol):
    """What the reader asks of the connection core, all public: its components, its line
    limit, its mode and whether the edge asked for batches a slice at a time."""

    output: Output
    agent_requests: rpc.RequestIds
    client_requests: rpc.RequestIds
    bridge_output: BridgeOutput
    max_line_bytes: int
    slice_batches: bool

    @property
    def mode(self) -> Mode: ...


class LineReader:
    """Lines read into messages; what cannot be routed, answered. A component of the core,
    given its routing: ``route_client`` and ``route_agent`` take the messages read, ``end``
    ends the session (an agent line that is not JSON-RPC)."""

    def __init__(
        self, core: ReadingCore, route_client: Route, route_agent: Route, end: Callable[[str], None]
    ) -> None:
        self._core = core
        self.output = core.output
        self.bridge_output = core.bridge_output
        self._route_client = route_client
        self._route_agent = route_agent
        self._end = end
        self._batch_left: Iterator[None] | None = None  # the batch a line just left unfinished
        self._left: dict[str, _Left] = {}  # per side: the batch and the lines after it

    def take(self) -> Outbox:
        """What the lines made, once the backlogs are settled."""
        self.bridge_output.backlogs()
        return self.output.take()

    # ----------------------------------------------------------------------------------------
    # Lines over the limit

    def oversized_line(
        self, side: Side, size: int, request_id: Any, has_method: bool, now: float
    ) -> Outbox:
        """A line of ``side`` of ``size`` bytes, over ``max_line_bytes``, skipped unread but
        for its top-level ``id`` (``UNSET``: none could be read) and whether it has a
        ``method``: a request is answered ``-32600`` with its id, an answer settles what
        waits for it, all noted (the note's ``line`` is 0)."""
        self.output.now = now
        self.output.line = 0
        try:
            what = f"{size} bytes is over the limit of {self._core.max_line_bytes} bytes; skipped"
            if request_id is not UNSET and has_method:
                limit = (
                    f"over the line limit of {self._core.max_line_bytes} bytes (--max-line-bytes)"
                )
                detail = {"details": f"a request of {size} bytes, {limit}: not read"}
                answer = jsonrpc.error(
                    plain_id(request_id), INVALID_REQUEST, "Invalid Request", detail
                )
                (self.output.client if side == "client" else self.output.agent)(answer)
                what += "; answered -32600"
            elif request_id is not UNSET:
                what += self._oversized_answer(side, request_id, f"{size} bytes, over the limit")
            self.output.note(side, what, "error")
        finally:
            self.output.line = None
        return self.take()

    def _oversized_answer(self, side: Side, request_id: Any, reason: str) -> str:
        """An answer of ``side`` that was over the limit: what waits for it is settled; the
        end of the note says how."""
        if side == "client":
            if self._core.mode == "converting":
                if self._unreadable_answer(request_id, reason):
                    return "; the agent is answered in its place"
                return ""
            if self._core.mode == "passthrough":  # the agent's own id: it waits for it
                detail = {"details": f"the client's answer could not be read ({reason})"}
                error = jsonrpc.error(
                    plain_id(request_id), INTERNAL_ERROR, "Internal error", detail
                )
                self.output.agent(error)
                return "; the agent is answered an error in its place"
            return ""
        pending = self._core.agent_requests.pop(request_id)
        if pending is None or pending.discard:
            return ""
        detail = {"details": f"the agent's answer could not be read ({reason})"}
        self.output.client(
            jsonrpc.error(pending.origin_id, INTERNAL_ERROR, "Internal error", detail)
        )
        return "; the client is answered an error in its place"

    # ----------------------------------------------------------------------------------------
    # The client

    def read_client(self, line: bytes) -> tuple[Any, bytes] | None:
        """The client's line as JSON values (and the line they were read from), or ``None``
        when it is not JSON: then it has been answered."""
        try:
            return rpc.whole(line), line
        except rpc.Unreadable as exc:
            reason = str(exc)
        fixed, count = rpc.replace_lone_surrogates(line)
        if count:
            try:
                value = rpc.whole(fixed)
            except rpc.Unreadable as exc:
                reason, line = str(exc), fixed
            else:
                self.output.note("client", _surrogates_replaced(count))
                return value, fixed
        request_id, has_method = rpc.salvage_id(line)
        answer = not has_method and request_id is not UNSET
        if answer and self._unreadable_answer(request_id, reason):
            what = f"an answer that is not JSON ({reason}): the agent is answered, no approval"
            self.output.note("client", what, "error")
            return None
        self.output.note("client", f"a line that is not JSON ({reason}): answered -32700", "error")
        known = plain_id(request_id) if request_id is not UNSET else None
        self.output.client(jsonrpc.error(known, PARSE_ERROR, "Parse error", {"details": reason}))
        return None

    def _unreadable_answer(self, request_id: Any, reason: str) -> bool:
        """The client answered a request of the agent with a line that cannot be read: the
        agent gets an answer that approves nothing. ``False``: no such request is pending."""
        pending = self._core.client_requests.pop(request_id)
        if pending is None:
            return False
        if pending.discard:
            return True
        if pending.method == "session/request_permission":
            self.bridge_output.permission_answered(
                pending, jsonrpc.result(pending.origin_id, CANCELLED_OUTCOME)
            )
            return True
        detail = {"details": f"the client's answer could not be read ({reason})"}
        self.output.agent(
            jsonrpc.error(pending.origin_id, INTERNAL_ERROR, "Internal error", detail)
        )
        return True

    def client_values(self, value: Any, line: bytes, now: float) -> None:
        """What the client's line read as: a batch, element by element, or one value."""
        if isinstance(value, list):
            if not value:  # JSON-RPC: an empty batch is one Invalid Request, id null
                self.output.client(jsonrpc.error(None, INVALID_REQUEST, "Invalid Request"))
                self.output.note("client", "an empty batch: answered -32600", "error")
            else:
                self.batch("client", value, now, line)
        else:
            self._client_value(value, line, now)

    def _client_value(self, value: Any, line: bytes, now: float) -> None:
        """One message of the client (a line) as JSON values."""
        if not isinstance(value, dict):
            self.output.client(jsonrpc.error(None, INVALID_REQUEST, "Invalid Request"))
            self.output.note(
                "client", "a JSON value that is not a message: answered -32600", "error"
            )
            return
        self._client_item(value, line, now, alone=True)

    def _client_item(self, value: dict[str, Any], line: bytes, now: float, alone: bool) -> bool:
        """One object of the client (``alone``: a line; else an element of its batch);
        ``False``: it is not a message and has no id to answer it under (answered ``-32600``,
        id null: here when ``alone``, else once for all such elements, by ``batch``)."""
        if "method" not in value and "id" not in value:
            if alone:
                self.output.client(jsonrpc.error(None, INVALID_REQUEST, "Invalid Request"))
                self.output.note("client", "a message with neither method nor id: answered -32600")
            return False
        try:
            envelope = rpc.read_envelope.decode(line)
        except msgspec.ValidationError as exc:  # e.g. "method": null or 5
            known = plain_id(value.get("id"))
            if known is None and not alone:
                return False
            self.output.client(
                jsonrpc.error(known, INVALID_REQUEST, "Invalid Request", {"details": str(exc)})
            )
            self.output.note(
                "client", f"a JSON value that is not a message ({exc}): answered -32600", "error"
            )
            return True
        self._route_client(envelope, line, now)
        return True

    # ----------------------------------------------------------------------------------------
    # Batches

    def batch(self, side: Side, items: list[Any], now: float, line: bytes = b"") -> None:
        """A batch of ``side``, element by element in array order (D16), its cost linear in
        its size (D16 amended, the module's rules; a cap's note is always kept: it is
        rate-limited already). With ``slice_batches``, in a ``from_*_lines`` call, only its
        first slice is handled here (``lines``, ``more``)."""
        steps = self._batch_slices(side, items, _repeats_by_element(line))
        if not self._core.slice_batches or self.output.line is None:
            deque(steps, maxlen=0)
            return
        for _ in steps:  # more than one slice: the rest is the edge's to ask for
            self._batch_left = steps
            return

    def _batch_slices(
        self, side: Side, items: list[Any], repeats: dict[int, tuple[Diagnostic, ...]]
    ) -> Iterator[None]:
        """``batch``'s work, pausing after each ``_SLICE`` elements (read at each element:
        the time and the outbox, which may be another call's by then)."""
        invalid = shown = hidden = 0
        for start in range(0, len(items), _SLICE):
            if start:
                yield
            chunk = items[start : start + _SLICE]
            messages = [(i, item) for i, item in enumerate(chunk, start) if type(item) is dict]
            invalid += len(chunk) - len(messages)
            for index, item in messages:
                notes = self.output.box.notes
                mark = len(notes)
                if side == "client":
                    line = msgspec.json.encode(item)
                    self.bridge_output.element_repeats = repeats.get(index, ())
                    try:
                        invalid += not self._client_item(item, line, self.output.now, alone=False)
                    finally:
                        self.bridge_output.element_repeats = ()
                else:
                    invalid += not self._agent_item(item, self.output.now)
                if len(notes) > mark:
                    new = notes[mark:]
                    del notes[mark:]
                    for note in new:
                        if note.kind == "limit" or shown < _BATCH_NOTES:
                            notes.append(note)
                            shown += note.kind != "limit"
                        else:
                            hidden += 1
        what = f"a batch of {len(items)} element(s)"
        if invalid:
            if side == "client":
                details = (
                    f"{invalid} of the {len(items)} elements of the batch are not requests "
                    "(not an object, or no method and no id): one answer for them all"
                )
                error = jsonrpc.error(
                    None, INVALID_REQUEST, "Invalid Request", {"details": details}
                )
                self.output.client(error)
                what += f": {invalid} not a message with an id; answered once -32600 (id null)"
            else:
                what += f": {invalid} not a message with an id; dropped"
        if hidden:
            what += f"; {hidden} more note(s) about its elements not shown"
        if invalid or hidden:
            self.output.note(side, what, "error")

    # ----------------------------------------------------------------------------------------
    # Lines, and batches a slice at a time

    def unfinished(self, side: Side) -> bool:
        """Whether a batch line of ``side`` is not handled whole yet (``more``)."""
        return side in self._left

    def more(self, side: Side, now: float) -> Outbox:
        """The next slice of ``side``'s unfinished batch; once it is done, the lines that came
        after it in its ``from_*_lines`` call (each note's ``line`` the index in that call)."""
        self.output.now = now
        left = self._left.pop(side, None)
        if left is None:
            return self.take()
        self.output.line = left.index
        try:
            for _ in left.steps:
                self._left[side] = left
                break
        except Exception as exc:  # a bug must cost this batch, not the others
            self.output.bug(side, exc)
        self.bridge_output.backlogs()
        self.output.line = None
        if self.unfinished(side):
            return self.take()
        return self.lines(left.handle, side, left.lines, now, left.index + 1)

    def lines(
        self,
        handle: Callable[[bytes, float], None],
        side: Side,
        lines: Sequence[bytes],
        now: float,
        first: int = 0,
    ) -> Outbox:
        self.output.now = now
        for index in range(first, len(lines)):
            self.output.line = index
            try:
                handle(lines[index], now)
            except Exception as exc:  # a bug must cost this line, not the others
                self.output.bug(side, exc)
                self._batch_left = None
            self.bridge_output.backlogs()
            if self._batch_left is not None:  # the rest is ``more``'s
                self._left[side] = _Left(self._batch_left, handle, lines, index)
                self._batch_left = None
                break
        self.output.line = None
        return self.take()

    # ----------------------------------------------------------------------------------------
    # The agent

    def read_agent(self, line: bytes) -> tuple[Any, bytes] | None:
        """The agent's line read for routing (and the line it was read from), or ``None``: not
        JSON-RPC, which ends the session, or dropped and noted."""
        try:
            return rpc.read_line.decode(line), line
        except msgspec.ValidationError as exc:  # JSON, but not a message: e.g. "method": 5
            self.agent_invalid(line, f"a line that is not a message ({exc})", INVALID_REQUEST)
            return None
        except (msgspec.DecodeError, RecursionError) as exc:
            reason = "nesting is too deep" if isinstance(exc, RecursionError) else str(exc)
        fixed, count = rpc.replace_lone_surrogates(line)
        if count:
            try:
                parsed = rpc.read_line.decode(fixed)
            except (msgspec.DecodeError, RecursionError):
                line = fixed
            else:
                self.output.note("agent", _surrogates_replaced(count))
                return parsed, fixed
        if reason == "nesting is too deep":
            self.agent_invalid(line, "a message nested too deeply to read", PARSE_ERROR)
            return None
        self._end(f"the agent wrote a line that is not JSON-RPC ({reason})")
        return None

    def agent_invalid(self, line: bytes, what: str, code: int) -> None:
        """A line of the agent the proxy cannot route: dropped, and a request answered."""
        request_id, has_method = rpc.salvage_id(line)
        answered = has_method and request_id is not UNSET
        self.output.note("agent", f"{what}: {'answered' if answered else 'dropped'}", "error")
        if answered:
            message = "Parse error" if code == PARSE_ERROR else "Invalid Request"
            self.output.agent(jsonrpc.error(plain_id(request_id), code, message, {"details": what}))

    def refused_id(self, request_id: Any, method: str, line: bytes) -> bool:
        """Whether an agent request's id is refused (``-32600``): not a string or an integer,
        or the id of a request of the agent still waiting for its answer (two answers would go
        back under one id)."""
        if type(request_id) is not str and type(request_id) is not int:
            what = f"a request whose id is {request_id!r} (ids are strings or integers)"
            self.agent_invalid(line, what, INVALID_REQUEST)
            return True
        if self._core.client_requests.forwarded_id(request_id) is UNSET:
            return False
        what = f"request {request_id!r} reuses the id of a request still waiting for its answer"
        self.output.agent(
            jsonrpc.error(request_id, INVALID_REQUEST, "Invalid Request", {"details": what})
        )
        self.output.note("agent", f"{method}: {what}: refused (-32600)", "error")
        return True

    def _agent_item(self, item: dict[str, Any], now: float) -> bool:
        """An object in the agent's batch; ``False``: not a message, and nothing answered."""
        line = msgspec.json.encode(item)
        try:
            envelope = rpc.read_envelope.decode(line)
        except msgspec.ValidationError as exc:  # e.g. "method": null
            if "method" not in item or plain_id(item.get("id")) is None:
                return False
            what = f"a batch element that is not a message ({exc})"
            self.agent_invalid(line, what, INVALID_REQUEST)
            return True
        if envelope.method is UNSET and envelope.id is UNSET:
            return False
        self.agent_message(envelope, line, now)
        return True

    def agent_message(self, envelope: rpc.Envelope, line: bytes, now: float) -> None:
        try:
            self._route_agent(envelope, line, now)
        except rpc.Unreadable as exc:  # a payload the envelope read skipped cannot be read
            what = f"a message that cannot be read ({exc})"
            if envelope.method is not UNSET and envelope.id is not UNSET:
                self.output.note("agent", f"{what}: answered -32700", "error")
                error = jsonrpc.error(plain_id(envelope.id), PARSE_ERROR, "Parse error")
                self.output.agent(error)
            elif envelope.method is UNSET and envelope.id is not UNSET:
                self.output.note("agent", f"{what}: the client is answered an error", "error")
                pending = self._core.agent_requests.pop(envelope.id)
                if pending is not None and not pending.discard:
                    detail = {"details": f"the agent's answer could not be read ({exc})"}
                    error = jsonrpc.error(
                        pending.origin_id, INTERNAL_ERROR, "Internal error", detail
                    )
                    self.output.client(error)
            else:
                self.output.note("agent", f"{what}: not forwarded", "error")


def _surrogates_replaced(count: int) -> str:
    return f"{count} unpaired UTF-16 surrogate escape(s) (half of an emoji, say) replaced by U+FFFD"


_ELEMENT = re.compile(r"\$\[(\d+)\]")


def _repeats_by_element(line: bytes) -> dict[int, tuple[Diagnostic, ...]]:
    """The keys a batch line repeats, by the element they are in (read from the raw text:
    re-encoding an element keeps only the last value of a repeated key)."""
    found: dict[int, tuple[Diagnostic, ...]] = {}
    if not line or b'"' not in line:
        return found
    for diagnostic in duplicate_keys(line):
        match = _ELEMENT.match(diagnostic.path)
        if match is not None:
            index = int(match.group(1))
            found[index] = (*found.get(index, ()), diagnostic)
    return found
