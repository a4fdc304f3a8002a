"""Run the official TypeScript ACP SDK as a v1 or v2 client against any agent command over stdio.

``node/client.mjs`` is a real client on ``@agentclientprotocol/sdk`` (the version pinned in
``node/package.json``): with ``--protocol 1`` on its stable entry point, which parses every
message it receives with the SDK's zod schemas, with ``--protocol 2`` on
``@agentclientprotocol/sdk/experimental/v2``. It spawns the agent command, sends ``initialize``
(v1: protocol version 1, no file system and no terminal, with ``terminal_output`` also
``clientCapabilities._meta.terminal_output: true``; v2: protocol version 2), ``session/new`` and
one ``session/prompt``, answers permission requests per ``mode`` (``approve``, ``reject``, or
``cancel``: ``session/cancel`` then the ``cancelled`` outcome), waits for the end of the turn (v1:
the ``session/prompt`` response; v2: the idle ``state_update``), closes the agent's stdin and
waits for it to exit. :func:`run_ts_client` (and :func:`run_ts_v2_client`) returns what it
recorded as a :class:`TsClientRun`, the same document for both versions: the raw wire (tapped
line by line before the SDK parses it) and what the SDK handed to the client's callbacks.
:func:`fold_tool_calls` folds the SDK's v2 updates into tool calls, :func:`fold_v1_tool_calls`
its v1 updates.

Like :mod:`interop.ts_sdk`, it needs ``node`` and ``npm ci --prefix tests/interop/node``; without
them the calling test is skipped, or failed under ``ACP_REQUIRE_NODE=1``.
"""

from __future__ import annotations

import json
import shutil
import subprocess
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tests.interop.ts_sdk import NODE_DIR, require_ts_sdk

CLIENT_SCRIPT = NODE_DIR / "client.mjs"
MODES = ("approve", "reject", "cancel")
EXIT_GRACE = 15.0
"""Seconds the Python side waits beyond ``timeout`` before killing ``node`` itself: the script
enforces ``timeout`` on its own and reports it, this is only a backstop."""


class TsClientError(RuntimeError):
    """The TypeScript client failed: ``document`` is what it printed (with ``error``, ``phase``
    and everything recorded until then) or ``None`` when it printed no JSON; ``stderr`` is its
    standard error, the agent's included."""

    def __init__(self, message: str, document: dict[str, Any] | None, stderr: str) -> None:
        super().__init__(message)
        self.document = document
        self.stderr = stderr


