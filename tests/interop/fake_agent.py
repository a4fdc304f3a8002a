"""A scripted ACP agent that speaks raw JSON lines (no SDK), to misbehave on purpose.

    python tests/interop/fake_agent.py MODE [VERSION]

It answers ``initialize`` in VERSION (default 1) and ``session/new`` with ``sess-1``; what it
does next is MODE's:

- ``exit``: exits with code 3 when it gets ``session/new`` (before answering);
- ``crash``: kills itself (SIGKILL) when it gets ``session/prompt``;
- ``garbage``: writes a Python traceback to stdout when it gets ``session/prompt``;
- ``fs``: on ``session/prompt``, asks the client ``fs/read_text_file`` and
  ``terminal/create``, reports both answers as an agent message, and ends the turn;
- ``long-line``: on ``session/prompt``, writes a line of ``LONG_LINE_BYTES`` bytes, then an
  agent message, and ends the turn;
- ``echo``: ends every turn at once with ``end_turn``.

It exits when its stdin closes.
"""

from __future__ import annotations

import json
import os
import signal
import sys
from typing import Any

LONG_LINE_BYTES = 3 * 1024 * 1024


def send(message: dict[str, Any]) -> None:
    sys.stdout.write(json.dumps(message) + "\n")
    sys.stdout.flush()


def read() -> dict[str, Any] | None:
    line = sys.stdin.readline()
    return json.loads(line) if line else None


def say(session_id: str, text: str) -> None:
    chunk = {"sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": text}}
    if VERSION == 2:
        chunk["messageId"] = "m1"
    send(
        {
            "jsonrpc": "2.0",
            "method": "session/update",
            "params": {"sessionId": session_id, "update": chunk},
        }
    )


def answer_of(request_id: int) -> dict[str, Any]:
    while True:
        message = read()
        if message is None:
            sys.exit(0)
        if message.get("id") == request_id and "method" not in message:
            return message


def turn(message: dict[str, Any]) -> None:
    session_id = message["params"]["sessionId"]
    if MODE == "crash":
        os.kill(os.getpid(), signal.SIGKILL)
    if MODE == "garbage":
        sys.stdout.write("Traceback (most recent call last):\n  oops\n")
        sys.stdout.flush()
        return
    if MODE == "fs":
        found = []
        for number, (method, params) in enumerate(
            [
                ("fs/read_text_file", {"sessionId": session_id, "path": "/etc/hostname"}),
                ("terminal/create", {"sessionId": session_id, "command": "ls"}),
            ],
            start=100,
        ):
            send({"jsonrpc": "2.0", "id": number, "method": method, "params": params})
            found.append(answer_of(number))
        say(session_id, json.dumps([answer.get("error") for answer in found]))
    if MODE == "long-line":
        sys.stdout.write("x" * LONG_LINE_BYTES + "\n")
        say(session_id, "after the long line")
    send({"jsonrpc": "2.0", "id": message["id"], "result": {"stopReason": "end_turn"}})


def main() -> None:
    while (message := read()) is not None:
        method = message.get("method")
        if method == "initialize":
            if VERSION == 2:
                info = {"info": {"name": "fake", "version": "0"}, "capabilities": {}}
            else:
                info = {"agentInfo": {"name": "fake", "version": "0"}}
            send(
                {
                    "jsonrpc": "2.0",
                    "id": message["id"],
                    "result": {"protocolVersion": VERSION, **info},
                }
            )
        elif method == "session/new":
            if MODE == "exit":
                sys.exit(3)
            send({"jsonrpc": "2.0", "id": message["id"], "result": {"sessionId": "sess-1"}})
        elif method == "session/prompt":
            turn(message)


MODE = sys.argv[1]
VERSION = int(sys.argv[2]) if len(sys.argv) > 2 else 1

if __name__ == "__main__":
    main()
