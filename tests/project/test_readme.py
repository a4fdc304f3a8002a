"""The README's commands are the ones newcomers run; CONTRIBUTING.md's test command is CI's."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def _blocks(name: str, language: str) -> list[str]:
    """The fenced ``language`` blocks of the file ``name`` (relative to the root), in order."""
    text = (ROOT / name).read_text(encoding="utf-8")
    return [block.split("```", 1)[0] for block in text.split(f"```{language}\n")[1:]]


def test_ci_runs_the_contributing_test_command() -> None:
    # CONTRIBUTING.md's one ```sh block is the test command (the pure-Python package,
    # editable): a line of its own in CI, which then runs the same suite again on a compiled
    # wheel built from the sdist. The README sends contributors there.
    (test_command,) = [block.strip() for block in _blocks("CONTRIBUTING.md", "sh")]
    assert test_command.endswith("&& pytest -n 4 --dist loadfile") and "\n" not in test_command
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8").strip().splitlines()
    assert test_command in ci
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert "](CONTRIBUTING.md" in readme


def test_readme_main_command_replays_the_bundled_demo() -> None:
    # A bare `acp-toolcalls replay` on a terminal replays the example shipped in the package.
    main_command = _blocks("README.md", "sh")[0].strip()
    assert main_command.endswith("pip install . && acp-toolcalls replay")
    assert (ROOT / "src" / "acp_toolcalls" / "data" / "demo-session.jsonl").is_file()


def test_readme_links_lead_to_files() -> None:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    # Relative links (no scheme), without their #fragment: docs/inspect-demo.png included.
    targets = set(re.findall(r"\]\(([^)#:\s]+)(?:#[^)]*)?\)", text))
    assert "CONTRIBUTING.md" in targets and "docs/usage.md" in targets
    for target in targets:
        assert (ROOT / target).exists(), target


def test_readme_python_examples_run() -> None:
    # The README's three snippets (store, emitter, converter), then docs/usage.md's in full.
    for name, least in (("README.md", 3), ("docs/usage.md", 3)):
        blocks = _blocks(name, "python")
        assert len(blocks) >= least, name
        for block in blocks:
            exec(compile(block, name, "exec"), {})


def test_the_readme_quotes_convert_as_it_speaks(tmp_path: Path) -> None:
    # The README quotes a line of `convert`'s stderr: it must be what convert prints.
    import json
    import subprocess
    import sys

    text = (ROOT / "README.md").read_text(encoding="utf-8")
    section = text[text.index("## Convert a log") : text.index("## Exit codes")]
    (quoted,) = re.findall(r"`(line 3: [^`]*)`", section)

    def tcu(**fields: object) -> dict[str, object]:
        update = {"sessionUpdate": "tool_call_update", "toolCallId": "c1", **fields}
        return {"jsonrpc": "2.0", "method": "session/update",
                "params": {"sessionId": "s1", "update": update}}  # fmt: skip

    log = tmp_path / "log.jsonl"
    lines = [tcu(title="Run", status="in_progress"), tcu(title="Run"), tcu(status="cancelled")]
    log.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    done = subprocess.run(
        [sys.executable, "-m", "acp_toolcalls", "convert", "--to", "v1", str(log)],
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    assert quoted in done.stderr.splitlines()
