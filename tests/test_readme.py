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


def test_readme_main_command_uses_a_shipped_example() -> None:
    main_command = _readme_commands()[0]
    example = main_command.rsplit(" ", 1)[-1]
    assert "acp-toolcalls validate" in main_command
    assert (ROOT / example).is_file()
