#!/usr/bin/python3
"""limen-kde against Debian's xdg-desktop-portal-kde, side by side in one run:
idle PSS after start-up and a Settings.ReadAll (what a frontend does first), and the
time from a FileChooser.OpenFile call to its window being mapped (polling xdotool search),
cold (first dialog of the process) and warm; also start-up plus the cold dialog, what a user
waits for when the backend is D-Bus-activated by that first dialog. limen-kde runs twice: as in a
Plasma session (the shim preloaded in a background thread after start-up) and with
LIMEN_KDE_PRELOAD=0; and the idle PSS/USS of both and of the reference are measured alone and
beside running KF5 processes that map the same Qt/KF5 libraries (kwin_x11 alone; kwin_x11,
kded5, krunner and klipper; the processes of a Plasma 5.27 X11 session, plasmashell included),
which is what decides whether preloading is worth its memory. LIMEN_BENCH_NEIGHBOURS picks the
sets (comma-separated keys of NEIGHBOURS), LIMEN_BENCH_BREAKDOWN=1 adds the preload's cost file by
file, LIMEN_BENCH_DIALOGS=0 skips the dialog timings. Before each timed process the files
both backends map are read into the page cache, as a session's processes keep them
(LIMEN_BENCH_WARM_CACHE=0 leaves the cache as it is). Prints figures and
ratios; asserts nothing."""

import os
import signal
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
    return mem_kib(pid)["pss"]


def mem_kib(pid):
    """PSS and USS (private clean + dirty) of @pid in KiB, from smaps_rollup."""
    fields = {}
    with open(f"/proc/{pid}/smaps_rollup") as f:
        for line in f:
            parts = line.split()
            if len(parts) >= 2 and parts[0].endswith(":") and parts[1].isdigit():
                fields[parts[0][:-1]] = int(parts[1])
    return {"pss": fields.get("Pss", 0), "uss": fields.get("Private_Clean", 0) + fields.get("Private_Dirty", 0)}


def wait_preloaded(d, timeout=30):
    """limen-kde --verbose says when its background thread has loaded the shim."""
    deadline = time.monotonic() + timeout
    while "Qt shim preloaded" not in d.output():
        if time.monotonic() > deadline:
            raise TimeoutError("no preload:\n" + d.output()[-2000:])
        time.sleep(0.02)


def call_async(bus, dest, iface, method, args, sig):
    done = {}
    bus.conn.call(dest, kh.PATH, iface, method, GLib.Variant(sig, args), None, Gio.DBusCallFlags.NONE, 120000,
                  None, lambda c, r: done.setdefault("r", r))
    return done


def cpu_seconds(pid):
    """CPU time of every live thread of @pid (schedstat: nanoseconds, unlike stat's ticks)."""
    total = 0
    for tid in os.listdir(f"/proc/{pid}/task"):
        try:
            with open(f"/proc/{pid}/task/{tid}/schedstat") as f:
                total += int(f.read().split()[0])
        except (OSError, ValueError):
            pass
    return total / 1e9


def time_to_window(bus, x, dest, title, pid, daemon=None):
    """Seconds to the window being mapped, and (ours only) to its file widget being built;
    and the CPU time process @pid spent until the window was mapped, which a busy machine
    stretches less than the wall-clock time."""
    handle = kh.new_handle(bus)
    cpu0 = cpu_seconds(pid)
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
    cpu = cpu_seconds(pid) - cpu0
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
    return elapsed, ready, cpu


# Every file a measured process had mapped after its dialogs, of both backends.
DIALOG_FILES = set()


def mapped_files(pid):
    with open(f"/proc/{pid}/maps") as f:
        return {line.split(None, 5)[5].strip() for line in f
                if len(line.split(None, 5)) > 5 and line.split(None, 5)[5].startswith("/")}


