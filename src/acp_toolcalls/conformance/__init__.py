"""The conformance kit: vectors any client's fold of tool-call updates can be checked against,
and the sans-I/O part of ``acp-toolcalls conformance`` (issue 32; docs/conformance.md).

Rules this package owns:

- ``_vectors``: what a vector is, reading a suite (``load_vectors``; the bundled one in
  ``vectors/``, shipped in the package), and comparing two states (``first_difference``).
- ``_report``: judging a reducer's outputs on a case, and the per-rule report (``--json``).
- ``_agent``: ``--agent-log``'s rules, each the ``validate`` finding codes that break it.

Running reducers (processes, timeouts) is ``acp_toolcalls.cli.conformance``'s.
"""

from __future__ import annotations

from ._agent import (
    AGENT_RULES,
    LISTED,
    AgentRule,
    RuleFindings,
    agent_document,
    sort_findings,
)
from ._report import (
    CaseResult,
    Output,
    Tally,
    judge,
    prefixes,
    report_document,
    rule_order,
    shown_value,
    tally_by_rule,
    tally_by_tag,
)
from ._vectors import (
    MISSING,
    TAGS,
    VECTORS,
    Difference,
    Vector,
    VectorError,
    first_difference,
    load_vectors,
    parse_vector,
)

__all__ = [
    "AGENT_RULES",
    "LISTED",
    "MISSING",
    "TAGS",
    "VECTORS",
    "AgentRule",
    "CaseResult",
    "Difference",
    "Output",
    "RuleFindings",
    "Tally",
    "Vector",
    "VectorError",
    "agent_document",
    "first_difference",
    "judge",
    "load_vectors",
    "parse_vector",
    "prefixes",
    "report_document",
    "rule_order",
    "shown_value",
    "sort_findings",
    "tally_by_rule",
    "tally_by_tag",
]
