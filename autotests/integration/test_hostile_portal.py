"""Hostile battery, frontend part (issue: fail closed). Each case records refused /
accepted / crashed / hung, asserts the expected outcome, and checks limen-portal still
serves afterwards. Sandboxed attackers run in real bwrap sandboxes."""
import os
import socket
import subprocess
import threading
import time

import pytest
from gi.repository import Gio, GLib

import limentest
from hostile import Case, call_on, check, run_case

HERE = os.path.dirname(os.path.abspath(__file__))
NM = "org.freedesktop.portal.NetworkMonitor"
S = "org.freedesktop.portal.Settings"
T = "org.freedesktop.portal.Trash"
GM = "org.freedesktop.portal.GameMode"
RT = "org.freedesktop.portal.Realtime"
REG = "org.freedesktop.host.portal.Registry"
INVALID = "org.freedesktop.portal.Error.InvalidArgument"
NOT_ALLOWED = "org.freedesktop.portal.Error.NotAllowed"
NOT_TRASHED = "not-trashed"   # TrashFile answered 0
NOT_FOUND = "org.freedesktop.portal.Error.NotFound"
DBUS_INVALID_ARGS = "org.freedesktop.DBus.Error.InvalidArgs"
UNKNOWN_METHOD = "org.freedesktop.DBus.Error.UnknownMethod"


@pytest.fixture(scope="module")
def env():
    bus = limentest.Bus()
    bus.write_portal_file("test", "org.freedesktop.impl.portal.desktop.test",
                          ["org.freedesktop.impl.portal.Settings"], use_in="test")
    bus.start([limentest.python_exe(), os.path.join(HERE, "settings_backend.py"),
               "org.freedesktop.impl.portal.desktop.test", "{'org.example': {'k': <'v'>}}"],
              wait_name="org.freedesktop.impl.portal.desktop.test")
    daemon = bus.start_portal()
    yield bus, daemon
    statuses = bus.close()
    assert all(st in (0, None) or st == -15 for _, st in statuses), statuses


def health_of(bus):
    return lambda: bus.call(NM, "GetAvailable", timeout=1000)


def c(bus, *a, **kw):
    return lambda: call_on(bus.conn, *a, **kw)


def scratch(bus, name, content="x", mode=None):
    path = os.path.join(bus.home, name)
    with open(path, "w") as f:
        f.write(content)
    if mode is not None:
        os.chmod(path, mode)
    return path


def with_fd(path, flags):
    def opener():
        return os.open(path, flags)
    return opener


def fd_call(bus, iface, method, handle, sig, fdmaker, extra=()):
    def fn():
        fd = fdmaker() if fdmaker else None
        try:
            r = call_on(bus.conn, iface, method, (handle,) + tuple(extra), sig,
                        fds=[fd] if fd is not None else None)
            # TrashFile refuses by answering 0, as the specification says.
            return ("refused", NOT_TRASHED) if method == "TrashFile" and r == (0,) else r
        finally:
            if fd is not None:
                os.close(fd)
    return fn


SANDBOX_CALL = """
import os, sys
from gi.repository import Gio, GLib
iface, method, sig, args, fdspec = {iface!r}, {method!r}, {sig!r}, {args!r}, {fdspec!r}
c = Gio.bus_get_sync(Gio.BusType.SESSION, None)
fl = None
if fdspec is not None:
    kind, val = fdspec
    fd = int(val) if kind == 'inherited' else os.open(val, {{'rw': os.O_RDWR, 'ro': os.O_RDONLY, 'path': os.O_PATH}}[kind])
    fl = Gio.UnixFDList.new(); fl.append(fd)
try:
    r, _ = c.call_with_unix_fd_list_sync('org.freedesktop.portal.Desktop', '/org/freedesktop/portal/desktop', iface,
                                         method, GLib.Variant(sig, tuple(args)) if sig else None, None, 0, 4000, fl, None)
    # TrashFile refuses by answering 0, as the specification says.
    print('refused not-trashed' if method == 'TrashFile' and r.unpack() == (0,) else 'accepted')
except GLib.Error as e:
    print('refused', Gio.DBusError.get_remote_error(e))
"""


