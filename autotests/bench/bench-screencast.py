#!/usr/bin/python3
"""Screen casting through Limen (limen-portal + limen-kde, limen-documents as the permission
store) against Debian's xdg-desktop-portal 1.16 + xdg-desktop-portal-kde 5.27 (with
xdg-permission-store), in one run on one headless Plasma session: kwin_wayland --virtual,
PipeWire and WirePlumber (integration/wayland_session.py).

What a browser sharing a window sees: a host app asks ScreenCast for a window of 1280×800
(limen-wayland-probe, redrawing every frame) with a restore token, so that neither picker
opens (the token is put in each suite's permission store as its own frontend would after a
person allowed restoring; the reference's restore data is the QDataStream payload
xdg-desktop-portal-kde 5.27 writes). Per round and suite, started afresh:
  - first frame: the time from Start's Response signal to the first buffer with data at a
    PipeWire consumer (limen-pw-probe --frames) connected through the fd of
    OpenPipeWireRemote, so OpenPipeWireRemote, the connection and the link are included;
  - CPU: utime+stime (/proc/PID/stat) the suite's three processes spend per second while
    the stream runs (KWin produces the frames; the portal only brokers), with KWin's and
    the consumer's for scale, and the frames the consumer got.
Rounds alternate which suite goes first; medians; ratios Limen/reference.
Also limen-kde's PSS before any screen-sharing request, alone and once limen-portal runs in
front of it, and whether its Wayland module is mapped then (it must not be).
Whole-screen streams are not measured: KWin 5.27 records none on --virtual (for either
suite; kde-backend/wayland/README.md). LIMEN_BENCH_QUICK=1: 2 rounds of 3 s.
Prints figures and ratios; asserts nothing."""

import os
import select
import shutil
import statistics
import struct
import subprocess
import sys
import time
import uuid

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "integration"))
import kde_helpers as kh  # noqa: E402
import limentest  # noqa: E402
import request_helpers as rh  # noqa: E402
import wayland_session as ws  # noqa: E402
from limentest import GLib  # noqa: E402

QUICK = os.environ.get("LIMEN_BENCH_QUICK") == "1"
ROUNDS = int(os.environ.get("LIMEN_BENCH_ROUNDS", "2" if QUICK else "5"))
STREAM_SECONDS = 3.0 if QUICK else 8.0
SIZE = (1280, 800)
SC = "org.freedesktop.portal.ScreenCast"
PS = "org.freedesktop.impl.portal.PermissionStore"
PS_PATH = "/org/freedesktop/impl/portal/PermissionStore"
REF_KDE_NAME = "org.freedesktop.impl.portal.desktop.kde"
CLK_TCK = os.sysconf("SC_CLK_TCK")


# ---- the reference backend's restore data (Qt's QDataStream of a QVariantMap) ----------
def _qstring(s):
    b = s.encode("utf-16-be")
    return struct.pack(">I", len(b)) + b


def reference_restore_data(window_uuid):
    """("KDE", 1, <QDataStream {"outputs": [], "windows": [uuid]}>), as 5.27 stores it."""
    outputs = struct.pack(">IBI", 9, 0, 0)                                   # QVariantList, empty
    windows = struct.pack(">IBI", 11, 0, 1) + _qstring(window_uuid)          # QStringList
    payload = struct.pack(">I", 2) + _qstring("windows") + windows + _qstring("outputs") + outputs
    return GLib.Variant("(suv)", ("KDE", 1, GLib.Variant("ay", payload)))


def limen_restore_data(window_uuid):
    return GLib.Variant("(suv)", ("KDE", 1, GLib.Variant("a{sv}", {"sources": GLib.Variant(
        "as", ["window:" + window_uuid])})))


# ---- /proc ------------------------------------------------------------------------------
def cpu_seconds(pid):
    """utime+stime of @pid (all its threads), in seconds; /proc counts in 10 ms ticks."""
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / CLK_TCK


def run_seconds(pid):
    """Time on a CPU of all of @pid's threads (schedstat, nanoseconds): what utime+stime
    counts, without the tick's granularity."""
    total = 0
    for tid in os.listdir(f"/proc/{pid}/task"):
        try:
            with open(f"/proc/{pid}/task/{tid}/schedstat") as f:
                total += int(f.read().split()[0])
        except (FileNotFoundError, ProcessLookupError):
            pass   # a thread that ended meanwhile
    return total / 1e9


def pss_kib(pid):
    with open(f"/proc/{pid}/smaps_rollup") as f:
        for line in f:
            if line.startswith("Pss:"):
                return int(line.split()[1])
    return 0


