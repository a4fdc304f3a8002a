"""Record the acp-devtools captures in this directory (see README.md here). From the repository
root, with Node 20 on the PATH:

    .venv/bin/python tests/data/captures/record.py [DIR]    # DIR: where to write (default: here)

Each recording is one real session over real stdio: the official Python SDK's v1 or v2 client
(``tests/interop/sessions.py``) runs one prompt (approved) against ``examples/agent.py`` behind
``devtools_capture.mjs``, which writes acp-devtools' capture lines. The session's directory is
``/tmp/acp-recording/work`` (made afresh), so the paths in the files do not depend on where
they were made.
"""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parents[2]))  # the repository: tests.interop, the helpers

from tests.interop.sessions import (  # noqa: E402
    AGENT_COMMAND,
    bounded,
    prepared,
    sdk_v1_session,
    sdk_v2_session,
)

WORK = Path("/tmp/acp-recording/work")
CAPTURE = HERE / "devtools_capture.mjs"
RECORDINGS = {"devtools-v1.jsonl": 1, "devtools-v2.jsonl": 2}  # file: the client's version


def main() -> None:
    out = Path(sys.argv[1]) if len(sys.argv) > 1 else HERE
    for name, version in RECORDINGS.items():
        shutil.rmtree(WORK, ignore_errors=True)
        cwd = prepared(WORK)
        agent = ("node", str(CAPTURE), str(out / name), "--", *AGENT_COMMAND)
        session = sdk_v1_session if version == 1 else sdk_v2_session
        run = bounded(session(cwd, "approve", agent=agent))
        print(f"{name}: {run.stop_reason}, {sum(1 for _ in (out / name).open())} lines")


if __name__ == "__main__":
    main()
