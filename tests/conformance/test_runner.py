"""``acp-toolcalls conformance --reducer``, over real subprocesses: the reference reducer
passes every case, each prefix is run, the report's shape, ``--tag``, ``--vectors``, reducers
that fail (a wrong state, a crash, a hang, garbage on stdout), and the exit codes."""

from __future__ import annotations

import json
import shlex
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from acp_toolcalls.cli import main
from acp_toolcalls.conformance import (
    TAGS,
    VECTORS,
    Output,
    VectorError,
    first_difference,
    judge,
    load_vectors,
    parse_vector,
    tally_by_rule,
    tally_by_tag,
)
from tests.builds import child_env

FAKE = Path(__file__).resolve().parent / "fake_reducer.py"
ALL = load_vectors()


def _script() -> str:
    script = shutil.which("acp-toolcalls", path=str(Path(sys.executable).parent))
    assert script is not None
    return script


def fake(mode: str) -> str:
    """The ``--reducer`` command of a mode of ``fake_reducer.py``."""
    return shlex.join([sys.executable, str(FAKE), mode])


def conformance(*args: str, timeout: float = 600) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [_script(), "conformance", *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
        env=child_env(COLUMNS="200"),
    )


def suite(tmp_path: Path, *ids: str, edit: Any = None) -> Path:
    """A folder holding copies of the bundled vectors ``ids`` (``edit`` may change each)."""
    folder = tmp_path / "suite"
    folder.mkdir(exist_ok=True)
    for vector_id in ids:
        value = json.loads((VECTORS / f"{vector_id}.json").read_text(encoding="utf-8"))
        if edit is not None:
            edit(value)
        (folder / f"{vector_id}.json").write_text(json.dumps(value), encoding="utf-8")
    return folder


# --- the reference reducer, the whole suite --------------------------------------------------


@pytest.mark.slow
def test_replay_json_passes_every_case() -> None:
    # The whole stream of every case through the real command (one process a case); the state
    # after each message is the store's, checked in process by test_vectors.py.
    reducer = shlex.join([_script(), "replay", "--json"])
    done = conformance("--reducer", reducer, "--final-only", "--json", "--jobs", "1")
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr
    report = json.loads(done.stdout)
    assert (report["cases"], report["passed"], report["failed"]) == (len(ALL), len(ALL), 0)
    assert report["checked"] == "final state"
    assert set(report["tags"]) == set(TAGS)
    assert report["failures"] == []


