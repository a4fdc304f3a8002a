"""The build under test, for the subprocesses the tests start.

CI's second stage runs the sdist's tests with its compiled wheel first on ``PYTHONPATH``: a
subprocess must import that build, not the sources beside the tests. ``child_env`` keeps what
this run imports first and adds the checkout's ``src`` after it (for a run without an install).
"""

from __future__ import annotations

import os
from pathlib import Path

SRC = Path(__file__).resolve().parent.parent / "src"


def child_env(**extra: str) -> dict[str, str]:
    """This environment for a subprocess running ``acp_toolcalls``, plus ``extra``."""
    path = os.pathsep.join(filter(None, [os.environ.get("PYTHONPATH"), str(SRC)]))
    return {**os.environ, "PYTHONPATH": path, **extra}
