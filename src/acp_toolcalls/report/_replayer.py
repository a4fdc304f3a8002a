"""The replay pipeline without I/O: numbered lines applied to one store, with diagnostics.

``Replayer`` is shared by ``acp-toolcalls replay`` (``cli/replay.py``) and the ``inspect``
report (``history.SideHistory``), so both read a log the same way and say the same of it.

Rules this module owns (issue 3, item 4):

- ``feed(line, data)`` takes ``lines.read_lines`` output: blank lines are skipped; every other
  line is decoded with the protocol the store reads raw input with now (``raw_version``: the
  ``initialize`` exchange decides under ``auto``) and applied to ``store``.
- Diagnostics go to ``report``, one line each, ``line N: PATH: reason`` (log values through
  ``printable``): unreadable lines (not JSON, invalid
  UTF-8, not a message, over ``max_line_bytes``) are skipped; everything the store salvaged,
  ignored or dropped by a cap is reported too; what the v2 view cannot hold of valid v1 input
  as "not shown, valid v1"; a finished call made open again ("reopened"); a key repeated in
  one object (the store took the last value).
- ``feed`` returns False for an *invalid* line (what ``--strict`` stops at): unreadable,
  salvaged by the decoder (wrong-typed or invalid values, items dropped, unreadable batch
  elements), a repeated key, or an invalid value the store had to drop (bad base64). Not
  invalid: a v1-only ``tool_call`` on a v2 stream (ignored by the contract), what the v1 -> v2
  mapping cannot carry over, cap events and reused ids (notes, still reported).
- A failure of the decoder or the store is a bug, reported as a diagnostic of its line; the
  replay goes on.
- Valid lines take the codec's raw-bytes fast decoder first (no ``Decoded`` wrapper), and
  ``decode_message`` only when it misses.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import msgspec

from ..codec import (
    DEFAULT_MAX_BYTES,
    FAST_PATH_MISSES,
    DecodeError,
    decode_message,
    duplicate_keys,
    fast_message_decoder,
)
from ..events import ContentAppended, DiagnosticReported, ToolCallReopened
from ..models import Batch, InvalidMessage
from ..store import ToolCallStore
from ._wording import overlong, printable, unreadable

__all__ = ["Replayer"]

_LOSSY = "docs/conversion.md lists what v2 cannot hold"
_MISSED = object()  # the fast decoder did not take a line
_FAST = {version: fast_message_decoder(version) for version in ("v1", "v2")}


class Replayer:
    """Applies numbered lines to one store and reports each diagnostic through ``report``."""

    def __init__(
        self,
        store: ToolCallStore,
        report: Callable[[str], None],
        max_line_bytes: int | None = None,
    ) -> None:
        self.store = store
        self._report = report
        self.max_line_bytes = DEFAULT_MAX_BYTES if max_line_bytes is None else max_line_bytes
        self.changed = False
        """Whether any line changed the store since the caller last cleared this."""

    def _say(self, line: int, path: str, reason: str) -> None:
        self._report(f"line {line}: {printable(path)}: {printable(reason)}")

    def feed(self, line: int, data: bytes | int) -> bool:
        """Apply one line (``read_lines`` output); returns False when the line was invalid."""
        if isinstance(data, int):
            self._say(line, "$", overlong(self.max_line_bytes))
            return False
        if not data or data.isspace():
            return True
        version = self.store.raw_version
        try:
            # decode_message's own fast path, without the `Decoded` around a valid message.
            value: Any = _MISSED
            if type(data) is bytes and len(data) <= self.max_line_bytes:
                try:  # noqa: SIM105 - `suppress` costs a context manager on every line
                    value = _FAST[version](data)
                except FAST_PATH_MISSES:
                    pass
            if value is _MISSED and data.lstrip()[:1] == b"[":
                plain = msgspec.json.decode(data)  # a batch: element by element (issue 27)
                if isinstance(plain, list) and plain:
                    return self._batch(line, data, plain, version)
            if value is _MISSED:
                decoded = decode_message(data, version=version, max_bytes=self.max_line_bytes)
                value = decoded.value
                valid = not decoded.diagnostics and not _has_invalid_element(value)
                repeated = duplicate_keys(data, value)
                events = self.store.apply(decoded)
            else:
                valid = True
                repeated = duplicate_keys(data, value)
                events = self.store.apply(value)
        except (msgspec.DecodeError, RecursionError) as exc:  # (the batch's own parse)
            try:
                decode_message(data, version=version, max_bytes=self.max_line_bytes)
            except DecodeError as error:  # the decoder says why, as for any other line
                self._say(line, error.path, unreadable(data, error) + "; line skipped")
                return False
            except Exception:
                pass
            self._say(line, "$", f"the line cannot be read ({exc}); line skipped")
            return False
        except DecodeError as exc:
            self._say(line, exc.path, unreadable(data, exc) + "; line skipped")
            return False
        except Exception as exc:  # a library bug must not end the replay with a traceback
            reason = f"the decoder or store failed ({type(exc).__name__}: {exc}); this is a bug"
            self._say(line, "$", reason)
            return False
        for diagnostic in repeated:  # the store applied the last value of each
            self._say(line, diagnostic.path, diagnostic.reason)
            valid = False
        notes = _Notes(self)
        valid = self._events(line, events, valid, notes)
        notes.close(line)
        return valid

    def _batch(self, line: int, data: bytes, plain: list[Any], version: Any) -> bool:
        """A batch line the fast decoder did not take, applied element by element: the line
        parsed once, each element decoded and applied in turn (in array order, as the store
        applies a batch), so that memory is the parsed line's, not a model and an error per
        element; notes of elements alike are counted (``_Notes``)."""
        notes = _Notes(self)
        valid = True
        for diagnostic in duplicate_keys(data):  # the store applied the last value of each
            notes.say(line, diagnostic.path, diagnostic.reason)
            valid = False
        for index, element in enumerate(plain):
            root = f"$[{index}]"
            plain[index] = None  # what was applied is not held
            if not isinstance(element, dict):
                reason = "batch element skipped: expected a JSON-RPC message object"
                notes.say(line, root, reason)
                valid = False
                continue
            try:
                decoded = decode_message(element, version=version, max_bytes=self.max_line_bytes)
                events = self.store.apply(decoded)
            except DecodeError as exc:
                notes.say(line, _rooted(exc.path, root), f"batch element skipped: {exc.reason}")
                valid = False
                continue
            except Exception as exc:  # a library bug must not end the replay with a traceback
                reason = f"the decoder or store failed ({type(exc).__name__}: {exc}); this is a bug"
                notes.say(line, root, reason)
                valid = False
                continue
            if decoded.diagnostics:
                valid = False
            valid = self._events(line, events, valid, notes, root) and valid
        notes.close(line)
        return valid

    def _events(
        self, line: int, events: list[Any], valid: bool, notes: _Notes, root: str = "$"
    ) -> bool:
        say = notes.say
        for event in events:
            if type(event) is ContentAppended:  # the common event: nothing to say of it
                continue
            if isinstance(event, DiagnosticReported):
                path = _rooted(event.path, root)
                if event.kind == "lossy":  # valid v1 that the v2 view has no place for
                    say(line, path, f"not shown, valid v1: {event.reason} ({_LOSSY})")
                    continue
                say(line, path, event.reason)
                if event.kind == "invalid":
                    valid = False
            elif isinstance(event, ToolCallReopened):
                say(
                    line,
                    root,
                    f"tool call {event.tool_call_id!r} reopened: {event.status!r} after "
                    f"{event.previous_status!r} (an id reused after it finished?)",
                )
        if events:
            self.changed = True
        return valid


def _has_invalid_element(value: object) -> bool:
    return isinstance(value, Batch) and any(isinstance(i, InvalidMessage) for i in value.items)


def _rooted(path: str, root: str) -> str:
    """``path`` (of one batch element) as a path of its line."""
    if root == "$" or not path.startswith("$"):
        return path
    return root + path[1:]


SHOWN_ALIKE = 3
"""Notes of one line alike but for their batch element (the same path within the element and
the same reason) said one by one; the others are counted in one note at the line's end."""


