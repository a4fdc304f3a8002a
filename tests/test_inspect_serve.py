"""``acp-toolcalls inspect --serve``: the live model, its server and its page.

- The live model (``report.live.LiveModel``): the events, applied in order, give the
  snapshot's history; a permission request is waiting until the event with its answer; a
  watcher that fell behind the ring of events is told to resynchronise, and the ring stays
  within its bytes whatever a watcher does; the held state stays within its budget.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from acp_toolcalls.report.live import LiveModel
from acp_toolcalls.store import Limits

ROOT = Path(__file__).resolve().parent.parent
DEMO = ROOT / "src" / "acp_toolcalls" / "data" / "demo-session.jsonl"
BRIDGE_LOG = ROOT / "tests" / "data" / "v1-client-v2-agent.jsonl"


def lines_of(path: Path) -> list[bytes]:
    return path.read_bytes().splitlines()


def fed(path: Path, **options: Any) -> LiveModel:
    model = LiveModel(**options)
    for data in lines_of(path):
        model.feed(data)
        model.publish()
    return model


def test_the_events_applied_in_order_give_the_snapshots_history() -> None:
    model = fed(BRIDGE_LOG)
    events = model.since(0)
    assert events is not None and [seq for seq, _ in events] == list(range(1, model.seq + 1))
    held: dict[tuple[int, str, str], dict[str, list[Any]]] = {}
    for _, data in events:
        for side, index, entries, values, items in json.loads(data)["calls"]:
            call = held.setdefault((side, index["session"], index["id"]), {})
            for name, added in (("entries", entries), ("values", values), ("items", items)):
                call.setdefault(name, []).extend(added)
    snapshot = json.loads(model.snapshot())
    assert snapshot["seq"] == model.seq and snapshot["lineCount"] == len(lines_of(BRIDGE_LOG))
    whole = {
        (side, call["session"], call["id"]): call["loaded"]
        for side, calls in enumerate(snapshot["calls"])
        for call in calls
    }
    assert held == whole and len(whole) == 6  # three calls, on both sides


def test_a_permission_request_waits_until_its_answer() -> None:
    model = LiveModel()
    answered_on = None
    for data in lines_of(BRIDGE_LOG):
        model.feed(data)
        seq = model.publish()
        event = json.loads(model.since(seq - 1)[0][1]) if seq else {}  # type: ignore[index]
        for side, index, request in event.get("asks", []):
            if request["answer"] is None:
                assert answered_on is None
                snapshot = json.loads(model.snapshot())
                assert snapshot["sides"][side]["asks"][index]["answer"] is None
            elif answered_on is None:
                answered_on = request["answer"]["l"]
    assert answered_on == 23  # the editor's answer, on the client side


def test_a_watcher_behind_the_ring_is_resynchronised_and_the_ring_stays_bounded() -> None:
    model = LiveModel(events_bytes=4096)
    stalled = 0  # a watcher that never reads: only this number
    sizes = []
    for round_ in range(20):
        for data in lines_of(DEMO):
            model.feed(data.replace(b"toolu_", b"toolu_%d_" % round_))
            model.publish()
            sizes.append(model._events_size)
    assert max(sizes) <= 4096 + max(len(data) for _, data in model._events)
    assert model.since(stalled) is None  # dropped: a snapshot next
    assert model.since(model.seq) == []
    assert model.since(model.seq + 5) is None
    recent = model.since(model.seq - 1)
    assert recent is not None and [seq for seq, _ in recent] == [model.seq]


def test_the_held_state_stays_within_its_budget() -> None:
    limits = Limits(max_store_bytes=64 * 1024)
    model = LiveModel(limits=limits)
    forgot = 0
    for round_ in range(40):
        for data in lines_of(DEMO):
            model.feed(data.replace(b"toolu_", b"toolu_%d_" % round_))
            seq = model.publish()
            forgot += json.loads(model.since(seq - 1)[0][1]).get("forgot", 0)  # type: ignore[index]
    assert forgot > 0
    assert model._held <= 64 * 1024
    assert len(model.snapshot()) < 4 * 64 * 1024
