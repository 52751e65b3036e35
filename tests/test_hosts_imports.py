"""What importing `semledger.hosts` costs a stdio server, and that every public name is there."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap

import pytest

import semledger.hosts

SURFACE_AND_HTTP = ["semledger.adapters", "semledger.hosts._http"]


def test_importing_the_hosts_leaves_http_and_the_adapters_until_asked_for() -> None:
    """A stdio server paid for the HTTP transport and the adapters, which it never uses."""
    code = textwrap.dedent(f"""
        import json, sys
        from semledger.hosts import run_stdio, serve_stdio
        print(json.dumps([m for m in {SURFACE_AND_HTTP!r} if m in sys.modules]))
        from semledger.hosts import McpHttpApp, SurfaceAgentHost
        print(json.dumps([m for m in {SURFACE_AND_HTTP!r} if m in sys.modules]))
    """)
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    ).stdout.splitlines()
    assert json.loads(out[0]) == []
    assert json.loads(out[1]) == SURFACE_AND_HTTP


def test_every_public_name_of_the_hosts_is_importable_and_listed() -> None:
    namespace: dict[str, object] = {}
    exec("from semledger.hosts import *", namespace)
    assert set(semledger.hosts.__all__) <= set(namespace)
    assert set(semledger.hosts.__all__) <= set(dir(semledger.hosts))
    assert namespace["rerun_surface"].__module__ == "semledger.hosts._surface_rerun"  # type: ignore[attr-defined]


def test_a_name_the_hosts_lack_is_an_attribute_error() -> None:
    with pytest.raises(AttributeError, match=r"module 'semledger\.hosts' has no attribute 'nope'"):
        _ = semledger.hosts.nope
