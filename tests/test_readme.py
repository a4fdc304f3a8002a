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
