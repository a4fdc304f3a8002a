"""Conversion losses of a bridge log: what the proxy's bridge could not carry, found again by
converting the agent's messages with the same bridge (sans-I/O: no file is read).

Rules this module owns:

- In a bridge log whose sides speak different versions, the agent's messages go through the
  bridge the proxy uses for that pairing (``V2ToV1Bridge`` or ``V1ToV2Bridge``); each
  ``Converted.losses`` entry is a ``conversion-loss`` finding on the agent's line, where the log
  shows what the editor got for it.
- The report reads no file, so its bridge sends every v2 diff with a Git patch as text
  (``READING_OFF``), where the proxy's bridge may have rebuilt it from the files on disk (D27
  amended). Such a loss waits for a message the editor got with content for the same call (a
  ``session/update``, or a permission request's ``toolCall``) that shows the diff: a v1 diff
  for one of its files at least, or a text item holding its patch's text. (The first such
  message after the agent's line may hold an earlier state of the call: an update the bridge
  held to coalesce and sent on reading that line.) It is dropped when that content holds a v1
  diff for every file of the v2 diff; otherwise it is kept, naming the files the editor got as
  text (the bridge's notes on stderr said why). In a batch, the bridge's path names no
  element: the last element with an item there is taken. A loss the log never settles is
  kept, saying that the log does not show what the editor got.
- At most ``MAX_WAITING`` losses wait; past it, the oldest is kept as unsettled.
"""

from __future__ import annotations

import re
from collections import OrderedDict
from typing import Any

import msgspec

from ..bridge import READING_OFF, V1ToV2Bridge, V2ToV1Bridge
from ..codec import DecodeError, check_depth

__all__ = ["MAX_WAITING", "Found", "Losses"]

Found = tuple[int, str, str, str, str]
"""A finding as the report keeps it: line, JSON path, code, kind, message. The kinds are
``check.Finding``'s (schema, lint, decode) and ``loss``."""

MAX_WAITING = 1_000
"""Diff losses waiting for what the editor got (the oldest past it is kept as unsettled)."""

_OFF = f"({READING_OFF})"
_UNSETTLED = "(the log does not show what the editor got for it)"
_STEP = re.compile(r"\.([A-Za-z_][A-Za-z0-9_]*)|\[(\d+)\]")
_parse = msgspec.json.Decoder()

# A waiting loss: the finding, the paths of its diff's changes, its patch's text.
_Waiting = tuple[Found, frozenset[str], str]


def _at(value: Any, path: str) -> Any:
    """The value at a ``$.a.b[0]`` path of a decoded message or batch (``None`` when it is not
    there)."""
    for match in _STEP.finditer(path, 1):
        name, index = match.groups()
        if name is not None:
            value = value.get(name) if isinstance(value, dict) else None
        else:
            position = int(index)
            value = value[position] if isinstance(value, list) and position < len(value) else None
    return value


def _call_of(message: Any) -> tuple[Any, Any]:
    """The session and the tool call a message carries (``update`` or a permission request's
    subject or ``toolCall``), else ``(None, None)``."""
    params = message.get("params") if isinstance(message, dict) else None
    if not isinstance(params, dict):
        return None, None
    call = params.get("update")
    if call is None:
        subject = params.get("subject")
        call = subject.get("toolCall") if isinstance(subject, dict) else params.get("toolCall")
    return params.get("sessionId"), call if isinstance(call, dict) else None