def sandboxed(bus, info, iface, method, sig=None, args=(), fdspec=None, extra_args=(), binds=(), ro_binds=(),
              pass_fds=()):
    def fn():
        script = SANDBOX_CALL.format(iface=iface, method=method, sig=sig, args=tuple(args), fdspec=fdspec)
        r = limentest.run_sandboxed(bus, "org.example.App", script, flatpak_info=info, extra_args=extra_args,
                                    binds=binds, ro_binds=ro_binds, pass_fds=pass_fds, timeout=10)
        out = r.stdout.split()
        if not out:
            raise RuntimeError(f"sandbox gave nothing: {r.stderr[-300:]}")
        if out[0] == "refused":
            return ("refused", out[1] if len(out) > 1 else "")
        return "accepted"
    return fn


def build_cases(bus):
    cases = []
    add = cases.append
    net_info = "[Application]\nname=org.example.App\n[Context]\nshared=network;\n"

    # --- caller identity: claims that must not parse as anyone -------------------------
    bad_infos = {
        "empty": "", "runtime-only": "[Runtime]\nname=org.example.Platform\n[Context]\nshared=network;\n",
        "no-name": "[Application]\nruntime=x\n[Context]\nshared=network;\n",
        "empty-name": "[Application]\nname=\n[Context]\nshared=network;\n",
        "dotdot": "[Application]\nname=..\n[Context]\nshared=network;\n",
        "slash": "[Application]\nname=org/example/App\n[Context]\nshared=network;\n",
        "traversal": "[Application]\nname=../../../etc\n[Context]\nshared=network;\n",
        "one-element": "[Application]\nname=example\n[Context]\nshared=network;\n",
        # '-' only in the last element, by the reference's rules (a leading digit is fine there)
        "dash-inside": "[Application]\nname=org.my-example.App\n[Context]\nshared=network;\n",
        "space": "[Application]\nname=org.example.My App\n[Context]\nshared=network;\n",
        "non-ascii": "[Application]\nname=org.exämple.App\n[Context]\nshared=network;\n",
        "too-long": "[Application]\nname=org." + "a" * 300 + "\n[Context]\nshared=network;\n",
        "garbage": "\x00\x01\x02not a key file",
        "trailing-dot": "[Application]\nname=org.example.\n[Context]\nshared=network;\n",
    }
    for label, info in bad_infos.items():
        add(Case(f"identity/flatpak-info-{label}", sandboxed(bus, info, NM, "GetStatus"), error=NOT_ALLOWED,
                 timeout=15))
    add(Case("identity/flatpak-info-symlink-dangling",
             sandboxed(bus, False, NM, "GetStatus", extra_args=("--symlink", "/nowhere", "/.flatpak-info")),
             error=NOT_ALLOWED, timeout=15))
    other = scratch(bus, "other-app-info", net_info.replace("org.example.App", "org.example.Other"))
    add(Case("identity/flatpak-info-symlink-to-valid",
             sandboxed(bus, False, NM, "GetStatus", ro_binds=(bus.home,), extra_args=("--symlink", other, "/.flatpak-info")),
             error=NOT_ALLOWED, timeout=15))
    add(Case("identity/flatpak-info-directory",
             sandboxed(bus, False, NM, "GetStatus", extra_args=("--dir", "/.flatpak-info")), error=NOT_ALLOWED, timeout=15))
    fifo = os.path.join(bus.root, "info-fifo")
    os.mkfifo(fifo)
    # A fifo would block a reader that opens it: it must be refused without being opened.
    add(Case("identity/flatpak-info-fifo",
             sandboxed(bus, False, NM, "GetStatus", extra_args=("--ro-bind", fifo, "/.flatpak-info")),
             error=NOT_ALLOWED, timeout=15))
    add(Case("identity/flatpak-info-char-device",
             sandboxed(bus, False, NM, "GetStatus", extra_args=("--ro-bind", "/dev/null", "/.flatpak-info")),
             error=NOT_ALLOWED, timeout=15))
    add(Case("identity/flatpak-info-huge",
             sandboxed(bus, net_info + "#" * (1024 * 1024) + "\n", NM, "GetStatus"), error=NOT_ALLOWED, timeout=15))
    add(Case("identity/env-claims-host", sandboxed(bus, "[Application]\nname=org.example.App\n", NM, "GetStatus",
             extra_args=("--setenv", "XDG_DESKTOP_PORTAL_TEST_APP_INFO_KIND", "host")), error=NOT_ALLOWED, timeout=15))
    add(Case("identity/valid-without-network", sandboxed(bus, "[Application]\nname=org.example.App\n", NM, "GetStatus"),
             error=NOT_ALLOWED, timeout=15))
    # Settings answers the same to everyone, but not to a caller whose claim does not parse.
    add(Case("identity/settings-bad-app-id", sandboxed(bus, "[Application]\nname=../x\n", S, "ReadAll", "(as)",
             ([],)), error=NOT_ALLOWED, timeout=15))
    add(Case("identity/settings-read-flatpak-info-directory",
             sandboxed(bus, False, S, "ReadOne", "(ss)", ("org.example", "k"), extra_args=("--dir", "/.flatpak-info")),
             error=NOT_ALLOWED, timeout=15))
    add(Case("identity/settings-valid-app", sandboxed(bus, "[Application]\nname=org.example.App\n", S, "ReadOne",
             "(ss)", ("org.example", "k")), expect="accepted", timeout=15))
    add(Case("identity/valid-with-network", sandboxed(bus, net_info, NM, "GetStatus"), expect="accepted", timeout=15))
    add(Case("identity/proxy-without-network", sandboxed(bus, "[Application]\nname=org.example.App\n",
             "org.freedesktop.portal.ProxyResolver", "Lookup", "(s)", ("http://x/",)), error=NOT_ALLOWED, timeout=15))
    add(Case("identity/registry-from-sandbox", sandboxed(bus, net_info, REG, "Register", "(sa{sv})",
             ("org.example.Fake", {})), error=NOT_ALLOWED, timeout=15))

    # --- Settings ----------------------------------------------------------------------
    add(Case("settings/huge-namespace", c(bus, S, "ReadOne", ("a" * 100000, "k"), "(ss)"), error=INVALID))
    add(Case("settings/huge-key", c(bus, S, "ReadOne", ("org.example", "k" * 100000), "(ss)"), error=INVALID))
    add(Case("settings/read-huge-key", c(bus, S, "Read", ("org.example", "k" * 5000), "(ss)"), error=INVALID))
    add(Case("settings/many-namespaces", c(bus, S, "ReadAll", (["x"] * 5000,), "(as)"), error=INVALID))
    add(Case("settings/unknown-key", c(bus, S, "ReadOne", ("org.example", "nope"), "(ss)"), error=NOT_FOUND))
    add(Case("settings/unknown-namespace", c(bus, S, "ReadOne", ("org.nope", "k"), "(ss)"), error=NOT_FOUND))
    add(Case("settings/wrong-signature", c(bus, S, "ReadOne", (1,), "(u)"), error=DBUS_INVALID_ARGS))
    add(Case("settings/no-args", c(bus, S, "ReadOne"), error=DBUS_INVALID_ARGS))
    for glob in ("*", ".*", "org.*.x", "**", "org.example.*.*"):
        add(Case(f"settings/glob-{glob}", c(bus, S, "ReadAll", ([glob],), "(as)"), expect="accepted"))
    add(Case("settings/empty-strings", c(bus, S, "ReadOne", ("", ""), "(ss)"), error=NOT_FOUND))
    add(Case("settings/known-key", c(bus, S, "ReadOne", ("org.example", "k"), "(ss)"), expect="accepted"))

    # --- Trash: fds ----------------------------------------------------------------------
    add(Case("trash/index-7-no-fds", c(bus, T, "TrashFile", (7,), "(h)"), error=INVALID))
    add(Case("trash/index-0-no-fds", c(bus, T, "TrashFile", (0,), "(h)"), error=INVALID))
    add(Case("trash/index-negative", c(bus, T, "TrashFile", (-1,), "(h)", fds=[]), error=INVALID))
    f1 = scratch(bus, "t1")
    add(Case("trash/index-out-of-range", fd_call(bus, T, "TrashFile", 3, "(h)", with_fd(f1, os.O_RDWR)), error=INVALID))
    # libportal's read-only fd on a file the caller may delete: trashed, as by the reference.
    add(Case("trash/read-only-fd", fd_call(bus, T, "TrashFile", 0, "(h)", with_fd(f1, os.O_RDONLY)), expect="accepted"))
    add(Case("trash/dev-null", fd_call(bus, T, "TrashFile", 0, "(h)", with_fd("/dev/null", os.O_RDWR)), error=INVALID))
    pair = socket.socketpair()
    add(Case("trash/socket", fd_call(bus, T, "TrashFile", 0, "(h)", lambda: os.dup(pair[0].fileno())),
             error=INVALID))
    add(Case("trash/pipe", fd_call(bus, T, "TrashFile", 0, "(h)", lambda: os.pipe()[1]), error=INVALID))
    add(Case("trash/proc-file", fd_call(bus, T, "TrashFile", 0, "(h)", with_fd("/proc/self/status", os.O_RDONLY)),
             error=NOT_TRASHED))

    def deleted_fd():
        p = scratch(bus, "gone")
        fd = os.open(p, os.O_RDWR)
        os.unlink(p)
        return fd
    add(Case("trash/deleted-file", fd_call(bus, T, "TrashFile", 0, "(h)", deleted_fd), error=NOT_TRASHED))
    add(Case("trash/wrong-signature", c(bus, T, "TrashFile", ("x",), "(s)"), error=DBUS_INVALID_ARGS))

    hidden_dir = os.path.join(bus.root, "hidden")
    os.makedirs(hidden_dir, exist_ok=True)
    hidden = os.path.join(hidden_dir, "secret")
    with open(hidden, "w") as f:
        f.write("s")

    def inherited(kind):
        def fn():
            fd = os.open(hidden, {"rw": os.O_RDWR, "path": os.O_PATH}[kind])
            os.set_inheritable(fd, True)
            try:
                return sandboxed(bus, net_info, T, "TrashFile", "(h)", (0,), fdspec=("inherited", fd),
                                 pass_fds=(fd,))()
            finally:
                os.close(fd)
        return fn
    add(Case("trash/sandbox-hidden-file-rw-fd", inherited("rw"), error=NOT_TRASHED, timeout=15))
    add(Case("trash/sandbox-hidden-file-opath-fd", inherited("path"), error=NOT_TRASHED, timeout=15))
    ro = scratch(bus, "readonly-bound")
    add(Case("trash/sandbox-opath-on-ro-bind", sandboxed(bus, net_info, T, "TrashFile", "(h)", (0,),
             fdspec=("path", ro), ro_binds=(bus.home,)), error=NOT_TRASHED, timeout=15))
    add(Case("trash/sandbox-rw-file-in-ro-folder", sandboxed(bus, net_info, T, "TrashFile", "(h)", (0,),
             fdspec=("rw", ro), ro_binds=(bus.home,), extra_args=("--bind", ro, ro)), error=NOT_TRASHED, timeout=15))
    ok_file = scratch(bus, "sandbox-may-trash")
    add(Case("trash/sandbox-visible-writable", sandboxed(bus, net_info, T, "TrashFile", "(h)", (0,),
             fdspec=("rw", ok_file), binds=(bus.home,)), expect="accepted", timeout=15))
    host_ok = scratch(bus, "host-may-trash")
    add(Case("trash/host-rw", fd_call(bus, T, "TrashFile", 0, "(h)", with_fd(host_ok, os.O_RDWR)), expect="accepted"))

    # --- NetworkMonitor / ProxyResolver -------------------------------------------------
    for host, port, label in (("127.0.0.1", 0, "port-0"), ("127.0.0.1", 65536, "port-65536"),
                              ("127.0.0.1", 2**32 - 1, "port-max"), ("", 80, "empty-host"),
                              ("h" * 5000, 80, "huge-host")):
        add(Case(f"network/can-reach-{label}", c(bus, NM, "CanReach", (host, port), "(su)"), error=INVALID))
    add(Case("network/can-reach-wrong-signature", c(bus, NM, "CanReach", ("x",), "(s)"), error=DBUS_INVALID_ARGS))
    for uri, label in (("", "empty"), ("no scheme", "no-scheme"), ("http://[::1", "bad-ipv6"),
                       ("http://" + "a" * 20000, "huge")):
        add(Case(f"proxy/{label}", c(bus, "org.freedesktop.portal.ProxyResolver", "Lookup", (uri,), "(s)"),
                 error=INVALID))

    # --- GameMode / Realtime (services absent here: NotFound promptly) ------------------
    add(Case("gamemode/absent", c(bus, GM, "QueryStatus", (os.getpid(),), "(i)"), error=NOT_FOUND, timeout=2))
    add(Case("gamemode/by-pid-absent", c(bus, GM, "RegisterGameByPid", (1, 1), "(ii)"), error=NOT_FOUND, timeout=2))
    add(Case("gamemode/pidfd-no-fds", c(bus, GM, "QueryStatusByPIDFd", (0, 1), "(hh)"), error=NOT_FOUND, timeout=2))
    add(Case("realtime/absent", c(bus, RT, "MakeThreadRealtimeWithPID", (1, 1, 1), "(ttu)"), error=NOT_FOUND, timeout=2))
    add(Case("realtime/high-priority-absent", c(bus, RT, "MakeThreadHighPriorityWithPID", (0, 0, -5), "(tti)"),
             error=NOT_FOUND, timeout=2))

    # --- Registry --------------------------------------------------------------------
    for bad in ("", "x", "org..x", "org/x.y", "../../etc", "org.x." * 60):
        add(Case(f"registry/invalid-{bad[:12] or 'empty'}", c(bus, REG, "Register", (bad, {}), "(sa{sv})"),
                 error=INVALID))

    # --- Generic D-Bus surface ---------------------------------------------------------
    add(Case("dbus/unknown-method", c(bus, NM, "Explode"), error=UNKNOWN_METHOD))
    add(Case("dbus/unknown-interface", c(bus, "org.freedesktop.portal.Nope", "Explode"),
             error="org.freedesktop.DBus.Error.UnknownMethod"))
    add(Case("dbus/set-readonly-version", c(bus, "org.freedesktop.DBus.Properties", "Set",
             (NM, "version", GLib.Variant("u", 99)), "(ssv)"), error=DBUS_INVALID_ARGS))
    add(Case("dbus/get-unknown-property", c(bus, "org.freedesktop.DBus.Properties", "Get", (NM, "nope"), "(ss)"),
             error=DBUS_INVALID_ARGS))
    add(Case("dbus/request-path-close-foreign", c(bus, "org.freedesktop.portal.Request", "Close",
             path="/org/freedesktop/portal/desktop/request/1_1/x"), error=UNKNOWN_METHOD))

    # --- Faults ------------------------------------------------------------------------
    def vanish_mid_call():
        for _ in range(30):
            conn = bus.new_connection()
            conn.call(limentest.PORTAL_BUS_NAME, limentest.PORTAL_PATH, S, "ReadAll",
                      GLib.Variant("(as)", ([],)), None, 0, 5000, None, None)
            conn.call(limentest.PORTAL_BUS_NAME, limentest.PORTAL_PATH, NM, "CanReach",
                      GLib.Variant("(su)", ("127.0.0.1", 9)), None, 0, 5000, None, None)
            conn.close_sync(None)
        return "accepted"
    add(Case("faults/callers-vanish-mid-call", vanish_mid_call, expect="accepted", timeout=20))

    def concurrent_200():
        conns = [bus.new_connection() for _ in range(20)]
        done, errors = [], []
        loop = GLib.MainContext.new()
        loop.push_thread_default()
        try:
            t0 = time.monotonic()
            for conn in conns:
                for i in range(10):
                    method, args = (("GetStatus", None) if i % 2 else ("ReadAll", GLib.Variant("(as)", ([],))))
                    iface = NM if i % 2 else S
                    conn.call(limentest.PORTAL_BUS_NAME, limentest.PORTAL_PATH, iface, method, args, None, 0, 5000,
                              None, lambda cn, res: (done.append(1) if cn.call_finish(res) else errors.append(1)))
            while len(done) + len(errors) < 200 and time.monotonic() - t0 < 5:
                loop.iteration(True)
            elapsed = time.monotonic() - t0
        finally:
            loop.pop_thread_default()
            for conn in conns:
                conn.close_sync(None)
        if len(done) != 200 or elapsed >= 1.0:
            raise RuntimeError(f"{len(done)} of 200 answered in {elapsed:.2f} s")
        return "accepted"
    add(Case("faults/200-concurrent-from-20-connections", concurrent_200, expect="accepted", timeout=10))
    return cases


