"""limen-kde's ScreenCast, RemoteDesktop and Clipboard on a headless Plasma 5.27 Wayland
session (wayland_session.py: kwin_wayland --virtual, PipeWire, WirePlumber), called over
D-Bus on the impl interfaces as a frontend would. Frames are received by GStreamer's
pipewiresrc; input and clipboard are read in a plain Wayland client (the probe)."""

import os
import signal
import time

import pytest

import kde_helpers as kh
import limentest
from limentest import GLib

APP = "org.example.App"
GREEN = (0x20, 0xc0, 0x40)


@pytest.fixture
def kde(session):
    return session.start_kde()


def test_x11_session_has_no_screen_sharing(bus):
    """No Wayland display (an X11 Plasma session): nothing to share, Start says why at once."""
    kde = kh.start_kde(bus, env={"WAYLAND_DISPLAY": ""})
    assert bus.get_property(kh.IMPL + "ScreenCast", "AvailableSourceTypes", dest=kh.KDE_NAME, path=kh.PATH) == 0
    assert bus.get_property(kh.IMPL + "RemoteDesktop", "AvailableDeviceTypes", dest=kh.KDE_NAME, path=kh.PATH) == 0
    s = create(bus)
    with pytest.raises(GLib.Error, match="Plasma Wayland session; on X11 KWin offers no screen-cast protocol"):
        select_sources(bus, s)
    t0 = time.monotonic()
    with pytest.raises(GLib.Error, match="Plasma Wayland session; on X11 KWin offers no screen-cast protocol"):
        start(bus, s)
    assert time.monotonic() - t0 < 2
    r = create(bus, "RemoteDesktop")
    with pytest.raises(GLib.Error, match="Wayland"):
        start(bus, r, "RemoteDesktop")
    assert kde.alive()


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


def start(bus, session_handle, iface="ScreenCast", timeout=20000):
    return impl(bus, iface, "Start", (paths(bus)[0], session_handle, APP, "", {}), "(oossa{sv})", timeout=timeout)


def rgb_at(path, x, y):
    r = limentest.subprocess.run(["convert", path, "-format", f"%[fx:int(255*p{{{x},{y}}}.r)] "
                                  f"%[fx:int(255*p{{{x},{y}}}.g)] %[fx:int(255*p{{{x},{y}}}.b)]", "info:"],
                                 capture_output=True, text=True, check=True)
    return tuple(int(v) for v in r.stdout.split())


def test_properties_and_lazy_loading(bus, session, kde):
    # Idle: no Wayland library mapped until someone asks for screen sharing. Reading the
    # properties (every frontend does at start-up) looks at KWin's globals and unloads the
    # module again.
    def wayland_libs():
        with open(f"/proc/{kde.pid}/maps") as f:
            return {line.split()[-1] for line in f if "wayland" in line.split()[-1].lower()}
    assert wayland_libs() == set()
    types = bus.get_property(kh.IMPL + "ScreenCast", "AvailableSourceTypes", dest=kh.KDE_NAME, path=kh.PATH)
    assert types == 1 | 2 | 4   # screens, windows (plasma window management), virtual screens (v3)
    assert bus.get_property(kh.IMPL + "ScreenCast", "AvailableCursorModes", dest=kh.KDE_NAME, path=kh.PATH) == 7
    assert bus.get_property(kh.IMPL + "RemoteDesktop", "AvailableDeviceTypes", dest=kh.KDE_NAME, path=kh.PATH) == 7
    assert not any("liblimen-kde-wayland" in lib for lib in wayland_libs()), wayland_libs()
    assert "module unloaded again" in kde.output()
    # The first stream loads it for good.
    s = create(bus)
    assert select_sources(bus, s, types=GLib.Variant("u", 1), persist_mode=GLib.Variant("u", 2),
                          restore_data=restore_data("screen:Virtual-0"))[0] == 0
    assert start(bus, s)[0] == 0
    assert any("liblimen-kde-wayland" in lib for lib in wayland_libs())
    assert bus.get_property(kh.IMPL + "ScreenCast", "AvailableSourceTypes", dest=kh.KDE_NAME, path=kh.PATH) == types


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


