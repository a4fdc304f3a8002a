"""What ``acp-toolcalls bridge --inspect`` costs the session it watches: latency and memory.

    python benchmarks/bench_live.py [--reps R] [--messages N] [--interval-ms MS]
        [--long N] [--long-interval-ms MS]

The scripted agent and driver of ``bench_proxy.py`` (v2 agent, v1 client: the bridge
converting, ``--coalesce-ms 0``), in setups run interleaved, run by run:

- ``cat proxy``: the baseline of ``bench_proxy.py``, an asyncio proxy forwarding lines;
- ``bridge``: ``acp-toolcalls bridge``;
- ``bridge --inspect``: the same, its live page served and nobody watching;
- ``bridge --inspect, watched``: the same, with headless Chromium (Debian's ``chromium``
  through Selenium) showing the live page from before the session starts to its end.

Latency (``--messages``, one every ``--interval-ms``): as ``bench_proxy.py --only latency``,
per message from the agent's write to the driver's read; per run, each setup's median minus
the ``cat`` proxy's, and the p99 of all runs. Memory: the peak RSS (``VmHWM``) of the bridge
process and of its watcher (``cli._live_bridge``, the process that serves the page), read at
the end of each turn, before the session ends.

A long session (``--long`` messages, one every ``--long-interval-ms``; default 100,000, one
every 0.1 ms): the peak RSS of ``bridge``, ``bridge --inspect`` and ``bridge --inspect,
watched``, one run each; and what the watching page holds at the end (its cards, its
``/data`` size).
"""

from __future__ import annotations

import argparse
import functools
import os
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # `benchmarks.*`, `tests.*`
from benchmarks.bench_proxy import _agent, _bridge, _cat_proxy, _load, _spread, measure
from benchmarks.environment import print_environment

DIRECTION = ("v2 agent -> v1 client", 2, 1)


