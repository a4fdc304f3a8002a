"""The conformance kit: vectors any client's fold of tool-call updates can be checked against,
and the sans-I/O part of ``acp-toolcalls conformance`` (issue 32; docs/conformance.md).

Rules this package owns:

- ``_vectors``: what a vector is, reading a suite (``load_vectors``; the bundled one in
  ``vectors/``, shipped in the package), and comparing two states (``first_difference``).
- ``_report``: the outcome of each case and the per-rule report (human and ``--json``).

Running reducers (processes, timeouts) is ``acp_toolcalls.cli.conformance``'s.
"""

from __future__ import annotations

from ._vectors import (
    MISSING,
    TAGS,
    VECTORS,
    Difference,
    Vector,
    VectorError,
    first_difference,
    load_vectors,
    parse_vector,
)

__all__ = [
    "MISSING",
    "TAGS",
    "VECTORS",
    "Difference",
    "Vector",
    "VectorError",
    "first_difference",
    "load_vectors",
    "parse_vector",
]
