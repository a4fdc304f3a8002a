"""The commands under adversarial input and hostile I/O (robustness issue, parts 2 and 3).

Part 2 through ``replay``, ``validate`` and ``convert``: for every adversarial input, the
diagnostic names the input line (and the JSON path), and the valid lines before and after it
are applied (``replay --json`` holds both calls, ``convert`` writes both, ``validate`` checks
both and finds nothing in them). Big inputs are generated lazily while the command reads them
(``adversarial_cases.lazy_log``); the million-element floods run at a twentieth of their size
against caps scaled the same way, so that a cap bites as often per line as at full size (the
full sizes are measured by ``benchmarks/adversarial.py``, docs/robustness.md).

Part 3: every command gives a one-line error naming the line for bad input, documents its
exit codes in ``--help``, never prints a traceback, and ends quietly on a closed stdout
(subprocess runs), ``--follow`` included.
"""

from __future__ import annotations

import functools
import io
import itertools
import json
import subprocess
import sys
import time
from base64 import b64encode
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from acp_toolcalls import Limits
from acp_toolcalls.bridge import V2ToV1Bridge
from acp_toolcalls.check import ToolCallLinter, validate_message
from acp_toolcalls.check import _validator as validator_module
from acp_toolcalls.cli import INTERNAL_ERROR, build_parser, main
from acp_toolcalls.cli import convert as convert_module
from acp_toolcalls.cli import replay as replay_module
from acp_toolcalls.cli.validate import read_lines
from acp_toolcalls.codec import DEFAULT_MAX_BYTES
from tests.adversarial_cases import (
    AFTER,
    BASE64_LINES,
    BEFORE,
    DUPLICATE,
    ESCAPED_SURROGATE,
    INFINITY,
    INVALID_UTF8,
    NAN,
    RAW_SURROGATE,
    LazyStream,
    MiB,
    chunks,
    deep,
    endless_line,
    framed,
    ids,
    jsonl,
    lazy_log,
    location_line,
    long_line,
    permission,
    update,
)
from tests.builds import child_env

ROOT = Path(__file__).resolve().parents[2]
LIMIT = DEFAULT_MAX_BYTES
COMMANDS = {
    "replay": ["replay", "--json"],
    "validate": ["validate", "--json", "--protocol", "v2"],
    "convert": ["convert", "--to", "v1"],
}


@dataclass
class Run:
    code: int
    out: str
    err: str

    @property
    def err_lines(self) -> list[str]:
        return self.err.splitlines()

    def document(self) -> Any:
        return json.loads(self.out)

    def messages(self) -> list[Any]:
        return [json.loads(line) for line in self.out.splitlines()]


def run(
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    argv: list[str],
    lines: Iterable[bytes],
) -> Run:
    """``main(argv)`` reading ``lines`` (JSON Lines, generated while read) on stdin."""
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(lazy_log(lines)))
    code = main(argv)
    captured = capsys.readouterr()
    assert "Traceback" not in captured.err
    return Run(code, captured.out, captured.err)


def replay_calls(result: Run) -> list[str]:
    return [c["toolCallId"] for c in result.document()["sessions"]["s1"]["toolCalls"]]


def converted_ids(result: Run) -> list[str]:
    out = []
    for message in result.messages():
        assert validate_message(message, "v1") == [], message
        if message.get("method") == "session/update":
            out.append(message["params"]["update"]["toolCallId"])
    return out


def findings(result: Run) -> list[tuple[int, str, str]]:
    return [(f["line"], f["path"], f["code"]) for f in result.document()["findings"]]


def check_framing(command: str, result: Run, bad_lines: int = 1) -> None:
    """The valid lines around the bad part were applied (replay, convert) or checked clean
    (validate: no finding on the first or last line)."""
    if command == "replay":
        calls = replay_calls(result)
        assert calls[0] == "before" and calls[-1] == "after", calls
    elif command == "convert":
        got = converted_ids(result)
        assert got[0] == "before" and got[-1] == "after", got
    else:
        document = result.document()
        assert document["lines"] == bad_lines + 2
        lines = {line for line, _, _ in findings(result)}
        assert 1 not in lines and bad_lines + 2 not in lines


