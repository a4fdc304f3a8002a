"""An editor that writes and reads raw JSON lines to ``acp-toolcalls bridge`` in a subprocess.

``RawClient.start(*options, agent=...)`` launches the proxy with the agent command; ``send``
writes one message (or raw bytes), ``receive`` reads one, ``until`` returns the first message
not returned yet that matches (``answer_to``, ``request``), reading as needed. ``finish``
closes stdin (or not) and returns the exit status, stderr and what was left on stdout.
"""

from __future__ import annotations

import asyncio
import json
import sys
from collections.abc import Callable
from typing import Any

from .sessions import AGENT_COMMAND, TIMEOUT

BRIDGE = (sys.executable, "-m", "acp_toolcalls.cli", "bridge")


def bridged(*options: str, agent: tuple[str, ...] = AGENT_COMMAND) -> tuple[str, ...]:
    return (*BRIDGE, *options, "--", *agent)


class RawClient:
    """A client that writes and reads raw JSON lines to a proxy subprocess."""

    def __init__(self, process: asyncio.subprocess.Process) -> None:
        self.process = process
        self.received: list[dict[str, Any]] = []
        self._unmatched: list[dict[str, Any]] = []  # received, not yet returned by `until`

    @classmethod
    async def start(cls, *options: str, agent: tuple[str, ...]) -> RawClient:
        process = await asyncio.create_subprocess_exec(
            *bridged(*options, agent=agent),
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
            limit=64 * 1024 * 1024,
        )
        return cls(process)

    async def send(self, message: dict[str, Any] | list[Any] | bytes) -> None:
        assert self.process.stdin is not None
        line = message if isinstance(message, bytes) else json.dumps(message).encode()
        self.process.stdin.write(line + b"\n")
        await self.process.stdin.drain()

    async def receive(self) -> dict[str, Any]:
        assert self.process.stdout is not None
        line = await asyncio.wait_for(self.process.stdout.readline(), TIMEOUT)
        assert line, "the proxy closed its stdout"
        message: dict[str, Any] = json.loads(line)
        self.received.append(message)
        return message

    async def until(self, found: Callable[[dict[str, Any]], bool]) -> dict[str, Any]:
        """The first message for which ``found`` is true that no ``until`` returned yet (read
        more as needed)."""
        for index, message in enumerate(self._unmatched):
            if found(message):
                return self._unmatched.pop(index)
        while True:
            message = await self.receive()
            if found(message):
                return message
            self._unmatched.append(message)

    async def answer_to(self, request_id: Any) -> dict[str, Any]:
        return await self.until(lambda m: "method" not in m and m.get("id") == request_id)

    async def request(self, method: str) -> dict[str, Any]:
        """The next request of ``method`` the proxy sends."""
        return await self.until(lambda m: m.get("method") == method and "id" in m)

    async def finish(self, *, close: bool = True) -> tuple[int, str, bytes]:
        assert self.process.stdin is not None
        if close:
            self.process.stdin.close()
        out, err = await asyncio.wait_for(self.process.communicate(), TIMEOUT)
        assert self.process.returncode is not None
        return self.process.returncode, err.decode(), out
