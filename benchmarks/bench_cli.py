"""The command line as a user runs it: start-up, and the commands on a big log (issue 17).

Every figure is a whole process (``subprocess`` + ``os.wait4``: wall time and peak RSS),
best and median of N rounds, measured in this run next to its baseline:

1. start-up: ``acp-toolcalls --version`` (the console script) and ``python -m acp_toolcalls
   --version`` against ``python -c pass`` (target: under 2x);
2. a log of ``messages.generate`` (200,000 lines by default), written to a temporary file:
   ``validate`` (target: at most 3x), ``replay`` tables piped (80 columns: one block per call)
   and as a 160-column table (target: at most 2x), each against ``replay --json``.

Output goes to /dev/null, which is not a terminal: no progress bar, tables as on a pipe.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # for `benchmarks.*`
from benchmarks.environment import print_environment


def _once(argv: list[str]) -> tuple[float, int, int]:
    """Wall seconds, peak RSS in KiB and exit status of one run."""
    start = time.perf_counter()
    # posix_spawn (close_fds=False): a forked copy of this process would count in the child's
    # peak RSS, which Linux keeps across exec.
    proc = subprocess.Popen(
        argv, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, close_fds=False
    )
    _, status, usage = os.wait4(proc.pid, 0)
    elapsed = time.perf_counter() - start
    proc.returncode = os.waitstatus_to_exitcode(status)
    return elapsed, usage.ru_maxrss, proc.returncode


def _measure(argv: list[str], rounds: int) -> tuple[float, float, int, int]:
    runs = [_once(argv) for _ in range(rounds)]
    times = [t for t, _, _ in runs]
    return min(times), statistics.median(times), max(r for _, r, _ in runs), runs[0][2]


def _report(label: str, result: tuple[float, float, int, int], base: float, unit: str) -> None:
    best, median, rss, code = result
    scale, suffix = (1e3, "ms") if unit == "ms" else (1.0, "s ")
    print(
        f"  {label:44s} {best * scale:8.2f} {suffix} (median {median * scale:8.2f})  "
        f"{best / base:5.2f}x   peak {rss / 1024:6.0f} MiB   exit {code}"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--lines", type=int, default=200_000)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--startup-rounds", type=int, default=30)
    args = parser.parse_args()
    print_environment()
    script = shutil.which("acp-toolcalls", path=str(Path(sys.executable).parent))
    if script is None:
        raise SystemExit("acp-toolcalls is not installed next to this Python")

    print(f"\n1. start-up, best / median of {args.startup_rounds} (ratio: to python -c pass)")
    base = _measure([sys.executable, "-c", "pass"], args.startup_rounds)
    _report("python -c pass", base, base[0], "ms")
    for label, argv in (
        ("acp-toolcalls --version", [script, "--version"]),
        ("python -m acp_toolcalls --version", [sys.executable, "-m", "acp_toolcalls", "--version"]),
    ):
        _report(label, _measure(argv, args.startup_rounds), base[0], "ms")

    with tempfile.TemporaryDirectory() as tmp:
        log = Path(tmp) / "log.jsonl"
        # Written by a child process, so that this one stays small (see _once).
        writer = (
            "import sys; from messages import generate\n"
            "with open(sys.argv[1], 'wb') as f:\n"
            "    lines = generate(int(sys.argv[2]), int(sys.argv[3]))\n"
            "    f.writelines(line + b'\\n' for line in lines)"
        )
        subprocess.run(
            [sys.executable, "-c", writer, str(log), str(args.lines), str(args.seed)],
            cwd=Path(__file__).resolve().parent,
            check=True,
        )
        size = log.stat().st_size / 1e6
        print(
            f"\n2. a {args.lines:,}-line log (messages.generate, seed {args.seed}, {size:.0f} MB), "
            f"best / median of {args.rounds} (ratio: to replay --json)"
        )
        json_run = _measure([script, "replay", "--json", str(log)], args.rounds)
        _report("replay --json", json_run, json_run[0], "s")
        for label, argv in (
            ("validate", [script, "validate", str(log)]),
            ("validate --json", [script, "validate", "--json", str(log)]),
            ("replay (tables, piped: 80 columns)", [script, "replay", str(log)]),
            ("replay --width 160 (tables)", [script, "replay", "--width", "160", str(log)]),
            (
                "replay --all --width 160 (every row)",
                [script, "replay", "--all", "--width", "160", str(log)],
            ),
        ):
            _report(label, _measure(argv, args.rounds), json_run[0], "s")


if __name__ == "__main__":
    main()
