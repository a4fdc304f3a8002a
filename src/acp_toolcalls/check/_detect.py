"""What version of ACP a log speaks: ``validate --protocol auto`` and ``convert`` read it so.

Rules this module owns (issue 2, item 5; issue 16):

- The protocol is that of the latest ``initialize`` request or response with
  ``protocolVersion`` 1 or 2 (a response, being the negotiated version, replaces its
  request's). Before any ``initialize``, the first message that exists in only one version
  decides (``DETECTION_HINTS``): a ``sessionUpdate`` of one version, a permission request of
  one version's shape, a method of one version (``lifecycle.SENDERS``).
- A reader holds back at most ``LOOKAHEAD_LINES`` lines / ``LOOKAHEAD_BYTES`` bytes while
  nothing has decided: ``VersionLookahead`` holds them for the readers that must read every
  line in one version (``replay``, ``inspect``'s history; D45), ``version`` the store's.
- Light on purpose: no schema validator and no rich (``convert`` starts without them).

Sans-I/O (it is fed parsed messages), so it sits beside the validator core that uses it; the
``convert`` command uses it too.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from functools import cache
from typing import Any, Generic, Literal, TypeVar

import msgspec

from .. import v1
from ..codec import DecodeError, check_depth
from ..lifecycle import SENDERS
from ..models import VersionName
from ._lint import KNOWN_V2_SESSION_UPDATES

__all__ = [
    "DETECTION_HINTS",
    "LOOKAHEAD_BYTES",
    "LOOKAHEAD_LINES",
    "ProtocolDetector",
    "VersionLookahead",
    "hint_tables",
]

LOOKAHEAD_LINES = 1000
"""At most this many lines are held back while ``auto`` has not decided the protocol."""
LOOKAHEAD_BYTES = 8 * 1024 * 1024
"""... and at most this many bytes of them."""


@cache
def hint_tables() -> tuple[Mapping[str, VersionName], Mapping[str, VersionName]]:
    """``sessionUpdate`` values and methods that exist in exactly one protocol version."""
    updates: dict[str, VersionName] = {}
    for tag in v1.KNOWN_SESSION_UPDATES - KNOWN_V2_SESSION_UPDATES:
        updates[tag] = "v1"
    for tag in KNOWN_V2_SESSION_UPDATES - v1.KNOWN_SESSION_UPDATES:
        updates[tag] = "v2"
    methods: dict[str, VersionName] = {}
    for method, spec in SENDERS.items():
        if len(spec.versions) == 1:
            methods[method] = "v1" if 1 in spec.versions else "v2"
    return updates, methods


_PERMISSION_KEYS: Mapping[str, VersionName] = {"toolCall": "v1", "title": "v2", "subject": "v2"}
"""Keys of ``session/request_permission`` params that exist in one version only."""


def _update_hint(message: Mapping[str, Any]) -> tuple[VersionName, str] | None:
    update = _obj(_obj(message.get("params")).get("update"))
    tag = update.get("sessionUpdate")
    version = hint_tables()[0].get(tag) if isinstance(tag, str) else None
    if version is None:
        return None
    return version, f"sessionUpdate {tag!r} exists only in {version}"


def _permission_hint(message: Mapping[str, Any]) -> tuple[VersionName, str] | None:
    params = _obj(message.get("params"))
    for key, version in _PERMISSION_KEYS.items():
        if key in params:
            return version, f"a permission request with `{key}` ({version} shape)"
    return None


def _method_hint(message: Mapping[str, Any]) -> tuple[VersionName, str] | None:
    method = message.get("method")
    version = hint_tables()[1].get(method) if isinstance(method, str) else None
    if version is None:
        return None
    return version, f"method {method!r} exists only in {version}"


DETECTION_HINTS: Mapping[str, Callable[[Mapping[str, Any]], tuple[VersionName, str] | None]] = {
    "session/update": _update_hint,
    "session/request_permission": _permission_hint,
}
"""Per method: how a message of it tells the version; any other method by its name alone."""


def _obj(value: object) -> Mapping[str, Any]:
    return value if isinstance(value, dict) else {}


def _version(value: object) -> VersionName | None:
    if type(value) is int and value in (1, 2):
        return "v1" if value == 1 else "v2"
    return None


class ProtocolDetector:
    """Decides v1 or v2 from the messages of a log (``--protocol auto``)."""

    def __init__(self) -> None:
        self.protocol: VersionName | None = None
        self.source = "default: nothing in the log tells v1 from v2"
        self._by_initialize = False

    def observe(self, message: object, line: int) -> None:
        """Look at one message (a batch element or a whole line)."""
        if not isinstance(message, dict):
            return
        method = message.get("method")
        if method == "initialize":
            version = _obj(message.get("params")).get("protocolVersion")
            self._initialize(version, f"initialize request on line {line}")
        elif method is None and "result" in message:
            # Only an initialize result carries `protocolVersion` (both schemas), so the shape
            # alone identifies it, even in a log that lacks the request.
            version = _obj(message.get("result")).get("protocolVersion")
            self._initialize(version, f"initialize response on line {line}")
        elif not self._by_initialize and self.protocol is None and isinstance(method, str):
            hint = DETECTION_HINTS.get(method, _method_hint)(message)
            if hint is not None:
                self.protocol = hint[0]
                self.source = f"line {line}: {hint[1]}"

    @property
    def by_initialize(self) -> bool:
        """Whether an ``initialize`` decided (not a message of one version)."""
        return self._by_initialize

    def _initialize(self, version: object, where: str) -> None:
        decided = _version(version)
        if decided is not None:
            self.protocol = decided
            self.source = f"{where} says protocolVersion {version}"
            self._by_initialize = True


Held = TypeVar("Held")
_parse = msgspec.json.Decoder()


class VersionLookahead(Generic[Held]):
    """Lines held back until ``ProtocolDetector`` decides the version, or until
    ``LOOKAHEAD_LINES`` lines / ``LOOKAHEAD_BYTES`` bytes wait, or a line over the length
    limit comes (its size, reported as soon as it is seen: then as undecided)."""

    def __init__(self) -> None:
        self.detector = ProtocolDetector()
        self._held: list[Held] | None = []
        self._bytes = 0

    @property
    def version(self) -> Literal["auto", "v1", "v2"]:
        """The version a store reads the lines with: the one a message of one version decided;
        else ``auto`` (an ``initialize`` decided, and the store follows the exchange itself,
        the response winning; or nothing did, and it reads v2 until an ``initialize``)."""
        detector = self.detector
        return "auto" if detector.by_initialize else detector.protocol or "auto"

    def feed(self, held: Held, line: int, data: bytes | int) -> list[Held]:
        """What to read now: nothing while the version is open; once it is decided, what was
        held and ``held``, then each line as it comes."""
        waiting = self._held
        if waiting is None:
            return [held]
        waiting.append(held)
        if not isinstance(data, bytes):  # a line over the limit: said at once, not held
            return self.settle()
        self._bytes += len(data)
        try:
            check_depth(data)  # the codec's limit (issue 27)
            value = _parse.decode(data)
        except (msgspec.DecodeError, RecursionError, DecodeError):
            value = None  # the reader reports the line
        for message in value if isinstance(value, list) else [value]:
            self.detector.observe(message, line)
        if (
            self.detector.protocol
            or len(waiting) >= LOOKAHEAD_LINES
            or self._bytes >= LOOKAHEAD_BYTES
        ):
            return self.settle()
        return []

    def settle(self) -> list[Held]:
        """Stop waiting (the log ended, or a live reader caught up): what was held."""
        waiting, self._held = self._held or [], None
        return waiting