def test_a_compositor_that_never_makes_the_stream(bus, session, kde):
    """KWin never answering a stream request (here: stopped with SIGSTOP) does not leave
    Start open: limen-kde answers 2 after its deadline and keeps serving."""
    s = create(bus)
    assert select_sources(bus, s, types=GLib.Variant("u", 1), persist_mode=GLib.Variant("u", 2),
                          restore_data=restore_data("screen:Virtual-0"))[0] == 0
    os.kill(session.kwin.pid, signal.SIGSTOP)
    try:
        t0 = time.monotonic()
        assert start(bus, s, timeout=30000)[0] == 2
        assert 9 < time.monotonic() - t0 < 15
    finally:
        os.kill(session.kwin.pid, signal.SIGCONT)
    assert "did not make the stream within 10 s" in kde.output()
    s2 = create(bus)
    assert select_sources(bus, s2, types=GLib.Variant("u", 1), persist_mode=GLib.Variant("u", 2),
                          restore_data=restore_data("screen:Virtual-0"))[0] == 0
    assert start(bus, s2)[0] == 0
    assert kde.alive()


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
    """Unusable restore data is ignored: the picker opens instead (closed here, by the
    app: it leaves the screen with no input from anyone)."""
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
    assert_gone_without_input(session, "Screen Sharing")
    assert kde.alive()


# ---- RemoteDesktop -------------------------------------------------------------------

KEY_A = 30
BTN_LEFT = 0x110


def rd_start(bus, devices=3, sources=None, clipboard=False):
    """A remote-desktop session started from restore data (no dialog): @devices granted,
    plus screen-cast @sources on the same session."""
    s = create(bus, "RemoteDesktop")
    assert impl(bus, "RemoteDesktop", "SelectDevices",
                (paths(bus)[0], s, APP, {"types": GLib.Variant("u", devices), "persist_mode": GLib.Variant("u", 2),
                                         "restore_data": restore_data(devices=devices)}), "(oosa{sv})")[0] == 0
    if sources:
        assert select_sources(bus, s, types=GLib.Variant("u", 1), restore_data=restore_data(*sources))[0] == 0
    if clipboard:
        bus.call(kh.IMPL + "Clipboard", "RequestClipboard", (s, {}), "(oa{sv})", dest=kh.KDE_NAME, path=kh.PATH)
    response, results = start(bus, s, "RemoteDesktop")
    assert response == 0, results
    assert results["devices"] == devices
    return s, results


def notify(bus, method, signature, *args):
    return bus.call(kh.IMPL + "RemoteDesktop", method, args, signature, dest=kh.KDE_NAME, path=kh.PATH)


def wait_pointer(probe, x, y, timeout=10):
    """The probe reports the pointer at (@x, @y) of its surface (±1) within @timeout."""
    def there():
        probe.drain(0.1)
        return any(l.startswith(("ENTER ", "MOTION ")) and all(abs(int(v) - w) <= 1 for v, w in
                                                                zip(l.split()[1:], (x, y))) for l in probe.seen)
    return limentest.wait_until(there, timeout)


