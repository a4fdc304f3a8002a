"""The README's commands are the ones CI and newcomers run."""

from __future__ import annotations

from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def _readme_commands() -> list[str]:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    blocks = text.split("```sh\n")[1:]
    return [block.split("```", 1)[0].strip() for block in blocks]


def test_ci_runs_the_readme_test_command() -> None:
    # The README's command (the pure-Python package, editable) is a line of its own in CI,
    # which then runs the same suite again on a compiled wheel built from the sdist.
    test_command = _readme_commands()[1]
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8").strip().splitlines()
    assert test_command in ci


def test_readme_main_command_replays_the_bundled_demo() -> None:
    # A bare `acp-toolcalls replay` on a terminal replays the example shipped in the package.
    main_command = _readme_commands()[0]
    assert main_command.endswith("pip install . && acp-toolcalls replay")
    assert (ROOT / "src" / "acp_toolcalls" / "data" / "demo-session.jsonl").is_file()


def test_readme_python_examples_run() -> None:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    blocks = [block.split("```", 1)[0] for block in text.split("```python\n")[1:]]
    assert len(blocks) >= 2
    for block in blocks:
        exec(compile(block, "README.md", "exec"), {})


def test_the_readme_quotes_convert_as_it_speaks(tmp_path: Path) -> None:
    # The README quotes a line of `convert`'s stderr: it must be what convert prints.
    import json
    import re
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
