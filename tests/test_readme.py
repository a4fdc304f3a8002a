"""The README's commands are the ones CI and newcomers run."""

from __future__ import annotations

from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def _readme_commands() -> list[str]:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    blocks = text.split("```sh\n")[1:]
    return [block.split("```", 1)[0].strip() for block in blocks]


def test_ci_runs_the_readme_test_command() -> None:
    test_command = _readme_commands()[1]
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8").strip().splitlines()
    assert ci[-1] == test_command


def test_readme_main_command_replays_the_bundled_demo() -> None:
    # A bare `acp-toolcalls replay` on a terminal replays the example shipped in the package.
    main_command = _readme_commands()[0]
    assert main_command.endswith("pip install . && acp-toolcalls replay")
    assert (ROOT / "src" / "acp_toolcalls" / "data" / "demo-session.jsonl").is_file()
