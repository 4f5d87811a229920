"""limen-kde on Wayland: "wayland:HANDLE" parent windows through xdg-foreign v2.

A real compositor (Debian's kwin_wayland 5.27, --virtual, on the test's private bus and
XDG_RUNTIME_DIR), a real parent (autotests/wayland-client/limen-wayland-parent.c: a plain
wayland-client toplevel exported with zxdg_exporter_v2) and limen-kde with Qt on Wayland.
Who is whose transient is read from KWin itself through its scripting API; a screenshot of
the workspace (KWin's ScreenShot2) is kept in <build>/autotests/artifacts/kde/."""

import json
import os
import select
import shutil
import subprocess
import time
import uuid

import pytest

import kde_helpers as kh
import limentest
from limentest import GLib

KWIN = "/usr/bin/kwin_wayland"
SOCKET = "wayland-limen-test"
PARENT_TITLE = "Limen Wayland parent"


class KWinWayland:
    """kwin_wayland --virtual on the test's bus. /usr/bin/kwin_wayland carries a file
    capability (CAP_SYS_NICE) that this machine's kernel refuses to exec ("Operation not
    permitted"): a copy without it runs. The copy keeps the name kwin_wayland, which KWin's
    own Qt platform plugin checks."""

    def __init__(self, bus):
        self.bus = bus
        bindir = os.path.join(bus.root, "kwin-bin")
        os.makedirs(bindir, exist_ok=True)
        exe = os.path.join(bindir, "kwin_wayland")
        shutil.copy(KWIN, exe)
        env = {"WAYLAND_DISPLAY": "", "DISPLAY": "", "QT_QPA_PLATFORM": "", "LIBGL_ALWAYS_SOFTWARE": "1",
               # the scripting API's print() lands in this log, read by windows()
               "QT_LOGGING_RULES": "kwin_scripting.debug=true",
               # KWin's own switch for test compositors: ScreenShot2 without the .desktop
               # file check (this compositor is private to the test).
               "KWIN_SCREENSHOT_NO_PERMISSION_CHECKS": "1"}
        self.daemon = bus.start([exe, "--virtual", "--width", "1280", "--height", "800", "--socket", SOCKET,
                                 "--no-lockscreen", "--no-global-shortcuts", "--no-kactivities"],
                                env=env, wait_name="org.kde.KWin", timeout=30)
        sock = os.path.join(bus.runtime_dir, SOCKET)
        assert limentest.wait_until(lambda: os.path.exists(sock), 20), "kwin_wayland made no socket"

    def env(self):
        return {"WAYLAND_DISPLAY": SOCKET, "DISPLAY": "", "QT_QPA_PLATFORM": "wayland"}

    def run_script(self, body):
        """Run KWin script @body (with `out(text)` to report) and return what it reported."""
        marker = uuid.uuid4().hex
        script = os.path.join(self.bus.root, f"script-{marker}.js")
        with open(script, "w") as f:
            f.write(f"""
function out(text) {{ print("{marker} " + text); }}
{body}
out("END");
""")
        self.bus.call("org.kde.kwin.Scripting", "loadScript", (script, marker), "(ss)", dest="org.kde.KWin",
                      path="/Scripting")
        self.bus.call("org.kde.kwin.Scripting", "start", dest="org.kde.KWin", path="/Scripting")
        lines = []

        def done():
            lines[:] = [line.split(marker + " ", 1)[1] for line in self.daemon.output().splitlines()
                        if marker + " " in line]
            return "END" in lines

        assert limentest.wait_until(done, 10), "KWin did not run the script"
        self.bus.call("org.kde.kwin.Scripting", "unloadScript", (marker,), "(s)", dest="org.kde.KWin",
                      path="/Scripting")
        return [line for line in lines if line != "END"]

    def windows(self):
        """Every managed window as KWin sees it: caption, transient, transientFor's caption."""
        return [json.loads(line) for line in self.run_script("""
var list = workspace.clientList();
for (var i = 0; i < list.length; i++) {
  var w = list[i];
  out(JSON.stringify({caption: w.caption, transient: w.transient,
      transientFor: w.transientFor ? w.transientFor.caption : null, resourceClass: w.resourceClass,
      pid: w.pid, active: w.active, modal: w.modal, x: w.x, y: w.y, width: w.width, height: w.height}));
}
""")]

    def move(self, caption, x, y):
        """Move the window titled @caption (its frame) to @x, @y."""
        assert self.run_script(f"""
var list = workspace.clientList();
for (var i = 0; i < list.length; i++)
  if (list[i].caption == {json.dumps(caption)}) {{
    var g = list[i].frameGeometry;
    list[i].frameGeometry = {{x: {x}, y: {y}, width: g.width, height: g.height}};
    out("ok");
  }}
""") == ["ok"]
        assert limentest.wait_until(lambda: (self.wait_window(caption)["x"], self.wait_window(caption)["y"]) == (x, y), 10)

    def activate(self, caption):
        """Make the window titled @caption the active one, as a click on it would."""
        assert self.run_script(f"""
var list = workspace.clientList();
for (var i = 0; i < list.length; i++)
  if (list[i].caption == {json.dumps(caption)}) {{ workspace.activeClient = list[i]; out("ok"); }}
""") == ["ok"]
        assert limentest.wait_until(lambda: any(w["active"] for w in self.windows() if w["caption"] == caption), 10)

    def wait_window(self, caption, timeout=30):
        """KWin's view of the window titled @caption once it is managed."""
        found = []

        def look():
            found[:] = [w for w in self.windows() if w["caption"] == caption]
            return bool(found)

        assert limentest.wait_until(look, timeout), f"no window {caption!r}: {self.windows()}"
        return found[0]

    def screenshot(self, name):
        """The whole workspace through org.kde.KWin.ScreenShot2 (raw BGRA on a pipe) as PNG.
        """
        r, w = os.pipe()
        try:
            meta = self.bus.call("org.kde.KWin.ScreenShot2", "CaptureWorkspace",
                                 ({"native-resolution": GLib.Variant("b", True)}, 0), "(a{sv}h)",
                                 dest="org.kde.KWin", path="/org/kde/KWin/ScreenShot2", fds=[w], timeout=20000)[0]
            os.close(w)
            w = -1
            data = b""
            while True:
                chunk = os.read(r, 1 << 16)
                if not chunk:
                    break
                data += chunk
        finally:
            os.close(r)
            if w >= 0:
                os.close(w)
        width, height, stride = meta["width"], meta["height"], meta["stride"]
        rows = b"".join(data[y * stride:y * stride + width * 4] for y in range(height))
        raw = os.path.join(self.bus.root, name + ".bgra")
        with open(raw, "wb") as f:
            f.write(rows)
        path = os.path.join(kh.artifacts_dir(), name)
        subprocess.run(["convert", "-size", f"{width}x{height}", "-depth", "8", f"bgra:{raw}", "-alpha", "off", path],
                       check=True)
        return path