def wayland_module_mapped(pid):
    with open(f"/proc/{pid}/maps") as f:
        return any("liblimen-kde-wayland" in line for line in f)


# ---- the two suites ---------------------------------------------------------------------
class Suite:
    def __init__(self, bus, session, name):
        self.bus, self.session, self.name = bus, session, name
        self.portals = os.path.join(bus.root, "portals-" + name)
        os.makedirs(self.portals, exist_ok=True)
        self.daemons = []

    def env(self, **extra):
        return dict({"XDG_CURRENT_DESKTOP": "KDE", "XDG_DESKTOP_PORTAL_DIR": self.portals,
                     "WAYLAND_DISPLAY": ws.SOCKET, "QT_QPA_PLATFORM": "wayland", "DISPLAY": ""}, **extra)

    def stop(self):
        for d in reversed(self.daemons):
            d.stop()
        self.daemons = []
        for name in ("org.freedesktop.portal.Desktop", PS):
            self.bus.wait_for_name_gone(name)

    def seed_token(self, window_uuid):
        token = str(uuid.uuid4())
        self.bus.call(PS, "SetPermission", ("screencast", True, token, "", ["yes"]), "(sbssas)", dest=PS,
                      path=PS_PATH)
        self.bus.call(PS, "SetValue", ("screencast", True, token, self.restore_data(window_uuid)), "(sbsv)",
                      dest=PS, path=PS_PATH)
        return token


class Limen(Suite):
    label = "Limen"

    def __init__(self, bus, session):
        super().__init__(bus, session, "limen")
        shutil.copy(kh.portal_file_path(), os.path.join(self.portals, "limen.portal"))
        conf = os.path.join(bus.config_home, "xdg-desktop-portal")
        os.makedirs(conf, exist_ok=True)
        with open(os.path.join(conf, "kde-portals.conf"), "w") as f:
            f.write("[preferred]\ndefault=limen\n")
        self.pss = []
        self.after = []

    def start(self):
        store = rh.start_documents(self.bus)
        kde = kh.start_kde(self.bus, env=self.env())
        # As in a Plasma session, limen-kde maps the Qt shim's libraries in a thread after
        # start-up: measured once that is done, the idle figure is steady.
        limentest.wait_until(lambda: "Qt shim preloaded" in kde.output(), 15)
        alone = (pss_kib(kde.pid), wayland_module_mapped(kde.pid))
        portal = self.bus.start_portal(env=self.env())
        time.sleep(1.0)
        self.pss.append((alone, (pss_kib(kde.pid), wayland_module_mapped(kde.pid))))
        self.daemons = [store, kde, portal]

    def stop(self):
        # After a stream: the Wayland module is loaded, and Qt for the notification.
        self.after.append((pss_kib(self.daemons[1].pid), wayland_module_mapped(self.daemons[1].pid)))
        super().stop()

    def restore_data(self, window_uuid):
        return limen_restore_data(window_uuid)


class Reference(Suite):
    label = "reference"

    def __init__(self, bus, session):
        super().__init__(bus, session, "reference")
        shutil.copy("/usr/share/xdg-desktop-portal/portals/kde.portal", self.portals)

    def start(self):
        store = self.bus.start(["/usr/libexec/xdg-permission-store", "--replace"], wait_name=PS)
        kde = self.bus.start([kh.REF_KDE], env=self.env(), wait_name=REF_KDE_NAME, timeout=30)
        portal = self.bus.start([kh.REF_FRONTEND], env=self.env(), wait_name="org.freedesktop.portal.Desktop")
        self.daemons = [store, kde, portal]

    def restore_data(self, window_uuid):
        return reference_restore_data(window_uuid)


# ---- one measured stream ----------------------------------------------------------------
class Caller(rh.Client):
    def response(self, handle_token, call):
        """Call @call (a function of the options), then wait for its Response; the
        monotonic time the signal was read, and its arguments."""
        got = {}
        path = self.handle_path(handle_token)
        sub = self.conn.signal_subscribe(None, "org.freedesktop.portal.Request", "Response", path, None, 0,
                                         lambda *a: got.setdefault("r", (time.monotonic(), a[5].unpack())))
        try:
            call({"handle_token": GLib.Variant("s", handle_token)})
            ctx = GLib.MainContext.default()
            deadline = time.monotonic() + 30
            while "r" not in got and time.monotonic() < deadline:
                ctx.iteration(True) if ctx.pending() else time.sleep(0.0005)
        finally:
            self.conn.signal_unsubscribe(sub)
        if "r" not in got:
            raise TimeoutError(f"no Response on {path}")
        return got["r"]

    def sc(self, method, args, sig):
        return self.bus.call(SC, method, args, sig, conn=self.conn, timeout=30000)


