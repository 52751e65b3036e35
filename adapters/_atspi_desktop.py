"""A private Linux desktop for driving GTK applications over AT-SPI without a screen.

``PrivateDesktop`` starts an X server (Xvfb, on a display number it picks itself with
``-displayfd``), a D-Bus session bus of its own and the AT-SPI bus launcher on it, and
tears all of them down again. Applications started with ``desktop.env`` export their
accessibility tree to that private registry, so tests, the conformance suite, the bench
and the re-recording script never touch (or depend on) the machine's own desktop.

GTK 3 exports its tree as soon as an accessibility bus is reachable: the ATK bridge is
built into GTK 3 and only ``NO_AT_BRIDGE=1`` turns it off (``GTK_A11Y`` is GTK 4's switch),
so both are removed from the environment and nothing else is needed.
"""

from __future__ import annotations

import contextlib
import os
import select
import shutil
import signal
import subprocess
import tempfile
import time
from collections.abc import Iterator, Mapping
from pathlib import Path
from types import TracebackType
from typing import Final

from ._errors import SessionError

LIBEXEC: Final = Path("/usr/libexec")
BUS_LAUNCHER: Final = LIBEXEC / "at-spi-bus-launcher"
REGISTRYD: Final = LIBEXEC / "at-spi2-registryd"
SYSTEM_PYTHON: Final = "/usr/bin/python3"
WIDGET_FACTORY: Final = "/usr/bin/gtk3-widget-factory"
FIXTURES: Final = Path(__file__).resolve().parent / "fixtures"
GTK_FIXTURE: Final = FIXTURES / "gtk_fixture.py"

REQUIRED: Final[Mapping[str, str]] = {
    "Xvfb": "xvfb",
    "dbus-daemon": "dbus-x11",
    str(BUS_LAUNCHER): "at-spi2-core",
    str(REGISTRYD): "at-spi2-core",
}
"""Binary -> the Debian package that ships it."""


class DesktopUnavailableError(SessionError):
    """Raised when the private desktop cannot start: a binary is missing (the message
    names the Debian package; ``scripts/test.sh`` installs them all) or a part of it did
    not come up in time."""


def missing_binaries(extra: Mapping[str, str] | None = None) -> list[str]:
    """``binary (package)`` for each required binary that is not installed."""
    wanted = {**REQUIRED, **(extra or {})}
    out = []
    for binary, package in wanted.items():
        found = Path(binary).exists() if binary.startswith("/") else shutil.which(binary)
        if not found:
            out.append(f"{binary} (Debian package {package})")
    return out


def require(extra: Mapping[str, str] | None = None) -> None:
    """Raise DesktopUnavailableError naming every missing binary."""
    missing = missing_binaries(extra)
    if missing:
        raise DesktopUnavailableError(
            "the AT-SPI desktop needs "
            + ", ".join(missing)
            + "; scripts/test.sh installs them (apt-get install)"
        )


def require_gtk_python() -> None:
    """Raise DesktopUnavailableError when the system python3 cannot import GTK 3 through gi."""
    probe = "import gi; gi.require_version('Gtk', '3.0'); from gi.repository import Gtk"
    try:
        subprocess.run([SYSTEM_PYTHON, "-c", probe], check=True, capture_output=True, timeout=30)
    except (OSError, subprocess.SubprocessError) as exc:
        raise DesktopUnavailableError(
            f"{SYSTEM_PYTHON} cannot import GTK 3 (Debian packages python3-gi, gir1.2-gtk-3.0);"
            " scripts/test.sh installs them"
        ) from exc


def _read_line(stream: int, timeout: float, what: str) -> str:
    deadline = time.monotonic() + timeout
    data = b""
    while b"\n" not in data:
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            raise DesktopUnavailableError(f"{what} did not start within {timeout:.0f}s")
        ready, _, _ = select.select([stream], [], [], remaining)
        if not ready:
            continue
        chunk = os.read(stream, 4096)
        if not chunk:
            raise DesktopUnavailableError(f"{what} exited before it was ready")
        data += chunk
    return data.split(b"\n", 1)[0].decode().strip()


def _stop(process: subprocess.Popen[bytes] | None, group: bool = False) -> None:
    if process is None:
        return
    for sig, wait in ((signal.SIGTERM, 3.0), (signal.SIGKILL, 3.0)):
        if process.poll() is not None and not group:
            break
        with contextlib.suppress(ProcessLookupError, PermissionError):
            if group:
                os.killpg(process.pid, sig)
            else:
                process.send_signal(sig)
        with contextlib.suppress(subprocess.TimeoutExpired):
            process.wait(wait)
            if not group:
                break
        if group and not _group_alive(process.pid):
            break


