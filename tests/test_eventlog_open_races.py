"""Servers started together on one log: each opens it, whoever makes it and whoever writes."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

from semledger.eventlog import (
    LogOpenError,
    NewEvent,
    SessionStarted,
    SqliteRecorder,
)


def _started(session: str) -> list[NewEvent]:
    event = SessionStarted(
        app="semledger.examples.counter:app", surface="runtime", params={},
        redact_passwords=True,
    )  # fmt: skip
    return [NewEvent(session, 1, event, 100.0)]


def test_a_log_opened_as_another_process_links_it_into_place_is_opened(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A new log is built under a temporary name and linked into place, and the temporary
    name removed after: an open in between saw two names, and refused the log as one with a
    hard link, telling its operator to keep one name."""
    path = tmp_path / "log.db"
    link = os.link
    opened: list[int] = []

    def linked_then_opened(source: Any, target: Any, *args: Any, **kwargs: Any) -> None:
        link(source, target, *args, **kwargs)
        with SqliteRecorder(path) as other:  # before the maker removes its temporary name
            opened.append(other.found_schema_version)
            other.append(_started("other"))

    monkeypatch.setattr(os, "link", linked_then_opened)
    with SqliteRecorder(path) as maker:
        maker.append(_started("maker"))
        assert {summary.name for summary in maker.sessions()} == {"maker", "other"}
    assert len(opened) == 1
    assert sorted(p.name for p in tmp_path.iterdir()) == ["log.db"]


def test_a_second_name_like_a_temporary_one_but_of_another_file_is_no_excuse(
    tmp_path: Path,
) -> None:
    """Only the maker's temporary name of the same file is passed over."""
    path = tmp_path / "log.db"
    SqliteRecorder(path).close()
    other = tmp_path / "other.db"
    SqliteRecorder(other).close()
    os.link(other, tmp_path / ".log.db.0123abcd.new")  # a name of another file
    os.link(path, tmp_path / "copy.db")
    with pytest.raises(LogOpenError, match="the file has 2 names \\(hard links\\)"):
        SqliteRecorder(path)