def warm_page_cache(paths):
    """Read @paths through, so that they are in the page cache: in a desktop session the
    Qt/KF5 libraries and plugins are, since the session's processes map them. Without this,
    a drop_caches by anything else on the machine (bench-documents drops them) makes the
    next first dialog read them from disk, which costs the backend that loads them at its
    first dialog (limen-kde) and not the one that loaded them at start-up (the reference)."""
    for path in paths:
        try:
            with open(path, "rb") as f:
                while f.read(1 << 20):
                    pass
        except OSError:
            pass


def measure(argv, name, extra_env, label, x, ours=False, rounds=ROUNDS):
    bus = limentest.Bus()
    try:
        env = dict(x.env())
        env.update(extra_env)
        if os.environ.get("LIMEN_BENCH_SYCOCA", "1") == "1":
            # A desktop session always has its KService cache; build it for this fresh
            # XDG_CACHE_HOME first, for both backends alike, so no one pays for it mid-call.
            subprocess.run(["kbuildsycoca5", "--noincremental"], env=dict(bus.env, **env),
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, timeout=60)
        if os.environ.get("LIMEN_BENCH_WARM_CACHE", "1") == "1":
            warm_page_cache(sorted(DIALOG_FILES))
        t0 = time.monotonic()
        d = bus.start(argv, env=env, wait_name=name, timeout=30)
        startup = time.monotonic() - t0
        bus.call("org.freedesktop.impl.portal.Settings", "ReadAll", ([],), "(as)", dest=name, path=kh.PATH)
        if ours and extra_env.get("LIMEN_KDE_PRELOAD") != "0":
            wait_preloaded(d)
        time.sleep(1.5)
        idle_mem = mem_kib(d.pid)
        idle = idle_mem["pss"]
        try:
            samples = [time_to_window(bus, x, name, f"Bench {label} {i}", d.pid, d if ours else None)
                       for i in range(rounds)]
        except TimeoutError:
            print(d.output()[-3000:], "alive:", d.alive(), file=sys.stderr)
            raise
        after = pss_kib(d.pid)
        DIALOG_FILES.update(mapped_files(d.pid))
        times = [m for m, _, _ in samples]
        ready = [r for _, r, _ in samples]
        cpu = [c for _, _, c in samples]
        return {"startup": startup, "idle_pss": idle, "idle_uss": idle_mem["uss"], "cold": times[0], "activated": startup + times[0],
                "warm": statistics.median(times[1:]) if len(times) > 1 else times[0],
                "cold_ready": ready[0], "warm_ready": statistics.median(ready[1:]) if len(ready) > 1 else ready[0],
                "cold_cpu": cpu[0], "warm_cpu": statistics.median(cpu[1:]) if len(cpu) > 1 else cpu[0],
                "pss_after": after}
    finally:
        bus.close()


LIMEN_ENV = {"XDG_CURRENT_DESKTOP": "KDE", "QT_QPA_PLATFORM": "xcb", "QT_LOGGING_RULES": "limen.shim.debug=true"}
REF_ENV = {"XDG_CURRENT_DESKTOP": "KDE", "QT_QPA_PLATFORM": "xcb"}


