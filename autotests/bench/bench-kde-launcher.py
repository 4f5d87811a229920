#!/usr/bin/python3
"""The DynamicLauncher dialog of limen-kde against Debian's xdg-desktop-portal-kde 5.27 (a
QML dialog), side by side in one run: the time from an impl PrepareInstall call to its window
being mapped, cold (the first dialog of the process) and warm (median of the rest), and the
backend's PSS after the dialogs. LIMEN_BENCH_QUICK=1: 3 rounds. Prints figures and ratios;
asserts nothing. Debian's 5.27.5 fails to build its QML dialog here and crashes on the first
PrepareInstall (seen 2026-12): the bench then says so instead of a ratio."""

import os
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "integration"))
import kde_helpers as kh  # noqa: E402
import limentest  # noqa: E402
from limentest import Gio, GLib  # noqa: E402

REF_NAME = "org.freedesktop.impl.portal.desktop.kde"
ROUNDS = 3 if os.environ.get("LIMEN_BENCH_QUICK") == "1" else int(os.environ.get("LIMEN_BENCH_ROUNDS", "8"))
TITLE = "Add Application"


def pss_kib(pid):
    with open(f"/proc/{pid}/smaps_rollup") as f:
        for line in f:
            if line.startswith("Pss:"):
                return int(line.split()[1])
    return 0


def png():
    path = os.path.join(os.environ.get("TMPDIR", "/tmp"), f"bench-launcher-{os.getpid()}.png")
    subprocess.run(["convert", "-size", "128x128", "xc:orange", path], check=True)
    with open(path, "rb") as f:
        data = f.read()
    os.unlink(path)
    return GLib.Variant("(sv)", ("bytes", GLib.Variant("ay", data)))


def time_to_window(bus, x, dest, icon, daemon):
    handle = kh.new_handle(bus)
    done = {}
    t0 = time.monotonic()
    bus.conn.call(dest, kh.PATH, "org.freedesktop.impl.portal.DynamicLauncher", "PrepareInstall",
                  GLib.Variant("(osssva{sv})", (handle, "org.example.Bench", "", "Bench Tool", icon, {})), None,
                  Gio.DBusCallFlags.NONE, 120000, None, lambda c, r: done.setdefault("r", r))
    env = dict(os.environ, DISPLAY=x.display)
    while True:
        GLib.MainContext.default().iteration(False)
        r = subprocess.run(["xdotool", "search", "--onlyvisible", "--name", TITLE], env=env,
                           capture_output=True, text=True)
        if r.stdout.split():
            break
        if time.monotonic() - t0 > 60 or not daemon.alive():
            raise TimeoutError(TITLE)
    elapsed = time.monotonic() - t0
    bus.call("org.freedesktop.impl.portal.Request", "Close", None, None, dest=dest, path=handle)
    limentest.wait_until(lambda: "r" in done, 10)
    # Both backends drop the window on Close; wait so the next search finds the next one.
    while subprocess.run(["xdotool", "search", "--onlyvisible", "--name", TITLE], env=env,
                         capture_output=True, text=True).stdout.split():
        if time.monotonic() - t0 > 70:
            raise TimeoutError("window stays")
        time.sleep(0.01)
    return elapsed


def measure(argv, name, x):
    bus = limentest.Bus()
    try:
        # KDE_DEBUG: a crashing reference is not handed to DrKonqi.
        env = dict(x.env(), XDG_CURRENT_DESKTOP="KDE", QT_QPA_PLATFORM="xcb", LIMEN_KDE_PRELOAD="0", KDE_DEBUG="1")
        # A desktop session has its KService cache: build it first, for both alike.
        subprocess.run(["kbuildsycoca5", "--noincremental"], env=dict(bus.env, **env),
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, timeout=60)
        d = bus.start(argv, env=env, wait_name=name, timeout=30)
        icon = png()
        try:
            times = [time_to_window(bus, x, name, icon, d) for _ in range(ROUNDS)]
        except TimeoutError:
            if d.alive():
                raise
            return {"failed": "exited without a window: " + d.output().strip().splitlines()[-1][:200]}
        return {"cold": times[0], "warm": statistics.median(times[1:]), "pss": pss_kib(d.pid)}
    finally:
        bus.close()


def main():
    x = kh.Xvfb()
    try:
        ours = measure([limentest.binary("limen-kde")], kh.KDE_NAME, x)
        ref = measure([kh.REF_KDE], REF_NAME, x)
    finally:
        x.close()
    print(f"launcher dialog, {ROUNDS} rounds (limen-kde without preload)")
    if "failed" in ref:
        print(f"  xdp-kde: {ref['failed']}")
    for key, unit, scale in (("cold", "ms", 1000), ("warm", "ms", 1000), ("pss", "MiB", 1 / 1024)):
        a = ours[key] * scale
        if "failed" in ref:
            print(f"  {key:5} limen-kde {a:8.1f} {unit}")
            continue
        b = ref[key] * scale
        print(f"  {key:5} limen-kde {a:8.1f} {unit}   xdp-kde {b:8.1f} {unit}   ratio {a / b:.2f}")


if __name__ == "__main__":
    main()
