"""Issue 15: every flood of ``benchmarks/floods.py`` through the real ``bridge``, at a tenth of
the issue's counts with every memory cap at a tenth of its default (``--limit``).

Each run must finish (the editor sees the end of the flood), exit 0, report the cap that bit
on stderr once (rate-limited), and grow the proxy's peak RSS, over an idle session's in the
same run, by no more than a fixed allowance plus a few copies of the longest line of the
flood (a line is held whole while it is read, parsed and written). The bridge before issue 15
failed each of these floods: it kept every value, terminal, title, key, session, id and
request (RSS grew by 34-80 MiB at this size), and reported no cap.
Full-size figures are in docs/robustness.md ("The proxy under floods").
"""

from __future__ import annotations

from collections import Counter
from typing import Any

import pytest

from acp_toolcalls.proxy._output import LIMIT_NOTE_INTERVAL
from benchmarks import floods

SCALE = 0.1
ALLOWANCE_MIB = 24  # the caps' share at this scale, ghosts and the writers' buffers
LINE_COPIES = 6

# flood -> the cap the run must report (None: no cap bites at this size)
EXPECTED_CAP: dict[str, str | None] = {
    "rawinput": "max_value_bytes",
    "terminals": "max_terminal_bytes",
    "chunks": "max_call_bytes",
    "titles": None,  # the v2 editor is sent each title; the bridge keeps 1,024 characters
    "meta": "max_meta_keys",
    "unknown-items": "max_call_bytes",
    "sessions": "max_sessions",
    "message-ids": "max_message_ids",
    "permissions": "max_pending_permissions",
    "agent-requests": "max_pending_requests",
    "client-requests": "max_pending_requests",
    "alternating": None,
}


@pytest.fixture(scope="module")
def idle_rss() -> float:
    """The proxy's peak RSS for a session with a flood of one line, capped the same way."""
    result = floods.run("alternating", 0.0001, floods.scaled_limits(SCALE), timeout=60)
    assert result.finished and result.exit == 0, result
    return result.rss_mib


def test_every_flood_has_a_test() -> None:
    assert set(EXPECTED_CAP) == set(floods.SCENARIOS)


@pytest.mark.slow
@pytest.mark.parametrize("name", list(EXPECTED_CAP))
def test_a_flood_is_bounded_and_reported(name: str, idle_rss: float) -> None:
    result = floods.run(name, SCALE, floods.scaled_limits(SCALE), timeout=120)
    assert result.finished, f"the editor never saw the end of the flood: {result}"
    assert result.exit == 0, result
    scenario = floods.SCENARIOS[name]
    flood = scenario.editor_flood or scenario.agent_flood
    longest = max(len(line) for line in flood(SCALE))
    allowance = ALLOWANCE_MIB + LINE_COPIES * longest / 2**20
    assert result.rss_mib - idle_rss <= allowance, (
        f"{name}: peak RSS {result.rss_mib:.0f} MiB, idle {idle_rss:.0f} MiB, "
        f"allowance {allowance:.0f} MiB"
    )
    cap = EXPECTED_CAP[name]
    limits = [note for note in result.notes if ": max_" in note]
    if cap is not None:
        assert any(f": {cap}:" in note for note in limits), result.notes[:5]
    # One line per kind of cap, then at most one per LIMIT_NOTE_INTERVAL (a loaded machine
    # makes the flood last longer, hence more intervals).
    kinds = Counter(note.split(": max_", 1)[1].split(":", 1)[0] for note in limits)
    allowed = 1 + int(result.wall // LIMIT_NOTE_INTERVAL)
    assert len(kinds) <= 4 and max(kinds.values(), default=0) <= allowed, (result.wall, limits)
    assert len(result.notes) == len(limits), result.notes[:5]  # nothing else went wrong


def test_alternating_chunks_reach_a_v1_editor_without_amplification() -> None:
    """10,000 small chunks alternating between two calls: at most 5x the bytes in (the
    bridge before issue 15 sent 900x at full size)."""
    result = floods.run("alternating", 1.0, [], timeout=120)
    assert result.finished and result.exit == 0, result
    assert result.bytes_out <= 5 * result.bytes_in, _ratio(result)
    assert result.longest_line <= 16 * 2**20


def _ratio(result: Any) -> str:
    return f"{result.bytes_out} bytes out for {result.bytes_in} in"
