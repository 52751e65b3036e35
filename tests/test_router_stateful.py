"""A stateful property: random mixes of traffic never break the router's promises.

Every request is answered exactly once with its id, notifications never, garbage gets at
most an error with a null id, and the router never raises. A batch is refused whole (one
error, null id) unless the session negotiated a version with batches; then its requests are
answered in one array, in their order, once its last call is complete.
"""

from __future__ import annotations

import json
from collections import Counter
from typing import Any

import attrs
from hypothesis import settings
from hypothesis import strategies as st
from hypothesis.stateful import (
    RuleBasedStateMachine,
    initialize,
    invariant,
    precondition,
    rule,
)

from semledger.hosts import BATCHING_PROTOCOL_VERSIONS, Reply, Router, ToolCall
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
BATCH_MEMBERS = st.lists(
    st.sampled_from(["ping", "tools/list", "no/such", "initialize", "notification", "response"])
    | st.sampled_from(sorted(VALID_ARGUMENTS)).flatmap(
        lambda name: VALID_ARGUMENTS[name].map(lambda arguments: ("call", name, arguments))
    )
    | json_values.map(lambda value: ("garbage", value)),
    min_size=1,  # an empty batch: tests/test_router_batches.py
    max_size=6,
)


@attrs.define(eq=False)
class _SentBatch:
    request_ids: list[object]
    """The ids of its requests, in order: the ids its array answers, in that order."""
    calls: int


class RouterMachine(RuleBasedStateMachine):
    def __init__(self) -> None:
        super().__init__()
        self.profile = "default"
        self.router = Router()
        self.next_id = 0
        self.sent: list[object] = []
        self.answered: Counter[str] = Counter()
        self.pending: list[ToolCall] = []
        self.batch_of: dict[ToolCall, _SentBatch] = {}

    @initialize(
        profile=st.sampled_from(["default", "diagnostics"]),
        version=st.sampled_from([*sorted(BATCHING_PROTOCOL_VERSIONS), None, "2025-06-18"]),
    )
    def start(self, profile: str, version: str | None) -> None:
        """A session not initialized yet, or one that negotiated `version` (half of them
        one with batches)."""
        self.router = Router(profile=profile)  # type: ignore[arg-type]
        if version is not None:
            self._request(False, "initialize", {"protocolVersion": version, "capabilities": {}})

    def _fresh_id(self, as_string: bool) -> object:
        self.next_id += 1
        request_id: object = f"req-{self.next_id}" if as_string else self.next_id
        self.sent.append(request_id)
        return request_id

    def _count(self, message: dict[str, Any]) -> None:
        json.dumps(message, allow_nan=False)
        assert message["jsonrpc"] == "2.0"
        assert ("result" in message) != ("error" in message)
        self.answered[json.dumps(message["id"])] += 1

    def _count_array(self, answers: object, batch: _SentBatch) -> None:
        assert isinstance(answers, list)
        for answer in answers:
            self._count(answer)
        assert [a["id"] for a in answers if a["id"] is not None] == batch.request_ids

    def _feed(self, line: str | bytes) -> list[Reply | ToolCall]:
        events = self.router.receive_line(line)
        for event in events:
            if isinstance(event, Reply):
                assert isinstance(event.message, dict)
                self._count(event.message)
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

    @rule(
        as_string=st.booleans(),
        version=st.sampled_from(["2024-11-05", "2025-03-26", "2025-06-18", "1999-01-01"]),
    )
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

    def _member(self, kind: object, request_ids: list[object]) -> object:
        if isinstance(kind, tuple) and kind[0] == "garbage":
            return kind[1]
        if kind == "notification":
            return {"jsonrpc": "2.0", "method": "notifications/whatever"}
        if kind == "response":
            return {"jsonrpc": "2.0", "id": f"response-{self.next_id}", "result": {}}
        self.next_id += 1
        request_id = f"req-{self.next_id}"
        request_ids.append(request_id)
        message: dict[str, Any] = {"jsonrpc": "2.0", "id": request_id, "method": kind}
        if isinstance(kind, tuple):
            _call, name, arguments = kind
            message.update(method="tools/call", params={"name": name, "arguments": arguments})
        elif kind == "initialize":
            message["params"] = {"protocolVersion": "2025-03-26", "capabilities": {}}
        return message

    @rule(members=BATCH_MEMBERS)
    def send_batch(self, members: list[object]) -> None:
        request_ids: list[object] = []
        batch = [self._member(kind, request_ids) for kind in members]
        version = self.router.protocol_version
        taken = version in BATCHING_PROTOCOL_VERSIONS and bool(batch)
        events = self.router.receive_line(json.dumps(batch))
        if not taken:
            (refused,) = events
            assert isinstance(refused, Reply)
            assert isinstance(refused.message, dict)
            assert refused.message["id"] is None
            assert refused.message["error"]["code"] == -32600
            return
        self.sent.extend(request_ids)
        sent = _SentBatch(request_ids, calls=0)
        calls = [event for event in events if isinstance(event, ToolCall)]
        if not calls:
            if events:
                (reply,) = events
                assert isinstance(reply, Reply)
                self._count_array(reply.message, sent)
            else:
                assert not request_ids
            return
        assert calls == events
        sent.calls = len(calls)
        for call in calls:
            assert call.request_id in request_ids
            self.batch_of[call] = sent
            self.pending.append(call)

    def _completed(self, call: ToolCall, reply: Reply | None) -> None:
        batch = self.batch_of.pop(call, None)
        if batch is None:
            assert reply is not None
            assert isinstance(reply.message, dict)
            assert reply.message["id"] == call.request_id
            self._count(reply.message)
            return
        batch.calls -= 1
        if batch.calls:
            assert reply is None
        else:
            assert reply is not None
            self._count_array(reply.message, batch)

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
            # A batch of garbage, on a session that takes batches: an error for each member.
            errors = event.message if isinstance(event.message, list) else [event.message]
            for error in errors:
                assert error["id"] is None
                assert "error" in error
        assert sum(self.answered.values()) == before

    @precondition(lambda self: bool(self.pending))
    @rule(data=st.data())
    def complete_a_pending_call(self, data: st.DataObject) -> None:
        call = self.pending.pop(data.draw(st.integers(0, len(self.pending) - 1)))
        outcome = data.draw(OUTCOMES.get(call.tool, DIAGNOSTIC_OUTCOMES))
        self._completed(call, self.router.complete(call, outcome))

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
            self._completed(call, self.router.complete(call, Unchanged(0)))
        assert self.answered - Counter({"null": self.answered["null"]}) == Counter(
            {json.dumps(i): 1 for i in self.sent}
        )


RouterMachine.TestCase.settings = settings(max_examples=60, stateful_step_count=30, deadline=None)
test_router_state_machine = RouterMachine.TestCase
