"""``acp-toolcalls inspect`` on a big log: the time to write the report, its size, and how
soon headless Chromium paints it.

The log is ``messages.generate(N)`` (default 200,000 lines, the command-line figures' corpus
in docs/benchmarks.md). Steps, each timed:

1. ``acp-toolcalls inspect --jobs 2`` and ``--jobs 1 LOG -o REPORT`` in a subprocess (wall
   time; peak memory, ``VmHWM`` read every 50 ms, of the command's process and the sum with
   its checks' process), next to its baseline in the same run, ``replay --json LOG`` (the
   same reading and store, without the history, the validation and the page), and the
   report's size;
2. the report opened in headless Chromium (Debian's ``chromium`` and ``chromium-driver``,
   through Selenium) ``--runs`` times, each in a fresh browser: first contentful paint (the
   page's own ``performance`` paint entry), the first cards shown (the page's ``cards-shown``
   mark), and the JS heap then;
3. a scroll to the end of the list: the time until the last cards are drawn;
4. jumps (issue 29), each timed in the page from the click (or the change) until its target
   is drawn, in view and focused: "go to this call" on the last call of the log (the
   buttons' handler, called from the page: a generated log leaves no call open for the
   summary to list), a click on the last finding of the findings list (if the log has one),
   and the scrubber set to the middle of the log (until the list is drawn for it).
   ``--runs`` of each, in one browser.

Usage: ``python benchmarks/bench_inspect.py [--lines N] [--runs K] [--keep DIR] [--page-only]``
(``--page-only``: the log and report already in ``--keep DIR``, only the browser steps).
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

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # `benchmarks.*`, `tests.*`

from benchmarks import messages
from tests.report.test_inspect_browser import new_browser, open_report, wait_for

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


# Start a clock at the next click or change, in the page.
ARM = """
delete window.__t0; delete document.body.dataset.jumped;
for (const kind of ['click', 'change'])
  document.addEventListener(kind, () => { window.__t0 = window.__t0 || performance.now(); },
    {capture: true, once: true});
"""

# Milliseconds from that click until the target is drawn, in view and focused.
LANDED = """
const [card, marker, done] = arguments;
const check = () => {
  const node = document.querySelector(`#cards > .card[data-card="${card}"]`);
  const r = node && node.getBoundingClientRect();
  const seen = node && r.top >= 0 && r.top < innerHeight && node.contains(document.activeElement);
  if (document.body.dataset.jumped === marker && seen) done(performance.now() - window.__t0);
  else requestAnimationFrame(check);
};
check();
"""

# Milliseconds from that change until the list is drawn for the line.
DRAWN = """
const [at, done] = arguments;
const check = () => {
  if (document.body.dataset.shown === String(at)) done(performance.now() - window.__t0);
  else requestAnimationFrame(check);
};
check();
"""


def _jumps(driver: Any, report: Path, runs: int) -> dict[str, list[float]]:
    """Each jump ``runs`` times, the page opened afresh before each (in one browser)."""
    found: dict[str, list[float]] = {"goto": [], "finding": [], "slider": []}
    driver.set_script_timeout(600)
    for _ in range(runs):
        open_report(driver, report)
        # The "go to this call" buttons' handler, on the last call of the log (generated logs
        # leave no call open for the summary to list, so no button stands for it).
        card = driver.execute_script("return R.cards.length - 1")
        side, index = driver.execute_script(
            "const sides = R.cards[arguments[0]].sides;"
            "const s = sides.findIndex((i) => i !== null); return [s, sides[s]];",
            card,
        )
        driver.execute_script(
            "delete document.body.dataset.jumped; window.__t0 = performance.now();"
            "focusCall(arguments[0], arguments[1]);",
            side,
            index,
        )
        found["goto"].append(driver.execute_async_script(LANDED, card, f"call {card}"))
        findings = driver.find_elements("css selector", "#findings .finding .line-link")
        if findings:
            n, side = driver.execute_script(
                "const f = R.findings[R.findings.length - 1]; return [f[0], f[1]]"
            )
            card = driver.execute_script("return R.findingCards[arguments[0]]", f"{side}:{n}")
            if card is not None and findings[-1].get_attribute("data-line") == str(n):
                driver.execute_script(
                    "document.querySelector('#findings details').open = true;" + ARM
                )
                driver.execute_script(
                    "arguments[0].scrollIntoView({block: 'center'})", findings[-1]
                )
                findings[-1].click()
                found["finding"].append(driver.execute_async_script(LANDED, card, str(n)))
        middle = driver.execute_script("return Math.floor(R.lineCount / 2)")
        driver.execute_script(ARM + "delete document.body.dataset.shown;")
        driver.execute_script(
            "const n = document.getElementById('scrub-n'); n.value = arguments[0];"
            "n.dispatchEvent(new Event('change', {bubbles: true}));",
            middle,
        )
        found["slider"].append(driver.execute_async_script(DRAWN, middle))
    return found


def _page(driver: Any, report: Path) -> dict[str, Any]:
    started = time.perf_counter()
    open_report(driver, report)
    loaded = time.perf_counter() - started
    figures = dict(driver.execute_script(PAINT))
    figures["get"] = loaded * 1000
    last = figures["total"] - 1
    started = time.perf_counter()
    driver.execute_script("window.scrollTo(0, document.body.scrollHeight)")
    wait_for(
        driver,
        f"return document.querySelector('#cards > .card[data-card=\"{last}\"]')",
        "the last cards",
    )
    figures["scroll"] = (time.perf_counter() - started) * 1000
    return figures


def _peak_kib(pid: int) -> int:
    """The process's peak resident set so far (``VmHWM``), 0 once it is gone."""
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1])
    except OSError:
        pass
    return 0


