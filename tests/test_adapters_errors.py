"""Typed surface errors and classification."""

from __future__ import annotations

import builtins

import pytest

import semledger.adapters as adapters
from semledger.adapters import (
    ActionabilityError,
    CheckError,
    DataError,
    DialogError,
    LocateError,
    NavigationError,
    ScriptError,
    SessionError,
    SurfaceError,
    SurfaceTimeoutError,
    classify,
)

FAILURE_CLASSES = [
    (LocateError, "locator"),
    (ActionabilityError, "timeout"),
    (SurfaceTimeoutError, "timeout"),
    (CheckError, "assertion"),
    (DialogError, "dialog"),
    (NavigationError, "navigation"),
    (ScriptError, "script"),
    (SessionError, "infrastructure"),
    (DataError, "data"),
]


@pytest.mark.parametrize(("error", "failure_class"), FAILURE_CLASSES)
def test_each_error_carries_its_failure_class(
    error: type[SurfaceError], failure_class: str
) -> None:
    raised = error("boom")
    assert isinstance(raised, SurfaceError)
    assert raised.failure_class == failure_class
    assert classify(raised) == failure_class


@pytest.mark.parametrize(("error", "failure_class"), FAILURE_CLASSES)
def test_each_error_says_when_it_is_raised(error: type[SurfaceError], failure_class: str) -> None:
    assert error.__doc__
    assert "raised" in error.__doc__.lower()


@pytest.mark.parametrize(
    "exc", [ValueError("x"), builtins.TimeoutError(), KeyError("k"), Exception("native")]
)
def test_anything_that_is_not_a_surface_error_is_unknown(exc: BaseException) -> None:
    assert classify(exc) == "unknown"


def test_timeout_alias_exists_without_shadowing_the_builtin() -> None:
    assert adapters.TimeoutError is SurfaceTimeoutError
    assert "TimeoutError" not in adapters.__all__
    assert not issubclass(SurfaceTimeoutError, builtins.TimeoutError)
    namespace: dict[str, object] = {}
    exec("from semledger.adapters import *", namespace)
    assert "TimeoutError" not in namespace


def test_data_error_names_its_path_in_the_message() -> None:
    error = DataError("required field missing", path="candidate.role")
    assert error.path == "candidate.role"
    assert error.reason == "required field missing"
    assert str(error) == "candidate.role: required field missing"


def test_details_are_kept_as_a_copy() -> None:
    details = {"ref": "r3"}
    error = LocateError("unknown ref", details=details)
    details["ref"] = "changed"
    assert error.details == {"ref": "r3"}
