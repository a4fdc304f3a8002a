"""Deep nesting and very long lines, over real subprocesses (issue 27, items 3 and 4).

Item 3: whatever the reader accepts, every writer writes. The codec accepts JSON nested at most
``MAX_DEPTH`` levels deep (``codec/_limits``), whichever decoder reads it, and refuses a deeper
line with one diagnostic; every command (``inspect``, ``convert`` both ways, ``replay --json``,
``validate``) and the bridge (both directions, every pairing) then handles a line nested 400
or 985 levels deep (under msgspec's own limit) or exactly at the limit, in an unknown key, a
``_meta``, a ``rawInput`` or a content block, without exit 70 and with every prompt answered.

Item 4: a short write is never ignored. ``cli/_output.write_all`` loops until the stream took
every byte; a write the kernel cuts (here by a file-size limit, as Linux cuts one ``write`` at
2,147,479,552 bytes) either continues or fails loudly, never exits 0 with a cut line.
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import resource
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from acp_toolcalls import ToolCallStore
from acp_toolcalls.bridge import V1ToV2Bridge, V2ToV1Bridge
from acp_toolcalls.cli._output import PIECE, write_all, write_out
from acp_toolcalls.codec import (
    MAX_DEPTH,
    DecodeError,
    EncodeError,
    canonical_json,
    decode_message,
    encode,
    to_builtins,
)
from acp_toolcalls.codec._limits import nesting
from tests.interop.raw import RawClient
from tests.interop.sessions import bounded
from tests.proxy.test_permission_integrity import CONVERTING, PASS_THROUGH, SID, Session, update

CLI = (sys.executable, "-m", "acp_toolcalls")
WHERE = ("unknown", "_meta", "rawInput", "content")
DEEP = (400, 985)  # issue 27: inspect failed at 400, convert and replay at 985
LIMIT_SAID = f"nesting is too deep (over the limit of {MAX_DEPTH} levels)"
BROKEN = ("internal error", "Traceback", "a bug", "RecursionError", "recursion")


def nested(levels: int) -> str:
    """JSON text of a value ``levels`` arrays and objects deep (0: a number)."""
    text = "0"
    for level in range(levels):
        text = f'{{"a":{text}}}' if level % 2 else f"[{text}]"
    return text


def deep_update(version: int, where: str, depth: int, call: str = "c1") -> str:
    """A ``session/update`` line of a v1 ``tool_call`` or a v2 ``tool_call_update`` that nests
    exactly ``depth`` levels (the message object counted), its deepest value at ``where``."""
    tag = "tool_call" if version == 1 else "tool_call_update"
    body: dict[str, Any] = {"sessionUpdate": tag, "toolCallId": call, "title": "deep"}
    if where == "unknown":
        body["zzz"] = "@V@"
    elif where == "_meta":
        body["_meta"] = {"x": "@V@"}
    elif where == "rawInput":
        body["rawInput"] = "@V@"
    else:
        block = {"type": "text", "text": "hi", "_meta": {"x": "@V@"}}
        body["content"] = [{"type": "content", "content": block}]
    message = {"jsonrpc": "2.0", "method": "session/update", "params": {}}
    message["params"] = {"sessionId": "s1", "update": body}
    template = json.dumps(message, separators=(",", ":"))
    envelope = nesting(template.replace('"@V@"', "0"), 10_000)
    line = template.replace('"@V@"', nested(depth - envelope))
    assert nesting(line, 10_000) == depth
    return line


def test_the_line_builder_nests_exactly() -> None:
    for where in WHERE:
        for depth in (MAX_DEPTH, MAX_DEPTH + 1):
            line = deep_update(2, where, depth)
            if depth <= MAX_DEPTH:
                assert json.loads(encode(decode_message(line.encode()).value)) == json.loads(line)
            else:  # in every form the codec reads: text, bytes, buffers, parsed values
                for form in (line, line.encode(), bytearray(line.encode()), json.loads(line)):
                    with pytest.raises(DecodeError, match=re.escape(LIMIT_SAID)):
                        decode_message(form)
                with pytest.raises(DecodeError, match=re.escape(LIMIT_SAID)):
                    decode_message(memoryview(line.encode()))


def _write_everything(lines: dict[int, list[bytes]]) -> bool:
    """Each writer over lines at the limit; ``False`` when the stack runs out on the way (a
    reader refuses them at this call depth, the test's own or one a few frames deeper in the
    store or a bridge, or a writer a few frames deeper still: at the stack's edge a few frames
    decide, and the compiled build's are not the interpreter's). The test asks that it be
    ``True`` with room to spare: a writer that recursed more per level than the parser, as
    the encoder's walks did, fails there."""
    try:
        _write_each(lines)
    except (DecodeError, EncodeError, RecursionError):  # the stack ran out, at its edge
        return False
    return True