def test_fake_input_reaches_a_wayland_window(bus, session, kde):
    # The probe first: a client that maps while limen-kde's fake-input device is being
    # added to KWin's seat may never get keyboard focus (seen on 5.27.5).
    probe = session.probe("Input probe", GREEN)
    probe.wait_for("FOCUS")
    win = session.wait_window("Input probe")
    s, results = rd_start(bus, sources=["screen:Virtual-0"])
    (node, props), = results["streams"]
    # Absolute motion in the stream's coordinates lands at the same place in the window.
    x, y = win["x"] + 60, win["y"] + 70
    notify(bus, "NotifyPointerMotionAbsolute", "(oa{sv}udd)", s, {}, node, float(x), float(y))
    # The pointer enters the window there (or moves within it, if it was inside): the
    # position within the surface (no server-side frame for this client).
    assert wait_pointer(probe, 60, 70), (probe.seen, win)
    # Relative motion.
    notify(bus, "NotifyPointerMotion", "(oa{sv}dd)", s, {}, 10.0, 5.0)
    assert wait_pointer(probe, 70, 75), probe.seen
    # A click and a key press.
    notify(bus, "NotifyPointerButton", "(oa{sv}iu)", s, {}, BTN_LEFT, 1)
    notify(bus, "NotifyPointerButton", "(oa{sv}iu)", s, {}, BTN_LEFT, 0)
    assert probe.wait_for("BUTTON ") == f"BUTTON {BTN_LEFT} 1"
    assert probe.wait_for("BUTTON ") == f"BUTTON {BTN_LEFT} 0"
    notify(bus, "NotifyKeyboardKeycode", "(oa{sv}iu)", s, {}, KEY_A, 1)
    notify(bus, "NotifyKeyboardKeycode", "(oa{sv}iu)", s, {}, KEY_A, 0)
    assert probe.wait_for("KEY ") == f"KEY {KEY_A} 1"
    assert probe.wait_for("KEY ") == f"KEY {KEY_A} 0"
    # Keysyms through KWin's own keymap (us): "A" is Shift+a.
    notify(bus, "NotifyKeyboardKeysym", "(oa{sv}iu)", s, {}, 0x41, 1)
    notify(bus, "NotifyKeyboardKeysym", "(oa{sv}iu)", s, {}, 0x41, 0)
    assert [probe.wait_for("KEY ") for _ in range(4)] == ["KEY 42 1", f"KEY {KEY_A} 1", f"KEY {KEY_A} 0", "KEY 42 0"]
    with pytest.raises(GLib.Error, match="No key of the keyboard layout"):
        notify(bus, "NotifyKeyboardKeysym", "(oa{sv}iu)", s, {}, 0x1234567, 1)


def test_notify_is_refused_when_not_allowed(bus, session, kde):
    # Before Start.
    s = create(bus, "RemoteDesktop")
    with pytest.raises(GLib.Error, match="not started"):
        notify(bus, "NotifyPointerMotion", "(oa{sv}dd)", s, {}, 1.0, 1.0)
    # An ungranted device (keyboard only granted: no pointer).
    s2, _ = rd_start(bus, devices=1)
    with pytest.raises(GLib.Error, match="Pointer access was not granted"):
        notify(bus, "NotifyPointerMotion", "(oa{sv}dd)", s2, {}, 1.0, 1.0)
    with pytest.raises(GLib.Error, match="InvalidArgument"):
        notify(bus, "NotifyKeyboardKeycode", "(oa{sv}iu)", s2, {}, -5, 1)
    # No stream with that node; non-finite numbers.
    s3, _ = rd_start(bus, devices=2)
    with pytest.raises(GLib.Error, match="No stream"):
        notify(bus, "NotifyPointerMotionAbsolute", "(oa{sv}udd)", s3, {}, 12345, 1.0, 1.0)
    with pytest.raises(GLib.Error, match="finite"):
        notify(bus, "NotifyPointerMotion", "(oa{sv}dd)", s3, {}, float("nan"), 1.0)
    # After Close; and a session of someone else's handle.
    bus.call(kh.IMPL + "Session", "Close", dest=kh.KDE_NAME, path=s3)
    with pytest.raises(GLib.Error, match="NotFound"):
        notify(bus, "NotifyPointerMotion", "(oa{sv}dd)", s3, {}, 1.0, 1.0)
    other = bus.new_connection()
    with pytest.raises(GLib.Error, match="NotFound"):
        bus.call(kh.IMPL + "RemoteDesktop", "NotifyPointerMotion", (s2, {}, 1.0, 1.0), "(oa{sv}dd)",
                 dest=kh.KDE_NAME, path=kh.PATH, conn=other)
    # EIS: KWin 5.27 has none.
    with pytest.raises(GLib.Error, match="NotSupported"):
        bus.call(kh.IMPL + "RemoteDesktop", "ConnectToEIS", (s2, APP, {}), "(osa{sv})", dest=kh.KDE_NAME,
                 path=kh.PATH)
    assert kde.alive()


# ---- Clipboard ----------------------------------------------------------------------

TEXT = "text/plain;charset=utf-8"


