"""The conformance suite proven on other implementations (issue 32): a TypeScript reducer
(``reducers/reducer.ts``) passes every case, and broken reducers (``reducers/broken.ts``, the
same reducer with one bug real clients shipped) each fail exactly the cases named for their
bug, all through ``acp-toolcalls conformance --reducer``.

The reducers are compiled once per session by the TypeScript pinned in
``tests/interop/node/package.json`` (``tsc``, strict, ``reducers/tsconfig.json``) into a
temporary folder; nothing compiled is committed. Without ``node`` or that TypeScript the tests
skip, or fail under ``ACP_REQUIRE_NODE=1``, as CI runs them.

Time: every reducer run is one ``node`` process, and the runs go one at a time (``--jobs
1``): the suite runs beside the rest of the tests, which time real sessions. The TypeScript
reducer runs on every prefix of every case. A broken reducer runs on every prefix of its
bug's cases, and on the final state of the other cases that share a tag with them
(``--final-only``), where it must pass; the cases of no tag of its bug are passed by the
reducer it overrides one method of (the first test), which is what a broken reducer runs
there.
"""

from __future__ import annotations

import json
import os
import random
import shlex
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from acp_toolcalls.conformance import VECTORS, first_difference, load_vectors
from acp_toolcalls.convert._diffs import git_patch
from tests.builds import child_env
from tests.interop.ts_sdk import INSTALL_COMMAND, NODE_DIR, REQUIRE_NODE_ENV

pytestmark = pytest.mark.typescript  # .ci/run's compiled stage leaves them out: no compiled code

REDUCERS = Path(__file__).resolve().parent / "reducers"
TSC = NODE_DIR / "node_modules" / ".bin" / "tsc"
ROOT = Path(__file__).resolve().parents[2]
ALL = {vector.id: vector for vector in load_vectors()}

BUG_CASES: dict[str, frozenset[str]] = {
    # `null` read as "no change": every case whose state holds a clear (a field, `_meta` or a
    # `_meta` key, a terminal's output) fails, v1 ones only where a v1 `_meta` key is cleared.
    "null-as-skip": frozenset(
        {
            "capabilities-replaced-whole",
            "chunk-after-null-content",
            "empty-locations-clears",
            "meta-null-clears-all",
            "meta-patches-by-key",
            "name-omitted-null-value",
            "null-clears-raw-input",
            "null-clears-raw-output",
            "null-clears-title",
            "null-content-clears",
            "null-resets-kind",
            "null-resets-status",
            "null-title-status-raw-at-once",
            "permission-subject-meta-patches",
            "permission-subject-null-clears",
            "terminal-exit-status-replaced-whole",
            "terminal-meta-patches",
            "terminal-null-output-clears",
            "terminal-output-keeps-its-meta-through-chunks",
            "terminal-output-replaces-bytes",
            "terminal-unknown-keys-kept-and-patched",
            "unknown-key-kept-and-patched",
            "v1-meta-merges-by-key",
        }
    ),
    # Chunks kept apart and shown after the content: a chunk sent before a replacement
    # survives it (and shows after the replacement's items).
    "chunks-survive-replacement": frozenset(
        {
            "batch-applied-in-array-order",
            "batch-chunks-of-two-calls",
            "chunk-after-empty-content",
            "chunk-after-replacement-appends",
            "permission-subject-content-replaces",
            "replacement-drops-earlier-chunks",
        }
    ),
    # An update without a status, or a chunk, reopens a finished call.
    "late-update-revives": frozenset(
        {
            "chunk-does-not-touch-other-fields",
            "late-chunk-keeps-final-status",
            "late-update-without-status-keeps-final",
        }
    ),
    # `[]` read as "no change".
    "empty-array-unchanged": frozenset(
        {
            "batch-chunks-of-two-calls",
            "chunk-after-empty-content",
            "empty-content-clears",
            "empty-locations-clears",
            "replacement-drops-earlier-chunks",
            "v1-update-content-replaces",
        }
    ),
    # `_meta` replaced whole instead of patched by key.
    "meta-replaced": frozenset(
        {
            "meta-empty-object-changes-nothing",
            "meta-null-clears-all",
            "meta-null-key-on-new-id-is-absent",
            "meta-patches-by-key",
            "permission-subject-meta-patches",
            "terminal-meta-patches",
            "v1-meta-merges-by-key",
        }
    ),
}
"""Each bug of ``broken.ts`` and the cases of the bundled suite it fails."""


