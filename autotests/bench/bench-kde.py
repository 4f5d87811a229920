#!/usr/bin/python3
"""limen-kde against Debian's xdg-desktop-portal-kde, side by side in one run:
idle PSS after start-up and a Settings.ReadAll (what a frontend does first), and the
time from a FileChooser.OpenFile call to its window being mapped (polling xdotool search),
cold (first dialog of the process) and warm; also start-up plus the cold dialog, what a user
waits for when the backend is D-Bus-activated by that first dialog. Prints figures and ratios; asserts nothing."""

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
ROUNDS = int(os.environ.get("LIMEN_BENCH_ROUNDS", "5"))


def pss_kib(pid):
    with open(f"/proc/{pid}/smaps_rollup") as f:
        for line in f:
            if line.startswith("Pss:"):
                return int(line.split()[1])
    return 0


def call_async(bus, dest, iface, method, args, sig):
    done = {}
    bus.conn.call(dest, kh.PATH, iface, method, GLib.Variant(sig, args), None, Gio.DBusCallFlags.NONE, 120000,
                  None, lambda c, r: done.setdefault("r", r))
    return done


def time_to_window(bus, x, dest, title, daemon=None):
    """Seconds to the window being mapped, and (ours only) to its file widget being built."""
    handle = kh.new_handle(bus)
    t0 = time.monotonic()
    done = call_async(bus, dest, "org.freedesktop.impl.portal.FileChooser", "OpenFile",
                      (handle, "org.example.Bench", "", title, {}), "(osssa{sv})")
    # xdotool's --sync polls only twice a second; poll ourselves every few ms instead.
    env = dict(os.environ, DISPLAY=x.display)
    wid = None
    while not wid:
        GLib.MainContext.default().iteration(False)
        r = subprocess.run(["xdotool", "search", "--onlyvisible", "--name", title], env=env,
                           capture_output=True, text=True)
        wid = r.stdout.split()[0] if r.stdout.split() else None
        if time.monotonic() - t0 > 60:
            raise TimeoutError(title)
    elapsed = time.monotonic() - t0
    ready = elapsed
    if daemon is not None:
        # limen-kde maps the window first and builds KFileWidget in the next loop turn.
        marker = f'file widget ready: "{title}"'
        while marker not in daemon.output():
            GLib.MainContext.default().iteration(False)
            time.sleep(0.001)
            if time.monotonic() - t0 > 60:
                raise TimeoutError(marker)
        ready = time.monotonic() - t0
    # Close it the way a caller giving up does.
    bus.call("org.freedesktop.impl.portal.Request", "Close", None, None, dest=dest, path=handle)
    limentest.wait_until(lambda: "r" in done, 10)
    return elapsed, ready


def measure(argv, name, extra_env, label, x, ours=False):
    bus = limentest.Bus()
    try:
        env = dict(x.env())
        env.update(extra_env)
        if os.environ.get("LIMEN_BENCH_SYCOCA", "1") == "1":
            # A desktop session always has its KService cache; build it for this fresh
            # XDG_CACHE_HOME first, for both backends alike, so no one pays for it mid-call.
            subprocess.run(["kbuildsycoca5", "--noincremental"], env=dict(bus.env, **env),
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, timeout=60)
        t0 = time.monotonic()
        d = bus.start(argv, env=env, wait_name=name, timeout=30)
        startup = time.monotonic() - t0
        bus.call("org.freedesktop.impl.portal.Settings", "ReadAll", ([],), "(as)", dest=name, path=kh.PATH)
        time.sleep(1.5)
        idle = pss_kib(d.pid)
        try:
            samples = [time_to_window(bus, x, name, f"Bench {label} {i}", d if ours else None)
                       for i in range(ROUNDS)]
        except TimeoutError:
            print(d.output()[-3000:], "alive:", d.alive(), file=sys.stderr)
            raise
        after = pss_kib(d.pid)
        times = [m for m, _ in samples]
        ready = [r for _, r in samples]
        return {"startup": startup, "idle_pss": idle, "cold": times[0], "activated": startup + times[0],
                "warm": statistics.median(times[1:]) if len(times) > 1 else times[0],
                "cold_ready": ready[0], "warm_ready": statistics.median(ready[1:]) if len(ready) > 1 else ready[0],
                "pss_after": after}
    finally:
        bus.close()


def main():
    reps = int(os.environ.get("LIMEN_BENCH_REPS", "3"))
    x = kh.Xvfb()
    runs = {"ours": [], "ref": []}
    try:
        # Interleaved fresh processes, so load from the rest of the machine hits both alike.
        for _ in range(reps):
            runs["ours"].append(measure([limentest.binary("limen-kde")], kh.KDE_NAME,
                                        {"XDG_CURRENT_DESKTOP": "KDE", "QT_QPA_PLATFORM": "xcb",
                                         "QT_LOGGING_RULES": "limen.shim.debug=true"},
                                        "limen", x, ours=True))
            runs["ref"].append(measure([kh.REF_KDE], REF_NAME,
                                       {"XDG_CURRENT_DESKTOP": "KDE", "QT_QPA_PLATFORM": "xcb"}, "ref", x))
    finally:
        x.close()
    ours = {k: statistics.median(r[k] for r in runs["ours"]) for k in runs["ours"][0]}
    ref = {k: statistics.median(r[k] for r in runs["ref"]) for k in runs["ref"][0]}
    print(f"medians of {reps} fresh processes each, {ROUNDS} dialogs per process")
    print(f"{'':30}{'limen-kde':>12}{'xdp-kde':>12}{'ratio':>8}")
    rows = [("start to bus name (s)", "startup"), ("idle PSS (KiB)", "idle_pss"),
            ("FileChooser mapped, cold (s)", "cold"),
            ("... start + cold dialog (s)", "activated"), ("FileChooser mapped, warm (s)", "warm"),
            ("... file widget built, cold (s)", "cold_ready"), ("... file widget built, warm (s)", "warm_ready"),
            ("PSS after dialogs (KiB)", "pss_after")]
    for label, key in rows:
        a, b = ours[key], ref[key]
        fmt = "{:>12.0f}" if "pss" in key else "{:>12.3f}"
        print(f"{label:30}" + fmt.format(a) + fmt.format(b) + f"{a / b if b else float('nan'):>8.2f}")
    for key, label in (("cold", "cold FileChooser mapped (s)"), ("idle_pss", "idle PSS (KiB)")):
        fmt = "{:.0f}" if "pss" in key else "{:.3f}"
        print(f"{label} per process: limen-kde " + " ".join(fmt.format(r[key]) for r in runs["ours"]) +
              "; xdp-kde " + " ".join(fmt.format(r[key]) for r in runs["ref"]))
    print(f"idle PSS ratio {ours['idle_pss'] / ref['idle_pss']:.2f} (target <= 0.25); "
          f"cold FileChooser ratio {ours['cold'] / ref['cold']:.2f} (target <= 1.0); "
          f"cold with the widget built {ours['cold_ready'] / ref['cold']:.2f} "
          "(the reference maps its window only once its widget is built); "
          f"started on demand (D-Bus activation) to the first window mapped {ours['activated'] / ref['activated']:.2f}")


if __name__ == "__main__":
    main()
