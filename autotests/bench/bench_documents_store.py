"""The store-size curve of bench-documents.py (group `store`): limen-documents and the
reference pair given the same reference state, N documents and N permission-store entries
in GVDB files (N = 1,000 / 10,000 / 100,000), both stacks up at once on private buses.

For each N: start to the first answer (Documents.Info and PermissionStore.Lookup both
answered; Limen's first start also imports the files once, a big store in steps after the
first answers, waited for before the next start; its later starts read SQLite;
the reference reads its GVDB files lazily), PSS at start and after the work below, the
p50 of Info, Lookup and PermissionStore.Lookup (the two stacks' calls taking turns),
`ls -l by-app/APP` (APP holds min(N, 10,000) documents; `ls` the program, as a file
manager's detailed listing: a getxattr and a stat per entry) and `ls` of one document's
directory, both through the program and through os.listdir. Starts alternate between the
stacks, START_REPS times each; figures are medians, ratios reference / Limen for times
and sizes (> 1: Limen better)."""

import os
import random
import shutil
import struct
import subprocess
import time

import limentest
import documents_helpers as dh
from gi.repository import Gio, GLib

APP = "org.example.Bench"
TABLE = "bench"
BIG_APP_DOCS = 10000
LAST_START_CPU = 0.0


def gvdb_hash(key):
    h = 5381
    for c in key:
        h = (h * 33 + (c - 256 if c >= 128 else c)) & 0xffffffff
    return h


class Gvdb:
    """A GVDB file as GLib's gvdb-builder lays it out (the format of the reference's tables;
    test_documents_import.py's writer, with buckets counted in one pass for 100,000 items)."""

    def __init__(self):
        self.buf = bytearray(24)

    def alloc(self, data, align):
        self.buf += b"\0" * (-len(self.buf) % align)
        start = len(self.buf)
        self.buf += data
        return start, len(self.buf)

    def table(self, entries):
        items = []
        for key, value in entries.items():
            k = key.encode()
            if isinstance(value, dict):
                kind, ptr = b"H", self.table(value)
            else:
                kind, ptr = b"v", self.alloc(GLib.Variant("v", value).get_data_as_bytes().get_data(), 8)
            key_start, _ = self.alloc(k, 1)
            items.append((gvdb_hash(k), key_start, len(k), kind, ptr))
        n = max(1, len(items))
        items.sort(key=lambda it: it[0] % n)
        counts = [0] * n
        for it in items:
            counts[it[0] % n] += 1
        starts, acc = [], 0
        for c in counts:
            starts.append(acc)
            acc += c
        body = bytearray(struct.pack("<II", 0, n) + struct.pack(f"<{n}I", *starts))
        for h, key_start, key_size, kind, (start, end) in items:
            body += struct.pack("<IIIHccII", h, 0xffffffff, key_start, key_size, kind, b"\0", start, end)
        return self.alloc(bytes(body), 4)

    def write(self, path, main, apps):
        start, end = self.table({"main": main, "apps": apps})
        self.buf[0:24] = struct.pack("<IIIIII", 0x72615647, 0x746e6169, 0, 0, start, end)
        with open(path, "wb") as f:
            f.write(bytes(self.buf))


def doc_app(i):
    return APP if i < BIG_APP_DOCS else f"org.example.Other{i % 100}"


def make_state(root, n):
    """The reference's state under @root (an XDG_DATA_HOME): @n documents of files in one
    folder, @n entries of the table `bench`; returns the documents' ids and files."""
    files = os.path.join(root, "files")
    os.makedirs(files, exist_ok=True)
    paths = []
    for i in range(n):
        p = os.path.join(files, f"f{i}.txt")
        if not os.path.exists(p):
            open(p, "w").close()
        paths.append(p)
    st = os.stat(files)
    ids = [f"{i:08x}" for i in range(n)]
    main, apps = {}, {}
    for i, (doc, p) in enumerate(zip(ids, paths)):
        data = GLib.Variant("(ayttu)", (p.encode() + b"\0", st.st_dev, st.st_ino, 0))
        app = doc_app(i)
        main[doc] = GLib.Variant("(va{sas})", (data, {app: ["read", "write"]}))
        apps.setdefault(app, []).append(doc)
    db = os.path.join(root, "flatpak", "db")
    os.makedirs(db, exist_ok=True)
    Gvdb().write(os.path.join(db, "documents"), main, {a: GLib.Variant("as", v) for a, v in apps.items()})
    main, apps = {}, {}
    for i in range(n):
        app = f"org.example.App{i % 1000}"
        main[f"e{i}"] = GLib.Variant("(va{sas})", (GLib.Variant("b", True), {app: ["yes"]}))
        apps.setdefault(app, []).append(f"e{i}")
    Gvdb().write(os.path.join(db, TABLE), main, {a: GLib.Variant("as", v) for a, v in apps.items()})
    return ids, paths


def pss_kib(pids):
    total = 0
    for pid in pids:
        with open(f"/proc/{pid}/smaps_rollup") as f:
            total += next(int(x.split()[1]) for x in f if x.startswith("Pss:"))
    return total


