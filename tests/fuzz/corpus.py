"""Seed messages for the fuzz targets: real, valid lines of both protocol versions.

Sources, all read once at import:

- v2: ``examples/session-v2.jsonl``, ``examples/buggy-v2.jsonl`` (including its truncated
  line), the bundled ``acp_toolcalls/data/demo-session.jsonl``, and ``benchmarks/messages.py``'s
  generators (single-call streams, and interleaved live calls with permission requests);
- v1: ``examples/session-v1.jsonl``, plus the v2 seeds converted by a ``V2ToV1Bridge`` (typed
  output only, so every line is a v1 ``session/update`` or ``session/request_permission``).

No hypothesis here: the atheris harness (``fuzz/run.py``) seeds its corpus from the same lines.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from acp_toolcalls import v1
from acp_toolcalls.bridge import V2ToV1Bridge
from acp_toolcalls.codec import to_builtins
from acp_toolcalls.models import Batch
from benchmarks.messages import generate, generate_live

__all__ = ["BY_KIND", "CLIENT_ANSWERS", "LINES", "REPO", "VALUES", "dumps", "kind_of"]

REPO = Path(__file__).resolve().parents[2]


def dumps(value: Any) -> bytes:
    """Compact JSON bytes as an agent would write them."""
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False).encode()


def _read(path: Path) -> list[bytes]:
    return [line for line in path.read_bytes().splitlines() if line.strip()]


def _benchmark_lines() -> list[bytes]:
    lines = generate(40, seed=3)
    lines += generate_live(90, calls=6, seed=4)
    return lines


def _to_v1(lines: list[bytes]) -> list[bytes]:
    bridge = V2ToV1Bridge()
    out: list[bytes] = []
    typed = (v1.SessionUpdateMessage, v1.PermissionRequestMessage)
    for line in lines:
        try:
            messages = bridge.convert(line).messages
        except ValueError:
            continue
        for message in messages:
            items = message.items if isinstance(message, Batch) else (message,)
            out += [dumps(to_builtins(item)) for item in items if isinstance(item, typed)]
    return out


def _unique(lines: list[bytes]) -> list[bytes]:
    return list(dict.fromkeys(lines))


_V2 = _unique(
    _read(REPO / "examples/session-v2.jsonl")
    + _read(REPO / "examples/buggy-v2.jsonl")
    + _read(REPO / "src/acp_toolcalls/data/demo-session.jsonl")
    + _benchmark_lines()
)
_V1 = _unique(_read(REPO / "examples/session-v1.jsonl") + _to_v1(_V2))

LINES: dict[str, list[bytes]] = {"v1": _V1, "v2": _V2}
"""Seed lines per protocol, as bytes (one may be invalid on purpose: buggy-v2's last line)."""


def _values(lines: list[bytes]) -> list[Any]:
    out = []
    for line in lines:
        try:
            out.append(json.loads(line))
        except ValueError:
            continue
    return out


VALUES: dict[str, list[Any]] = {protocol: _values(lines) for protocol, lines in LINES.items()}
"""The seed lines that parse, as JSON values (the mutators work on these)."""


def kind_of(value: Any) -> str:
    """What a seed message is, to pick seeds evenly across kinds (permission requests are few)."""
    if not isinstance(value, dict):
        return "batch"
    method = value.get("method")
    if method == "session/update":
        params = value.get("params")
        update = params.get("update") if isinstance(params, dict) else None
        tag = update.get("sessionUpdate") if isinstance(update, dict) else None
        if tag in ("tool_call", "tool_call_update", "tool_call_content_chunk"):
            return str(tag)
        if tag in ("terminal_update", "terminal_output_chunk"):
            return "terminal"
        return "other update"
    if method == "session/request_permission":
        return "permission"
    return "other message"


BY_KIND: dict[str, dict[str, list[Any]]] = {
    protocol: {
        kind: [value for value in values if kind_of(value) == kind]
        for kind in dict.fromkeys(kind_of(value) for value in values)
    }
    for protocol, values in VALUES.items()
}
"""The parsed seeds per protocol, grouped by ``kind_of``."""

CLIENT_ANSWERS: list[Any] = [
    {"outcome": {"outcome": "selected", "optionId": "allow"}},
    {"outcome": {"outcome": "selected", "optionId": "allow-once"}},
    {"outcome": {"outcome": "selected", "optionId": "reject-once"}},
    {"outcome": {"outcome": "selected", "optionId": "allow-always"}},
    {"outcome": {"outcome": "selected", "optionId": "always"}},
    {"outcome": {"outcome": "selected", "optionId": "deny"}},
    {"outcome": {"outcome": "selected", "optionId": "reject"}},
    {"outcome": {"outcome": "selected", "optionId": "never-offered"}},
    {"outcome": {"outcome": "cancelled"}},
    {"outcome": {"outcome": "_deferred"}},
    {"outcome": {"outcome": "selected"}},
    {"outcome": "selected"},
    {},
    None,
]
"""``result`` values of a client's answer to a permission request (valid and not)."""
