"""limen-kde's ScreenCast, RemoteDesktop and Clipboard on a headless Plasma 5.27 Wayland
session (wayland_session.py: kwin_wayland --virtual, PipeWire, WirePlumber), called over
D-Bus on the impl interfaces as a frontend would. Frames are received by GStreamer's
pipewiresrc; input and clipboard are read in a plain Wayland client (the probe)."""

import os
import time

import pytest

import kde_helpers as kh
import limentest
import wayland_session
from limentest import GLib

APP = "org.example.App"
GREEN = (0x20, 0xc0, 0x40)


@pytest.fixture
def session(bus):
    s = wayland_session.WaylandSession(bus)
    try:
        yield s
    finally:
        s.close()


@pytest.fixture
def kde(session):
    return session.start_kde()


_counter = [0]


def paths(bus):
    _counter[0] += 1
    sender = bus.conn.get_unique_name()[1:].replace(".", "_")
    n = _counter[0]
    return (f"/org/freedesktop/portal/desktop/request/{sender}/r{n}",
            f"/org/freedesktop/portal/desktop/session/{sender}/s{n}")


def impl(bus, iface, method, args, signature, timeout=20000):
    return kh.call_impl(bus, iface, method, args, signature, timeout=timeout)


def create(bus, iface="ScreenCast"):
    handle, session_handle = paths(bus)
    response, results = impl(bus, iface, "CreateSession", (handle, session_handle, APP, {}), "(oosa{sv})")
    assert response == 0 and results["session_id"] == session_handle
    return session_handle


def restore_data(*sources, devices=None):
    payload = {"sources": GLib.Variant("as", list(sources))}
    if devices is not None:
        payload["devices"] = GLib.Variant("u", devices)
    return GLib.Variant("(suv)", ("KDE", 1, GLib.Variant("a{sv}", payload)))


def select_sources(bus, session_handle, **options):
    opts = {k: v for k, v in options.items()}
    return impl(bus, "ScreenCast", "SelectSources", (paths(bus)[0], session_handle, APP, opts), "(oosa{sv})")


def start(bus, session_handle, iface="ScreenCast"):
    return impl(bus, iface, "Start", (paths(bus)[0], session_handle, APP, "", {}), "(oossa{sv})")


def rgb_at(path, x, y):
    r = limentest.subprocess.run(["convert", path, "-format", f"%[fx:int(255*p{{{x},{y}}}.r)] "
                                  f"%[fx:int(255*p{{{x},{y}}}.g)] %[fx:int(255*p{{{x},{y}}}.b)]", "info:"],
                                 capture_output=True, text=True, check=True)
    return tuple(int(v) for v in r.stdout.split())


def test_properties_and_lazy_loading(bus, session, kde):
    # Idle: no Wayland library mapped until someone asks about screen sharing.
    def wayland_libs():
        with open(f"/proc/{kde.pid}/maps") as f:
            return {line.split()[-1] for line in f if "wayland" in line.split()[-1].lower()}
    assert wayland_libs() == set()
    types = bus.get_property(kh.IMPL + "ScreenCast", "AvailableSourceTypes", dest=kh.KDE_NAME, path=kh.PATH)
    assert types == 1 | 2 | 4   # screens, windows (plasma window management), virtual screens (v3)
    assert bus.get_property(kh.IMPL + "ScreenCast", "AvailableCursorModes", dest=kh.KDE_NAME, path=kh.PATH) == 7
    assert bus.get_property(kh.IMPL + "RemoteDesktop", "AvailableDeviceTypes", dest=kh.KDE_NAME, path=kh.PATH) == 7
    assert any("liblimen-kde-wayland" in lib for lib in wayland_libs())


def test_restored_monitor_stream(bus, session, kde):
    """A screen stream from restore data: KWin's node, the screen's geometry, restore data
    back. (--virtual never records into screen streams: frames are tested on a window.)"""
    s = create(bus)
    assert select_sources(bus, s, types=GLib.Variant("u", 1), persist_mode=GLib.Variant("u", 2),
                          restore_data=restore_data("screen:Virtual-0"))[0] == 0
    response, results = start(bus, s)
    assert response == 0, results
    (node, props), = results["streams"]
    assert node > 0
    assert props["size"] == (1280, 800) and props["position"] == (0, 0) and props["source_type"] == 1
    assert props["mapping_id"] == "screen:Virtual-0"
    assert results["persist_mode"] == 2
    assert results["restore_data"] == ("KDE", 1, {"sources": ["screen:Virtual-0"]})
    # A second Start on the same session is refused.
    with pytest.raises(GLib.Error, match="already started"):
        start(bus, s)
    # Closing the session ends KWin's node.
    bus.call(kh.IMPL + "Session", "Close", dest=kh.KDE_NAME, path=s)
    assert limentest.wait_until(lambda: "zkde" not in kde.output() and node_gone(session, node), 10)


def node_gone(session, node):
    r = limentest.subprocess.run(["pw-cli", "info", str(node)], env=session.bus.env, capture_output=True, text=True)
    return "kwin_wayland" not in r.stdout


def test_window_stream_delivers_frames(bus, session, kde):
    probe = session.probe("Green probe", GREEN)
    win = session.wait_window("Green probe")
    s = create(bus)
    assert select_sources(bus, s, types=GLib.Variant("u", 2), persist_mode=GLib.Variant("u", 1),
                          restore_data=restore_data("window:" + win["uuid"]))[0] == 0
    response, results = start(bus, s)
    assert response == 0, results
    (node, props), = results["streams"]
    assert props["source_type"] == 2
    frame = session.consume(node, count=3)
    assert frame, "no frame from KWin's window stream"
    w, h = kh.png_info(frame)[:2]
    assert (w, h) == (400, 300), (w, h)
    assert rgb_at(frame, 200, 150) == GREEN
    assert rgb_at(frame, 5, 5) == GREEN
    probe.close()


def test_restore_data_of_a_gone_window_is_refused(bus, session, kde):
    s = create(bus)
    assert select_sources(bus, s, types=GLib.Variant("u", 2),
                          restore_data=restore_data("window:{00000000-0000-0000-0000-000000000000}"))[0] == 0
    # Restore data naming a window that does not exist: KWin fails the stream, Start answers 2.
    response, results = start(bus, s)
    assert response == 2
    assert kde.alive()


@pytest.mark.parametrize("data", [
    ("GNOME", 1, {"sources": ["screen:Virtual-0"]}),
    ("KDE", 9, {"sources": ["screen:Virtual-0"]}),
    ("KDE", 1, {"sources": ["screen:HDMI-9"]}),
    ("KDE", 1, {"sources": ["nonsense"]}),
    ("KDE", 1, {}),
])
def test_unusable_restore_data_asks(bus, session, kde, data):
    """Unusable restore data is ignored: the picker opens instead (closed here)."""
    vendor, version, payload = data
    s = create(bus)
    rd = GLib.Variant("(suv)", (vendor, version, GLib.Variant("a{sv}", {k: GLib.Variant("as", v)
                                                                        for k, v in payload.items()})))
    assert select_sources(bus, s, restore_data=rd)[0] == 0
    handle = paths(bus)[0]
    call = kh.AsyncCall(bus, "ScreenCast", "Start", (handle, s, APP, "", {}), "(oossa{sv})")
    session.wait_window("Screen Sharing")
    kh.close_request(bus, handle)
    assert call.wait()[0] == 2
    assert kde.alive()
