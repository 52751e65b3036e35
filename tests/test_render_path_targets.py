"""How the audit and fuzz's steps show a target given as a path: its steps as the tree names
nodes, not the JSON of every step with each filter not given as null."""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path
from typing import Any

import pytest

sys.path.insert(0, str(Path(__file__).parent / "apps"))
import stdio_client as mcp

from semledger._render import step_line
from semledger.eventlog import ActionRequested

LATEST = {"kind": "latest"}
PHOTO = [{"role": "list"}, {"role": "list_item", "label": "photo.png"}]


def _act(request_id: int, path: Any) -> str:
    target = {"kind": "path", "path": path}
    arguments = {"target": target, "action": {"kind": "focus"}, "precondition": LATEST}
    return mcp.call(request_id, "perform_action", arguments)


@pytest.fixture(scope="module")
def log(tmp_path_factory: pytest.TempPathFactory) -> Path:
    db = tmp_path_factory.mktemp("paths") / "log.db"
    answers = mcp.serve(
        "semledger.examples.todo:app",
        db,
        "paths",
        [
            mcp.perform(1, "todo.input", "set_text", value="photo.png"),
            mcp.perform(2, "todo.input", "submit"),
            _act(3, PHOTO),
            _act(4, [{"role": "list", "index": -1}]),
        ],
    )
    assert answers[3]["ok"], answers
    assert answers[4]["error"]["code"] == "invalid_arguments", answers
    return db


def test_the_audit_shows_a_path_as_its_steps(log: Path) -> None:
    """It showed ``path [{"index":0,"role":"list","label":null,"value":null,"semantic_id":
    null},{...}]``, 160 characters stretching the column."""
    done = mcp.cli_in_process("audit", "paths", "--db", str(log), columns=200)
    assert done.returncode == 0, done.stderr
    assert "│ path list[0] > list_item[0] 'photo.png' │ focus " in done.stdout, done.stdout


def test_the_audit_shows_a_refused_calls_path_as_it_was_sent(log: Path) -> None:
    done = mcp.cli_in_process("audit", "paths", "--db", str(log), columns=200)
    assert re.search(r'│ path \[\{"role":"list","index":-1\}\] +│ focus ', done.stdout), done.stdout


def test_the_audits_json_keeps_the_path_as_logged(log: Path) -> None:
    done = mcp.cli_in_process("audit", "paths", "--db", str(log), "--json")
    target = json.loads(done.stdout)["actions"][2]["target"]
    nulls = {"label": None, "value": None, "semantic_id": None}
    assert target == {
        "kind": "path",
        "path": [
            {"index": 0, "role": "list", **nulls},
            {"index": 0, "role": "list_item", **nulls, "label": "photo.png"},
        ],
    }


def _step(*path: dict[str, Any]) -> str:
    event = ActionRequested(1, {"kind": "path", "path": list(path)}, {"kind": "focus"}, LATEST,
                            False)  # fmt: skip
    return step_line(event, None)


@pytest.mark.parametrize(
    ("path", "said"),
    [
        (
            [{"index": 2, "role": "button", "label": None, "value": None, "semantic_id": None}],
            "path button[2]",
        ),
        ([{"label": "Save"}], "path *[0] 'Save'"),
        ([{"role": "text_field", "value": "a > b"}], "path text_field[0] = 'a > b'"),
        ([{"role": "list"}, {"semantic_id": "todo.item.1"}], "path list[0] > *[0] #todo.item.1"),
        ([{"label": "it's\n"}], 'path *[0] "it\'s\\n"'),
    ],
)
def test_a_path_step_names_each_filter_given_as_the_tree_names_nodes(
    path: list[dict[str, Any]], said: str
) -> None:
    assert _step(*path) == f"focus {said}, latest"


@pytest.mark.parametrize(
    "path",
    [
        [{"role": "button", "index": 1.0}],  # a client that writes every number as a float
        [{"role": "button", "index": 2**70}],  # taken as the largest index the wire has
        [{"role": "button", "index": True}],
        [{"role": "buton"}],
        [{"index": 0}],
        [{"role": "button", "colour": "red"}],
        [],
        ["button"],
    ],
)
def test_a_path_no_call_may_give_shows_as_it_was_sent(path: list[Any]) -> None:
    assert _step(*path) == f"focus path {json.dumps(path, separators=(',', ':'))}, latest"


def test_a_long_label_in_a_path_is_cut_saying_where_it_is_whole() -> None:
    line = _step({"role": "button", "label": "L" * 150})
    assert line.startswith("focus path button[0] 'LLL"), line
    assert line.endswith("… (150 characters; audit --json has it whole), latest"), line