@dataclass(frozen=True)
class TsClientRun:
    """One session with one prompt, as the TypeScript SDK's v1 or v2 client saw it."""

    initialize: dict[str, Any]  # the initialize result as the SDK returned it
    session_id: str
    new_session: dict[str, Any]
    prompt_result: dict[str, Any]  # v2: only the acknowledgement (``messageId``)
    stop_reason: str | None  # v1: the prompt response's; v2: the idle ``state_update``'s
    agent_exit: dict[str, Any]  # {"code": ..., "signal": ...}
    wire: list[dict[str, Any]]  # {"direction": "incoming"|"outgoing", "message": ...}
    updates: list[dict[str, Any]]  # session/update params, as the SDK parsed them
    permission_requests: list[dict[str, Any]]  # session/request_permission params, parsed
    errors: list[Any]  # e.g. the SDK's console.error reports: what it dropped
    stderr: str = field(default="", repr=False)

    @classmethod
    def from_document(cls, document: dict[str, Any], stderr: str = "") -> TsClientRun:
        return cls(
            initialize=document["initialize"],
            session_id=document["sessionId"],
            new_session=document["newSession"],
            prompt_result=document["promptResult"],
            stop_reason=document["stopReason"],
            agent_exit=document["agentExit"],
            wire=document["wire"],
            updates=document["updates"],
            permission_requests=document["permissionRequests"],
            errors=document["errors"],
            stderr=stderr,
        )

    def received(self) -> list[dict[str, Any]]:
        """Every JSON message the agent sent, in wire order."""
        return [e["message"] for e in self.wire if e["direction"] == "incoming" and "message" in e]

    def sent(self) -> list[dict[str, Any]]:
        """Every JSON message the client sent, in wire order."""
        return [e["message"] for e in self.wire if e["direction"] == "outgoing" and "message" in e]

    def unparsed_lines(self) -> list[dict[str, Any]]:
        """Wire lines that were not JSON, ``{"direction": ..., "line": ...}``."""
        return [entry for entry in self.wire if "message" not in entry]

    def received_with_methods(self) -> Iterator[tuple[dict[str, Any], str | None]]:
        """Each received message with, for a response, the method of the client request it
        answers (``None`` for requests and notifications, or a response to no sent request)."""
        asked: dict[Any, str] = {}
        for entry in self.wire:
            message = entry.get("message")
            if not isinstance(message, dict):
                continue
            if entry["direction"] == "outgoing":
                if "method" in message and "id" in message:
                    asked[_id_key(message["id"])] = message["method"]
            elif "method" in message:
                yield message, None
            else:
                yield message, asked.get(_id_key(message.get("id")))

    def received_updates(self, kind: str | None = None) -> list[dict[str, Any]]:
        """The raw ``update`` of every received ``session/update`` (of one ``sessionUpdate``)."""
        found = []
        for message in self.received():
            if message.get("method") == "session/update":
                update = (message.get("params") or {}).get("update") or {}
                if kind is None or update.get("sessionUpdate") == kind:
                    found.append(update)
        return found

    def sdk_updates(self, kind: str | None = None) -> list[dict[str, Any]]:
        """The ``update`` of every ``session/update`` the SDK handed to the client."""
        updates = [params["update"] for params in self.updates]
        return [u for u in updates if kind is None or u.get("sessionUpdate") == kind]

    def tool_calls(self) -> dict[str, dict[str, Any]]:
        """The tool calls the client saw: :func:`fold_tool_calls` of the SDK's updates."""
        return fold_tool_calls(self.sdk_updates())


def _id_key(request_id: Any) -> str:
    return json.dumps(request_id)