def call_fd(bus, method, args, signature):
    """A Clipboard method answering an fd: the fd (ours to close)."""
    r, fdlist = bus.conn.call_with_unix_fd_list_sync(kh.KDE_NAME, kh.PATH, kh.IMPL + "Clipboard", method,
                                                     GLib.Variant(signature, args), None, 0, 10000, None, None)
    # steal: a copy left in the list would keep the pipe open, and the reader waiting.
    fds = fdlist.steal_fds()
    index = r.unpack()[0]
    for i, fd in enumerate(fds):
        if i != index:
            os.close(fd)
    return fds[index]


def test_clipboard_both_ways(bus, session, kde):
    signals = []
    bus.conn.signal_subscribe(kh.KDE_NAME, kh.IMPL + "Clipboard", None, kh.PATH, None, 0,
                              lambda c, snd, p, i, name, params: signals.append((name, params.unpack())))
    probe = session.probe("Clipboard probe", GREEN)
    probe.wait_for("FOCUS")
    s, results = rd_start(bus, clipboard=True)
    assert results["clipboard_enabled"] is True
    # An app copies: the session is told, and reads it.
    probe.command("copy from the probe")
    probe.wait_for("COPIED")
    assert limentest.wait_until(lambda: (limentest.pump(0.1), any(
        n == "SelectionOwnerChanged" and TEXT in p[1].get("mime_types", []) for n, p in signals))[1], 10), signals
    changed = [p for n, p in signals if n == "SelectionOwnerChanged"][-1]
    assert changed[0] == s and changed[1]["session_is_owner"] is False
    fd = call_fd(bus, "SelectionRead", (s, TEXT), "(os)")
    data = b""
    with os.fdopen(fd, "rb") as f:
        data = f.read()
    assert data == b"from the probe"
    # The session owns the clipboard; the app pastes; the session writes on request.
    bus.call(kh.IMPL + "Clipboard", "SetSelection", (s, {"mime_types": GLib.Variant("as", [TEXT])}), "(oa{sv})",
             dest=kh.KDE_NAME, path=kh.PATH)
    assert limentest.wait_until(lambda: (limentest.pump(0.1), any(
        n == "SelectionOwnerChanged" and p[1]["session_is_owner"] for n, p in signals))[1], 10), signals
    probe.command("paste")
    assert limentest.wait_until(lambda: (limentest.pump(0.1), any(n == "SelectionTransfer" for n, _ in signals))[1],
                                10), signals
    (session_handle, mime, serial), = [p for n, p in signals if n == "SelectionTransfer"]
    assert session_handle == s and mime == TEXT and serial >= 1
    fd = call_fd(bus, "SelectionWrite", (s, serial), "(ou)")
    with os.fdopen(fd, "wb") as f:
        f.write(b"from the portal")
    bus.call(kh.IMPL + "Clipboard", "SelectionWriteDone", (s, serial, True), "(oub)", dest=kh.KDE_NAME, path=kh.PATH)
    assert probe.wait_for("PASTE") == "PASTE from the portal"
    # A serial twice, bad types, and a session without the clipboard are refused.
    with pytest.raises(GLib.Error, match="serial"):
        call_fd(bus, "SelectionWrite", (s, serial), "(ou)")
    with pytest.raises(GLib.Error, match="mime_types"):
        bus.call(kh.IMPL + "Clipboard", "SetSelection", (s, {"mime_types": GLib.Variant("as", ["x" * 300])}),
                 "(oa{sv})", dest=kh.KDE_NAME, path=kh.PATH)
    with pytest.raises(GLib.Error, match="mime_types"):
        bus.call(kh.IMPL + "Clipboard", "SetSelection", (s, {"mime_types": GLib.Variant("as", ["a/b"] * 65)}),
                 "(oa{sv})", dest=kh.KDE_NAME, path=kh.PATH)
    s2, _ = rd_start(bus)
    with pytest.raises(GLib.Error, match="clipboard access"):
        call_fd(bus, "SelectionRead", (s2, TEXT), "(os)")
    # RequestClipboard after Start is refused.
    with pytest.raises(GLib.Error, match="before Start"):
        bus.call(kh.IMPL + "Clipboard", "RequestClipboard", (s2, {}), "(oa{sv})", dest=kh.KDE_NAME, path=kh.PATH)
    assert kde.alive()


# ---- the picker, as a person uses it -------------------------------------------------

