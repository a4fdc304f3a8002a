"""Run the official TypeScript ACP SDK as a v1 client against any agent command over stdio.

``node/v1_client.mjs`` is the v1 counterpart of ``node/v2_client.mjs``: a real client on
``@agentclientprotocol/sdk``'s stable entry point (the version pinned in ``node/package.json``),
which parses every message it receives with the SDK's zod schemas. It sends ``initialize``
(protocol version 1; with ``terminal_output`` also ``clientCapabilities._meta.terminal_output:
true``), ``session/new`` and one ``session/prompt``, answers permission requests per ``mode``
(``approve``, ``reject``, or ``cancel``: ``session/cancel`` then the ``cancelled`` outcome), and
the turn ends with the ``session/prompt`` response. :func:`run_ts_v1_client` returns what it
recorded as a :class:`interop.ts_client.TsClientRun` (the same document as the v2 client's:
``stop_reason`` is the prompt response's), and :func:`fold_v1_tool_calls` folds the SDK's v1
updates into tool calls by the v1 rules.

Like :mod:`interop.ts_client`, it needs ``node`` and ``npm ci --prefix tests/interop/node``;
without them the calling test is skipped, or failed under ``ACP_REQUIRE_NODE=1``.
"""

from __future__ import annotations

import json
import shutil
import subprocess
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from interop.ts_client import EXIT_GRACE, MODES, V2_CLIENT_SCRIPT, TsClientError, TsClientRun
from interop.ts_sdk import NODE_DIR, require_ts_sdk

V1_CLIENT_SCRIPT = NODE_DIR / "v1_client.mjs"


def fold_v1_tool_calls(updates: Sequence[Mapping[str, Any]]) -> dict[str, dict[str, Any]]:
    """Fold v1 ``update`` objects into tool calls by id, in first-seen order.

    ``tool_call`` creates the call (or, repeated, replaces what it names); ``tool_call_update``
    replaces each field it carries; a v1 ``null`` or an omitted field changes nothing. Arrays
    (``content``, ``locations``) replace whole.
    """
    calls: dict[str, dict[str, Any]] = {}
    for update in updates:
        kind = update.get("sessionUpdate")
        if kind not in ("tool_call", "tool_call_update"):
            continue
        call = calls.setdefault(update["toolCallId"], {"toolCallId": update["toolCallId"]})
        for key, value in update.items():
            if key not in ("sessionUpdate", "toolCallId") and value is not None:
                call[key] = value
    return calls


def run_ts_v1_client(
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
    """Run ``node/v1_client.mjs`` against ``agent_command`` for one session in ``cwd``.

    ``terminal_output`` offers the v1 terminal extension
    (``clientCapabilities._meta.terminal_output``). ``env`` is the environment of the client
    and hence of the agent (default: this process's); ``run_in`` their working directory.
    Skips or fails the test like :func:`interop.ts_sdk.require_ts_sdk` when the SDK is
    unavailable; raises :class:`interop.ts_client.TsClientError` when the client reports a
    failure.
    """
    return run_ts_client(
        1, agent_command, cwd, prompt, mode, timeout,
        terminal_output=terminal_output, env=env, run_in=run_in,
    )  # fmt: skip


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
    """The v1 client (``version=1``, as :func:`run_ts_v1_client`) or the v2 client
    (``version=2``: ``node/v2_client.mjs``, as :func:`interop.ts_client.run_ts_v2_client`,
    with ``env``; ``terminal_output`` is v1 only)."""
    require_ts_sdk()
    if version not in (1, 2):
        raise ValueError(f"version must be 1 or 2, not {version!r}")
    if version == 2 and terminal_output:
        raise ValueError("terminal_output is a v1 client capability")
    script = V1_CLIENT_SCRIPT if version == 1 else V2_CLIENT_SCRIPT
    if mode not in MODES:
        raise ValueError(f"mode must be one of {MODES}, not {mode!r}")
    if not agent_command:
        raise ValueError("agent_command is empty")
    node = shutil.which("node") or "node"
    argv = [
        node, str(script),
        "--cwd", str(Path(cwd).resolve()), "--prompt", prompt,
        "--mode", mode, "--timeout", str(timeout),
        *(["--terminal-output"] if terminal_output else []),
        "--", *agent_command,
    ]  # fmt: skip
    return _run(argv, timeout, env, run_in, script)


def _run(
    argv: list[str],
    timeout: float,
    env: Mapping[str, str] | None,
    run_in: Path | None,
    script: Path,
) -> TsClientRun:
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
            f"{script.name} did not finish within {timeout + EXIT_GRACE} s", None, stderr
        ) from None
    try:
        document = json.loads(proc.stdout)
    except json.JSONDecodeError:
        document = None
    if proc.returncode != 0 or not isinstance(document, dict) or "error" in document:
        error = document.get("error") if isinstance(document, dict) else None
        raise TsClientError(
            f"{script.name} exited {proc.returncode}: "
            f"{error or 'no JSON document on stdout'}\nstderr: {proc.stderr.strip()[-3000:]}",
            document if isinstance(document, dict) else None,
            proc.stderr,
        )
    return TsClientRun.from_document(document, proc.stderr)
