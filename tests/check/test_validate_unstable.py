"""``validate --unstable`` and the overlays, through the real CLI and the schema layer.

- Without ``--unstable`` a log using the unstable session updates (``subagent_update``,
  ``session_message``, ``session_message_chunk``, ``plan_removed``; v1 also ``plan_update``)
  is reported as today: custom values in v2 (the lint), schema violations in v1 (closed union).
- With ``--unstable`` the same logs validate with no finding at all, against the version's
  ``schema.unstable.json``, and the summary names that file.
- The ``session-content`` overlay: a ``session`` tool-call content item validates in v1 and
  v2, stable and unstable, through ``validate_message`` and through ``validate``; a malformed
  one is still a violation (the catch-all branch of v2 does not take it).
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from acp_toolcalls.schema import (
    first_violation,
    unstable_only_session_updates,
    validate_message,
    validate_payload,
)
from tests.builds import child_env

ROOT = Path(__file__).resolve().parents[2]
DATA = ROOT / "tests" / "data"
V2_LOG = DATA / "unstable-updates.jsonl"
V1_LOG = DATA / "unstable-updates-v1.jsonl"


def validate(*args: str) -> tuple[int, dict[str, Any]]:
    """The real CLI, ``validate --json ARGS``: (exit code, document)."""
    env = child_env()
    done = subprocess.run(
        [sys.executable, "-m", "acp_toolcalls", "validate", "--json", *args],
        capture_output=True,
        text=True,
        env=env,
        check=False,
    )
    assert "Traceback" not in done.stderr, done.stderr
    document: dict[str, Any] = json.loads(done.stdout)
    return done.returncode, document


def used_updates(log: Path) -> set[str]:
    tags = set()
    for line in log.read_text(encoding="utf-8").splitlines():
        update = json.loads(line).get("params", {}).get("update", {})
        tags.add(update.get("sessionUpdate"))
    return tags


@pytest.mark.parametrize(("log", "protocol"), [(V2_LOG, "v2"), (V1_LOG, "v1")])
def test_the_fixtures_use_every_unstable_only_update(log: Path, protocol: str) -> None:
    assert unstable_only_session_updates(protocol) <= used_updates(log)  # type: ignore[arg-type]


def test_without_unstable_a_v2_log_reports_the_unstable_updates_as_custom_values() -> None:
    code, document = validate(str(V2_LOG))
    assert code == 1
    assert document["summary"] == {"custom-value-prefix": 6}
    named = {f["message"].split("'")[1] for f in document["findings"]}
    assert named == {"subagent_update", "session_message", "session_message_chunk", "plan_removed"}
    assert document["schema"]["file"] == "v2/schema.json"


def test_without_unstable_a_v1_log_reports_the_unstable_updates_as_schema_violations() -> None:
    code, document = validate(str(V1_LOG))
    assert code == 1
    assert document["summary"] == {"schema-violation": 5}
    assert [f["line"] for f in document["findings"]] == [6, 7, 9, 10, 12]
    assert document["schema"]["file"] == "v1/schema.json"


@pytest.mark.parametrize(("log", "protocol"), [(V2_LOG, "v2"), (V1_LOG, "v1")])
def test_with_unstable_the_logs_have_no_findings(log: Path, protocol: str) -> None:
    code, document = validate("--unstable", str(log))
    assert (code, document["findings"], document["summary"]) == (0, [], {})
    assert document["protocol"] == protocol
    schema = document["schema"]
    assert schema["file"] == f"{protocol}/schema.unstable.json"
    assert schema["package"] == "@agentclientprotocol/sdk" and schema["version"] == "2.4.0"
    assert schema["overlays"] == ["session-content"]


def test_unstable_still_reports_what_the_unstable_schema_rejects(tmp_path: Path) -> None:
    lines = V1_LOG.read_text(encoding="utf-8").splitlines()
    broken = json.loads(lines[11])
    del broken["params"]["update"]["planId"]  # plan_removed requires it
    log = tmp_path / "broken.jsonl"
    log.write_text("\n".join([*lines[:11], json.dumps(broken), *lines[12:]]) + "\n")
    code, document = validate("--unstable", str(log))
    assert code == 1
    assert [(f["line"], f["code"]) for f in document["findings"]] == [(12, "schema-violation")]
    assert "planId" in document["findings"][0]["message"]


def test_the_human_summary_names_the_schema_file_and_overlays() -> None:
    env = child_env()
    done = subprocess.run(
        [sys.executable, "-m", "acp_toolcalls", "validate", "--unstable", str(V1_LOG)],
        capture_output=True,
        text=True,
        env=env,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "schema v1/schema.unstable.json of @agentclientprotocol/sdk 2.4.0" in done.stdout
    assert "overlays: session-content" in done.stdout


# --------------------------------------------------------------------------------------------
# The session-content overlay through the schema layer

SESSION_ITEM = {"type": "session", "sessionId": "sess_child_1", "_meta": {"x": 1}}
VARIANTS = [("v1", False), ("v1", True), ("v2", False), ("v2", True)]


def v2_update(content: list[Any]) -> dict[str, Any]:
    update: dict[str, Any] = {"sessionUpdate": "tool_call_update", "toolCallId": "t1"}
    update["title"] = "Delegate"
    update |= {"status": "in_progress", "content": content}
    params = {"sessionId": "sess_parent", "update": update}
    return {"jsonrpc": "2.0", "method": "session/update", "params": params}


@pytest.mark.parametrize(("protocol", "unstable"), VARIANTS)
def test_a_session_content_item_is_valid_in_every_bundled_schema(
    protocol: str, unstable: bool
) -> None:
    version: Any = protocol
    assert validate_payload(SESSION_ITEM, "ToolCallContent", version, unstable=unstable) == []
    assert first_violation(SESSION_ITEM, "ToolCallContent", version, unstable=unstable) is None


@pytest.mark.parametrize(("protocol", "unstable"), VARIANTS)
def test_a_malformed_session_item_is_still_a_violation(protocol: str, unstable: bool) -> None:
    version: Any = protocol
    expected = {
        "missing": ("$", "'sessionId' is a required property", "#/$defs/SessionReference/required"),
        7: ("$.sessionId", "7 is not of type 'string'", "#/$defs/SessionId/type"),
    }
    for session_id, (path, message, pointer) in expected.items():
        item: dict[str, Any] = {"type": "session"}
        if session_id != "missing":
            item["sessionId"] = session_id
        found = validate_payload(item, "ToolCallContent", version, unstable=unstable)
        assert [(v.path, v.message, v.schema_path) for v in found] == [(path, message, pointer)]
        first = first_violation(item, "ToolCallContent", version, unstable=unstable)
        assert first == (path, message)


def test_a_v2_log_with_session_content_validates_through_the_schema_layer(
    tmp_path: Path,
) -> None:
    message = v2_update([{"type": "content", "content": {"type": "text", "text": "hi"}}])
    with_session = v2_update([SESSION_ITEM])
    assert validate_message(with_session, "v2") == []
    assert validate_message(with_session, "v2", unstable=True) == []
    done = {**with_session}
    done["params"] = {**with_session["params"]}
    done["params"]["update"] = {"sessionUpdate": "tool_call_update", "toolCallId": "t1"}
    done["params"]["update"]["status"] = "completed"
    log = tmp_path / "session-content.jsonl"
    log.write_text("".join(json.dumps(m) + "\n" for m in (message, with_session, done)))
    for extra in ([], ["--unstable"]):
        code, document = validate("--protocol", "v2", *extra, str(log))
        assert (code, document["findings"]) == (0, [])