KEY_TAB, KEY_SPACE, KEY_ENTER, KEY_DOWN, KEY_ESC = 15, 57, 28, 108, 1


def assert_gone_without_input(session, title):
    """The dialog that just answered leaves the screen with no further input reaching
    limen-kde (it once stayed until the next key or pointer motion: Qt's requests to
    destroy its surface waited for a flush)."""
    assert limentest.wait_until(lambda: not any(w["caption"] == title for w in session.windows()), 10), \
        f"{title!r} stayed on screen after it answered"


def press(bus, rd, *keys):
    for key in keys:
        notify(bus, "NotifyKeyboardKeycode", "(oa{sv}iu)", rd, {}, key, 1)
        notify(bus, "NotifyKeyboardKeycode", "(oa{sv}iu)", rd, {}, key, 0)
        time.sleep(0.15)


def count_colour(path, rgb):
    """How many pixels of the image at @path are exactly @rgb."""
    colour = "rgb(%d,%d,%d)" % rgb
    r = limentest.subprocess.run(["convert", path, "-alpha", "off", "-fill", "black", "+opaque", colour, "-fill",
                                  "white", "-opaque", colour, "-format", "%[fx:round(mean*w*h)]", "info:"],
                                 capture_output=True, text=True, check=True)
    return int(float(r.stdout.strip() or 0))


def crop_window(session, shot, win, name):
    out = os.path.join(kh.artifacts_dir(), name)
    limentest.subprocess.run(["convert", shot, "-crop", f"{win['width']}x{win['height']}+{win['x']}+{win['y']}",
                              "+repage", out], check=True)
    return out


def start_kde_in(session, lang, app_name="Example Meeting", **more_env):
    """limen-kde in English at 100%, or German at 200%; the app has a .desktop name."""
    apps = os.path.join(session.bus.data_home, "applications")
    os.makedirs(apps, exist_ok=True)
    with open(os.path.join(apps, APP + ".desktop"), "w") as f:
        f.write(f"[Desktop Entry]\nType=Application\nName={app_name}\nExec=/bin/true\nIcon=camera-web\n")
    env = {"LIMEN_LOCALEDIR": os.path.join(limentest.BUILD_DIR, "locale")}
    if lang == "de":
        env.update({"LANGUAGE": "de", "QT_SCALE_FACTOR": "2"})
    return session.start_kde(**env, **more_env)


@pytest.mark.parametrize("lang", ["en", "de"])
def test_picker_shares_the_chosen_window(bus, session, lang):
    """The picker lists the screen and the windows, names the app, offers restoring; a
    person (keys through KWin's fake input) picks the window and allows restoring."""
    kde = start_kde_in(session, lang)
    probe = session.probe("Shared window", GREEN)
    probe.wait_for("FOCUS")
    probe_win = session.wait_window("Shared window")
    s = create(bus)
    assert select_sources(bus, s, types=GLib.Variant("u", 3), persist_mode=GLib.Variant("u", 2))[0] == 0
    handle = paths(bus)[0]
    call = kh.AsyncCall(bus, "ScreenCast", "Start", (handle, s, APP, "", {}), "(oossa{sv})")
    title = "Bildschirmfreigabe" if lang == "de" else "Screen Sharing"
    win = session.wait_window(title)
    assert win["pid"] == kde.pid
    # KWin's stills of the screen and of the window become the items' pictures: the
    # window's green shows inside the dialog (its icon would be no such colour).
    def picker_shot():
        shot = session.screenshot(os.path.join(bus.root, "picker.png"))
        return crop_window(session, shot, win, f"screencast-picker-{lang}.png")
    assert limentest.wait_until(lambda: count_colour(picker_shot(), GREEN) > 2000, 10), \
        "no thumbnail of the shared window in the picker"
    # The person's keyboard: a remote-desktop session restored without a question.
    rd, _ = rd_start(bus, devices=1)
    session.activate(title)
    time.sleep(0.5)
    # The screen is first and selected; the window is next. "Allow restoring" is ticked
    # already (as in Plasma's own portal): Share.
    press(bus, rd, KEY_DOWN, KEY_ENTER)
    response, results = call.wait()
    assert response == 0, results
    assert_gone_without_input(session, title)
    (node, props), = results["streams"]
    assert props["source_type"] == 2 and props["mapping_id"] == "window:" + probe_win["uuid"]
    assert results["persist_mode"] == 2
    assert results["restore_data"][2]["sources"] == ["window:" + probe_win["uuid"]]
    assert results["restore_data"][2]["windows"] == {"window:" + probe_win["uuid"]: ("org.limen.WaylandProbe",
                                                                                   "Shared window")}
    frame = session.consume(node, count=2)
    assert frame and rgb_at(frame, 200, 150) == GREEN
    # The same sources again from the restore data: no dialog.
    s2 = create(bus)
    assert select_sources(bus, s2, types=GLib.Variant("u", 3), persist_mode=GLib.Variant("u", 2),
                          restore_data=GLib.Variant("(suv)", (results["restore_data"][0], results["restore_data"][1],
                                                              GLib.Variant("a{sv}", {"sources": GLib.Variant(
                                                                  "as", results["restore_data"][2]["sources"])}))))[0] == 0
    response, results2 = start(bus, s2)
    assert response == 0 and results2["streams"][0][1]["mapping_id"] == "window:" + probe_win["uuid"]


