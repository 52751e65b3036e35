"""A stateful property: random mixes of traffic never break the router's promises.

Every request is answered exactly once with its id, notifications never, garbage gets at
most an error with a null id, and the router never raises.
"""

from __future__ import annotations

import json
from collections import Counter
from typing import Any

from hypothesis import settings
from hypothesis import strategies as st
from hypothesis.stateful import (
    RuleBasedStateMachine,
    initialize,
    invariant,
    precondition,
    rule,
)

from semledger.hosts import Reply, Router, ToolCall
from semledger.runtime._enums import ErrorCode, Role
from semledger.runtime._node import SemanticsNode
from semledger.runtime._outcomes import Receipt, Rejection
from semledger.runtime._reads import Full, Unchanged

FULL = Full(3, 1, None, (SemanticsNode(node_id=1, semantic_id=None, role=Role.GROUP),), ())

json_scalars = (
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=8)
)
json_values = st.recursive(
    json_scalars,
    lambda inner: (
        st.lists(inner, max_size=3)
        | st.dictionaries(st.text(max_size=6).filter(lambda k: k != "id"), inner, max_size=3)
    ),
    max_leaves=8,
)

VALID_ARGUMENTS = {
    "read_semantics": st.sampled_from([{}, {"since": "3"}, {"since": "0"}]),
    "perform_action": st.sampled_from(
        [
            {
                "target": {"kind": "semantic_id", "id": "a.b"},
                "action": {"kind": "activate"},
                "precondition": {"kind": "latest"},
            },
            {
                "target": {"kind": "path", "path": [{"role": "button", "index": 1}]},
                "action": {"kind": "set_text", "value": "x"},
                "precondition": {"kind": "exact", "generation": "3"},
            },
        ]
    ),
}
OUTCOMES = {
    "read_semantics": st.sampled_from(
        [FULL, Unchanged(3), Rejection(ErrorCode.HOST_CLOSED, "closed")]
    ),
    "perform_action": st.sampled_from(
        [
            Receipt(3, 4, False),
            Rejection(ErrorCode.STALE_GENERATION, "stale", {"expected": 2, "current": 3}),
            RuntimeError("host bug"),
            "not an outcome",
        ]
    ),
}
DIAGNOSTIC_OUTCOMES = st.sampled_from(
    [{"handled": True, "node_id": 2}, Rejection(ErrorCode.HOST_CLOSED, "closed"), KeyError("x")]
)


