"""Interoperability: the MCP Inspector's CLI mode against `semledger serve`.

The Inspector is a Node program nobody here wrote. It runs in CI: without ``npx`` these tests
fail (they install nothing system-wide); the pinned version is fetched by npx into a private
npm cache under the system temp dir, reused between runs. Version 0.17.5 declares Node >= 22
but its CLI mode runs on Node 20 as well.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import jsonschema
import pytest

INSPECTOR = "@modelcontextprotocol/inspector@0.17.5"
OLDER_INSPECTOR = "@modelcontextprotocol/inspector@0.15.0"
"""Sends a ``--tool-arg`` value as JSON only where the input schema says ``type: object``."""
COUNTER = "semledger.examples.counter:app"
SEMLEDGER = Path(sys.executable).with_name("semledger")
NPM_CACHE = Path(tempfile.gettempdir()) / "semledger-test-npm-cache"
URL_LINE = re.compile(r"semledger: serving \S+ at (http://\S+/mcp)")

# On one test worker: npx fetching into one npm cache from two processes at once can fail.
pytestmark = pytest.mark.xdist_group("npm-cache")


def _semledger(*args: str) -> list[str]:
    if SEMLEDGER.exists():
        return [str(SEMLEDGER), *args]
    return [sys.executable, "-m", "semledger", *args]


def _npx() -> str:
    npx = shutil.which("npx")
    if npx is None:
        pytest.fail(
            "npx was not found on PATH: the MCP Inspector interoperability tests need Node.js "
            "and npm (install nodejs and npm; nothing is installed by the tests)"
        )
    return npx


def inspector(*args: str, timeout: float = 120, package: str = INSPECTOR) -> Any:
    """Run ``npx <package> --cli ARGS`` and return its JSON output."""
    env = {**os.environ, "NO_UPDATE_NOTIFIER": "1", "npm_config_update_notifier": "false",
           "npm_config_fund": "false", "npm_config_audit": "false"}
    command = [_npx(), "-y", "--cache", str(NPM_CACHE), package, "--cli", *args]
    done = subprocess.run(
        command, capture_output=True, text=True, timeout=timeout, env=env, check=False
    )
    assert done.returncode == 0, f"{command}\nstdout:\n{done.stdout}\nstderr:\n{done.stderr}"
    try:
        return json.loads(done.stdout)
    except json.JSONDecodeError:
        pytest.fail(f"the Inspector printed no JSON:\n{done.stdout}\nstderr:\n{done.stderr}")


def _stdio(db: Path, *extra: str) -> list[str]:
    return _semledger("serve", COUNTER, "--db", str(db), "--session", "inspector", *extra)


def _call(db: Path, tool: str, package: str = INSPECTOR, **arguments: Any) -> dict[str, Any]:
    tool_args = [f"{key}={json.dumps(value)}" for key, value in arguments.items()]
    extra = ["--tool-arg", *tool_args] if tool_args else []
    result: dict[str, Any] = inspector(
        *_stdio(db), "--method", "tools/call", "--tool-name", tool, *extra, package=package
    )
    return result


def _envelope(result: dict[str, Any], validator: jsonschema.Draft202012Validator) -> Any:
    envelope = result["structuredContent"]
    validator.validate(envelope)
    assert result["isError"] is (not envelope["ok"])
    assert json.loads(result["content"][0]["text"]) == envelope
    return envelope


@pytest.fixture(scope="module")
def listed(tmp_path_factory: pytest.TempPathFactory) -> dict[str, dict[str, Any]]:
    db = tmp_path_factory.mktemp("inspector") / "list.db"
    result = inspector(*_stdio(db), "--method", "tools/list")
    return {tool["name"]: tool for tool in result["tools"]}


def test_inspector_lists_exactly_the_two_tools(listed: dict[str, dict[str, Any]]) -> None:
    assert list(listed) == ["read_semantics", "perform_action"]
    for tool in listed.values():
        jsonschema.Draft202012Validator.check_schema(tool["inputSchema"])
        jsonschema.Draft202012Validator.check_schema(tool["outputSchema"])


def test_inspector_reads_acts_and_is_refused_a_stale_generation(
    listed: dict[str, dict[str, Any]], tmp_path: Path
) -> None:
    db = tmp_path / "calls.db"
    validators = {
        name: jsonschema.Draft202012Validator(tool["outputSchema"]) for name, tool in listed.items()
    }
    full = _envelope(_call(db, "read_semantics"), validators["read_semantics"])["value"]
    assert full["kind"] == "full"
    g0 = full["generation"]
    count = next(n for n in full["nodes"] if n["semantic_id"] == "counter.value")
    assert count["value"] == "0"

    action = {
        "target": {"kind": "semantic_id", "id": "counter.increment"},
        "action": {"kind": "activate"},
    }
    receipt = _envelope(
        _call(db, "perform_action", **action, precondition={"kind": "exact", "generation": g0}),
        validators["perform_action"],
    )
    assert receipt == {
        "ok": True, "value": {"before": g0, "after": str(int(g0) + 1), "pending_work": False},
    }
    g1 = receipt["value"]["after"]

    stale = _envelope(
        _call(db, "perform_action", **action, precondition={"kind": "exact", "generation": g0}),
        validators["perform_action"],
    )
    assert stale["ok"] is False
    assert stale["error"]["code"] == "stale_generation"
    assert stale["error"]["details"] == {"expected": g0, "current": g1}

    delta = _envelope(_call(db, "read_semantics", since=g0), validators["read_semantics"])
    assert (delta["value"]["kind"], delta["value"]["to"]) == ("delta", g1)
    changed = next(n for n in delta["value"]["upserted"] if n["semantic_id"] == "counter.value")
    assert (changed["node_id"], changed["value"]) == (count["node_id"], "1")


def test_an_older_inspector_sends_object_arguments_as_objects(
    listed: dict[str, dict[str, Any]], tmp_path: Path
) -> None:
    """Inspector 0.15 turns a ``--tool-arg`` into JSON only for a property whose schema has
    ``type: object`` at its top: without it, every action was refused ``target: expected an
    object``."""
    validator = jsonschema.Draft202012Validator(listed["perform_action"]["outputSchema"])
    receipt = _envelope(
        _call(
            tmp_path / "older.db",
            "perform_action",
            OLDER_INSPECTOR,
            target={"kind": "semantic_id", "id": "counter.increment"},
            action={"kind": "activate"},
            precondition={"kind": "latest"},
        ),
        validator,
    )
    assert receipt["ok"] is True, receipt


@pytest.fixture
def http_url(tmp_path: Path) -> Iterator[str]:
    errors = tmp_path / "http.err"
    with errors.open("wb") as err:
        process = subprocess.Popen(
            _semledger("serve", COUNTER, "--db", str(tmp_path / "http.db"),
                       "--http", "127.0.0.1:0"),
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=err,
        )
    try:
        deadline = time.monotonic() + 30
        while (match := URL_LINE.search(errors.read_text())) is None:
            if process.poll() is not None or time.monotonic() > deadline:
                pytest.fail(f"the HTTP server did not come up:\n{errors.read_text()}")
            time.sleep(0.05)
        yield match.group(1)
    finally:
        process.terminate()
        assert process.wait(timeout=30) == 0


def test_inspector_reads_over_streamable_http(
    listed: dict[str, dict[str, Any]], http_url: str
) -> None:
    result = inspector(
        http_url, "--transport", "http", "--method", "tools/call", "--tool-name", "read_semantics"
    )
    validator = jsonschema.Draft202012Validator(listed["read_semantics"]["outputSchema"])
    assert _envelope(result, validator)["value"]["kind"] == "full"
