"""The validator core of ``acp-toolcalls validate``: fed numbered lines, returns findings.

Rules this module owns (issue 2, item 5). Sans-I/O: the command (``cli/validate.py``) reads the
lines (``read_lines``) and prints what this returns.

- Per line: unreadable input (``line-too-long``, ``invalid-utf8``, ``invalid-json``,
  ``not-a-message``), a key repeated in one object (``duplicate-key``: readers keep the last
  value), schema violations of every message (``schema-violation``; batch elements get ``$[i]``
  path prefixes), a method that exists only in the other protocol version
  (``wrong-version-method``: a v1 agent's ``fs/*`` or ``terminal/*`` requests in a v2 log, a v2
  ``tool_call/cancel`` in a v1 log, ...; the methods are those each bundled schema defines),
  tool-call lint (``_lint``) and what the lenient decoder salvaged (``lenient-salvage``) or
  could not read (``unreadable-message``). A decoder report is left out when a schema violation
  at the same path or below it already says the same thing. A decoder that raises anything but
  ``DecodeError`` is a library bug: ``decoder-error``, always reported, and the log is still
  read to the end.
- A response's ``result`` is validated against its request's method when the log showed the
  request: pending request ids are remembered (a bounded number) and forgotten on their
  response. Ids are only unique per direction, so when two pending requests share an id the
  method whose result schema the response satisfies is taken, else the most recent.
- ``unstable``: messages are validated against the version's ``schema.unstable.json``, and
  the ``sessionUpdate`` values that file defines are known to the lint (``validate
  --unstable``); otherwise the stable file, as the version's peers are bound to it.
- ``auto`` protocol (the default): decided as ``_detect`` says; until something decides, lines
  are held back (at most ``LOOKAHEAD_LINES`` lines / ``LOOKAHEAD_BYTES`` bytes) so that the
  lines before the deciding message are read in the right version too; past that window v2 is
  used until told.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import msgspec

from ..codec import (
    DEFAULT_MAX_BYTES,
    Decoded,
    DecodeError,
    decode_message,
    duplicate_keys,
    explain_json_error,
)
from ..models import VersionChoice, VersionName
from ..schema import SchemaViolation, method_table, session_update_tags, validate_message
from ._detect import LOOKAHEAD_BYTES, LOOKAHEAD_LINES, ProtocolDetector, hint_tables
from ._lint import Finding, ToolCallLinter

_PENDING_LIMIT = 4096  # remembered request ids; the oldest is forgotten past this

DECODE_CODES: Mapping[str, str] = {
    "line-too-long": "line over --max-line-bytes; skipped unread",
    "invalid-utf8": "line is not valid UTF-8",
    "invalid-json": "line is not valid JSON",
    "not-a-message": "JSON that is neither a JSON-RPC message object nor a non-empty batch",
    "unreadable-message": "the decoder cannot read the message (dropped, per the spec)",
    "lenient-salvage": "the lenient decoder dropped or kept a value against the schema",
    "schema-violation": "the message does not match the upstream schema",
    "wrong-version-method": "a method that exists only in the other protocol version",
    "decoder-error": "the decoder raised something other than DecodeError (a library bug)",
    "duplicate-key": "a key occurs twice in one object; readers keep the last value",
}
"""Codes of the non-lint findings (``kind`` "decode", except ``schema-violation`` and
``wrong-version-method``: "schema")."""


# --------------------------------------------------------------------------------------------
# Protocol detection


_GONE_IN_V2: Mapping[str, str] = {
    "fs/": "v2 clients serve no file system; a v2 agent reads and writes files itself",
    "terminal/": "v2 terminals belong to the agent, which shows them with `terminal_update`",
}
"""Why a family of v1-only methods has no v2 counterpart, by method prefix."""


def _wrong_version(message: Mapping[str, Any], version: VersionName) -> str | None:
    """What is wrong with a message whose method exists only in the other version, if so."""
    method = message.get("method")
    if not isinstance(method, str):
        return None
    only = hint_tables()[1].get(method)
    if only is None or only == version:
        return None
    spec = method_table(only)[method]
    sender = {"client": "the agent", "agent": "the client"}.get(spec.side, "either side")
    said = f"method {method!r} exists only in {only} (a {spec.kind} from {sender})"
    if only == "v1":
        why = next(
            (hint for prefix, hint in _GONE_IN_V2.items() if method.startswith(prefix)), None
        )
        if why is not None:
            return f"{said}: {why}"
    return f"{said}; a {version} peer does not know it"


# --------------------------------------------------------------------------------------------
# The validator (no I/O: fed lines, returns findings)


def _element(path: str) -> str:
    """The batch element a path is in (``$[3]``), or ``$``."""
    if path.startswith("$["):
        end = path.find("]")
        if end > 0:
            return path[: end + 1]
    return "$"


def _covered(path: str, violations: dict[str, list[str]]) -> bool:
    """A schema violation at ``path`` or below it already reports this decoder problem
    (``violations``: their paths by batch element, so that a batch is read in linear time)."""
    return any(
        v == path or v.startswith((path + ".", path + "["))
        for v in violations.get(_element(path), ())
    )


SHOWN_ALIKE = 3
"""Findings of one line alike but for their batch element (the same code, path within the
element and message) listed one by one; the others are counted in one finding (issue 27)."""


@dataclass(frozen=True)
class CountedFinding(Finding):
    """One finding standing for ``alike`` findings of batch elements, alike but for the
    element (its path names the first and the last: ``$[3..19999].params``)."""

    alike: int = 1


class _Alike:
    """Batch elements with the same finding, past the first ``SHOWN_ALIKE``."""

    __slots__ = ("count", "finding", "first", "last", "rest")

    def __init__(self, finding: Finding, rest: str, index: str) -> None:
        self.finding = finding
        self.rest = rest
        self.first = self.last = index
        self.count = 1

    def summary(self) -> Finding:
        found = self.finding
        if self.count == 1:
            return found
        path = f"$[{self.first}..{self.last}]{self.rest}"
        message = (
            f"{found.message} (the same at {self.count:,} more batch elements, $[{self.first}] "
            f"to $[{self.last}]: counted, not listed)"
        )
        return CountedFinding(found.line, path, found.code, message, found.kind, self.count)


class _Findings:
    """A line's findings in order, those of batch elements counted past ``SHOWN_ALIKE`` alike."""

    def __init__(self) -> None:
        self.items: list[Finding | _Alike] = []
        self._seen: dict[tuple[str, str, str, str], int | _Alike] = {}

    def add(self, finding: Finding) -> None:
        path = finding.path
        end = path.find("]") if path.startswith("$[") else -1
        if end < 0:
            self.items.append(finding)
            return
        rest = path[end + 1 :]
        key = (finding.code, rest, finding.message, finding.kind)
        seen = self._seen.get(key, 0)
        if isinstance(seen, int):
            if seen < SHOWN_ALIKE:
                self._seen[key] = seen + 1
                self.items.append(finding)
                return
            alike = _Alike(finding, rest, path[2:end])
            self._seen[key] = alike
            self.items.append(alike)
            return
        seen.count += 1
        seen.last = path[2:end]

    def extend(self, findings: list[Finding]) -> None:
        for finding in findings:
            self.add(finding)

    def done(self) -> list[Finding]:
        return [item if isinstance(item, Finding) else item.summary() for item in self.items]