class RouterMachine(RuleBasedStateMachine):
    def __init__(self) -> None:
        super().__init__()
        self.profile = "default"
        self.router = Router()
        self.next_id = 0
        self.sent: list[object] = []
        self.answered: Counter[str] = Counter()
        self.pending: list[ToolCall] = []

    @initialize(profile=st.sampled_from(["default", "diagnostics"]))
    def start(self, profile: str) -> None:
        self.router = Router(profile=profile)  # type: ignore[arg-type]

    def _fresh_id(self, as_string: bool) -> object:
        self.next_id += 1
        request_id: object = f"req-{self.next_id}" if as_string else self.next_id
        self.sent.append(request_id)
        return request_id

    def _feed(self, line: str | bytes) -> list[Reply | ToolCall]:
        events = self.router.receive_line(line)
        for event in events:
            if isinstance(event, Reply):
                json.dumps(event.message, allow_nan=False)
                assert event.message["jsonrpc"] == "2.0"
                assert ("result" in event.message) != ("error" in event.message)
                self.answered[json.dumps(event.message["id"])] += 1
            else:
                self.pending.append(event)
        return events

    def _request(self, as_string: bool, method: str, params: object = None) -> None:
        request_id = self._fresh_id(as_string)
        message: dict[str, Any] = {"jsonrpc": "2.0", "id": request_id, "method": method}
        if params is not None:
            message["params"] = params
        events = self._feed(json.dumps(message))
        assert len(events) == 1
        if isinstance(events[0], ToolCall):
            assert events[0].request_id == request_id
        else:
            assert events[0].message["id"] == request_id

    @rule(as_string=st.booleans(), version=st.sampled_from(["2025-06-18", "1999-01-01"]))
    def send_initialize(self, as_string: bool, version: str) -> None:
        self._request(as_string, "initialize", {"protocolVersion": version, "capabilities": {}})

    @rule(as_string=st.booleans(), method=st.sampled_from(["ping", "tools/list", "no/such"]))
    def send_simple_request(self, as_string: bool, method: str) -> None:
        self._request(as_string, method)

    @rule(as_string=st.booleans(), data=st.data())
    def send_valid_tool_call(self, as_string: bool, data: st.DataObject) -> None:
        name = data.draw(st.sampled_from(sorted(VALID_ARGUMENTS)))
        arguments = data.draw(VALID_ARGUMENTS[name])
        self._request(as_string, "tools/call", {"name": name, "arguments": arguments})

    @rule(
        as_string=st.booleans(),
        name=st.sampled_from(
            ["read_semantics", "perform_action", "diagnostics_read_state", "nope"]
        ),
        arguments=json_values,
    )
    def send_arbitrary_tool_call(self, as_string: bool, name: str, arguments: object) -> None:
        self._request(as_string, "tools/call", {"name": name, "arguments": arguments})

    @rule(as_string=st.booleans(), params=json_values)
    def send_malformed_envelope(self, as_string: bool, params: object) -> None:
        self._request(as_string, "tools/call", params if params is not None else [])

    @rule(
        method=st.sampled_from(
            [
                "notifications/initialized",
                "notifications/cancelled",
                "notifications/whatever",
                "ping",
                "tools/call",
            ]
        ),
        params=st.none() | st.dictionaries(st.text(max_size=4), json_scalars, max_size=2),
    )
    def send_notification(self, method: str, params: object) -> None:
        message: dict[str, Any] = {"jsonrpc": "2.0", "method": method}
        if params is not None:
            message["params"] = params
        assert self._feed(json.dumps(message)) == []

    @rule(line=st.sampled_from(["", "\n", "  ", "\t\r\n"]))
    def send_blank_line(self, line: str) -> None:
        assert self._feed(line) == []

    @rule(garbage=st.text(max_size=30) | st.binary(max_size=30) | json_values.map(json.dumps))
    def send_garbage(self, garbage: str | bytes) -> None:
        before = sum(self.answered.values())
        events = self.router.receive_line(garbage)
        assert len(events) <= 1
        for event in events:
            assert isinstance(event, Reply)
            assert event.message["id"] is None
            assert "error" in event.message
        assert sum(self.answered.values()) == before

    @precondition(lambda self: bool(self.pending))
    @rule(data=st.data())
    def complete_a_pending_call(self, data: st.DataObject) -> None:
        call = self.pending.pop(data.draw(st.integers(0, len(self.pending) - 1)))
        outcome = data.draw(OUTCOMES.get(call.tool, DIAGNOSTIC_OUTCOMES))
        reply = self.router.complete(call, outcome)
        json.dumps(reply.message, allow_nan=False)
        assert reply.message["id"] == call.request_id
        self.answered[json.dumps(call.request_id)] += 1

    @invariant()
    def every_answer_is_for_a_request_and_no_request_is_answered_twice(self) -> None:
        sent = {json.dumps(i) for i in self.sent}
        for request_id, count in self.answered.items():
            if request_id == "null":
                continue
            assert request_id in sent
            assert count == 1
        assert self.router.pending_calls == len(self.pending)

    def teardown(self) -> None:
        for call in self.pending:
            self.router.complete(call, Unchanged(0))
            self.answered[json.dumps(call.request_id)] += 1
        assert self.answered - Counter({"null": self.answered["null"]}) == Counter(
            {json.dumps(i): 1 for i in self.sent}
        )


RouterMachine.TestCase.settings = settings(max_examples=60, stateful_step_count=30, deadline=None)
test_router_state_machine = RouterMachine.TestCase
