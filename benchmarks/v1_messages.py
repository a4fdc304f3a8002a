"""The v1 stream of ``bench_bridge_v1.py`` and tests/bridge/test_fast_paths.py: its one generator.

Rules this module owns: ``sequential(calls)`` is ``calls`` tool calls one after another in
session ``SID``, as a v1 agent sends them: a ``tool_call`` (title, kind, ``pending``,
rawInput, locations), four ``tool_call_update``s each carrying the whole content so far (v1
has no append; the first also sets ``in_progress``), and a ``tool_call_update`` ``completed``
with rawOutput. Deterministic; imports nothing from its siblings (tests import it as
``benchmarks.v1_messages``).
"""

from __future__ import annotations

import orjson

__all__ = ["SID", "sequential"]

SID = "sess_bench"


def _line(update: dict[str, object]) -> bytes:
    params = {"sessionId": SID, "update": update}
    return orjson.dumps({"jsonrpc": "2.0", "method": "session/update", "params": params})


def sequential(calls: int) -> list[bytes]:
    """``calls`` v1 tool calls one after another, as the module docstring says."""
    out = []
    for i in range(calls):
        call = f"call_{i}"
        first: dict[str, object]
        first = {"sessionUpdate": "tool_call", "toolCallId": call, "title": f"Read {i}.py"}
        first |= {"kind": "read", "status": "pending", "rawInput": {"path": f"/src/{i}.py"}}
        out.append(_line({**first, "locations": [{"path": f"/src/{i}.py"}]}))
        content: list[object] = []
        for j in range(4):
            text = {"type": "text", "text": f"line {j} of the file {i} with some words in it"}
            content = [*content, {"type": "content", "content": text}]
            update = {"sessionUpdate": "tool_call_update", "toolCallId": call}
            if j == 0:
                update["status"] = "in_progress"
            out.append(_line({**update, "content": content}))
        done = {"sessionUpdate": "tool_call_update", "toolCallId": call, "status": "completed"}
        out.append(_line({**done, "rawOutput": {"bytes": 1234}}))
    return out
