"""Coverage-guided fuzzing of acp-toolcalls with atheris (libFuzzer for Python). Manual, not CI.

Setup, once, in the project's virtual environment. atheris is deliberately not a dependency
or extra of the package: it is needed only here, and where pip finds no binary wheel for it
(CPython 3.11 on Linux x86-64 has one) it builds from source and needs clang with libFuzzer::

    pip install -e '.[test]' atheris

Run one target for 15 minutes (the corpus directory is created and seeded on first use)::

    python fuzz/run.py codec -max_total_time=900

The JSON and tool-call dictionary ``fuzz/acp.dict`` is used unless ``-dict=`` is given, and
the stream targets take inputs of at most 8 KiB unless ``-max_len=`` is given.
Any other libFuzzer flag works (``-jobs=2``, ``-max_len=4096``, ``-runs=N``, a corpus directory
of your own as the first positional argument). New inputs go to ``fuzz/corpus/TARGET/``;
a crash (an invariant broken, or any exception the API does not document) stops the run and
is written to ``fuzz/artifacts/TARGET/crash-*``; replay one with
``python fuzz/run.py TARGET fuzz/artifacts/TARGET/crash-...``.

Targets, each asserting the invariants of the hypothesis targets (``tests/fuzz/targets.py``):

``codec``
    the input is one line, read by ``decode_message`` as v1 and as v2;
``store``
    the first byte picks the store's protocol (v1, v2, auto) and tiny caps; the rest is
    JSON Lines applied to a ``ToolCallStore``;
``v2-to-v1``
    the first byte picks coalescing, the terminal profile and tiny caps; each further line is
    converted by a ``V2ToV1Bridge``, except ``#flush``, ``#flush SESSION`` and
    ``#close SESSION``;
``v1-to-v2``
    the same lines through a ``V1ToV2Bridge``;
``stateless``
    the first byte picks ``StatelessV2ToV1`` or ``StatelessV1ToV2`` (also run strict).

The acp_toolcalls modules are instrumented (``atheris.instrument_imports``); msgspec and the
mypyc-compiled ``_fastpath`` are C, so their branches are not coverage feedback.
"""

from __future__ import annotations

import hashlib
import importlib
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any, Literal

import atheris

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))  # `tests.fuzz` and `benchmarks.messages`, which it imports

INSTRUMENTED = (
    "codec", "codec._lenient", "models._jsonrpc", "models._wire", "v1", "v2", "store", "events",
    "convert._loss", "convert._kernel", "convert._content", "convert._diffs", "convert._plain",
    "convert._tool_calls", "convert._permissions", "convert._opaque", "convert._session_updates",
    "convert._stateless", "bridge._to_v1", "bridge._to_v2", "bridge._terminal_text",
    "agent._permissions", "agent",
)  # fmt: skip
"""The modules whose branches guide the fuzzer (imported instrumented, before anything else)."""

with atheris.instrument_imports(include=["acp_toolcalls"]):
    for module in INSTRUMENTED:
        importlib.import_module(f"acp_toolcalls.{module}")

from acp_toolcalls.store import Limits  # noqa: E402
from tests.fuzz import corpus, targets  # noqa: E402

TINY = Limits(max_content_items=3, max_terminal_bytes=32, max_tool_calls=2)
MAX_LINES = 40


def _script(lines: list[bytes]) -> targets.Script:
    script: targets.Script = []
    for line in lines[:MAX_LINES]:
        if line.startswith(b"#flush"):
            session = line[7:].decode("utf-8", "replace") or None
            script.append(("flush", session))
        elif line.startswith(b"#close "):
            script.append(("close", line[7:].decode("utf-8", "replace")))
        else:
            script.append(("convert", line))
    return script


def _split(data: bytes) -> tuple[int, list[bytes]]:
    config = data[0] if data else 0
    return config, data[1:].split(b"\n")


def codec(data: bytes) -> None:
    for protocol in ("v1", "v2"):
        targets.check_decode(data, protocol)


