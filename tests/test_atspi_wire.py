"""The atspi adapter's D-Bus side: its fast marshaller writes exactly what jeepney would,
and the live backend makes of replies what they say."""

from __future__ import annotations

from typing import Any

import pytest
import trio
import trio.testing
from hypothesis import given
from hypothesis import strategies as st
from jeepney import DBusAddress, new_method_call
from jeepney.low_level import Parser

from semledger.adapters._atspi_wire import method_call

paths = st.from_regex(r"/[a-z0-9_]{1,12}(/[a-z0-9_]{1,12}){0,4}", fullmatch=True)
names = st.from_regex(r"[a-z][a-z0-9]{0,10}(\.[a-z][a-z0-9]{0,10}){1,3}", fullmatch=True)
bodies = st.one_of(
    st.tuples(st.just(""), st.just(())),
    st.tuples(st.just("i"), st.tuples(st.integers(-(2**31), 2**31 - 1))),
    st.tuples(st.just("u"), st.tuples(st.integers(0, 2**32 - 1))),
    st.tuples(st.just("ss"), st.tuples(st.text(), st.text())),
    st.tuples(st.just("isi"), st.tuples(st.integers(0, 99), st.text(), st.integers(0, 99))),
    st.tuples(
        st.just("ssv"),
        st.tuples(st.text(), st.text(), st.tuples(st.just("d"), st.floats(allow_nan=False))),
    ),
)


@given(
    st.integers(1, 2**32 - 1),
    paths,
    names,
    names,
    st.from_regex(r"[A-Z][a-z]{1,12}", fullmatch=True),
    bodies,
)
def test_method_call_bytes_equal_jeepneys(
    serial: int,
    path: str,
    destination: str,
    interface: str,
    member: str,
    body: tuple[str, tuple[object, ...]],
) -> None:
    signature, values = body
    ours = method_call(serial, path, destination, interface, member, signature, values)
    expected = new_method_call(
        DBusAddress(path, destination, interface), member, signature or None, values
    ).serialise(serial)
    assert ours == expected
    parser = Parser()
    parser.add_data(ours)
    message = parser.get_next_message()
    assert message is not None
    assert message.body == values


def test_an_unsupported_signature_is_refused() -> None:
    with pytest.raises(ValueError, match="unsupported"):
        method_call(1, "/a", "a.b", "a.b", "M", "as", (["x"],))


async def test_a_tree_rows_level_comes_from_the_rows_above_it_read_if_scrolled_away() -> None:
    """GTK gives a tree's cells as one flat list with each row's ``node-child-of``; a row
    whose parent row is scrolled away (not showing, so not read with the snapshot) has
    that parent's relations read, and a cycle ends instead of looping."""
    from jeepney import new_method_return

    from semledger.adapters._atspi_dbus import NODE_CHILD_OF, LiveBackend

    above = {"/a/deep": "/a/top", "/a/top": "/a/table"}

    class Bus:
        def __init__(self) -> None:
            self.asked: list[str] = []

        async def call_many(self, calls: list[tuple[str, ...]]) -> list[object]:
            replies = []
            for path, *_rest in calls:
                self.asked.append(path)
                call = new_method_call(DBusAddress(path, ":1.1", "org.a11y.atspi.Accessible"), "X")
                relation = [(NODE_CHILD_OF, [(":1.1", above[path])])]
                replies.append(new_method_return(call, "a(ua(so))", (relation,)))
            return replies

    bus = Bus()
    backend = LiveBackend(bus)  # type: ignore[arg-type]
    rows = {"/a/top", "/a/deep", "/a/shown"}
    levels = await backend._levels(":1.1", {"/a/shown": "/a/deep"}, rows)
    assert levels == {"/a/shown": 3, "/a/deep": 2, "/a/top": 1}
    assert bus.asked == ["/a/deep", "/a/top"]  # a level per round trip
    cycle = await backend._levels(":1.1", {"/a/x": "/a/y", "/a/y": "/a/x"}, {"/a/x", "/a/y"})
    assert set(cycle) == {"/a/x", "/a/y"}


class _BusEnd:
    """The bus's end of an `A11yBus` connection, in memory: it answers each call with its
    member's name, or holds the answers back (an application that is busy), or takes part
    of a write and no more (a bus that stopped reading)."""

    def __init__(self) -> None:
        from itertools import count

        self.socket = self
        self.parser = Parser()
        self.outgoing_serial = count(1)
        self.holding = False
        self.takes: int | None = None
        self._calls = Parser()
        self._held: list[Any] = []
        self._replies = bytearray()
        self._serials = count(1)

    async def send(self, data: memoryview) -> int:
        await trio.lowlevel.checkpoint()
        if self.takes == 0:
            await trio.sleep_forever()
        taken = len(data) if self.takes is None else min(self.takes, len(data))
        if self.takes is not None:
            self.takes -= taken
        self._calls.add_data(bytes(data[:taken]))
        while (call := self._calls.get_next_message()) is not None:
            self._held.append(call)
        if not self.holding:
            self.answer_held()
        return taken

    def answer_held(self) -> None:
        from jeepney import HeaderFields, new_method_return

        for call in self._held:
            member = call.header.fields[HeaderFields.member]
            reply = new_method_return(call, "s", (member,))
            self._replies += reply.serialise(next(self._serials))
        self._held = []

    async def recv(self, size: int) -> bytes:
        while not self._replies:
            await trio.sleep(0.01)
        data = bytes(self._replies[:size])
        del self._replies[:size]
        return data


def _member_call(member: str) -> tuple[str, str, str, str, str, tuple[object, ...]]:
    return ("/a", ":1.1", "org.a11y.atspi.Accessible", member, "", ())


async def test_a_call_after_a_timed_out_one_gets_its_own_reply_not_the_late_one(
    autojump_clock: trio.testing.MockClock,
) -> None:
    """An application busy past the timeout is a timeout, not a lost connection: once it
    answers again the next call succeeds, and the late reply to the call that timed out
    (it arrives first) is dropped, never taken as the next call's answer."""
    from semledger.adapters._atspi_dbus import A11yBus
    from semledger.adapters._errors import SurfaceTimeoutError

    end = _BusEnd()
    bus = A11yBus(end, timeout=3)  # type: ignore[arg-type]
    end.holding = True
    with pytest.raises(SurfaceTimeoutError, match="did not answer 1 AT-SPI calls within 3s"):
        await bus.call(_member_call("Slow"))
    end.holding = False
    end.answer_held()
    assert (await bus.call(_member_call("Next"))).body == ("Next",)
    replies = await bus.call_many([_member_call("One"), _member_call("Two")])
    assert [reply.body for reply in replies] == [("One",), ("Two",)]


async def test_a_call_cut_off_half_written_by_the_timeout_ends_the_connection(
    autojump_clock: trio.testing.MockClock,
) -> None:
    """A timeout partway through a write leaves half a message on the bus, which would
    read on into the next one: the calls after say so (a SessionError, not the
    application's being gone), and write nothing more."""
    from semledger.adapters._atspi_dbus import A11yBus
    from semledger.adapters._errors import SessionError, SurfaceGoneError, SurfaceTimeoutError

    end = _BusEnd()
    bus = A11yBus(end, timeout=3)  # type: ignore[arg-type]
    end.takes = 10
    with pytest.raises(SurfaceTimeoutError, match="within 3s"):
        await bus.call(_member_call("Cut"))
    with pytest.raises(SessionError, match="cut off half written") as raised:
        await bus.call(_member_call("Next"))
    assert not isinstance(raised.value, SurfaceGoneError)
