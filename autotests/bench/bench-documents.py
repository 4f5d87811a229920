#!/usr/bin/python3
"""Benchmark limen-documents against Debian's xdg-document-portal + xdg-permission-store,
both measured in this same run on private buses. Prints figures and ratios; asserts nothing
about speed (that is the reader's job).

  LIMEN_BENCH_MB       size of the sequential file (default 512)
  LIMEN_BENCH_QUICK=1  smaller loops for a smoke run
  LIMEN_BENCH_ONLY     comma-separated groups to run (default all): warm, cold, write,
                       stat, open, add, full, readdir, ps, store, stress
  LIMEN_BENCH_STORE    store sizes of the group `store` (default 1000,10000,100000;
                       quick: 1000,10000), see bench_documents_store.py

Listings are taken twice: by os.listdir() from this process, and by `ls` the program, a new
process each time, as a person lists a folder. They differ in what the gate costs: the mount
identifies each process at its first walk through a gate and keeps the answer for that
process only, so a new `ls` pays an identification where this process pays it once.

The group `stress` times the reference's own stress test of the document filesystem
(test-document-fuse.sh from Debian's xdg-desktop-portal-tests, as TEST_IN_CI runs it: the
single-threaded pass, then ten workers in parallel) against each stack in turn, in a mount
namespace where limen-documents is bound over the reference's binaries (root only).

Writes, open+close and Add are measured with both stacks mounted at once, in alternating
rounds (see paired(); Add in short rounds from a new client each, and in long streams from one
client, beside two services that answer Add and do nothing else, the floors a daemon on sd-bus
or GDBus cannot go below); the other groups run one stack after the other.

Reads are measured warm (the file is in the page cache: for the mount, the FUSE inode's
own cache, which limen keeps across opens while the file is unchanged) and cold (all
caches dropped, so every byte comes from the disk and, through the mount, through the
daemon). Each is the median of READ_REPS runs, native and mount alternating, because the
machine is shared. The PermissionStore figures are printed beside an echo server on the
same bus (GDBus, keeps the a{sas} it gets and returns it): that is the floor any GDBus
daemon behind dbus-daemon pays for carrying the message; the rest is ours. They are taken
twice: with a GDBus client (Python gi, as flatpak and xdg-desktop-portal are GDBus
clients), which itself spends ~10 ms writing and ~25 ms reading 20,000 apps, and with
store-client (sd-bus, reads in place), so what the store and the bus cost shows on its own;
Add and AddFull are timed with both clients too (Python's GDBus costs ~0.3 ms of CPU per call)."""

import json
import os
import re
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "integration"))

import limentest  # noqa: E402
import documents_helpers as dh  # noqa: E402
from bench_documents_store import store_curve  # noqa: E402
from gi.repository import Gio, GLib  # noqa: E402

QUICK = os.environ.get("LIMEN_BENCH_QUICK") == "1"
MB = int(os.environ.get("LIMEN_BENCH_MB", "64" if QUICK else "512"))
N_STAT = 5000 if QUICK else 50000
N_OPEN = 2000 if QUICK else 20000
N_ADD = 200 if QUICK else 1000
ADD_PER_ROUND = 50 if QUICK else 100
N_STREAM = 300 if QUICK else 1000
STREAM_ROUNDS = 3 if QUICK else 5
N_FULL = 1000 if QUICK else 10000
N_READDIR = 50 if QUICK else 200
N_LS = 100 if QUICK else 300
STRESS_ROUNDS = 1 if QUICK else 2
STRESS_SCRIPT = "/usr/libexec/installed-tests/xdg-desktop-portal/test-document-fuse.sh"
N_APPS = 20000
READ_REPS = 3
WRITE_REPS = 5
OPEN_ROUNDS = 10
PS_REPS = 3
APP = "org.example.Bench"
CHUNK = 1 << 20
ONLY = set(filter(None, os.environ.get("LIMEN_BENCH_ONLY", "").split(",")))


def want(group):
    return not ONLY or group in ONLY

# The echo server for the PermissionStore floor: GDBus, no unpacking, no storage.
ECHO_SERVER = r"""
import sys
from gi.repository import Gio, GLib
XML = ('<node><interface name="org.freedesktop.impl.portal.PermissionStore">'
       '<method name="Set"><arg type="s" direction="in"/><arg type="b" direction="in"/>'
       '<arg type="s" direction="in"/><arg type="a{sas}" direction="in"/><arg type="v" direction="in"/></method>'
       '<method name="Lookup"><arg type="s" direction="in"/><arg type="s" direction="in"/>'
       '<arg type="a{sas}" direction="out"/><arg type="v" direction="out"/></method></interface></node>')
conn = Gio.DBusConnection.new_for_address_sync(sys.argv[1], Gio.DBusConnectionFlags.AUTHENTICATION_CLIENT |
                                               Gio.DBusConnectionFlags.MESSAGE_BUS_CONNECTION, None, None)
stored = {}
def call(conn, sender, path, iface, method, params, inv):
    if method == "Set":
        stored[params.get_child_value(2).get_string()] = GLib.Variant.new_tuple(params.get_child_value(3),
                                                                                 params.get_child_value(4))
        inv.return_value(None)
    else:
        inv.return_value(stored[params.get_child_value(1).get_string()])
conn.register_object("/echo", Gio.DBusNodeInfo.new_for_xml(XML).interfaces[0], call, None, None)
Gio.bus_own_name_on_connection(conn, "org.limen.BenchEcho", 0, lambda *a: print("owned", flush=True), None)
GLib.MainLoop().run()
"""


