"""Writes the conformance vectors (``src/acp_toolcalls/conformance/vectors/<id>.json``) from
the hand-written cases (``cases_v2``, ``cases_v2_flow``, ``cases_v1``,
``cases_more``) and the rules they
quote (``rules``), and the table of them in ``docs/conformance.md``.

``expected`` is computed, never written by hand: after each message, the document
``acp-toolcalls replay --json`` prints for the stream up to and including that message, got
by running the command in this process (``fold``). Review a changed vector's expected states
against its rule before committing it: one that looks wrong is a store bug to report.

    python -m tests.conformance.make_vectors          # write the vectors and the docs table
    python -m tests.conformance.make_vectors --check  # exit 1 if what is committed differs
"""

from __future__ import annotations

import contextlib
import io
import json
import sys
import tempfile
from collections import Counter
from pathlib import Path
from typing import Any

from acp_toolcalls.cli import main as cli_main
from acp_toolcalls.conformance import rule_order
from tests.conformance.cases_more import CASES_MORE
from tests.conformance.cases_v1 import CASES_V1
from tests.conformance.cases_v2 import CASES_V2_FIELDS
from tests.conformance.cases_v2_flow import CASES_V2_FLOW
from tests.conformance.rules import RULES

ROOT = Path(__file__).resolve().parents[2]
VECTORS = ROOT / "src" / "acp_toolcalls" / "conformance" / "vectors"
DOC = ROOT / "docs" / "conformance.md"
TABLE_START = "<!-- vectors table: written by `python -m tests.conformance.make_vectors` -->"
TABLE_END = "<!-- end of the vectors table -->"

CASES = [*CASES_V2_FIELDS, *CASES_V2_FLOW, *CASES_V1, *CASES_MORE]


def fold(messages: list[Any]) -> dict[str, Any]:
    """What ``acp-toolcalls replay --json`` prints for ``messages`` (JSON Lines, one a line),
    run in this process."""
    with tempfile.TemporaryDirectory() as folder:
        log = Path(folder) / "log.jsonl"
        log.write_text("".join(json.dumps(m, ensure_ascii=False) + "\n" for m in messages))
        out, err = io.StringIO(), io.StringIO()
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            status = cli_main(["replay", "--json", str(log)])
    if status != 0:
        raise RuntimeError(f"replay --json exited {status}: {err.getvalue()}")
    document: dict[str, Any] = json.loads(out.getvalue())
    return document


def vector(case: dict[str, Any]) -> dict[str, Any]:
    """The vector of one case: its fields in the contract's order, ``expected`` computed."""
    rule, source = RULES[case["rule"]]
    messages = case["messages"]
    built: dict[str, Any] = {
        "id": case["id"],
        "rule": rule,
        "source": source,
        "tags": case["tags"],
        "protocol": case["protocol"],
    }
    if "valid" in case:
        built["valid"] = case["valid"]
    built["messages"] = messages
    built["expected"] = [fold(messages[: n + 1]) for n in range(len(messages))]
    return built


def encode(built: dict[str, Any]) -> str:
    """A vector's file text: JSON, two-space indent, keys in the contract's order."""
    return json.dumps(built, indent=2, ensure_ascii=False) + "\n"


def build() -> dict[str, str]:
    """Every vector's file name and text."""
    ids = [case["id"] for case in CASES]
    repeated = sorted(i for i, n in Counter(ids).items() if n > 1)
    if repeated:
        raise ValueError(f"case ids used twice: {repeated}")
    return {f"{case['id']}.json": encode(vector(case)) for case in CASES}


def table(vectors: list[dict[str, Any]]) -> str:
    """The docs' table: the count of vectors per tag, then each rule cited and its vectors."""
    tags: Counter[str] = Counter(tag for v in vectors for tag in v["tags"])
    versions = Counter(v["protocol"] for v in vectors)
    lines = [
        TABLE_START,
        "",
        f"{len(vectors)} vectors: {versions[2]} v2, {versions[1]} v1.",
        "",
        "| Tag | Vectors |",
        "|---|---|",
        *(f"| `{tag}` | {count} |" for tag, count in sorted(tags.items())),
        "",
        "| Rule cited | Source | Vectors |",
        "|---|---|---|",
    ]
    by_rule: dict[tuple[str, str], list[str]] = {}
    for v in sorted(vectors, key=lambda v: str(v["id"])):
        by_rule.setdefault((v["source"], v["rule"]), []).append(v["id"])
    for (source, rule), ids in sorted(by_rule.items(), key=lambda item: rule_order(item[0])):
        listed = ", ".join(f"`{i}`" for i in ids)
        cell = rule.replace("|", "\\|")
        lines.append(f"| {cell} | {source} | {listed} |")
    lines += ["", TABLE_END]
    return "\n".join(lines)


def with_table(doc: str, vectors: list[dict[str, Any]]) -> str:
    """``doc`` with its vectors table replaced by the one of ``vectors``."""
    head, start, rest = doc.partition(TABLE_START)
    _, end, tail = rest.partition(TABLE_END)
    if not start or not end:
        raise ValueError(f"{DOC.name} has no vectors table markers")
    return head + table(vectors) + tail


def main(argv: list[str]) -> int:
    files = build()
    vectors = [json.loads(text) for text in files.values()]
    doc = DOC.read_text(encoding="utf-8") if DOC.exists() else None
    if "--check" in argv:
        committed = {p.name: p.read_text(encoding="utf-8") for p in VECTORS.glob("*.json")}
        stale = sorted(set(files) ^ set(committed)) + sorted(
            name for name in files if name in committed and committed[name] != files[name]
        )
        doc_stale = doc is not None and with_table(doc, vectors) != doc
        for name in stale:
            print(f"differs: {name}")
        if doc_stale:
            print(f"differs: the table in {DOC.name}")
        return 1 if stale or doc_stale else 0
    VECTORS.mkdir(parents=True, exist_ok=True)
    for old in VECTORS.glob("*.json"):
        if old.name not in files:
            old.unlink()
    for name, text in files.items():
        (VECTORS / name).write_text(text, encoding="utf-8")
    if doc is not None:
        DOC.write_text(with_table(doc, vectors), encoding="utf-8")
    print(f"{len(files)} vectors written to {VECTORS}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