def _write_each(lines: dict[int, list[bytes]]) -> None:
    for version, some in lines.items():
        for line in some:
            decode_message(line, version="v1" if version == 1 else "v2")
    for line in lines[2]:
        value = decode_message(line).value
        encode(value), to_builtins(value), canonical_json(value)
    store = ToolCallStore(version="v2")
    for line in lines[2]:
        store.apply(line, now=1.0)
    store.document_json(decoded_only=True)
    to_v1 = V2ToV1Bridge()
    out = [m for line in lines[2] for m in to_v1.convert(line).messages]
    to_v2 = V1ToV2Bridge()
    out += [m for line in lines[1] for m in to_v2.convert(line).messages]
    for message in out + list(to_v1.flush().messages):
        encode(message)


def _at(extra: int, work: Callable[[], bool]) -> bool:
    return _at(extra - 1, work) if extra else work()


def test_every_writer_writes_what_the_reader_read_at_any_call_depth() -> None:
    """The reader refuses a value at the limit only where the stack is too deep for its own
    parse; up to there every writer (encode, to_builtins, the store's document, both bridges)
    writes it: none recurses more per level than the parser (a v1 ``rawInput`` at the limit
    failed from 250 frames deeper than a test's stack, issue 27)."""
    lines = {v: [deep_update(v, w, MAX_DEPTH, f"c-{w}").encode() for w in WHERE] for v in (1, 2)}
    read = [extra for extra in range(0, 1000, 50) if _at(extra, lambda: _write_everything(lines))]
    assert read[:3] == [0, 50, 100], read  # read (and written) with room to spare


def cli(
    *args: str, stdin: bytes | None = None, cwd: Path | None = None
) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run(
        [*CLI, *args], input=stdin, capture_output=True, timeout=120, cwd=cwd, check=False
    )


def assert_sound(done: subprocess.CompletedProcess[bytes]) -> str:
    err = done.stderr.decode("utf-8", "replace")
    assert done.returncode not in (70, -6, -11), err
    for text in BROKEN:
        assert text not in err, err
    return err


def log(tmp: Path, version: int, depths: tuple[int, ...]) -> tuple[Path, list[str]]:
    """A log of one deep call per depth and place (ids ``d<depth>-<where>``)."""
    calls, lines = [], []
    for depth in depths:
        for where in WHERE:
            calls.append(f"d{depth}-{where}")
            lines.append(deep_update(version, where, depth, calls[-1]))
    path = tmp / f"deep-v{version}-{'-'.join(map(str, depths))}.jsonl"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path, calls


COMMANDS = {
    "inspect": ("inspect", "-o", "{out}"),
    "convert --to v1": ("convert", "--to", "v1"),
    "convert --to v2": ("convert", "--to", "v2"),
    "replay --json": ("replay", "--json"),
    "validate": ("validate",),
}


def _run(
    tmp: Path, command: str, depths: tuple[int, ...]
) -> tuple[subprocess.CompletedProcess[bytes], list[str], Path]:
    version = 1 if command == "convert --to v2" else 2
    path, calls = log(tmp, version, depths)
    out = tmp / "report.html"
    args = [word.format(out=out) for word in COMMANDS[command]]
    return cli(*args, str(path)), calls, out


@pytest.mark.parametrize("command", list(COMMANDS))
def test_lines_400_and_985_deep_are_refused_with_one_line_each_never_a_crash(
    tmp_path: Path, command: str
) -> None:
    done, calls, out = _run(tmp_path, command, DEEP)
    err = assert_sound(done)
    said = (err + done.stdout.decode()).count(LIMIT_SAID)
    assert said == len(calls), err + done.stdout.decode()[:2000]
    if command == "inspect":
        assert done.returncode == 0 and out.stat().st_size > 0
        assert "(0 tool calls," in err
    elif command == "validate":
        assert done.returncode == 1
    else:
        assert done.returncode == 0
        for call in calls:
            assert call.encode() not in done.stdout


@pytest.mark.parametrize("command", list(COMMANDS))
def test_lines_at_the_limit_are_read_and_written_whole(tmp_path: Path, command: str) -> None:
    done, calls, _out = _run(tmp_path, command, (MAX_DEPTH, MAX_DEPTH + 1))
    err = assert_sound(done)
    kept = [call for call in calls if call.startswith(f"d{MAX_DEPTH}-")]
    assert (err + done.stdout.decode()).count(LIMIT_SAID) == len(calls) - len(kept), err
    if command == "inspect":
        assert done.returncode == 0 and f"({len(kept)} tool calls," in err, err
        return
    if command == "validate":
        return  # the schema findings of the made-up calls; what matters is no crash
    assert done.returncode == 0, err
    written = [json.loads(line) for line in done.stdout.splitlines()]
    text = done.stdout.decode()
    for call in kept:
        assert call in text
    if command == "replay --json":
        (document,) = written
        shown = {c["toolCallId"] for s in document["sessions"].values() for c in s["toolCalls"]}
        assert shown == set(kept)
    deepest = max(nesting(line, 10_000) for line in done.stdout.splitlines())
    assert MAX_DEPTH - 8 <= deepest <= MAX_DEPTH + 8  # the value itself, re-enveloped