LIBEXEC = "/usr/lib/x86_64-linux-gnu/libexec"
# What runs beside limen-kde, as (argv, bus name or None). "plasma session" is what a
# Plasma 5.27 X11 session runs once logged in (its autostart and the services its shell
# and KWin start on the bus), minus what cannot run here: polkit-kde-authentication-agent-1
# exits without a logind session, and xdg-desktop-portal-kde is what limen-kde replaces.
# krunner and the standalone klipper are not in it: 5.27 starts krunner on first use and
# has Klipper inside plasmashell's clipboard applet. "kf5 four" is the set measured before.
NEIGHBOURS = {
    "alone": (),
    "kwin_x11": ((["/usr/bin/kwin_x11", "--replace"], "org.kde.KWin"),),
    "kf5 four": ((["/usr/bin/kwin_x11", "--replace"], "org.kde.KWin"), (["/usr/bin/kded5"], "org.kde.kded5"),
                 (["/usr/bin/krunner"], "org.kde.krunner"), (["/usr/bin/klipper"], "org.kde.klipper")),
    "plasma session": (
        (["/usr/bin/kwin_x11", "--replace"], "org.kde.KWin"),
        (["/usr/bin/ksmserver", "--no-lockscreen"], "org.kde.ksmserver"),
        (["/usr/bin/kded5"], "org.kde.kded5"),
        (["/usr/bin/kglobalaccel5"], "org.kde.kglobalaccel"),
        ([LIBEXEC + "/kactivitymanagerd"], "org.kde.ActivityManager"),
        (["/usr/bin/plasmashell"], "org.kde.plasmashell"),
        (["/usr/bin/kaccess"], "org.kde.kaccess"),
        ([LIBEXEC + "/org_kde_powerdevil"], "org.kde.Solid.PowerManagement"),
        (["/usr/bin/xembedsniproxy"], None),
        (["/usr/bin/gmenudbusmenuproxy"], None)),
}
NEIGHBOUR_LABELS = {"alone": "alone", "kwin_x11": "beside kwin_x11",
                    "kf5 four": "beside kwin+kded5+krunner+klipper", "plasma session": "beside a Plasma session"}
SESSION_ENV = {"QT_QPA_PLATFORM": "xcb", "KWIN_COMPOSE": "N", "XDG_CURRENT_DESKTOP": "KDE",
               "KDE_FULL_SESSION": "true", "KDE_SESSION_VERSION": "5", "DESKTOP_SESSION": "plasma",
               "XDG_SESSION_TYPE": "x11",
               # Xvfb has no GPU: plasmashell's Qt Quick scene renders through Mesa's llvmpipe.
               "LIBGL_ALWAYS_SOFTWARE": "1"}


def descendants(pids):
    """Every live process whose parent chain leads to one of @pids (a neighbour's helpers)."""
    children = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/stat") as f:
                    ppid = int(f.read().rsplit(")", 1)[1].split()[1])
            except (OSError, IndexError, ValueError):
                continue
            children.setdefault(ppid, []).append(int(entry))
    found, todo = [], list(pids)
    while todo:
        for child in children.get(todo.pop(), []):
            found.append(child)
            todo.append(child)
    return found


class Neighbours:
    """The processes of NEIGHBOURS[@which] on @bus and @x's display, each checked to be
    running after it settled; stop() ends them, and any helper they started, by PID."""

    def __init__(self, bus, x, which):
        self.daemons = []
        env = dict(x.env(), **SESSION_ENV)
        try:
            for argv, name in NEIGHBOURS[which]:
                self.daemons.append(bus.start(argv, env=env, wait_name=name, timeout=90))
            if self.daemons:
                # plasmashell builds its panel and applets after taking its name.
                time.sleep(6 if which == "plasma session" else 2)
            dead = [d.argv[0] for d in self.daemons if not d.alive()]
            if dead:
                raise RuntimeError(f"neighbours exited: {dead}")
        except BaseException:
            self.stop()
            raise

    def pids(self):
        alive = [d.pid for d in self.daemons if d.alive()]
        return alive + descendants(alive)

    def stop(self):
        helpers = descendants([d.pid for d in self.daemons if d.alive()])
        for d in reversed(self.daemons):
            d.stop()
        for pid in helpers:
            try:
                os.kill(pid, signal.SIGTERM)
            except ProcessLookupError:
                pass


