#!/usr/bin/python3
"""Benchmark limen-documents against Debian's xdg-document-portal + xdg-permission-store,
both measured in this same run on private buses. Prints figures and ratios; asserts nothing
about speed (that is the reader's job).

  LIMEN_BENCH_MB       size of the sequential file (default 512)
  LIMEN_BENCH_QUICK=1  smaller loops for a smoke run"""

import os
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "integration"))

import limentest  # noqa: E402
import documents_helpers as dh  # noqa: E402
from gi.repository import Gio, GLib  # noqa: E402

QUICK = os.environ.get("LIMEN_BENCH_QUICK") == "1"
MB = int(os.environ.get("LIMEN_BENCH_MB", "64" if QUICK else "512"))
N_STAT = 5000 if QUICK else 50000
N_OPEN = 2000 if QUICK else 20000
N_ADD = 200 if QUICK else 1000
N_FULL = 1000 if QUICK else 10000
N_READDIR = 50 if QUICK else 200
N_APPS = 20000
APP = "org.example.Bench"
CHUNK = 1 << 20


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


def seq_write(path, mb):
    buf = b"\xa5" * CHUNK
    fd = os.open(path, os.O_WRONLY | os.O_TRUNC)
    t = time.monotonic()
    for _ in range(mb):
        os.write(fd, buf)
    os.fsync(fd)
    dt = time.monotonic() - t
    os.close(fd)
    return mb * CHUNK / dt / 1e6


def timed_loop(fn, n):
    t = time.monotonic()
    for _ in range(n):
        fn()
    return n / (time.monotonic() - t)


def start(bus, which):
    if which == "limen":
        d = dh.start(bus)
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
        seq_read(big)
        r["native read MB/s"] = seq_read(big)
        seq_read(via)
        r["mount read MB/s (warm)"] = seq_read(via)
        drop_caches()
        r["mount read MB/s (cold)"] = seq_read(via)
        r["native write MB/s"] = seq_write(big, MB)
        r["mount write MB/s"] = seq_write(via, MB)

        r["stat/s"] = timed_loop(lambda: os.stat(via), N_STAT)
        r["open+close/s"] = timed_loop(lambda: os.close(os.open(via, os.O_RDONLY)), N_OPEN)

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
        r[f"readdir by-app/APP ({entries} entries)/s"] = timed_loop(lambda: os.listdir(appdir), N_READDIR)

        # PermissionStore: one entry with many apps.
        n_apps = N_APPS if which == "limen" else 2000
        apps = {f"org.example.App{i}": ["yes"] for i in range(n_apps)}
        v = GLib.Variant("(sbsa{sas}v)", ("bench", True, "entry", apps, GLib.Variant("v", GLib.Variant("b", True))))
        t = time.monotonic()
        try:
            bus.conn.call_sync(dh.PS_NAME, dh.PS_PATH, dh.PS_IFACE, "Set", v, None, 0, 120000, None)
            r[f"PS Set {n_apps} apps ms"] = (time.monotonic() - t) * 1000
            t = time.monotonic()
            bus.conn.call_sync(dh.PS_NAME, dh.PS_PATH, dh.PS_IFACE, "Lookup", GLib.Variant("(ss)", ("bench", "entry")),
                               None, 0, 120000, None)
            r[f"PS Lookup {n_apps} apps ms"] = (time.monotonic() - t) * 1000
        except GLib.Error as e:
            r[f"PS Set {n_apps} apps ms"] = f"failed: {e.message[:60]}"
        r["PSS after the run KiB"] = sum(pss_kib(p) for p in pids)
    finally:
        bus.close()
    return r


def main():
    ours = run("limen")
    ref = run("reference")
    print(f"\nlimen-documents vs xdg-document-portal 1.16 + xdg-permission-store ({MB} MiB file)")
    print(f"{'measure':48} {'limen':>14} {'reference':>14} {'ratio':>8}")
    for k in ours:
        rk = k
        if k.startswith("PS ") and k not in ref:
            rk = next((x for x in ref if x.split()[:2] == k.split()[:2]), None)
        a, b = ours[k], ref.get(rk) if rk else None
        ratio = ""
        if isinstance(a, (int, float)) and isinstance(b, (int, float)) and b:
            ratio = f"{a / b:.2f}"
        fa = f"{a:.1f}" if isinstance(a, float) else str(a)
        fb = f"{b:.1f}" if isinstance(b, float) else str(b)
        print(f"{k:48} {fa:>14} {fb:>14} {ratio:>8}")
        if rk and rk != k:
            print(f"{'  (reference measured with ' + rk + ')':48}")
    print(f"\nours: mount read (warm) / native read = {ours['mount read MB/s (warm)'] / ours['native read MB/s']:.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
