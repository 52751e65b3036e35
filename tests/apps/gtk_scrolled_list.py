"""A GTK 3 window holding a scrolled list of 30 rows, of which a few fit on the screen
(run with the system python3 and gi, as the atspi adapter's live tests do)."""

from __future__ import annotations

import signal

import gi

gi.require_version("Gtk", "3.0")
from gi.repository import GLib, Gtk  # noqa: E402


def main() -> None:
    window = Gtk.Window(title="semledger scrolled list")
    window.set_default_size(300, 240)
    window.connect("destroy", Gtk.main_quit)
    rows = Gtk.ListBox()
    for index in range(30):
        rows.add(Gtk.Label(label=f"Row {index}"))
    scroller = Gtk.ScrolledWindow()
    scroller.get_accessible().set_accessible_id("scroller")
    scroller.set_size_request(-1, 100)
    scroller.add(rows)
    box = Gtk.Box(orientation=Gtk.Orientation.VERTICAL)
    box.add(Gtk.Button(label="Above"))
    box.pack_start(scroller, True, True, 0)
    window.add(box)
    window.show_all()
    GLib.unix_signal_add(GLib.PRIORITY_DEFAULT, signal.SIGTERM, Gtk.main_quit)
    Gtk.main()


if __name__ == "__main__":
    main()
