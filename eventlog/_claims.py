"""Session claims: one owner per session at a time, in this process or another.

A session's owner runs its effects and timers; two owners of one session would run each
effect twice before the second one's append failed as a ``SequenceConflict``. A claim is
taken before a session starts or resumes and held until it ends.

``FileClaims`` takes a ``flock`` on one file per session in a directory beside the log.
The kernel drops the lock when its holder dies, so a killed process leaves no stale claim
behind, and two claims through separate opens of the file conflict inside one process too.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import hashlib
import os
import threading
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager

from ._errors import LogOpenError, SessionClaimedError

__all__ = ["FileClaims", "ProcessClaims"]


class ProcessClaims:
    """Claims held in this process only: the in-memory recorder's."""

    def __init__(self) -> None:
        self._held: set[str] = set()
        self._lock = threading.Lock()

    def served(self, sessions: Iterable[str]) -> dict[str, bool | None]:
        with self._lock:
            return {session: session in self._held for session in sessions}

    @contextmanager
    def claim(self, session: str) -> Iterator[None]:
        with self._lock:
            if session in self._held:
                raise SessionClaimedError(session)
            self._held.add(session)
        try:
            yield
        finally:
            with self._lock:
                self._held.discard(session)


class FileClaims:
    """Claims as ``flock`` locks on ``DIRECTORY/<sha256 of the session name>``.

    A released claim removes its file (while it still holds the lock), and the directory
    when that was the last file in it: the directory holds a file only for a session being
    served, or one whose owner was killed or stopped with no end logged. A claimer that
    opened the file before it was removed may then lock a file no longer there: it checks,
    after locking, that the name still leads to the file it locked, and starts again if not;
    one whose directory was removed under it makes it again.

    A claim that cannot make the directory or its file there (a folder the user may not
    write, a file in the directory's place) raises `LogOpenError` naming `log`.
    """

    def __init__(self, directory: str, log: str) -> None:
        self.directory = directory
        self.log = log

    def path_of(self, session: str) -> str:
        name = hashlib.sha256(session.encode("utf-8", "surrogatepass")).hexdigest()[:32]
        return os.path.join(self.directory, name)

    def served(self, sessions: Iterable[str]) -> dict[str, bool | None]:
        """Whether a process holds the claim of each of `sessions` now. Takes no lock, so it
        never stands in the way of a claimer.

        A claim file that is there but not locked is a killed owner's: False. Where there is
        none, this directory cannot tell (None): a released claim removes its file, but a
        copy of the log has no claims beside it, and its session may be served from the
        original. Nor can a system that does not list its locks (``/proc/locks``).
        """
        answers: dict[str, bool | None] = {}
        inodes: dict[int, list[str]] = {}
        for session in sessions:
            answers[session] = None
            try:
                inodes.setdefault(os.stat(self.path_of(session)).st_ino, []).append(session)
            except FileNotFoundError:
                continue
        locked = _locked_inodes() if inodes else None
        if locked is not None:
            for inode, named in inodes.items():
                answers.update((session, inode in locked) for session in named)
        return answers

    @contextmanager
    def claim(
        self,
        session: str,
        *,
        untouched: Callable[[], bool] = lambda: False,
        unended: Callable[[], bool] = lambda: False,
    ) -> Iterator[None]:
        """Hold the claim of `session` for the block. A claim file a killed owner left
        stays as it was when the block leaves the session `untouched` (a resume refused
        before it logged anything): it still tells that the session's server was killed.
        So does the block's own when it leaves the session logged but `unended` (no end
        as its last event: its log could not be written, say): no server serves it, and
        with no file it would read as one whose server cannot be told (a copied log's)."""
        path = self.path_of(session)
        found = os.path.exists(path)
        fd = self._locked(session, path)
        try:
            yield
        finally:
            try:
                if _same_file(fd, path) and not ((found and untouched()) or unended()):
                    os.unlink(path)
                    _remove_if_empty(self.directory)
            finally:
                os.close(fd)

    def _locked(self, session: str, path: str) -> int:
        """A descriptor of the file `path` names, locked; `SessionClaimedError` if another
        holds the lock."""
        while True:
            try:
                os.makedirs(self.directory, exist_ok=True)
            except OSError as error:
                raise self._unusable(error) from error
            try:
                fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o644)
            except FileNotFoundError:  # the release of the last claim removed the directory
                continue
            except OSError as error:
                raise self._unusable(error) from error
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except OSError as error:
                os.close(fd)
                if error.errno in (errno.EWOULDBLOCK, errno.EAGAIN):
                    raise SessionClaimedError(session) from None
                raise
            if _same_file(fd, path):
                return fd
            os.close(fd)  # removed by the release of the claim before this one

    def _unusable(self, error: OSError) -> LogOpenError:
        """The error of a claim that cannot make its file in the directory."""
        where = f"its session claims folder {self.directory}"
        if error.errno in _OUT_OF_DESCRIPTORS:
            who, how = _OUT_OF_DESCRIPTORS[error.errno]
            return LogOpenError(
                self.log,
                f"{who} is out of file descriptors ({error.strerror}), and a session's claim"
                f" in {self.directory} needs one: {how}",
            )
        if os.path.lexists(self.directory) and not os.path.isdir(self.directory):
            return LogOpenError(self.log, f"{where} is a file, not a folder: move it away")
        return LogOpenError(
            self.log, f"{where} cannot be made or written: {error.strerror or error}"
        )


_OUT_OF_DESCRIPTORS = {
    errno.EMFILE: ("this process", "raise its limit (ulimit -n), or serve fewer sessions at once"),
    errno.ENFILE: ("the system", "close files elsewhere, or raise the system's limit"),
}
"""Who ran out of file descriptors, and what its operator can do, by ``errno``: nothing is
wrong with the claims folder then."""


def _locked_inodes() -> set[int] | None:
    """The inodes of the files ``flock``-ed now; None where the system does not list them."""
    try:
        with open("/proc/locks", encoding="ascii", errors="replace") as listing:
            lines = listing.read().splitlines()
    except OSError:
        return None
    locked: set[int] = set()
    for line in lines:
        # "1: FLOCK  ADVISORY  WRITE 11700 fe:00:2400414 0 EOF": the device as the lock sees
        # it may differ from stat's (an overlay), so the inode alone is matched.
        fields = line.split()
        if "FLOCK" in fields and len(fields) > 5:
            inode = fields[5].rpartition(":")[2]
            if inode.isdigit():
                locked.add(int(inode))
    return locked


def _same_file(fd: int, path: str) -> bool:
    """Whether `path` still names the file open as `fd`."""
    try:
        named = os.stat(path)
    except FileNotFoundError:
        return False
    held = os.fstat(fd)
    return (named.st_dev, named.st_ino) == (held.st_dev, held.st_ino)


def _remove_if_empty(directory: str) -> None:
    # Fails when another session's claim file is in it, or another release removed it.
    with contextlib.suppress(OSError):
        os.rmdir(directory)
