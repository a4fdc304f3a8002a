"""Conversion losses of a bridge log: what the proxy's bridge could not carry, found again by
converting the agent's messages with the same bridge (sans-I/O: no file is read).

Rules this module owns:

- In a bridge log whose sides speak different versions, the agent's messages go through the
  bridge the proxy uses for that pairing (``V2ToV1Bridge`` or ``V1ToV2Bridge``); each
  ``Converted.losses`` entry is a ``conversion-loss`` finding on the agent's line, where the log
  shows what the editor got for it.
- The report reads no file, so its bridge sends every v2 diff with a Git patch as text
  (``READING_OFF``), where the proxy's bridge may have rebuilt it from the files on disk (D27
  amended). Such a loss waits for the first message the editor got after that line with content
  for the same call (a ``session/update``, or a permission request's ``toolCall``). It is
  dropped when that content holds a v1 diff for every path of the v2 diff's changes. (In a
  batch, the bridge's path names no element: the last element with an item there is taken.)
  Otherwise it is kept, and it names the files the editor got as text (the bridge's notes on
  stderr said why). A loss the log never settles is kept, saying that the log does not show
  what the editor got.
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

# A waiting loss: the finding, and the paths of its diff's changes.
_Waiting = tuple[Found, frozenset[str]]


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
                message = _parse.decode(data)
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
        call_id = call.get("toolCallId") if isinstance(call, dict) else None
        if not isinstance(session, str) or not isinstance(call_id, str) or not paths:
            self.findings.append(_reworded(found, _UNSETTLED))
            return
        self._waiting.setdefault((session, call_id), []).append((found, paths))
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
            waiting = self._waiting.pop((session, call.get("toolCallId")), None)
            if waiting is None:
                continue
            rebuilt = {
                item.get("path")
                for item in content
                if isinstance(item, dict) and item.get("type") == "diff"
            }
            self._count -= len(waiting)
            for found, paths in waiting:
                as_text = sorted(paths - rebuilt)
                if as_text:
                    why = (
                        f"(not rebuilt from the file on disk: the editor got {', '.join(as_text)}"
                        " as text; the bridge's notes on stderr said why)"
                    )
                    self.findings.append(_reworded(found, why))

    def settle(self) -> None:
        """The end of the log: every loss still waiting is kept, as unsettled."""
        for waiting in self._waiting.values():
            self.findings += [_reworded(found, _UNSETTLED) for found, _ in waiting]
        self._waiting.clear()
        self._count = 0


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
