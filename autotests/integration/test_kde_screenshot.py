"""limen-kde Screenshot and PickColor under Xvfb: through kwin_x11's ScreenShot2 (the
.desktop file with X-KDE-DBUS-Restricted-Interfaces in $XDG_DATA_HOME/applications), the
X root window fallback without KWin, the interactive dialog, the colour picker clicked
with xdotool, Close mid-dialog and bad input. Screenshots land in
<build>/autotests/artifacts/kde/."""

import os
import shutil
import subprocess
import time
import urllib.parse

import pytest

import kde_helpers as kh
import limentest
from limentest import GLib

pytestmark = pytest.mark.skipif(not shutil.which("kwin_x11"), reason="kwin-x11 is not installed")


@pytest.fixture
def pattern(bus, x):
    path = os.path.join(bus.root, "pattern.png")
    kh.set_root_pattern(x, path)
    return path


def with_kwin(bus, x, pattern, desktop_file=True):
    if desktop_file:
        kh.install_kwin_desktop_file(bus)
    kh.start_kwin(bus, x)
    kh.show_pattern_window(bus, x, pattern)


def screenshot(bus, options, timeout=60):
    handle = kh.new_handle(bus)
    call = kh.AsyncCall(bus, "Screenshot", "Screenshot", (handle, "org.example.App", "", options), "(ossa{sv})",
                        timeout=timeout * 1000)
    return handle, call


def check_png(uri, bus):
    assert uri.startswith("file://")
    path = urllib.parse.unquote(uri[len("file://"):])
    assert os.path.dirname(path) == os.path.join(bus.home, "Pictures")
    w, h, colours = kh.png_info(path)
    assert (w, h) == (1280, 800)
    assert colours >= 3, "the screenshot is blank"
    return path


def test_noninteractive_through_kwin(bus, x, pattern):
    with_kwin(bus, x, pattern)
    kde = kh.start_kde_x11(bus, x)
    _, call = screenshot(bus, {"interactive": GLib.Variant("b", False), "modal": GLib.Variant("b", True)})
    response, results = call.wait(60)
    assert response == 0, kde.output()
    path = check_png(results["uri"], bus)
    shutil.copy(path, os.path.join(kh.artifacts_dir(), "screenshot-kwin.png"))
    assert "through KWin's ScreenShot2" in kde.output()
    assert "grabbing the X root window" not in kde.output()
    # A second one gets a name of its own.
    _, call = screenshot(bus, {})
    response, results2 = call.wait(60)
    assert response == 0 and results2["uri"] != results["uri"]
    check_png(results2["uri"], bus)


def test_kwin_refuses_without_desktop_file_falls_back(bus, x, pattern):
    with_kwin(bus, x, pattern, desktop_file=False)
    kde = kh.start_kde_x11(bus, x)
    _, call = screenshot(bus, {})
    response, results = call.wait(60)
    assert response == 0
    check_png(results["uri"], bus)
    out = kde.output()
    assert "ScreenShot2 failed" in out and "grabbing the X root window instead" in out


def test_fallback_without_kwin(bus, x, pattern):
    kde = kh.start_kde_x11(bus, x)
    _, call = screenshot(bus, {})
    try:
        response, results = call.wait(30)
    finally:
        print(kde.output())
    assert response == 0
    path = check_png(results["uri"], bus)
    assert "KWin is not running; grabbing the X root window instead" in kde.output()
    # The root window's pattern made it into the file: red on the left, blue on the right.
    r = kh.subprocess.run(["convert", path, "-crop", "1x1+100+400", "txt:-"], capture_output=True, text=True)
    assert "#FF0000" in r.stdout.upper()


