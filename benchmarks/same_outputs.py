"""Digests of what the bridges and the stores give for the benchmark corpora.

Run it under each tree or build to compare (issue 19: every output of the bridges stays
byte-identical while their speed changes)::

    PYTHONPATH=<old tree>/src python benchmarks/same_outputs.py
    python benchmarks/same_outputs.py
    PYTHONPATH=<site of a compiled wheel> python benchmarks/same_outputs.py

Each line names a stream and the SHA-256 (first 16 hex digits) of everything written for it:
``V2ToV1Bridge`` uncoalesced over the first lines of ``bench_store.py``'s corpus and over
``bench_bridge.py``'s sequential stream, coalesced over the corpus; ``V1ToV2Bridge`` over the
corpus written as v1 (its whole-file diffs included); the v2 and v1 stores (each event's
``repr``, then the document and the byte count). The corpus is generated with its fixed seed.
"""

from __future__ import annotations

import argparse
import hashlib
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # for `benchmarks.*`

from acp_toolcalls import _compiled
from acp_toolcalls.bridge import V1ToV2Bridge, V2ToV1Bridge
from acp_toolcalls.codec import encode
from acp_toolcalls.store import ToolCallStore
from benchmarks import bench_bridge, bench_store, messages


def _bridge_digest(bridge: Any, lines: Sequence[bytes]) -> str:
    digest = hashlib.sha256()
    for line in lines:
        converted = bridge.convert(line)
        for message in converted.messages:
            digest.update(encode(message) + b"\n")
        for loss in converted.losses:
            digest.update(repr((loss.path, loss.reason)).encode())
    for message in bridge.flush().messages:
        digest.update(encode(message) + b"\n")
    return digest.hexdigest()[:16]


def _store_digest(version: str, lines: Sequence[bytes]) -> str:
    store = ToolCallStore(version=version)
    digest = hashlib.sha256()
    for line in lines:
        for event in store.apply(line):
            digest.update(repr(event).encode())
    digest.update(store.document_json())
    digest.update(repr(store.size).encode())
    return digest.hexdigest()[:16]


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=60_000, help="corpus lines (v2)")
    args = parser.parse_args(argv)
    v2_lines = messages.generate_live(args.n, calls=500, seed=0)
    v1_lines = bench_store._v1_corpus(v2_lines)
    builds = sorted(set(_compiled.BUILDS.values()))
    print(f"builds       {', '.join(builds) or 'none imported'}")
    streams: list[tuple[str, str]] = [
        ("V2ToV1Bridge, corpus", _bridge_digest(V2ToV1Bridge(), v2_lines)),
        ("V2ToV1Bridge, sequential", _bridge_digest(V2ToV1Bridge(), bench_bridge.sequential(2000))),
        ("V2ToV1Bridge, coalesced", _bridge_digest(V2ToV1Bridge(coalesce=True), v2_lines)),
        ("V1ToV2Bridge, v1 corpus", _bridge_digest(V1ToV2Bridge(), v1_lines)),
        ("v2 store, corpus", _store_digest("v2", v2_lines)),
        ("v1 store, v1 corpus", _store_digest("v1", v1_lines)),
    ]
    for name, digest in streams:
        print(f"{name:28} {digest}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
