"""Batch lines cost what they hold (issue 27, items 1 and 2, the offline commands).

Real subprocesses (``python -m acp_toolcalls.cli``), each child's peak RSS read from
``os.wait4``; sizes that run in seconds when linear and fail the byte, line or memory bounds
when quadratic (the full sizes of the issue are measured in docs/robustness.md).

- ``convert --to v1`` of one batch line of 2,000 ``tool_call_content_chunk``: a batch line is
  one flush unit, so each call it touches goes out once (before: each element re-sent the
  call's whole content, 386 MB out and 800 MiB of memory for a 0.7 MB line). The output is
  still one batch line of valid v1 JSON-RPC, and it replays to the same state as the input.
- ``validate`` and ``inspect`` of a line ``[0,0,...]``: findings and notes of elements alike
  are counted past the first three (one finding ``$[3..N]`` with its count), in linear time.
- ``replay --json`` of a 2 MB ``[0,0,...]`` line: the batch is applied element by element
  from the parsed line (before: a model and an error per element, ~740 MiB).
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from acp_toolcalls import ToolCallStore
from acp_toolcalls.codec import to_builtins
from tests.builds import child_env

ROOT = Path(__file__).resolve().parents[2]
ENV = child_env()
CLI = [sys.executable, "-m", "acp_toolcalls.cli"]
MIB = 1024 * 1024


class Ran:
    def __init__(self, code: int, stdout: bytes, stderr: bytes, peak: int) -> None:
        self.code, self.stdout, self.stderr, self.peak = code, stdout, stderr, peak


# Runs the command as its own child and writes that child's peak RSS (KiB on Linux) to a file.
_MEASURE = (
    "import resource, subprocess, sys\n"
    "code = subprocess.call(sys.argv[2:])\n"
    "peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss\n"
    "open(sys.argv[1], 'w').write(str(peak))\n"
    "sys.exit(code)\n"
)


def run(tmp_path: Path, *argv: str, timeout: float = 300) -> Ran:
    """Run the command with stdout and stderr to files; ``peak``: its peak RSS in bytes."""
    out, err, peak = tmp_path / "stdout", tmp_path / "stderr", tmp_path / "peak"
    with out.open("wb") as stdout, err.open("wb") as stderr:
        done = subprocess.run(
            [sys.executable, "-c", _MEASURE, str(peak), *CLI, *argv],
            stdout=stdout,
            stderr=stderr,
            env=ENV,
            timeout=timeout,
            check=False,
        )
    kib = int(peak.read_text())
    return Ran(done.returncode, out.read_bytes(), err.read_bytes(), kib * 1024)


def chunk(call: str, text: str) -> dict[str, Any]:
    return {
        "jsonrpc": "2.0",
        "method": "session/update",
        "params": {
            "sessionId": "s1",
            "update": {
                "sessionUpdate": "tool_call_content_chunk",
                "toolCallId": call,
                "content": {"type": "content", "content": {"type": "text", "text": text}},
            },
        },
    }


def line(value: Any) -> bytes:
    return json.dumps(value, separators=(",", ":")).encode() + b"\n"


def zeros(count: int) -> bytes:
    return b"[" + b",".join([b"0"] * count) + b"]\n"


def state(store: ToolCallStore, calls: list[str]) -> list[Any]:
    """The calls' content as a v2 client holds it (texts only: what both versions carry)."""
    held = []
    for call in calls:
        snapshot = store.snapshot("s1", call)
        assert snapshot is not None
        held.append(to_builtins(snapshot.content))
    return held


# --- item 1: convert --to v1 --------------------------------------------------------------------


def test_convert_of_a_batch_of_chunks_stays_linear_and_replays_the_same(tmp_path: Path) -> None:
    elements = [chunk(f"c{i % 2}", f"{i:04d}" + "x" * 130) for i in range(2_000)]
    elements.insert(1_000, {"jsonrpc": "2.0", "method": "_ext/ping", "params": {}})
    log = tmp_path / "batch.jsonl"
    log.write_bytes(line(elements))
    size = log.stat().st_size
    ran = run(tmp_path, "convert", "--to", "v1", str(log))
    assert ran.code == 0, ran.stderr
    # Linear: each call once before the extension (a flush point: stream order) and once
    # after; the old output re-sent each call's whole content per chunk (386 MB here).
    assert len(ran.stdout) <= 2 * size
    assert ran.peak <= 160 * MIB, f"peak RSS {ran.peak / MIB:.0f} MiB"
    lines = ran.stdout.splitlines()
    assert len(lines) == 1  # a batch line stays one batch line
    batch = json.loads(lines[0])
    assert isinstance(batch, list) and batch
    for message in batch:  # valid v1 JSON-RPC notifications
        assert message["jsonrpc"] == "2.0" and isinstance(message["method"], str)
        assert "id" not in message
    kinds = [m["params"]["update"]["sessionUpdate"] for m in batch if "update" in m["params"]]
    assert kinds.count("tool_call") == 2  # first sight of each call, once
    assert len(batch) <= 8
    # Replayed, the output holds what the input held.
    original = ToolCallStore(version="v2")
    original.apply(log.read_bytes().strip())
    converted = ToolCallStore(version="v1")
    for data in lines:
        converted.apply(data)
    assert state(converted, ["c0", "c1"]) == state(original, ["c0", "c1"])


