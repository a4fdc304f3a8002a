"""The v2 -> v1 bridge's state: what it tracks on top of its ``ToolCallStore``, in one place.

Rules this module owns:

- The store holds the v2 state of every call and terminal; the bridge adds per call what the
  v1 client was shown (``_Call``: known, title, the v1 projection of the content, held-back
  fields) and per session the calls with held-back changes, oldest first (``_Session``).
- The store's events are absorbed here: a cap it applied is reported once, as a loss (its
  ``LimitReached``), and a terminal output the store cut or replaced drops its incremental
  renderer; the other events need nothing (a flush reads the state itself).
- A session is created in the store first (its cap may evict another one, and ours with it).

``BridgeState`` is the one object the components of ``V2ToV1Bridge`` share (each holds it;
``_to_v1``'s docstring says which component does what), and the one place of the per-session
state (``forget_session`` drops it all): the components hold only the forwarded permission
requests (``Permissions``, forgotten with their session) and what one flush passes on
(``Projection``).
"""

from __future__ import annotations

from typing import Any, Literal

from .. import v1
from ..convert import Loss, Losses, LossReport, rooted
from ..events import (
    ContentAppended,
    DiagnosticReported,
    LimitReached,
    TerminalCleared,
    TerminalCreated,
    TerminalOutputAppended,
    TerminalPatched,
    ToolCallCleared,
    ToolCallCreated,
    ToolCallPatched,
    ToolCallReopened,
)
from ..store import ToolCallState, ToolCallStore
from ..v2 import FINAL_STATUSES
from ._disk_diffs import MAX_ROOTED_SESSIONS, ReadFile, disk_diff_to_v1, normal_roots
from ._terminal_text import TailRenderer

TerminalProfile = Literal["text", "meta", "meta_delta"]
"""How a v1 client is shown a v2 terminal: ``text``, a fenced transcript in the content;
``meta``, the ``_meta`` terminal extension with output appended by ``terminal_output``
(the Zed convention); ``meta_delta``, the same with ``terminal_output_delta``."""
TERMINAL_PROFILES: tuple[str, ...] = ("text", "meta", "meta_delta")

FAST_PATHS = True
"""Whether the common shapes take their fast paths (tests turn them off to compare: the
output is the same either way)."""
_QUIET_EVENTS = frozenset(
    {ToolCallCreated, ToolCallPatched, ToolCallCleared, ContentAppended, ToolCallReopened}
    | {TerminalCreated, TerminalPatched, TerminalCleared, TerminalOutputAppended}
)
"""Store events that need nothing from the bridge (the flush reads the state itself)."""


class _Call:
    """What the bridge tracks for one tool call on top of the store."""

    __slots__ = (
        "content_dirty",
        "count",
        "cut_at",
        "flat",
        "ghost",
        "known",
        "meta_dirty",
        "meta_sent",
        "pending",
        "prompt",
        "slots",
        "source",
        "source_dropped",
        "terminals",
        "title",
        "title_fallback",
        "wide",
    )

    def __init__(self) -> None:
        self.known = False  # the v1 client has seen a `tool_call` for it
        self.title: str | None = None  # what the v1 client displays
        self.title_fallback: str | None = None  # a permission title seen first (D10)
        self.pending: dict[str, Any] = {}  # attribute name -> latest v2 value, not yet sent
        self.content_dirty = False
        self.meta_dirty = False
        self.source: list[Any] | None = None  # the store's content list last projected
        self.source_dropped = 0
        self.count = 0  # v2 items projected so far
        self.flat: list[Any] = []  # their v1 items, a `None` slot where a terminal renders
        self.slots: list[tuple[int, str]] = []  # (index in `flat`, terminal id)
        self.terminals: set[str] = set()
        self.prompt: _Overlay | None = None  # a permission prompt shown on the call
        self.cut_at = 0  # where in `flat` the items a cap dropped were
        self.meta_sent: Any = None  # the `_meta` the v1 client was last sent
        self.ghost = False  # the store holds no state for it (evicted, or a synthetic call)
        self.wide = 0  # 3 x the characters of texts read from disk in `flat` (line fitting)


class _Overlay:
    """A permission prompt shown on a call the v1 client shows, until its answer."""

    __slots__ = ("items", "items_shown", "open", "title")

    def __init__(self, title: str, items: list[Any]) -> None:
        self.title = title  # shown instead of the call's own title
        self.items = items  # shown ahead of the call's own content
        self.items_shown = bool(items)  # the client was shown prompt items in the content
        self.open = 1  # prompts shown on the call and not answered yet