def idle_memory(x, neighbour, detail=False):
    """Idle PSS/USS of limen-kde without and with the shim preloaded, and of the reference,
    each started fresh beside the processes of NEIGHBOURS[@neighbour]; with @detail, also
    the per-file smaps of both limen-kde runs."""
    bus = limentest.Bus()
    # The neighbours' UPower, logind and polkit lookups go to a bus of this run, never the host's.
    bus.start_system_bus()
    out = {}
    neighbours = None
    try:
        neighbours = Neighbours(bus, x, neighbour)
        for key, argv, name, env in (
                ("no preload", [limentest.binary("limen-kde"), "--verbose"], kh.KDE_NAME,
                 dict(LIMEN_ENV, LIMEN_KDE_PRELOAD="0")),
                ("preloaded", [limentest.binary("limen-kde"), "--verbose"], kh.KDE_NAME, LIMEN_ENV),
                ("xdp-kde", [kh.REF_KDE], REF_NAME, REF_ENV)):
            d = bus.start(argv, env=dict(x.env(), **env), wait_name=name, timeout=30)
            bus.call("org.freedesktop.impl.portal.Settings", "ReadAll", ([],), "(as)", dest=name, path=kh.PATH)
            if key == "preloaded":
                wait_preloaded(d)
            time.sleep(1.5)
            out[key] = mem_kib(d.pid)
            out[key]["session_pss"] = session_pss_kib(d.pid, neighbours.pids())
            if detail and key != "xdp-kde":
                out[key]["files"] = smaps_by_file(d.pid)
            d.stop()
            bus.wait_for_name_gone(name)
    finally:
        if neighbours:
            neighbours.stop()
        bus.close()
    return out


def _mappings(pid):
    """(start, end, path) of each mapping of @pid; path "" for anonymous memory."""
    out = []
    with open(f"/proc/{pid}/maps") as f:
        for line in f:
            parts = line.split(None, 5)
            start, end = (int(v, 16) for v in parts[0].split("-"))
            path = parts[5].strip() if len(parts) > 5 else ""
            if path != "[vsyscall]":
                out.append((start, end, path))
    return out