class Losses:
    """What the proxy's bridge could not carry, for each message of the agent."""

    def __init__(self) -> None:
        self._bridge: V2ToV1Bridge | V1ToV2Bridge | None = None
        self.findings: list[Found] = []
        self.sessions: dict[int, str | None] = {}  # line -> session of the message with losses
        # (session, call id) -> its diff losses waiting for what the editor got, oldest first.
        self._waiting: OrderedDict[tuple[str, str], list[_Waiting]] = OrderedDict()
        self._count = 0

    def feed(self, line: int, data: bytes, agent: int | None, client: int | None) -> None:
        """A message of the agent's, on ``line``; ``agent`` and ``client``: the sides'
        versions."""
        if self._bridge is None:
            if agent is None or client is None or agent == client:
                return
            self._bridge = V2ToV1Bridge() if agent == 2 else V1ToV2Bridge()
        try:
            converted = self._bridge.convert(data)
        except DecodeError:
            return  # an unreadable line: the validation reports it
        except Exception as exc:  # a bridge bug must not end the report
            reason = f"the bridge failed ({type(exc).__name__}: {exc}); this is a bug"
            self.findings.append((line, "$", "conversion-error", "decode", reason))
            return
        if not converted.losses:
            return
        message = None
        self.sessions[line] = _session_of(data)
        for loss in converted.losses:
            found = (line, loss.path, "conversion-loss", "loss", loss.reason)
            if _OFF not in loss.reason:
                self.findings.append(found)
                continue
            if message is None:
                try:
                    message = _parse.decode(data)
                except msgspec.DecodeError:  # (the bridge read it leniently)
                    message = {}
            self._wait(found, message)

    def _wait(self, found: Found, message: Any) -> None:
        # The item at the loss's path; the call holding it; the message (of a batch) holding
        # that call, whose session it is. A batch's diff is projected once its elements are
        # applied, so its path names no element: the last element holding a diff there is it.
        if isinstance(message, list) and not found[1].startswith("$["):
            held = [m for m in message if isinstance(_at(m, found[1]), dict)]
            message = held[-1] if held else None
        item = _at(message, found[1])
        where = found[1].partition(".content[")[0]
        call = _at(message, where)
        session = _at(message, where.partition(".params")[0] + ".params.sessionId")
        changes = item.get("changes") if isinstance(item, dict) else None
        paths = frozenset(
            change["path"]
            for change in (changes if isinstance(changes, list) else ())
            if isinstance(change, dict) and isinstance(change.get("path"), str)
        )
        patch = item.get("patch") if isinstance(item, dict) else None
        text = patch.get("text") if isinstance(patch, dict) else None
        call_id = call.get("toolCallId") if isinstance(call, dict) else None
        if not (isinstance(session, str) and isinstance(call_id, str) and paths and text):
            self.findings.append(_reworded(found, _UNSETTLED))
            return
        self._waiting.setdefault((session, call_id), []).append((found, paths, text))
        self._count += 1
        while self._count > MAX_WAITING:
            key, oldest = next(iter(self._waiting.items()))
            self.findings.append(_reworded(oldest.pop(0)[0], _UNSETTLED))
            self._count -= 1
            if not oldest:
                del self._waiting[key]

    def editor_got(self, data: bytes) -> None:
        """A message the editor got (a bridge log's ``proxy->client`` line)."""
        if not self._waiting or b'"content"' not in data:
            return
        try:
            check_depth(data)  # the codec's limit
            decoded = _parse.decode(data)
        except (msgspec.DecodeError, DecodeError):
            return
        for message in decoded if isinstance(decoded, list) else (decoded,):
            session, call = _call_of(message)
            if call is None or not isinstance(content := call.get("content"), list):
                continue
            key = (session, call.get("toolCallId"))
            waiting = self._waiting.get(key)
            if waiting is not None:
                self._settle(key, waiting, content)

    def _settle(self, key: tuple[str, str], waiting: list[_Waiting], content: list[Any]) -> None:
        """The call's waiting losses that ``content`` (the editor's) shows: as v1 diffs (each
        file's) or as text (the patch's text in a text item); the others wait on."""
        rebuilt = {item.get("path") for item in content if _is(item, "diff")}
        texts = [
            item["content"].get("text")
            for item in content
            if _is(item, "content") and isinstance(item.get("content"), dict)
        ]
        left = []
        for found, paths, patch in waiting:
            shown = paths & rebuilt
            if not shown and not any(isinstance(t, str) and patch in t for t in texts):
                left.append((found, paths, patch))  # not this diff (an earlier state of the call)
                continue
            if shown != paths:
                as_text = ", ".join(sorted(paths - shown))
                why = (
                    f"(not rebuilt from the file on disk: the editor got {as_text} as text; "
                    "the bridge's notes on stderr said why)"
                )
                self.findings.append(_reworded(found, why))
        self._count -= len(waiting) - len(left)
        if left:
            self._waiting[key] = left
        else:
            del self._waiting[key]

    def take(self) -> list[tuple[Found, str | None]]:
        """The findings so far, each with its line's session, given once (a live report);
        the session of a line with a loss still waiting is kept for it."""
        taken = [(found, self.sessions.get(found[0])) for found in self.findings]
        waiting = {found[0] for entries in self._waiting.values() for found, _, _ in entries}
        self.findings = []
        self.sessions = {line: s for line, s in self.sessions.items() if line in waiting}
        return taken

    def settle(self) -> None:
        """The end of the log: every loss still waiting is kept, as unsettled."""
        for waiting in self._waiting.values():
            self.findings += [_reworded(found, _UNSETTLED) for found, _, _ in waiting]
        self._waiting.clear()
        self._count = 0


def _is(item: Any, kind: str) -> bool:
    return isinstance(item, dict) and item.get("type") == kind


def _reworded(found: Found, why: str) -> Found:
    line, path, code, kind, reason = found
    return (line, path, code, kind, reason.replace(_OFF, why))


class _Addressed(msgspec.Struct, rename="camel"):
    session_id: str | None = None


class _Message(msgspec.Struct):
    params: _Addressed | None = None


_addressed = msgspec.json.Decoder(_Message)


def _session_of(data: bytes) -> str | None:
    """The ``params.sessionId`` of a message (``None``: none, or not readable so)."""
    try:
        message = _addressed.decode(data)
    except msgspec.DecodeError:
        return None
    return message.params.session_id if message.params is not None else None