class Parent:
    """limen-wayland-parent: an exported toplevel; .handle is its xdg-foreign handle."""

    def __init__(self, bus, kwin):
        exe = os.path.join(limentest.BUILD_DIR, "autotests", "limen-wayland-parent")
        env = dict(bus.env, **kwin.env())
        self.proc = subprocess.Popen([exe, PARENT_TITLE], env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=subprocess.PIPE)
        line = self.read_line()
        assert line.startswith("HANDLE "), line
        self.handle = line.split(" ", 1)[1]

    def read_line(self, timeout=20):
        ready, _, _ = select.select([self.proc.stdout], [], [], timeout)
        if not ready:
            raise TimeoutError("limen-wayland-parent said nothing")
        line = self.proc.stdout.readline().decode().strip()
        if not line:
            raise RuntimeError(f"limen-wayland-parent ended: {self.proc.stderr.read().decode()}")
        return line

    def unexport(self):
        self.proc.stdin.write(b"unexport\n")
        self.proc.stdin.flush()
        assert self.read_line() == "UNEXPORTED"

    def close(self):
        if self.proc.poll() is None:
            self.proc.stdin.close()
            try:
                self.proc.wait(timeout=5)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        assert self.proc.returncode == 0, self.proc.stderr.read().decode()


@pytest.fixture
def kwin(bus):
    return KWinWayland(bus)


@pytest.fixture
def parent(bus, kwin):
    p = Parent(bus, kwin)
    try:
        yield p
    finally:
        p.close()


@pytest.fixture
def kde(bus, kwin):
    return kh.start_kde(bus, env=kwin.env())


