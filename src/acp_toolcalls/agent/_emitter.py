"""The agent side: tool calls reported as minimal, correct v2 patches (or v1, through the bridge).

Rules this module owns (D46 (sender obligations, the evidence rows prompt text to unfinished
calls, display state); D3, D14, D16, D20, D24, D25, D31); the emitter's parts own the rest
(``_core``: ids and the queue; ``_patches``: minimal patches; ``_throttle``: growing text;
``_terminals``; ``_asks``: permission requests; ``_turn``: how calls and turns end; ``_senders``:
what each value must be):

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
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from msgspec import UNSET, UnsetType

from .. import v2
from ..bridge import V2ToV1Bridge
from ..convert import Loss
from ..models import VersionName
from ._asks import PermissionsMixin
from ._content import text_content
from ._core import Message, Reuse, log_loss
from ._patches import CallRecord, fields_of, patch
from ._permissions import ALLOW_KINDS
from ._senders import SenderError, check_fields, check_item, check_str, encoded
from ._terminals import TerminalsMixin
from ._throttle import GrowingText, TextThrottle
from ._turn import TurnMixin

_VERSIONS = (1, 2, "v1", "v2")
"""What ``version=`` accepts; ``1``/``"v1"`` is a v1 client, ``2``/``"v2"`` a v2 one."""


class ToolCallEmitter(TurnMixin, TerminalsMixin, PermissionsMixin):
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
        self.session_id = session_id
        self.version = 1 if version in (1, "v1") else 2
        self.throttle = throttle or TextThrottle()
        self.reuse = reuse
        self.allow_kinds = frozenset(allow_kinds)
        self._bridge = (bridge or V2ToV1Bridge()) if self.version == 1 else None
        self._on_loss = on_loss or log_loss
        self._calls = {}
        self._used = set()
        self._texts = {}
        self._terminals = {}
        self._asks = {}
        self._out = []

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
        if not isinstance(title, str) or not title.strip():
            raise SenderError("title", "the first report of a tool call needs a non-empty title")
        if status in v2.FINAL_STATUSES:
            raise SenderError("status", "start a call before finishing it (use `finish`)")
        tool_call_id = self._new_id(call_id)
        fields = fields_of(
            title=title, kind=kind, status=status, name=name, content=content,
            locations=locations, raw_input=raw_input, raw_output=raw_output,
            capabilities=capabilities, meta=meta,
        )  # fmt: skip
        check_fields(fields)
        call = CallRecord(tool_call_id)
        patched = patch(call, fields)  # raises before the id is taken
        self._calls[call_id] = call
        self._used.add(tool_call_id)
        self._send_patch(call, patched)
        return self._take()

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
        if isinstance(status, str) and status in v2.FINAL_STATUSES:
            raise SenderError("status", f"{status!r} is final: use `finish`")
        call = self._get(call_id)
        fields = fields_of(
            title=title, kind=kind, status=status, name=name, content=content,
            locations=locations, raw_input=raw_input, raw_output=raw_output,
            capabilities=capabilities, meta=meta,
        )  # fmt: skip
        check_fields(fields)
        patched = patch(call, fields)  # raises before the text moves
        if content is not UNSET:
            self._texts.pop(call_id, None)
            call.text = None
        self._flush_text(call_id, call)
        self._send_patch(call, patched)
        return self._take()

    def append(self, call_id: str, item: v2.ToolCallContent) -> list[Message]:
        """Append one content item (a ``tool_call_content_chunk``): the cheap way to stream."""
        call = self._get(call_id)
        check_item(item, "content")
        key = encoded(item, "content")
        self._flush_text(call_id, call)
        self._append(call, item, key)
        return self._take()

    def grow_text(self, call_id: str, delta: str, *, now: float) -> list[Message]:
        """Add ``delta`` to the call's growing text item (opened on first use, at the end of
        its content). The first piece goes out at once as a chunk; later growth as throttled
        replacements of the whole content (see ``TextThrottle``)."""
        call = self._get(call_id)
        check_str(delta, "delta")
        encoded(delta, "delta")  # a piece JSON cannot carry would poison every later send
        text = call.text
        if text is None:
            if not delta:
                return []
            item = text_content(delta)
            call.text = GrowingText(len(call.items), delta, now)
            self._append(call, item, encoded(item, "content"))
            return self._take()
        if delta:
            if text.pending == 0:
                text.first_pending = now
            text.parts.append(delta)
            text.pending += len(delta)
            self._texts[call_id] = call
        return self.poll(now)

    def end_text(self, call_id: str) -> list[Message]:
        """Send the rest of the growing text and close it: later items come after it."""
        call = self._get(call_id)
        self._flush_text(call_id, call)
        call.text = None
        return self._take()
