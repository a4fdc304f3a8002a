"""``acp-toolcalls inspect`` on a big log: the time to write the report, its size, and how
soon headless Chromium paints it.

The log is ``messages.generate(N)`` (default 200,000 lines, the command-line figures' corpus
in docs/benchmarks.md). Steps, each timed:

1. ``acp-toolcalls inspect LOG -o REPORT`` in a subprocess (wall time, peak memory from
   ``os.wait4``), next to its baseline in the same run, ``replay --json LOG`` (the same
   reading and store, without the history, the validation and the page), and the report's
   size;
2. the report opened in headless Chromium (Debian's ``chromium`` and ``chromium-driver``,
   through Selenium) ``--runs`` times, each in a fresh browser: first contentful paint (the
   page's own ``performance`` paint entry), the first cards shown (the page's ``cards-shown``
   mark), and the JS heap then;
3. a scroll to the end of the list: the time until the next page of cards is in.

Usage: ``python benchmarks/bench_inspect.py [--lines N] [--runs K] [--keep DIR]``.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))

import messages
from test_inspect_browser import new_browser, open_report, wait_for

PAINT = """
const paint = performance.getEntriesByName('first-contentful-paint')[0];
const cards = performance.getEntriesByName('cards-shown')[0];
return {
  fcp: paint ? paint.startTime : null,
  cards: cards ? cards.startTime : null,
  heap: performance.memory ? performance.memory.usedJSHeapSize : null,
  shown: document.querySelectorAll('#cards > .card').length,
  total: R.cards.length,
};
"""


def _page(driver: Any, report: Path) -> dict[str, Any]:
    started = time.perf_counter()
    open_report(driver, report)
    loaded = time.perf_counter() - started
    figures = dict(driver.execute_script(PAINT))
    figures["get"] = loaded * 1000
    shown = figures["shown"]
    started = time.perf_counter()
    driver.execute_script("window.scrollTo(0, document.body.scrollHeight)")
    wait_for(
        driver,
        f"return document.querySelectorAll('#cards > .card').length > {shown}",
        "more cards",
    )
    figures["scroll"] = (time.perf_counter() - started) * 1000
    return figures


def _process(args: list[str]) -> tuple[float, float]:
    """Seconds and peak RSS (MiB) of ``acp-toolcalls ARGS``, its output thrown away."""
    command = [sys.executable, "-m", "acp_toolcalls", *args]
    started = time.perf_counter()
    with open(os.devnull, "wb") as null:
        child = subprocess.Popen(command, stdout=null, stderr=null)
        _, status, usage = os.wait4(child.pid, 0)
    took = time.perf_counter() - started
    child.returncode = os.waitstatus_to_exitcode(status)
    if child.returncode != 0:
        raise SystemExit(f"{command} exited {child.returncode}")
    return took, usage.ru_maxrss / 1024


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--lines", type=int, default=200_000)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--keep", type=Path, default=None, help="keep the log and report here")
    args = parser.parse_args()
    work = args.keep or Path(tempfile.mkdtemp())
    work.mkdir(parents=True, exist_ok=True)
    log, report = work / "big.jsonl", work / "big.html"
    log.write_bytes(b"".join(line + b"\n" for line in messages.generate(args.lines)))
    print(f"log: {args.lines:,} lines, {log.stat().st_size / 1e6:.1f} MB")

    base, base_peak = _process(["replay", "--json", str(log)])
    print(f"replay --json (baseline): {base:.1f} s, peak RSS {base_peak:.0f} MiB")
    took, peak = _process(["inspect", str(log), "-o", str(report)])
    size = report.stat().st_size
    print(
        f"inspect: {took:.1f} s ({took / base:.2f}x replay --json), peak RSS {peak:.0f} MiB; "
        f"report {size / 1e6:.1f} MB ({size / log.stat().st_size:.2f}x the log)"
    )

    runs = []
    for _ in range(args.runs):
        driver = new_browser()
        try:
            runs.append(_page(driver, report))
        finally:
            driver.quit()
    for key, what in (
        ("fcp", "first contentful paint"),
        ("cards", "first cards shown"),
        ("get", "driver.get until cards (incl. load)"),
        ("scroll", "next page of cards after a scroll"),
    ):
        values = [r[key] for r in runs if r[key] is not None]
        print(
            f"{what}: median {statistics.median(values):.0f} ms "
            f"(runs: {', '.join(f'{v:.0f}' for v in values)})"
        )
    heap = [r["heap"] for r in runs if r["heap"]]
    if heap:
        print(f"JS heap after the first cards: {statistics.median(heap) / 1e6:.0f} MB")
    print(f"cards in the document at first: {runs[0]['shown']} of {runs[0]['total']:,}")
    if args.keep is None:
        os.unlink(log)
        os.unlink(report)


if __name__ == "__main__":
    main()