def test_convert_of_batch_lines_flushes_each_line(tmp_path: Path) -> None:
    # Two batch lines of one call: each line is one flush unit (one update per line), and
    # the last one carries the whole content.
    first = [chunk("c0", f"a{i}") for i in range(500)]
    second = [chunk("c0", f"b{i}") for i in range(500)]
    log = tmp_path / "two.jsonl"
    log.write_bytes(line(first) + line(second))
    ran = run(tmp_path, "convert", "--to", "v1", str(log))
    assert ran.code == 0, ran.stderr
    lines = [json.loads(data) for data in ran.stdout.splitlines()]
    assert [len(batch) for batch in lines] == [2, 1]  # (first sight, then the rest) / one
    content = lines[1][0]["params"]["update"]["content"]
    assert [item["content"]["text"] for item in content] == [
        *(f"a{i}" for i in range(500)),
        *(f"b{i}" for i in range(500)),
    ]


# --- item 2: validate, inspect, replay --json of [0,0,...] --------------------------------------


def test_validate_counts_batch_elements_alike(tmp_path: Path) -> None:
    count = 20_000  # 40 KB: seconds if linear; minutes and 20,000 findings when quadratic
    log = tmp_path / "zeros.jsonl"
    log.write_bytes(zeros(count))
    ran = run(tmp_path, "validate", "--protocol", "v2", str(log))
    assert ran.code == 1, ran.stderr
    out = ran.stdout.decode().splitlines()
    assert len(out) <= 8, out[:10]
    assert any(f"$[3..{count - 1}]" in text and f"{count - 3:,}" in text for text in out), out
    assert f"{count} findings" in out[-2]  # the summary counts every element
    listed = run(tmp_path, "validate", "--protocol", "v2", "--json", str(log))
    document = json.loads(listed.stdout)
    assert len(document["findings"]) == 4
    assert document["findings"][-1]["count"] == count - 3
    assert document["summary"] == {"schema-violation": count}


def test_inspect_of_a_batch_of_non_messages_is_bounded(tmp_path: Path) -> None:
    count = 20_000
    log = tmp_path / "zeros.jsonl"
    log.write_bytes(zeros(count))
    report = tmp_path / "report.html"
    ran = run(tmp_path, "inspect", "-o", str(report), str(log))
    assert ran.code == 0, ran.stderr
    notes = ran.stderr.decode().splitlines()
    assert len(notes) <= 8, notes[:10]  # before: a note per element
    assert any(f"$[3..{count - 1}]" in note for note in notes), notes
    assert report.stat().st_size < 1 * MIB


def test_replay_json_of_a_batch_of_non_messages_stays_small(tmp_path: Path) -> None:
    count = 1_000_000  # a 2 MB line
    log = tmp_path / "zeros.jsonl"
    log.write_bytes(zeros(count))
    ran = run(tmp_path, "replay", "--json", str(log))
    assert ran.code == 0, ran.stderr
    assert json.loads(ran.stdout) == {"sessions": {}}
    notes = ran.stderr.decode().splitlines()
    assert len(notes) <= 8, notes[:10]
    assert any(f"{count - 3:,} more batch elements" in note for note in notes), notes
    assert ran.peak <= 120 * MIB, f"peak RSS {ran.peak / MIB:.0f} MiB"  # before: ~740 MiB
    # Element by element, a batch with an invalid element replays as its messages one a line.
    messages = [chunk(f"c{i % 3}", f"t{i}") for i in range(30)]
    batch = tmp_path / "batch.jsonl"
    batch.write_bytes(line([*messages[:10], 0, *messages[10:]]))
    lines = tmp_path / "lines.jsonl"
    lines.write_bytes(b"".join(line(message) for message in messages))
    from_batch = run(tmp_path, "replay", "--json", str(batch))
    assert from_batch.stderr.count(b"batch element skipped") == 1
    assert b"$[10]: batch element skipped" in from_batch.stderr
    from_lines = run(tmp_path, "replay", "--json", str(lines))
    assert from_batch.stdout == from_lines.stdout
    assert json.loads(from_batch.stdout)["sessions"]["s1"]["toolCalls"]


@pytest.mark.slow
def test_validate_of_a_2_mb_batch_stays_small(tmp_path: Path) -> None:
    count = 1_000_000  # a 2 MB line; before: ~1 GiB (a model and an error per element)
    log = tmp_path / "zeros.jsonl"
    log.write_bytes(zeros(count))
    ran = run(tmp_path, "validate", "--protocol", "v2", "--json", str(log))
    assert ran.code == 1, ran.stderr
    document = json.loads(ran.stdout)
    assert document["summary"] == {"schema-violation": count}
    assert len(document["findings"]) == 4
    assert ran.peak <= 150 * MIB, f"peak RSS {ran.peak / MIB:.0f} MiB"


def test_convert_counts_the_losses_of_batch_elements_alike(tmp_path: Path) -> None:
    elements = [chunk("c0", f"t{i}") for i in range(2_000)]
    for element in elements:
        element["params"]["_meta"] = {"trace": 1}  # not carried to v1: a loss per element
    log = tmp_path / "meta.jsonl"
    log.write_bytes(line(elements) + zeros(2_000))
    ran = run(tmp_path, "convert", "--to", "v1", str(log))
    assert ran.code == 0, ran.stderr
    notes = ran.stderr.decode().splitlines()
    assert len(notes) <= 8, notes[:10]  # before: a line per element, 4,000
    assert any("$[3..1999].params._meta" in note and "1,997" in note for note in notes), notes
    assert any("line 2: $[0..1999]" in note and "2,000 elements" in note for note in notes)