# --------------------------------------------------------------------------------------------
# Part 2: every adversarial input through every command

OVERLONG = (
    f"line 2: $: line of more than {LIMIT} bytes: over the limit of {LIMIT} (--max-line-bytes); "
    "skipped to its end"
)

BAD_BYTE = INVALID_UTF8.index(b"\xff")
SURROGATE_BYTE = RAW_SURROGATE.index(b"\xed")
UNREADABLE = {
    # name: (line, replay/convert stderr line, validate finding (path, code, message start))
    "64-MiB-line": (
        long_line(64 * MiB),
        OVERLONG,
        ("$", "line-too-long", f"line of {64 * MiB} bytes is over the limit of {LIMIT} bytes"),
    ),
    "nesting-100000": (
        deep(100_000),
        "line 2: $: nesting is too deep (over the limit of 256 levels); line skipped",
        ("$", "invalid-json", "not readable JSON: nested too deeply"),
    ),
    "invalid-utf8": (
        INVALID_UTF8,
        f"line 2: $: not valid UTF-8 at byte {BAD_BYTE}: invalid start byte; line skipped",
        ("$", "invalid-utf8", f"invalid UTF-8 at byte {BAD_BYTE}"),
    ),
    "utf8-encoded-surrogate": (
        RAW_SURROGATE,
        f"line 2: $: not valid UTF-8 at byte {SURROGATE_BYTE}: invalid "
        "continuation byte; line skipped",
        ("$", "invalid-utf8", f"invalid UTF-8 at byte {SURROGATE_BYTE}"),
    ),
    "lone-surrogate-escape": (
        ESCAPED_SURROGATE,
        "line 2: $: not valid JSON: a string holds an unpaired UTF-16 surrogate escape",
        ("$", "invalid-json", "not valid JSON: a string holds an unpaired UTF-16 surrogate"),
    ),
    "NaN": (
        NAN,
        f"line 2: $: not valid JSON: NaN is not a JSON number (byte {NAN.index(b'NaN')}); "
        "line skipped",
        ("$", "invalid-json", f"not valid JSON: NaN is not a JSON number (byte {NAN.index(b'N')})"),
    ),
    "-Infinity": (
        INFINITY,
        f"line 2: $: not valid JSON: -Infinity is not a JSON number (byte "
        f"{INFINITY.index(b'-Inf')}); line skipped",
        ("$", "invalid-json", "not valid JSON: -Infinity is not a JSON number"),
    ),
}


@pytest.mark.parametrize("command", COMMANDS)
@pytest.mark.parametrize("case", UNREADABLE)
def test_unreadable_line_is_reported_and_the_lines_around_it_are_applied(
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    command: str,
    case: str,
) -> None:
    bad, said, (path, code, message) = UNREADABLE[case]
    result = run(capsys, monkeypatch, COMMANDS[command], framed([bad]))
    check_framing(command, result)
    if command == "validate":
        assert result.code == 1
        assert findings(result) == [(2, path, code)]
        assert result.document()["findings"][0]["message"].startswith(message)
    else:
        assert result.code == 0
        assert len(result.err_lines) == 1  # one line for the one bad input line
        assert result.err_lines[0].startswith(said), result.err_lines


@pytest.mark.parametrize("command", ["replay", "convert"])
def test_strict_stops_at_an_unreadable_line(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, command: str
) -> None:
    for bad, _, _ in UNREADABLE.values():
        result = run(capsys, monkeypatch, [*COMMANDS[command], "--strict"], framed([bad]))
        assert result.code == 2
        assert result.err_lines[-1].endswith("(--strict): stopped")
        assert "line 2" in result.err_lines[-1]


