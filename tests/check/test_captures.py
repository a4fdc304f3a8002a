"""The capture formats ``inspect``, ``validate`` and ``replay`` read (D43).

- Real acp-devtools captures of the example agent (``tests/data/captures``, v1 and v2): every
  call, the right protocol, no finding, the capture's times; ``replay --json`` equals that of
  the messages unwrapped.
- The ACP-inspector and acp_debug formats, made from the same session, read alike.
- A ``bridge --log`` file is read by sides, as before.
- JSON objects that are no log: one line on stderr naming their keys and what would be read,
  exit 2. A line of another shape inside a capture: reported on its line, never dropped.

The commands run as real subprocesses.
"""

from __future__ import annotations

import base64
import gzip
import json
import re
import subprocess
import sys
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import pytest

from acp_toolcalls.report.captures import CaptureReader, NotACapture, read_capture
from tests.builds import child_env

ROOT = Path(__file__).resolve().parents[2]
CAPTURES = ROOT / "tests" / "data" / "captures"
DEVTOOLS = {1: CAPTURES / "devtools-v1.jsonl", 2: CAPTURES / "devtools-v2.jsonl"}
BRIDGE_LOG = ROOT / "tests" / "data" / "v1-client-v2-agent.jsonl"
ENV = child_env()


def cli(*args: str, stdin: bytes | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "acp_toolcalls.cli", *args],
        capture_output=True,
        text=True,
        env=ENV,
        input=None if stdin is None else stdin.decode("utf-8"),
        timeout=120,
    )


def records(version: int) -> list[dict[str, Any]]:
    return [json.loads(line) for line in DEVTOOLS[version].read_text("utf-8").splitlines()]


def write(path: Path, lines: list[str]) -> Path:
    path.write_text("".join(line + "\n" for line in lines), encoding="utf-8")
    return path


def unwrapped(version: int, tmp_path: Path) -> Path:
    """The capture's messages as plain JSON Lines: the wire lines themselves."""
    return write(tmp_path / f"plain-v{version}.jsonl", [r["raw"] for r in records(version)])


def replay_json(log: Path, *options: str) -> Any:
    done = cli("replay", "--json", *options, str(log))
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def inspected(log: Path, tmp_path: Path, *options: str) -> tuple[dict[str, Any], str]:
    """The ``main`` data of the report ``inspect`` writes for ``log``, and its stderr."""
    page = tmp_path / "report.html"
    done = cli("inspect", "-o", str(page), *options, str(log))
    assert done.returncode == 0, done.stderr
    assert "Traceback" not in done.stderr
    found = re.search(
        r'<script type="application/x-acp-report" id="main">([^<]*)<', page.read_text("utf-8")
    )
    assert found is not None
    return json.loads(gzip.decompress(base64.b64decode(found.group(1)))), done.stderr


def entry_times(page: Path) -> set[float]:
    """The times of every history entry in the report's parts."""
    times: set[float] = set()
    part = r'<script type="application/x-acp-report" id="p\d+">([^<]*)<'
    for packed in re.findall(part, page.read_text("utf-8")):
        stack = [json.loads(gzip.decompress(base64.b64decode(packed)))]
        while stack:
            value = stack.pop()
            if isinstance(value, dict):
                entries = value.get("entries")
                if isinstance(entries, list):
                    times |= {e["t"] for e in entries if isinstance(e, dict) and "t" in e}
                stack += value.values()
            elif isinstance(value, list):
                stack += value
    return times


# --- acp-devtools: real captures ------------------------------------------------------------


@pytest.mark.parametrize("version", [1, 2])
def test_inspect_reads_an_acp_devtools_capture(version: int, tmp_path: Path) -> None:
    report, stderr = inspected(DEVTOOLS[version], tmp_path)
    plain, _ = inspected(unwrapped(version, tmp_path), tmp_path)
    assert len(report["cards"]) == len(plain["cards"]) == 3
    (side,) = report["sides"]
    assert side["protocol"] == f"v{version}"
    assert side["summary"]["calls"] == 3
    assert report["findings"] == []
    assert "(3 tool calls, 0 findings" in stderr
    # The capture's times (Unix milliseconds), not line numbers.
    times = [r["timestamp"] / 1000 for r in records(version)]
    assert report["started"] == pytest.approx(min(times))
    assert report["duration"] == pytest.approx(max(times) - min(times))
    (ask,) = side["asks"]
    asked = next(r for r in records(version) if r.get("method") == "session/request_permission")
    assert ask["t"] == pytest.approx(asked["timestamp"] / 1000)
    assert ask["answer"]["t"] is not None
    shown = entry_times(tmp_path / "report.html")  # the plain log's report was written last
    assert shown == set()
    inspected(DEVTOOLS[version], tmp_path)
    shown = entry_times(tmp_path / "report.html")
    assert shown and {round(t, 3) for t in shown} <= {round(t, 3) for t in times}


