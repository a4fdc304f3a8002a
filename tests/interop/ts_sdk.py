"""Ask the official TypeScript ACP SDK whether messages are valid.

``node/validate.mjs`` runs the validators that `@agentclientprotocol/sdk` (the version pinned in
``node/package.json``) applies to what a client receives: ``session/update`` notifications,
``session/request_permission`` requests and their responses, for ACP v1 (the package's stable
entry point) and the v2 draft (``@agentclientprotocol/sdk/experimental/v2``).

The SDK parses leniently: it accepts unknown v2 variants and silently drops or defaults many
invalid optional fields, so "accepted" means the SDK's parse succeeded, not that every field
survived it.

Needs ``node`` on PATH and ``npm ci --prefix tests/interop/node`` run once. Without them
:func:`require_ts_sdk` (called by :func:`ts_validate`) skips the test, or fails it when the
environment sets ``ACP_REQUIRE_NODE=1``, as CI does.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Union

import pytest

NODE_DIR = Path(__file__).resolve().parent / "node"
VALIDATE_SCRIPT = NODE_DIR / "validate.mjs"
SDK_PACKAGE = "@agentclientprotocol/sdk"
INSTALL_COMMAND = "npm ci --prefix tests/interop/node"
REQUIRE_NODE_ENV = "ACP_REQUIRE_NODE"
REQUEST_PERMISSION = "session/request_permission"


@dataclass(frozen=True)
class TsMessage:
    """One message for the SDK to judge.

    ``message`` is a whole JSON-RPC message. A response carries no method of its own, so
    ``response_to`` names the method of the request it answers.
    """

    version: int
    message: dict[str, Any]
    response_to: str | None = None

    @classmethod
    def response(
        cls,
        version: int,
        result: dict[str, Any],
        *,
        method: str = REQUEST_PERMISSION,
        request_id: int | str = 0,
    ) -> TsMessage:
        """A JSON-RPC success response carrying ``result`` for a ``method`` request."""
        envelope = {"jsonrpc": "2.0", "id": request_id, "result": result}
        return cls(version, envelope, response_to=method)

    def to_line(self) -> dict[str, Any]:
        line: dict[str, Any] = {"version": self.version, "message": self.message}
        if self.response_to is not None:
            line["kind"] = "response"
            line["method"] = self.response_to
        return line


# A plain ``(version, message)`` pair is a request or notification.
TsInput = Union[TsMessage, tuple[int, dict[str, Any]]]


def _expected_sdk_version() -> str:
    manifest = json.loads((NODE_DIR / "package.json").read_text(encoding="utf-8"))
    return str(manifest["dependencies"][SDK_PACKAGE])


def ts_sdk_unavailable() -> str | None:
    """Why the TypeScript SDK cannot be run here, or ``None`` when it can."""
    if shutil.which("node") is None:
        return f"`node` is not on PATH: install Node.js >= 20.6, then run `{INSTALL_COMMAND}`"
    installed = NODE_DIR / "node_modules" / SDK_PACKAGE / "package.json"
    if not installed.is_file():
        return f"{SDK_PACKAGE} is not installed: run `{INSTALL_COMMAND}`"
    found = str(json.loads(installed.read_text(encoding="utf-8")).get("version"))
    expected = _expected_sdk_version()
    if found != expected:
        return f"{SDK_PACKAGE} {found} is installed, {expected} is pinned: run `{INSTALL_COMMAND}`"
    return None


def require_ts_sdk() -> None:
    """Skip the calling test when the SDK cannot run; fail it instead under ACP_REQUIRE_NODE=1."""
    reason = ts_sdk_unavailable()
    if reason is None:
        return
    if os.environ.get(REQUIRE_NODE_ENV) == "1":
        pytest.fail(f"{reason} ({REQUIRE_NODE_ENV}=1 forbids skipping)", pytrace=False)
    pytest.skip(reason)


def ts_validate(messages: Sequence[TsInput], *, timeout: float = 120.0) -> list[str | None]:
    """The SDK's verdict on each message: ``None`` if accepted, else its error text.

    All messages go to one ``node`` process. Skips or fails the test like :func:`require_ts_sdk`
    when the SDK is unavailable; raises ``RuntimeError`` if the harness itself breaks.
    """
    require_ts_sdk()
    items = [m if isinstance(m, TsMessage) else TsMessage(*m) for m in messages]
    if not items:
        return []
    stdin = "".join(json.dumps(item.to_line()) + "\n" for item in items)
    node = shutil.which("node") or "node"
    proc = subprocess.run(
        [node, str(VALIDATE_SCRIPT)],
        input=stdin,
        capture_output=True,
        text=True,
        encoding="utf-8",
        timeout=timeout,
        cwd=NODE_DIR,
        check=False,
    )
    lines = proc.stdout.splitlines()
    if proc.returncode != 0 or len(lines) != len(items):
        raise RuntimeError(
            f"{VALIDATE_SCRIPT.name} exited {proc.returncode} with {len(lines)} verdicts for "
            f"{len(items)} messages\nstderr: {proc.stderr.strip()[-2000:]}"
        )
    verdicts: list[str | None] = []
    for line in lines:
        verdict = json.loads(line)
        verdicts.append(None if verdict["ok"] else str(verdict["error"]))
    return verdicts