def fold_tool_calls(updates: Sequence[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """Fold v2 ``update`` objects into tool calls by id, in first-seen order.

    ``tool_call_update`` upserts: a present field replaces, ``null`` clears it (the key is
    removed), and top-level ``_meta`` patches by key (``null`` clears all of it, a ``null``
    value removes its key). ``tool_call_content_chunk`` appends its item to ``content``.
    """
    calls: dict[str, dict[str, Any]] = {}
    for call, update in _by_call(updates, ("tool_call_update", "tool_call_content_chunk"), calls):
        if update["sessionUpdate"] == "tool_call_content_chunk":
            call["content"] = [*(call.get("content") or []), update["content"]]
            continue
        for key, value in update.items():
            if key in ("sessionUpdate", "toolCallId"):
                continue
            if key == "_meta" and isinstance(value, dict):
                meta = {**(call.get("_meta") or {}), **value}
                call["_meta"] = {k: v for k, v in meta.items() if v is not None}
            elif value is None:
                call.pop(key, None)
            else:
                call[key] = value
    return calls


def fold_v1_tool_calls(updates: Sequence[Mapping[str, Any]]) -> dict[str, dict[str, Any]]:
    """Fold v1 ``update`` objects into tool calls by id, in first-seen order.

    ``tool_call`` creates the call (or, repeated, replaces what it names); ``tool_call_update``
    replaces each field it carries; a v1 ``null`` or an omitted field changes nothing. Arrays
    (``content``, ``locations``) replace whole.
    """
    calls: dict[str, dict[str, Any]] = {}
    for call, update in _by_call(updates, ("tool_call", "tool_call_update"), calls):
        for key, value in update.items():
            if key not in ("sessionUpdate", "toolCallId") and value is not None:
                call[key] = value
    return calls


def _by_call(
    updates: Sequence[Mapping[str, Any]], kinds: tuple[str, ...], calls: dict[str, dict[str, Any]]
) -> Iterator[tuple[dict[str, Any], Mapping[str, Any]]]:
    """Each update whose ``sessionUpdate`` is one of ``kinds``, with its call in ``calls`` (by
    ``toolCallId``, created on first sight)."""
    for update in updates:
        if update.get("sessionUpdate") in kinds:
            call_id = update["toolCallId"]
            yield calls.setdefault(call_id, {"toolCallId": call_id}), update


def run_ts_v2_client(
    agent_command: Sequence[str],
    cwd: Path,
    prompt: str,
    mode: str = "approve",
    timeout: float = 30.0,
    *,
    env: Mapping[str, str] | None = None,
    run_in: Path | None = None,
) -> TsClientRun:
    """:func:`run_ts_client` with ``version=2``."""
    return run_ts_client(2, agent_command, cwd, prompt, mode, timeout, env=env, run_in=run_in)


def run_ts_client(
    version: int,
    agent_command: Sequence[str],
    cwd: Path,
    prompt: str,
    mode: str = "approve",
    timeout: float = 30.0,
    *,
    terminal_output: bool = False,
    env: Mapping[str, str] | None = None,
    run_in: Path | None = None,
) -> TsClientRun:
    """Run ``node/client.mjs --protocol VERSION`` against ``agent_command`` for one session in
    ``cwd``.

    ``version`` is 1 or 2. ``terminal_output`` offers the v1 terminal extension
    (``clientCapabilities._meta.terminal_output``; v1 only). ``cwd`` is the session's working
    directory (made absolute); ``env`` is the environment of the client and hence of the agent
    process, ``run_in`` their working directory (default: this process's). Skips or fails the
    test like :func:`interop.ts_sdk.require_ts_sdk` when the SDK is unavailable; raises
    :class:`TsClientError` when the client reports a failure.
    """
    require_ts_sdk()
    if version not in (1, 2):
        raise ValueError(f"version must be 1 or 2, not {version!r}")
    if version == 2 and terminal_output:
        raise ValueError("terminal_output is a v1 client capability")
    if mode not in MODES:
        raise ValueError(f"mode must be one of {MODES}, not {mode!r}")
    if not agent_command:
        raise ValueError("agent_command is empty")
    node = shutil.which("node") or "node"
    argv = [
        node, str(CLIENT_SCRIPT), "--protocol", str(version),
        "--cwd", str(Path(cwd).resolve()), "--prompt", prompt,
        "--mode", mode, "--timeout", str(timeout),
        *(["--terminal-output"] if terminal_output else []),
        "--", *agent_command,
    ]  # fmt: skip
    name = f"{CLIENT_SCRIPT.name} --protocol {version}"
    try:
        proc = subprocess.run(
            argv,
            capture_output=True,
            text=True,
            encoding="utf-8",
            timeout=timeout + EXIT_GRACE,
            cwd=run_in,
            env=dict(env) if env is not None else None,
            check=False,
        )
    except subprocess.TimeoutExpired as exc:
        stderr = exc.stderr.decode(errors="replace") if isinstance(exc.stderr, bytes) else ""
        raise TsClientError(
            f"{name} did not finish within {timeout + EXIT_GRACE} s", None, stderr
        ) from None
    try:
        document = json.loads(proc.stdout)
    except json.JSONDecodeError:
        document = None
    if proc.returncode != 0 or not isinstance(document, dict) or "error" in document:
        error = document.get("error") if isinstance(document, dict) else None
        raise TsClientError(
            f"{name} exited {proc.returncode}: "
            f"{error or 'no JSON document on stdout'}\nstderr: {proc.stderr.strip()[-3000:]}",
            document if isinstance(document, dict) else None,
            proc.stderr,
        )
    return TsClientRun.from_document(document, proc.stderr)