def answers(bus, doc):
    """Info(@doc) and PermissionStore.Lookup both answer (no activation: nothing but what
    was started may answer)."""
    try:
        for dest, path, iface, method, args in (
                (dh.DOCS_NAME, dh.DOCS_PATH, dh.DOCS_IFACE, "Info", GLib.Variant("(s)", (doc,))),
                (dh.PS_NAME, dh.PS_PATH, dh.PS_IFACE, "Lookup", GLib.Variant("(ss)", (TABLE, "e0")))):
            bus.conn.call_sync(dest, path, iface, method, args, None, Gio.DBusCallFlags.NO_AUTO_START,
                               60000, None)
        return True
    except GLib.Error:
        return False


def cpu_s(daemons):
    """CPU seconds of @daemons so far: what the machine's load hardly changes."""
    total = 0
    for d in daemons:
        with open(f"/proc/{d.pid}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
        total += (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    return total


def start_stack(bus, which, doc):
    """Start @which on @bus; (seconds to the first answers, daemons). The daemons' CPU
    seconds until then are in LAST_START_CPU."""
    global LAST_START_CPU
    t = time.monotonic()
    if which == "limen":
        daemons = [bus.start("limen-documents")]
    else:
        daemons = [bus.start([exe, "--replace"]) for exe in ("/usr/libexec/xdg-permission-store",
                                                             "/usr/libexec/xdg-document-portal")]
    while not answers(bus, doc):
        if not all(d.alive() for d in daemons):
            raise RuntimeError(f"{which} died:\n" + daemons[-1].output()[-2000:])
        time.sleep(0.001)
    elapsed = time.monotonic() - t
    LAST_START_CPU = cpu_s(daemons)
    return elapsed, daemons


def wait_import(daemon):
    """Seconds from now until @daemon's one-time import ends (0 when it ended before the
    first answers), from its log."""
    t = time.monotonic()
    while "in the background" in daemon.output() and "reference state is imported" not in daemon.output():
        if not daemon.alive() or time.monotonic() - t > 600:
            raise RuntimeError("limen-documents' import did not end:\n" + daemon.output()[-2000:])
        time.sleep(0.05)
    return time.monotonic() - t


def stop_stack(bus, daemons):
    for d in daemons:
        d.stop()
        bus.daemons.remove(d)
    for name in (dh.DOCS_NAME, dh.PS_NAME):
        bus.wait_for_name_gone(name)
    subprocess.run(["fusermount3", "-u", "-z", dh.mountpoint(bus)], stderr=subprocess.DEVNULL)


def median(v):
    return sorted(v)[len(v) // 2]


def call_ms(bus, dest, path, iface, method, args):
    t = time.perf_counter_ns()
    bus.conn.call_sync(dest, path, iface, method, args, None, 0, 60000, None)
    return (time.perf_counter_ns() - t) / 1e6


def per_call(stacks, ids, paths, n_calls):
    """p50 (ms) of Info, Lookup and PermissionStore.Lookup, the stacks taking turns call by call."""
    rng = random.Random(1)
    got = {w: {"Info": [], "Lookup": [], "PS Lookup": []} for w in stacks}
    for k in range(n_calls):
        i = rng.randrange(len(ids))
        for w in (sorted(stacks) if k % 2 else sorted(stacks, reverse=True)):
            bus = stacks[w][0]
            got[w]["Info"].append(call_ms(bus, dh.DOCS_NAME, dh.DOCS_PATH, dh.DOCS_IFACE, "Info",
                                          GLib.Variant("(s)", (ids[i],))))
            got[w]["Lookup"].append(call_ms(bus, dh.DOCS_NAME, dh.DOCS_PATH, dh.DOCS_IFACE, "Lookup",
                                            GLib.Variant("(ay)", (paths[i].encode() + b"\0",))))
            got[w]["PS Lookup"].append(call_ms(bus, dh.PS_NAME, dh.PS_PATH, dh.PS_IFACE, "Lookup",
                                               GLib.Variant("(ss)", (TABLE, f"e{i}"))))
    return {w: {m: median(v) for m, v in calls.items()} for w, calls in got.items()}


def timed_run(argv, reps):
    """Median seconds of running @argv (output discarded)."""
    out = []
    for _ in range(reps):
        t = time.monotonic()
        subprocess.run(argv, stdout=subprocess.DEVNULL, check=True)
        out.append(time.monotonic() - t)
    return median(out)


def listings(stacks, ids, reps, n_small):
    """Seconds of `ls -l by-app/APP`, `ls by-app/APP/DOCID` per second (the program) and
    os.listdir of it per second, the stacks alternating."""
    got = {w: {"ls -l": [], "ls": [], "listdir": []} for w in stacks}
    for r in range(reps):
        # Which stack goes first alternates: the load of a shared machine swings within seconds.
        for w in (list(stacks) if r % 2 == 0 else list(stacks)[::-1]):
            bus = stacks[w][0]
            app_dir = f"{dh.mountpoint(bus)}/by-app/{APP}"
            doc_dir = f"{app_dir}/{ids[0]}"
            got[w]["ls -l"].append(timed_run(["ls", "-l", app_dir], 1))
            t = time.monotonic()
            for _ in range(n_small // 10):
                subprocess.run(["ls", doc_dir], stdout=subprocess.DEVNULL, check=True)
            got[w]["ls"].append(n_small // 10 / (time.monotonic() - t))
            t = time.monotonic()
            for _ in range(n_small):
                os.listdir(doc_dir)
            got[w]["listdir"].append(n_small / (time.monotonic() - t))
    out = {w: {k: median(v) for k, v in x.items()} for w, x in got.items()}
    if len(stacks) == 2:
        a, b = (got[w]["ls"] for w in stacks)
        out["ls per round"] = median([x / y for x, y in zip(a, b)])
    return out


def one_size(n, ours, ref, start_reps, n_calls, n_small):
    buses = {w: limentest.Bus() for w in ("limen", "reference")}
    try:
        t = time.monotonic()
        ids, paths = make_state(buses["limen"].data_home, n)
        ours[f"N={n}: writing the GVDB files s"] = time.monotonic() - t
        # The same tables for the reference, naming the same files.
        shutil.copytree(os.path.join(buses["limen"].data_home, "flatpak"),
                        os.path.join(buses["reference"].data_home, "flatpak"))
        starts = {"limen": [], "reference": []}
        cpus = {"limen": [], "reference": []}
        daemons = {}
        # Limen's first start imports the files (a big store in steps after the first
        # answers); the starts after it read SQLite.
        ours[f"N={n}: first start with the import s"], daemons["limen"] = \
            start_stack(buses["limen"], "limen", ids[0])
        ours[f"N={n}: the import to its end s"] = wait_import(daemons["limen"][0])
        for r in range(start_reps):
            for w in ("reference", "limen") if r % 2 else ("limen", "reference"):
                if w in daemons:
                    stop_stack(buses[w], daemons.pop(w))
                    time.sleep(0.2)
                s, daemons[w] = start_stack(buses[w], w, ids[0])
                starts[w].append(s)
                cpus[w].append(LAST_START_CPU)
        ours[f"N={n}: start to first answer s"] = median(starts["limen"])
        ref[f"N={n}: start to first answer s"] = median(starts["reference"])
        ours[f"N={n}: start, daemon CPU s"] = median(cpus["limen"])
        ref[f"N={n}: start, daemon CPU s"] = median(cpus["reference"])
        ours[f"N={n}: start, range s"] = f"{min(starts['limen']):.3f}-{max(starts['limen']):.3f}"
        ref[f"N={n}: start, range s"] = f"{min(starts['reference']):.3f}-{max(starts['reference']):.3f}"
        time.sleep(0.5)
        pids = {w: [d.pid for d in daemons[w]] for w in daemons}
        ours[f"N={n}: PSS at start KiB"], ref[f"N={n}: PSS at start KiB"] = \
            pss_kib(pids["limen"]), pss_kib(pids["reference"])
        for w in buses:
            dh.get_mount_point(buses[w])
            deadline = time.time() + 10
            while not dh.is_mounted(dh.mountpoint(buses[w])) and time.time() < deadline:
                time.sleep(0.01)
        stacks = {w: (buses[w], daemons[w]) for w in buses}
        calls = per_call(stacks, ids, paths, n_calls)
        for m in ("Info", "Lookup", "PS Lookup"):
            ours[f"N={n}: {m} p50 ms"], ref[f"N={n}: {m} p50 ms"] = calls["limen"][m], calls["reference"][m]
        ls = listings(stacks, ids, 4, n_small)
        k = min(n, BIG_APP_DOCS)
        ours[f"N={n}: ls -l by-app/APP ({k} docs) s"] = ls["limen"]["ls -l"]
        ref[f"N={n}: ls -l by-app/APP ({k} docs) s"] = ls["reference"]["ls -l"]
        ours[f"N={n}: ls by-app/APP/DOCID (the program)/s"] = ls["limen"]["ls"]
        ref[f"N={n}: ls by-app/APP/DOCID (the program)/s"] = ls["reference"]["ls"]
        ours[f"N={n}: ls by-app/APP/DOCID (the program): advantage, per round"] = ls["ls per round"]
        ours[f"N={n}: listdir by-app/APP/DOCID/s"] = ls["limen"]["listdir"]
        ref[f"N={n}: listdir by-app/APP/DOCID/s"] = ls["reference"]["listdir"]
        ours[f"N={n}: PSS after the work KiB"], ref[f"N={n}: PSS after the work KiB"] = \
            pss_kib(pids["limen"]), pss_kib(pids["reference"])
    finally:
        for b in buses.values():
            b.close()


def store_curve(ours, ref, sizes, start_reps=3, n_calls=300, n_small=300):
    for n in sizes:
        one_size(n, ours, ref, start_reps, n_calls, n_small)
