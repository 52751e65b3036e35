"""A GTK 3 window and a non-modal message dialog over it, a top-level ``alert`` window
that does not become the active one; the window's status label says whether it got an
Escape (run with the system python3 and gi, as the atspi adapter's live tests do)."""

from __future__ import annotations

import signal

import gi

gi.require_version("Gtk", "3.0")
gi.require_version("Gdk", "3.0")
from gi.repository import Gdk, GLib, Gtk  # noqa: E402


def main() -> None:
    window = Gtk.Window(title="semledger alert")
    window.connect("destroy", Gtk.main_quit)
    status = Gtk.Label(label="Ready")
    status.get_accessible().set_accessible_id("status")
    window.add(status)

    def on_key(_window: Gtk.Window, event: Gdk.EventKey) -> bool:
        if event.keyval == Gdk.KEY_Escape:
            status.set_text("the main window got Escape")
        return False

    window.connect("key-press-event", on_key)
    window.show_all()
    dialog = Gtk.MessageDialog(
        transient_for=window, modal=False, buttons=Gtk.ButtonsType.OK, text="Careful"
    )
    dialog.get_accessible().set_accessible_id("alert")
    dialog.connect("response", lambda d, _r: d.destroy())
    dialog.show_all()
    GLib.unix_signal_add(GLib.PRIORITY_DEFAULT, signal.SIGTERM, Gtk.main_quit)
    Gtk.main()


if __name__ == "__main__":
    main()
