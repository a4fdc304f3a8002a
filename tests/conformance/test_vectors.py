"""The conformance vectors: what is committed is what the generator writes, the store gives
every expected state after every message, each message is what the upstream schema allows
(but where a case says otherwise), and each vector's rule is quoted from where it says."""

from __future__ import annotations

import contextlib
import json
import re
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from acp_toolcalls.check import validate_message
from acp_toolcalls.codec import DecodeError
from acp_toolcalls.conformance import TAGS, VECTORS, Vector, first_difference, load_vectors
from acp_toolcalls.models import VersionName
from acp_toolcalls.store import Limits, ToolCallStore
from tests.conformance import make_vectors

ROOT = Path(__file__).resolve().parents[2]
ALL = load_vectors()


def _ids(vectors: list[Vector]) -> list[str]:
    return [v.id for v in vectors]


def test_committed_vectors_are_what_the_generator_writes() -> None:
    files = make_vectors.build()
    committed = {p.name: p.read_text(encoding="utf-8") for p in VECTORS.glob("*.json")}
    assert sorted(committed) == sorted(files)
    stale = [name for name in files if committed[name] != files[name]]
    assert stale == [], "run `python -m tests.conformance.make_vectors` and review the diff"


def test_the_docs_table_is_the_vectors() -> None:
    doc = make_vectors.DOC.read_text(encoding="utf-8")
    vectors = [json.loads(p.read_text(encoding="utf-8")) for p in sorted(VECTORS.glob("*.json"))]
    assert make_vectors.with_table(doc, vectors) == doc


@pytest.mark.parametrize("vector", ALL, ids=_ids(ALL))
def test_the_store_gives_each_expected_state(vector: Vector) -> None:
    # One store fed message by message (the generator replays each prefix from the start).
    store = ToolCallStore(version="auto", limits=Limits.unlimited())
    for index, (message, expected) in enumerate(zip(vector.messages, vector.expected, strict=True)):
        with contextlib.suppress(DecodeError):  # replay reports such a line and goes on
            store.apply(json.dumps(message).encode())
        difference = first_difference(expected, store.document())
        assert difference is None, f"after message {index}: {difference}"


def _methods(vector: Vector) -> dict[object, str]:
    """The method of each request id of the vector (a response is checked against it)."""
    found: dict[object, str] = {}
    for message in vector.messages:
        for one in message if isinstance(message, list) else [message]:
            if "method" in one and "id" in one:
                found[one["id"]] = one["method"]
    return found


def _violations(vector: Vector) -> list[tuple[int, str]]:
    version: VersionName = "v1" if vector.protocol == 1 else "v2"
    methods = _methods(vector)
    found = []
    for index, message in enumerate(vector.messages):
        for one in message if isinstance(message, list) else [message]:
            method = methods.get(one.get("id")) if "method" not in one else None
            for violation in validate_message(one, version, response_method=method):
                found.append((index, str(violation)))
    return found


@pytest.mark.parametrize("vector", ALL, ids=_ids(ALL))
def test_messages_are_valid_unless_the_case_says_not(vector: Vector) -> None:
    violations = _violations(vector)
    if vector.valid:
        assert violations == []
    else:  # `"valid": false` is there only while a message breaks the schema
        assert violations != []


def _normalized(text: str) -> str:
    return re.sub(r"\s+", " ", text)


def test_each_rule_is_quoted_from_the_decision_it_cites() -> None:
    decisions = (ROOT / "docs" / "decisions.md").read_text(encoding="utf-8")
    sections_raw = {
        match.group(1): body
        for match, body in zip(
            re.finditer(r"^## (D\d+)\.", decisions, re.M),
            re.split(r"^## D\d+\..*$", decisions, flags=re.M)[1:],
            strict=True,
        )
    }
    sections = {number: _normalized(body) for number, body in sections_raw.items()}
    for v in ALL:
        cited = re.fullmatch(r"docs/decisions\.md (D\d+)(?: \((.+)\))?", v.source)
        assert cited, f"{v.id}: source {v.source!r}"
        assert _normalized(v.rule) in sections[cited.group(1)], v.id
        if cited.group(2):  # a D46 row, by its label
            row = re.search(
                rf"^\| {re.escape(cited.group(2))} \|.*$", sections_raw[cited.group(1)], re.M
            )
            assert row and _normalized(v.rule) in row.group(0), v.id


def test_the_suite_covers_every_tag_in_both_versions() -> None:
    tags = Counter(tag for v in ALL for tag in v.tags)
    assert {tag: tags[tag] >= 4 for tag in TAGS} == dict.fromkeys(TAGS, True)
    assert {v.protocol for v in ALL} == {1, 2}
    assert len(ALL) >= 80


def test_v1_vectors_announce_their_version() -> None:
    # Any reducer can tell the version from the stream: an initialize exchange of version 1.
    for v in ALL:
        if v.protocol == 1:
            request, response = v.messages[:2]
            assert request["method"] == "initialize", v.id
            assert request["params"]["protocolVersion"] == 1, v.id
            assert response["result"]["protocolVersion"] == 1, v.id


def test_expected_states_are_documents() -> None:
    for v in ALL:
        for state in v.expected:
            assert list(state) == ["sessions"], v.id
            for session in state["sessions"].values():
                assert sorted(session) == ["terminals", "toolCalls"], v.id


@pytest.mark.parametrize(
    ("expected", "got", "found"),
    [
        ({"a": 1}, {"a": 1.0}, None),
        ({"a": 1, "b": 2}, {"b": 2, "a": 1}, None),
        ({"a": [1, 2]}, {"a": [2, 1]}, ("$.a[0]", 1, 2)),
        ({"a": {"b": None}}, {"a": {}}, ("$.a.b", None, "missing")),
        ({"a": {}}, {"a": {"x y": 1}}, ('$.a["x y"]', "missing", 1)),
        ({"a": [1]}, {"a": [1, 2]}, ("$.a[1]", "missing", 2)),
        ({"a": True}, {"a": 1}, ("$.a", True, 1)),
        ({"a": []}, {"a": None}, ("$.a", [], None)),
        ({"a": "1"}, {"a": 1}, ("$.a", "1", 1)),
    ],
)
def test_first_difference(expected: Any, got: Any, found: tuple[str, Any, Any] | None) -> None:
    difference = first_difference(expected, got)
    if found is None:
        assert difference is None
    else:
        assert difference is not None
        shown = (difference.path, difference.expected, difference.got)
        assert (
            tuple(repr(x) if x is not None and repr(x) == "missing" else x for x in shown) == found
        )