@pytest.mark.parametrize("version", [1, 2])
def test_validate_reads_an_acp_devtools_capture(version: int) -> None:
    done = cli("validate", "--json", str(DEVTOOLS[version]))
    assert done.returncode == 0, done.stdout + done.stderr
    result = json.loads(done.stdout)
    assert result["findings"] == []
    assert result["protocol"] == f"v{version}"
    assert result["messages"] == len(records(version))


@pytest.mark.parametrize("version", [1, 2])
def test_replay_of_a_capture_equals_replay_of_its_messages(version: int, tmp_path: Path) -> None:
    expected = replay_json(unwrapped(version, tmp_path))
    assert expected["sessions"]
    assert replay_json(DEVTOOLS[version]) == expected


def test_replay_follow_reads_a_capture_on_a_pipe() -> None:
    done = cli("replay", "--follow", "--width", "200", "-", stdin=DEVTOOLS[1].read_bytes())
    assert done.returncode == 0, done.stderr
    assert "completed" in done.stdout and done.stderr == ""


def _begun_after_initialize(tmp_path: Path) -> Path:
    """The v1 capture without its first four lines (initialize and session/new, each way)."""
    lines = DEVTOOLS[1].read_bytes().splitlines(keepends=True)
    return write(tmp_path / "begun-later.jsonl", [line.decode().rstrip("\n") for line in lines[4:]])


def test_a_capture_begun_after_its_initialize_is_replayed_in_its_version(tmp_path: Path) -> None:
    # Before: read as v2 (no initialize), each v1 `tool_call` was "ignored" and no call shown.
    log = _begun_after_initialize(tmp_path)
    done = cli("replay", "--json", str(log))
    assert done.returncode == 0 and done.stderr == ""
    assert json.loads(done.stdout) == replay_json(log, "--protocol", "v1")
    assert len(json.loads(done.stdout)["sessions"]["sess-1"]["toolCalls"]) == 3
    report, _ = inspected(log, tmp_path)
    assert len(report["cards"]) == 3 and report["sides"][0]["protocol"] == "v1"
    follow = cli("replay", "--follow", "--width", "200", "-", stdin=log.read_bytes())
    assert follow.returncode == 0 and follow.stderr == "" and "completed" in follow.stdout


def test_strict_still_stops_at_the_first_invalid_line_while_the_version_waits(
    tmp_path: Path,
) -> None:
    log = _begun_after_initialize(tmp_path)
    lines = log.read_text().splitlines()
    lines.insert(0, '{"jsonrpc":"2.0","method":"session/update","params":7}')
    write(log, lines)
    done = cli("replay", "--json", "--strict", str(log))
    assert done.returncode == 2 and "line 1:" in done.stderr


# --- the other formats ----------------------------------------------------------------------


def _inspector_line(record: dict[str, Any], number: int) -> str:
    """An ACP-inspector trace line: `ts` ISO-8601 (or Unix ms), `direction`, `json` a string."""
    millis = record["timestamp"]
    when: Any = millis
    if number % 2:
        moment = datetime.fromtimestamp(millis / 1000, timezone.utc).replace(tzinfo=None)
        when = moment.isoformat(timespec="milliseconds")  # no zone: UTC
    direction = "fromClient" if record["direction"] == "editor-to-agent" else "FROMAGENT"
    return json.dumps({"ts": when, "direction": direction, "json": record["raw"]})