def _children(pid: int) -> list[int]:
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                if int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1]) == pid:
                    found.append(int(entry.name))
            except (OSError, ValueError, IndexError):
                pass
    return found


def _process(args: list[str]) -> tuple[float, float, float]:
    """Seconds, peak RSS (MiB) of the command's process and the sum of the peaks of the
    process and its children (MiB) of ``acp-toolcalls ARGS``, its output thrown away. Peaks are
    ``VmHWM``, read every 50 ms: ``os.wait4``'s ``ru_maxrss`` would count this script's own
    size, which a child has before its ``exec`` (Linux keeps that high-water mark across it)."""
    command = [sys.executable, "-m", "acp_toolcalls", *args]
    peaks: dict[int, int] = {}
    started = time.perf_counter()
    with open(os.devnull, "wb") as null:
        child = subprocess.Popen(command, stdout=null, stderr=null)
        while True:
            for each in [child.pid, *_children(child.pid)]:
                peaks[each] = max(peaks.get(each, 0), _peak_kib(each))
            pid, status, _ = os.wait4(child.pid, os.WNOHANG)
            if pid:
                break
            time.sleep(0.05)
    took = time.perf_counter() - started
    child.returncode = os.waitstatus_to_exitcode(status)
    if child.returncode != 0:
        raise SystemExit(f"{command} exited {child.returncode}")
    return took, peaks.get(child.pid, 0) / 1024, sum(peaks.values()) / 1024


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--lines", type=int, default=200_000)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--keep", type=Path, default=None, help="keep the log and report here")
    parser.add_argument(
        "--page-only", action="store_true", help="reuse the report in --keep: the browser only"
    )
    args = parser.parse_args()
    if args.page_only and args.keep is None:
        parser.error("--page-only needs --keep DIR")
    work = args.keep or Path(tempfile.mkdtemp())
    work.mkdir(parents=True, exist_ok=True)
    log, report = work / "big.jsonl", work / "big.html"
    if args.page_only:
        _browser(report, args.runs)
        return
    log.write_bytes(b"".join(line + b"\n" for line in messages.generate(args.lines)))
    print(f"log: {args.lines:,} lines, {log.stat().st_size / 1e6:.1f} MB")

    base, base_peak, _ = _process(["replay", "--json", str(log)])
    print(f"replay --json (baseline): {base:.1f} s, peak RSS {base_peak:.0f} MiB")
    for jobs in ("2", "1"):
        took, peak, both = _process(["inspect", "--jobs", jobs, str(log), "-o", str(report)])
        size = report.stat().st_size
        print(
            f"inspect --jobs {jobs}: {took:.1f} s ({took / base:.2f}x replay --json), peak RSS "
            f"{peak:.0f} MiB ({peak / base_peak:.2f}x), with its checks' process {both:.0f} MiB "
            f"({both / base_peak:.2f}x); report {size / 1e6:.1f} MB "
            f"({size / log.stat().st_size:.2f}x the log)"
        )
    _browser(report, args.runs)
    if args.keep is None:
        os.unlink(log)
        os.unlink(report)


def _median(what: str, values: list[float]) -> None:
    if values:
        print(
            f"{what}: median {statistics.median(values):.0f} ms "
            f"(runs: {', '.join(f'{v:.0f}' for v in values)})"
        )
    else:
        print(f"{what}: nothing to measure in this report")


def _browser(report: Path, count: int) -> None:
    runs = []
    for _ in range(count):
        driver = new_browser()
        try:
            runs.append(_page(driver, report))
        finally:
            driver.quit()
    for key, what in (
        ("fcp", "first contentful paint"),
        ("cards", "first cards shown"),
        ("get", "driver.get until cards (incl. load)"),
        ("scroll", "the last cards drawn after a scroll to the end"),
    ):
        _median(what, [r[key] for r in runs if r[key] is not None])
    heap = [r["heap"] for r in runs if r["heap"]]
    if heap:
        print(f"JS heap after the first cards: {statistics.median(heap) / 1e6:.0f} MB")
    print(f"cards in the document at first: {runs[0]['shown']} of {runs[0]['total']:,}")
    driver = new_browser()
    try:
        jumps = _jumps(driver, report, count)
        in_document = driver.execute_script("return document.querySelectorAll('.card').length")
    finally:
        driver.quit()
    _median('jump: "go to this call" on the last call until in view', jumps["goto"])
    _median("jump: a click on the last finding until its call is in view", jumps["finding"])
    _median("jump: the scrubber to the middle of the log until the list is drawn", jumps["slider"])
    print(f"cards in the document after the jumps: {in_document}")


if __name__ == "__main__":
    main()