def test_duplicate_keys(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    said = (
        "line 2: $.params.update.title: key 'title' occurs 2 times in one object; "
        "the last value is used"
    )
    replayed = run(capsys, monkeypatch, COMMANDS["replay"], framed([DUPLICATE]))
    check_framing("replay", replayed)
    assert replayed.code == 0 and replayed.err_lines == [said]
    (dup,) = [
        c for c in replayed.document()["sessions"]["s1"]["toolCalls"] if c["toolCallId"] == "dup"
    ]
    assert dup["title"] == "second"

    converted = run(capsys, monkeypatch, COMMANDS["convert"], framed([DUPLICATE]))
    check_framing("convert", converted)
    assert converted.code == 0 and converted.err_lines == [said]
    assert converted.messages()[1]["params"]["update"]["title"] == "second"

    validated = run(capsys, monkeypatch, COMMANDS["validate"], framed([DUPLICATE]))
    check_framing("validate", validated)
    assert findings(validated) == [(2, "$.params.update.title", "duplicate-key")]

    for command in ("replay", "convert"):  # a line whose earlier value was dropped
        strict = run(capsys, monkeypatch, [*COMMANDS[command], "--strict"], framed([DUPLICATE]))
        assert strict.code == 2 and strict.err_lines[0] == said


@pytest.mark.parametrize("number", [2**64, 10**30], ids=["2**64", "10**30"])
def test_line_beyond_64_bits(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, number: int
) -> None:
    bad = location_line(number)
    path = "$.params.update.locations[0].line"
    reason = f"{number} is out of range 1..4294967295; treated as omitted"

    replayed = run(capsys, monkeypatch, COMMANDS["replay"], framed([bad]))
    check_framing("replay", replayed)
    assert replayed.err_lines == [f"line 2: {path}: {reason}"]
    (loc,) = [
        c for c in replayed.document()["sessions"]["s1"]["toolCalls"] if c["toolCallId"] == "loc"
    ]
    assert loc["locations"] == [{"path": "/big"}, {"path": "/ok", "line": 2}]

    converted = run(capsys, monkeypatch, COMMANDS["convert"], framed([bad]))
    check_framing("convert", converted)
    assert converted.err_lines == [f"line 2: {path}: input salvaged: {reason}"]

    validated = run(capsys, monkeypatch, COMMANDS["validate"], framed([bad]))
    check_framing("validate", validated)
    assert findings(validated) == [(2, path, "lenient-salvage")]


def test_bad_base64_padding_in_a_terminal_chunk(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    said = "line 4: $.params.update.data: not valid base64: terminal output chunk dropped"
    replayed = run(capsys, monkeypatch, COMMANDS["replay"], framed(BASE64_LINES))
    check_framing("replay", replayed)
    assert replayed.err_lines == [said]
    (terminal,) = replayed.document()["sessions"]["s1"]["terminals"]
    assert terminal["output"] == {"data": b64encode(b"abcdef").decode()}  # the others appended

    converted = run(capsys, monkeypatch, COMMANDS["convert"], framed(BASE64_LINES))
    check_framing("convert", converted)
    assert converted.err_lines == [said]
    shown = converted.messages()[-2]["params"]["update"]["content"][0]["content"]["text"]
    assert shown == "```\nabcdef\n```"

    validated = run(capsys, monkeypatch, COMMANDS["validate"], framed(BASE64_LINES))
    check_framing("validate", validated, bad_lines=4)
    assert findings(validated) == [(4, "$.params.update.data", "invalid-base64")]


# --- the floods ------------------------------------------------------------------------------

IDS = 20_000  # with a cap of 1,000: the ratio of a million ids to the default cap
CHUNKS = 50_000  # with a cap of 500: the ratio of a million chunks to the default cap


def scaled_store_limits(monkeypatch: pytest.MonkeyPatch, limits: Limits) -> None:
    """Default limits a fifth of the real ones, for replay --bounded and convert's bridge (its
    store's, given to the bridge: the compiled store does not read a patched module global)."""
    monkeypatch.setattr(replay_module, "Limits", lambda: limits)
    monkeypatch.setattr(
        convert_module, "V2ToV1Bridge", functools.partial(V2ToV1Bridge, limits=limits)
    )


def test_a_flood_of_ids_hits_the_tool_call_cap(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    cap = 1_000
    scaled_store_limits(monkeypatch, Limits(max_tool_calls=cap))
    said = f"$: max_tool_calls: s1: evicted {cap // 8} tool call(s) (cap {cap} per session)"

    bounded = run(capsys, monkeypatch, ["replay", "--json", "--bounded"], framed(ids(IDS)))
    assert bounded.code == 0
    calls = replay_calls(bounded)
    assert len(calls) <= cap and calls[-1] == "after"
    assert bounded.err_lines[0] == f"line {cap + 1}: {said}"  # the first eviction, line named
    assert len(bounded.err_lines) == (IDS + 2 - len(calls)) // (cap // 8)

    whole = run(capsys, monkeypatch, ["replay", "--json"], framed(ids(IDS)))
    assert whole.err == "" and len(replay_calls(whole)) == IDS + 2  # the contract: everything

    converted = run(capsys, monkeypatch, COMMANDS["convert"], framed(ids(IDS // 4)))
    assert converted.code == 0
    got = converted_ids(converted)
    assert got[0] == "before" and got[-1] == "after" and len(got) == IDS // 4 + 2
    assert converted.err_lines[0] == f"line {cap + 1}: $.max_tool_calls: s1: evicted 125 " + (
        f"tool call(s) (cap {cap} per session)"
    )


def test_a_flood_of_ids_hits_the_linter_cap(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(
        validator_module, "ToolCallLinter", functools.partial(ToolCallLinter, max_calls=200)
    )
    result = run(capsys, monkeypatch, COMMANDS["validate"], framed(ids(1_000)))
    assert result.code == 1
    limited = [(line, path) for line, path, code in findings(result) if code == "lint-limit"]
    assert limited[0] == (201, "$") and len(limited) == (1_002 - 201) // 25 + 1
    assert {code for _, _, code in findings(result)} == {"lint-limit", "never-final"}


def test_a_call_with_a_flood_of_chunks_hits_the_content_cap(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    cap = 500
    scaled_store_limits(monkeypatch, Limits(max_content_items=cap))
    bounded = run(capsys, monkeypatch, ["replay", "--json", "--bounded"], framed(chunks(CHUNKS)))
    assert bounded.code == 0
    calls = bounded.document()["sessions"]["s1"]["toolCalls"]
    assert [c["toolCallId"] for c in calls] == ["before", "stream", "after"]
    stream = calls[1]
    assert stream["status"] == "completed"  # the update after the chunks
    texts = [item["content"]["text"] for item in stream["content"]]
    assert len(texts) <= cap and texts[0] == "0" and texts[-1] == str(CHUNKS - 1)
    first = bounded.err_lines[0]
    dropped = "dropped 63 content item(s) after the first 125 "
    assert first.startswith(f"line {cap + 3}: $: max_content_items: stream: {dropped}")

    converted = run(
        capsys, monkeypatch, ["convert", "--to", "v1", "--coalesce"], framed(chunks(CHUNKS))
    )
    assert converted.code == 0
    got = converted_ids(converted)
    assert got[0] == "before" and got[-1] == "after"
    sent = [m["params"]["update"] for m in converted.messages()[1:-1]]
    assert all(len(update.get("content", [])) <= cap + 1 for update in sent)  # + the marker
    marker = sent[-1]["content"][cap // 4]["content"]["text"]
    assert "content item(s) omitted" in marker
    assert sent[-1]["status"] == "completed"
    assert converted.err_lines[0].startswith(f"line {cap + 3}: $.max_content_items: stream: ")

    validated = run(capsys, monkeypatch, COMMANDS["validate"], framed(chunks(500)))
    assert validated.code == 0 and findings(validated) == []  # valid protocol: nothing to say


def test_a_permission_request_with_100000_options(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    request = permission(100_000)
    replayed = run(capsys, monkeypatch, COMMANDS["replay"], framed([request]))
    check_framing("replay", replayed)
    assert replayed.err == ""  # the store applies the subject; options are prompt data
    assert replay_calls(replayed) == ["before", "edit", "after"]

    converted = run(capsys, monkeypatch, COMMANDS["convert"], framed([request]))
    assert converted.code == 0
    assert converted_ids(converted) == ["before", "edit", "after"]  # the call, not the request
    assert all(m.get("method") != "session/request_permission" for m in converted.messages())
    assert converted.err_lines[-2:] == [
        "line 2: $.params.options: 100000 options, over the cap of 100 (max_permission_options): "
        "request not sent; answered the agent `cancelled`",
        'line 2: $: answered the agent (not in the output): {"jsonrpc":"2.0","id":1,"result":'
        '{"outcome":{"outcome":"cancelled"}}}',
    ]
    strict = run(capsys, monkeypatch, [*COMMANDS["convert"], "--strict"], framed([request]))
    assert strict.code == 2

    # validate: schema-valid, so only checked (at 2,000 options: the schema check of each
    # option is what costs, ~0.2 ms).
    validated = run(capsys, monkeypatch, COMMANDS["validate"], framed([permission(2_000)]))
    assert validated.document()["messages"] == 3
    assert findings(validated) == [(2, "$.params.subject.toolCall", "never-final")]


# --- over-long and endless lines --------------------------------------------------------------


@pytest.mark.parametrize("command", COMMANDS)
def test_max_line_bytes_is_configurable(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, command: str
) -> None:
    bad = long_line(5_000)
    result = run(
        capsys, monkeypatch, [*COMMANDS[command], "--max-line-bytes", "4096"], framed([bad])
    )
    check_framing(command, result)
    if command == "validate":
        assert findings(result) == [(2, "$", "line-too-long")]
    else:
        assert result.err_lines == [
            "line 2: $: line of more than 4096 bytes: over the limit of 4096 (--max-line-bytes); "
            "skipped to its end"
        ]
    at_limit = run(
        capsys, monkeypatch, [*COMMANDS[command], "--max-line-bytes", str(len(bad))], framed([bad])
    )
    assert at_limit.err == "" or command == "validate"
    if command == "replay":
        assert replay_calls(at_limit) == ["before", "bad", "after"]
    for value in ("0", "x", "-5"):
        assert main([*COMMANDS[command], "--max-line-bytes", value]) == 2
        err = capsys.readouterr().err
        assert len(err.splitlines()) == 1 and "--max-line-bytes" in err


class _Recorder(io.StringIO):
    """stderr that notes how much of the input had been read when each line was written."""

    def __init__(self, stream: LazyStream) -> None:
        super().__init__()
        self.stream = stream
        self.at: list[tuple[int, str]] = []

    def write(self, text: str) -> int:
        if text.strip():
            self.at.append((self.stream.produced, text.strip()))
        return super().write(text)


@pytest.mark.parametrize("command", ["replay", "convert"])
def test_an_endless_line_is_reported_as_soon_as_it_is_over_the_limit(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, command: str
) -> None:
    total = 256 * MiB  # "endless": far past the limit, then the line ends and AFTER follows
    pieces = [BEFORE + b"\n", *endless_line(total), b"\n" + AFTER + b"\n"]
    raw = LazyStream(pieces)
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BufferedReader(raw, 64 * 1024)))
    recorder = _Recorder(raw)
    monkeypatch.setattr(sys, "stderr", recorder)
    assert main(COMMANDS[command]) == 0
    (first,) = recorder.at
    produced, text = first
    assert text == OVERLONG
    assert produced <= LIMIT + 2 * MiB  # said before the rest of the line was read
    assert raw.produced >= total  # and the rest was read (and dropped) to reach AFTER
    out = capsys.readouterr().out
    if command == "replay":
        assert [c["toolCallId"] for c in json.loads(out)["sessions"]["s1"]["toolCalls"]] == [
            "before",
            "after",
        ]
    else:
        assert [
            json.loads(line)["params"]["update"]["toolCallId"] for line in out.splitlines()
        ] == [
            "before",
            "after",
        ]


@pytest.mark.parametrize("command", ["replay", "convert"])
def test_strict_stops_an_endless_line_that_never_ends(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, command: str
) -> None:
    raw = LazyStream(itertools.chain([BEFORE + b"\n"], endless_line(0)))
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BufferedReader(raw, 64 * 1024)))
    assert main([*COMMANDS[command], "--strict"]) == 2
    err = capsys.readouterr().err.splitlines()
    assert err[0] == OVERLONG and "line 2" in err[1] and err[1].endswith("(--strict): stopped")
    assert raw.produced <= LIMIT + 2 * MiB  # it stopped reading there


def test_validate_reads_an_overlong_line_to_its_end_in_bounded_pieces() -> None:
    # validate reports the size, so it reads to the end, never holding more than the limit.
    raw = LazyStream([*endless_line(64 * MiB), b"\nshort\n"])
    got = list(read_lines(io.BufferedReader(raw, 64 * 1024), 1024))
    assert got == [(1, 64 * MiB), (2, b"short")]


def test_read_lines_early_yields_before_reading_the_rest() -> None:
    raw = LazyStream([b"x" * 5000, *endless_line(10 * MiB), b"\nnext\n"])
    lines = read_lines(io.BufferedReader(raw, 4096), 1000, early=True)
    assert next(lines) == (1, 1001)
    assert raw.produced < 20_000  # nothing past the limit was read yet
    assert next(lines) == (2, b"next")
    assert raw.produced == 5000 + 10 * MiB + 6


# --------------------------------------------------------------------------------------------
# Part 3: one-line errors, exit codes, never a traceback


@pytest.mark.parametrize("command", COMMANDS)
def test_unreadable_inputs_are_one_line_and_exit_2(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, command: str
) -> None:
    prog = f"acp-toolcalls {command}"
    for name, why in [
        (str(tmp_path / "missing.jsonl"), "No such file or directory"),
        (str(tmp_path), "Is a directory"),
    ]:
        assert main([*COMMANDS[command], name]) == 2
        captured = capsys.readouterr()
        assert captured.out == ""
        assert captured.err.splitlines() == [f"{prog}: cannot read {name!r}: {why}"]


@pytest.mark.parametrize("command", COMMANDS)
def test_bad_lines_name_their_line_and_never_print_a_traceback(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, command: str
) -> None:
    bad = [b"{not json", b"\xff\xfe", b"42", b"[]", b'{"jsonrpc":"2.0","method":"session/update"']
    result = run(capsys, monkeypatch, COMMANDS[command], framed(bad))
    check_framing(command, result, bad_lines=len(bad))
    if command == "validate":
        assert [line for line, _, _ in findings(result)] == [2, 3, 4, 5, 6]
    else:
        assert [e.split(":")[0] for e in result.err_lines] == [
            "line 2",
            "line 3",
            "line 4",
            "line 5",
            "line 6",
        ]


@pytest.mark.parametrize(
    "argv",
    [
        ["replay", "--bogus"],
        ["replay", "--protocol", "v3"],
        ["validate", "--protocol"],
        ["convert"],
        ["convert", "--to", "v1", "a", "b"],
        ["nope"],
        [],
    ],
)
def test_usage_errors_are_one_line(capsys: pytest.CaptureFixture[str], argv: list[str]) -> None:
    assert main(argv) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    (line,) = captured.err.splitlines()
    assert line.startswith("acp-toolcalls") and "error:" in line and "--help" in line


@pytest.mark.parametrize("command", COMMANDS)
def test_help_documents_the_exit_codes(capsys: pytest.CaptureFixture[str], command: str) -> None:
    assert main([command, "--help"]) == 0
    text = capsys.readouterr().out
    assert "exit status:" in text
    for code in ("0", "2", "70", "130"):
        assert f"\n  {code} " in text, code


def test_readme_documents_the_exit_codes() -> None:
    readme = (ROOT / "README.md").read_text()
    section = readme[readme.index("## Exit codes") :]
    for code in ("| 0 |", "| 1 |", "| 2 |", "| 70 |", "| 130 |"):
        assert code in section


def test_a_bug_is_one_line_and_exit_70(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    def broken(*_: Any, **__: Any) -> Any:
        raise RuntimeError("render failed")

    monkeypatch.setattr(replay_module, "render_parts", broken)
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(BEFORE + b"\n")))
    assert main(["replay", "-"]) == INTERNAL_ERROR == 70
    assert capsys.readouterr().err.splitlines() == [
        "acp-toolcalls replay: internal error (RuntimeError: render failed); this is a bug, "
        "please report it"
    ]


def test_build_parser_lists_every_command() -> None:
    text = build_parser().format_help()
    for command in ("replay", "validate", "convert", "bridge"):
        assert command in text


# --- real processes: a closed stdout, a full disk ---------------------------------------------

# The checkout's source, after whatever the run put first (CI: a compiled wheel).
ENV = child_env()
CLI = [sys.executable, "-m", "acp_toolcalls.cli"]


@pytest.fixture(scope="module")
def big_log(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """5,000 untitled tool calls: a line of output each, at once, from validate and convert."""
    path = tmp_path_factory.mktemp("logs") / "big.jsonl"
    untitled = (update(f"call_{i}", status="in_progress") for i in range(5_000))
    with path.open("wb") as out:
        for piece in jsonl(framed(untitled)):
            out.write(piece)
    return path


def _quiet(stderr: bytes) -> None:
    assert b"Traceback" not in stderr and b"Exception ignored" not in stderr, stderr


@pytest.mark.parametrize(
    "argv",
    [
        ["validate", "--protocol", "v2"],
        ["validate", "--json"],
        ["convert", "--to", "v1"],
        ["replay", "--json"],
        ["replay"],
    ],
    ids=" ".join,
)
def test_a_closed_stdout_ends_quietly(big_log: Path, argv: list[str]) -> None:
    # `acp-toolcalls validate big.jsonl | head -1`: the reader takes a line and goes away.
    proc = subprocess.Popen(
        [*CLI, *argv, str(big_log)], stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=ENV
    )
    assert proc.stdout is not None and proc.stderr is not None
    if argv[0] in ("validate", "convert"):
        assert proc.stdout.readline()  # they write as they go
    proc.stdout.close()
    stderr = proc.stderr.read()
    assert proc.wait(timeout=120) == 1  # documented: a closed stdout ends with status 1
    _quiet(stderr)


def test_head_minus_1_in_a_shell(big_log: Path) -> None:
    command = f"{sys.executable} -m acp_toolcalls.cli validate {big_log} | head -1"
    done = subprocess.run(
        ["sh", "-c", command], capture_output=True, env=ENV, timeout=120, check=False
    )
    assert done.returncode == 0  # head's status
    assert done.stdout.startswith(b"line 2: $.params.update: first report of tool call 'call_0'")
    _quiet(done.stderr)


def test_follow_ends_quietly_when_its_reader_goes_away(tmp_path: Path) -> None:
    log = tmp_path / "growing.jsonl"
    log.write_bytes(BEFORE + b"\n")
    proc = subprocess.Popen(
        [*CLI, "replay", "--follow", str(log)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=ENV,
    )
    assert proc.stdout is not None and proc.stderr is not None
    time.sleep(1.0)  # it is following (waiting for lines)
    assert proc.poll() is None
    proc.stdout.close()
    assert proc.wait(timeout=30) == 1
    _quiet(proc.stderr.read())


@pytest.mark.skipif(not Path("/dev/full").exists(), reason="needs /dev/full")
@pytest.mark.parametrize(
    "argv",
    [["replay"], ["replay", "--json"], ["validate"], ["convert", "--to", "v1"]],
    ids=" ".join,
)
def test_an_output_that_cannot_be_written_is_one_line_and_exit_2(argv: list[str]) -> None:
    example = ROOT / "examples" / "session-v2.jsonl"
    with open("/dev/full", "wb") as full:
        done = subprocess.run(
            [*CLI, *argv, str(example)], stdout=full, stderr=subprocess.PIPE, env=ENV, timeout=60
        )
    assert done.returncode == 2
    (line,) = [row for row in done.stderr.decode().splitlines() if not row.startswith("line ")]
    assert line == f"acp-toolcalls {argv[0]}: cannot write the output: No space left on device"
    _quiet(done.stderr)