def test_battery(env):
    bus, daemon = env
    cases = build_cases(bus)
    assert len(cases) >= 80
    results = []
    for case in cases:
        outcome, detail = run_case(case, daemon, health_of(bus))
        results.append((case, outcome, detail))
        print(f"{case.name:55} {outcome:9} {detail}")
    failures = []
    for case, outcome, detail in results:
        try:
            check(case, outcome, detail)
        except AssertionError as e:
            failures.append(str(e))
    print(f"{len(results) - len(failures)} passed, {len(failures)} failed")
    assert not failures, "\n".join(failures)


# ==== ScreenCast / RemoteDesktop / Clipboard (issue 20) =======================================
# A block of its own: these portals need their backends (templates/screencast.py and the
# remote-desktop and clipboard templates) and the permission store, so they get their own
# private bus. Victim sessions belong to another connection; attackers are host callers on
# the test's connection and bwrap-sandboxed Flatpak apps.
SC = "org.freedesktop.portal.ScreenCast"
RD = "org.freedesktop.portal.RemoteDesktop"
CB = "org.freedesktop.portal.Clipboard"
CAST_IMPLS = ["org.freedesktop.impl.portal.ScreenCast", "org.freedesktop.impl.portal.RemoteDesktop",
              "org.freedesktop.impl.portal.Clipboard"]