@pytest.mark.parametrize("persist,untick", [(1, False), (2, True)])
def test_what_the_picker_lets_persist(bus, session, persist, untick):
    """Mode 1 (while the app runs, what browsers ask) is granted with the choice, no box to
    tick; mode 2 (beyond the app's run) not once "Allow restoring" is unticked."""
    kde = start_kde_in(session, "en")
    probe = session.probe("Shared window", GREEN)
    probe.wait_for("FOCUS")
    s = create(bus)
    assert select_sources(bus, s, types=GLib.Variant("u", 2), persist_mode=GLib.Variant("u", persist))[0] == 0
    call = kh.AsyncCall(bus, "ScreenCast", "Start", (paths(bus)[0], s, APP, "", {}), "(oossa{sv})")
    win = session.wait_window("Screen Sharing")
    assert win["pid"] == kde.pid
    rd, _ = rd_start(bus, devices=1)
    session.activate("Screen Sharing")
    time.sleep(0.5)
    press(bus, rd, *((KEY_TAB, KEY_SPACE) if untick else ()), KEY_ENTER)
    response, results = call.wait()
    assert response == 0 and len(results["streams"]) == 1, results
    assert_gone_without_input(session, "Screen Sharing")
    if persist == 1:
        assert results["persist_mode"] == 1 and results["restore_data"][2]["sources"][0].startswith("window:")
    else:
        assert results["persist_mode"] == 0 and "restore_data" not in results


@pytest.mark.parametrize("lang", ["en", "de"])
def test_remote_desktop_dialog_names_app_and_devices(bus, session, lang):
    kde = start_kde_in(session, lang)
    s = create(bus, "RemoteDesktop")
    assert impl(bus, "RemoteDesktop", "SelectDevices", (paths(bus)[0], s, APP, {"types": GLib.Variant("u", 3)}),
                "(oosa{sv})")[0] == 0
    bus.call(kh.IMPL + "Clipboard", "RequestClipboard", (s, {}), "(oa{sv})", dest=kh.KDE_NAME, path=kh.PATH)
    handle = paths(bus)[0]
    call = kh.AsyncCall(bus, "RemoteDesktop", "Start", (handle, s, APP, "", {}), "(oossa{sv})")
    title = "Fernsteuerung" if lang == "de" else "Remote Control"
    win = session.wait_window(title)
    time.sleep(1.0)
    crop_window(session, session.screenshot(os.path.join(bus.root, "rd.png")), win, f"remote-desktop-dialog-{lang}.png")
    rd, _ = rd_start(bus, devices=1)
    session.activate(title)
    time.sleep(0.5)
    press(bus, rd, KEY_ENTER)
    response, results = call.wait()
    assert response == 0 and results["devices"] == 3 and results["clipboard_enabled"] is True
    assert_gone_without_input(session, title)
    # Cancelling (Escape) answers 1.
    s2 = create(bus, "RemoteDesktop")
    handle = paths(bus)[0]
    call = kh.AsyncCall(bus, "RemoteDesktop", "Start", (handle, s2, APP, "", {}), "(oossa{sv})")
    session.wait_window(title)
    session.activate(title)
    time.sleep(0.5)
    press(bus, rd, KEY_ESC)
    assert call.wait()[0] == 1


