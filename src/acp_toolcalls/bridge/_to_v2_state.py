"""What ``V1ToV2Bridge`` remembers of each session, and what a v2 client holds of each call.

Rules this module owns (D20, D37; issue 26, items 6 and 7):

- Per session: the ids the v2 client was sent an update about, a digest of each field it holds
  of each call (what a permission subject is compared with, D37), titles (their first 1,024
  characters), final statuses (id reuse, D20), the message being streamed, the content each
  call holds (``contents``: its item count and a chained digest of its items), and the
  display terminals of the ``_meta`` terminal extension (``convert.TerminalReader``).
- What a v1 agent resends costs the client only what it adds: a v1 update whose content begins
  with every item the client holds of the call (by digest, item by item) is sent as a
  ``tool_call_content_chunk`` per new item, or not at all when it adds none (a v2 chunk
  appends one item: the client folds to exactly the content the v1 update set). Content that
  differs in an item it holds (a text that grew, say) replaces: v2 has no append inside an
  item. A call whose content the client never got is sent whole.
- Memory is bounded by ``Limits``: at most ``max_tool_calls`` calls per session (the oldest
  forgotten first), ``max_sessions`` sessions (the least recently used first), about
  ``max_store_bytes`` in all (``_CALL_BYTES`` a call, ``convert.TERMINAL_BYTES`` a terminal);
  every cap that bites is reported as a loss.
"""

from __future__ import annotations

from typing import Any

from msgspec import UNSET

from .. import v2
from ..codec import canonical_json
from ..convert import Loss, TerminalReader
from ..models import TOOL_CALL_FIELDS
from ..store import Limits, trim_block

_FORGOTTEN = (
    "their titles for permission prompts, what the client holds of them, id-reuse reports, and "
    "that a later `tool_call` of one merges"
)
_TITLE_KEPT = 1_024
"""Characters of a call's title remembered for a permission prompt that has none (D37)."""

HELD_FIELDS = tuple(f.attr for f in TOOL_CALL_FIELDS if f.attr != "meta")
"""The fields a permission subject sends only when they differ from what the client holds:
every patch field of the model but ``_meta`` (issue 28)."""

_CALL_BYTES = 400
"""What the bridge keeps per call (its id in four tables, a digest per field sent), about, in
bytes; a title it keeps counts a byte a character more."""


def digest(value: Any) -> int:
    """A value's fingerprint (equal wire values, equal fingerprints): what the bridge keeps of
    what the client holds, instead of the value."""
    if value is None or type(value) is str:
        return hash((type(value), value))
    return hash(canonical_json(value))


Chain = tuple[int, int]
"""What the bridge keeps of a call's content: its item count and a chained digest of its
items (each link ``hash((previous, item_digest(item)))``)."""


def item_digest(item: Any) -> int:
    """``digest`` of one content item; a plain text item (the bulk of streamed output) by its
    text alone, without encoding it."""
    if type(item) is _CONTENT and item.meta is UNSET:
        block = item.content
        if type(block) is _TEXT and block.annotations is UNSET and block.meta is UNSET:
            return hash(block.text)
    return digest(item)


_CONTENT, _TEXT = v2.Content, v2.TextContent


def content_chain(items: list[Any]) -> Chain:
    chain = 0
    for item in items:
        chain = hash((chain, item_digest(item)))
    return len(items), chain


def content_digest(items: list[Any]) -> int:
    """The digest of a content field: its chain's, so that both compare alike."""
    return hash(content_chain(items))


def appended(items: list[Any], held: Chain | None) -> tuple[Chain, list[Any] | None]:
    """The chain of ``items``, and the items after the ones the client holds (``held``) when
    ``items`` begins with all of them (``[]``: none new); ``None`` when it does not (or the
    client holds no content of the call): ``items`` must replace."""
    count = len(items)
    kept, kept_chain = held if held is not None else (-1, 0)
    prefix = kept == 0 and kept_chain == 0  # (the chain of no items is 0)
    chain = 0
    for index in range(count):
        if index == kept:
            prefix = chain == kept_chain
        chain = hash((chain, item_digest(items[index])))
    if count == kept:
        prefix = chain == kept_chain
    return (count, chain), (items[kept:] if prefix and kept >= 0 else None)


class Session:
    __slots__ = (
        "bytes",
        "contents",
        "final",
        "held",
        "message",
        "seen",
        "terminals",
        "titles",
        "touched",
    )

    def __init__(self) -> None:
        self.seen: dict[str, None] = {}  # ids the v2 client was sent an update about
        self.held: dict[str, dict[str, int]] = {}  # id -> field -> digest of what it holds
        self.contents: dict[str, Chain] = {}  # id -> the content it holds (count, chain)
        self.titles: dict[str, str] = {}
        self.final: dict[str, None] = {}  # ids whose last status was final, oldest first
        self.message: tuple[str, str] | None = None  # (chunk kind, messageId) being streamed
        self.terminals: TerminalReader | None = None  # the `_meta` extension's, once used
        self.touched = 0  # when the bridge last switched to this session
        self.bytes = 0  # what the tables above hold, about (`_CALL_BYTES`)


