"""The agent side: tool calls reported as minimal, correct v2 patches (or v1, through the bridge).

Rules this module owns (D46 (sender obligations, the evidence rows prompt text to unfinished
calls, display state); D3, D14, D16, D20, D24, D25, D31); the emitter's parts own the rest
(``_core``: its state, ids and the queue; ``_patches``: minimal patches; ``_throttle``: growing
text; ``_terminals``; ``_asks``: permission requests; ``_turn``: how calls and turns end;
``_senders``: what each value must be):

- ``ToolCallEmitter`` is per session and sans-I/O: each method returns the messages to send,
  in order; the caller sends them. Time exists only as the ``now`` the caller passes.
- It remembers what the client holds for each field and sends only what changes: an omitted
  argument is unchanged, ``None`` clears, and a call with nothing to send sends nothing.
- The first report of a call always has a non-empty ``title`` (and ``name`` when known; a later
  change of ``name`` is logged, D31), and no final status (``finish`` gives that). Values it
  originates are checked before anything is sent; a call that raises ``SenderError`` changes
  nothing.
- Growing text (one text item whose text grows, e.g. streamed arguments or output) goes out as a
  chunk first, then as throttled whole-content replacements (``TextThrottle``); pending text is
  flushed before any other message about the call, before a permission request, on finish, on
  ``flush()`` and at the turn's end; ``poll(now)`` sends what is due.
- One word for versions: ``version`` is ``2``/``"v2"`` (the default, ``None``) or
  ``1``/``"v1"``, which sends everything through a ``V2ToV1Bridge``: the same calls produce v1
  messages, and v1 answers to permission requests are read back as v2.

Theory of operation: ``ToolCallEmitter`` holds one ``EmitterState`` (``_core``) and the parts
that work on it, ``Terminals``, ``Asks`` and ``CallEndings``; it has the public API (every method's
signature and docstring), reports tool calls itself and hands the rest to its parts, the
arguments as the fields given (``fields_of``: an omitted one is left out).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from typing import Any

from msgspec import UNSET, UnsetType

from .. import v2
from ..bridge import V2ToV1Bridge
from ..convert import Loss
from ..models import VersionName
from ._asks import Asks, PermissionAsk
from ._content import text_content
from ._core import EmitterState, Message, Reuse, log_loss
from ._patches import CallRecord, fields_of, patch
from ._permissions import ALLOW_KINDS, DEFAULT_OPTIONS, PermissionAnswer
from ._senders import SenderError, check_fields, check_item, check_str, encoded
from ._terminals import Terminals
from ._throttle import GrowingText, TextThrottle
from ._turn import CallEndings

_VERSIONS = (1, 2, "v1", "v2")
"""What ``version=`` accepts; ``1``/``"v1"`` is a v1 client, ``2``/``"v2"`` a v2 one."""


class ToolCallEmitter:
    """Tool calls and terminals of one session, as minimal v2 patches (or v1 via the bridge).

    Methods return lists of typed messages (``acp_toolcalls.encode`` writes them); nothing is
    sent by the emitter itself. See the module docstrings for every rule it enforces.
    """

    def __init__(
        self,
        session_id: str,
        *,
        version: int | VersionName | None = None,
        throttle: TextThrottle | None = None,
        reuse: Reuse = "namespace",
        bridge: V2ToV1Bridge | None = None,
        allow_kinds: Iterable[str] = ALLOW_KINDS,
        on_loss: Callable[[Loss], None] | None = None,
    ) -> None:
        if not isinstance(session_id, str) or not session_id:
            raise SenderError("sessionId", "must be a non-empty string")
        if version is None:
            version = 2
        if version not in _VERSIONS:
            raise ValueError(f"unsupported protocol version {version!r}")
        if reuse not in ("namespace", "refuse"):
            raise ValueError(f"reuse must be 'namespace' or 'refuse', not {reuse!r}")
        self.version = 1 if version in (1, "v1") else 2
        self._state = state = EmitterState(
            session_id,
            throttle or TextThrottle(),
            reuse,
            frozenset(allow_kinds),
            (bridge or V2ToV1Bridge()) if self.version == 1 else None,
            on_loss or log_loss,
        )
        self._terminals = Terminals(state)
        self._asks = Asks(state)
        self._endings = CallEndings(state)

    # The options, held by the state its parts read.

    @property
    def session_id(self) -> str:
        """The session every message is about (``sessionId``)."""
        return self._state.session_id

    @session_id.setter
    def session_id(self, value: str) -> None:
        self._state.session_id = value

    @property
    def throttle(self) -> TextThrottle:
        """When growing text is sent again (``TextThrottle``)."""
        return self._state.throttle

    @throttle.setter
    def throttle(self, value: TextThrottle) -> None:
        self._state.throttle = value

    @property
    def reuse(self) -> Reuse:
        """What ``start`` does with the id of a finished call: ``namespace`` or ``refuse``."""
        return self._state.reuse

    @reuse.setter
    def reuse(self, value: Reuse) -> None:
        self._state.reuse = value

    @property
    def allow_kinds(self) -> frozenset[str]:
        """The option kinds ``answer`` reads as approving."""
        return self._state.allow_kinds

    @allow_kinds.setter
    def allow_kinds(self, value: frozenset[str]) -> None:
        self._state.allow_kinds = value

    # ----------------------------------------------------------------------------------------
    # Calls, and what is pending

    def tool_call_id(self, call_id: str) -> str:
        """The ``toolCallId`` the client knows the caller's ``call_id`` by."""
        return self._state.tool_call_id(call_id)

    def is_open(self, call_id: str) -> bool:
        """Whether ``call_id`` was started and has not reached a final status."""
        return self._state.is_open(call_id)

    def open_calls(self) -> list[str]:
        """The caller's ids of every started call without a final status, in start order."""
        return self._state.open_calls()

    def poll(self, now: float) -> list[Message]:
        """Send the growing texts that are due at ``now``."""
        return self._state.poll(now)

    def next_deadline(self) -> float | None:
        """When ``poll`` next has something to send (``None``: nothing is pending)."""
        return self._state.next_deadline()

    def flush(self) -> list[Message]:
        """Send every pending growing text now (and what a coalescing bridge holds)."""
        return self._state.flush()

    # ----------------------------------------------------------------------------------------
    # Tool calls

    def start(
        self,
        call_id: str,
        *,
        title: str,
        kind: str | UnsetType = UNSET,
        status: str = "pending",
        name: str | UnsetType = UNSET,
        content: list[v2.ToolCallContent] | UnsetType = UNSET,
        locations: list[v2.ToolCallLocation] | UnsetType = UNSET,
        raw_input: Any = UNSET,
        raw_output: Any = UNSET,
        capabilities: v2.ToolCallCapabilities | UnsetType = UNSET,
        meta: dict[str, Any] | UnsetType = UNSET,
    ) -> list[Message]:
        """Report a new tool call; ``title`` is required and non-empty."""
        state = self._state
        if not isinstance(title, str) or not title.strip():
            raise SenderError("title", "the first report of a tool call needs a non-empty title")
        if status in v2.FINAL_STATUSES:
            raise SenderError("status", "start a call before finishing it (use `finish`)")
        tool_call_id = state.new_id(call_id)
        fields = fields_of(
            title=title, kind=kind, status=status, name=name, content=content,
            locations=locations, raw_input=raw_input, raw_output=raw_output,
            capabilities=capabilities, meta=meta,
        )  # fmt: skip
        check_fields(fields)
        call = CallRecord(tool_call_id)
        patched = patch(call, fields)  # raises before the id is taken
        state.calls[call_id] = call
        state.used.add(tool_call_id)
        state.send_patch(call, patched)
        return state.take()

    def update(
        self,
        call_id: str,
        *,
        title: str | UnsetType | None = UNSET,
        kind: str | UnsetType | None = UNSET,
        status: str | UnsetType | None = UNSET,
        name: str | UnsetType | None = UNSET,
        content: list[v2.ToolCallContent] | UnsetType | None = UNSET,
        locations: list[v2.ToolCallLocation] | UnsetType | None = UNSET,
        raw_input: Any = UNSET,
        raw_output: Any = UNSET,
        capabilities: v2.ToolCallCapabilities | UnsetType | None = UNSET,
        meta: dict[str, Any] | UnsetType | None = UNSET,
    ) -> list[Message]:
        """Patch an open call: an omitted argument is unchanged, ``None`` clears.

        A final ``status`` is ``finish``'s job; ``content`` replaces the whole list (and closes
        an open growing text, whose unsent part is dropped).
        """
        state = self._state
        if isinstance(status, str) and status in v2.FINAL_STATUSES:
            raise SenderError("status", f"{status!r} is final: use `finish`")
        call = state.get(call_id)
        fields = fields_of(
            title=title, kind=kind, status=status, name=name, content=content,
            locations=locations, raw_input=raw_input, raw_output=raw_output,
            capabilities=capabilities, meta=meta,
        )  # fmt: skip
        check_fields(fields)
        patched = patch(call, fields)  # raises before the text moves
        if content is not UNSET:
            state.texts.pop(call_id, None)
            call.text = None
        state.flush_text(call_id, call)
        state.send_patch(call, patched)
        return state.take()

    def append(self, call_id: str, item: v2.ToolCallContent) -> list[Message]:
        """Append one content item (a ``tool_call_content_chunk``): the cheap way to stream."""
        state = self._state
        call = state.get(call_id)
        check_item(item, "content")
        key = encoded(item, "content")
        state.flush_text(call_id, call)
        state.append(call, item, key)
        return state.take()

    def grow_text(self, call_id: str, delta: str, *, now: float) -> list[Message]:
        """Add ``delta`` to the call's growing text item (opened on first use, at the end of
        its content). The first piece goes out at once as a chunk; later growth as throttled
        replacements of the whole content (see ``TextThrottle``)."""
        state = self._state
        call = state.get(call_id)
        check_str(delta, "delta")
        encoded(delta, "delta")  # a piece JSON cannot carry would poison every later send
        text = call.text
        if text is None:
            if not delta:
                return []
            item = text_content(delta)
            call.text = GrowingText(len(call.items), delta, now)
            state.append(call, item, encoded(item, "content"))
            return state.take()
        if delta:
            if text.pending == 0:
                text.first_pending = now
            text.parts.append(delta)
            text.pending += len(delta)
            state.texts[call_id] = call
        return state.poll(now)

    def end_text(self, call_id: str) -> list[Message]:
        """Send the rest of the growing text and close it: later items come after it."""
        state = self._state
        call = state.get(call_id)
        state.flush_text(call_id, call)
        call.text = None
        return state.take()

    # ----------------------------------------------------------------------------------------
    # How calls and turns end (``CallEndings``)

    def finish(
        self,
        call_id: str,
        status: str = "completed",
        *,
        title: str | UnsetType | None = UNSET,
        content: list[v2.ToolCallContent] | UnsetType | None = UNSET,
        locations: list[v2.ToolCallLocation] | UnsetType | None = UNSET,
        raw_output: Any = UNSET,
        meta: dict[str, Any] | UnsetType | None = UNSET,
    ) -> list[Message]:
        """Give the call its final status (``completed``, ``failed`` or ``cancelled``).

        Pending text is flushed first; an advertised ``cancel`` capability is withdrawn. The
        call takes no more updates; its id can be started again as a new call.
        """
        fields = fields_of(
            title=title, content=content, locations=locations, raw_output=raw_output, meta=meta,
            status=status,
        )  # fmt: skip
        return self._endings.finish(call_id, status, fields)

    def finish_open(
        self, status: str, *, background: Iterable[str] = (), bug: bool = False
    ) -> list[Message]:
        """Finish every open call with ``status``, except the caller's ids in ``background``.

        ``bug=True`` logs each call as an agent bug (it should have been finished already).
        """
        return self._endings.finish_open(status, background, bug)

    def end_turn(
        self,
        stop_reason: str = "end_turn",
        *,
        background: Iterable[str] = (),
        background_terminals: Iterable[str] = (),
    ) -> list[Message]:
        """Close the turn: open calls get ``cancelled`` (if the turn was cancelled) or
        ``failed`` (logged as an agent bug), then a v2 idle ``state_update`` with the stop reason.

        ``background``/``background_terminals`` list work that outlives the turn; when given,
        the idle update reports it (an agent that reports background work must always do so).
        """
        return self._endings.end_turn(stop_reason, background, background_terminals)

    # ----------------------------------------------------------------------------------------
    # Terminals (``Terminals``)

    def start_terminal(
        self,
        terminal_id: str,
        *,
        command: str | UnsetType = UNSET,
        cwd: str | UnsetType = UNSET,
        size: v2.TerminalSize | UnsetType = UNSET,
        meta: dict[str, Any] | UnsetType = UNSET,
    ) -> list[Message]:
        """Announce a display terminal; show it in a call with ``v2.Terminal(terminal_id=...)``."""
        return self._terminals.start(terminal_id, command, cwd, size, meta)

    def terminal_output(self, terminal_id: str, data: bytes) -> list[Message]:
        """Append output bytes (a ``terminal_output_chunk``, base64-encoded on its own)."""
        return self._terminals.output(terminal_id, data)

    def exit_terminal(
        self, terminal_id: str, *, exit_code: int | None = None, signal: str | None = None
    ) -> list[Message]:
        """Report the terminal's process exit; the terminal takes no more output."""
        return self._terminals.exit(terminal_id, exit_code, signal)

    # ----------------------------------------------------------------------------------------
    # Permission requests (``Asks``)

    def request_permission(
        self,
        call_id: str,
        *,
        request_id: int | str,
        title: str,
        description: str | UnsetType = UNSET,
        options: Sequence[v2.PermissionOption | tuple[str, str, str]] = DEFAULT_OPTIONS,
        subject_meta: dict[str, Any] | UnsetType = UNSET,
        kind: str | UnsetType | None = UNSET,
        status: str | UnsetType | None = UNSET,
        content: list[v2.ToolCallContent] | UnsetType | None = UNSET,
        locations: list[v2.ToolCallLocation] | UnsetType | None = UNSET,
        raw_input: Any = UNSET,
        meta: dict[str, Any] | UnsetType | None = UNSET,
    ) -> PermissionAsk:
        """Ask permission for an open call. ``title``/``description`` are the prompt's text;
        the tool-call fields, if any, are the call's own state, sent as the subject's patch.

        Pending text is flushed first. Read the answer with ``answer``.
        """
        fields = fields_of(
            kind=kind, status=status, content=content, locations=locations,
            raw_input=raw_input, meta=meta,
        )  # fmt: skip
        return self._asks.request(
            call_id, request_id, title, description, options, subject_meta, fields
        )

    def request_command_permission(
        self,
        *,
        request_id: int | str,
        title: str,
        command: v2.CommandPermissionSubject,
        description: str | UnsetType = UNSET,
        options: Sequence[v2.PermissionOption | tuple[str, str, str]] = DEFAULT_OPTIONS,
    ) -> PermissionAsk:
        """Ask permission to run a command (a subject from ``command_subject``)."""
        return self._asks.request_command(request_id, title, command, description, options)

    def answer(self, response: Any) -> PermissionAnswer:
        """Read the client's JSON-RPC response to a request of ``request_permission``.

        A v1 client's answer is mapped to v2 first; what gives the v1 client's card back its
        own title and content after the prompt is queued and goes out first with the next
        messages (``flush()`` sends it at once). Raises ``KeyError`` for a response to no open
        request (already answered, or abandoned with ``abandon``).
        """
        return self._asks.answer(response)

    def abandon(self, request_id: int | str) -> PermissionAnswer:
        """Stop waiting for an answer (after ``session/cancel``): not approved; a late answer
        is then ignored (``answer`` raises ``KeyError`` for it). For a v1 client, what gives
        its card back its own title and content is queued and goes out with the next messages
        (``flush()`` sends it at once). Withdrawing the request from the client
        (``$/cancel_request``) is the transport's: it knows the id the request went out
        under (the official SDK sends it when the awaiting task is cancelled)."""
        return self._asks.abandon(request_id)
