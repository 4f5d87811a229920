"""Helpers for limen-kde's integration tests: starting the backend, kdeglobals fixtures,
Debian's reference frontend in front of it, Xvfb, and impl-interface calls."""

import os
import shutil
import signal
import subprocess
import time

import limentest
from limentest import Gio, GLib

KDE_NAME = "org.freedesktop.impl.portal.desktop.limen"
PATH = "/org/freedesktop/portal/desktop"
IMPL = "org.freedesktop.impl.portal."
REF_FRONTEND = "/usr/libexec/xdg-desktop-portal"
REF_KDE = "/usr/lib/x86_64-linux-gnu/libexec/xdg-desktop-portal-kde"

_request_counter = [0]


def artifacts_dir():
    """Screenshots and logs that outlive the test: <build>/autotests/artifacts/kde."""
    d = os.path.join(limentest.BUILD_DIR, "autotests", "artifacts", "kde")
    os.makedirs(d, exist_ok=True)
    return d


def portal_file_path():
    return os.path.join(limentest.BUILD_DIR, "kde-backend", "limen.portal")


def read_portal_interfaces():
    with open(portal_file_path()) as f:
        for line in f:
            if line.startswith("Interfaces="):
                return {i for i in line.strip().split("=", 1)[1].split(";") if i}
    return set()


def start_kde(bus, *args, env=None):
    """limen-kde on the private bus, owning its name."""
    return bus.start("limen-kde", "--verbose", *args, env=env, wait_name=KDE_NAME)


def start_kde_x11(bus, x, **env):
    """limen-kde showing its dialogs on the Xvfb @x (Qt's xcb platform), @env added."""
    return start_kde(bus, env=dict(x.env(), QT_QPA_PLATFORM="xcb", **env))


def write_kdeglobals(bus, text, name="kdeglobals"):
    """Write (atomically, as KConfig does) a kdeglobals into the test's XDG_CONFIG_HOME."""
    path = os.path.join(bus.config_home, name)
    tmp = path + ".tmp"
    with open(tmp, "w") as f:
        f.write(text)
    os.rename(tmp, path)
    return path


def call_impl(bus, iface, method, args, signature, timeout=5000, conn=None, reply_type=None):
    return bus.call(IMPL + iface, method, args, signature, dest=KDE_NAME, path=PATH, timeout=timeout,
                    conn=conn, reply_type=reply_type)


def new_handle(bus, conn=None):
    """A request handle in the frontend's form, for the given connection."""
    conn = conn or bus.conn
    _request_counter[0] += 1
    sender = conn.get_unique_name()[1:].replace(".", "_")
    return f"/org/freedesktop/portal/desktop/request/{sender}/t{_request_counter[0]}"


class AsyncCall:
    """An impl method call left running (a dialog) while the test does something else."""

    def __init__(self, bus, iface, method, args, signature, timeout=60000, conn=None):
        self.result = None
        self.error = None
        self.done = False
        conn = conn or bus.conn
        conn.call(KDE_NAME, PATH, IMPL + iface, method, GLib.Variant(signature, tuple(args)), None,
                  Gio.DBusCallFlags.NONE, timeout, None, self._done)
        self.conn = conn

    def _done(self, conn, res):
        try:
            self.result = conn.call_finish(res).unpack()
        except GLib.Error as e:
            self.error = e
        self.done = True

    def wait(self, timeout=30):
        limentest.wait_until(lambda: self.done, timeout)
        assert self.done, "no reply from limen-kde"
        if self.error:
            raise self.error
        return self.result


def close_request(bus, handle, conn=None):
    bus.call(IMPL + "Request", "Close", None, None, dest=KDE_NAME, path=handle, conn=conn)


class Xvfb:
    """A private X server for one test; DISPLAY is set only in the env we hand out."""

    def __init__(self, size="1280x800x24"):
        # -displayfd: the server picks a free display itself, so parallel tests (and other
        # people's servers) never collide.
        r, w = os.pipe()
        self.proc = subprocess.Popen(["Xvfb", "-displayfd", str(w), "-screen", "0", size, "-nolisten", "tcp",
                                      # no reset when the last client leaves: a root
                                      # background set by a test survives
                                      "-noreset"],
                                     stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, pass_fds=(w,))
        os.close(w)
        data = b""
        deadline = time.time() + 15
        while not data.endswith(b"\n"):
            if time.time() > deadline or self.proc.poll() is not None:
                os.close(r)
                raise RuntimeError("Xvfb did not start")
            chunk = os.read(r, 16)
            if not chunk:
                break
            data += chunk
        os.close(r)
        self.display = ":" + data.decode().strip()

    def env(self):
        return {"DISPLAY": self.display}

    def run(self, *argv, timeout=30, check=True):
        env = dict(os.environ, DISPLAY=self.display)
        return subprocess.run(list(argv), env=env, capture_output=True, text=True, timeout=timeout,
                              check=check)

    def wait_window(self, name, timeout=None):
        """The X window id of the visible window titled @name (xdotool search --sync); by
        default waited for 20 s, 40 s in the sanitizer build (a first dialog starts slower)."""
        timeout = timeout or (40 if limentest.SANITIZE else 20)
        # Polled rather than --sync: a window that goes away while xdotool walks the
        # tree makes it die with BadWindow, which must not fail the test.
        deadline = time.time() + timeout
        while True:
            r = self.run("xdotool", "search", "--onlyvisible", "--name", name, timeout=timeout, check=False)
            ids = r.stdout.split()
            if r.returncode == 0 and ids:
                return int(ids[0])
            if time.time() > deadline:
                raise TimeoutError(f"no visible window named {name!r}: {r.stderr.strip()}")
            time.sleep(0.1)

    def focus(self, wid, settle=0.3):
        """Focus window @wid, then give the toolkit @settle seconds to take the focus."""
        self.run("xdotool", "windowfocus", "--sync", str(wid))
        time.sleep(settle)

    def press(self, wid, *keys, settle=0.3):
        """Focus window @wid (see focus()) and press @keys, xdotool key names, in turn."""
        self.focus(wid, settle)
        self.run("xdotool", "key", *keys)

    def answer(self, title, *keys, shot=None, shown=0.5, settle=0.3):
        """Wait for the window titled @title; with @shot, give it @shown seconds to draw and
        save a screenshot named @shot; then press @keys in it (see press())."""
        wid = self.wait_window(title)
        if shot:
            time.sleep(shown)
            self.screenshot(shot)
        self.press(wid, *keys, settle=settle)

    def geometry(self, wid):
        """Window @wid's (x, y, width, height) on the screen."""
        r = self.run("xdotool", "getwindowgeometry", "--shell", str(wid))
        g = dict(line.split("=", 1) for line in r.stdout.split())
        return int(g["X"]), int(g["Y"]), int(g["WIDTH"]), int(g["HEIGHT"])

    def type_text(self, text):
        """Type @text into the focused window, 15 ms a key."""
        self.run("xdotool", "type", "--delay", "15", text)

    def screenshot(self, name):
        path = os.path.join(artifacts_dir(), name)
        self.run("import", "-window", "root", path)
        return path

    def close(self):
        if getattr(self, "display", None):
            limentest.stop_daemons_on_display(self.display)
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout=5)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()


