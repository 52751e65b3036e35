"""The audit table shows each part of a call refused for its arguments as it was sent: a
field missing from it, or sent as null, apart from a string that reads like either."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest

sys.path.insert(0, str(Path(__file__).parent / "apps"))
import stdio_client as mcp

COUNTER = "semledger.examples.counter:app"
ACTIVATE = {"kind": "activate"}
INCREMENT = {"kind": "semantic_id", "id": "counter.increment"}
SENT: list[tuple[dict[str, Any], dict[str, Any], dict[str, Any] | None]] = [
    ({"kind": "semantic_id"}, ACTIVATE, None),
    ({"kind": "semantic_id", "id": None}, ACTIVATE, None),
    ({"kind": "semantic_id", "id": "None"}, ACTIVATE, None),
    ({"kind": "semantic_id", "id": "-"}, ACTIVATE, None),
    ({"kind": "semantic_id", "id": "null"}, ACTIVATE, None),
    ({"kind": "node_id"}, ACTIVATE, None),
    ({"kind": "node_id", "id": "None"}, ACTIVATE, None),
    ({"kind": "path"}, ACTIVATE, None),
    ({"kind": "semantic_id", "id": 5}, ACTIVATE, None),
    (INCREMENT, {"kind": None}, None),
    (INCREMENT, {}, None),
    (INCREMENT, ACTIVATE, {"kind": "exact", "generation": None}),
]
SHOWN = [
    ('{"kind":"semantic_id"}', "activate", "latest"),
    ('{"kind":"semantic_id","id":null}', "activate", "latest"),
    ("'None'", "activate", "latest"),
    ("'-'", "activate", "latest"),
    ("'null'", "activate", "latest"),
    ('{"kind":"node_id"}', "activate", "latest"),
    ("node 'None'", "activate", "latest"),
    ('{"kind":"path"}', "activate", "latest"),
    ('{"kind":"semantic_id","id":5}', "activate", "latest"),
    ("counter.increment", '{"kind":null}', "latest"),
    ("counter.increment", "{}", "latest"),
    ("counter.increment", "activate", '{"kind":"exact","generation":null}'),
]


@pytest.fixture(scope="module")
def table(tmp_path_factory: pytest.TempPathFactory) -> list[list[str]]:
    db = tmp_path_factory.mktemp("refused-parts") / "log.db"
    calls = [
        mcp.call(
            number,
            "perform_action",
            {
                "target": target,
                "action": action,
                "precondition": {"kind": "latest"} if precondition is None else precondition,
            },
        )
        for number, (target, action, precondition) in enumerate(SENT, start=1)
    ]
    mcp.serve(COUNTER, db, "m", calls)
    done = mcp.cli("audit", "m", "--db", str(db), COLUMNS="250")
    assert done.returncode == 0, done.stdout + done.stderr
    rows = [line for line in done.stdout.splitlines() if line.startswith("│")]
    return [[cell.strip() for cell in row.strip("│ ").split("│")] for row in rows]


def test_every_call_is_one_row(table: list[list[str]]) -> None:
    assert len(table) == len(SENT)


@pytest.mark.parametrize(("number", "shown"), list(enumerate(SHOWN)), ids=str)
def test_a_part_missing_a_field_or_sent_as_null_is_shown_as_sent_and_a_string_apart(
    table: list[list[str]], number: int, shown: tuple[str, str, str]
) -> None:
    """`{"kind":"semantic_id"}`, `{"kind":"semantic_id","id":null}` and the id "None" all
    showed as `None`; a missing node id as `node None`, a missing path as `path null`, an
    action kind sent as null as `None`."""
    assert tuple(table[number][3:6]) == shown


def test_a_part_sent_as_null_is_null_in_json_told_from_an_unread_event_by_unread(
    tmp_path: Path,
) -> None:
    """docs/log.md said a part is null only of an event that cannot be read (`unread`
    true); a call refused for its precondition sent as null is null too, as it was sent."""
    db = tmp_path / "log.db"
    arguments = {"target": INCREMENT, "action": ACTIVATE, "precondition": None}
    mcp.serve(COUNTER, db, "n", [mcp.call(1, "perform_action", arguments)])
    audited = mcp.cli("audit", "n", "--db", str(db), "--json")
    (row,) = json.loads(audited.stdout)["actions"]
    assert (row["precondition"], row["unsent"], row["unread"]) == (None, [], False)
    table = mcp.cli("audit", "n", "--db", str(db), COLUMNS="250")
    (line,) = [line for line in table.stdout.splitlines() if line.startswith("│ -")]
    assert [cell.strip() for cell in line.strip("│ ").split("│")][3:6] == [
        "counter.increment", "activate", "null",
    ]  # fmt: skip