class _Notes:
    """A line's notes, those of batch elements counted past ``SHOWN_ALIKE`` alike (issue 27):
    ``line N: $[3..19999]: reason (the same at 19,997 more batch elements, ...)``."""

    def __init__(self, replayer: Replayer) -> None:
        self._say = replayer._say
        self._seen: dict[tuple[str, str], list[Any]] = {}  # -> [shown, counted, first, last]

    def say(self, line: int, path: str, reason: str) -> None:
        end = path.find("]") if path.startswith("$[") else -1
        if end < 0:
            self._say(line, path, reason)
            return
        key = (path[end + 1 :], reason)
        seen = self._seen.get(key)
        if seen is None:
            seen = self._seen[key] = [0, 0, "", ""]
        if seen[0] < SHOWN_ALIKE:
            seen[0] += 1
            self._say(line, path, reason)
            return
        if not seen[1]:
            seen[2] = path[2:end]
        seen[1] += 1
        seen[3] = path[2:end]

    def close(self, line: int) -> None:
        for (rest, reason), (_, count, first, last) in self._seen.items():
            if count == 1:
                self._say(line, f"$[{first}]{rest}", reason)
            elif count:
                self._say(
                    line,
                    f"$[{first}..{last}]{rest}",
                    f"{reason} (the same at {count:,} more batch elements, $[{first}] to "
                    f"$[{last}]: counted, not listed)",
                )