def test_replay_json_passes_each_prefix(tmp_path: Path) -> None:
    # The default: the reducer runs on every prefix; the command as the docs spell it.
    ids = ("chunk-after-replacement-appends", "v1-repeated-tool-call-merges")
    done = conformance(
        "--reducer", "acp-toolcalls replay --json", "--vectors", str(suite(tmp_path, *ids))
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "on 2 cases" in done.stdout and "2 passed" in done.stdout


# --- every prefix is checked -------------------------------------------------------------------


def _wrong_middle_state(value: dict[str, Any]) -> None:
    # The state after message 1 says a title the store never had; the final state is right.
    calls = value["expected"][1]["sessions"]["sess_1"]["toolCalls"]
    calls[0]["title"] = "Not what the reducer says"


def test_a_wrong_intermediate_state_fails_at_its_message(tmp_path: Path) -> None:
    folder = suite(tmp_path, "value-replaces-value", edit=_wrong_middle_state)
    done = conformance("--reducer", fake("reference"), "--vectors", str(folder), "--json")
    assert done.returncode == 1
    (failure,) = json.loads(done.stdout)["failures"]
    assert failure == {
        "id": "value-replaces-value",
        "tags": ["three-state"],
        "protocol": 2,
        "message": 1,
        "path": "$.sessions.sess_1.toolCalls[0].title",
        "expected": "Not what the reducer says",
        "got": "Read config.json",
    }
    # --final-only runs the whole stream alone, whose state is right.
    final = conformance("--reducer", fake("reference"), "--vectors", str(folder), "--final-only")
    assert final.returncode == 0, final.stdout


# --- the report --------------------------------------------------------------------------------


def test_json_report_per_tag_and_rule_with_first_differences(tmp_path: Path) -> None:
    folder = suite(tmp_path, "terminal-output-then-chunk", "null-clears-title")
    done = conformance("--reducer", fake("no-terminals"), "--vectors", str(folder), "--json")
    assert done.returncode == 1
    report = json.loads(done.stdout)
    assert report["suite"] == str(folder)
    assert report["reducer"] == fake("no-terminals")
    assert report["checked"] == "state after each message"
    assert (report["cases"], report["passed"], report["failed"]) == (2, 1, 1)
    assert report["tags"] == {
        "three-state": {"passed": 1, "failed": 0},
        "terminals": {"passed": 0, "failed": 1, "failing": ["terminal-output-then-chunk"]},
    }
    assert [(r["source"], r["passed"], r["failed"]) for r in report["rules"]] == [
        ("docs/decisions.md D4", 1, 0),
        ("docs/decisions.md D46 (terminals)", 0, 1),
    ]
    (failure,) = report["failures"]
    assert failure["message"] == 0
    assert failure["path"] == "$.sessions.sess_1.terminals[0]"
    assert failure["expected"] == {
        "terminalId": "term_1",
        "command": "echo",
        "output": {"data": "b2xk"},
    }
    assert "got" not in failure  # missing in what the reducer printed


def test_human_report_names_tags_rules_and_differences(tmp_path: Path) -> None:
    folder = suite(tmp_path, "terminal-output-then-chunk", "null-clears-title")
    done = conformance("--reducer", fake("no-terminals"), "--vectors", str(folder))
    assert done.returncode == 1
    out = done.stdout
    assert "1 passed" in out and "1 failed" in out
    assert "Per tag" in out and "Per rule" in out and "terminals" in out
    assert "FAIL terminal-output-then-chunk [terminals] v2, after message 0" in out
    assert "$.sessions.sess_1.terminals[0]: expected {" in out and "got missing" in out


@pytest.mark.parametrize(
    ("mode", "reason"),
    [
        ("crash", "the reducer exited with status 3: Traceback: the reducer fell over"),
        ("garbage", "the reducer printed no JSON document: 'state: all good'"),
        ("deep", "the reducer printed JSON nested too deep to read"),
    ],
)
def test_a_failing_reducer_fails_the_case_with_its_reason(
    tmp_path: Path, mode: str, reason: str
) -> None:
    folder = suite(tmp_path, "id-alone-creates-with-defaults", "empty-content-clears")
    done = conformance("--reducer", fake(mode), "--vectors", str(folder))
    assert done.returncode == 1, done.stderr
    assert done.stdout.count(reason) == 2
    assert "Traceback (most recent" not in done.stderr


def test_a_hanging_reducer_is_killed_with_what_it_started(tmp_path: Path) -> None:
    folder = suite(tmp_path, "id-alone-creates-with-defaults")
    done = conformance(
        "--reducer", fake("hang"), "--vectors", str(folder), "--timeout", "2", "--json",
        timeout=60,
    )  # fmt: skip
    assert done.returncode == 1
    (failure,) = json.loads(done.stdout)["failures"]
    assert failure["reason"] == "timed out after 2 s (killed)"
    # The runner returned, so the pipes closed: the sleeping grandchild was killed too.


def test_reducer_text_never_reaches_the_terminal_raw(tmp_path: Path) -> None:
    folder = suite(tmp_path, "id-alone-creates-with-defaults")
    done = conformance("--reducer", fake("escape"), "--vectors", str(folder))
    assert done.returncode == 1
    assert "\x1b" not in done.stdout and "\x07" not in done.stdout
    assert "\\x1b[31mred" in done.stdout


# --- choosing cases ----------------------------------------------------------------------------


def test_tag_picks_the_cases_carrying_it(tmp_path: Path) -> None:
    folder = suite(
        tmp_path, "terminal-output-then-chunk", "null-clears-title", "meta-patches-by-key"
    )
    done = conformance(
        "--reducer", fake("reference"), "--vectors", str(folder), "--json",
        "--tag", "terminals", "--tag", "meta-patch",
    )  # fmt: skip
    assert done.returncode == 0
    report = json.loads(done.stdout)
    assert report["cases"] == 2
    assert set(report["tags"]) == {"terminals", "meta-patch"}


def test_usage_errors_exit_2_with_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # In process: none of them starts a reducer.
    folder = suite(tmp_path, "null-clears-title")
    (tmp_path / "empty").mkdir()
    bad = tmp_path / "bad"
    bad.mkdir()
    (bad / "x.json").write_text('{"id": "x"}', encoding="utf-8")
    cases = [
        (["--reducer", fake("reference"), "--vectors", str(tmp_path / "none")], "cannot read"),
        (["--reducer", fake("reference"), "--vectors", str(tmp_path / "empty")], "no vectors"),
        (["--reducer", fake("reference"), "--vectors", str(bad)], "x.json: no 'rule'"),
        (["--reducer", "no-such-reducer-anywhere --json"], "is not an executable file"),
        (["--reducer", "  "], "--reducer is empty"),
        (["--reducer", "''"], "'' is not an executable file"),
        (["--reducer", "'unclosed"], "cannot be split into words"),
        (["--reducer", fake("reference"), "--vectors", str(folder), "--tag", "terminals"],
         "no vector has the tag terminals"),
        (["--reducer", fake("reference"), "--agent-log", "x.jsonl"], "not allowed with"),
        ([], "one of the arguments --reducer --agent-log is required"),
        (["--reducer", fake("reference"), "--timeout", "0"], "give more than 0"),
        (["--reducer", fake("reference"), "--tag", "nonsense"], "invalid choice"),
    ]  # fmt: skip
    for args, said in cases:
        status = main(["conformance", *args])
        out, err = capsys.readouterr()
        assert status == 2, (args, out, err)
        assert said in err, (args, err)
        assert len(err.strip().splitlines()) == 1, err
        assert out == ""


# --- in process: judging and tallies --------------------------------------------------------


def test_judge_takes_the_first_wrong_prefix_in_message_order() -> None:
    vector = next(v for v in ALL if v.id == "chunk-after-replacement-appends")
    right = [(n + 1, Output(document=state)) for n, state in enumerate(vector.expected)]
    assert judge(vector, right).passed
    wrong = [*right[:1], (2, Output(reason="crashed")), (3, Output(document={}))]
    result = judge(vector, list(reversed(wrong)))
    assert (result.failed_at, result.reason) == (1, "crashed")
    result = judge(vector, [(3, Output(document={"sessions": {}}))])
    assert result.failed_at == 2
    assert result.difference == first_difference(vector.expected[2], {"sessions": {}})


def test_tallies_group_by_tag_in_tag_order_and_by_rule_in_decision_order() -> None:
    results = [judge(v, [(len(v.messages), Output(document=v.expected[-1]))]) for v in ALL]
    assert [t.name for t in tally_by_tag(results)] == list(TAGS)
    sources = [t.source for t in tally_by_rule(results)]
    assert sources.index("docs/decisions.md D2") < sources.index("docs/decisions.md D11")
    assert sum(len(t.passed) for t in tally_by_rule(results)) == len(ALL)


def test_parse_vector_names_what_is_wrong() -> None:
    good = json.loads((VECTORS / "null-clears-title.json").read_text(encoding="utf-8"))
    problems = [
        ({**good, "tags": ["nope"]}, "'tags' must be some of"),
        ({**good, "protocol": 3}, "'protocol' is 3"),
        ({**good, "expected": []}, "0 expected states for 2 messages"),
        ({**good, "id": "Not Kebab"}, "is not kebab-case"),
        ({**good, "valid": "no"}, "'valid' is not true or false"),
        ({**good, "id": "other-id"}, "'id' 'other-id' is not the file's name"),
        ([], "not a JSON object"),
    ]
    for value, said in problems:
        with pytest.raises(VectorError) as caught:
            parse_vector(value, "null-clears-title.json")
        assert said in str(caught.value)
        assert str(caught.value).startswith("null-clears-title.json: ")


# --- docs/conformance.md -----------------------------------------------------------------------


def test_the_docs_python_adapter_passes(tmp_path: Path) -> None:
    doc = (Path(__file__).resolve().parents[2] / "docs" / "conformance.md").read_text("utf-8")
    section = doc.split("## Writing the adapter", 1)[1]
    adapter = tmp_path / "adapter.py"
    adapter.write_text(section.split("```python\n", 1)[1].split("```", 1)[0], encoding="utf-8")
    # A case of each tag, on every prefix.
    ids = sorted({next(v.id for v in ALL if tag in v.tags) for tag in TAGS})
    reducer = shlex.join([sys.executable, str(adapter)])
    done = conformance("--reducer", reducer, "--vectors", str(suite(tmp_path, *ids)), "--json")
    assert done.returncode == 0, done.stdout + done.stderr
    assert json.loads(done.stdout)["passed"] == len(ids) >= 6