def pixel(path, x, y):
    """(r, g, b) of one pixel of a PNG."""
    r = subprocess.run(["convert", path, "-format", f"%[fx:int(255*p{{{x},{y}}}.r)] %[fx:int(255*p{{{x},{y}}}.g)] "
                        f"%[fx:int(255*p{{{x},{y}}}.b)]", "info:"], capture_output=True, text=True, check=True)
    return tuple(int(v) for v in r.stdout.split())


def overlap_point(a, b):
    """A point inside both window rectangles (KWin's geometry), away from the edges."""
    x0, x1 = max(a["x"], b["x"]), min(a["x"] + a["width"], b["x"] + b["width"])
    y0, y1 = max(a["y"], b["y"]), min(a["y"] + a["height"], b["y"] + b["height"])
    assert x1 - x0 > 40 and y1 - y0 > 80, (a, b)
    return (x0 + x1) // 2, (y0 + y1) // 2 + 20


PARENT_BLUE = (0x2a, 0x7a, 0xb0)


def mapped_libraries(pid):
    with open(f"/proc/{pid}/maps") as f:
        return {line.split()[-1] for line in f if "/" in line}


def wayland_libraries(pid):
    return {lib for lib in mapped_libraries(pid) if "wayland" in os.path.basename(lib).lower()}


def open_file(bus, title, parent_window):
    handle = kh.new_handle(bus)
    call = kh.AsyncCall(bus, "FileChooser", "OpenFile", (handle, "org.example.App", parent_window, title, {}),
                        "(osssa{sv})")
    return handle, call


def access_dialog(bus, title, parent_window):
    handle = kh.new_handle(bus)
    call = kh.AsyncCall(bus, "Access", "AccessDialog",
                        (handle, "org.example.App", parent_window, title, "Example wants to record audio",
                         "", {}), "(osssssa{sv})")
    return handle, call


def close_and_check(bus, kde, handle, call):
    kh.close_request(bus, handle)
    response, _ = call.wait()
    assert response == 2
    assert kde.alive()


def test_file_chooser_becomes_child_of_exported_parent(bus, kwin, parent, kde):
    assert kwin.wait_window(PARENT_TITLE)["transient"] is False
    # The idle daemon carries no Wayland (nor Qt): the shim and its libraries come with
    # the first dialog.
    assert wayland_libraries(kde.pid) == set()
    title = "Open with a Wayland parent"
    handle, call = open_file(bus, title, "wayland:" + parent.handle)
    win = kwin.wait_window(title)
    # The transient relation may be set a moment after the dialog is managed.
    limentest.wait_until(lambda: kwin.wait_window(title)["transient"], 10)
    win = kwin.wait_window(title)
    assert win["transient"] is True, win
    assert win["transientFor"] == PARENT_TITLE, win
    assert win["pid"] == kde.pid
    # What the relation does: KWin keeps a transient above its parent, also when the
    # parent is activated (clicked).
    kwin.activate(PARENT_TITLE)
    time.sleep(0.5)
    shot = kwin.screenshot("wayland-parent-file-chooser.png")
    assert kh.png_info(shot)[:2] == (1280, 800)
    point = overlap_point(win, kwin.wait_window(PARENT_TITLE))
    assert pixel(shot, *point) != PARENT_BLUE, point
    assert any("libKF5WaylandClient" in lib for lib in wayland_libraries(kde.pid))
    assert "dialog set as child of parent " + parent.handle in kde.output()
    close_and_check(bus, kde, handle, call)


def center(w):
    return w["x"] + w["width"] / 2, w["y"] + w["height"] / 2


def test_access_dialog_becomes_child(bus, kwin, parent, kde):
    # The parent off-centre, so that placement tells a transient from a free window.
    kwin.move(PARENT_TITLE, 40, 40)
    title = "Allow microphone access?"
    handle, call = access_dialog(bus, title, "wayland:" + parent.handle)
    kwin.wait_window(title)
    limentest.wait_until(lambda: kwin.wait_window(title)["transient"], 10)
    win = kwin.wait_window(title)
    assert win["transient"] is True and win["transientFor"] == PARENT_TITLE, win
    # Linked before its first frame: KWin placed it as a transient, centred on the parent.
    (px, py), (dx, dy) = center(kwin.wait_window(PARENT_TITLE)), center(win)
    assert abs(px - dx) <= 2 and abs(py - dy) <= 2, (kwin.wait_window(PARENT_TITLE), win)
    kwin.screenshot("wayland-parent-access.png")
    close_and_check(bus, kde, handle, call)