# --------------------------------------------------------------------------------------------
# Through the bridge: the editor's prompt is answered, the bridge exits 0


def _prompt(request_id: int, meta: str | None = None) -> bytes:
    params = {"sessionId": SID, "prompt": [{"type": "text", "text": "go"}], "_meta": "@V@"}
    line = json.dumps({"jsonrpc": "2.0", "id": request_id, "method": "session/prompt",
                       "params": params})  # fmt: skip
    return line.replace('"@V@"', meta if meta is not None else "{}").encode()


def _turn_end(agent: int) -> list[dict[str, Any]]:
    if agent == 1:
        return [{"send": {"jsonrpc": "2.0", "id": {"$id": "prompt"},
                          "result": {"stopReason": "end_turn"}}}]  # fmt: skip
    idle = {"sessionUpdate": "state_update", "state": "idle", "stopReason": "end_turn"}
    return [
        {"send": {"jsonrpc": "2.0", "id": {"$id": "prompt"}, "result": {"messageId": "u1"}}},
        {"send": update(idle)},
    ]


def _ended(editor: int, request_id: int) -> Any:
    def found(message: dict[str, Any]) -> bool:
        if editor == 1:
            return "method" not in message and message.get("id") == request_id
        body = message.get("params", {}).get("update", {})
        if message.get("method") == "session/update" and body.get("state") == "idle":
            return True
        return "method" not in message and message.get("id") == request_id and "error" in message

    return found


def _bridge(
    tmp: Path, pairing: tuple[int, int], steps: list[dict[str, Any]], prompts: list[bytes]
) -> tuple[int, str, RawClient]:
    editor, agent = pairing
    session = Session(tmp, editor, agent, steps)
    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(max(limit, 10_000))  # the test's json.loads of what passes through

    async def scenario() -> tuple[int, str, RawClient]:
        client = await session.start()
        for number, line in enumerate(prompts, 2):
            await client.send(line)
            await asyncio.wait_for(client.until(_ended(editor, number)), 60)
        code, err, _ = await client.finish()
        return code, err, client

    try:
        return bounded(scenario())
    finally:
        sys.setrecursionlimit(limit)


@pytest.mark.parametrize("pairing", CONVERTING + PASS_THROUGH)
def test_deep_updates_from_the_agent_never_end_the_bridge(
    tmp_path: Path, pairing: tuple[int, int]
) -> None:
    editor, agent = pairing
    raw = [
        {"raw": deep_update(agent, where, depth, f"d{depth}-{where}").replace('"s1"', f'"{SID}"')}
        for depth in (*DEEP, MAX_DEPTH, MAX_DEPTH + 1)
        for where in WHERE
    ]
    steps: list[dict[str, Any]] = [{"await": {"method": "session/prompt"}, "as": "prompt"}]
    steps += [*raw, *_turn_end(agent)]
    code, err, client = _bridge(tmp_path, pairing, steps, [_prompt(2)])
    assert code == 0, err
    for text in BROKEN:
        assert text not in err, err
    assert any(_ended(editor, 2)(m) for m in client.received)
    seen = {
        m["params"]["update"].get("toolCallId")
        for m in client.received
        if m.get("method") == "session/update"
    }
    seen.discard(None)
    if editor == agent:  # passed through byte for byte
        assert seen == {step["raw"].split('"toolCallId":"')[1].split('"')[0] for step in raw}
    else:  # converted: what the codec reads, and nothing deeper (one note each)
        assert seen == {f"d{MAX_DEPTH}-{where}" for where in WHERE}, err
        assert err.count("too deep") == len(WHERE) * 3, err


@pytest.mark.parametrize("pairing", CONVERTING + PASS_THROUGH)
@pytest.mark.parametrize("depth", [*DEEP, MAX_DEPTH, MAX_DEPTH + 1])
def test_a_deep_prompt_from_the_editor_is_answered(
    tmp_path: Path, pairing: tuple[int, int], depth: int
) -> None:
    editor, agent = pairing
    envelope = nesting(_prompt(2, nested(10)), 10_000) - 10  # the levels above `_meta`'s
    deep = _prompt(2, nested(depth - envelope))
    assert nesting(deep, 10_000) == depth
    steps: list[dict[str, Any]] = []
    for _ in range(2):  # the deep prompt (when it reaches the agent), then a plain one
        steps += [{"await": {"method": "session/prompt"}, "as": "prompt"}, *_turn_end(agent)]
    code, err, client = _bridge(tmp_path, pairing, steps, [deep, _prompt(3)])
    assert code == 0, err
    for text in BROKEN:
        assert text not in err, err
    assert any(_ended(editor, 3)(m) for m in client.received)
    (answer,) = [m for m in client.received if "method" not in m and m.get("id") == 2] or [
        {"result": "idle"}  # a v2 editor's turn ends with the idle state
    ]
    if editor != agent and depth > MAX_DEPTH:  # read as a value to convert: the codec's limit
        assert answer["error"]["code"] == -32700 and LIMIT_SAID in err, (answer, err)
    else:  # converted, or passed through: the agent answered
        assert "result" in answer, answer