# ---- the person sees that sharing runs, and stops it ---------------------------------

MOCK = "org.freedesktop.DBus.Mock"
NOTIFY_PATH = "/org/freedesktop/Notifications"


# The app's name comes from its desktop file: a server that renders markup gets it escaped.
HOSTILE_NAME = '<b>Big</b> <a href="https://example.org">link</a> & <img src="/x.png">'


@pytest.mark.parametrize("markup", [False, True], ids=["plain-server", "markup-server"])
def test_stop_in_the_notification_ends_the_session(bus, session, markup):
    d = os.path.join(bus.data_home, "knotifications5")
    os.makedirs(d, exist_ok=True)
    limentest.shutil.copy(os.path.join(limentest.BUILD_DIR, "kde-backend", "limen.notifyrc"), d)
    caps = "body body-markup body-hyperlinks body-images actions icon-static" if markup else "body actions icon-static"
    bus.start_dbusmock_template("notification_daemon", params={"capabilities": caps},
                                wait_name="org.freedesktop.Notifications")
    kde = start_kde_in(session, "en", app_name=HOSTILE_NAME)
    closed = []
    s = create(bus)
    bus.conn.signal_subscribe(kh.KDE_NAME, kh.IMPL + "Session", "Closed", s, None, 0,
                              lambda *a: closed.append(a[3]))
    assert select_sources(bus, s, restore_data=restore_data("screen:Virtual-0"))[0] == 0
    response, results = start(bus, s)
    assert response == 0
    node = results["streams"][0][0]

    def notifies():
        return [c for c in bus.call(MOCK, "GetCalls", None, None, dest="org.freedesktop.Notifications",
                                    path=NOTIFY_PATH)[0] if c[1] == "Notify"]
    assert limentest.wait_until(notifies, 10), "no notification says that sharing runs"
    app_name, replaces, icon, summary, body, actions, hints, timeout = notifies()[-1][2]
    if markup:
        escaped = HOSTILE_NAME.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;").replace('"', "&quot;")
        assert summary == "Screen sharing" and body == f"{escaped} is sharing your screen", body
    else:   # KNotification turns the escaped name back into the text it is
        assert summary == "Screen sharing" and body == f"{HOSTILE_NAME} is sharing your screen", body
    assert timeout == 0   # persistent while the stream runs
    keys = dict(zip(actions[1::2], actions[0::2]))
    assert "Stop" in keys, actions
    server_id = 1
    bus.call(MOCK, "EmitSignal", ("org.freedesktop.Notifications", "ActionInvoked", "us",
                                  [GLib.Variant("u", server_id), GLib.Variant("s", keys["Stop"])]),
             "(sssav)", dest="org.freedesktop.Notifications", path=NOTIFY_PATH)
    assert limentest.wait_until(lambda: (limentest.pump(0.1), closed)[1], 10), "the session was not closed"
    assert limentest.wait_until(lambda: node_gone(session, node), 10), "KWin's node outlived the session"
    # The session is gone for every later call.
    with pytest.raises(GLib.Error, match="NotFound"):
        start(bus, s)
    assert kde.alive()


# ---- hostile input ------------------------------------------------------------------

