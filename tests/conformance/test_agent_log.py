"""``acp-toolcalls conformance --agent-log``: validate's tool-call findings of an agent's stream,
per rule, on the recorded real agents and on crafted bad logs."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from acp_toolcalls.check import CODES
from acp_toolcalls.cli import main
from acp_toolcalls.conformance import AGENT_RULES, LISTED

ROOT = Path(__file__).resolve().parents[2]
REAL = sorted((ROOT / "tests" / "data" / "real-agents").glob("*.jsonl"))
BUGGY = ROOT / "examples" / "buggy-v2.jsonl"
FINAL = "every call final by the end of its turn"


def check(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, Any, str]:
    """Exit status, the ``--json`` document (or the text), stderr."""
    status = main(["conformance", *args])
    out, err = capsys.readouterr()
    return status, (json.loads(out) if "--json" in args else out), err


def _failed(report: dict[str, Any]) -> list[str]:
    return [r["name"] for r in report["rules"] if not r["passed"]]


def update(body: dict[str, Any]) -> dict[str, Any]:
    return {
        "jsonrpc": "2.0",
        "method": "session/update",
        "params": {"sessionId": "s", "update": body},
    }


def write(tmp_path: Path, messages: list[Any]) -> Path:
    path = tmp_path / "agent.jsonl"
    path.write_text("".join(json.dumps(m) + "\n" for m in messages), encoding="utf-8")
    return path


def test_every_lint_code_but_the_limit_is_a_rule() -> None:
    covered = {code for rule in AGENT_RULES for code in rule.codes}
    assert covered == set(CODES) - {"lint-limit"}


@pytest.mark.parametrize("log", REAL, ids=[p.stem for p in REAL])
def test_real_agents(capsys: pytest.CaptureFixture[str], log: Path) -> None:
    status, report, err = check(capsys, "--agent-log", str(log), "--json")
    assert err == ""
    # Rejecting a permission, codex never finishes the call it asked about (it stays pending).
    bad = [FINAL] if "reject-direct" in log.name and "codex" in log.name else []
    assert _failed(report) == bad
    assert status == (1 if bad else 0)
    assert report["messages"] > 0 and report["side"] == "agent"
    assert report["protocol"] == ("v1" if "-v1-" in log.name else "v2")


def test_a_bridge_log_is_checked_on_the_side_asked(capsys: pytest.CaptureFixture[str]) -> None:
    log = ROOT / "tests" / "data" / "real-agents" / "claude-bash-v1-bridge.jsonl"
    _, agent, _ = check(capsys, "--agent-log", str(log), "--json")
    _, client, _ = check(capsys, "--agent-log", str(log), "--json", "--side", "client")
    assert (agent["protocol"], client["protocol"]) == ("v1", "v2")  # a v1 agent, a v2 editor


def test_buggy_example_fails_every_rule(capsys: pytest.CaptureFixture[str]) -> None:
    status, report, _ = check(capsys, "--agent-log", str(BUGGY), "--json")
    assert status == 1
    assert _failed(report) == [rule.name for rule in AGENT_RULES]
    lines = {r["name"]: [f["line"] for f in r["listed"]] for r in report["rules"]}
    assert lines == {
        "title on first sight": [8],
        "ids never reused after final": [10],
        FINAL: [14],
        "content items and values only of known types": [9, 9, 16],
        "terminal chunks decodable": [18],
        "permission subjects consistent with the call": [12, 12],
    }
    # Schema and decode findings are validate's: counted, deciding no rule.
    assert sorted(f["code"] for f in report["other"]["listed"]) == [
        "invalid-json",
        "lenient-salvage",
        "schema-violation",
    ]


def test_an_unknown_chunk_content_type_fails_one_rule(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    log = write(
        tmp_path,
        [
            update({"sessionUpdate": "tool_call_update", "toolCallId": "c", "title": "Plot"}),
            update(
                {
                    "sessionUpdate": "tool_call_content_chunk",
                    "toolCallId": "c",
                    "content": {"type": "chart", "data": [1]},
                }
            ),
            update({"sessionUpdate": "tool_call_update", "toolCallId": "c", "status": "completed"}),
        ],
    )
    status, report, _ = check(capsys, "--agent-log", str(log), "--json")
    assert status == 1
    assert _failed(report) == ["content items and values only of known types"]
    (finding,) = report["rules"][3]["listed"]
    assert finding["path"] == "$.params.update.content.type"


def test_human_report(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    status, out, _ = check(capsys, "--agent-log", str(BUGGY))
    assert status == 1
    assert "0 rules passed, 6 failed" in out
    assert "line 8: $.params.update: first report" in out and "(title on first sight)" in out
    assert "3 other findings" in out
    log = write(
        tmp_path,
        [update({"sessionUpdate": "tool_call_update", "toolCallId": "\x1b[2Jc", "title": "T"})],
    )
    status, out, _ = check(capsys, "--agent-log", str(log))
    assert status == 1  # never final
    assert "\x1b" not in out and "\\x1b[2Jc" in out


def test_a_clean_log_passes(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    log = write(
        tmp_path,
        [
            update({"sessionUpdate": "tool_call_update", "toolCallId": "c", "title": "Read"}),
            update({"sessionUpdate": "tool_call_update", "toolCallId": "c", "status": "completed"}),
        ],
    )
    status, out, _ = check(capsys, "--agent-log", str(log))
    assert status == 0
    assert "6 rules passed" in out and "failed" not in out


def test_unreadable_logs_and_misused_options_exit_2(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    (tmp_path / "binary.jsonl").write_bytes(b"\x00\x01\x02 not json at all\n" * 40)
    for args, said in [
        (["--agent-log", str(tmp_path / "none.jsonl")], "cannot read"),
        (["--agent-log", str(tmp_path / "binary.jsonl")], "JSON Lines"),
        (["--agent-log", str(BUGGY), "--tag", "terminals"], "are for --reducer"),
    ]:
        status, _, err = check(capsys, *args)
        assert status == 2, args
        assert said in err and len(err.strip().splitlines()) == 1, err


def test_findings_past_the_listed_ones_are_counted(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    calls = [
        update({"sessionUpdate": "tool_call_update", "toolCallId": f"c{n}", "title": "[bold]x"})
        for n in range(LISTED + 3)
    ]
    status, out, _ = check(capsys, "--agent-log", str(write(tmp_path, calls)))
    assert status == 1
    assert out.count("[never-final] (every call final by the end of its turn)") == LISTED
    assert f"... and 3 more ({FINAL})" in out
    status, report, _ = check(capsys, "--agent-log", str(write(tmp_path, calls)), "--json")
    final = report["rules"][2]
    assert (final["findings"], len(final["listed"])) == (LISTED + 3, LISTED)