def test_interactive_dialog_save(bus, x, pattern):
    with_kwin(bus, x, pattern)
    kde = kh.start_kde_x11(bus, x)
    _, call = screenshot(bus, {"interactive": GLib.Variant("b", True)})
    wid = x.wait_window("Screenshot")
    time.sleep(0.7)
    x.screenshot("screenshot-dialog.png")
    x.run("xdotool", "windowactivate", "--sync", str(wid), check=False)
    x.press(wid, "Return")
    response, results = call.wait(30)
    assert response == 0, kde.output()
    check_png(results["uri"], bus)


def test_interactive_dialog_cancel_and_close(bus, x, pattern):
    kde = kh.start_kde_x11(bus, x)
    _, call = screenshot(bus, {"interactive": GLib.Variant("b", True)})
    x.answer("Screenshot", "Escape")
    response, results = call.wait(30)
    assert response == 1 and "uri" not in results
    assert not os.path.exists(os.path.join(bus.home, "Pictures")) or not os.listdir(os.path.join(bus.home, "Pictures"))

    handle, call = screenshot(bus, {"interactive": GLib.Variant("b", True)})
    x.wait_window("Screenshot")
    kh.close_request(bus, handle)
    response, _ = call.wait(10)
    assert response == 2
    limentest.wait_until(lambda: x.run("xdotool", "search", "--onlyvisible", "--name", "^Screenshot$",
                                       check=False).stdout.strip() == "", 5)
    assert kde.alive()


def pick_color(bus):
    handle = kh.new_handle(bus)
    return handle, kh.AsyncCall(bus, "Screenshot", "PickColor", (handle, "org.example.App", "", {}), "(ossa{sv})")


@pytest.mark.parametrize("kwin", [False, True])
def test_pick_color(bus, x, pattern, kwin):
    if kwin:
        with_kwin(bus, x, pattern)
    kde = kh.start_kde_x11(bus, x)
    for (px, py), expected in (((100, 400), (1.0, 0.0, 0.0)), ((1100, 400), (0.0, 0.0, 1.0))):
        _, call = pick_color(bus)
        x.wait_window("Pick a Colour")
        time.sleep(0.5)
        if px == 100:
            x.screenshot("pick-color-overlay%s.png" % ("-kwin" if kwin else ""))
        x.run("xdotool", "mousemove", "--sync", str(px), str(py))
        x.run("xdotool", "click", "1")
        response, results = call.wait(20)
        assert response == 0, kde.output()
        assert results["color"] == pytest.approx(expected, abs=0.01), kde.output()


def test_pick_color_escape(bus, x, pattern):
    kh.start_kde_x11(bus, x)
    _, call = pick_color(bus)
    x.wait_window("Pick a Colour")
    time.sleep(0.3)
    x.run("xdotool", "key", "Escape")
    response, results = call.wait(20)
    assert response == 1 and "color" not in results


def test_bad_input(bus, x):
    kde = kh.start_kde_x11(bus, x)
    for opts, key in (({"interactive": GLib.Variant("s", "yes")}, "interactive"),
                      ({"modal": GLib.Variant("i", 1)}, "modal"),
                      ({"target": GLib.Variant("u", 3)}, "target"),
                      ({"target": GLib.Variant("u", 16)}, "target"),
                      ({"target": GLib.Variant("s", "window")}, "target")):
        with pytest.raises(GLib.Error) as e:
            kh.call_impl(bus, "Screenshot", "Screenshot", (kh.new_handle(bus), "a", "", opts), "(ossa{sv})")
        assert "InvalidArgument" in str(e.value) and key in str(e.value)
    with pytest.raises(GLib.Error) as e:
        kh.call_impl(bus, "Screenshot", "Screenshot", ("/not/a/request", "a", "", {}), "(ossa{sv})")
    assert "InvalidArgument" in str(e.value)
    with pytest.raises(GLib.Error) as e:
        kh.call_impl(bus, "Screenshot", "PickColor", (kh.new_handle(bus), "a", "x11:zz", {}), "(ossa{sv})")
    assert "InvalidArgument" in str(e.value)
    assert bus.get_property(kh.IMPL + "Screenshot", "version", dest=kh.KDE_NAME, path=kh.PATH) == 3
    assert bus.get_property(kh.IMPL + "Screenshot", "AvailableTargets", dest=kh.KDE_NAME, path=kh.PATH) == 15
    assert kde.alive()