def _group_alive(pgid: int) -> bool:
    try:
        os.killpg(pgid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def start_session_bus(
    env: Mapping[str, str], timeout: float = 20.0
) -> tuple[subprocess.Popen[bytes], str]:
    """A new session bus with nothing on it, as ``dbus-run-session`` starts one: its daemon
    (stopped if it does not say its address within `timeout` seconds) and its address."""
    daemon = subprocess.Popen(
        ["dbus-daemon", "--session", "--nofork", "--nopidfile", "--print-address=1"],
        env=env,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    assert daemon.stdout is not None
    try:
        return daemon, _read_line(daemon.stdout.fileno(), timeout, "dbus-daemon")
    except BaseException:
        _stop(daemon)
        daemon.stdout.close()
        raise


class PrivateDesktop:
    """Xvfb + a private session bus + the AT-SPI registry; a context manager.

    ``env`` is the environment an application needs to show up in this desktop's
    registry; ``bus_address`` is the session bus the adapter finds the accessibility bus
    on (``create_surface({"adapter": "atspi", **desktop.surface_config})``)."""

    def __init__(self, *, width: int = 1280, height: int = 1024, bus: bool = True) -> None:
        self._size = f"{width}x{height}x24"
        self._bus = bus
        """False: the display alone, as under ``dbus-run-session``, which brings its own
        session bus and nothing on it (``env`` then names no bus)."""
        self._tmp: Path | None = None
        self._xvfb: subprocess.Popen[bytes] | None = None
        self._dbus: subprocess.Popen[bytes] | None = None
        self._launcher: subprocess.Popen[bytes] | None = None
        self.display = ""
        self.bus_address = ""
        self.env: dict[str, str] = {}

    @property
    def surface_config(self) -> dict[str, object]:
        """The adapter config that points the atspi adapter at this desktop."""
        return {"session_bus": self.bus_address, "env": dict(self.env)}

    def start(self, timeout: float = 20.0) -> PrivateDesktop:
        require()
        self._tmp = Path(tempfile.mkdtemp(prefix="semledger-desktop-"))
        self._tmp.chmod(0o700)
        try:
            self._start_xvfb(timeout)
            base = {
                k: v
                for k, v in os.environ.items()
                if k not in {"NO_AT_BRIDGE", "GTK_A11Y", "WAYLAND_DISPLAY", "AT_SPI_BUS"}
            }
            base.update(
                DISPLAY=self.display,
                XDG_RUNTIME_DIR=str(self._tmp),
                GDK_BACKEND="x11",
                GSETTINGS_BACKEND="memory",
            )
            base.pop("DBUS_SESSION_BUS_ADDRESS", None)
            self.env = base
            if self._bus:
                self._start_dbus(base, timeout)
                base["DBUS_SESSION_BUS_ADDRESS"] = self.bus_address
                self._start_launcher(timeout)
        except BaseException:
            self.stop()
            raise
        return self

    def _start_xvfb(self, timeout: float) -> None:
        read_end, write_end = os.pipe()
        try:
            self._xvfb = subprocess.Popen(
                [
                    "Xvfb",
                    "-displayfd",
                    str(write_end),
                    "-screen",
                    "0",
                    self._size,
                    "-nolisten",
                    "tcp",
                    "-noreset",
                ],
                pass_fds=(write_end,),
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
                start_new_session=True,
            )
            os.close(write_end)
            write_end = -1
            self.display = ":" + _read_line(read_end, timeout, "Xvfb")
        finally:
            os.close(read_end)
            if write_end >= 0:
                os.close(write_end)

    def _start_dbus(self, env: dict[str, str], timeout: float) -> None:
        self._dbus, self.bus_address = start_session_bus(env, timeout)

    def _start_launcher(self, timeout: float) -> None:
        from jeepney import DBusAddress, new_method_call
        from jeepney.io.blocking import open_dbus_connection

        self._launcher = subprocess.Popen(
            [str(BUS_LAUNCHER), "--launch-immediately"],
            env=self.env,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=True,
        )
        bus = DBusAddress("/org/a11y/bus", bus_name="org.a11y.Bus", interface="org.a11y.Bus")
        deadline = time.monotonic() + timeout
        with contextlib.closing(open_dbus_connection(self.bus_address)) as conn:
            while True:
                if self._launcher.poll() is not None:
                    raise DesktopUnavailableError("at-spi-bus-launcher exited before it was ready")
                reply = conn.send_and_get_reply(new_method_call(bus, "GetAddress"), timeout=5)
                if reply.header.message_type.name == "method_return" and reply.body[0]:
                    return
                if time.monotonic() > deadline:
                    raise DesktopUnavailableError("the AT-SPI bus did not come up in time")
                time.sleep(0.05)

    def stop(self) -> None:
        """Stop everything this desktop started (safe to call twice)."""
        _stop(self._launcher, group=True)
        _stop(self._dbus)
        _stop(self._xvfb)
        for process in (self._launcher, self._dbus, self._xvfb):
            if process is not None and process.stdout is not None:
                process.stdout.close()
        self._launcher = self._dbus = self._xvfb = None
        if self._tmp is not None:
            shutil.rmtree(self._tmp, ignore_errors=True)
            self._tmp = None

    def __enter__(self) -> PrivateDesktop:
        return self.start()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()


@contextlib.contextmanager
def private_desktop() -> Iterator[PrivateDesktop]:
    """``with private_desktop() as desktop:`` a started PrivateDesktop, stopped after."""
    with PrivateDesktop() as desktop:
        yield desktop
