"""Every ``Dnn`` decision cited in the repository is written down in docs/decisions.md.

Code, docs and tests cite the design decisions by number; the external spec they were first
written in is not shipped, so a citation without a ``## Dnn.`` section in docs/decisions.md
points nowhere. A range such as ``D27-D30`` cites every number in it. Nothing cites that
external spec itself, by its path or by its section numbers (issue 30): a rule it held is a
decision here, or comes from the upstream protocol's RFDs and schema.
"""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
DECISIONS = ROOT / "docs" / "decisions.md"

# `Dnn` as a word; not the tail of a longer token such as `U+D800` or `\xD8`.
CITATION = re.compile(r"(?<![\w+])D(\d{1,3})(?:\s*[-\u2013]\s*D?(\d{1,3}))?\b")
SECTION = re.compile(r"^## D(\d+)\. \S", re.MULTILINE)


def _cited_in() -> list[Path]:
    files = [ROOT / "README.md", ROOT / "CONTRIBUTING.md"]
    for top in ("src", "docs", "tests", "examples", "benchmarks", "fuzz"):
        for path in sorted((ROOT / top).rglob("*")):
            if path.suffix not in (".py", ".md") or not path.is_file():
                continue
            if {"node_modules", "__pycache__"} & set(path.parts) or path == DECISIONS:
                continue
            files.append(path)
    return files


def _citations() -> dict[int, list[str]]:
    """Decision number -> where it is cited (``path:line``)."""
    found: dict[int, list[str]] = {}
    for path in _cited_in():
        text = path.read_text(encoding="utf-8", errors="replace")
        for number, line in enumerate(text.splitlines(), 1):
            for match in CITATION.finditer(line):
                first = int(match.group(1))
                last = int(match.group(2)) if match.group(2) else first
                where = f"{path.relative_to(ROOT)}:{number}"
                for decision in range(first, max(first, last) + 1):
                    found.setdefault(decision, []).append(where)
    return found


def _sections() -> list[int]:
    return [int(n) for n in SECTION.findall(DECISIONS.read_text(encoding="utf-8"))]


def test_every_cited_decision_has_a_section() -> None:
    citations = _citations()
    assert citations, "no citation found: the scan is broken"
    written = set(_sections())
    missing = {f"D{n}": places[:3] for n, places in sorted(citations.items()) if n not in written}
    assert not missing, f"cited without a `## Dnn.` section in docs/decisions.md: {missing}"


def test_sections_are_unique_in_number_order_and_complete() -> None:
    numbers = _sections()
    assert numbers == sorted(set(numbers))
    text = DECISIONS.read_text(encoding="utf-8")
    bodies = re.split(r"^## ", text, flags=re.MULTILINE)[1:]
    for body in bodies:
        if not re.match(r"D\d+\. ", body):
            continue
        for part in ("**Rule", "**Why.**", "**Evidence.**"):
            assert part in body, f"{body.splitlines()[0]}: no {part}"


def test_the_scan_reads_ranges_and_skips_code_points() -> None:
    cited = [
        (m.group(1), m.group(2))
        for m in CITATION.finditer("D27-D30, (D9), D1\u2013D4, U+D800, \\xD8, ID1, D12x")
    ]
    assert cited == [("27", "30"), ("9", None), ("1", "4")]


def test_no_message_the_library_emits_cites_a_decision() -> None:
    # Issue 18: messages for users (losses, notes, findings, errors) say what happened, not
    # "(D19)": the CLI used to strip such references with a regex before showing them. Code
    # comments and docstrings cite decisions; string constants that are not docstrings do not.
    import ast

    citation = re.compile(r"\(D\d+(?:, D\d+)*[):]")
    found = []
    for path in sorted((ROOT / "src").rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        documentation = {
            id(node.value)
            for node in ast.walk(tree)
            if isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant)
        }  # docstrings, of modules, classes, functions and attributes
        found += [
            f"{path.relative_to(ROOT)}:{node.lineno}"
            for node in ast.walk(tree)
            if isinstance(node, ast.Constant)
            and isinstance(node.value, str)
            and id(node) not in documentation
            and citation.search(node.value)
        ]
    assert found == []


# The external spec by its path or name, or one of its sections ("spec 9.5", "spec\n10.1",
# "spec's section 12", "spec sections 5-6").
EXTERNAL_SPEC = re.compile(
    r"shared/spec|TOOL-CALLS|\b[Ss]pec(?:'s)?\s+(?:sections?\s+)?\d+(?:\.\d+)*"
)
NOT_SCANNED = {Path(__file__).resolve()}
# Lines that check a command's output does not cite the spec: they name it to look for it.
CHECKS_FOR_IT = ('assert "TOOL-CALLS" not in text and "shared/spec" not in text',)


def _external_spec_citations() -> list[str]:
    found = []
    for path in [*_cited_in(), DECISIONS]:
        if path in NOT_SCANNED:
            continue
        text = path.read_text(encoding="utf-8", errors="replace")
        lines = text.splitlines()
        for match in EXTERNAL_SPEC.finditer(text):
            number = text.count("\n", 0, match.start()) + 1
            if lines[number - 1].strip() in CHECKS_FOR_IT:
                continue
            found.append(f"{path.relative_to(ROOT)}:{number}: {match.group(0)!r}")
    return found


def test_nothing_cites_the_external_spec() -> None:
    # The spec the rules were first written in lives outside the repository: a reader cannot
    # follow "(spec 9.5)" or "shared/spec/TOOL-CALLS.md". Cite a decision (the protocol's own
    # rules are D46's rows) or the upstream RFD or schema instead.
    assert _external_spec_citations() == []


def test_the_spec_scan_finds_each_form() -> None:
    forms = "(shared/spec/x.md 9.4) TOOL-CALLS.md (spec 8.7) spec\n10.1 spec's section 12 spec 5"
    assert len(EXTERNAL_SPEC.findall(forms)) == 6
    assert not EXTERNAL_SPEC.findall("the spec says; specs 2; the tool-calls RFD; spec-compliant")
