"""Judging a reducer on the vectors, and the per-rule report of ``acp-toolcalls conformance``.

Rules this module owns (issue 32):

- A reducer is run on each prefix of a case's messages (``prefixes``): after message ``k`` it
  must print the case's ``expected[k]``. What it gave for one prefix is an ``Output``: the
  document it printed, or why there is none (it crashed, hung, printed no JSON: ``reason``).
- A case passes when every prefix run gave its expected state; otherwise it fails at the first
  message whose state is wrong (``judge``), with the first difference there (``Difference``)
  or the reason the reducer gave none. With ``final_only`` only the whole stream is run, and
  a failure is at the last message.
- The report groups the cases by tag (``TAGS`` order) and by the rule they cite (source, then
  quote), each with what passed and what failed, and lists the failures; ``report_document``
  is the same as one JSON document (``--json``). An absent value (``MISSING``) is absent from
  the document: a failure without ``got`` means the key was missing in what the reducer printed.
- ``shown_value``: a value of a difference for people, at most ``SHOWN_CHARS`` of its JSON,
  escaped for a terminal; ``missing`` for an absent one.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from .._text import printable
from ._vectors import MISSING, TAGS, Difference, Vector, first_difference

__all__ = [
    "CaseResult",
    "Output",
    "Tally",
    "judge",
    "prefixes",
    "report_document",
    "rule_order",
    "shown_value",
    "tally_by_rule",
    "tally_by_tag",
]


@dataclass(frozen=True)
class Output:
    """What a reducer gave for one prefix: ``document`` (any JSON value) when it printed one and
    exited 0, else ``reason`` says why not."""

    document: Any = MISSING
    reason: str | None = None


@dataclass(frozen=True)
class CaseResult:
    """One case judged: passed, or the first message (0-based) after which the state was wrong
    and how (``difference``, or the reducer's failure ``reason``)."""

    vector: Vector
    failed_at: int | None = None
    difference: Difference | None = None
    reason: str | None = None

    @property
    def passed(self) -> bool:
        return self.failed_at is None


def prefixes(vector: Vector, final_only: bool = False) -> list[int]:
    """The message counts a reducer is run on for ``vector``: each prefix, or only the whole."""
    count = len(vector.messages)
    return [count] if final_only else list(range(1, count + 1))


def judge(vector: Vector, outputs: Sequence[tuple[int, Output]]) -> CaseResult:
    """The case's result from the outputs of its prefix runs (message count, output), in any
    order: the first wrong one decides."""
    for count, output in sorted(outputs, key=lambda pair: pair[0]):
        index = count - 1
        if output.reason is not None:
            return CaseResult(vector, index, reason=output.reason)
        difference = first_difference(vector.expected[index], output.document)
        if difference is not None:
            return CaseResult(vector, index, difference=difference)
    return CaseResult(vector)


@dataclass
class Tally:
    """The cases of one tag or one rule: the ids that passed and that failed."""

    name: str
    source: str = ""
    passed: list[str] = field(default_factory=list)
    failed: list[str] = field(default_factory=list)

    def add(self, result: CaseResult) -> None:
        (self.passed if result.passed else self.failed).append(result.vector.id)


def tally_by_tag(results: Iterable[CaseResult]) -> list[Tally]:
    """One tally per tag the cases carry, in ``TAGS`` order."""
    tallies = {tag: Tally(tag) for tag in TAGS}
    for result in results:
        for tag in result.vector.tags:
            tallies[tag].add(result)
    return [t for t in tallies.values() if t.passed or t.failed]


def tally_by_rule(results: Iterable[CaseResult]) -> list[Tally]:
    """One tally per rule cited, by source then quote."""
    tallies: dict[tuple[str, str], Tally] = {}
    for result in results:
        vector = result.vector
        key = (vector.source, vector.rule)
        tallies.setdefault(key, Tally(vector.rule, vector.source)).add(result)
    return [tallies[key] for key in sorted(tallies, key=rule_order)]


def rule_order(key: tuple[str, str]) -> tuple[int, str, str]:
    """The order of rules ``(source, quote)``: by decision number (``docs/decisions.md D2``
    before ``D11``; a source naming none first), then source and quote."""
    source, rule = key
    number = _DECISION.search(source)
    return (int(number.group(1)) if number else 0, source, rule)


_DECISION = re.compile(r"\bD(\d+)\b")


def _failure(result: CaseResult) -> dict[str, Any]:
    vector = result.vector
    record: dict[str, Any] = {
        "id": vector.id,
        "tags": list(vector.tags),
        "protocol": vector.protocol,
        "message": result.failed_at,
    }
    if result.reason is not None:
        record["reason"] = result.reason
    difference = result.difference
    if difference is not None:
        record["path"] = difference.path
        if difference.expected is not MISSING:
            record["expected"] = difference.expected
        if difference.got is not MISSING:
            record["got"] = difference.got
    return record


def _tally_record(tally: Tally) -> dict[str, Any]:
    record: dict[str, Any] = {"passed": len(tally.passed), "failed": len(tally.failed)}
    if tally.failed:
        record["failing"] = tally.failed
    return record


def report_document(
    results: Sequence[CaseResult], *, suite: str, reducer: str, final_only: bool
) -> dict[str, Any]:
    """The whole report as one JSON value (``--json``)."""
    failed = [r for r in results if not r.passed]
    return {
        "suite": suite,
        "reducer": reducer,
        "checked": "final state" if final_only else "state after each message",
        "cases": len(results),
        "passed": len(results) - len(failed),
        "failed": len(failed),
        "tags": {t.name: _tally_record(t) for t in tally_by_tag(results)},
        "rules": [
            {"rule": t.name, "source": t.source, **_tally_record(t)} for t in tally_by_rule(results)
        ],
        "failures": [_failure(r) for r in failed],
    }


SHOWN_CHARS = 120
"""Longest value shown in a failure line, in characters of its JSON."""


def shown_value(value: Any) -> str:
    """A value of a difference as one short line of JSON, safe on a terminal (``MISSING``:
    ``missing``)."""
    if value is MISSING:
        return "missing"
    text = json.dumps(value, ensure_ascii=False)
    if len(text) > SHOWN_CHARS:
        text = text[: SHOWN_CHARS - 1] + "…"
    return printable(text)