def store(data: bytes) -> None:
    config, lines = _split(data)
    protocols: tuple[Literal["v1", "v2", "auto"], ...] = ("v1", "v2", "auto")
    protocol = protocols[config % 3]
    targets.run_store(lines[:MAX_LINES], protocol, TINY if config & 4 else None)


def v2_to_v1(data: bytes) -> None:
    config, lines = _split(data)
    targets.run_v2_to_v1(
        _script(lines),
        coalesce=bool(config & 1),
        profile="meta" if config & 2 else "text",
        limits=TINY if config & 4 else None,
    )


def v1_to_v2(data: bytes) -> None:
    _, lines = _split(data)
    targets.run_v1_to_v2(_script(lines))


def stateless(data: bytes) -> None:
    config, lines = _split(data)
    targets.run_stateless(_script(lines), "v1" if config & 1 else "v2")


TARGETS: dict[str, Callable[[bytes], None]] = {
    "codec": codec,
    "store": store,
    "v2-to-v1": v2_to_v1,
    "v1-to-v2": v1_to_v2,
    "stateless": stateless,
}


def _files() -> dict[str, bytes]:
    return {
        path.name: path.read_bytes()
        for path in [
            *sorted((REPO / "examples").glob("*.jsonl")),
            REPO / "src/acp_toolcalls/data/demo-session.jsonl",
        ]
    }


def _streams(protocol: str) -> list[bytes]:
    """Whole example logs and runs of seed lines, with flushes and closes mixed in."""
    lines = corpus.LINES[protocol]
    runs = [b"\n".join(lines[i : i + 25]) for i in range(0, len(lines), 25)]
    files = [content for name, content in _files().items() if ("-v1" in name) == (protocol == "v1")]
    extra = [lines[0] + b"\n#flush\n" + lines[-1] + b"\n#close s1\n" + lines[1]]
    return files + runs + extra


def seeds(target: str) -> list[bytes]:
    if target == "codec":
        return corpus.LINES["v1"] + corpus.LINES["v2"]
    if target == "store":
        return [bytes([config]) + stream for stream in _streams("v2") for config in (1, 4)] + [
            bytes([0]) + stream for stream in _streams("v1")
        ]
    if target == "v2-to-v1":
        return [bytes([config]) + stream for stream in _streams("v2") for config in (0, 1, 6)]
    if target == "v1-to-v2":
        return [bytes([0]) + stream for stream in _streams("v1")]
    return [bytes([0]) + s for s in _streams("v2")] + [bytes([1]) + s for s in _streams("v1")]


def main(argv: list[str]) -> None:
    if len(argv) < 2 or argv[1] not in TARGETS:
        sys.exit(f"usage: {argv[0]} {{{','.join(TARGETS)}}} [libFuzzer flags] [corpus dir]")
    name = argv[1]
    flags: list[Any] = [arg for arg in argv[2:] if arg.startswith("-")]
    paths = [arg for arg in argv[2:] if not arg.startswith("-")]
    if not paths:  # our corpus directory, seeded from the example logs on first use
        directory = REPO / "fuzz/corpus" / name
        directory.mkdir(parents=True, exist_ok=True)
        if not any(directory.iterdir()):
            for seed in seeds(name):
                (directory / hashlib.sha1(seed).hexdigest()).write_bytes(seed)
        paths = [str(directory)]
    if name != "codec" and not any(flag.startswith("-max_len=") for flag in flags):
        flags.append("-max_len=8192")  # streams of a few dozen lines: thousands of runs a minute
    if not any(flag.startswith("-dict=") for flag in flags):
        flags.append(f"-dict={REPO / 'fuzz/acp.dict'}")
    if not any(flag.startswith("-artifact_prefix=") for flag in flags):
        artifacts = REPO / "fuzz/artifacts" / name
        artifacts.mkdir(parents=True, exist_ok=True)
        flags.append(f"-artifact_prefix={artifacts}/")
    atheris.Setup([argv[0], *flags, *paths], TARGETS[name])
    atheris.Fuzz()


if __name__ == "__main__":
    main(sys.argv)