def start_reference_frontend(bus, env=None):
    """Debian's xdg-desktop-portal 1.16 using only our backend (XDG_DESKTOP_PORTAL_DIR holds
    a copy of our limen.portal; XDG_CURRENT_DESKTOP=KDE matches its UseIn=)."""
    portals = bus.env["XDG_DESKTOP_PORTAL_DIR"]
    shutil.copy(portal_file_path(), os.path.join(portals, "limen.portal"))
    e = {"XDG_CURRENT_DESKTOP": "KDE"}
    if env:
        e.update(env)
    return bus.start([REF_FRONTEND, "--verbose"], env=e, wait_name="org.freedesktop.portal.Desktop")


def install_kwin_desktop_file(bus):
    """KWin's ScreenShot2 serves only executables named by a .desktop file listing it in
    X-KDE-DBUS-Restricted-Interfaces: ours, pointing at the build tree's limen-kde."""
    apps = os.path.join(bus.data_home, "applications")
    os.makedirs(apps, exist_ok=True)
    src = os.path.join(limentest.BUILD_DIR, "kde-backend", "limen-kde.desktop")
    exe = os.path.realpath(limentest.binary("limen-kde"))
    with open(src) as f:
        lines = [f"Exec={exe}" if line.startswith("Exec=") else line.rstrip("\n") for line in f]
    path = os.path.join(apps, "limen-kde.desktop")
    with open(path, "w") as f:
        f.write("\n".join(lines) + "\n")
    return path


def start_kwin(bus, x):
    """kwin_x11 --replace on the test's Xvfb and bus, owning org.kde.KWin."""
    env = dict(x.env())
    env.update({"QT_QPA_PLATFORM": "xcb", "KWIN_COMPOSE": "O2", "LIBGL_ALWAYS_SOFTWARE": "1"})
    d = bus.start(["/usr/bin/kwin_x11", "--replace"], env=env, wait_name="org.kde.KWin", timeout=30)
    # ScreenShot2 is an effect: wait until it is on the bus.
    def ready():
        try:
            bus.introspect(dest="org.kde.KWin", path="/org/kde/KWin/ScreenShot2")
            return "org.kde.KWin.ScreenShot2" in bus.interfaces(dest="org.kde.KWin", path="/org/kde/KWin/ScreenShot2")
        except Exception:
            return False
    limentest.wait_until(ready, 20)
    return d


def set_root_pattern(x, path, size=(1280, 800)):
    """Paint the X root window: left half red, right half blue, a white band at the top,
    so a capture is never blank and a click has a known colour."""
    w, h = size
    x.run("convert", "-size", f"{w}x{h}", "xc:blue", "-fill", "red", "-draw", f"rectangle 0,0 {w // 2 - 1},{h - 1}",
          "-fill", "white", "-draw", f"rectangle 0,0 {w - 1},39", path)
    # display sets the root background and then exits 1 here (it finds no window to
    # manage): the colour is there all the same, as the tests' captures check.
    x.run("display", "-window", "root", path, check=False)


def png_info(path):
    """(width, height, number of distinct colours) of a PNG, through ImageMagick."""
    r = subprocess.run(["identify", "-format", "%w %h %k", path], capture_output=True, text=True, check=True)
    w, h, k = r.stdout.split()
    return int(w), int(h), int(k)


def show_pattern_window(bus, x, path):
    """The same pattern as a window: KWin composites windows, not the root background,
    so under KWin the pattern must be a client of its own."""
    env = dict(x.env())
    d = bus.start(["display", "-borderwidth", "0", "-geometry", "+0+0", "-title", "limen-pattern", path], env=env)
    x.wait_window("limen-pattern")
    time.sleep(0.5)
    return d
