"""The README's quick start works as a newcomer would run it, so it cannot rot."""

from __future__ import annotations

import os
import re
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def _quick_start() -> list[str]:
    """The commands of the README's first code block, without their trailing comments."""
    text = (ROOT / "README.md").read_text()
    block = re.search(r"```(?:sh|bash)?\n(.*?)```", text, re.S)
    assert block is not None, "the README has no code block"
    lines = [line.split("  #", 1)[0].strip() for line in block.group(1).splitlines()]
    return [line for line in lines if line]


def test_the_readme_opens_with_the_main_job_and_the_test_command() -> None:
    main_job, test_command = _quick_start()
    assert main_job.endswith("semledger demo")
    assert (ROOT / ".ci" / "run").read_text().strip().splitlines()[-1] == test_command


def test_the_main_job_runs_in_a_fresh_virtual_environment(fresh_checkout: Path) -> None:
    checkout = fresh_checkout
    main_job, _ = _quick_start()
    env = {k: v for k, v in os.environ.items() if not k.startswith(("VIRTUAL_ENV", "PYTHON"))}
    result = subprocess.run(
        ["bash", "-c", main_job],
        cwd=checkout,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    assert "identical" in result.stdout
    assert "integrity chain" in result.stdout
    assert (checkout / "semledger.db").exists()