def _pinned_typescript() -> str:
    manifest = json.loads((NODE_DIR / "package.json").read_text(encoding="utf-8"))
    return str(manifest["dependencies"]["typescript"])


def typescript_unavailable() -> str | None:
    """Why the reducers cannot be compiled and run here, or ``None`` when they can."""
    if shutil.which("node") is None:
        return f"`node` is not on PATH: install Node.js >= 20.6, then run `{INSTALL_COMMAND}`"
    installed = NODE_DIR / "node_modules" / "typescript" / "package.json"
    if not TSC.is_file() or not installed.is_file():
        return f"typescript is not installed: run `{INSTALL_COMMAND}`"
    found = str(json.loads(installed.read_text(encoding="utf-8")).get("version"))
    pinned = _pinned_typescript()
    if found != pinned:
        return f"typescript {found} is installed, {pinned} is pinned: run `{INSTALL_COMMAND}`"
    return None


@pytest.fixture(scope="session")
def compiled(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The folder of the compiled reducers (``reducer.js``, ``broken.js``, ``gitpatch.js``)."""
    reason = typescript_unavailable()
    if reason is not None:
        if os.environ.get(REQUIRE_NODE_ENV) == "1":
            pytest.fail(f"{reason} ({REQUIRE_NODE_ENV}=1 forbids skipping)", pytrace=False)
        pytest.skip(reason)
    out = tmp_path_factory.mktemp("reducers")
    done = subprocess.run(
        [str(TSC), "-p", str(REDUCERS), "--outDir", str(out)],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, f"tsc failed:\n{done.stdout}{done.stderr}"
    return out


def node_command(script: Path, *args: str) -> str:
    return shlex.join(["node", str(script), *args])


def conformance(*args: str) -> dict[str, Any]:
    """``acp-toolcalls conformance ... --json``: its report (exit 0 or 1, never another)."""
    script = shutil.which("acp-toolcalls", path=str(Path(sys.executable).parent))
    assert script is not None
    done = subprocess.run(
        [script, "conformance", *args, "--json"],
        capture_output=True,
        text=True,
        timeout=900,
        check=False,
        env=child_env(),
    )
    assert done.returncode in (0, 1), done.stdout[-2000:] + done.stderr
    report: dict[str, Any] = json.loads(done.stdout)
    assert done.returncode == (1 if report["failed"] else 0)
    return report


def suite(folder: Path, ids: set[str] | frozenset[str]) -> Path:
    """A folder holding the bundled vectors ``ids``."""
    folder.mkdir()
    for vector_id in ids:
        shutil.copyfile(VECTORS / f"{vector_id}.json", folder / f"{vector_id}.json")
    return folder


def failing(report: dict[str, Any]) -> set[str]:
    return {failure["id"] for failure in report["failures"]}


def test_the_typescript_reducer_passes_every_case_at_every_message(compiled: Path) -> None:
    report = conformance("--reducer", node_command(compiled / "reducer.js"), "--jobs", "1")
    assert report["checked"] == "state after each message"
    assert report["failures"] == []
    assert (report["cases"], report["passed"]) == (len(ALL), len(ALL))


@pytest.mark.parametrize("bug", sorted(BUG_CASES))
def test_a_broken_reducer_fails_exactly_the_cases_of_its_bug(
    compiled: Path, tmp_path: Path, bug: str
) -> None:
    cases = BUG_CASES[bug]
    assert cases <= ALL.keys(), f"not in the suite: {sorted(cases - ALL.keys())}"
    reducer = node_command(compiled / "broken.js", "--bug", bug)
    named = conformance(
        "--reducer", reducer, "--jobs", "1", "--vectors", str(suite(tmp_path / "named", cases))
    )
    assert failing(named) == cases
    for failure in named["failures"]:  # a wrong state, not a crash: the first difference
        assert failure["path"].startswith("$.sessions."), failure
    tags = {tag for case in cases for tag in ALL[case].tags}
    others = {case for case, vector in ALL.items() if tags & set(vector.tags)} - cases
    rest = conformance(
        "--reducer", reducer, "--final-only", "--jobs", "1",
        "--vectors", str(suite(tmp_path / "rest", others)),
    )  # fmt: skip
    assert failing(rest) == set()
    assert rest["passed"] == len(others)


def test_a_broken_reducer_without_a_known_bug_is_a_usage_error(compiled: Path) -> None:
    done = subprocess.run(
        ["node", str(compiled / "broken.js"), "--bug", "no-such-bug"],
        input="",
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 2
    assert done.stdout == ""
    assert done.stderr.startswith("usage: node broken.js --bug {null-as-skip,")


@pytest.mark.parametrize(
    "log",
    [
        "examples/session-v1.jsonl",
        "examples/session-v2.jsonl",
        "examples/buggy-v2.jsonl",
        "tests/data/session-content.jsonl",
        "tests/data/unstable-updates.jsonl",
        "tests/data/unstable-updates-v1.jsonl",
    ],
)
def test_the_typescript_reducer_folds_the_plain_logs_as_replay_does(
    compiled: Path, log: str
) -> None:
    # Longer streams than the cases: terminals, v1 diffs and terminals, invalid values of a
    # buggy agent, `session` items.
    stream = (ROOT / log).read_text(encoding="utf-8")
    script = shutil.which("acp-toolcalls", path=str(Path(sys.executable).parent))
    assert script is not None
    expected = subprocess.run(
        [script, "replay", "--json", str(ROOT / log)],
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
        env=child_env(),
    )
    got = subprocess.run(
        ["node", str(compiled / "reducer.js")],
        input=stream,
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    assert first_difference(json.loads(expected.stdout), json.loads(got.stdout)) is None


_GIT_PATCH_DRIVER = """
const { gitPatch } = require(process.argv[1]);
let input = "";
process.stdin.on("data", (chunk) => (input += chunk));
process.stdin.on("end", () => {
  const patches = JSON.parse(input).map(([path, before, after]) => gitPatch(path, before, after));
  process.stdout.write(JSON.stringify(patches));
});
"""


def test_the_typescript_git_patch_is_the_stores(compiled: Path) -> None:
    # A v1 diff becomes a v2 diff with a generated Git patch (D26); the port of difflib in
    # gitpatch.ts must write the store's text byte for byte, long texts (difflib's autojunk
    # past 200 lines), missing newlines and quoted paths included.
    rng = random.Random(32)
    lines = ["a\n", "b\n", "c\n", "d\n", "\n", "x", "\u00e9\n", "tail"]
    paths = ["/r/a.txt", "/r/a b.txt", "/r/\u00e9.txt", '/r/"q".txt', "/r/t\tab"]

    def text() -> str:
        return "".join(rng.choice(lines) for _ in range(rng.choice([0, 1, 3, 12, 40, 260])))

    cases: list[tuple[str, str | None, str]] = [
        (rng.choice(paths), None if rng.random() < 0.2 else text(), text()) for _ in range(600)
    ]
    done = subprocess.run(
        ["node", "-e", _GIT_PATCH_DRIVER, str(compiled / "gitpatch.js")],
        input=json.dumps(cases),
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    got = json.loads(done.stdout)
    assert len(got) == len(cases)
    for (path, before, after), patch in zip(cases, got, strict=True):
        assert patch == git_patch(path, before, after), (path, before, after)
