"""The cards of the ``inspect`` page: one per tool call, naming where each side lists it.

Rules this module owns: a call is one card whichever sides saw it (keyed by session and
call id), in the order calls were first seen on any side; each side lists its calls in its
history's order, each with its index, its permission requests and what the caller adds.
Shared by the finished report (``model``) and the live one (``live``).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from .history import CallHistory, SideHistory

__all__ = ["cards_and_calls"]


def cards_and_calls(
    histories: list[SideHistory], more: Callable[[CallHistory], dict[str, Any]]
) -> tuple[list[dict[str, Any]], list[list[dict[str, Any]]]]:
    """The cards, one a call, naming where each side's history lists it, in the order calls
    were first seen; and each side's calls as the page lists them (the call's index, its asks,
    and what ``more`` adds from the call's history)."""
    cards: dict[tuple[str, str], dict[str, Any]] = {}
    calls_of_sides: list[list[dict[str, Any]]] = []
    for position, side in enumerate(histories):
        calls: list[dict[str, Any]] = []
        for key, history in side.calls.items():
            card = cards.get(key)
            if card is None:
                card = cards[key] = {
                    "session": key[0],
                    "id": key[1],
                    "first": history.first,
                    "sides": [None] * len(histories),
                }
            card["first"] = min(card["first"], history.first)
            card["sides"][position] = len(calls)
            calls.append({**history.index(), "asks": [], **more(history)})
        calls_of_sides.append(calls)
    ordered = sorted(cards.values(), key=lambda card: card["first"])  # stable: first seen
    return ordered, calls_of_sides