def _prefixed(path: str, prefix: str) -> str:
    return prefix + path[1:] if prefix != "$" else path


def _id_key(value: object) -> object | None:
    if isinstance(value, bool) or not isinstance(value, (str, int, float)):
        return None
    return (isinstance(value, str), value)


class Validator:
    """Checks one log, line by line; ``feed`` each line, then ``finish``."""

    def __init__(
        self,
        version: VersionChoice = "auto",
        max_line_bytes: int = DEFAULT_MAX_BYTES,
        *,
        unstable: bool = False,
    ):
        self.max_line_bytes = max_line_bytes
        self.unstable = unstable
        self.lines = 0
        self.messages = 0
        self._detector = ProtocolDetector() if version == "auto" else None
        self.version: VersionName = "v2" if version == "auto" else version
        self._source = "given with --protocol"
        self._held: list[tuple[int, bytes | int]] | None = [] if version == "auto" else None
        self._held_bytes = 0
        self._pending: dict[object, list[str]] = {}
        # Under --unstable, every update the unstable v2 schema defines is known to the lint.
        known = session_update_tags("v2", unstable=True) if unstable else frozenset()
        self._linter = ToolCallLinter(known=known)

    @property
    def version_source(self) -> str:
        """Why ``version`` is what it is."""
        return self._detector.source if self._detector is not None else self._source

    def feed(self, line: int, data: bytes | int) -> list[Finding]:
        """One line (``read_lines`` output); returns the findings of every line it releases."""
        self.lines = line
        if self._held is None:
            return self._line(line, data)
        self._held.append((line, data))
        if isinstance(data, bytes):
            self._held_bytes += len(data)
            if self._detector is not None:
                for message in _messages(_parse_quietly(data)):
                    self._detector.observe(message, line)
        decided = self._detector is not None and self._detector.protocol is not None
        if decided or len(self._held) >= LOOKAHEAD_LINES or self._held_bytes >= LOOKAHEAD_BYTES:
            return self._release()
        return []

    def finish(self) -> list[Finding]:
        """End of input: held lines, then the end-of-log lint (``never-final``)."""
        findings = self._release() if self._held is not None else []
        return findings + self._linter.finish()

    # -- internals -----------------------------------------------------------------------------

    def _release(self) -> list[Finding]:
        held, self._held = self._held or [], None
        findings: list[Finding] = []
        for line, data in held:
            findings += self._line(line, data)
        return findings

    def _line(self, line: int, data: bytes | int) -> list[Finding]:
        if isinstance(data, int):
            return [
                _decode_finding(
                    line,
                    "$",
                    "line-too-long",
                    f"line of {data} bytes is over the limit of {self.max_line_bytes} bytes "
                    "(--max-line-bytes); skipped",
                )
            ]
        if not data or data.isspace():
            return []
        try:
            plain = msgspec.json.decode(data)
        except (msgspec.DecodeError, msgspec.ValidationError, RecursionError) as exc:
            return [_unparsable(line, data, exc)]
        repeated = [
            # (`plain` written back stands in for a second parse)
            _decode_finding(line, d.path, "duplicate-key", d.reason)
            for d in duplicate_keys(data, plain)
        ]
        if isinstance(plain, list) and not plain:
            return [_decode_finding(line, "$", "not-a-message", "an empty JSON-RPC batch")]
        if not isinstance(plain, (dict, list)):
            return [
                _decode_finding(
                    line, "$", "not-a-message", f"{_json_type(plain)}, not a JSON-RPC message"
                )
            ]
        if self._detector is not None:
            for element in plain if isinstance(plain, list) else (plain,):
                self._detector.observe(element, line)
            self.version = self._detector.protocol or "v2"
        if isinstance(plain, list):
            return repeated + self._batch(line, plain)
        return repeated + self._message(line, data, plain)

    def _batch(self, line: int, plain: list[Any]) -> list[Finding]:
        """A batch, element by element (issue 27): each one checked and decoded on its own,
        so that memory is the parsed line's, not a model and an error per element; findings
        in the order of a whole batch's (schema, then the decoder's, then lint), those of
        elements alike counted (``_Findings``)."""
        version = self.version
        schema, problems, internal, lint = _Findings(), _Findings(), _Findings(), _Findings()
        for index, element in enumerate(plain):
            self.messages += 1
            prefix = f"$[{index}]"
            violations: list[str] = []
            for violation in self._schema(element, version):
                path = _prefixed(violation.path, prefix)
                violations.append(path)
                schema.add(Finding(line, path, "schema-violation", violation.message, "schema"))
            if not isinstance(element, dict):
                if not _covered(prefix, {prefix: violations}):
                    reason = "cannot be read: expected a JSON-RPC message object"
                    problems.add(_decode_finding(line, prefix, "unreadable-message", reason))
                continue
            wrong = _wrong_version(element, version)
            if wrong is not None:
                path = _prefixed("$.method", prefix)
                schema.add(Finding(line, path, "wrong-version-method", wrong, "schema"))
            decoded: Decoded[Any] | None = None
            found: list[tuple[str, str, str]] = []
            try:
                decoded = decode_message(element, version=version, max_bytes=self.max_line_bytes)
            except DecodeError as exc:
                found.append((exc.path, "unreadable-message", f"cannot be read: {exc.reason}"))
            except Exception as exc:  # a decoder bug must not abort the whole log
                reason = f"the decoder failed ({type(exc).__name__}: {exc}); this is a bug"
                internal.add(_decode_finding(line, prefix, "decoder-error", reason))
            if decoded is not None:
                for diagnostic in decoded.diagnostics:
                    found.append((diagnostic.path, "lenient-salvage", diagnostic.reason))
            by_element = {prefix: violations}
            for path, code, message in found:
                path = _prefixed(path, prefix)
                if not _covered(path, by_element):
                    problems.add(_decode_finding(line, path, code, message))
            if decoded is not None:  # as `feed` lints a batch's element (its path kept)
                lint.extend(self._linter.feed_element(decoded.value, line, prefix, element))
        return schema.done() + problems.done() + internal.done() + lint.done()

    def _message(self, line: int, data: bytes, plain: Any) -> list[Finding]:
        """One message, read from its text ``data`` (the codec's fast path takes a valid
        line as it is: the same value as from ``plain``, its parse)."""
        version = self.version
        decoded: Decoded[Any] | None = None
        problems: list[tuple[str, str, str]] = []  # (path, code, message) from the decoder
        internal: Finding | None = None
        try:
            decoded = decode_message(data, version=version, max_bytes=self.max_line_bytes)
        except DecodeError as exc:
            problems.append((exc.path, "unreadable-message", f"cannot be read: {exc.reason}"))
        except Exception as exc:  # a decoder bug must not abort the whole log
            reason = f"the decoder failed ({type(exc).__name__}: {exc}); this is a bug"
            internal = _decode_finding(line, "$", "decoder-error", reason)
        if decoded is not None:
            for diagnostic in decoded.diagnostics:
                problems.append((diagnostic.path, "lenient-salvage", diagnostic.reason))
        findings = _Findings()
        self.messages += 1
        violation_paths: dict[str, list[str]] = {}
        for violation in self._schema(plain, version):
            violation_paths.setdefault("$", []).append(violation.path)
            findings.add(
                Finding(line, violation.path, "schema-violation", violation.message, "schema")
            )
        wrong = _wrong_version(plain, version) if isinstance(plain, dict) else None
        if wrong is not None:
            findings.add(Finding(line, "$.method", "wrong-version-method", wrong, "schema"))
        for path, code, message in problems:
            if not _covered(path, violation_paths):
                findings.add(_decode_finding(line, path, code, message))
        if internal is not None:
            findings.add(internal)  # never hidden behind schema violations
        if decoded is not None:
            findings.extend(self._linter.feed(decoded.value, line, raw=plain))
        return findings.done()

    def _schema(self, message: object, version: VersionName) -> list[SchemaViolation]:
        try:
            if not isinstance(message, dict):
                return validate_message(message, version, unstable=self.unstable)
            method = message.get("method")
            key = _id_key(message.get("id"))
            if isinstance(method, str):
                if key is not None:
                    self._remember(key, method)
                return validate_message(message, version, unstable=self.unstable)
            candidates = self._pending.get(key) if key is not None else None
            if not candidates:
                return validate_message(message, version, unstable=self.unstable)
            return self._response(message, version, key, candidates)
        except RecursionError:
            return [SchemaViolation("$", "nested too deeply to check against the schema", "#")]

    def _remember(self, key: object, method: str) -> None:
        self._pending.setdefault(key, []).append(method)
        if len(self._pending) > _PENDING_LIMIT:
            del self._pending[next(iter(self._pending))]  # forget the oldest id

    def _response(
        self, message: dict[str, Any], version: VersionName, key: object, candidates: list[str]
    ) -> list[SchemaViolation]:
        # Most recent first; with one candidate that is the only validation run.
        chosen = len(candidates) - 1
        violations = validate_message(
            message, version, response_method=candidates[chosen], unstable=self.unstable
        )
        if violations and len(candidates) > 1 and "result" in message:
            for index in range(len(candidates) - 2, -1, -1):
                attempt = validate_message(
                    message, version, response_method=candidates[index], unstable=self.unstable
                )
                if not attempt:
                    chosen, violations = index, attempt
                    break
        del candidates[chosen]
        if not candidates:
            del self._pending[key]
        return violations


def _messages(plain: object) -> list[object]:
    if isinstance(plain, list):
        return list(plain)
    return [plain] if isinstance(plain, dict) else []


def _parse_quietly(data: bytes) -> object:
    try:
        return msgspec.json.decode(data)
    except (msgspec.DecodeError, msgspec.ValidationError, RecursionError):
        return None


def _decode_finding(line: int, path: str, code: str, message: str) -> Finding:
    return Finding(line, path, code, message, "decode")


def _unparsable(line: int, data: bytes, exc: Exception) -> Finding:
    try:
        data.decode("utf-8")
    except UnicodeDecodeError as bad:
        return _decode_finding(
            line, "$", "invalid-utf8", f"invalid UTF-8 at byte {bad.start}: {bad.reason}"
        )
    if isinstance(exc, RecursionError):
        return _decode_finding(line, "$", "invalid-json", "not readable JSON: nested too deeply")
    reason = explain_json_error(data, str(exc))
    return _decode_finding(line, "$", "invalid-json", f"not valid JSON: {reason}")


def _json_type(value: object) -> str:
    names = {str: "a JSON string", bool: "a JSON boolean", type(None): "JSON null"}
    return names.get(type(value), "a JSON number")
