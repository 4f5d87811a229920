#!/usr/bin/python3
"""Request round trip through limen-portal vs the reference /usr/libexec/xdg-desktop-portal,
both in front of the same dbusmock FileChooser backend that answers at once.

A round trip is FileChooser.OpenFile from a host client: the call, the handle reply, the
impl call to the backend, its reply and the Response signal. Printed: p50/p99 latency over
sequential requests, and throughput with 8 concurrent client processes, each as a ratio
ours/reference (latency: lower is better; throughput: higher is better).

Two backends are measured: the dbusmock template (what the tests use; ~1 ms per call in
Python, which dominates) and autotests/bench/mock-file-chooser (C, a few µs), which shows
the frontends' own cost.

usage: bench-requests.py [--requests N] [--clients C] [--per-client M]
       bench-requests.py --worker ADDRESS COUNT   (internal)"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "integration"))

from gi.repository import Gio, GLib  # noqa: E402

FC = "org.freedesktop.portal.FileChooser"
REFERENCE = "/usr/libexec/xdg-desktop-portal"


def worker(address, count):
    conn = Gio.DBusConnection.new_for_address_sync(
        address, Gio.DBusConnectionFlags.AUTHENTICATION_CLIENT | Gio.DBusConnectionFlags.MESSAGE_BUS_CONNECTION,
        None, None)
    ctx = GLib.MainContext.default()
    unique = conn.get_unique_name()[1:].replace(".", "_")
    done = {}

    def on_response(c, sender, path, iface, signal, params):
        done[path] = time.monotonic()

    conn.signal_subscribe(None, "org.freedesktop.portal.Request", "Response", None, None,
                          Gio.DBusSignalFlags.NONE, on_response)
    lat = []
    start = time.monotonic()
    for i in range(count):
        token = f"b{i}"
        path = f"/org/freedesktop/portal/desktop/request/{unique}/{token}"
        t0 = time.monotonic()
        conn.call_sync("org.freedesktop.portal.Desktop", "/org/freedesktop/portal/desktop", FC, "OpenFile",
                       GLib.Variant("(ssa{sv})", ("", "bench", {"handle_token": GLib.Variant("s", token)})),
                       None, Gio.DBusCallFlags.NONE, 10000, None)
        deadline = t0 + 10
        while path not in done and time.monotonic() < deadline:
            ctx.iteration(True)
        if path not in done:
            raise SystemExit(f"no Response for {path}")
        lat.append(done.pop(path) - t0)
    end = time.monotonic()
    print(json.dumps({"lat": lat, "start": start, "end": end}))


def run_workers(bus, n_clients, count):
    procs = [subprocess.Popen([sys.executable, __file__, "--worker", bus.address, str(count)],
                              stdout=subprocess.PIPE, text=True, env=bus.env) for _ in range(n_clients)]
    results = []
    for p in procs:
        out, _ = p.communicate(timeout=600)
        if p.returncode != 0:
            raise RuntimeError("worker failed")
        results.append(json.loads(out))
    return results


def measure(frontend, backend, args):
    import limentest
    import request_helpers as rh

    bus = limentest.Bus()
    try:
        rh.write_config(bus, ["filechooser"])
        if backend == "dbusmock":
            rh.Backend(bus, ["filechooser"])
        else:
            bus.start([limentest.binary("autotests/mock-file-chooser"), rh.BACKEND_NAME], wait_name=rh.BACKEND_NAME)
        if frontend == "limen":
            bus.start_portal()
        else:
            bus.start([REFERENCE, "--replace"], wait_name=limentest.PORTAL_BUS_NAME)
        # Warm up: identities cached, backend proxies made.
        run_workers(bus, 1, 50)
        seq = run_workers(bus, 1, args.requests)[0]["lat"]
        par = run_workers(bus, args.clients, args.per_client)
        total = sum(len(r["lat"]) for r in par)
        wall = max(r["end"] for r in par) - min(r["start"] for r in par)
        seq_sorted = sorted(seq)
        return {
            "p50": statistics.median(seq_sorted) * 1000,
            "p99": seq_sorted[int(len(seq_sorted) * 0.99) - 1] * 1000,
            "throughput": total / wall,
        }
    finally:
        bus.close()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--worker", nargs=2)
    ap.add_argument("--requests", type=int, default=2000)
    ap.add_argument("--clients", type=int, default=8)
    ap.add_argument("--per-client", type=int, default=400)
    args = ap.parse_args()
    if args.worker:
        worker(args.worker[0], int(args.worker[1]))
        return 0
    for backend in ("dbusmock", "c-mock"):
        ours = measure("limen", backend, args)
        ref = measure("reference", backend, args) if os.path.exists(REFERENCE) else None
        print(f"FileChooser.OpenFile round trip, {backend} backend answering at once, {args.requests} sequential, "
              f"{args.clients}x{args.per_client} concurrent")
        print(f"{'':18}{'limen':>12}{'reference':>12}{'ratio':>8}")
        for key, unit in (("p50", "ms"), ("p99", "ms"), ("throughput", "req/s")):
            r = ref[key] if ref else float("nan")
            print(f"{key + ' ' + unit:18}{ours[key]:12.3f}{r:12.3f}{ours[key] / r if ref else float('nan'):8.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