# --------------------------------------------------------------------------------------------
# Item 4: every byte, or an error


class _Stingy:
    """A binary stream that takes at most ``most`` bytes a write (as a kernel may)."""

    def __init__(self, most: int) -> None:
        self.most, self.data, self.calls = most, bytearray(), 0

    def write(self, data: memoryview) -> int:
        self.calls += 1
        assert len(data) <= PIECE
        taken = bytes(data[: self.most])
        self.data += taken
        return len(taken)

    def flush(self) -> None:
        pass


def test_write_all_continues_after_short_writes() -> None:
    stream = _Stingy(4096)
    data = bytes(range(256)) * 1000
    write_all(stream, data)
    assert bytes(stream.data) == data and stream.calls == -(-len(data) // 4096)


def test_write_all_fails_loudly_when_nothing_is_taken() -> None:
    stream = _Stingy(0)
    with pytest.raises(OSError, match="took none"):
        write_all(stream, b"abc")


def test_write_out_goes_through_the_buffer_whole() -> None:
    class Out:
        def __init__(self) -> None:
            self.buffer = _Stingy(7)
            self.flushed = 0

        def write(self, text: str) -> int:  # pragma: no cover - never used with a buffer
            raise AssertionError(text)

        def flush(self) -> None:
            self.flushed += 1

    out = Out()
    write_out(out, b"x" * 100 + b"\n")  # type: ignore[arg-type]
    assert bytes(out.buffer.data) == b"x" * 100 + b"\n" and out.flushed == 1


def _big_log(tmp: Path, size: int, count: int = 2) -> Path:
    title = "x" * size
    lines = [
        json.dumps(
            update({"sessionUpdate": "tool_call_update", "toolCallId": f"c{n}", "title": title})
        )
        for n in range(count)
    ]
    path = tmp / "big.jsonl"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


@pytest.mark.parametrize("command", [("replay", "--json"), ("convert", "--to", "v1")])
def test_a_write_the_kernel_cuts_is_never_a_silent_exit_0(
    tmp_path: Path, command: tuple[str, ...]
) -> None:
    """A file-size limit cuts a write short as Linux cuts one over 2,147,479,552 bytes: the
    next write of the rest fails (``EFBIG``), and the command says so, exit 2."""
    path = _big_log(tmp_path, 3_000_000, count=1)  # one line: no later write to fail instead
    out = tmp_path / "out"
    limit = 1 << 20

    def small_files() -> None:
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit, resource.RLIM_INFINITY))

    with out.open("wb") as sink:
        done = subprocess.run(
            [*CLI, *command, "--max-line-bytes", "20000000", str(path)],
            stdout=sink, stderr=subprocess.PIPE, preexec_fn=small_files, timeout=120,
            check=False,
        )  # fmt: skip
    err = done.stderr.decode()
    assert done.returncode == 2, err
    assert "cannot write the output: File too large" in err
    assert out.stat().st_size == limit


@pytest.mark.parametrize("command", [("replay", "--json"), ("convert", "--to", "v1")])
def test_multi_megabyte_lines_through_a_slow_pipe_arrive_whole_and_apart(
    tmp_path: Path, command: tuple[str, ...]
) -> None:
    path = _big_log(tmp_path, 3_000_000)  # under the store's 4 MiB cap on one value
    process = subprocess.Popen(
        [*CLI, *command, "--max-line-bytes", "20000000", str(path)],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE,
    )  # fmt: skip
    assert process.stdout is not None
    received = bytearray()
    while piece := os.read(
        process.stdout.fileno(), 4096
    ):  # small reads: the writer meets a full pipe
        received += piece
    _, err = process.communicate(timeout=120)
    assert process.returncode == 0, err
    lines = bytes(received).split(b"\n")
    assert lines[-1] == b""
    values = [json.loads(line) for line in lines[:-1]]
    if command[0] == "replay":
        (document,) = values
        calls = [c for s in document["sessions"].values() for c in s["toolCalls"]]
        assert [len(c["title"]) for c in calls] == [3_000_000, 3_000_000]
    else:
        titles = [v["params"]["update"]["title"] for v in values]
        assert titles == ["x" * 3_000_000] * 2