def _hwm(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    return 0.0


def _watcher_of(pid: int) -> int | None:
    """The bridge's ``--inspect`` process (``cli._live_bridge``), if it has one."""
    for child in Path(f"/proc/{pid}/task/{pid}/children").read_text().split():
        if b"_live_bridge" in Path(f"/proc/{child}/cmdline").read_bytes():
            return int(child)
    return None


WATCHER_RSS: dict[int, float] = {}  # id(list) -> the watcher's peak, beside the bridge's


def peak_rss(process: subprocess.Popen[bytes], into: list[float]) -> None:
    """The bridge's peak resident set (``VmHWM``), in MiB, appended to ``into``; its
    watcher's, if any, kept in ``WATCHER_RSS`` for the same list."""
    into.append(_hwm(process.pid))
    watcher = _watcher_of(process.pid)
    if watcher is not None:
        WATCHER_RSS[id(into)] = max(WATCHER_RSS.get(id(into), 0.0), _hwm(watcher))


@contextmanager
def browser() -> Iterator[Any]:
    from tests.report.test_inspect_browser import new_browser

    driver = new_browser()
    try:
        yield driver
    finally:
        driver.quit()


def watcher(driver: Any) -> Callable[[str], None]:
    """Opens the live page and waits for its events to be connected."""

    def watch(url: str) -> None:
        driver.get(url)
        deadline = time.monotonic() + 30
        while driver.execute_script("return document.body.dataset.live") != "connected":
            if time.monotonic() > deadline:
                raise RuntimeError("the live page did not connect")
            time.sleep(0.02)

    return watch


def _inspect(command: list[str]) -> list[str]:
    at = command.index("bridge") + 1
    return [*command[:at], "--inspect", *command[at:]]


def latency_main(args: argparse.Namespace, driver: Any) -> None:
    direction, agent_version, client_version = DIRECTION
    stamps = os.path.join(tempfile.mkdtemp(prefix="bench_live_"), "stamps.json")
    agent = _agent(agent_version, args.messages, args.interval_ms / 1000.0, stamps)
    bridge = _bridge(agent, agent_version)
    setups: dict[str, tuple[list[str], Any]] = {
        "cat proxy": (_cat_proxy(agent), None),
        "bridge": (bridge, None),
        "bridge --inspect": (_inspect(bridge), lambda url: None),
        "bridge --inspect, watched": (_inspect(bridge), watcher(driver)),
    }
    print(
        f"latency      {direction}, {args.messages} messages per run, one every "
        f"{args.interval_ms} ms; {args.reps} runs per setup, interleaved"
    )
    every: dict[str, list[float]] = {name: [] for name in setups}
    medians: dict[str, list[float]] = {name: [] for name in setups}
    peaks: dict[str, list[float]] = {name: [] for name in setups}
    for rep in range(args.reps):
        for name, (command, watch) in setups.items():
            at_end = None if name == "cat proxy" else lambda p, n=name: peak_rss(p, peaks[n])
            latencies = measure(command, client_version, args.messages, watch, at_end)
            every[name] += latencies
            medians[name].append(statistics.median(latencies))
        print(f"  run {rep + 1}/{args.reps} done", file=sys.stderr)
    print()
    print(
        f"{'setup':28} {'median µs':>10} {'p99 µs':>8} {'- cat, per run µs':>40} "
        f"{'peak RSS MiB':>14} {'watcher MiB':>12}"
    )
    cat = medians["cat proxy"]
    for name, values in every.items():
        values.sort()
        over = [m - c for m, c in zip(medians[name], cat, strict=True)]
        rss = f"{min(peaks[name]):.1f}-{max(peaks[name]):.1f}" if peaks[name] else ""
        served = WATCHER_RSS.get(id(peaks[name]))
        print(
            f"{name:28} {statistics.median(values):10.1f} "
            f"{values[int(len(values) * 0.99)]:8.1f} {_spread(over):>40} {rss:>14} "
            f"{'' if served is None else f'{served:.1f}':>12}"
        )


def long_main(args: argparse.Namespace, driver: Any) -> None:
    direction, agent_version, client_version = DIRECTION
    stamps = os.path.join(tempfile.mkdtemp(prefix="bench_live_"), "stamps.json")
    agent = _agent(agent_version, args.long, args.long_interval_ms / 1000.0, stamps)
    bridge = _bridge(agent, agent_version)
    print(
        f"long session {direction}, {args.long:,} messages, one every "
        f"{args.long_interval_ms} ms; one run per setup"
    )
    seen: dict[str, str] = {}

    def watched(url: str) -> None:
        seen["url"] = url
        watcher(driver)(url)

    def page_at_end(process: subprocess.Popen[bytes], into: list[float]) -> None:
        peak_rss(process, into)
        base, token = seen["url"].split("/?token=")
        with urllib.request.urlopen(f"{base}/data?token={token}", timeout=60) as response:
            seen["data"] = f"{len(response.read()) / 2**20:.1f} MiB"
        cards = "return document.querySelectorAll('#cards .card').length"
        seen["cards"] = str(driver.execute_script(cards))

    print(
        f"{'setup':28} {'seconds':>8} {'median latency µs':>18} {'peak RSS MiB':>13} "
        f"{'watcher MiB':>12}"
    )
    for name, command, watch in (
        ("bridge", bridge, None),
        ("bridge --inspect", _inspect(bridge), lambda url: None),
        ("bridge --inspect, watched", _inspect(bridge), watched),
    ):
        peaks: list[float] = []
        end = page_at_end if name.endswith("watched") else peak_rss
        at_end = functools.partial(end, into=peaks)
        start = time.perf_counter()
        latencies = measure(command, client_version, args.long, watch, at_end)
        took = time.perf_counter() - start
        served = WATCHER_RSS.get(id(peaks))
        print(
            f"{name:28} {took:8.1f} {statistics.median(latencies):18.1f} {peaks[0]:13.1f} "
            f"{'' if served is None else f'{served:.1f}':>12}"
        )
    print(f"the watching page at the end: {seen['cards']} cards drawn; /data {seen['data']}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--reps", type=int, default=3, help="latency runs per setup")
    parser.add_argument("--messages", type=int, default=2000, help="per latency run")
    parser.add_argument("--interval-ms", type=float, default=1.0, help="latency runs' pacing")
    parser.add_argument("--long", type=int, default=100_000, help="messages of the long session")
    parser.add_argument("--long-interval-ms", type=float, default=0.1, help="its pacing")
    parser.add_argument("--skip-long", action="store_true", help="latency only")
    args = parser.parse_args()
    print_environment()
    with browser() as driver:
        print()
        latency_main(args, driver)
        print(f"load         {_load()} (1, 5, 15 min)")
        if not args.skip_long:
            print()
            long_main(args, driver)
            print(f"load         {_load()} (1, 5, 15 min)")


if __name__ == "__main__":
    main()