@pytest.mark.parametrize("bad", ["not-a-handle", "{00000000-0000-0000-0000-000000000000}", "", "ä" * 120])
def test_unknown_handle_opens_parentless(bus, kwin, parent, kde, bad):
    title = "Open with a bogus parent"
    handle, call = open_file(bus, title, "wayland:" + bad)
    win = kwin.wait_window(title)
    # Give the compositor's answer (zxdg_imported_v2.destroyed) time to arrive.
    expected = "empty parent handle" if not bad else f"does not know parent {bad}"
    assert limentest.wait_until(lambda: expected in kde.output(), 10), kde.output()
    win = kwin.wait_window(title)
    assert win["transient"] is False and win["transientFor"] is None, win
    # Still a working dialog on a working connection: the parent is untouched, the call closes.
    assert kwin.wait_window(PARENT_TITLE)["transient"] is False
    if bad == "not-a-handle":
        # Without the relation, activating the parent raises it over the dialog.
        kwin.activate(PARENT_TITLE)
        time.sleep(0.5)
        shot = kwin.screenshot("wayland-parent-bogus.png")
        assert pixel(shot, *overlap_point(win, kwin.wait_window(PARENT_TITLE))) == PARENT_BLUE
    close_and_check(bus, kde, handle, call)


def test_expired_handle_opens_parentless(bus, kwin, parent, kde):
    old = parent.handle
    parent.unexport()
    title = "Open with an expired parent"
    handle, call = open_file(bus, title, "wayland:" + old)
    kwin.wait_window(title)
    assert limentest.wait_until(lambda: f"does not know parent {old}" in kde.output(), 10), kde.output()
    assert kwin.wait_window(title)["transient"] is False
    close_and_check(bus, kde, handle, call)
    # A second dialog on the same connection afterwards still opens.
    handle, call = open_file(bus, "Second dialog", "")
    kwin.wait_window("Second dialog")
    close_and_check(bus, kde, handle, call)


def test_x11_parent_on_wayland_is_ignored(bus, kwin, parent, kde):
    title = "Open with an X11 parent on Wayland"
    handle, call = open_file(bus, title, "x11:1234")
    assert kwin.wait_window(title)["transient"] is False
    close_and_check(bus, kde, handle, call)


def start_limen_portal(bus):
    """limen-portal choosing limen-kde through kde-portals.conf (XDG_CURRENT_DESKTOP=KDE)."""
    shutil.copy(kh.portal_file_path(), os.path.join(bus.env["XDG_DESKTOP_PORTAL_DIR"], "limen.portal"))
    conf = os.path.join(bus.config_home, "xdg-desktop-portal")
    os.makedirs(conf, exist_ok=True)
    with open(os.path.join(conf, "kde-portals.conf"), "w") as f:
        f.write("[preferred]\ndefault=limen\n")
    return bus.start_portal(env={"XDG_CURRENT_DESKTOP": "KDE"})


@pytest.mark.parametrize("frontend", ["limen", "reference"])
def test_parent_through_frontend(bus, kwin, parent, kde, frontend):
    """An app's real path: org.freedesktop.portal.FileChooser with its exported handle, through
    limen-portal and through Debian's xdg-desktop-portal 1.16."""
    if frontend == "limen":
        start_limen_portal(bus)
    else:
        kh.start_reference_frontend(bus)
    title = f"Through {frontend} frontend"
    token = "wl" + frontend
    bus.call("org.freedesktop.portal.FileChooser", "OpenFile",
             ("wayland:" + parent.handle, title, {"handle_token": GLib.Variant("s", token)}), "(ssa{sv})")
    kwin.wait_window(title)
    limentest.wait_until(lambda: kwin.wait_window(title)["transient"], 10)
    win = kwin.wait_window(title)
    assert win["transient"] is True and win["transientFor"] == PARENT_TITLE, win
    sender = bus.conn.get_unique_name()[1:].replace(".", "_")
    bus.call("org.freedesktop.portal.Request", "Close",
             path=f"/org/freedesktop/portal/desktop/request/{sender}/{token}")
    assert limentest.wait_until(lambda: not any(w["caption"] == title for w in kwin.windows()), 10)
    assert kde.alive()
