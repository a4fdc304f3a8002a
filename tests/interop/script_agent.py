"""An ACP agent that follows a script of raw JSON lines, to misbehave exactly as a test says.

    python tests/interop/script_agent.py SCRIPT RECORD

SCRIPT is a JSON file: a list of steps, run in order.

- ``{"send": VALUE}`` writes VALUE as one JSON line. Any ``{"$id": NAME}`` inside it is replaced
  by the id of the message saved as NAME.
- ``{"raw": TEXT}`` writes TEXT and a newline as it is (a line that is not JSON, a lone
  surrogate escape, ...).
- ``{"await": {KEY: VALUE, ...}, "as": NAME}`` reads messages until one has all those top-level
  keys and values (``{"method": "initialize"}``, ``{"id": 99}`` for an answer), and saves it.
- ``{"exit": CODE}`` exits at once.
- ``{"burst": BYTES, "send": VALUE}`` writes VALUE as JSON lines, without reading, until BYTES
  bytes are written.
- ``{"spawn": ARGV, "pidfile": PATH}`` starts ARGV as a child that keeps our stdout and stderr,
  and does not wait for it; its pid is appended to PATH.
- ``{"pidfile": PATH}`` (without ``spawn``) appends our own pid to PATH.
- ``{"wait_file": PATH}`` waits, without reading, until PATH exists (at most a minute): a test
  says when to go on without a message.

After the last step it reads until its stdin closes. Every line it reads is appended to RECORD
as it came, so a test can see exactly what reached the agent (each answer, and how many).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from typing import Any

SCRIPT, RECORD = sys.argv[1], sys.argv[2]
sys.setrecursionlimit(10_000)  # reads (and answers) JSON nested deeper than 1,000 (issue 27)
saved: dict[str, dict[str, Any]] = {}


def read() -> dict[str, Any] | None:
    line = sys.stdin.buffer.readline()
    if not line:
        return None
    with open(RECORD, "ab") as record:
        record.write(line if line.endswith(b"\n") else line + b"\n")
    try:
        message = json.loads(line)
    except ValueError:
        return {}
    return message if isinstance(message, dict) else {}


def fill(value: Any) -> Any:
    if isinstance(value, dict):
        if set(value) == {"$id"}:
            return saved[value["$id"]]["id"]
        return {key: fill(item) for key, item in value.items()}
    if isinstance(value, list):
        return [fill(item) for item in value]
    return value


def write(text: str) -> None:
    sys.stdout.buffer.write(text.encode("utf-8", "surrogatepass") + b"\n")
    sys.stdout.flush()


def note_pid(path: str, pid: int) -> None:
    with open(path, "a", encoding="utf-8") as file:
        file.write(f"{pid}\n")


def main() -> None:
    with open(SCRIPT, encoding="utf-8") as file:
        steps = json.load(file)
    for step in steps:
        if "burst" in step:
            line = json.dumps(fill(step["send"])).encode() + b"\n"
            for _ in range(-(-step["burst"] // len(line))):
                sys.stdout.buffer.write(line)
            sys.stdout.flush()
        elif "send" in step:
            write(json.dumps(fill(step["send"])))
        elif "raw" in step:
            write(step["raw"])
        elif "await" in step:
            wanted = step["await"]
            while True:
                message = read()
                if message is None:
                    return
                if all(message.get(key, ...) == value for key, value in wanted.items()):
                    saved[step.get("as", "")] = message
                    break
        elif "exit" in step:
            sys.exit(step["exit"])
        elif "spawn" in step:
            child = subprocess.Popen(step["spawn"], stdin=subprocess.DEVNULL)
            note_pid(step["pidfile"], child.pid)
        elif "pidfile" in step:
            note_pid(step["pidfile"], os.getpid())
        elif "wait_file" in step:
            for _ in range(6000):
                if os.path.exists(step["wait_file"]):
                    break
                time.sleep(0.01)
    while read() is not None:
        pass


if __name__ == "__main__":
    main()