def pss_kib(pid):
    with open(f"/proc/{pid}/smaps_rollup") as f:
        for line in f:
            if line.startswith("Pss:"):
                return int(line.split()[1])
    return 0


def drop_caches():
    subprocess.run(["sh", "-c", "sync; echo 3 > /proc/sys/vm/drop_caches"], stderr=subprocess.DEVNULL)


def seq_read(path):
    fd = os.open(path, os.O_RDONLY)
    t = time.monotonic()
    n = 0
    while True:
        b = os.read(fd, CHUNK)
        if not b:
            break
        n += len(b)
    dt = time.monotonic() - t
    os.close(fd)
    return n / dt / 1e6


def seq_write(path, mb, mode=os.O_WRONLY):
    buf = b"\xa5" * CHUNK
    fd = os.open(path, mode | os.O_TRUNC)
    t = time.monotonic()
    for _ in range(mb):
        os.write(fd, buf)
    os.fsync(fd)
    dt = time.monotonic() - t
    os.close(fd)
    return mb * CHUNK / dt / 1e6


def median(values):
    v = sorted(values)
    return v[len(v) // 2]


def run_ls(path):
    """`ls PATH`, the program: a new process, as a person lists a folder."""
    subprocess.run(["ls", path], stdout=subprocess.DEVNULL, check=True)


def timed_loop(fn, n):
    t = time.monotonic()
    for _ in range(n):
        fn()
    return n / (time.monotonic() - t)


def start(bus, which):
    if which == "limen":
        # Without --verbose (the tests' default): the reference logs nothing either.
        d = bus.start("limen-documents", wait_name=dh.DOCS_NAME)
        dh.get_mount_point(bus)      # the first call on Documents mounts, as flatpak run makes it
        deadline = time.time() + 10
        while not dh.is_mounted(dh.mountpoint(bus)) and time.time() < deadline:
            time.sleep(0.01)
        return [d.pid]
    procs = []
    for exe in ("/usr/libexec/xdg-permission-store", "/usr/libexec/xdg-document-portal"):
        d = bus.start([exe, "--replace"], wait_name=dh.PS_NAME if "permission" in exe else dh.DOCS_NAME)
        procs.append(d.pid)
    deadline = time.time() + 10
    while not dh.is_mounted(dh.mountpoint(bus)) and time.time() < deadline:
        time.sleep(0.01)
    return procs


def add_call(bus, path, conn):
    fd = os.open(path, os.O_PATH)
    try:
        return dh.docs(bus, "Add", (0, False, True), "(hbb)", fds=[fd], conn=conn)[0]
    finally:
        os.close(fd)


def ps_set_lookup(bus, dest, path, apps, reps):
    """Median Set and Lookup round trips (ms) of one entry holding @apps, a fresh id each time."""
    sets, lookups = [], []
    for i in range(reps):
        v = GLib.Variant("(sbsa{sas}v)", ("bench", True, f"entry{i}", apps, GLib.Variant("v", GLib.Variant("b", True))))
        t = time.monotonic()
        bus.conn.call_sync(dest, path, dh.PS_IFACE, "Set", v, None, 0, 120000, None)
        sets.append((time.monotonic() - t) * 1000)
        t = time.monotonic()
        bus.conn.call_sync(dest, path, dh.PS_IFACE, "Lookup", GLib.Variant("(ss)", ("bench", f"entry{i}")),
                           None, 0, 120000, None)
        lookups.append((time.monotonic() - t) * 1000)
    return median(sets), median(lookups)


STORE_CLIENT = os.path.join(limentest.BUILD_DIR, "autotests", "store-client")
ADD_FLOOR = os.path.join(limentest.BUILD_DIR, "autotests", "add-floor")


def store_client(bus, *args, stdin=None):
    """store-client's key=value output (sd-bus: marshals and reads in place, a few µs per
    call, so the figure is the bus's and the daemon's, not a client library's), a string
    saying why it failed, or None when the build has no store-client (no libsystemd)."""
    if not os.path.exists(STORE_CLIENT):
        return None
    out = subprocess.run([STORE_CLIENT, *map(str, args)], env=bus.env, input=stdin,
                         capture_output=True, text=True, timeout=900)
    if out.returncode != 0:
        return f"failed: {out.stderr.strip()[:60]}"
    return dict(x.split("=") for x in out.stdout.split())


def lean_set_lookup(bus, n_apps, reps):
    """Median Set and Lookup (ms) of an entry of @n_apps apps through store-client."""
    kv = store_client(bus, "ps", dh.PS_NAME, dh.PS_PATH, n_apps, reps)
    if not isinstance(kv, dict):
        return kv and (kv, kv)
    if int(kv["apps"]) != n_apps:
        return (f"failed: Lookup gave {kv['apps']} apps",) * 2
    return float(kv["set_ms"]), float(kv["lookup_ms"])


def lean_add(bus, files, per_call=None, first=False):
    """Seconds for Add of each of @files (or AddFull, @per_call a call) through store-client;
    with @first, (seconds, seconds of the first call)."""
    args = ("add", dh.DOCS_NAME, dh.DOCS_PATH) if per_call is None else \
        ("addfull", dh.DOCS_NAME, dh.DOCS_PATH, APP, per_call)
    kv = store_client(bus, *args, stdin="".join(f + "\n" for f in files))
    if not isinstance(kv, dict):
        return kv
    if int(kv["docs"]) != len(files):
        return f"failed: {kv['docs']} documents for {len(files)} files"
    return (float(kv["seconds"]), float(kv["first_ms"]) / 1000) if first else float(kv["seconds"])


def run(which):
    r = {}
    bus = limentest.Bus()
    try:
        pids = start(bus, which)
        work = os.path.join(bus.root, "work")
        os.makedirs(work)
        time.sleep(1.0)
        r["idle PSS KiB"] = sum(pss_kib(p) for p in pids)

        big = os.path.join(work, "big.bin")
        with open(big, "wb") as f:
            for _ in range(MB):
                f.write(os.urandom(1024) * 1024)
        doc = dh.add(bus, big)
        dh.docs(bus, "GrantPermissions", (doc, APP, ["read", "write"]), "(ssas)")
        via = f"{dh.mountpoint(bus)}/by-app/{APP}/{doc}/big.bin"
        for _ in range(2):
            # A page-cache page is activated on its second use: keep that out of the figure.
            seq_read(big)
            seq_read(via)
        nat, mnt = [], []
        for _ in range(READ_REPS if want("warm") else 0):
            nat.append(seq_read(big))
            mnt.append(seq_read(via))
        if nat:
            r["native read MB/s (warm)"] = median(nat)
            r["mount read MB/s (warm)"] = median(mnt)
        nat, mnt = [], []
        for _ in range(READ_REPS if want("cold") else 0):
            drop_caches()
            nat.append(seq_read(big))
            drop_caches()
            mnt.append(seq_read(via))
        if nat:
            r["native read MB/s (cold)"] = median(nat)
            r["mount read MB/s (cold)"] = median(mnt)
        if want("stat"):
            r["stat/s"] = timed_loop(lambda: os.stat(via), N_STAT)
        if not (want("add") or want("full") or want("readdir") or want("ps")):
            return r

        small = []
        for i in range(max(N_ADD, N_FULL)):
            p = os.path.join(work, f"f{i}")
            with open(p, "w") as f:
                f.write("x")
            small.append(p)
        conn = bus.new_connection()
        t = time.monotonic()
        for p in small[:N_ADD]:
            add_call(bus, p, conn)
        if want("add"):
            r[f"{N_ADD} Add calls s"] = time.monotonic() - t

        # AddFull of many files. dbus-daemon accepts 16 fds per message by default
        # (max_message_unix_fds), so 10,000 files take batches on any implementation.
        fds = [os.open(p, os.O_PATH) for p in small[:N_FULL]]
        per = 16
        try:
            t = time.monotonic()
            for i in range(0, len(fds), per):
                part = fds[i:i + per]
                dh.docs(bus, "AddFull", (list(range(len(part))), 0, APP, ["read"]), "(ahusas)",
                        fds=part, conn=conn, timeout=600000)
            r[f"AddFull of {N_FULL} files ({per} per call) s"] = time.monotonic() - t
        finally:
            for fd in fds:
                os.close(fd)

        appdir = f"{dh.mountpoint(bus)}/by-app/{APP}"
        entries = len(os.listdir(appdir))
        if want("readdir"):
            r[f"readdir by-app/APP ({entries} entries)/s"] = timed_loop(lambda: os.listdir(appdir), N_READDIR)
            # by-app/ itself: the apps holding any document (here 21, among all the documents).
            first = dh.docs(bus, "List", (APP,), "(s)", conn=conn)[0]
            one = next(iter(first))
            for i in range(20):
                dh.docs(bus, "GrantPermissions", (one, f"org.example.Other{i}", ["read"]), "(ssas)", conn=conn)
            by_app = f"{dh.mountpoint(bus)}/by-app"
            r[f"readdir by-app/ ({len(os.listdir(by_app))} apps)/s"] = timed_loop(lambda: os.listdir(by_app),
                                                                                N_READDIR)
            docdir = f"{appdir}/{one}"
            r["readdir by-app/APP/DOCID/s"] = timed_loop(lambda: os.listdir(docdir), N_OPEN // 4)
            r["ls by-app/APP/DOCID, the program/s"] = timed_loop(lambda: run_ls(docdir), N_LS)

        # The same Add and AddFull calls through the lean client (after the listing: its
        # grants would grow by-app/APP).
        lean = lean_add(bus, small[:N_ADD])
        if lean is not None:
            r[f"{N_ADD} Add calls, sd-bus client s"] = lean
            r[f"AddFull of {N_FULL} files ({per} per call), sd-bus client s"] = lean_add(bus, small[:N_FULL], per)
            # The same 1000 Adds with 16 in flight, as an asynchronous exporter sends them:
            # the daemon's throughput, not the sum of round trips through dbus-daemon.
            kv = store_client(bus, "addpipe", dh.DOCS_NAME, dh.DOCS_PATH, 16,
                              stdin="".join(f + "\n" for f in small[:N_ADD]))
            r[f"{N_ADD} Add calls, sd-bus client, 16 in flight s"] = \
                float(kv["seconds"]) if isinstance(kv, dict) and int(kv["docs"]) == N_ADD else kv
            # The floor under those Adds: as many Peer.Ping calls to the same daemon, which
            # GDBus answers on its worker thread without running any of the daemon's code (and
            # which carry no fd, so the floor of an fd-carrying Add is, if anything, higher).
            kv = store_client(bus, "ping", dh.DOCS_NAME, dh.DOCS_PATH, N_ADD)
            r[f"{N_ADD} Peer.Ping calls, sd-bus client: bus floor s"] = \
                float(kv["seconds"]) if isinstance(kv, dict) else kv

        # PermissionStore: one entry with many apps.
        n_apps = N_APPS if which == "limen" else 2000
        apps = {f"org.example.App{i}": ["yes"] for i in range(n_apps)}
        try:
            s, lk = ps_set_lookup(bus, dh.PS_NAME, dh.PS_PATH, apps, PS_REPS if which == "limen" else 1)
            r[f"PS Set {n_apps} apps ms"] = s
            r[f"PS Lookup {n_apps} apps ms"] = lk
        except GLib.Error as e:
            r[f"PS Set {n_apps} apps ms"] = f"failed: {e.message[:60]}"
        if which == "limen":
            echo = subprocess.Popen([sys.executable, "-c", ECHO_SERVER, bus.address], stdout=subprocess.PIPE, text=True)
            try:
                echo.stdout.readline()
                s, lk = ps_set_lookup(bus, "org.limen.BenchEcho", "/echo", apps, PS_REPS)
                r[f"PS Set {n_apps} apps: GDBus echo floor ms"] = s
                r[f"PS Lookup {n_apps} apps: GDBus echo floor ms"] = lk
            finally:
                echo.kill()
                echo.wait()
        lean = lean_set_lookup(bus, n_apps, PS_REPS if which == "limen" else 1)
        if lean:
            r[f"PS Set {n_apps} apps, sd-bus client ms"], r[f"PS Lookup {n_apps} apps, sd-bus client ms"] = lean
        r["PSS after the run KiB"] = sum(pss_kib(p) for p in pids)
    finally:
        bus.close()
    return r


# An app's own open+close as Flatpak sets it up: by-app/APP bind-mounted over the app's
# /run/user/UID/doc, so its path walks start below the gate. Run in a private mount
# namespace (the binds vanish with it); prints the per-round rates of both views.
APP_VIEW_CHILD = r"""
import json, os, subprocess, sys, tempfile, time
views, names, n, rounds = json.loads(sys.argv[1])
paths = []
for view, name in zip(views, names):
    d = tempfile.mkdtemp()
    subprocess.run(["mount", "--bind", view, d], check=True)
    paths.append(os.path.join(d, name))
rates = [[], []]
for _ in range(rounds):
    for i, p in enumerate(paths):
        t = time.monotonic()
        for _ in range(n):
            os.close(os.open(p, os.O_RDONLY))
        rates[i].append(n / (time.monotonic() - t))
single = [[], []]
for k in range(n * rounds):
    for i in ((0, 1) if k % 2 else (1, 0)):
        t = time.perf_counter_ns()
        os.close(os.open(paths[i], os.O_RDONLY))
        single[i].append((time.perf_counter_ns() - t) / 1000)
stats = [[], []]
for _ in range(rounds):
    for i, p in enumerate(paths):
        t = time.monotonic()
        for _ in range(n):
            os.stat(p)
        stats[i].append(n / (time.monotonic() - t))
print(json.dumps([rates, single, stats]))
"""


def single_calls_us(paths, n):
    """Microseconds of each of @n open+close calls per path, the paths taking turns call by
    call (in both orders). Their low percentiles are what a call costs when nothing else
    runs: on a loaded machine the throughput of a loop mostly measures the scheduler."""
    out = [[] for _ in paths]
    for k in range(n):
        order = range(len(paths)) if k % 2 else reversed(range(len(paths)))
        for i in order:
            t = time.perf_counter_ns()
            os.close(os.open(paths[i], os.O_RDONLY))
            out[i].append((time.perf_counter_ns() - t) / 1000)
    return out


def percentile(values, q):
    v = sorted(values)
    return v[len(v) * q // 100]


def put_single_calls(ours, ref, label, single):
    """The p10 and median of single calls (see single_calls_us) as figures."""
    for q, name in ((10, "p10"), (50, "median")):
        ours[f"{label} µs, {name} of single calls"] = percentile(single[0], q)
        ref[f"{label} µs, {name} of single calls"] = percentile(single[1], q)


def app_view_open_rates(stacks):
    """Per-round open+close rates, single open+close times and per-round stat rates of
    limen's and the reference's app view (see APP_VIEW_CHILD), or a string saying why they
    could not be measured."""
    views, names = [], []
    for which in ("limen", "reference"):
        via = stacks[which][2]
        views.append(os.path.dirname(os.path.dirname(via)))
        names.append(os.path.relpath(via, views[-1]))
    out = subprocess.run(["unshare", "-m", "--propagation", "private", sys.executable, "-c", APP_VIEW_CHILD,
                          json.dumps([views, names, N_OPEN // OPEN_ROUNDS, OPEN_ROUNDS])],
                         capture_output=True, text=True, timeout=600)
    if out.returncode != 0:
        return "needs a mount namespace: " + out.stderr.strip()[-60:]
    return json.loads(out.stdout)


def cpu_seconds(pids):
    """CPU time of this process and of @pids (all their threads, also ended ones)."""
    total = time.process_time()
    for pid in pids:
        with open(f"/proc/{pid}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
        total += (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    return total


def paired():
    """Writes and open+close with both stacks running at once, in alternating rounds
    (native, limen, reference), each figure the median of its rounds: on a shared machine
    the load changes within seconds, and a ratio of two runs minutes apart would show it."""
    stacks, ours, ref = {}, {}, {}
    try:
        for which in ("limen", "reference"):
            bus = limentest.Bus()
            stacks[which] = bus
            pids = start(bus, which)
            work = os.path.join(bus.root, "work")
            os.makedirs(work)
            big = os.path.join(work, "big.bin")
            with open(big, "wb") as f:
                f.truncate(MB * CHUNK)
            doc = dh.add(bus, big)
            dh.docs(bus, "GrantPermissions", (doc, APP, ["read", "write"]), "(ssas)")
            for i in range(20 if want("readdir") else 0):
                dh.docs(bus, "GrantPermissions", (doc, f"org.example.Other{i}", ["read"]), "(ssas)")
            stacks[which] = (bus, big, f"{dh.mountpoint(bus)}/by-app/{APP}/{doc}/big.bin", pids)
        lim, rf = stacks["limen"], stacks["reference"]
        if want("write"):
            nat, a, b, a_rw, b_rw = [], [], [], [], []
            cpu = {"native": 0.0, "limen": 0.0, "reference": 0.0}
            for _ in range(WRITE_REPS):
                for key, path, pids, out in (("native", lim[1], [], nat), ("limen", lim[2], lim[3], a),
                                             ("reference", rf[2], rf[3], b)):
                    c = cpu_seconds(pids)
                    out.append(seq_write(path, MB))
                    cpu[key] += cpu_seconds(pids) - c
            # Read-write handles (QSaveFile's temporary file is one) write through the page
            # cache; in rounds of their own, so that each write follows one of its kind.
            for _ in range(WRITE_REPS):
                a_rw.append(seq_write(lim[2], MB, os.O_RDWR))
                b_rw.append(seq_write(rf[2], MB, os.O_RDWR))
            ours["native write MB/s"] = ref["native write MB/s"] = median(nat)
            ours["mount write MB/s"], ref["mount write MB/s"] = median(a), median(b)
            ours["mount write MB/s, O_RDWR"], ref["mount write MB/s, O_RDWR"] = median(a_rw), median(b_rw)
            # Ratios within a round cancel the load drifting between rounds.
            ours["write / native, per round"] = median([x / n for x, n in zip(a, nat)])
            ref["write / native, per round"] = median([x / n for x, n in zip(b, nat)])
            ours["write O_RDWR / native, per round"] = median([x / n for x, n in zip(a_rw, nat)])
            ref["write O_RDWR / native, per round"] = median([x / n for x, n in zip(b_rw, nat)])
            # CPU spent per GiB by the writer and the daemon(s): what the load cannot change.
            gib = WRITE_REPS * MB / 1024
            ours["write CPU s/GiB, native"] = ref["write CPU s/GiB, native"] = cpu["native"] / gib
            ours["write CPU s/GiB (writer + daemon)"] = cpu["limen"] / gib
            ref["write CPU s/GiB (writer + daemon)"] = cpu["reference"] / gib
        if want("open"):
            a, b = [], []
            cpu = {"limen": 0.0, "reference": 0.0}
            for _ in range(OPEN_ROUNDS):
                for key, st, out in (("limen", lim, a), ("reference", rf, b)):
                    c = cpu_seconds(st[3])
                    out.append(timed_loop(lambda: os.close(os.open(st[2], os.O_RDONLY)), N_OPEN // OPEN_ROUNDS))
                    cpu[key] += cpu_seconds(st[3]) - c
            ours["open+close/s"], ref["open+close/s"] = median(a), median(b)
            # CPU per open+close, the opener's and the daemon's: what the load cannot change.
            ours["open+close CPU µs (opener + daemon)"] = cpu["limen"] / N_OPEN * 1e6
            ref["open+close CPU µs (opener + daemon)"] = cpu["reference"] / N_OPEN * 1e6
            ours["open+close advantage, per round"] = median([x / y for x, y in zip(a, b)])
            put_single_calls(ours, ref, "open+close", single_calls_us([lim[2], rf[2]], N_OPEN))
            got = app_view_open_rates(stacks)
            if isinstance(got, str):
                ours["open+close, app's own view/s"] = got
            else:
                (a, b), single, (sa, sb) = got
                ours["open+close, app's own view/s"], ref["open+close, app's own view/s"] = median(a), median(b)
                ours["open+close, app's own view: advantage, per round"] = median([x / y for x, y in zip(a, b)])
                put_single_calls(ours, ref, "open+close, app's own view", single)
                # stat by path in the app's view: the kernel keeps no attributes of a host
                # file in either stack, so each one is a request.
                ours["stat, app's own view/s"], ref["stat, app's own view/s"] = median(sa), median(sb)
                ours["stat, app's own view: advantage, per round"] = median([x / y for x, y in zip(sa, sb)])
        if want("readdir"):
            # The listings with both stacks mounted (one document, 21 apps); run() lists
            # 10,001 documents, one stack after the other.
            for label, where in (("by-app/ (21 apps)", lambda st: os.path.dirname(os.path.dirname(
                                     os.path.dirname(st[2])))),
                                 ("by-app/APP/DOCID", lambda st: os.path.dirname(st[2]))):
                a, b = [], []
                for _ in range(OPEN_ROUNDS):
                    for st, out in ((lim, a), (rf, b)):
                        d = where(st)
                        out.append(timed_loop(lambda: os.listdir(d), N_READDIR))
                ours[f"readdir {label}, paired/s"], ref[f"readdir {label}, paired/s"] = median(a), median(b)
                ours[f"readdir {label}: advantage, per round"] = median([x / y for x, y in zip(a, b)])
            # The same listing by `ls`, a new process each time (see the docstring).
            a, b = [], []
            for _ in range(OPEN_ROUNDS):
                for st, out in ((lim, a), (rf, b)):
                    d = os.path.dirname(st[2])
                    out.append(timed_loop(lambda: run_ls(d), N_LS // OPEN_ROUNDS * 2))
            ours["ls by-app/APP/DOCID, the program, paired/s"], ref["ls by-app/APP/DOCID, the program, paired/s"] = \
                median(a), median(b)
            ours["ls by-app/APP/DOCID, the program: advantage, per round"] = median([x / y for x, y in zip(a, b)])
        if want("add") and os.path.exists(STORE_CLIENT):
            paired_adds(lim, rf, ours, ref)
    finally:
        for st in stacks.values():
            (st[0] if isinstance(st, tuple) else st).close()
    return ours, ref


def start_add_floor(*args):
    """A bus with add-floor (@args) on it (see add-floor.c), or a string saying why there is none."""
    if not os.path.exists(ADD_FLOOR):
        return "no add-floor in this build"
    bus = limentest.Bus()
    try:
        bus.start([ADD_FLOOR, *args], wait_name=dh.DOCS_NAME)
    except Exception as e:       # noqa: BLE001 -- the bench prints why and goes on
        bus.close()
        return f"failed: {str(e)[:60]}"
    return bus


FLOOR_KIND = {"floor": "sd-bus", "gdbus floor": "GDBus"}


def paired_adds(lim, rf, ours, ref):
    """Add calls one after another (store-client) to both stacks in alternating rounds, a new
    client each round. A round's first call also pays for the client's connection and its
    identification; the calls after it are what a client that stays connected (a frontend, an
    app) waits for per file. Two more sides in the same rounds, add-floor, answer every Add
    without any work, one on sd-bus (as limen-documents serves Documents) and one on GDBus:
    the reference's time over theirs is the most any daemon built on each could show in
    these rounds. A call from a new connection each time (`flatpak
    document-export`) is measured call by call, the two stacks' calls of a file right after
    each other."""
    per = ADD_PER_ROUND
    floors = {"floor": start_add_floor(), "gdbus floor": start_add_floor("--gdbus")}
    sides = [("limen", lim), ("reference", rf)]
    for which, floor in floors.items():
        if not isinstance(floor, str):
            sides.append((which, (floor, os.path.join(floor.root, "x"))))
        else:
            ours[f"Add per call, do-nothing {FLOOR_KIND[which]} service, paired ms"] = floor
    files, streamed = {}, {}
    for which, st in sides:
        d = os.path.join(os.path.dirname(st[1]), "adds")
        os.makedirs(d)
        files[which] = []
        for i in range(per * OPEN_ROUNDS + N_STREAM * STREAM_ROUNDS):
            files[which].append(os.path.join(d, f"f{i}"))
            with open(files[which][-1], "w") as f:
                f.write("x")
        streamed[which] = files[which][per * OPEN_ROUNDS:]
    got = {which: [] for which, _ in sides}
    cpu = {"limen": 0.0, "reference": 0.0}
    try:
        for r in range(OPEN_ROUNDS):
            for which, st in sides:
                # A pause first: the reference writes its table out (fsync, rename) after
                # answering, and that must not land in the other stack's round.
                time.sleep(0.05)
                c = cpu_seconds(st[3]) - time.process_time() if which in cpu else 0
                got[which].append(lean_add(st[0], files[which][r * per:(r + 1) * per], first=True))
                time.sleep(0.05)      # what the reference still writes after the round is its own
                if which in cpu:
                    cpu[which] += cpu_seconds(st[3]) - time.process_time() - c
        stream_adds(sides, streamed, ours, ref)
    finally:
        for floor in floors.values():
            if not isinstance(floor, str):
                floor.close()
    a, b = got["limen"], got["reference"]
    # The daemons' CPU per call (the reference's two processes), which the load hardly changes.
    ours["Add daemon CPU per call µs"] = cpu["limen"] / (per * OPEN_ROUNDS) * 1e6
    ref["Add daemon CPU per call µs"] = cpu["reference"] / (per * OPEN_ROUNDS) * 1e6
    if not all(isinstance(x, tuple) for x in a + b):
        ours["Add, sd-bus client, paired"] = next(x for x in a + b if not isinstance(x, tuple))
        return
    ours["Add per call, sd-bus client, paired ms"] = median([t for t, _ in a]) / per * 1000
    ref["Add per call, sd-bus client, paired ms"] = median([t for t, _ in b]) / per * 1000
    ours["Add, sd-bus client, paired: advantage, per round"] = median([y[0] / x[0] for x, y in zip(a, b)])
    later = [[(t - f) / (per - 1) * 1000 for t, f in side] for side in (a, b)]
    ours["Add per call after the first, paired ms"] = median(later[0])
    ref["Add per call after the first, paired ms"] = median(later[1])
    ours["Add per call after the first: advantage, per round"] = median([y / x for x, y in zip(*later)])
    ours["Add, a client's first call, paired ms"] = median([f * 1000 for _, f in a])
    ref["Add, a client's first call, paired ms"] = median([f * 1000 for _, f in b])
    for which, kind in FLOOR_KIND.items():
        fl = got.get(which)
        if fl is not None and not all(isinstance(x, tuple) for x in fl):
            ours[f"Add per call, do-nothing {kind} service, paired ms"] = \
                next(x for x in fl if not isinstance(x, tuple))
        elif fl is not None:
            ours[f"Add per call, do-nothing {kind} service, paired ms"] = median([t for t, _ in fl]) / per * 1000
            ours[f"Add, a client's first call, do-nothing {kind} service, paired ms"] = \
                median([f * 1000 for _, f in fl])
            ours[f"Add, reference / {kind} floor: the most a daemon on {kind} can show, per round"] = \
                median([y[0] / z[0] for y, z in zip(b, fl)])
            ours[f"Add, limen / {kind} floor: time over that floor, per round"] = \
                median([x[0] / z[0] for x, z in zip(a, fl)])
    kv = store_client(lim[0], "addpair", dh.DOCS_NAME, dh.DOCS_PATH, lim[0].address, rf[0].address, 1,
                      stdin="".join(f + "\n" for f in files["limen"][:N_ADD // 2]))
    key = "Add from a new connection each (connect + Add)"
    if not isinstance(kv, dict):
        ours[key] = kv
        return
    ours[f"{key}: median ms"], ref[f"{key}: median ms"] = float(kv["a_median_ms"]), float(kv["b_median_ms"])
    ours[f"{key}: advantage, per pair"] = float(kv["ratio_median"])


def stream_adds(sides, files, ours, ref):
    """N_STREAM Adds one right after another from one client, to each side in turn, in
    STREAM_ROUNDS rounds: an app exporting a long list file by file. Unlike in short rounds,
    the reference's threads stay busy and warm here and its time per call falls; the
    do-nothing services show how much of a call is then the bus's alone."""
    got = {which: [] for which, _ in sides}
    for r in range(STREAM_ROUNDS):
        for which, st in sides:
            time.sleep(0.3)       # the reference writes its table out after a burst; a quiet start for all
            got[which].append(lean_add(st[0], files[which][r * N_STREAM:(r + 1) * N_STREAM]))
    key = f"Add, {N_STREAM} in one stream"
    bad = next((x for v in got.values() for x in v if not isinstance(x, float)), None)
    if bad is not None:
        ours[f"{key}, per call ms"] = bad
        return
    per_call = {which: [t / N_STREAM * 1000 for t in v] for which, v in got.items()}
    ours[f"{key}, per call ms"] = median(per_call["limen"])
    ref[f"{key}, per call ms"] = median(per_call["reference"])
    ours[f"{key}: advantage, per round"] = median([y / x for x, y in zip(per_call["limen"], per_call["reference"])])
    for which, kind in FLOOR_KIND.items():
        if which in per_call:
            fl = per_call[which]
            ours[f"{key}, do-nothing {kind} service, per call ms"] = median(fl)
            ours[f"{key}, reference / {kind} floor, per round"] = \
                median([y / z for y, z in zip(per_call["reference"], fl)])
            ours[f"{key}, limen / {kind} floor, per round"] = \
                median([x / z for x, z in zip(per_call["limen"], fl)])


def run_stress(which):
    """Seconds of the reference's stress test against @which, or a string saying why not."""
    env = dict(os.environ, PATH="/usr/bin:/bin:/usr/sbin:/sbin", TEST_IN_CI="1")
    env.pop("DBUS_SESSION_BUS_ADDRESS", None)
    shell = f"exec {STRESS_SCRIPT} --tap"
    if which == "limen":
        docs = limentest.binary("limen-documents")
        shell = (f"mount --bind {docs} /usr/libexec/xdg-document-portal && "
                 f"mount --bind {docs} /usr/libexec/xdg-permission-store && " + shell)
    work = subprocess.run(["mktemp", "-d"], capture_output=True, text=True).stdout.strip()
    try:
        t = time.monotonic()
        out = subprocess.run(["unshare", "-m", "--propagation", "private", "sh", "-c", shell], cwd=work, env=env,
                             capture_output=True, text=True, timeout=900)
        elapsed = time.monotonic() - t
    finally:
        subprocess.run(["rm", "-rf", work])
    if out.returncode != 0 or "ok load-test" not in out.stdout:
        return f"failed: {(out.stdout + out.stderr).strip()[-60:]}"
    return elapsed


def stress(ours, ref):
    """The reference's stress test against both stacks, alternating, STRESS_ROUNDS each."""
    if not os.path.exists(STRESS_SCRIPT) or os.geteuid() != 0:
        ours["test-document-fuse.sh s"] = "skipped: needs xdg-desktop-portal-tests and root"
        return
    got = {"limen": [], "reference": []}
    for k in range(STRESS_ROUNDS):
        for which in (("limen", "reference") if k % 2 == 0 else ("reference", "limen")):
            got[which].append(run_stress(which))
    if not all(isinstance(x, float) for v in got.values() for x in v):
        ours["test-document-fuse.sh s"] = str(got["limen"])
        ref["test-document-fuse.sh s"] = str(got["reference"])
        return
    ours["test-document-fuse.sh s"], ref["test-document-fuse.sh s"] = median(got["limen"]), median(got["reference"])
    ours["test-document-fuse.sh: advantage, per pair"] = median(
        [b / a for a, b in zip(got["limen"], got["reference"])])


def main():
    ours, ref = paired() if ONLY & {"write", "open", "readdir", "add"} or not ONLY else ({}, {})
    if not ONLY or ONLY & {"warm", "cold", "stat", "add", "full", "readdir", "ps"}:
        for d, which in ((ours, "limen"), (ref, "reference")):
            d.update(run(which))
    if want("store"):
        sizes = os.environ.get("LIMEN_BENCH_STORE", "1000,10000" if QUICK else "1000,10000,100000")
        store_curve(ours, ref, [int(x) for x in sizes.split(",")], n_calls=100 if QUICK else 300)
    if want("stress"):
        stress(ours, ref)
    print(f"\nlimen-documents vs xdg-document-portal 1.16 + xdg-permission-store ({MB} MiB file)")
    print("(advantage: how many times better limen is, > 1 = limen faster or smaller)")
    print(f"{'measure':48} {'limen':>14} {'reference':>14} {'advantage':>9}")
    for k in ours:
        rk = k
        if k.startswith("PS ") and k not in ref and "echo" not in k:
            # The reference is measured with fewer apps (it is quadratic): same figure otherwise.
            rk = next((x for x in ref if re.sub(r"\d+", "N", x) == re.sub(r"\d+", "N", k)), None)
        a, b = ours[k], ref.get(rk) if rk else None
        ratio = ""
        if isinstance(a, (int, float)) and isinstance(b, (int, float)) and a and b and "floor" not in k \
                and "per round" not in k and "per pair" not in k:
            lower_is_better = k.endswith(" s") or k.endswith(" ms") or "KiB" in k or "CPU" in k or "µs" in k
            ratio = f"{(b / a if lower_is_better else a / b):.2f}"
        fmt = "{:.3f}" if k.endswith(" s") or "per round" in k or "per pair" in k or "Add" in k and k.endswith(" ms") \
            else "{:.1f}"
        fa = fmt.format(a) if isinstance(a, float) else str(a)
        fb = fmt.format(b) if isinstance(b, float) else str(b)
        print(f"{k:48} {fa:>14} {fb:>14} {ratio:>9}")
        if rk and rk != k:
            print(f"{'  (reference measured with ' + rk + ')':48}")
    print()
    for kind in ("warm", "cold"):
        if f"mount read MB/s ({kind})" not in ours:
            continue
        print(f"ours: mount read ({kind}) / native read ({kind}) = "
              f"{ours[f'mount read MB/s ({kind})'] / ours[f'native read MB/s ({kind})']:.2f}")
    add_k, ping_k = f"{N_ADD} Add calls, sd-bus client s", f"{N_ADD} Peer.Ping calls, sd-bus client: bus floor s"
    if all(isinstance(d.get(k), float) for d in (ours, ref) for k in (add_k, ping_k)):
        print(f"ours: {N_ADD} Adds {ours[add_k]:.3f} s; 3x the reference's would be {ref[add_k] / 3:.3f} s; "
              f"{N_ADD} bare Peer.Pings to the same daemon take {ours[ping_k]:.3f} s (reference's: {ref[ping_k]:.3f} s)")
    adv = ours.get("Add, sd-bus client, paired: advantage, per round")
    most = {kind: ours.get(f"Add, reference / {kind} floor: the most a daemon on {kind} can show, per round")
            for kind in FLOOR_KIND.values()}
    if isinstance(adv, float) and all(isinstance(m, float) for m in most.values()):
        print(f"ours: paired Add rounds {adv:.2f}x the reference; a service answering Add with no work at all "
              f"shows {most['sd-bus']:.2f}x on sd-bus, {most['GDBus']:.2f}x on GDBus, in the same rounds")
    key = f"Add, {N_STREAM} in one stream"
    adv = ours.get(f"{key}: advantage, per round")
    most = ours.get(f"{key}, reference / sd-bus floor, per round")
    if isinstance(adv, float) and isinstance(most, float):
        print(f"ours: {N_STREAM} Adds in one stream {adv:.2f}x the reference; a service answering Add with no "
              f"work at all shows {most:.2f}x on sd-bus in the same rounds "
              f"(limen takes {ours[f'{key}, limen / sd-bus floor, per round']:.2f}x its time)")
    for m in ("Set", "Lookup"):
        k = f"PS {m} {N_APPS} apps ms"
        floor = ours.get(f"PS {m} {N_APPS} apps: GDBus echo floor ms")
        if isinstance(ours.get(k), float) and isinstance(floor, float):
            print(f"ours: PS {m} {N_APPS} apps {ours[k]:.1f} ms = {floor:.1f} ms GDBus echo floor "
                  f"+ {ours[k] - floor:.1f} ms ours")
    return 0


if __name__ == "__main__":
    sys.exit(main())