class _Session:
    __slots__ = ("calls", "order", "readers")

    def __init__(self) -> None:
        self.calls: dict[str, _Call] = {}
        self.order: dict[str, None] = {}  # calls with pending changes, oldest first
        self.readers: dict[str, set[str]] = {}  # terminal id -> calls whose content shows it


UPDATE_PATH = "$.params.update"
"""Where a ``session/update`` holds the update whose losses a flush reports."""
SUBJECT_PATH = "$.params.subject.toolCall"
"""Where a permission request holds the update its subject is (D46 (permissions))."""


class BridgeState:
    """What every component of ``V2ToV1Bridge`` shares: the options they read, the store, the
    per-session tables, the outputs of the message being converted; and the helpers that only
    touch these. One per bridge."""

    __slots__ = (
        "coalesce",
        "compaction",
        "compactions",
        "dirty",
        "ghosts",
        "losses",
        "max_message_bytes",
        "messages_shown",
        "notices",
        "out",
        "prompts_end_on_update",
        "read_file",
        "rendered",
        "replies",
        "roots",
        "sessions",
        "store",
        "streams",
        "tail_chars",
        "terminal_profile",
        "texts",
        "update_path",
    )

    def __init__(
        self,
        store: ToolCallStore,
        *,
        coalesce: bool,
        prompts_end_on_update: bool,
        terminal_profile: TerminalProfile,
        tail_chars: int,
        notices: bool,
        compaction: bool,
        max_message_bytes: int,
        read_file: ReadFile | None,
    ) -> None:
        self.store = store
        self.coalesce = coalesce
        # A prompt shown on a call ends at the call's next update (a log converted after the
        # fact, which may hold no answer), not only at its answer.
        self.prompts_end_on_update = prompts_end_on_update
        self.terminal_profile: TerminalProfile = terminal_profile
        self.tail_chars = tail_chars
        # What the v1 client advertised (`session.notices`, `session.compaction`, D30).
        self.notices = notices
        self.compaction = compaction
        self.max_message_bytes = max_message_bytes
        self.read_file = read_file  # what reads a file for a diff's texts (D27 amended)
        self.sessions: dict[str, _Session] = {}
        self.dirty: dict[str, None] = {}  # sessions with changes held back
        self.ghosts: dict[tuple[str, str], None] = {}  # calls shown, not held by the store
        # (session, compaction id) -> its merged `_meta`, most recently updated last
        self.compactions: dict[tuple[str, str], dict[str, Any]] = {}
        # (session, message id) of session messages shown as agent message text, oldest first
        self.messages_shown: dict[tuple[str, Any], None] = {}
        self.roots: dict[str, tuple[str, ...]] = {}  # session -> its directories (newest last)
        # (session, terminal id) -> its rendering: a v1 item, or `None` (the text profile)
        self.rendered: dict[tuple[str, str], Any] = {}
        # (session, terminal id) -> what renders its output's tail as it grows
        self.texts: dict[tuple[str, str], TailRenderer] = {}
        # (session, terminal id) -> what the `_meta` terminal extension has sent of it
        self.streams: dict[tuple[str, str], Any] = {}
        # The outputs of the message being converted (taken as one `Converted`).
        self.out: list[Any] = []
        self.replies: list[Any] = []
        self.losses: list[Loss] = []
        # Where a call's update is in the message being converted, for the losses a flush
        # finds: a `session/update`'s update, or a permission request's subject.
        self.update_path = UPDATE_PATH

    def set_roots(self, session_id: str, cwd: Any, additional_directories: Any = None) -> None:
        """The session's directories, from the params the client set it up with (``cwd``,
        ``additionalDirectories``): diffs of files under them are rebuilt from disk."""
        roots = self.roots
        roots.pop(session_id, None)
        roots[session_id] = normal_roots(cwd, additional_directories)
        if len(roots) > MAX_ROOTED_SESSIONS:
            del roots[next(iter(roots))]

    def diff_to_v1(self, session_id: str, call: _Call, item: Any, path: str) -> list[Any]:
        """A v2 diff item of a call as v1 items, its texts rebuilt from disk where it can be
        (``_disk_diffs``); its losses reported."""
        losses = Losses(False)
        out = disk_diff_to_v1(item, path, losses, self.roots.get(session_id), self.read_file)
        if losses.found:
            self.extend(losses.report(), self.update_path)
        for converted in out:  # texts read from disk (an add's or a delete's is the patch's)
            if type(converted) is v1.Diff and converted.new_text:
                old = converted.old_text
                if isinstance(old, str):
                    call.wide += 3 * (len(converted.new_text) + len(old))
        return out

    def loss(self, path: str, reason: str) -> None:
        self.losses.append(Loss(path, reason))

    def extend(self, losses: LossReport, root: str) -> None:
        """Losses of a mapping (rooted at what it mapped) as paths into the message."""
        for loss in losses:
            self.losses.append(Loss(rooted(loss.path, root), loss.reason, loss.code))

    def extend_once(self, losses: LossReport, root: str) -> None:
        """``extend``, leaving out a loss this message already reported."""
        reported = set(self.losses)
        for loss in losses:
            rooted_loss = Loss(rooted(loss.path, root), loss.reason, loss.code)
            if rooted_loss not in reported:
                self.losses.append(rooted_loss)

    def apply(self, message: Any) -> None:
        self.absorb(self.store.apply(message))

    def apply_update(self, session_id: str, update: Any) -> None:
        self.absorb(self.store.apply_update(session_id, update))

    def absorb(self, events: list[Any]) -> None:
        for event in events:
            if type(event) in _QUIET_EVENTS:
                continue
            if isinstance(event, DiagnosticReported):
                if event.kind != "limit":  # a cap is reported once, by its LimitReached
                    self.loss(event.path, event.reason)
            elif isinstance(event, LimitReached):
                self.loss(f"$.{event.limit}", f"{event.subject}: {event.detail}")
                self.texts.pop((event.session_id, event.subject), None)  # output cut, maybe
            elif isinstance(event, (TerminalPatched, TerminalCleared)) and "output" in event.fields:
                self.texts.pop((event.session_id, event.terminal_id), None)  # output replaced

    def session(self, session_id: str) -> _Session:
        session = self.sessions.get(session_id)
        if session is None:
            # The store's session comes first (its cap may evict another one, and ours with it).
            self.absorb(self.store.touch(session_id))
            session = self.sessions[session_id] = _Session()
        return session

    def call(self, session: _Session, tool_call_id: str) -> _Call:
        call = session.calls.get(tool_call_id)
        if call is None:
            call = session.calls[tool_call_id] = _Call()
        return call

    def emit_update(self, session_id: str, update: Any) -> None:
        self.out.append(_notification(session_id, update))

    def forget_session(self, session_id: str) -> None:
        """Forget everything about the session (its store state included)."""
        self.sessions.pop(session_id, None)
        self.dirty.pop(session_id, None)
        self.roots.pop(session_id, None)
        self.store.drop_session(session_id)
        self.ghosts = {key: None for key in self.ghosts if key[0] != session_id}
        self.compactions = {k: v for k, v in self.compactions.items() if k[0] != session_id}
        self.messages_shown = {k: None for k in self.messages_shown if k[0] != session_id}
        self.forget_terminals(session_id)

    def forget_terminal(self, session_id: str, terminal_id: str) -> None:
        """Drop the terminal's rendering, renderer and extension stream (it is gone)."""
        key = (session_id, terminal_id)
        self.rendered.pop(key, None)
        self.texts.pop(key, None)
        self.streams.pop(key, None)

    def forget_terminals(self, session_id: str) -> None:
        """Drop the renderings, renderers and extension streams of the session's terminals."""
        self.rendered = {k: v for k, v in self.rendered.items() if k[0] != session_id}
        self.texts = {k: v for k, v in self.texts.items() if k[0] != session_id}
        self.streams = {k: v for k, v in self.streams.items() if k[0] != session_id}


def _final(tc: ToolCallState) -> bool:
    """``tc.is_final``, without its two properties."""
    status = tc.fields.get("status")
    return isinstance(status, str) and status in FINAL_STATUSES


def _text_item(text: str) -> v1.Content:
    return v1.Content(content=v1.TextContent(text=text))


def _notification(session_id: str, update: Any) -> v1.SessionUpdateMessage:
    return v1.SessionUpdateMessage(
        params=v1.SessionNotification(session_id=session_id, update=update)
    )
