"""Record the sessions in this directory: the example agent and the SDK clients, through
``acp-toolcalls bridge --log`` (see README.md here). Run from the repository root:

    .venv/bin/python tests/data/record.py [DIR]    # DIR: where to write them (default: here)

Each recording is one real session over real stdio: the official Python SDK's v1 or v2 client
(``tests/interop/sessions.py``) runs one prompt against ``examples/agent.py`` behind the proxy,
and the proxy's ``--log`` is the file. The session's directory is ``/tmp/acp-recording/work``
(made afresh), so the paths in the recordings do not depend on where they were made.
"""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parents[1]))  # the repository: tests.interop, the helpers

from tests.interop.raw import bridged  # noqa: E402
from tests.interop.sessions import bounded, prepared, sdk_v1_session, sdk_v2_session  # noqa: E402

WORK = Path("/tmp/acp-recording/work")

RECORDINGS = {
    # file: (client version, what the client does, the agent's version behind the proxy)
    "v1-client-v2-agent.jsonl": (1, "approve", "2"),
    "v1-client-v2-agent-cancel.jsonl": (1, "cancel", "2"),
    "v2-client-v1-agent.jsonl": (2, "approve", "1"),
    "v2-client-v1-agent-cancel.jsonl": (2, "cancel", "1"),
}


def record(out: Path, name: str, client: int, mode: str, agent_version: str) -> None:
    log = out / name
    shutil.rmtree(WORK, ignore_errors=True)
    cwd = prepared(WORK)
    agent = bridged("--agent-version", agent_version, "--log", str(log))
    session = sdk_v1_session if client == 1 else sdk_v2_session
    run = bounded(session(cwd, mode, agent=agent))
    print(f"{name}: {run.stop_reason}, {sum(1 for _ in log.open())} lines")


def main() -> None:
    out = Path(sys.argv[1]) if len(sys.argv) > 1 else HERE
    for name, (client, mode, agent_version) in RECORDINGS.items():
        record(out, name, client, mode, agent_version)


if __name__ == "__main__":
    main()