def _present_pfns(pagemap, start, end):
    """Page frame numbers of the pages of [start, end) that are in memory."""
    pagemap.seek(start // 4096 * 8)
    data = pagemap.read((end - start) // 4096 * 8)
    entries = memoryview(data).cast("Q")
    return [e & ((1 << 55) - 1) for e in entries if e >> 63]


def session_pss_kib(pid, peers):
    """PSS of @pid counting only @peers as the other mappers of a page: the kernel's PSS
    also divides a page among every other process of the machine that maps it (other
    people's Qt programs on a shared machine), which would make the figure depend on
    them. None without access to page frame numbers (root only)."""
    mine = _mappings(pid)
    paths = {p for _, _, p in mine if p.startswith("/")}
    sharers = {}
    for peer in peers:
        seen = set()
        try:
            with open(f"/proc/{peer}/pagemap", "rb") as pm:
                for start, end, path in _mappings(peer):
                    if path in paths:
                        seen.update(_present_pfns(pm, start, end))
        except (FileNotFoundError, ProcessLookupError):
            continue
        for pfn in seen:
            sharers[pfn] = sharers.get(pfn, 0) + 1
    total = 0.0
    any_pfn = False
    with open(f"/proc/{pid}/pagemap", "rb") as pm:
        for start, end, _ in mine:
            for pfn in _present_pfns(pm, start, end):
                any_pfn = any_pfn or pfn != 0
                total += 4.0 / (1 + sharers.get(pfn, 0))
    return total if any_pfn else None


def smaps_by_file(pid):
    """{file: {"pss", "private", "private_dirty"}} in KiB, summed over each file's mappings."""
    files = {}
    cur = None
    with open(f"/proc/{pid}/smaps") as f:
        for line in f:
            parts = line.split()
            if not parts[0].endswith(":"):
                name = parts[5] if len(parts) > 5 else "[anon]"
                cur = files.setdefault(name, {"pss": 0, "private": 0, "private_dirty": 0})
            elif parts[0] == "Pss:":
                cur["pss"] += int(parts[1])
            elif parts[0] in ("Private_Clean:", "Private_Dirty:"):
                cur["private"] += int(parts[1])
                if parts[0] == "Private_Dirty:":
                    cur["private_dirty"] += int(parts[1])
    return files


def print_breakdown(runs, neighbour, top=25):
    """What the preload adds, file by file (medians of preloaded minus not, same neighbours)."""
    keys = set()
    for r in runs:
        keys |= set(r["preloaded"]["files"]) | set(r["no preload"]["files"])
    zero = {"pss": 0, "private": 0, "private_dirty": 0}
    rows = []
    for k in keys:
        diff = {m: statistics.median(r["preloaded"]["files"].get(k, zero)[m] - r["no preload"]["files"].get(k, zero)[m]
                                     for r in runs) for m in zero}
        rows.append((k, diff))
    rows.sort(key=lambda kv: -kv[1]["pss"])
    total = {m: sum(d[m] for _, d in rows) for m in zero}
    print(f"preload's PSS {NEIGHBOUR_LABELS[neighbour]}, by file (KiB, medians of {len(runs)}; "
          f"total {total['pss']:.0f} PSS, {total['private']:.0f} private of which {total['private_dirty']:.0f} dirty)")
    for k, d in rows[:top]:
        print(f"  {d['pss']:>7.0f} PSS {d['private']:>7.0f} private {d['private_dirty']:>7.0f} dirty  "
              f"{os.path.basename(k)}")


def print_memory(reps, x):
    which = os.environ.get("LIMEN_BENCH_NEIGHBOURS", "alone,kwin_x11,kf5 four,plasma session").split(",")
    detail = os.environ.get("LIMEN_BENCH_BREAKDOWN", "0") == "1"
    samples = {n: [] for n in which}
    for _ in range(reps):
        for neighbour in samples:
            samples[neighbour].append(idle_memory(x, neighbour, detail))
    print(f"idle memory (KiB, medians of {reps}): limen-kde without / with the shim preloaded, "
          "and the reference")
    print(f"{'':34}{'PSS':>8}{'USS':>8}{'PSS':>8}{'USS':>8}{'PSS':>8}{'USS':>8}{'preload costs PSS':>19}")
    for neighbour, runs in samples.items():
        med = {k: {m: statistics.median(r[k][m] for r in runs) for m in ("pss", "uss")} for k in runs[0]}
        cells = "".join(f"{med[k]['pss']:>8.0f}{med[k]['uss']:>8.0f}" for k in ("no preload", "preloaded", "xdp-kde"))
        cost = statistics.median(r["preloaded"]["pss"] - r["no preload"]["pss"] for r in runs)
        print(f"{NEIGHBOUR_LABELS[neighbour]:34}{cells}{cost / 1024:>14.1f} MiB")
    if all(r[k]["session_pss"] is not None for runs in samples.values() for r in runs for k in r):
        print("the same, PSS counting only the bench's own processes as sharers (page frame numbers "
              "from /proc/PID/pagemap; other programs of the machine that map Qt left out)")
        for neighbour, runs in samples.items():
            med = {k: statistics.median(r[k]["session_pss"] for r in runs) for k in runs[0]}
            cost = statistics.median(r["preloaded"]["session_pss"] - r["no preload"]["session_pss"] for r in runs)
            cells = "".join(f"{med[k]:>16.0f}" for k in ("no preload", "preloaded", "xdp-kde"))
            print(f"{NEIGHBOUR_LABELS[neighbour]:34}{cells}{cost / 1024:>14.1f} MiB")
    if detail:
        for neighbour, runs in samples.items():
            if neighbour != "alone":
                print_breakdown(runs, neighbour)


def main():
    reps = int(os.environ.get("LIMEN_BENCH_REPS", "3"))
    x = kh.Xvfb()
    configs = (("preloaded", [limentest.binary("limen-kde"), "--verbose"], kh.KDE_NAME, LIMEN_ENV, True),
               ("no preload", [limentest.binary("limen-kde"), "--verbose"], kh.KDE_NAME,
                dict(LIMEN_ENV, LIMEN_KDE_PRELOAD="0"), True),
               ("xdp-kde", [kh.REF_KDE], REF_NAME, REF_ENV, False))
    runs = {c[0]: [] for c in configs}
    dialogs = os.environ.get("LIMEN_BENCH_DIALOGS", "1") == "1"
    try:
        # One untimed dialog of each first, to learn which files they map (warm_page_cache).
        for key, argv, name, env, ours in configs if dialogs else ():
            measure(argv, name, env, "warm-up", x, ours=ours, rounds=1)
        # Interleaved fresh processes, so load from the rest of the machine hits all alike.
        for _ in range(reps if dialogs else 0):
            for key, argv, name, env, ours in configs:
                label = "ref" if not ours else ("limen" if key == "preloaded" else "limen0")
                runs[key].append(measure(argv, name, env, label, x, ours=ours))
        if os.environ.get("LIMEN_BENCH_MEMORY", "1") == "1":
            print_memory(reps, x)
    finally:
        x.close()
    if not dialogs:
        return
    med = {k: {f: statistics.median(r[f] for r in v) for f in v[0]} for k, v in runs.items()}
    ours, bare, ref = med["preloaded"], med["no preload"], med["xdp-kde"]
    print(f"medians of {reps} fresh processes each, {ROUNDS} dialogs per process; XDG_CURRENT_DESKTOP=KDE")
    print(f"{'':32}{'preloaded':>11}{'no preload':>11}{'xdp-kde':>10}{'ratio':>7}{'ratio':>7}")
    rows = [("start to bus name (s)", "startup"), ("idle PSS (KiB)", "idle_pss"), ("idle USS (KiB)", "idle_uss"),
            ("FileChooser mapped, cold (s)", "cold"), ("... its CPU time, cold (s)", "cold_cpu"),
            ("... start + cold dialog (s)", "activated"), ("FileChooser mapped, warm (s)", "warm"),
            ("... its CPU time, warm (s)", "warm_cpu"),
            ("... file widget built, cold (s)", "cold_ready"), ("... file widget built, warm (s)", "warm_ready"),
            ("PSS after dialogs (KiB)", "pss_after")]
    for label, key in rows:
        a, a0, b = ours[key], bare[key], ref[key]
        if key == "activated":
            # Activated by its first dialog, limen-kde has no time to preload: that call
            # loads the shim itself, as without preloading.
            a = a0
        fmt = "{:>11.0f}" if "pss" in key or "uss" in key else "{:>11.3f}"
        print(f"{label:32}" + fmt.format(a) + fmt.format(a0) + fmt.format(b)[1:] +
              f"{a / b if b else float('nan'):>7.2f}{a0 / b if b else float('nan'):>7.2f}")
    for key, label in (("cold", "cold FileChooser mapped (s)"), ("cold_cpu", "its CPU time (s)"),
                       ("idle_pss", "idle PSS (KiB)")):
        fmt = "{:.0f}" if "pss" in key else "{:.3f}"
        print(f"{label} per process: " + "; ".join(
            f"{k} " + " ".join(fmt.format(r[key]) for r in v) for k, v in runs.items()))
    print(f"cold FileChooser ratio {ours['cold'] / ref['cold']:.2f} preloaded, {bare['cold'] / ref['cold']:.2f} "
          "without (target <= 1.0); "
          f"cold with the widget built {ours['cold_ready'] / ref['cold']:.2f} "
          "(the reference maps its window only once its widget is built); "
          f"started on demand (D-Bus activation) to the first window mapped {bare['activated'] / ref['activated']:.2f}; "
          f"CPU time to the cold window {ours['cold_cpu'] / ref['cold_cpu']:.2f} preloaded, "
          f"{bare['cold_cpu'] / ref['cold_cpu']:.2f} without")


if __name__ == "__main__":
    main()