@pytest.mark.parametrize("kwin", [False, True])
def test_interactive_region(bus, x, pattern, kwin):
    # Region is our own overlay over a whole-screen capture: KWin's CaptureWorkspace with
    # KWin, the X root window without.
    if kwin:
        with_kwin(bus, x, pattern)
    kde = kh.start_kde_x11(bus, x)
    _, call = screenshot(bus, {"interactive": GLib.Variant("b", True)})
    wid = x.wait_window("^Screenshot$")
    x.press(wid, "alt+a", "End", settle=0.4)       # Area: Region
    time.sleep(0.2)
    x.run("xdotool", "key", "alt+t")              # Take New Screenshot
    x.wait_window("Select a Region")
    time.sleep(0.4)
    x.screenshot("screenshot-region-overlay%s.png" % ("-kwin" if kwin else ""))
    x.run("xdotool", "mousemove", "--sync", "100", "100", "mousedown", "1")
    x.run("xdotool", "mousemove", "--sync", "250", "200")
    x.run("xdotool", "mousemove", "--sync", "400", "300", "mouseup", "1")
    x.answer("^Screenshot$", "Return", shot="screenshot-dialog-region%s.png" % ("-kwin" if kwin else ""))
    response, results = call.wait(30)
    assert response == 0, kde.output()
    path = GLib.filename_from_uri(results["uri"])[0]
    w, h, _ = kh.png_info(path)
    assert (w, h) == (300, 200)
    r = kh.subprocess.run(["convert", path, "-crop", "1x1+10+150", "txt:-"], capture_output=True, text=True)
    assert "#FF0000" in r.stdout.upper()
    assert ("through KWin's ScreenShot2 (1280x800)" in kde.output()) == kwin


class ImperviousPointer:
    """A pointer for KWin's interactive picker. KWin's X11 window selector grabs the X
    server while the user picks (WindowSelector: pointer + keyboard grab, then
    xcb_grab_server), so xdotool, an ordinary client, blocks until the grab ends. An XTEST
    client that has called XTestGrabControl(impervious=True) before the grab keeps being
    served; this is one, driven line by line over a pipe."""

    SCRIPT = r'''
import ctypes, sys
x11 = ctypes.CDLL("libX11.so.6"); xt = ctypes.CDLL("libXtst.so.6")
x11.XOpenDisplay.restype = ctypes.c_void_p
x11.XOpenDisplay.argtypes = [ctypes.c_char_p]
x11.XSync.argtypes = [ctypes.c_void_p, ctypes.c_int]
xt.XTestGrabControl.argtypes = [ctypes.c_void_p, ctypes.c_int]
xt.XTestFakeMotionEvent.argtypes = [ctypes.c_void_p, ctypes.c_int, ctypes.c_int, ctypes.c_int, ctypes.c_ulong]
xt.XTestFakeButtonEvent.argtypes = [ctypes.c_void_p, ctypes.c_uint, ctypes.c_int, ctypes.c_ulong]
dpy = x11.XOpenDisplay(None)
if not dpy:
    sys.exit("cannot open the display")
xt.XTestGrabControl(dpy, 1)
x11.XSync(dpy, 0)
print("ready", flush=True)
for line in sys.stdin:
    w = line.split()
    if w[0] == "move":
        xt.XTestFakeMotionEvent(dpy, -1, int(w[1]), int(w[2]), 0)
    else:
        xt.XTestFakeButtonEvent(dpy, int(w[1]), 1 if w[0] == "down" else 0, 0)
    x11.XSync(dpy, 0)
    print("ok", flush=True)
'''

    def __init__(self, x):
        env = dict(os.environ, DISPLAY=x.display)
        self.proc = subprocess.Popen(["/usr/bin/python3", "-c", self.SCRIPT], env=env, stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, text=True)
        assert self.proc.stdout.readline().strip() == "ready"

    def send(self, *words):
        self.proc.stdin.write(" ".join(str(w) for w in words) + "\n")
        self.proc.stdin.flush()
        assert self.proc.stdout.readline().strip() == "ok"

    def click(self, px, py):
        self.send("move", px, py)
        time.sleep(0.2)
        self.send("down", 1)
        time.sleep(0.1)
        self.send("up", 1)

    def close(self):
        self.proc.stdin.close()
        self.proc.wait(timeout=5)


