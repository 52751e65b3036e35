"""The README's quick start works as a newcomer would run it, so it cannot rot."""

from __future__ import annotations

import os
import re
import subprocess
import sys
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
    # What the README and the log's page quote of the demo is what it prints.
    quoted = (ROOT / "README.md").read_text() + (ROOT / "docs" / "log.md").read_text()
    replayed = re.search(r"`(identical — \d+ inputs, \d+ commits, [^`]+)`", quoted)
    assert replayed is not None
    assert replayed.group(1) in result.stdout
    verified = re.search(r"integrity chain: session '[^']+': ok, (\d+) events", result.stdout)
    assert verified is not None, result.stdout
    # (Not the example of an anchor checked after the log grew: "ok, 43 events, through …".)
    demo = r"ok, (\d+) events(?!, through)|(\d+):<(?:hex|64 hex digits)>"
    counts = set(re.findall(demo, quoted))
    assert {a or b for a, b in counts} == {verified.group(1)}
    assert (checkout / "semledger.db").exists()


def _python_block(starting: str, page: str = "README.md") -> str:
    """The Python code block of `page` whose first line is `starting`."""
    text = (ROOT / page).read_text()
    for block in re.findall(r"```python\n(.*?)```", text, re.S):
        if block.startswith(starting):
            return str(block)
    raise AssertionError(f"{page} has no python block starting {starting!r}")


def _python(folder: Path, *args: str, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    """``python ARGS`` run in `folder` as a user would, with no PYTHONPATH of the suite's."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    return subprocess.run(
        [sys.executable, *args], cwd=folder, env=env, capture_output=True, text=True,
        timeout=timeout, check=False,
    )


def _passes(folder: Path, test_file: str) -> None:
    """Assert that pytest, run in `folder`, passes the one test of `test_file`."""
    ran = _python(folder, "-m", "pytest", "-q", "-p", "no:cacheprovider", test_file, timeout=300)
    assert ran.returncode == 0, ran.stdout[-3000:] + ran.stderr[-3000:]
    assert "1 passed" in ran.stdout


def test_the_readme_s_app_and_its_fuzz_test_run_as_written(tmp_path: Path) -> None:
    (tmp_path / "tiny.py").write_text(_python_block("# tiny.py"))
    (tmp_path / "test_tiny.py").write_text(_python_block("# test_tiny.py"))
    _passes(tmp_path, "test_tiny.py")
    app = _python(tmp_path, "tiny.py")
    assert app.stdout.splitlines() == [
        "Receipt(before=1, after=2, pending_work=False)",
        "Rejection(code=<ErrorCode.STALE_GENERATION: 'stale_generation'>, message='expected"
        " generation 1, current is 2', details={'expected': '1', 'current': '2'})",
    ]


def test_the_readme_s_sdk_agent_runs_as_written(tmp_path: Path) -> None:
    """It reads, then acts at the generation it read, through a real server it starts,
    found without the virtualenv's bin on the PATH: with it there, the test passed where
    a newcomer's run found no `semledger`."""
    (tmp_path / "agent.py").write_text(_python_block("# agent.py"))
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    bin_folder = str(Path(sys.executable).parent)
    env["PATH"] = os.pathsep.join(
        p for p in env.get("PATH", "").split(os.pathsep) if p != bin_folder
    )
    ran = subprocess.run(
        [sys.executable, "agent.py"], cwd=tmp_path, env=env, capture_output=True, text=True,
        timeout=120, check=False,
    )
    assert ran.returncode == 0, ran.stdout[-3000:] + ran.stderr[-3000:]
    assert ran.stdout.splitlines() == [
        "{'ok': True, 'value': {'before': '1', 'after': '2', 'pending_work': False}}"
    ]
    assert (tmp_path / "agent.db").exists()


def test_the_generation_checker_example_of_the_apps_page_runs_as_written(
    tmp_path: Path,
) -> None:
    (tmp_path / "test_counter_rules.py").write_text(
        _python_block("# test_counter_rules.py", "docs/apps.md")
    )
    _passes(tmp_path, "test_counter_rules.py")


def test_the_library_example_of_the_architecture_page_runs_as_written(tmp_path: Path) -> None:
    page = "docs/architecture.md"
    (tmp_path / "library.py").write_text(_python_block("# library.py", page))
    ran = _python(tmp_path, "library.py")
    assert ran.returncode == 0, ran.stderr[-3000:]
    text = (ROOT / page).read_text()
    assert f"prints\n\n```\n{ran.stdout}```" in text, ran.stdout
    replayed = _python(tmp_path, "-m", "semledger", "replay", "s1", "--db", "library.db")
    assert replayed.returncode == 0, replayed.stdout + replayed.stderr
    said = re.search(r"`(identical — [^`]+)`", text[text.index("# library.py"):])
    assert said is not None
    assert said.group(1) in replayed.stdout