def _acp_debug_line(record: dict[str, Any], number: int) -> str:
    """An acp_debug recording line: `ts` Unix seconds, `dir`, `msg` the message itself."""
    direction = "c2a" if record["direction"] == "editor-to-agent" else "a2c"
    message = json.loads(record["raw"])
    return json.dumps({"ts": record["timestamp"] / 1000, "dir": direction, "msg": message})


@pytest.mark.parametrize(
    "shape", [_inspector_line, _acp_debug_line], ids=["inspector", "acp_debug"]
)
def test_the_other_formats_read_alike(shape: Any, tmp_path: Path) -> None:
    for version in (1, 2):
        log = write(tmp_path / "log.jsonl", [shape(r, n) for n, r in enumerate(records(version))])
        assert replay_json(log) == replay_json(unwrapped(version, tmp_path))
        report, _ = inspected(log, tmp_path)
        assert len(report["cards"]) == 3 and report["findings"] == []
        assert report["sides"][0]["protocol"] == f"v{version}"
        assert report["started"] == pytest.approx(records(version)[0]["timestamp"] / 1000)
        done = cli("validate", str(log))
        assert done.returncode == 0, done.stdout


def test_a_bridge_log_is_still_read_by_sides(tmp_path: Path) -> None:
    report, _ = inspected(BRIDGE_LOG, tmp_path)
    assert [side["name"] for side in report["sides"]] == ["agent", "client"]
    assert [side["protocol"] for side in report["sides"]] == ["v2", "v1"]
    assert report["started"] is not None
    client = replay_json(BRIDGE_LOG, "--side", "client")
    agent = replay_json(BRIDGE_LOG, "--side", "agent")
    assert client["sessions"] and agent["sessions"] and client != agent
    for side in ("client", "agent"):
        done = cli("validate", "--side", side, str(BRIDGE_LOG))
        assert done.returncode == 0, done.stdout


@pytest.mark.parametrize("command", ["validate", "replay"])
def test_a_bridge_log_of_the_other_side_only_is_no_clean_log(command: str) -> None:
    # The SDK client talked to the agent directly: every record is the agent side's, so the
    # default --side client read nothing; "0 lines read, no findings" and exit 0 hid that.
    log = ROOT / "tests" / "data" / "real-agents" / "codex-exec-v1-direct.jsonl"
    done = cli(command, str(log))
    assert done.returncode == 2 and done.stdout == ""
    assert done.stderr == (
        f"acp-toolcalls {command}: {str(log)!r} is a `bridge --log` file with no line of the "
        "client side (all its records are the agent side's): read it with --side agent\n"
    )
    assert cli(command, "--side", "agent", str(log)).returncode == 0


# --- what is not read -----------------------------------------------------------------------


@pytest.mark.parametrize("command", ["inspect", "validate", "replay"])
def test_objects_of_an_unknown_shape_are_refused(command: str, tmp_path: Path) -> None:
    log = write(tmp_path / "odd.jsonl", ['{"a": 1, "b": 2, "c": 3}'] * 3)
    done = cli(command, str(log))
    assert done.returncode == 2
    assert done.stderr.count("\n") == 1 and "Traceback" not in done.stderr
    assert (
        f"acp-toolcalls {command}: {str(log)!r} is not a log of ACP messages: its lines are "
        'JSON objects with the keys "a", "b", "c"; give JSON Lines of JSON-RPC messages, a '
        "`bridge --log` file, or a capture of acp-devtools"
    ) in done.stderr
    assert not (tmp_path / "odd.html").exists()


def test_a_line_of_another_shape_in_a_capture_is_reported_on_its_line(tmp_path: Path) -> None:
    lines = DEVTOOLS[1].read_text("utf-8").splitlines()
    lines.insert(4, '{"note": "\\u001b[2Jhello", "direction": "sideways", "raw": "{}"}')
    log = write(tmp_path / "mixed.jsonl", lines)
    expected = replay_json(unwrapped(1, tmp_path))

    done = cli("replay", "--json", str(log))
    assert done.returncode == 0 and json.loads(done.stdout) == expected
    assert done.stderr.startswith("line 5: $: a JSON object with the keys ")
    assert 'whose "direction" is "sideways", not "editor-to-agent" or ' in done.stderr
    assert "\x1b" not in done.stderr and done.stderr.count("\n") == 1
    assert cli("replay", "--strict", str(log)).returncode == 2

    done = cli("validate", "--json", str(log))
    assert done.returncode == 1
    (finding,) = json.loads(done.stdout)["findings"]
    assert (finding["line"], finding["code"]) == (5, "not-a-message")

    report, stderr = inspected(log, tmp_path)
    assert [(f[0], f[3]) for f in report["findings"]] == [(5, "not-a-message")]
    assert len(report["cards"]) == 3 and report["sides"][0]["protocol"] == "v1"
    assert "line 5: $: " in stderr and "\x1b" not in stderr