def test_bad_input_gets_clear_errors(bus, session, kde):
    s = create(bus)
    bad_options = [
        ({"types": GLib.Variant("s", "monitor")}, "types"),
        ({"types": GLib.Variant("u", 8)}, "types"),
        ({"cursor_mode": GLib.Variant("u", 3)}, "cursor_mode"),
        ({"persist_mode": GLib.Variant("u", 5)}, "persist_mode"),
        ({"restore_data": GLib.Variant("(suv)", ("KDE", 1, GLib.Variant("ay", b"x" * 70000)))}, "restore_data"),
        ({"restore_data": GLib.Variant("s", "KDE")}, "restore_data"),
    ]
    for options, key in bad_options:
        with pytest.raises(GLib.Error, match=f"InvalidArgument.*{key}"):
            select_sources(bus, s, **options)
    # Handles: not a request path, not a session path, a session that exists.
    with pytest.raises(GLib.Error, match="InvalidArgument"):
        impl(bus, "ScreenCast", "CreateSession", ("/not/a/request", paths(bus)[1], APP, {}), "(oosa{sv})")
    with pytest.raises(GLib.Error, match="InvalidArgument"):
        impl(bus, "ScreenCast", "CreateSession", (paths(bus)[0], "/org/freedesktop/portal/desktop/x", APP, {}),
             "(oosa{sv})")
    with pytest.raises(GLib.Error, match="Exists"):
        impl(bus, "ScreenCast", "CreateSession", (paths(bus)[0], s, APP, {}), "(oosa{sv})")
    with pytest.raises(GLib.Error, match="InvalidArgument"):
        impl(bus, "ScreenCast", "CreateSession", (paths(bus)[0], paths(bus)[1], "x" * 300, {}), "(oosa{sv})")
    # RemoteDesktop checks its restore data with the same table as ScreenCast (its own
    # table once let any vendor name through).
    long_vendor = GLib.Variant("(suv)", ("K" * 65, 1, GLib.Variant("a{sv}", {})))
    with pytest.raises(GLib.Error, match="InvalidArgument.*restore_data"):
        impl(bus, "RemoteDesktop", "SelectDevices", (paths(bus)[0], create(bus, "RemoteDesktop"), APP,
                                                     {"restore_data": long_vendor}), "(oosa{sv})")
    # A ScreenCast session is not a remote-desktop one, and has no clipboard.
    with pytest.raises(GLib.Error, match="not a remote-desktop session"):
        impl(bus, "RemoteDesktop", "SelectDevices", (paths(bus)[0], s, APP, {}), "(oosa{sv})")
    with pytest.raises(GLib.Error, match="Only remote-desktop sessions"):
        bus.call(kh.IMPL + "Clipboard", "RequestClipboard", (s, {}), "(oa{sv})", dest=kh.KDE_NAME, path=kh.PATH)
    with pytest.raises(GLib.Error, match="RemoteDesktop.Start"):
        start(bus, create(bus, "RemoteDesktop"))
    # Unknown sessions, and another connection's session.
    with pytest.raises(GLib.Error, match="NotFound"):
        select_sources(bus, "/org/freedesktop/portal/desktop/session/1_1/nothing")
    other = bus.new_connection()
    with pytest.raises(GLib.Error, match="NotFound"):
        kh.call_impl(bus, "ScreenCast", "Start", (paths(bus)[0], s, APP, "", {}), "(oossa{sv})", conn=other)
    with pytest.raises(GLib.Error, match="InvalidArgument"):
        impl(bus, "ScreenCast", "Start", (paths(bus)[0], s, APP, "bogus-parent", {}), "(oossa{sv})")
    # Still serving.
    assert select_sources(bus, s, restore_data=restore_data("screen:Virtual-0"))[0] == 0
    assert start(bus, s)[0] == 0
    assert kde.alive()


def test_closing_the_shared_window_ends_the_session(bus, session, kde):
    probe = session.probe("Short-lived window", GREEN)
    win = session.wait_window("Short-lived window")
    closed = []
    s = create(bus)
    bus.conn.signal_subscribe(kh.KDE_NAME, kh.IMPL + "Session", "Closed", s, None, 0,
                              lambda *a: closed.append(a[3]))
    assert select_sources(bus, s, types=GLib.Variant("u", 3), multiple=GLib.Variant("b", True),
                          restore_data=restore_data("screen:Virtual-0", "window:" + win["uuid"]))[0] == 0
    response, results = start(bus, s)
    assert response == 0
    assert [p["source_type"] for _, p in results["streams"]] == [1, 2]
    probe.close()
    # KWin ends the window's stream; the session (both streams) ends with it.
    assert limentest.wait_until(lambda: (limentest.pump(0.1), closed)[1], 10), "no Closed"
    for node, _ in results["streams"]:
        assert limentest.wait_until(lambda: node_gone(session, node), 10)
    assert kde.alive()
