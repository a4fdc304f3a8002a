"""Reducers that misbehave, for the runner's tests: ``python fake_reducer.py MODE``.

- ``reference``: the store's document (what ``replay --json`` prints), folded in process;
- ``no-terminals``: the same without any terminal (fails the terminal cases with a difference);
- ``crash``: says why on stderr and exits 3;
- ``hang``: starts a child that sleeps, then sleeps itself (the runner must kill both);
- ``garbage``: prints text that is no JSON;
- ``deep``: prints JSON nested deeper than a parser's stack;
- ``escape``: exits 1 with a terminal control sequence on stderr.
"""

from __future__ import annotations

import contextlib
import json
import subprocess
import sys
import time

from acp_toolcalls.codec import DecodeError
from acp_toolcalls.store import Limits, ToolCallStore


def fold(lines: list[bytes]) -> dict[str, object]:
    store = ToolCallStore(version="auto", limits=Limits.unlimited())
    for line in lines:
        if line.strip():
            with contextlib.suppress(DecodeError):  # replay reports such a line and goes on
                store.apply(line)
    return store.document()


def main(mode: str) -> int:
    lines = sys.stdin.buffer.read().splitlines()
    if mode == "crash":
        print("Traceback: the reducer fell over", file=sys.stderr)
        return 3
    if mode == "hang":
        subprocess.Popen([sys.executable, "-c", "import time; time.sleep(120)"])
        time.sleep(120)
        return 0
    if mode == "garbage":
        print("state: all good")
        return 0
    if mode == "deep":
        print("[" * 100_000 + "]" * 100_000)
        return 0
    if mode == "escape":
        print("bad \x1b[31mred\x1b[0m \x1b]0;title\x07 end", file=sys.stderr)
        return 1
    document = fold(lines)
    if mode == "no-terminals":
        for session in document["sessions"].values():  # type: ignore[attr-defined]
            session["terminals"] = []
    print(json.dumps(document))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