@pytest.fixture(scope="module")
def cast_env():
    import request_helpers as rh
    bus = limentest.Bus()
    rh.start_documents(bus)
    bus.write_portal_file("limentest", rh.BACKEND_NAME, CAST_IMPLS, use_in="test")
    conf_dir = os.path.join(bus.config_home, "xdg-desktop-portal")
    os.makedirs(conf_dir, exist_ok=True)
    with open(os.path.join(conf_dir, "test-portals.conf"), "w") as f:
        f.write("[preferred]\ndefault=limentest\n")
    rh.Backend(bus, ["screencast", "remote_desktop", "clipboard"], {})
    daemon = bus.start_portal()
    yield bus, daemon
    statuses = bus.close()
    assert all(st in (0, None) or st == -15 for _, st in statuses), statuses


def cast_session(bus, iface, token, start=False, types=None, clipboard=False):
    """A session of a connection of its own (the victim); returns (client, path)."""
    import request_helpers as rh
    client = rh.Client(bus)
    response, results = client.request(iface, "CreateSession", ({"session_handle_token": GLib.Variant("s", token)},),
                                       "(a{sv})")
    assert response == 0
    path = results["session_handle"]
    if start and iface == SC:
        assert client.request(SC, "SelectSources", (path, {}), "(oa{sv})")[0] == 0
    if clipboard:
        client.bus.call(CB, "RequestClipboard", (path, {}), "(oa{sv})", conn=client.conn)
    if start and iface == RD:
        opts = {"types": GLib.Variant("u", types)} if types else {}
        assert client.request(RD, "SelectDevices", (path, opts), "(oa{sv})")[0] == 0
    if start:
        assert client.request(iface, "Start", (path, "", {}), "(osa{sv})")[0] == 0
    return client, path


