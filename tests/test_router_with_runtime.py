"""Real results validate: the example apps on an `AppRuntime`, driven through the router.

The hosts here are thin in-test adapters over the synchronous runtime (no actors, no log), so
what is checked is the router and the output schemas against what the runtime really answers.
"""

from __future__ import annotations

import json
from collections import Counter
from typing import Any

import jsonschema
import pytest

from semledger.hosts import CommandIntent, PointerEvent, Router, handle
from semledger.runtime._actions import Precondition, SemanticsAction, Target
from semledger.runtime._outcomes import Receipt, Rejection
from semledger.runtime._reads import ReadResult
from semledger.runtime._runtime import AppRuntime

EXAMPLES = ["counter", "todo", "gallery"]


class RuntimeHost:
    def __init__(self, runtime: AppRuntime[Any, Any]) -> None:
        self.runtime = runtime

    async def read_semantics(self, since: int | None) -> ReadResult | Rejection:
        return self.runtime.read(since)

    async def perform_action(
        self, target: Target, action: SemanticsAction, precondition: Precondition
    ) -> Receipt | Rejection:
        return self.runtime.perform(target, action, precondition)

    async def read_state(self) -> dict[str, Any]:
        return self.runtime.state_counters()

    async def read_paint(self) -> dict[str, Any]:
        return self.runtime.paint_summary()

    async def dispatch_event(self, event: PointerEvent) -> dict[str, Any]:
        return self.runtime.dispatch_pointer(event.x, event.y, str(event.phase))

    async def dispatch_command(self, intent: CommandIntent) -> dict[str, Any]:
        return self.runtime.dispatch_command(str(intent))


class Session:
    def __init__(self, example: str) -> None:
        module = __import__(f"semledger.examples.{example}", fromlist=["app"])
        self.host = RuntimeHost(AppRuntime(module.app))
        self.router = Router(profile="diagnostics")
        self.validators = {
            tool.name: jsonschema.Draft202012Validator(tool.output_schema)
            for tool in self.router.tools
        }
        self.next_id = 0

    async def call(self, name: str, arguments: dict[str, Any] | None = None) -> dict[str, Any]:
        self.next_id += 1
        line = json.dumps(
            {
                "jsonrpc": "2.0",
                "id": self.next_id,
                "method": "tools/call",
                "params": {"name": name, "arguments": arguments or {}},
            }
        )
        (message,) = await handle(self.router, self.host, line)
        assert message["id"] == self.next_id
        assert "result" in message, message
        envelope: dict[str, Any] = message["result"]["structuredContent"]
        self.validators[name].validate(envelope)
        return envelope


def _payload(kind: str, node: dict[str, Any]) -> dict[str, Any]:
    if kind == "set_text":
        return {"kind": kind, "value": "12"}
    if kind == "scroll":
        return {"kind": kind, "direction": "down"}
    if kind == "set_numeric_value":
        numeric = node["numeric"] or {}
        return {"kind": kind, "value": numeric.get("max") or 1}
    if kind == "set_selection":
        return {"kind": kind, "start": 0, "end": len(node["value"] or "")}
    return {"kind": kind}


@pytest.mark.parametrize("example", EXAMPLES)
async def test_every_action_of_every_node_gives_results_that_validate(example: str) -> None:
    session = Session(example)
    full = await session.call("read_semantics")
    assert full["ok"] is True
    assert full["value"]["kind"] == "full"
    generation = full["value"]["generation"]
    for node in full["value"]["nodes"]:
        for kind in node["actions"]:
            target = {"kind": "node_id", "id": node["node_id"]}
            arguments = {
                "target": target,
                "action": _payload(kind, node),
                "precondition": {"kind": "latest"},
            }
            await session.call("perform_action", arguments)
            since = await session.call("read_semantics", {"since": generation})
            assert since["ok"] is True
            generation = since["value"].get("to", since["value"].get("generation"))
    stale = await session.call(
        "perform_action",
        {
            "target": {"kind": "path", "path": [{"role": "button"}]},
            "action": {"kind": "activate"},
            "precondition": {"kind": "exact", "generation": str(2**64 - 1)},
        },
    )
    assert stale["error"]["code"] == "stale_generation"
    missing = await session.call(
        "perform_action",
        {
            "target": {"kind": "path", "path": [{"label": "no such label", "index": 3}]},
            "action": {"kind": "activate"},
            "precondition": {"kind": "latest"},
        },
    )
    assert missing["error"]["code"] == "target_not_found"
    assert missing["error"]["details"]["target"]["path"][0] == {
        "index": 3,
        "role": None,
        "label": "no such label",
        "value": None,
        "semantic_id": None,
    }


@pytest.mark.parametrize("example", EXAMPLES)
async def test_diagnostics_of_a_real_runtime_validate(example: str) -> None:
    session = Session(example)
    state = await session.call("diagnostics_read_state")
    assert state["ok"] is True
    await session.call("diagnostics_read_paint")
    full = await session.call("read_semantics")
    for node in full["value"]["nodes"][:12]:
        frame = node["frame"]
        x = frame["origin"]["x"] + frame["size"]["width"] / 2
        y = frame["origin"]["y"] + frame["size"]["height"] / 2
        for phase in ("Move", "Down", "Up", "Exit", "Cancel"):
            event = {"kind": "Pointer", "position": {"x": x, "y": y}, "phase": phase}
            await session.call("diagnostics_dispatch_event", {"event": event})
    for intent in CommandIntent:
        await session.call("diagnostics_dispatch_command", {"intent": intent.value})
    await session.call("diagnostics_read_paint")



def _keyword_uses(schema: dict[str, Any], envelope: dict[str, Any]) -> Counter[str]:
    """How many times validating `envelope` against `schema` applies each keyword: to the
    first node of the read (as ``"properties on the node"``) and in all."""
    node = envelope["value"]["nodes"][0]
    uses: Counter[str] = Counter()
    base = jsonschema.Draft202012Validator

    def counting(keyword: str) -> Any:
        def check(validator: Any, value: Any, instance: Any, schema: Any) -> Any:
            uses[keyword] += 1
            if keyword == "properties" and instance is node:
                uses["properties on the node"] += 1
            yield from base.VALIDATORS[keyword](validator, value, instance, schema)

        return check

    validator = jsonschema.validators.extend(
        base, {keyword: counting(keyword) for keyword in base.VALIDATORS}
    )
    validator(schema).validate(envelope)
    return uses


async def test_a_client_validating_a_full_read_checks_each_node_once_and_directly() -> None:
    """A client that validates every result (the official SDK does) checked the whole value
    twice, and each nullable field of a node through an anyOf: a large tree took seconds."""
    session = Session("gallery")
    full = await session.call("read_semantics")
    schema = next(t.output_schema for t in session.router.tools if t.name == "read_semantics")
    uses = _keyword_uses(schema, full)
    assert uses["properties on the node"] == 1
    nodes = len(full["value"]["nodes"])
    assert uses["anyOf"] <= nodes + 2, uses  # a node's semantic id, the root, the focus