def server_grabbed(x):
    """True while another client holds the X server (an ordinary request does not return)."""
    try:
        x.run("xdotool", "getmouselocation", timeout=0.5, check=False)
        return False
    except subprocess.TimeoutExpired:
        return True


def frame_geometry(x, wid):
    """(x, y, width, height) of the window manager's frame around client window @wid."""
    root = x.run("xwininfo", "-root").stdout.split("Window id:")[1].split()[0]
    w = hex(wid)
    while True:
        tree = x.run("xwininfo", "-tree", "-id", w).stdout
        parent = tree.split("Parent window id:")[1].split()[0]
        if int(parent, 16) == int(root, 16):
            break
        w = parent
    info = x.run("xwininfo", "-id", w).stdout

    def field(name):
        return int(info.split(name + ":")[1].split()[0])
    return field("Absolute upper-left X"), field("Absolute upper-left Y"), field("Width"), field("Height")


@pytest.mark.parametrize("lang", ["en", "de"])
def test_interactive_window_through_kwin_picker(bus, x, pattern, lang):
    """'Current window' reaches KWin's CaptureInteractive; the click in KWin's picker
    selects a window of known size, which is what the PNG holds."""
    with_kwin(bus, x, pattern)
    target = os.path.join(bus.root, "target.png")
    subprocess.run(["convert", "-size", "320x240", "xc:green", "-fill", "yellow", "-draw", "rectangle 0,0 159,239",
                    target], check=True)
    bus.start(["display", "-borderwidth", "0", "-geometry", "+200+150", "-title", "limen-target", target],
              env=dict(x.env()))
    twid = x.wait_window("limen-target")
    time.sleep(0.5)
    fx, fy, fw, fh = frame_geometry(x, twid)
    pointer = ImperviousPointer(x)
    env = dict(x.env(), QT_QPA_PLATFORM="xcb")
    if lang == "de":
        env.update({"LANGUAGE": "de", "QT_SCALE_FACTOR": "2"})
    env["LIMEN_LOCALEDIR"] = os.path.join(limentest.BUILD_DIR, "locale")
    kde = kh.start_kde(bus, env=env)
    try:
        _, call = screenshot(bus, {"interactive": GLib.Variant("b", True)})
        title = "^Screenshot$" if lang == "en" else "^Bildschirmfoto$"
        wid = x.wait_window(title)
        x.run("xdotool", "windowactivate", "--sync", str(wid), check=False)
        x.press(wid, "alt+a" if lang == "en" else "alt+b", "Home", "Down", settle=0.4)   # Area: Current window
        time.sleep(0.2)
        x.run("xdotool", "key", "alt+t" if lang == "en" else "alt+n")                   # Take New Screenshot
        assert limentest.wait_until(lambda: server_grabbed(x), 15), "KWin's window picker never started"
        pointer.click(fx + fw // 2, fy + fh // 2)
        wid = x.wait_window(title)
        x.run("xdotool", "windowactivate", "--sync", str(wid), check=False)
        time.sleep(1.5)
        x.screenshot(f"screenshot-dialog-window-{lang}.png")
        x.press(wid, "Return")
        response, results = call.wait(30)
    finally:
        pointer.close()
    assert response == 0, kde.output()
    path = GLib.filename_from_uri(results["uri"])[0]
    shutil.copy(path, os.path.join(kh.artifacts_dir(), f"screenshot-window-{lang}.png"))
    w, h, colours = kh.png_info(path)
    assert "through KWin's ScreenShot2 (%dx%d)" % (w, h) in kde.output()
    assert colours >= 2, "the window capture is blank"
    # KWin 5.27 captures a window with its shadow (it has no include-shadow option): the
    # frame is the fully opaque box inside the PNG, and it has the frame's geometry.
    box = subprocess.run(["convert", path, "-alpha", "extract", "-threshold", "99%", "-format", "%@", "info:"],
                         capture_output=True, text=True, check=True).stdout
    bw, bh, bx, by = (int(v) for v in box.replace("x", "+").split("+"))
    assert (bw, bh) == (fw, fh), (box, w, h)
    assert w >= fw and h >= fh
    # The client area sits at the bottom of the frame: yellow left, green right.
    for px, colour in ((fw // 4, "#FFFF00"), (fw * 3 // 4, "#008000")):
        r = subprocess.run(["convert", path, "-crop", f"1x1+{bx + px}+{by + fh - 20}", "txt:-"],
                           capture_output=True, text=True)
        assert colour in r.stdout.upper(), r.stdout


# ---- Screenshot version 3: targets ---------------------------------------------------

def target_window(bus, x):
    """A 320x240 window (yellow left half, green right), active; its frame geometry."""
    target = os.path.join(bus.root, "target.png")
    subprocess.run(["convert", "-size", "320x240", "xc:green", "-fill", "yellow", "-draw", "rectangle 0,0 159,239",
                    target], check=True)
    bus.start(["display", "-borderwidth", "0", "-geometry", "+200+150", "-title", "limen-target", target],
              env=dict(x.env()))
    twid = x.wait_window("limen-target")
    time.sleep(0.5)
    x.run("xdotool", "windowactivate", "--sync", str(twid), check=False)
    x.run("xdotool", "windowfocus", "--sync", str(twid), check=False)   # no window manager: the focus
    time.sleep(0.3)
    return twid


@pytest.mark.parametrize("kwin", [False, True])
def test_target_active_window(bus, x, pattern, kwin):
    """target 8: the active window, no question asked (KWin's CaptureActiveWindow, the X
    active window without KWin)."""
    if kwin:
        with_kwin(bus, x, pattern)
    twid = target_window(bus, x)
    kde = kh.start_kde_x11(bus, x)
    _, call = screenshot(bus, {"target": GLib.Variant("u", 8)})
    response, results = call.wait(30)
    assert response == 0, kde.output()
    path = GLib.filename_from_uri(results["uri"])[0]
    shutil.copy(path, os.path.join(kh.artifacts_dir(), "screenshot-target-active-window%s.png" % ("-kwin" if kwin else "")))
    w, h, _ = kh.png_info(path)
    if kwin:
        # With the frame and KWin's shadow: the opaque box is the frame.
        fx, fy, fw, fh = frame_geometry(x, twid)
        box = subprocess.run(["convert", path, "-alpha", "extract", "-threshold", "99%", "-format", "%@", "info:"],
                             capture_output=True, text=True, check=True).stdout
        bw, bh, bx, by = (int(v) for v in box.replace("x", "+").split("+"))
        assert (bw, bh) == (fw, fh), (box, w, h)
        assert "through KWin's ScreenShot2 (%dx%d)" % (w, h) in kde.output()
    else:
        assert (w, h) == (320, 240)
        for px, colour in ((80, "#FFFF00"), (240, "#008000")):
            r = subprocess.run(["convert", path, "-crop", f"1x1+{px}+120", "txt:-"], capture_output=True, text=True)
            assert colour in r.stdout.upper(), r.stdout


def test_target_screen_is_the_whole_screen(bus, x, pattern):
    kde = kh.start_kde_x11(bus, x)
    _, call = screenshot(bus, {"target": GLib.Variant("u", 1)})
    response, results = call.wait(30)
    assert response == 0, kde.output()
    check_png(results["uri"], bus)


@pytest.mark.parametrize("kwin", [False, True])
def test_target_area_asks_for_a_region(bus, x, pattern, kwin):
    """target 4 without the dialog: the frozen overlay asks for the area; Escape cancels."""
    if kwin:
        with_kwin(bus, x, pattern)
    kde = kh.start_kde_x11(bus, x)
    _, call = screenshot(bus, {"target": GLib.Variant("u", 4)})
    x.wait_window("Select a Region")
    time.sleep(0.4)
    x.run("xdotool", "mousemove", "--sync", "100", "100", "mousedown", "1")
    x.run("xdotool", "mousemove", "--sync", "250", "200")
    x.run("xdotool", "mousemove", "--sync", "400", "300", "mouseup", "1")
    response, results = call.wait(30)
    assert response == 0, kde.output()
    path = GLib.filename_from_uri(results["uri"])[0]
    assert kh.png_info(path)[:2] == (300, 200)
    r = kh.subprocess.run(["convert", path, "-crop", "1x1+10+150", "txt:-"], capture_output=True, text=True)
    assert "#FF0000" in r.stdout.upper()

    _, call = screenshot(bus, {"target": GLib.Variant("u", 4)})
    x.wait_window("Select a Region")
    time.sleep(0.4)
    x.run("xdotool", "key", "Escape")
    response, results = call.wait(30)
    assert response == 1 and "uri" not in results
    assert kde.alive()


@pytest.mark.parametrize("lang", ["en", "de"])
@pytest.mark.parametrize("target,item", [(4, {"en": "Region", "de": "Bereich"}),
                                         (8, {"en": "Current window", "de": "Aktuelles Fenster"})])
def test_target_preselects_the_dialog_mode(bus, x, pattern, lang, target, item):
    env = {}
    if lang == "de":
        env = {"LANGUAGE": "de", "QT_SCALE_FACTOR": "2"}
    env["LIMEN_LOCALEDIR"] = os.path.join(limentest.BUILD_DIR, "locale")
    kde = kh.start_kde_x11(bus, x, **env)
    _, call = screenshot(bus, {"interactive": GLib.Variant("b", True), "target": GLib.Variant("u", target)})
    title = "^Screenshot$" if lang == "en" else "^Bildschirmfoto$"
    wid = x.wait_window(title)
    time.sleep(0.7)
    x.screenshot(f"screenshot-dialog-target{target}-{lang}.png")
    # The shim logs the mode the dialog opened on (the combo's shown text).
    x.press(wid, "Escape")
    response, _ = call.wait(30)
    assert response == 1
    assert f"screenshot dialog mode: {item[lang]}" in kde.output(), kde.output()


def test_target_window_through_kwin_picker(bus, x, pattern):
    """target 2 without the dialog: KWin's picker asks which window; the click picks the
    320x240 target, whose frame is what the PNG holds."""
    with_kwin(bus, x, pattern)
    twid = target_window(bus, x)
    fx, fy, fw, fh = frame_geometry(x, twid)
    pointer = ImperviousPointer(x)
    kde = kh.start_kde_x11(bus, x)
    try:
        _, call = screenshot(bus, {"target": GLib.Variant("u", 2)})
        assert limentest.wait_until(lambda: server_grabbed(x), 15), "KWin's window picker never started"
        pointer.click(fx + fw // 2, fy + fh // 2)
        response, results = call.wait(30)
    finally:
        pointer.close()
    assert response == 0, kde.output()
    path = GLib.filename_from_uri(results["uri"])[0]
    box = subprocess.run(["convert", path, "-alpha", "extract", "-threshold", "99%", "-format", "%@", "info:"],
                         capture_output=True, text=True, check=True).stdout
    bw, bh, _, _ = (int(v) for v in box.replace("x", "+").split("+"))
    assert (bw, bh) == (fw, fh), box