# --- the reader -----------------------------------------------------------------------------


def _read(*lines: bytes) -> list[Any]:
    return list(read_capture(enumerate(lines, 1)))


def test_a_string_message_is_the_wire_text_exactly() -> None:
    wire = '{"jsonrpc":"2.0","id":1,"id":2,"result":{}}'  # a key twice: the readers see it
    (item,) = _read(json.dumps({"ts": 5, "direction": "fromAgent", "json": wire}).encode())
    assert item.message == wire.encode() and item.sender == "agent" and item.time == 0.005


def test_an_embedded_message_is_its_bytes_and_plain_logs_pass_unchanged() -> None:
    line = b'{"ts": 1.5, "dir": "a2c", "msg": {"jsonrpc": "2.0", "method": "x"}}'
    (item,) = _read(line)
    assert (item.message, item.time, item.sender) == (
        b'{"jsonrpc": "2.0", "method": "x"}',
        1.5,
        "agent",
    )
    plain = [b"", b"not json", b'{"jsonrpc": "2.0", "id": 1, "result": {}}', b'{"a": 1}']
    assert [(i.line, i.message, i.note) for i in _read(*plain)] == [
        (n, data, None) for n, data in enumerate(plain, 1)
    ]


def test_no_evidence_is_no_refusal_but_objects_alone_are() -> None:
    assert [i.message for i in _read(b"", b"42", b"not json")] == [b"", b"42", b"not json"]
    with pytest.raises(NotACapture) as refused:
        _read(b"{}", b"")
    assert "its lines are empty JSON objects" in refused.value.describe("x")
    reader = CaptureReader()
    with pytest.raises(NotACapture):
        for number in range(1, 10):
            reader.feed(number, b'{"kind": %d}' % number)
    assert number == 5  # refused after NOT_A_LOG_AFTER objects, without reading on


@pytest.mark.parametrize(
    ("text", "seconds"),
    [
        ("2025-01-15T10:00:00.000Z", 1736935200.0),
        ("2025-01-15T10:00:00.1234567+00:00", 1736935200.123456),  # .NET's 7 digits
        ("2025-01-15T12:00:00+02:00", 1736935200.0),
        ("2025-01-15T05:30:00-0430", 1736935200.0),
        ("2025-01-15 10:00:00.5", 1736935200.5),  # no zone: UTC
        ("yesterday", None),
        ("2025-13-01T00:00:00Z", None),
    ],
)
def test_iso_times_are_read_on_every_python(text: str, seconds: float | None) -> None:
    line = json.dumps({"ts": text, "direction": "fromClient", "json": "{}"}).encode()
    (item,) = _read(line)
    assert item.time == (None if seconds is None else pytest.approx(seconds))


def test_an_acp_devtools_export_is_refused_with_the_way_to_its_lines(tmp_path: Path) -> None:
    export: dict[str, Any] = {
        "version": 1,
        "exportedAt": 1796588730000,
        "tool": {"name": "acp-devtools", "version": "0.1.0"},
        "session": {"id": 1, "name": None, "agentCommand": "x", "clientName": None,
                    "startedAt": 1796588728000, "endedAt": None},
        "messages": records(1),
    }  # fmt: skip
    log = write(tmp_path / "export.json", [json.dumps(export)])
    done = cli("validate", str(log))
    assert done.returncode == 2 and done.stderr.count("\n") == 1
    assert "is an export of acp-devtools" in done.stderr
    assert "`jq -c '.messages[]' FILE` writes its capture lines" in done.stderr
    lines = write(tmp_path / "lines.jsonl", [json.dumps(m) for m in export["messages"]])
    assert cli("validate", str(lines)).returncode == 0
