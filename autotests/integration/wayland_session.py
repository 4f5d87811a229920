"""A headless Plasma Wayland session for screen-sharing tests: PipeWire and WirePlumber
on the test's private bus, kwin_wayland --virtual, limen-kde with its .desktop file (KWin
offers its restricted protocols only to the executable that file names), a probe window
of a known colour that reports its input and uses the clipboard, and a GStreamer
consumer of PipeWire streams. Reusable by any test (the frontend's too):

    session = wayland_session.WaylandSession(bus)      # skips if a package is missing
    kde = session.start_kde()
    probe = session.probe("Probe", (0x20, 0xc0, 0x40))
    frames = session.consume(node_id, count=3)          # PNG paths of received frames

Frames (see kde-backend/wayland/README.md): with kwin_wayland --virtual, KWin 5.27 makes
a screen's stream (node, format, memfd buffers, link "streaming") but never records a
frame into it (only its DRM and nested-Wayland backends emit the output damage that
screen streams record on); a WINDOW stream (KWin records on the window's damage) delivers
frames. So frame tests stream the probe window, which redraws itself every frame."""

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

KWIN = "/usr/bin/kwin_wayland"
SOCKET = "wayland-limen-cast"
NEEDED = {
    "kwin_wayland": KWIN,
    "pipewire": "/usr/bin/pipewire",
    "wireplumber": "/usr/bin/wireplumber",
    "gst-launch-1.0": "/usr/bin/gst-launch-1.0",
}


def missing_packages():
    """What of the session cannot run here (a package is not installed)."""
    missing = [name for name, path in NEEDED.items() if not os.path.exists(path)]
    gst = subprocess.run(["gst-inspect-1.0", "pipewiresrc"], capture_output=True) if shutil.which("gst-inspect-1.0") \
        else None
    if gst is None or gst.returncode != 0:
        missing.append("gstreamer1.0-pipewire")
    return missing


