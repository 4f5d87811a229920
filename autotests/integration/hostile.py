"""The hostile battery's machinery: a case is a callable that attacks a daemon and returns
"refused" or "accepted", or an (outcome, detail) pair (raising GLib.Error counts as refused,
with the error name kept).
Each case runs with a time limit (past it: "hung"); afterwards the daemon must still be
alive and answer a health call promptly (otherwise: "crashed"). Every case states the
outcome it expects, and the report lists each case with what happened."""
import threading
import time

from gi.repository import Gio, GLib

import limentest

OUTCOMES = ("refused", "accepted", "crashed", "hung")


class Case:
    def __init__(self, name, fn, expect="refused", error=None, timeout=5.0):
        self.name, self.fn, self.expect, self.error, self.timeout = name, fn, expect, error, timeout

    def __repr__(self):
        return self.name


def run_case(case, daemon, health):
    """Returns (outcome, detail)."""
    result = {}

    def target():
        try:
            r = case.fn()
            if isinstance(r, tuple) and len(r) == 2 and r[0] in OUTCOMES:
                result["outcome"], result["detail"] = r      # reported by a sandboxed attacker
            elif isinstance(r, str) and r in OUTCOMES:
                result["outcome"], result["detail"] = r, ""
            else:
                result["outcome"], result["detail"] = "accepted", repr(r)[:120]
        except GLib.Error as e:
            result["outcome"] = "refused"
            result["detail"] = limentest.dbus_error_name(e) or e.message
        except Exception as e:  # noqa: BLE001 - a harness failure is reported, not hidden
            result["outcome"] = "error"
            result["detail"] = f"{type(e).__name__}: {e}"

    t = threading.Thread(target=target, daemon=True)
    t.start()
    t.join(case.timeout)
    if t.is_alive():
        return "hung", f"no answer in {case.timeout} s"
    if not daemon.alive():
        return "crashed", f"daemon exited with {daemon.proc.returncode}"
    try:
        health()
    except GLib.Error as e:
        return "crashed", f"health call failed: {e.message}"
    return result["outcome"], result["detail"]


def check(case, outcome, detail):
    assert outcome == case.expect, f"{case.name}: expected {case.expect}, got {outcome} ({detail})"
    if case.error and outcome == "refused":
        assert detail == case.error, f"{case.name}: expected {case.error}, got {detail}"


def call_on(conn, iface, method, args=None, sig=None, fds=None, dest=limentest.PORTAL_BUS_NAME,
            path=limentest.PORTAL_PATH, timeout=4000):
    params = GLib.Variant(sig, tuple(args)) if sig else None
    fdlist = None
    if fds is not None:
        fdlist = Gio.UnixFDList.new()
        for fd in fds:
            fdlist.append(fd)
    r, _ = conn.call_with_unix_fd_list_sync(dest, path, iface, method, params, None, 0, timeout, fdlist, None)
    return r.unpack() if r else None