class SessionTables:
    """The sessions of a ``V1ToV2Bridge``, what the client holds of their calls, the caps (the
    bridge holds one; a cap that bites appends its loss to ``losses``, the bridge's list)."""

    def __init__(self, limits: Limits | None, losses: list[Loss]) -> None:
        self.limits = limits if limits is not None else Limits()
        self.sessions: dict[str, Session] = {}
        self.bytes = 0  # what all sessions keep, about
        self._current: Session | None = None
        self._switches = 0
        self.losses = losses

    def session(self, session_id: str) -> Session:
        """The session's tables, made when new (the least recently used go past the cap)."""
        session = self.sessions.get(session_id)
        if session is None:
            session = self.sessions[session_id] = Session()
            cap = self.limits.max_sessions
            if cap is not None and len(self.sessions) > cap:
                self._evict_sessions(session, cap)
        if session is not self._current:
            self._switches += 1
            session.touched = self._switches
            self._current = session
        return session

    def close(self, session_id: str) -> None:
        """Forget the session."""
        session = self.sessions.pop(session_id, None)
        if session is not None:
            self.bytes -= session.bytes
            if session is self._current:
                self._current = None

    def reader(self, session: Session) -> TerminalReader:
        reader = session.terminals
        if reader is None:
            reader = session.terminals = TerminalReader(self.limits.max_terminals)
        return reader

    def grown(self, session: Session, grown: int) -> None:
        """``session`` keeps ``grown`` bytes more (a terminal of the extension, say)."""
        session.bytes += grown
        self.bytes += grown
        budget = self.limits.max_store_bytes
        if budget is not None and self.bytes > budget:
            self._over_budget(session, budget)

    def _evict_sessions(self, new: Session, cap: int) -> None:
        others = [(s.touched, sid) for sid, s in self.sessions.items() if s is not new]
        others.sort()
        victims = [sid for _, sid in others[: trim_block(cap)]]
        for sid in victims:
            self.bytes -= self.sessions.pop(sid).bytes
        self.losses.append(
            Loss(
                "$.max_sessions",
                f"forgot {len(victims)} least recently used session(s) (cap {cap}): their "
                "tool-call titles and final statuses",
            )
        )

    def remember(
        self,
        session_id: str,
        session: Session,
        update: v2.ToolCallUpdate,
        values: dict[str, Any] | None = None,
        *,
        content_held: bool = False,
    ) -> None:
        """Note what the client now holds of the call (``values``: the fields ``update`` sets,
        by attribute name, when the caller has them; ``content_held``: its content is noted
        already, ``hold_content``)."""
        tool_call_id = update.tool_call_id
        grown = 0
        if tool_call_id not in session.seen:
            session.seen[tool_call_id] = None
            grown = _CALL_BYTES
        held = session.held.setdefault(tool_call_id, {})
        if values is None:
            values = {
                name: value for name in HELD_FIELDS if (value := getattr(update, name)) is not UNSET
            }
        for name, value in values.items():
            if name == "content":
                if content_held:
                    continue
                if value is None:  # (a v2 clear: the client holds no content)
                    session.contents.pop(tool_call_id, None)
                    held[name] = digest(value)
                else:
                    chain = session.contents[tool_call_id] = content_chain(value)
                    held[name] = hash(chain)
            elif name != "meta":
                held[name] = digest(value)
        if isinstance(update.title, str) and update.title:
            kept = update.title[:_TITLE_KEPT]
            grown += len(kept) - len(session.titles.get(tool_call_id, ""))
            session.titles[tool_call_id] = kept
        session.bytes += grown
        self.bytes += grown
        if isinstance(update.status, str):
            if update.status in v2.FINAL_STATUSES:
                session.final[tool_call_id] = None
            else:
                session.final.pop(tool_call_id, None)
        cap = self.limits.max_tool_calls
        if cap is not None and len(session.seen) > cap:  # a block at a time: amortised O(1)
            count = len(session.seen) - cap + trim_block(cap) - 1
            self._forget_calls(session, count)
            self.losses.append(
                Loss(
                    "$.max_tool_calls",
                    f"{session_id}: forgot the {count} oldest tool-call id(s) (cap {cap} per "
                    f"session): {_FORGOTTEN}",
                )
            )
        budget = self.limits.max_store_bytes
        if budget is not None and self.bytes > budget:
            self._over_budget(session, budget)

    def hold_content(self, session: Session, tool_call_id: str, chain: Chain) -> None:
        """The client holds content ``chain`` of the call now (sent as chunks, or unchanged)."""
        session.contents[tool_call_id] = chain
        session.held.setdefault(tool_call_id, {})["content"] = hash(chain)

    def _forget_calls(self, session: Session, count: int) -> None:
        """Forget the session's ``count`` oldest calls."""
        for tool_call_id in list(session.seen)[:count]:
            del session.seen[tool_call_id]
            session.held.pop(tool_call_id, None)
            session.contents.pop(tool_call_id, None)
            session.titles.pop(tool_call_id, None)
            session.final.pop(tool_call_id, None)
        kept = len(session.seen) * _CALL_BYTES + sum(map(len, session.titles.values()))
        if session.terminals is not None:
            kept += session.terminals.size
        self.bytes += kept - session.bytes
        session.bytes = kept

    def _over_budget(self, current: Session, budget: int) -> None:
        """Past ``max_store_bytes``: the least recently used sessions are forgotten, then the
        oldest calls of the current one, until what is kept fits."""
        sessions = 0
        others = sorted((s.touched, sid) for sid, s in self.sessions.items() if s is not current)
        for _, session_id in others:
            if self.bytes <= budget:
                break
            self.bytes -= self.sessions.pop(session_id).bytes
            sessions += 1
        calls = 0
        while self.bytes > budget and current.seen:
            count = trim_block(len(current.seen))
            self._forget_calls(current, count)
            calls += count
        self.losses.append(
            Loss(
                "$.max_store_bytes",
                f"what the bridge keeps went over {budget} bytes: forgot {sessions} least "
                f"recently used session(s) and {calls} tool-call id(s) of this one: {_FORGOTTEN}",
            )
        )
