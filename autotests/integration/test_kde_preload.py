"""limen-kde preloads the Qt/KF5 libraries of its shim in a background thread after start-up,
only in a KDE session with a display (kde-backend/shim.c): the thread creates no Qt object
(an LD_PRELOADed guard interposes QObject's constructors and reports the thread), KIOWidgets
(whose static constructors create QObjects) waits for the main thread, and the first dialog
still works, and the thread loads no library that the first dialog would not load anyway (its
memory is the first dialog's, paid earlier). Outside a KDE session nothing of Qt is mapped until a
dialog needs it."""

import os
import time

import pytest

import kde_helpers as kh
import limentest

GUARD = os.path.join(limentest.BUILD_DIR, "autotests", "limen-preload-guard.so")


def mapped(pid, lib):
    with open(f"/proc/{pid}/maps") as f:
        return any(lib in line for line in f)


def mapped_libraries(pid):
    with open(f"/proc/{pid}/maps") as f:
        return {line.split()[-1] for line in f if ".so" in line.split()[-1]}


def wait_output(d, text, timeout=20):
    assert limentest.wait_until(lambda: text in d.output(), timeout), d.output()[-3000:]


def open_and_cancel(bus, x, title):
    call = kh.AsyncCall(bus, "FileChooser", "OpenFile", (kh.new_handle(bus), "org.example.App", "", title, {}),
                        "(osssa{sv})")
    x.answer(title, "Escape")
    response, _ = call.wait(30)
    assert response == 1


@pytest.mark.skipif(limentest.SANITIZE, reason="the guard is an LD_PRELOAD; ASan must come first")
def test_preload_in_kde_session_creates_no_qt_object_off_the_main_thread(bus, x):
    d = kh.start_kde_x11(bus, x, XDG_CURRENT_DESKTOP="KDE", LD_PRELOAD=GUARD)
    wait_output(d, "Qt shim preloaded")
    assert mapped(d.pid, "libQt5Widgets.so"), "the preload did not map Qt"
    assert not mapped(d.pid, "libKF5KIOWidgets.so"), "KIOWidgets must wait for the main thread"
    open_and_cancel(bus, x, "After preload")
    out = d.output()
    assert "LIMEN-GUARD: first QObject constructed on the main thread" in out, out[-3000:]
    assert "on the preload thread" not in out, out[-3000:]
    assert "was not created in the main() thread" not in out, out[-3000:]
    assert d.alive()


def test_no_preload_outside_a_kde_session(bus, x):
    d = kh.start_kde_x11(bus, x, XDG_CURRENT_DESKTOP="GNOME")
    bus.call("org.freedesktop.impl.portal.Settings", "ReadAll", ([],), "(as)", dest=kh.KDE_NAME, path=kh.PATH)
    time.sleep(1.5)
    assert "Qt shim preloaded" not in d.output()
    assert not mapped(d.pid, "libQt5Core.so")
    open_and_cancel(bus, x, "Loaded on demand")
    assert mapped(d.pid, "libQt5Core.so")


def test_no_preload_without_a_display_or_when_turned_off(bus, x):
    for env in ({"XDG_CURRENT_DESKTOP": "KDE", "DISPLAY": "", "WAYLAND_DISPLAY": ""},
                dict(x.env(), QT_QPA_PLATFORM="xcb", XDG_CURRENT_DESKTOP="KDE", LIMEN_KDE_PRELOAD="0")):
        d = kh.start_kde(bus, env=env)
        bus.call("org.freedesktop.impl.portal.Settings", "ReadAll", ([],), "(as)", dest=kh.KDE_NAME, path=kh.PATH)
        time.sleep(1.5)
        assert "Qt shim preloaded" not in d.output(), env
        assert not mapped(d.pid, "libQt5Core.so"), env
        d.stop()
        bus.wait_for_name_gone(kh.KDE_NAME)


def test_preload_maps_only_what_the_first_dialog_maps(bus, x):
    """Every library the preload maps (with everything it depends on) is one that the first
    FileChooser of a limen-kde that did not preload maps too: preloading moves the first
    dialog's cost ahead of time and adds none of its own."""
    d = kh.start_kde_x11(bus, x, XDG_CURRENT_DESKTOP="KDE", LIMEN_KDE_PRELOAD="0")
    open_and_cancel(bus, x, "Without preload")
    by_dialog = mapped_libraries(d.pid)
    d.stop()
    bus.wait_for_name_gone(kh.KDE_NAME)
    d = kh.start_kde_x11(bus, x, XDG_CURRENT_DESKTOP="KDE")
    wait_output(d, "Qt shim preloaded")
    preloaded = mapped_libraries(d.pid)
    assert any("libKF5KIOCore.so" in lib for lib in preloaded), sorted(preloaded)
    assert preloaded <= by_dialog, f"preloaded, yet not needed by a first dialog: {sorted(preloaded - by_dialog)}"