def build_cast_cases(bus):
    cases = []
    add = cases.append
    v = GLib.Variant
    own_client, own = cast_session(bus, SC, "own")
    victim_client, victim = cast_session(bus, SC, "victim", start=True)
    rd_client, rd_victim = cast_session(bus, RD, "rdvictim", start=True, clipboard=True)
    kb_client, kb_only = cast_session(bus, RD, "kbonly", start=True, types=1)
    info = "[Application]\nname=org.example.Hostile\n"

    # --- session handle tokens: sizes, characters, types -------------------------------------
    for label, token in (("too-long", "a" * 300), ("slash", "a/b"), ("space", "a b"), ("empty", ""),
                         ("dot", "a.b"), ("non-ascii", "tökén")):
        add(Case(f"cast/session-token-{label}",
                 c(bus, SC, "CreateSession", ({"session_handle_token": v("s", token)},), "(a{sv})"), error=INVALID))
    add(Case("cast/session-token-wrong-type",
             c(bus, SC, "CreateSession", ({"session_handle_token": v("u", 1)},), "(a{sv})"), error=INVALID))
    add(Case("cast/handle-token-array",
             c(bus, RD, "CreateSession", ({"handle_token": v("as", ["a"])},), "(a{sv})"), error=INVALID))
    add(Case("cast/session-token-of-another-caller-is-its-own",
             c(bus, SC, "CreateSession", ({"session_handle_token": v("s", "own")},), "(a{sv})"), expect="accepted"))

    # --- other callers' sessions ---------------------------------------------------------------
    add(Case("cast/select-on-victim", c(bus, SC, "SelectSources", (victim, {}), "(oa{sv})"), error=INVALID))
    add(Case("cast/start-on-victim", c(bus, SC, "Start", (victim, "", {}), "(osa{sv})"), error=INVALID))
    add(Case("cast/remote-of-victim", c(bus, SC, "OpenPipeWireRemote", (victim, {}), "(oa{sv})"), error=INVALID))
    add(Case("cast/remote-of-victim-sandboxed",
             sandboxed(bus, info, SC, "OpenPipeWireRemote", "(oa{sv})", (victim, {})), error=INVALID))
    add(Case("cast/notify-on-victim", c(bus, RD, "NotifyKeyboardKeycode", (rd_victim, {}, 30, 1), "(oa{sv}iu)"),
             error=INVALID))
    add(Case("cast/notify-on-victim-sandboxed",
             sandboxed(bus, info, RD, "NotifyPointerMotion", "(oa{sv}dd)", (rd_victim, {}, 1.0, 1.0)), error=INVALID))
    add(Case("cast/clipboard-of-victim", c(bus, CB, "SelectionRead", (rd_victim, "text/plain"), "(os)"),
             error=INVALID))
    add(Case("cast/close-victim", c(bus, "org.freedesktop.portal.Session", "Close", path=victim), error=NOT_ALLOWED))
    add(Case("cast/no-such-session", c(bus, SC, "SelectSources", ("/org/freedesktop/portal/desktop/session/1_1/x",
                                                                    {}), "(oa{sv})"), error=INVALID))
    add(Case("cast/not-a-session-path", c(bus, SC, "Start", ("/", "", {}), "(osa{sv})"), error=INVALID))

    # --- option sizes and types ----------------------------------------------------------------
    for label, opts in (("types-all-bits", {"types": v("u", 0xFFFFFFFF)}),
                        ("types-string", {"types": v("s", "1")}), ("cursor-two-modes", {"cursor_mode": v("u", 3)}),
                        ("persist-99", {"persist_mode": v("u", 99)}), ("multiple-int", {"multiple": v("i", 1)}),
                        ("token-1MB", {"restore_token": v("s", "x" * (1 << 20))}),
                        ("token-array", {"restore_token": v("as", ["x"])}),
                        ("token-variant-in-variant", {"restore_token": v("v", v("s", "x"))})):
        add(Case(f"cast/select-{label}", c(bus, SC, "SelectSources", (own, opts), "(oa{sv})"), error=INVALID))
    many = {f"k{i}": v("s", "x" * 100) for i in range(5000)}
    add(Case("cast/select-5000-unknown-keys-dropped",
             lambda: call_on(own_client.conn, SC, "SelectSources", (own, many), "(oa{sv})"), expect="accepted"))
    add(Case("cast/start-parent-window-100k",
             lambda: call_on(victim_client.conn, SC, "Start", (victim, "x" * 100000, {}), "(osa{sv})"),
             error=INVALID))
    add(Case("cast/remote-before-start",
             lambda: call_on(own_client.conn, SC, "OpenPipeWireRemote", (own, {}), "(oa{sv})"), error=NOT_ALLOWED))
    add(Case("cast/second-start", lambda: call_on(victim_client.conn, SC, "Start", (victim, "", {}), "(osa{sv})"),
             error=NOT_ALLOWED))

    # --- restore tokens never tell whether they exist --------------------------------------------
    for label, token in (("random-uuid", "0f6b7c4e-1a2b-4c3d-8e9f-0a1b2c3d4e5f"), ("garbage", "../../etc/passwd"),
                         ("4k", "t" * 4096)):
        def fn(token=token, label=label):
            client, path = cast_session(bus, SC, f"tok{abs(hash(label)) % 1000}")
            return call_on(client.conn, SC, "SelectSources", (path, {"restore_token": v("s", token)}), "(oa{sv})")
        add(Case(f"cast/restore-token-{label}-ignored", fn, expect="accepted"))

    # --- input --------------------------------------------------------------------------------
    for label, method, args, sig in (
            ("nan", "NotifyPointerMotion", (float("nan"), 0.0), "dd"),
            ("inf", "NotifyPointerMotionAbsolute", (0, float("inf"), 0.0), "udd"),
            ("state-2", "NotifyPointerButton", (272, 2), "iu"),
            ("axis-7", "NotifyPointerAxisDiscrete", (7, 1), "ui"),
            ("finish-string", "NotifyPointerAxis", (0.0, 1.0), "dd")):
        opts = {"finish": v("s", "yes")} if label == "finish-string" else {}
        add(Case(f"cast/notify-{label}", lambda m=method, a=args, s=sig, o=opts: call_on(
            rd_client.conn, RD, m, (rd_victim, o) + a, f"(oa{{sv}}{s})"), error=INVALID))
    add(Case("cast/notify-ungranted-pointer", lambda: call_on(kb_client.conn, RD, "NotifyPointerMotion",
                                                              (kb_only, {}, 1.0, 1.0), "(oa{sv}dd)"),
             error=NOT_ALLOWED))
    add(Case("cast/notify-on-screencast-session", lambda: call_on(victim_client.conn, RD, "NotifyKeyboardKeycode",
                                                                  (victim, {}, 30, 1), "(oa{sv}iu)"),
             error=NOT_ALLOWED))

    # --- clipboard bounds -----------------------------------------------------------------------
    add(Case("cast/clipboard-100k-mime-types", lambda: call_on(rd_client.conn, CB, "SetSelection",
                                                               (rd_victim, {"mime_types": v("as", ["a/b"] * 100000)}),
                                                               "(oa{sv})"), error=INVALID))
    add(Case("cast/clipboard-1MB-mime", lambda: call_on(rd_client.conn, CB, "SelectionRead",
                                                        (rd_victim, "a/" + "b" * (1 << 20)), "(os)"), error=INVALID))
    add(Case("cast/clipboard-unknown-serial", lambda: call_on(rd_client.conn, CB, "SelectionWriteDone",
                                                              (rd_victim, 12345, True), "(oub)"), error=INVALID))
    add(Case("cast/clipboard-write-unknown-serial", lambda: call_on(rd_client.conn, CB, "SelectionWrite",
                                                                    (rd_victim, 7), "(ou)"), error=INVALID))
    add(Case("cast/clipboard-request-after-start", lambda: call_on(rd_client.conn, CB, "RequestClipboard",
                                                                   (rd_victim, {}), "(oa{sv})"), error=NOT_ALLOWED))
    return cases


def test_screencast_battery(cast_env):
    bus, daemon = cast_env
    cases = build_cast_cases(bus)
    failures = []
    for case in cases:
        outcome, detail = run_case(case, daemon, health_of(bus))
        print(f"{case.name:55} {outcome:9} {detail}")
        try:
            check(case, outcome, detail)
        except AssertionError as e:
            failures.append(str(e))
    assert bus.call(SC, "CreateSession", ({},), "(a{sv})")   # still serving this portal too
    print(f"{len(cases) - len(failures)} passed, {len(failures)} failed")
    assert not failures, "\n".join(failures)
