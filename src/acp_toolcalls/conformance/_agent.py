"""``conformance --agent-log``: the tool-call rules of ``validate`` over an agent's stream,
reported per rule.

Rules this module owns (issue 32):

- The checks are ``validate``'s (``check.Validator`` and its tool-call lint): this module only
  sorts their findings into the rules of ``AGENT_RULES`` by finding code. A rule passes when no
  finding of its codes was made.
- Findings of no rule here (schema violations, lines that cannot be read, ``lint-limit``) are
  counted as ``other`` and listed, but decide nothing: ``acp-toolcalls validate`` is the tool for
  them.
- At most ``LISTED`` findings of each rule (and of ``other``) are kept to be listed; the rest are
  counted, so memory does not grow with the log.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any, Final

from ..check import Finding

__all__ = ["AGENT_RULES", "LISTED", "AgentRule", "RuleFindings", "agent_document", "sort_findings"]

LISTED: Final = 200
"""Findings listed per rule; past it they are counted."""


@dataclass(frozen=True)
class AgentRule:
    """One rule an agent's stream is held to: its name, the quote, where from, and the finding
    codes of ``validate`` that break it."""

    name: str
    rule: str
    source: str
    codes: frozenset[str]


_OBLIGATIONS = "docs/decisions.md D46 (sender obligations)"

AGENT_RULES: Final = (
    AgentRule(
        "title on first sight",
        "(2) a `title` on the first report",
        _OBLIGATIONS,
        frozenset({"missing-title"}),
    ),
    AgentRule(
        "ids never reused after final",
        "(1) non-empty ids, never a final call's id reused",
        _OBLIGATIONS,
        frozenset({"recreated-after-final"}),
    ),
    AgentRule(
        "every call final by the end of its turn",
        "(8) a final status for each call before the turn ends",
        _OBLIGATIONS,
        frozenset({"never-final"}),
    ),
    AgentRule(
        "content items and values only of known types",
        "(3) only known or `_` values",
        _OBLIGATIONS,
        frozenset({"custom-value-prefix"}),
    ),
    AgentRule(
        "terminal chunks decodable",
        "A `terminal_output_chunk` whose `data` is not valid base64 is dropped whole (no bytes "
        "appended) and reported.",
        "docs/decisions.md D22",
        frozenset({"invalid-base64"}),
    ),
    AgentRule(
        "permission subjects consistent with the call",
        "`title` (required) and `description` are the prompt and never change a call's "
        "displayed state; a `tool_call` subject is applied as an update before the prompt.",
        "docs/decisions.md D46 (permissions)",
        frozenset({"prompt-in-tool-call"}),
    ),
)
"""The rules ``--agent-log`` reports, in report order."""


@dataclass
class RuleFindings:
    """The findings of one rule (``rule`` ``None``: the findings of no rule)."""

    rule: AgentRule | None
    count: int = 0
    listed: list[Finding] = field(default_factory=list)

    @property
    def passed(self) -> bool:
        return self.count == 0

    @property
    def name(self) -> str:
        return self.rule.name if self.rule is not None else "other findings"

    @property
    def source(self) -> str:
        return self.rule.source if self.rule is not None else ""

    def add(self, finding: Finding) -> None:
        self.count += 1
        if len(self.listed) < LISTED:
            self.listed.append(finding)


def sort_findings(findings: Iterable[Finding]) -> tuple[list[RuleFindings], RuleFindings]:
    """Each rule's findings, in ``AGENT_RULES`` order, and those of no rule."""
    rules = [RuleFindings(rule) for rule in AGENT_RULES]
    by_code = {code: found for found in rules if found.rule for code in found.rule.codes}
    other = RuleFindings(None)
    for finding in findings:
        by_code.get(finding.code, other).add(finding)
    return rules, other


def _finding(finding: Finding) -> dict[str, Any]:
    return {
        "line": finding.line,
        "path": finding.path,
        "code": finding.code,
        "message": finding.message,
    }


def agent_document(
    rules: list[RuleFindings], other: RuleFindings, head: dict[str, Any]
) -> dict[str, Any]:
    """The ``--agent-log --json`` document: ``head`` (the log, side, protocol, counts), then the
    rules with their findings, then the other findings."""
    return {
        **head,
        "passed": sum(1 for r in rules if r.passed),
        "failed": sum(1 for r in rules if not r.passed),
        "rules": [
            {
                "name": r.rule.name,
                "rule": r.rule.rule,
                "source": r.rule.source,
                "codes": sorted(r.rule.codes),
                "passed": r.passed,
                "findings": r.count,
                "listed": [_finding(f) for f in r.listed],
            }
            for r in rules
            if r.rule is not None
        ],
        "other": {"findings": other.count, "listed": [_finding(f) for f in other.listed]},
    }
