#!/usr/bin/python3
"""Many files opened from a bwrap-sandboxed app through the real file dialog, limen's stack
(limen-portal + limen-documents + limen-kde) against the reference (xdg-desktop-portal 1.16 +
xdg-document-portal + xdg-desktop-portal-kde 5.27) in the same run: a folder of N files, the
dialog driven under Xvfb as a person does it (ctrl+click in the view, ctrl+a, Return; see
autotests/integration/many_files.py), timed from Return to the Response the app receives,
and checked: every file must come back as a document. Prints figures and ratios; asserts
nothing. LIMEN_BENCH_MANY=1000,10000 sets the sizes, LIMEN_BENCH_HUGE=100000 (0: skip) the
one run of the largest, LIMEN_BENCH_MANY_REF=0 skips the reference."""

import datetime
import os
import shutil
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "integration"))
import kde_helpers as kh  # noqa: E402
import limentest  # noqa: E402
import many_files as mf  # noqa: E402


def run_once(stack, x, n, folder_root):
    """One pick of @n files: (seconds from Return to Response or None, outcome text)."""
    bus = limentest.Bus()
    try:
        folder, names = mf.make_folder(folder_root, n)
        if stack == "limen":
            daemon = mf.start_limen_stack(bus, x)
        else:
            daemon = mf.start_reference_stack(bus, x, folder)
        title = f"Many {stack} {n}"
        t_call = time.monotonic()
        proc = mf.start_client(bus, "org.example.Many", folder, title, 900)
        try:
            wid = x.wait_window(title, timeout=120)
            if stack == "limen":
                mf.wait_listed(daemon, n, max(300, n * 0.03))
                listed = time.monotonic() - t_call
            else:
                # No hook in the reference: give its view time to list (checked below:
                # a short listing shows as a short answer).
                time.sleep(2 + n / 2000)
                listed = None
            mf.select_all_in_view(x, wid)
            time.sleep(0.5 + n / 20000)
            x.screenshot(f"bench-many-{stack}-{n}.png")
            wall0 = datetime.datetime.now()
            t0 = mf.press_open(x)
            outcome = wait_outcome(proc, x, t0, limit=float(os.environ.get("LIMEN_BENCH_MANY_LIMIT", 900)))
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.wait()
        if outcome[0] == "error":
            x.screenshot(f"bench-many-{stack}-{n}-failed.png")
            for d in bus.daemons:
                print(f"--- {d.argv[0]}:\n" + "\n".join(l for l in d.output().splitlines()
                                                     if "solid" not in l and "Not connected" not in l)[-1500:],
                      file=sys.stderr)
            return None, outcome[1], listed
        res = outcome[1]
        if res.get("timeout"):
            return None, "no Response", listed
        got = res["uris"]
        if res["response"] != 0:
            return None, f"response {res['response']}", listed
        ok = len(got) == n and sorted(mf.doc_names(got, bus.runtime_dir)) == names
        outcome = ("all %d back" % n) if ok else f"{len(got)} of {n} back"
        if stack == "limen":
            outcome += dialog_share(daemon, wall0)
        return res["at"] - t0, outcome, listed
    finally:
        bus.close()


def dialog_share(daemon, wall0):
    """How much of it limen-kde took: Return to its "File dialog answered" (its log's clock)."""
    for line in daemon.output().splitlines():
        if "File dialog answered" in line:
            stamp = line.split("DEBUG: ", 1)[1].split(": ", 1)[0]
            at = datetime.datetime.combine(wall0.date(), datetime.time.fromisoformat(stamp))
            return " (dialog %.2f s)" % (at - wall0).total_seconds()
    return ""


def wait_outcome(proc, x, t0, limit):
    """The client's answer, or ("error", what) when the dialog shows an error box or
    nothing comes within @limit seconds of Return."""
    while time.monotonic() < t0 + limit:
        if proc.poll() is not None:
            return ("answer", mf.client_result(proc, 10))
        r = x.run("xdotool", "search", "--onlyvisible", "--name", "Cannot open file|could not be found",
                  check=False)
        if r.stdout.split():
            return ("error", "error box 'Cannot open file' after %.1f s" % (time.monotonic() - t0))
        time.sleep(0.1)
    return ("error", "no Response within %.0f s" % limit)


def guarded(fn, *args):
    """A run that broke (e.g. the view never finished listing) is a row saying so."""
    try:
        return fn(*args)
    except Exception as e:  # noqa: BLE001 -- reported in the table, the bench goes on
        return None, f"failed: {type(e).__name__}: {str(e).splitlines()[0][:80]}", None


def main():
    sizes = [int(s) for s in os.environ.get("LIMEN_BENCH_MANY", "1000,10000").split(",") if s]
    huge = int(os.environ.get("LIMEN_BENCH_HUGE", "100000"))
    with_ref = os.environ.get("LIMEN_BENCH_MANY_REF", "1") == "1"
    if not os.path.exists("/dev/fuse"):
        print("no /dev/fuse: skipped")
        return
    x = kh.Xvfb()
    folders = tempfile.mkdtemp(prefix="limen-many-")
    rows = []
    try:
        for n in sizes + ([huge] if huge else []):
            ours = guarded(run_once, "limen", x, n, folders)
            ref = guarded(run_once, "ref", x, n, folders) if with_ref else (None, "not run", None)
            rows.append((n, ours, ref))
            print(f"{n} files: limen {ours[:2]}, reference {ref[:2]}", file=sys.stderr, flush=True)
            shutil.rmtree(os.path.join(folders, f"many-{n}"), ignore_errors=True)
    finally:
        x.close()
        shutil.rmtree(folders, ignore_errors=True)
    print("Open (Return) to Response in a bwrap-sandboxed app, N files selected with ctrl+a")
    print(f"{'N':>8}{'limen (s)':>12}{'reference (s)':>15}{'ratio':>8}  outcome limen / reference")
    for n, (a, oa, _), (b, ob, _) in rows:
        fa = f"{a:.2f}" if a is not None else "-"
        fb = f"{b:.2f}" if b is not None else "-"
        ratio = f"{a / b:.3f}" if a is not None and b else "-"
        print(f"{n:>8}{fa:>12}{fb:>15}{ratio:>8}  {oa} / {ob}")
    for n, (_, _, la), _ in rows:
        if la is not None:
            print(f"limen-kde: OpenFile call to the view listing {n} files: {la:.2f} s")


if __name__ == "__main__":
    main()
