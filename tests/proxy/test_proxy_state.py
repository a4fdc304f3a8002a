"""proxy._state: the negotiation table, and the connection's state and policy following it."""

from __future__ import annotations

import json

from acp_toolcalls.proxy import ConnectionCore, _state
from acp_toolcalls.proxy._policy import PassThrough, ToV1Client, ToV2Client

STATES: tuple[_state.State, ...] = ("negotiating", "passthrough", "converting", "closed")
EVENTS: tuple[_state.Event, ...] = (
    "client_initialize",
    "agent_refused",
    "agent_asked_again",
    "agent_same_version",
    "agent_other_version",
    "agent_gone",
)


def test_negotiation_leads_to_pass_through_or_converting_and_everything_closes() -> None:
    assert _state.transition("negotiating", "agent_same_version") == "passthrough"
    assert _state.transition("negotiating", "agent_other_version") == "converting"
    for event in ("client_initialize", "agent_refused", "agent_asked_again"):
        assert _state.transition("negotiating", event) == "negotiating"
    for state in STATES:
        assert _state.transition(state, "agent_gone") == "closed"
    for event in EVENTS:  # closed is final; a settled connection does not negotiate again
        assert _state.transition("closed", event) == "closed"
        if event != "agent_gone":
            assert _state.transition("passthrough", event) == "passthrough"
            assert _state.transition("converting", event) == "converting"


def _line(message: dict[str, object]) -> bytes:
    return json.dumps(message, separators=(",", ":")).encode()


def _initialized(client: int, agent: int) -> ConnectionCore:
    core = ConnectionCore()
    params = {"protocolVersion": client, "clientCapabilities": {}}
    out = core.from_client(
        _line({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": params}), 0.0
    )
    while out.to_agent:  # asked in the client's version, then again in the agent's
        asked = json.loads(out.to_agent[0])
        result = {"protocolVersion": agent, "agentCapabilities": {}, "capabilities": {}}
        out = core.from_agent(_line({"jsonrpc": "2.0", "id": asked["id"], "result": result}), 0.0)
    return core


def test_the_policy_is_chosen_once_by_the_agents_answer() -> None:
    for client, agent, policy, mode in (
        (1, 1, PassThrough, "passthrough"),
        (2, 2, PassThrough, "passthrough"),
        (1, 2, ToV1Client, "converting"),
        (2, 1, ToV2Client, "converting"),
    ):
        core = _initialized(client, agent)
        assert isinstance(core.negotiation.policy, policy) and core.mode == mode and not core.gone
        core.agent_gone("the agent exited with code 0")
        assert core.gone and core.negotiation.state == "closed" and core.mode == mode
