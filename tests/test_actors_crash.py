"""THE CRASH TEST: a served session killed with SIGKILL at random moments loses nothing it
answered, keeps a verifiable chain, and recovers to its last durable generation."""

from __future__ import annotations

import json
import random
import subprocess
import sys
import threading
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import IO, Any

import attrs

from semledger.eventlog import Committed, SqliteRecorder
from semledger.replay import audit, verify

sys.path.insert(0, str(Path(__file__).parent / "apps"))
import stdio_client as mcp

APP = "semledger.examples.counter:app"
LANES = 2
"""Sessions killed side by side, each on its own server process, sharing the one log."""
TRIALS = 25
"""Per lane: 50 kills in all."""
SEED = 20_261_201
ACTIONS = 4000
"""More than a server gets through before any kill, so every kill lands mid-stream."""
READY_TIMEOUT = 60.0

PERFORMS = "".join(mcp.perform(i, "counter.increment") for i in range(2, ACTIONS + 2)).encode()


def last_committed(recorder: SqliteRecorder, session: str) -> int | None:
    generation = None
    for _record, event in recorder.events(session):
        if isinstance(event, Committed):
            generation = event.generation
    return generation


class Child:
    """One `semledger serve` of the session, fed a stream of increments."""

    def __init__(self, db: Path, session: str) -> None:
        self.process = subprocess.Popen(
            [*mcp.COMMAND, "serve", APP, "--db", str(db), "--session", session],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            env=mcp.env(),
        )
        self.lines: list[bytes] = []
        self.ready = threading.Event()
        self._threads = [
            threading.Thread(target=self._write, daemon=True),
            threading.Thread(target=self._read, daemon=True),
        ]
        for thread in self._threads:
            thread.start()

    def _write(self) -> None:
        stdin: IO[bytes] | None = self.process.stdin
        assert stdin is not None
        try:
            stdin.write((mcp.initialize() + mcp.read(1)).encode())
            stdin.flush()
            for start in range(0, len(PERFORMS), 1 << 14):
                stdin.write(PERFORMS[start : start + (1 << 14)])
                stdin.flush()
        except (BrokenPipeError, OSError):
            pass

    def _read(self) -> None:
        stdout: IO[bytes] | None = self.process.stdout
        assert stdout is not None
        for raw in stdout:
            if not raw.endswith(b"\n"):
                break  # cut off by the kill
            self.lines.append(raw)
            if not self.ready.is_set() and json.loads(raw).get("id") == 1:
                self.ready.set()
        self.ready.set()

    def kill(self) -> None:
        self.process.kill()
        self.process.wait(timeout=30)
        for thread in self._threads:
            thread.join(timeout=30)

    def answers(self) -> dict[int, dict[str, Any]]:
        return mcp.envelopes(b"".join(self.lines).decode())


def recovered_generation(answers: dict[int, dict[str, Any]]) -> int:
    read = answers[1]
    assert read["ok"], read
    return int(read["value"]["generation"])


@attrs.frozen
class Lane:
    session: str
    highest_after: int
    received: int


def run_lane(db: Path, session: str, seed: int) -> Lane:
    """Serve `session` again and again, killing each server a random moment after it is up."""
    rng = random.Random(seed)
    highest_after = 0
    received = 0
    with SqliteRecorder(db) as recorder:
        for trial in range(TRIALS):
            where = f"{session}, trial {trial}"
            durable = last_committed(recorder, session)
            requests_before = len(audit(recorder, session)) if durable is not None else 0
            child = Child(db, session)
            assert child.ready.wait(READY_TIMEOUT), f"{where}: the server never answered"
            threading.Event().wait(rng.uniform(0.0, 0.12))
            child.kill()
            answers = child.answers()

            # Starting the session again recovered it to the last durable generation.
            generation = recovered_generation(answers)
            if durable is not None:
                assert generation == durable, f"{where}: recovered to {generation}, not {durable}"
                assert generation >= highest_after, where

            # Every receipt that reached the agent is in the log, with the same generations.
            receipts = {k: v["value"] for k, v in answers.items() if k >= 2}
            assert sorted(receipts) == list(range(2, len(receipts) + 2)), where
            entries = audit(recorder, session)
            for request, receipt in receipts.items():
                entry = entries[requests_before + request - 2]
                assert entry.outcome == "receipt", (where, request, entry)
                logged = (str(entry.before), str(entry.after))
                assert logged == (receipt["before"], receipt["after"]), (where, request, entry)
                highest_after = max(highest_after, int(receipt["after"]))
            received += len(receipts)

            report = verify(recorder, session)
            assert report.ok, f"{where}: {report}"
    return Lane(session, highest_after, received)


def test_sigkilled_sessions_lose_no_receipt_and_recover_to_the_last_durable_generation(
    tmp_path: Path,
) -> None:
    db = tmp_path / "crash.db"
    SqliteRecorder(db).close()  # create the schema before two servers race to
    with ThreadPoolExecutor(LANES) as pool:
        futures = [pool.submit(run_lane, db, f"crash-{lane}", SEED + lane) for lane in range(LANES)]
        lanes = [future.result() for future in futures]

    assert sum(lane.received for lane in lanes) > LANES * TRIALS, "kills land mid-stream"
    for lane in lanes:
        with SqliteRecorder(db) as recorder:
            durable = last_committed(recorder, lane.session)
        assert durable is not None
        assert durable >= lane.highest_after
        final = mcp.serve(
            APP,
            db,
            lane.session,
            [mcp.read(1), mcp.perform(2, "counter.increment", generation=str(durable))],
        )
        assert recovered_generation(final) == durable
        assert final[2]["value"] == {
            "before": str(durable),
            "after": str(durable + 1),
            "pending_work": False,
        }
        checked = mcp.cli("audit", lane.session, "--db", str(db), "--json", "--verify")
        assert checked.returncode == 0, checked.stderr
        assert json.loads(checked.stdout)["verify"]["ok"] is True