class Probe:
    """limen-wayland-probe: a window of @colour; lines() are what it reported."""

    def __init__(self, session, title, colour, size=None, app_id=None):
        exe = os.path.join(limentest.BUILD_DIR, "autotests", "limen-wayland-probe")
        hexcolour = "%02x%02x%02x" % colour
        self.title = title
        argv = [exe, title, hexcolour] + (["%dx%d" % size] if size else [])
        env = dict(session.client_env(), **({"LIMEN_PROBE_APP_ID": app_id} if app_id else {}))
        self.proc = subprocess.Popen(argv, env=env, stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        self.seen = []
        self.partial = b""
        self.wait_for("MAPPED")

    def _read(self, timeout):
        """Read what the probe wrote within @timeout into .seen (whole lines). Raw reads:
        a buffered readline() would strand lines in Python's buffer, unseen by select()."""
        ready, _, _ = select.select([self.proc.stdout], [], [], timeout)
        if not ready:
            return False
        chunk = os.read(self.proc.stdout.fileno(), 65536)
        if not chunk:
            raise RuntimeError(f"limen-wayland-probe ended: {self.proc.stderr.read().decode()}")
        self.partial += chunk
        *lines, self.partial = self.partial.split(b"\n")
        self.seen.extend(line.decode() for line in lines)
        return True

    def wait_for(self, prefix, timeout=15):
        """The first unclaimed line starting with @prefix (read earlier or arriving within
        @timeout); it is claimed, the other lines stay."""
        deadline = time.time() + timeout
        while True:
            for i, line in enumerate(self.seen):
                if line.startswith(prefix):
                    del self.seen[i]
                    return line
            left = deadline - time.time()
            if left <= 0 or not self._read(left) and time.time() >= deadline:
                raise TimeoutError(f"probe never said {prefix!r}; said {self.seen}")

    def drain(self, seconds=0.3):
        end = time.time() + seconds
        while time.time() < end:
            self._read(max(0.0, end - time.time()))
        return list(self.seen)

    def command(self, text):
        self.proc.stdin.write(text.encode() + b"\n")
        self.proc.stdin.flush()

    def close(self):
        if self.proc.poll() is None:
            self.proc.stdin.close()
            try:
                self.proc.wait(timeout=5)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()


class WaylandSession:
    def __init__(self, bus, width=1280, height=800, outputs=1):
        missing = missing_packages()
        if missing:
            pytest.skip("not installed: " + ", ".join(missing))
        self.bus = bus
        self.width, self.height = width, height
        self.probes = []
        # PipeWire finds its socket in XDG_RUNTIME_DIR; WirePlumber talks to the bus.
        self.pipewire = bus.start(["/usr/bin/pipewire"])
        assert limentest.wait_until(lambda: os.path.exists(os.path.join(bus.runtime_dir, "pipewire-0")), 10)
        self.wireplumber = bus.start(["/usr/bin/wireplumber"])
        # /usr/bin/kwin_wayland carries a file capability this kernel refuses to exec: a
        # copy without it, keeping the name (KWin's Qt platform plugin checks it).
        bindir = os.path.join(bus.root, "kwin-bin")
        os.makedirs(bindir, exist_ok=True)
        exe = os.path.join(bindir, "kwin_wayland")
        shutil.copy(KWIN, exe)
        env = {"WAYLAND_DISPLAY": "", "DISPLAY": "", "QT_QPA_PLATFORM": "", "LIBGL_ALWAYS_SOFTWARE": "1",
               "QT_LOGGING_RULES": "kwin_screencast.debug=true;kwin_scripting.debug=true",
               # KWin's switch for test compositors: ScreenShot2 without the .desktop check.
               "KWIN_SCREENSHOT_NO_PERMISSION_CHECKS": "1"}
        self.kwin = bus.start([exe, "--virtual", "--width", str(width), "--height", str(height), "--socket", SOCKET,
                               "--output-count", str(outputs),
                               "--no-lockscreen", "--no-global-shortcuts", "--no-kactivities"],
                              env=env, wait_name="org.kde.KWin", timeout=30)
        assert limentest.wait_until(lambda: os.path.exists(os.path.join(bus.runtime_dir, SOCKET)), 20)
        # KWin reads X-KDE-Wayland-Interfaces from the .desktop file naming limen-kde.
        kh.install_kwin_desktop_file(bus)

    def run_script(self, body):
        """Run a KWin script @body (`out(text)` reports) and return what it reported."""
        marker = uuid.uuid4().hex
        script = os.path.join(self.bus.root, f"script-{marker}.js")
        with open(script, "w") as f:
            f.write(f'function out(text) {{ print("{marker} " + text); }}\n{body}\nout("END");\n')
        self.bus.call("org.kde.kwin.Scripting", "loadScript", (script, marker), "(ss)", dest="org.kde.KWin",
                      path="/Scripting")
        self.bus.call("org.kde.kwin.Scripting", "start", dest="org.kde.KWin", path="/Scripting")
        lines = []

        def done():
            lines[:] = [line.split(marker + " ", 1)[1] for line in self.kwin.output().splitlines()
                        if marker + " " in line]
            return "END" in lines

        assert limentest.wait_until(done, 10), "KWin did not run the script"
        self.bus.call("org.kde.kwin.Scripting", "unloadScript", (marker,), "(s)", dest="org.kde.KWin",
                      path="/Scripting")
        return [line for line in lines if line != "END"]

    def windows(self):
        """Every managed window: caption, uuid (internalId), geometry, pid, active."""
        return [json.loads(line) for line in self.run_script("""
var list = workspace.clientList();
for (var i = 0; i < list.length; i++) {
  var w = list[i];
  out(JSON.stringify({caption: w.caption, uuid: w.internalId.toString(), x: w.x, y: w.y, width: w.width,
                      height: w.height, pid: w.pid, active: w.active}));
}
""")]

    def wait_window(self, caption, timeout=20):
        found = []

        def look():
            found[:] = [w for w in self.windows() if w["caption"] == caption]
            return bool(found)

        assert limentest.wait_until(look, timeout), f"no window {caption!r}"
        return found[0]

    def activate(self, caption, timeout=10):
        """Make the window titled @caption the active one (keyboard focus), as a click would;
        of several (one may be closing), the newest. Tried until KWin has one: a window of
        that title that wait_window saw may have been the previous one, closing, with the
        new one not mapped yet."""
        script = f"""
var list = workspace.clientList(), found = null;
for (var i = 0; i < list.length; i++)
  if (list[i].caption == {json.dumps(caption)}) found = list[i];
if (found) {{ workspace.activeClient = found; out("ok"); }}
"""
        assert limentest.wait_until(lambda: "ok" in self.run_script(script), timeout), \
            f"no window {caption!r} to activate"

    def screenshot(self, path):
        """The workspace through KWin's ScreenShot2 (raw pixels on a pipe) as PNG."""
        r, w = os.pipe()
        try:
            meta = self.bus.call("org.kde.KWin.ScreenShot2", "CaptureWorkspace", ({}, 0), "(a{sv}h)",
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
        raw = path + ".bgra"
        with open(raw, "wb") as f:
            f.write(b"".join(data[y * stride:y * stride + width * 4] for y in range(height)))
        subprocess.run(["convert", "-size", f"{width}x{height}", "-depth", "8", f"bgra:{raw}", "-alpha", "off", path],
                       check=True)
        os.unlink(raw)
        return path

    def client_env(self):
        return dict(self.bus.env, WAYLAND_DISPLAY=SOCKET, DISPLAY="", QT_QPA_PLATFORM="wayland")

    def start_kde(self, **env):
        return kh.start_kde(self.bus, env=dict({"WAYLAND_DISPLAY": SOCKET, "DISPLAY": "",
                                                "QT_QPA_PLATFORM": "wayland"}, **env))

    def probe(self, title, colour, size=None, app_id=None):
        """A probe window of @colour, 400×300 or @size (width, height), of app @app_id."""
        p = Probe(self, title, colour, size, app_id)
        self.probes.append(p)
        return p

    def consume(self, node, count=3, timeout=30, name="frame"):
        """Receive @count frames of PipeWire node @node with GStreamer's pipewiresrc; the
        last one as PNG (None when none came within @timeout)."""
        out = os.path.join(self.bus.root, f"{name}-{node}.png")
        # snapshot=false + num-buffers: every buffer is encoded, the file ends with the last.
        argv = ["gst-launch-1.0", "-q", "pipewiresrc", f"path={node}", "always-copy=true", f"num-buffers={count}",
                "!", "videoconvert", "!", "video/x-raw,format=RGB", "!", "pngenc", "snapshot=false", "!",
                "multifilesink", f"location={out}.%d"]
        try:
            subprocess.run(argv, env=self.bus.env, timeout=timeout, capture_output=True)
        except subprocess.TimeoutExpired:
            return None
        frames = sorted((f for f in os.listdir(self.bus.root) if f.startswith(os.path.basename(out) + ".")),
                        key=lambda f: int(f.rsplit(".", 1)[1]))
        return os.path.join(self.bus.root, frames[-1]) if frames else None

    def close(self):
        for p in self.probes:
            p.close()
