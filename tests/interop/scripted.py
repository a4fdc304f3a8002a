"""A scripted agent for tests over the real bridge: its steps, and what it read.

``interop/script_agent.py`` runs a list of steps (``{"send": message}``, ``{"await":
{"method": ...}, "as": name}``; ``{"$id": name}`` in a message is the id of the request saved
under ``name``) and records every line it reads. :class:`ScriptedAgent` writes the steps to a
file, gives the agent command, and reads back what the agent read.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from acp_toolcalls.check import validate_message
from acp_toolcalls.models import VersionName

SCRIPT_AGENT = Path(__file__).resolve().parent / "script_agent.py"
SID = "sess-1"


def answer(saved: str, result: Any) -> dict[str, Any]:
    """The step that answers the request saved as ``saved`` with ``result``."""
    return {"send": {"jsonrpc": "2.0", "id": {"$id": saved}, "result": result}}


def update(body: dict[str, Any], session: str = SID) -> dict[str, Any]:
    """The step that sends ``body`` as a ``session/update`` of ``session``."""
    params = {"sessionId": session, "update": body}
    return {"send": {"jsonrpc": "2.0", "method": "session/update", "params": params}}


def text(value: str) -> dict[str, Any]:
    return {"type": "text", "text": value}


class ScriptedAgent:
    """A scripted agent (``command``) and what it read (``read``), each message checked
    against the schema of ``version`` when one is given."""

    def __init__(
        self, tmp: Path, steps: list[dict[str, Any]], version: VersionName | None = None
    ) -> None:
        self.script, self.record = tmp / "script.json", tmp / "record.jsonl"
        self.script.write_text(json.dumps(steps), encoding="utf-8")
        self.command = (sys.executable, str(SCRIPT_AGENT), str(self.script), str(self.record))
        self.version = version

    def read(self) -> list[dict[str, Any]]:
        if not self.record.exists():
            return []
        read = [json.loads(line) for line in self.record.read_bytes().splitlines()]
        if self.version is not None:
            for message in read:
                assert validate_message(message, self.version) == [], message
        return read

    def requests(self, method: str) -> list[dict[str, Any]]:
        return [m for m in self.read() if m.get("method") == method]
