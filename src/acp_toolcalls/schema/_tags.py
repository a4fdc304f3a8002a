"""The discriminator values a bundled schema defines, for the lint's "known value" tables.

Rules this module owns:

- ``session_update_tags(version, unstable)`` is every ``sessionUpdate`` const of
  ``$defs.SessionUpdate`` in the bundled schema (the unstable file with ``unstable``, overlays
  applied): what ``validate --unstable`` tells the lint to count as known (``check._lint``), so
  that an update the unstable schema defines is never reported as a custom value.
- ``unstable_only_session_updates(version)`` is what the unstable file adds to the stable one.
"""

from __future__ import annotations

from functools import cache

from ..models import VersionName
from ._checks import document


@cache
def session_update_tags(version: VersionName, unstable: bool = False) -> frozenset[str]:
    """Every ``sessionUpdate`` value of ``$defs.SessionUpdate`` of the bundled schema."""
    union = document(version, unstable)["$defs"]["SessionUpdate"]
    tags: set[str] = set()
    for branch in union.get("anyOf", []) + union.get("oneOf", []):
        const = branch.get("properties", {}).get("sessionUpdate", {}).get("const")
        if isinstance(const, str):
            tags.add(const)
    return frozenset(tags)


def unstable_only_session_updates(version: VersionName) -> frozenset[str]:
    """The ``sessionUpdate`` values only the unstable schema of ``version`` defines."""
    return session_update_tags(version, True) - session_update_tags(version, False)