def read_lines(proc, until, timeout):
    """Lines of @proc's stdout until one starts with @until (returned last) or @timeout
    passes with nothing more to read."""
    lines, buf = [], b""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        ready, _, _ = select.select([proc.stdout], [], [], max(0.0, deadline - time.monotonic()))
        if not ready:
            break
        chunk = os.read(proc.stdout.fileno(), 65536)
        if not chunk:
            break
        buf += chunk
        *done, buf = buf.split(b"\n")
        for line in done:
            lines.append(line.decode())
            if line.decode().startswith(until):
                return lines
    return lines


def stream_once(bus, suite, window_uuid, kwin_pid):
    token = suite.seed_token(window_uuid)
    c = Caller(bus)
    try:
        _, (resp, res) = c.response("c", lambda o: c.sc("CreateSession", (dict(o, session_handle_token=GLib.Variant(
            "s", "bench")),), "(a{sv})"))
        session = res["session_handle"]
        _, (resp, _) = c.response("s", lambda o: c.sc("SelectSources", (session, dict(
            o, types=GLib.Variant("u", 2), persist_mode=GLib.Variant("u", 2), restore_token=GLib.Variant(
                "s", token))), "(oa{sv})"))
        t_response, (resp, res) = c.response("st", lambda o: c.sc("Start", (session, "", o), "(osa{sv})"))
        if resp != 0 or not res.get("streams"):
            return {"error": f"Start answered {resp} {res}; the backend said: {suite.daemons[1].output()[-600:]!r}"}
        node, props = res["streams"][0]
        t_call = time.monotonic()
        reply, fds = c.conn.call_with_unix_fd_list_sync("org.freedesktop.portal.Desktop", limentest.PORTAL_PATH, SC,
                                                         "OpenPipeWireRemote", GLib.Variant("(oa{sv})", (session, {})),
                                                         None, 0, 10000, None, None)
        fd = fds.steal_fds()[reply.unpack()[0]]
        t_remote = time.monotonic()
        # As version 6 tells consumers: the serial where there is one (LIMEN_BENCH_TARGET=node: the id).
        by_serial = "pipewire-serial" in props and os.environ.get("LIMEN_BENCH_TARGET") != "node"
        target = f"serial:{props['pipewire-serial']}" if by_serial else str(node)
        probe = subprocess.Popen([os.path.join(limentest.BUILD_DIR, "autotests", "limen-pw-probe"), "--frames",
                                  str(fd), target, "0", str(int(STREAM_SECONDS + 30))],
                                 pass_fds=[fd], env=bus.env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        os.close(fd)
        try:
            lines = read_lines(probe, "frame ", 20)
            if not lines or not lines[-1].startswith("frame "):
                probe.kill()
                return {"error": f"no frame within 20 s ({lines}; {probe.stderr.read().decode()[-300:]}; "
                                 f"wireplumber {'up' if suite.session.wireplumber.alive() else 'gone'}, "
                                 f"KWin {'up' if suite.session.kwin.alive() else 'gone'})"}
            first = float(lines[-1].split()[1])
            # Where the time went: the consumer connected, was linked (paused), then streamed.
            states = {line.split()[1]: float(line.split()[2]) for line in lines if line.startswith("state ")}
            size = tuple(int(x) for x in lines[-1].split()[2:4])
            # Past the first frames and what follows Start once (limen-kde loads its Qt shim
            # for the notification that sharing runs): the steady state is measured.
            time.sleep(2.0)
            pids = [d.pid for d in suite.daemons]
            before = [cpu_seconds(p) for p in pids + [kwin_pid, probe.pid]]
            before_ns = [run_seconds(p) for p in pids]
            read_lines(probe, "\0", 0.01)   # what came before the measured time
            t0 = time.monotonic()
            time.sleep(STREAM_SECONDS)
            frames = len([line for line in read_lines(probe, "\0", 0.05) if line.startswith("frame ")])
            elapsed = time.monotonic() - t0
            after = [cpu_seconds(p) for p in pids + [kwin_pid, probe.pid]]
            after_ns = [run_seconds(p) for p in pids]
        finally:
            probe.kill()
            probe.wait()
        used = [(a - b) / elapsed for a, b in zip(after, before)]
        run = [(a - b) / elapsed for a, b in zip(after_ns, before_ns)]
        bus.call("org.freedesktop.portal.Session", "Close", path=session, conn=c.conn)
        return {"first_frame": first - t_response, "remote": t_remote - t_call,
                "paused": states.get("paused", first) - t_response,
                "streaming": states.get("streaming", first) - t_response,
                "suite_cpu": sum(used[:3]),
                "per_process": used[:3], "suite_run": sum(run), "per_process_run": run,
                "kwin_cpu": used[3], "consumer_cpu": used[4], "fps": frames / elapsed, "size": size}
    finally:
        c.close()


def main():
    missing = ws.missing_packages() + [p for p in (kh.REF_FRONTEND, kh.REF_KDE, "/usr/libexec/xdg-permission-store")
                                       if not os.path.exists(p)]
    if missing:
        print("bench-screencast: not installed: " + ", ".join(missing) + "; nothing measured")
        return 0
    bus = limentest.Bus()
    results = {"Limen": [], "reference": []}
    try:
        import pytest  # WaylandSession skips through pytest when something is missing
        try:
            session = ws.WaylandSession(bus)
        except pytest.skip.Exception as e:
            print(f"bench-screencast: {e}; nothing measured")
            return 0
        session.probe("Bench stream", (0x20, 0xc0, 0x40), SIZE)
        win = session.wait_window("Bench stream")
        suites = [Limen(bus, session), Reference(bus, session)]
        for i in range(ROUNDS):
            for suite in suites if i % 2 == 0 else reversed(suites):
                suite.start()
                try:
                    r = stream_once(bus, suite, win["uuid"], session.kwin.pid)
                finally:
                    suite.stop()
                results[suite.label].append(r)
                print(f"round {i + 1} {suite.label:9s} " + (r["error"] if "error" in r else
                      f"first frame {r['first_frame'] * 1000:6.1f} ms (OpenPipeWireRemote {r['remote'] * 1000:.1f} ms, "
                      f"linked {r['paused'] * 1000:.0f} ms, streaming {r['streaming'] * 1000:.0f} ms), "
                      f"suite CPU {r['suite_cpu'] * 1000:5.1f} ms/s (schedstat {r['suite_run'] * 1e6:.0f} µs/s: "
                      f"portal, backend, store {', '.join('%.0f' % (x * 1e6) for x in r['per_process_run'])}), "
                      f"KWin {r['kwin_cpu'] * 1000:.0f} ms/s, consumer {r['consumer_cpu'] * 1000:.0f} ms/s, "
                      f"{r['fps']:.0f} frames/s of {r['size'][0]}x{r['size'][1]}"), flush=True)
        report(results, suites[0].pss, suites[0].after)
    finally:
        bus.close()
    return 0


def report(results, pss, after):
    def med(label, key):
        values = [r[key] for r in results[label] if "error" not in r]
        return statistics.median(values) if values else None

    print()
    for label in ("Limen", "reference"):
        ff, cpu, run, kwin, fps = (med(label, k) for k in ("first_frame", "suite_cpu", "suite_run", "kwin_cpu", "fps"))
        if ff is None:
            print(f"{label:9s} no stream delivered frames")
            continue
        print(f"{label:9s} median first frame {ff * 1000:6.1f} ms, suite CPU {cpu * 1000:5.2f} ms per s of stream "
              f"(utime+stime; schedstat {run * 1e6:.0f} µs/s), "
              f"KWin {kwin * 1000:.0f} ms/s, {fps:.0f} frames/s ({len(results[label])} rounds)")
    ours, ref = (med("Limen", "first_frame"), med("reference", "first_frame"))
    if ours and ref:
        cpu_o, cpu_r = med("Limen", "suite_run"), med("reference", "suite_run")
        ratio = f"{cpu_o / cpu_r:.2f}x (schedstat)" if cpu_r else "n/a (reference 0)"
        print(f"ratio Limen/reference: first frame {ours / ref:.2f}x, suite CPU {ratio}")
    if pss:
        alone = statistics.median(p[0][0] for p in pss)
        fronted = statistics.median(p[1][0] for p in pss)
        def mapped(i):
            return "YES" if any(p[i][1] for p in pss) else "no"
        print(f"limen-kde idle PSS before any screen-sharing request (Qt shim preloaded): {alone / 1024:.1f} MiB alone "
              f"(Wayland module mapped: {mapped(0)}), {fronted / 1024:.1f} MiB with limen-portal in front "
              f"(mapped: {mapped(1)})")
    if after:
        print(f"limen-kde PSS after one stream: {statistics.median(a[0] for a in after) / 1024:.1f} MiB "
              f"(Wayland module mapped: {'yes' if all(a[1] for a in after) else 'NO'})")


if __name__ == "__main__":
    sys.exit(main())
