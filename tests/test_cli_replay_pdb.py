"""`replay --pdb` on a session where nothing raised says that no debugger was opened."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent / "apps"))
import stdio_client as mcp
from tests_record import COUNTER, INCREMENT, record


def test_replay_with_pdb_of_a_session_where_nothing_raised_says_no_debugger_was_opened(
    tmp_path: Path,
) -> None:
    """It printed the replay's verdict and exited 0, as if --pdb had not been given."""
    db = tmp_path / "log.db"
    record(db, "agent", COUNTER, [INCREMENT])
    done = mcp.cli("replay", "agent", "--db", str(db), "--pdb")
    assert done.returncode == 0, done.stderr
    assert "identical" in done.stdout
    assert done.stderr == (
        "semledger: --pdb: the app raised nothing in the replay, so no debugger was opened\n"
    )
