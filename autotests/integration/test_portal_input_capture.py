"""InputCapture v2 through limen-portal in front of a test backend (templates/input_capture.py,
a python-dbusmock InputCapture compositor), limen-documents as the permission store (restore
tokens), host callers on connections of their own and bwrap-sandboxed Flatpak callers."""
import json
import math
import os
import socket

import pytest
from gi.repository import Gio, GLib

import limentest
import request_helpers as rh
from request_helpers import v

IC = "org.freedesktop.portal.InputCapture"
IMPL = "org.freedesktop.impl.portal.InputCapture"
CB = "org.freedesktop.portal.Clipboard"
CB_IMPL = "org.freedesktop.impl.portal.Clipboard"
SC_IMPL = "org.freedesktop.impl.portal.ScreenCast"
SESSION = "org.freedesktop.portal.Session"
INVALID = "org.freedesktop.portal.Error.InvalidArgument"
NOT_ALLOWED = "org.freedesktop.portal.Error.NotAllowed"
FAILED = "org.freedesktop.portal.Error.Failed"
APP_A = "org.example.KvmA"
APP_B = "org.example.KvmB"

# Barriers on the mock's zones (1280x800 at 0,0 and 1024x768 at 1280,0).
LEFT_EDGE = (0, 0, 0, 799)
TOP_EDGE = (0, 0, 1279, 0)
RIGHT_EDGE = (2304, 0, 2304, 767)


def write_config(bus, interfaces):
    bus.write_portal_file("limentest", rh.BACKEND_NAME, interfaces, use_in="test")
    conf_dir = os.path.join(bus.config_home, "xdg-desktop-portal")
    os.makedirs(conf_dir, exist_ok=True)
    with open(os.path.join(conf_dir, "test-portals.conf"), "w") as f:
        f.write("[preferred]\ndefault=limentest\n")


def start_suite(bus, params=None, clipboard=False):
    rh.start_documents(bus)   # the permission store keeps the restore tokens
    # With the clipboard, the same backend also serves Clipboard (and a ScreenCast, a kind of
    # session that has no clipboard).
    write_config(bus, [IMPL, CB_IMPL, SC_IMPL] if clipboard else [IMPL])
    backend = rh.Backend(bus, ["input_capture", "clipboard", "screencast"] if clipboard else ["input_capture"],
                         params or {})
    bus.start_portal()
    return backend


@pytest.fixture
def ic(bus):
    return start_suite(bus)


def barrier(bid, pos):
    return {"barrier_id": v("u", bid), "position": v("(iiii)", pos)}


def closed_sessions(bus):
    return bus.call(rh.CONTROL_IFACE, "GetClosedSessions", dest=rh.BACKEND_NAME)[0]


def emit(bus, signal, session, options):
    """The backend sends @signal for @session (dbusmock's EmitSignal, from the backend's name)."""
    bus.call("org.freedesktop.DBus.Mock", "EmitSignal",
             (IMPL, signal, "oa{sv}", [GLib.Variant("o", session), GLib.Variant("a{sv}", options)]),
             "(sssav)", dest=rh.BACKEND_NAME)


class Caller(rh.Client):
    """A host app with a connection of its own; it records every InputCapture signal and
    Session.Closed that reaches it."""

    def __init__(self, bus):
        super().__init__(bus)
        self.closed = []
        self.signals = []
        self.conn.signal_subscribe(None, SESSION, "Closed", None, None, 0, lambda *a: self.closed.append(a[2]))
        self.conn.signal_subscribe(None, IC, None, None, None, 0,
                                   lambda c, s, p, i, name, params: self.signals.append((name, params.unpack())))

    def call(self, method, args, sig):
        return self.bus.call(IC, method, args, sig, conn=self.conn)

    def error(self, method, args, sig):
        with pytest.raises(GLib.Error) as e:
            self.call(method, args, sig)
        return limentest.dbus_error_name(e.value), e.value.message

    def create_v1(self, caps=3, token="s1"):
        response, results = self.request(IC, "CreateSession", ("", {"session_handle_token": v("s", token),
                                                                     "capabilities": v("u", caps)}), "(sa{sv})")
        assert response == 0, results
        return results

    def create2(self, token="s2"):
        results = self.call("CreateSession2", ({"session_handle_token": v("s", token)},), "(a{sv})")[0]
        return results["session_handle"]

    def start_session(self, session, caps=3, **opts):
        opts["capabilities"] = v("u", caps)
        return self.request(IC, "Start", (session, "", opts), "(osa{sv})")

    def zones(self, session):
        return self.request(IC, "GetZones", (session, {}), "(oa{sv})")

    def barriers(self, session, barriers, zone_set):
        return self.request(IC, "SetPointerBarriers", (session, {}, barriers, zone_set), "(oa{sv}aa{sv}u)",
                            options_index=1)

    def eis(self, session):
        r, fds = self.conn.call_with_unix_fd_list_sync(
            "org.freedesktop.portal.Desktop", "/org/freedesktop/portal/desktop", IC, "ConnectToEIS",
            GLib.Variant("(oa{sv})", (session, {})), None, 0, 5000, None, None)
        fd = fds.get(r.unpack()[0])
        with socket.socket(fileno=fd) as s:
            s.settimeout(5)
            return s.recv(16)

    def cb(self, method, args, sig):
        return self.bus.call(CB, method, args, sig, conn=self.conn)

    def cb_error(self, method, args, sig):
        with pytest.raises(GLib.Error) as e:
            self.cb(method, args, sig)
        return limentest.dbus_error_name(e.value), e.value.message

    def cb_fd(self, method, args, sig):
        """A Clipboard method that answers an fd: the fd (ours to close)."""
        r, fds = self.conn.call_with_unix_fd_list_sync(limentest.PORTAL_BUS_NAME, limentest.PORTAL_PATH, CB, method,
                                                       GLib.Variant(sig, args), None, 0, 5000, None, None)
        return fds.get(r.unpack()[0])

    def got(self, name):
        limentest.pump(0.05)
        return [args for n, args in self.signals if n == name]


def started_v2(bus, caller=None):
    c = caller or Caller(bus)
    session = c.create2()
    assert c.start_session(session)[0] == 0
    return c, session


def test_offered_at_the_backends_version_with_its_capabilities(ic, bus):
    assert IC in bus.interfaces()
    # The backend was running when limen-portal started: read without any session.
    assert limentest.wait_until(lambda: bus.get_property(IC, "version") == 2)
    assert bus.get_property(IC, "SupportedCapabilities") == 7


def test_capabilities_the_specification_has_not_named_yet_pass_through(bus):
    """The specification tells apps to ignore unknown capability bits, so later ones will
    come: an app asking for one gets it when the backend grants it, never more than asked."""
    backend = start_suite(bus, {"supported": 0xF})
    assert limentest.wait_until(lambda: bus.get_property(IC, "SupportedCapabilities") == 0xF)
    c = Caller(bus)
    results = c.create_v1(caps=0xF)
    assert results["capabilities"] == 0xF
    assert backend.requests("InputCapture.CreateSession")[-1][3]["capabilities"] == 0xF
    # The backend granting more than asked: only what was asked.
    backend.set_response("InputCapture.CreateSession", 0, {"capabilities": v("u", 0xF)})
    assert c.create_v1(caps=8 | 2, token="s3")["capabilities"] == 8 | 2


def test_not_offered_without_a_backend(bus):
    write_config(bus, ["org.freedesktop.impl.portal.Screenshot"])
    rh.Backend(bus, ["screenshot"])
    bus.start_portal()
    assert IC not in bus.interfaces()
    with pytest.raises(GLib.Error) as e:
        bus.call(IC, "CreateSession2", ({},), "(a{sv})")
    assert "UnknownInterface" in limentest.dbus_error_name(e.value) or \
        "UnknownMethod" in limentest.dbus_error_name(e.value)


def test_version_one_backend(bus):
    start_suite(bus, {"version": 1, "supported": 2})
    c = Caller(bus)
    # CreateSession (version 1) works; the version offered is the backend's.
    results = c.create_v1(caps=3)
    assert results["capabilities"] == 2
    assert limentest.wait_until(lambda: bus.get_property(IC, "version") == 1)
    assert bus.get_property(IC, "SupportedCapabilities") == 2
    # CreateSession2 needs a version 2 backend: a clear error, and no session left behind.
    name, msg = c.error("CreateSession2", ({"session_handle_token": v("s", "v2")},), "(a{sv})")
    assert name == FAILED and "version 1" in msg
    assert not rh.object_exported(bus, limentest.PORTAL_BUS_NAME, c.session_path("v2"))
    limentest.pump(0.2)
    assert not any(p.endswith("/v2") for p in c.closed)    # no Closed for a call that failed


def test_kde_backend_does_not_offer_it():
    """KWin 5.27 has no input capture: limen-kde's .portal file must not claim the interface."""
    with open(os.path.join(os.environ["LIMEN_SOURCE_DIR"], "kde-backend", "data", "limen.portal")) as f:
        assert IMPL not in f.read()


def test_version_one_session_every_method(ic, bus):
    c = Caller(bus)
    results = c.create_v1(caps=3)
    session = results["session_handle"]
    assert results == {"session_handle": session, "capabilities": 3}
    (_, handle, app, opts), = ic.requests("InputCapture.CreateSession")
    assert opts["capabilities"] == 3
    # A session of CreateSession is started: Start is refused.
    name, msg = c.error("Start", (session, "", {"capabilities": v("u", 1)}), "(osa{sv})")
    assert name == NOT_ALLOWED and "already started" in msg
    response, zones = c.zones(session)
    assert response == 0 and zones == {"zones": [(1280, 800, 0, 0), (1024, 768, 1280, 0)], "zone_set": 100}
    # 1 and 3 on edges, 2 diagonal and 4 a point (failed here, whatever the backend says;
    # passed on all the same, as the reference does), 5 off every edge (refused by the backend).
    response, results = c.barriers(session, [barrier(1, LEFT_EDGE), barrier(2, (0, 0, 10, 10)),
                                             barrier(3, RIGHT_EDGE), barrier(4, (5, 5, 5, 5)),
                                             barrier(5, (600, 0, 600, 799))], 100)
    assert response == 0 and sorted(results["failed_barriers"]) == [2, 4, 5]
    (path, sent, zone_set), = ic.args("SetPointerBarriers")
    assert path == session and zone_set == 100
    assert [b["barrier_id"] for b in sent] == [1, 2, 3, 4, 5]
    # Enable needs the EIS connection first; the fd is the backend's socket, passed through.
    assert c.error("Enable", (session, {}), "(oa{sv})")[0] == NOT_ALLOWED
    assert c.eis(session) == b"EIS!"
    assert c.error("ConnectToEIS", (session, {}), "(oa{sv})")[0] == NOT_ALLOWED
    c.call("Enable", (session, {}), "(oa{sv})")
    c.call("Release", (session, {"activation_id": v("u", 9), "cursor_position": v("(dd)", (1.5, 2.0)),
                                  "junk": v("s", "dropped")}), "(oa{sv})")
    c.call("Disable", (session, {}), "(oa{sv})")
    assert limentest.wait_until(lambda: len(ic.args("Disable")) == 1)
    (rpath, rapp, ropts), = ic.args("Release")
    assert rpath == session and ropts == {"activation_id": 9, "cursor_position": (1.5, 2.0)}
    bus.call(SESSION, "Close", path=session, conn=c.conn)
    assert limentest.wait_until(lambda: session in closed_sessions(bus))
    limentest.pump(0.2)
    assert session not in c.closed       # the caller closed it: no Closed, as the reference
    # Gone: every method says so.
    for method, args, sig in (("GetZones", (session, {}), "(oa{sv})"), ("Enable", (session, {}), "(oa{sv})"),
                              ("ConnectToEIS", (session, {}), "(oa{sv})"),
                              ("SetPointerBarriers", (session, {}, [], 100), "(oa{sv}aa{sv}u)")):
        assert c.error(method, args, sig)[0] == INVALID, method


def test_version_two_session(ic, bus):
    c = Caller(bus)
    session = c.create2("two")
    assert session.endswith("/two")
    (path, app, opts), = ic.args("CreateSession2")
    assert path == session
    # Nothing works before Start.
    for method, args, sig in (("GetZones", (session, {}), "(oa{sv})"), ("Enable", (session, {}), "(oa{sv})"),
                              ("ConnectToEIS", (session, {}), "(oa{sv})"),
                              ("SetPointerBarriers", (session, {}, [], 1), "(oa{sv}aa{sv}u)")):
        name, msg = c.error(method, args, sig)
        assert name == NOT_ALLOWED and "Start" in msg, (method, msg)
    assert ic.requests("InputCapture.GetZones") == []
    response, results = c.start_session(session, caps=5)
    assert response == 0 and results == {"capabilities": 5}
    (_, _, _, sopts), = ic.requests("InputCapture.Start")
    assert sopts["capabilities"] == 5 and "restore_data" not in sopts
    name, msg = c.error("Start", (session, "", {"capabilities": v("u", 1)}), "(osa{sv})")
    assert name == NOT_ALLOWED and "already started" in msg
    assert c.zones(session)[0] == 0
    assert c.barriers(session, [barrier(1, TOP_EDGE)], 100) == (0, {"failed_barriers": []})


def test_start_rules(ic, bus):
    c = Caller(bus)
    session = c.create2()
    name, msg = c.error("Start", (session, "", {}), "(osa{sv})")
    assert name == INVALID and "capabilities" in msg
    name, msg = c.error("Start", (session, "", {"capabilities": v("u", 0)}), "(osa{sv})")
    assert name == INVALID and "capabilities" in msg
    name, msg = c.error("Start", (session, "no-window-kind", {"capabilities": v("u", 1)}), "(osa{sv})")
    assert name == INVALID and "parent_window" in msg
    # The frontend's check is the backend's: an X11 id is 32 bits of hex.
    for window in ("x11:zz", "x11:123456789ab"):
        name, msg = c.error("Start", (session, window, {"capabilities": v("u", 1)}), "(osa{sv})")
        assert name == INVALID and "parent_window" in msg
    assert ic.requests("InputCapture.Start") == []
    # The person says no: the session is of no use any more and is closed.
    ic.set_response("InputCapture.Start", 1, {})
    assert c.start_session(session)[0] == 1
    assert limentest.wait_until(lambda: session in c.closed)
    # Closing Start's request closes the session too.
    s2 = c.create2("again")
    ic.set_response("InputCapture.Start", 0, {}, delay_ms=-1)
    handle, pending = c.start(IC, "Start", (s2, "", {"capabilities": v("u", 2)}), "(osa{sv})")
    assert limentest.wait_until(lambda: len(ic.requests("InputCapture.Start")) == 2)
    bus.call(rh.REQUEST_IFACE, "Close", path=handle, conn=c.conn)
    assert limentest.wait_until(lambda: s2 in c.closed)
    # A Start refused before its Request exists (the caller's handle_token is still in use)
    # leaves the session as it was: it can be started afterwards.
    s_open, s_busy = c.create2("open"), c.create2("busy")
    handle, pending = c.start(IC, "Start", (s_open, "", {"capabilities": v("u", 2)}), "(osa{sv})", token="same")
    name, msg = c.error("Start", (s_busy, "", {"capabilities": v("u", 2), "handle_token": v("s", "same")}),
                        "(osa{sv})")
    assert name == INVALID and "handle_token" in msg
    bus.call(rh.REQUEST_IFACE, "Close", path=handle, conn=c.conn)
    ic.set_response("InputCapture.Start", 0, {"capabilities": v("u", 2)})
    assert c.start_session(s_busy, caps=2) == (0, {"capabilities": 2})
    assert s_busy not in c.closed
    # A backend that grants nothing it was asked for answers no capabilities: response 2.
    s3 = c.create2("third")
    ic.set_response("InputCapture.Start", 0, {"clipboard_enabled": v("b", True)})
    assert c.start_session(s3)[0] == 2
    # Granted capabilities never exceed the asked ones.
    s4 = c.create2("fourth")
    ic.set_response("InputCapture.Start", 0, {"capabilities": v("u", 7)})
    assert c.start_session(s4, caps=1) == (0, {"capabilities": 1})


def test_signals_reach_only_the_owner_in_order(ic, bus):
    owner, other = Caller(bus), Caller(bus)
    _, session = started_v2(bus, owner)
    other_session = other.create2("theirs")
    # Before Enable: an Activated is not for the app.
    emit(bus, "Activated", session, {"activation_id": v("u", 1)})
    assert owner.eis(session) == b"EIS!"
    owner.call("Enable", (session, {}), "(oa{sv})")
    emit(bus, "Activated", session, {"activation_id": v("u", 2), "barrier_id": v("u", 1),
                                     "cursor_position": v("(dd)", (0.0, 10.5)), "secret": v("s", "x")})
    assert limentest.wait_until(lambda: owner.got("Activated"))
    assert owner.got("Activated") == [(session, {"activation_id": 2, "barrier_id": 1, "cursor_position": (0.0, 10.5)})]
    emit(bus, "Deactivated", session, {"activation_id": v("u", 2)})
    emit(bus, "ZonesChanged", session, {"zone_set": v("u", 100)})
    emit(bus, "Disabled", session, {})
    assert limentest.wait_until(lambda: owner.got("Disabled"))
    assert owner.got("Deactivated") == [(session, {"activation_id": 2})]
    assert owner.got("ZonesChanged") == [(session, {"zone_set": 100})]
    # A second Disabled while disabled, a Deactivated while not active: not passed on.
    emit(bus, "Disabled", session, {})
    emit(bus, "Deactivated", session, {"activation_id": v("u", 2)})
    # Bad values from the backend are left out and the rest passed on: the app still learns
    # that the capture started and ended (a backend was seen sending cursor_position as (ii)).
    owner.call("Enable", (session, {}), "(oa{sv})")
    emit(bus, "Activated", session, {"activation_id": v("u", 3), "cursor_position": v("(dd)", (math.nan, 1.0))})
    emit(bus, "Deactivated", session, {"activation_id": v("s", "three"), "cursor_position": v("(ii)", (1, 2))})
    # Signals for a session of another caller or for no session at all reach nobody else.
    emit(bus, "ZonesChanged", other_session, {})
    emit(bus, "ZonesChanged", "/org/freedesktop/portal/desktop/session/1_1/nobody", {})
    # The backend's signals are handled in order: once this one is here, all above were.
    emit(bus, "Activated", session, {"activation_id": v("u", 4), "cursor_position": v("(dd)", (3.0, 4.0))})
    assert limentest.wait_until(lambda: len(owner.got("Activated")) == 3)
    assert owner.got("Activated")[1:] == [(session, {"activation_id": 3}),
                                          (session, {"activation_id": 4, "cursor_position": (3.0, 4.0)})]
    assert owner.got("Deactivated")[1:] == [(session, {})]
    assert len(owner.got("Disabled")) == 1 and len(owner.got("Deactivated")) == 2
    assert len(owner.got("ZonesChanged")) == 1
    assert other.signals == []   # the other session is not started: its signals are dropped


def test_zone_set_is_checked(ic, bus):
    c, session = started_v2(bus)
    name, msg = c.error("SetPointerBarriers", (session, {}, [barrier(1, LEFT_EDGE)], 100), "(oa{sv}aa{sv}u)")
    assert name == NOT_ALLOWED and "GetZones" in msg
    assert c.zones(session)[1]["zone_set"] == 100
    name, msg = c.error("SetPointerBarriers", (session, {}, [barrier(1, LEFT_EDGE)], 99), "(oa{sv}aa{sv}u)")
    assert name == INVALID and "zone_set" in msg
    # The zones change: barriers on the old set fail without reaching the backend...
    bus.call(rh.CONTROL_IFACE, "SetZones", ([(1920, 1080, 0, 0)],), "(a(uuii))", dest=rh.BACKEND_NAME)
    emit(bus, "ZonesChanged", session, {"zone_set": v("u", 100)})
    assert limentest.wait_until(lambda: c.got("ZonesChanged"))
    assert c.barriers(session, [barrier(1, LEFT_EDGE), barrier(2, (1, 1, 3, 3))], 100) == \
        (0, {"failed_barriers": [1, 2]})
    assert ic.args("SetPointerBarriers") == []
    # ... and work on the new one.
    response, zones = c.zones(session)
    assert zones == {"zones": [(1920, 1080, 0, 0)], "zone_set": 107}
    assert c.barriers(session, [barrier(1, (1920, 0, 1920, 1079))], 107) == (0, {"failed_barriers": []})


def test_bad_input_gets_clear_errors(ic, bus):
    c, session = started_v2(bus)
    assert c.zones(session)[0] == 0
    zs = 100
    cases = [
        ("CreateSession", ("", {"capabilities": v("s", "all")}), "(sa{sv})", INVALID, "capabilities"),
        ("CreateSession", ("", {}), "(sa{sv})", INVALID, "capabilities"),
        ("CreateSession", ("", {"capabilities": v("u", 0)}), "(sa{sv})", INVALID, "capabilities"),
        ("CreateSession2", ({"session_handle_token": v("s", "bad/token")},), "(a{sv})", INVALID,
         "session_handle_token"),
        ("CreateSession2", ({"session_handle_token": v("u", 3)},), "(a{sv})", INVALID, "session_handle_token"),
        ("Start", (session, "", {"capabilities": v("u", 1), "persist_mode": v("u", 3)}), "(osa{sv})", INVALID,
         "persist_mode"),
        ("Start", (session, "", {"capabilities": v("u", 1), "restore_token": v("u", 3)}), "(osa{sv})", INVALID,
         "restore_token"),
        ("Start", (session, "", {"capabilities": v("u", 1), "restore_token": v("s", "x" * 5000)}), "(osa{sv})",
         INVALID, "restore_token"),
        ("GetZones", (session, {"handle_token": v("u", 1)}), "(oa{sv})", INVALID, "handle_token"),
        ("SetPointerBarriers", (session, {}, [barrier(0, LEFT_EDGE)], zs), "(oa{sv}aa{sv}u)", INVALID, "barrier_id"),
        ("SetPointerBarriers", (session, {}, [{"barrier_id": v("u", 1)}], zs), "(oa{sv}aa{sv}u)", INVALID,
         "position"),
        ("SetPointerBarriers", (session, {}, [{"barrier_id": v("i", 1), "position": v("(iiii)", LEFT_EDGE)}], zs),
         "(oa{sv}aa{sv}u)", INVALID, "barrier_id"),
        ("SetPointerBarriers", (session, {}, [{"barrier_id": v("u", 1), "position": v("(dddd)", (0, 0, 0, 9))}],
                                zs), "(oa{sv}aa{sv}u)", INVALID, "position"),
        ("SetPointerBarriers", (session, {}, [barrier(1, LEFT_EDGE), barrier(1, TOP_EDGE)], zs), "(oa{sv}aa{sv}u)",
         INVALID, "twice"),
        ("SetPointerBarriers", (session, {}, [barrier(i + 1, LEFT_EDGE) for i in range(300)], zs),
         "(oa{sv}aa{sv}u)", INVALID, "at most"),
        ("SetPointerBarriers", (session, {}, [], zs + 1), "(oa{sv}aa{sv}u)", INVALID, "zone_set"),
        ("Release", (session, {"cursor_position": v("(dd)", (math.inf, 0.0))}), "(oa{sv})", INVALID,
         "cursor_position"),
        ("Release", (session, {"activation_id": v("s", "1")}), "(oa{sv})", INVALID, "activation_id"),
        ("Enable", ("/org/freedesktop/portal/desktop/session/1_1/nope", {}), "(oa{sv})", INVALID, "session_handle"),
    ]
    for method, args, sig, name, word in cases:
        got, msg = c.error(method, args, sig)
        assert got == name and word in msg, (method, args if len(str(args)) < 300 else "...", got, msg)
    assert ic.args("SetPointerBarriers") == [] and ic.requests("InputCapture.CreateSession") == []
    # A session handle that is not an input capture session (a Request path, a made-up one).
    name, _ = c.error("GetZones", ("/org/freedesktop/portal/desktop", {}), "(oa{sv})")
    assert name == INVALID
    # Still serving, this session and new ones.
    assert c.barriers(session, [barrier(7, LEFT_EDGE)], zs) == (0, {"failed_barriers": []})
    started_v2(bus)


def test_session_belongs_to_its_caller(ic, bus):
    owner, other = Caller(bus), Caller(bus)
    _, session = started_v2(bus, owner)
    assert owner.zones(session)[0] == 0
    for method, args, sig in (("GetZones", (session, {}), "(oa{sv})"), ("Enable", (session, {}), "(oa{sv})"),
                              ("Release", (session, {}), "(oa{sv})"), ("ConnectToEIS", (session, {}), "(oa{sv})"),
                              ("Start", (session, "", {"capabilities": v("u", 1)}), "(osa{sv})"),
                              ("SetPointerBarriers", (session, {}, [], 100), "(oa{sv}aa{sv}u)")):
        assert other.error(method, args, sig)[0] == INVALID, method
    with pytest.raises(GLib.Error):
        bus.call(SESSION, "Close", path=session, conn=other.conn)
    assert ic.args("ConnectToEIS") == []
    assert owner.eis(session) == b"EIS!"


def test_caller_leaving_closes_the_session(ic, bus):
    c, session = started_v2(bus)
    c.close()
    assert limentest.wait_until(lambda: session in closed_sessions(bus))


@pytest.mark.parametrize("how", ["revoke", "reset"])
def test_revoked_restore_token_closes_the_running_session(ic, bus, how):
    """A kept restore token taken back in the store while its session runs (the permissions
    page's Revoke is DeletePermission; limen-permissions reset) ends that session, as a
    screen cast's: the backend's session is closed and the app hears Closed. A session of the
    same app without a kept token runs on."""
    apps = os.path.join(bus.data_home, "applications")
    os.makedirs(apps, exist_ok=True)
    with open(os.path.join(apps, APP_A + ".desktop"), "w") as f:
        f.write("[Desktop Entry]\nType=Application\nName=Kvm\nExec=/bin/true\n")
    c = Caller(bus)
    bus.call("org.freedesktop.host.portal.Registry", "Register", (APP_A, {}), "(sa{sv})", conn=c.conn)
    kept, plain = c.create2("kept"), c.create2("plain")
    response, results = c.start_session(kept, persist_mode=v("u", 2))
    token = results.get("restore_token")
    assert response == 0 and token, results
    assert c.start_session(plain)[0] == 0
    if how == "revoke":
        bus.call("org.freedesktop.impl.portal.PermissionStore", "DeletePermission", ("input-capture", token, APP_A),
                 "(sss)", dest="org.freedesktop.impl.portal.PermissionStore",
                 path="/org/freedesktop/impl/portal/PermissionStore")
    else:
        import subprocess
        r = subprocess.run([os.path.join(limentest.BUILD_DIR, "kde-backend/kcm/limen-permissions"), "reset", APP_A],
                           env=bus.env, capture_output=True, text=True, timeout=60)
        assert r.returncode == 0, r.stderr
    assert limentest.wait_until(lambda: kept in c.closed, 10)
    assert limentest.wait_until(lambda: kept in closed_sessions(bus), 10)
    assert plain not in c.closed and plain not in closed_sessions(bus)
    assert c.zones(plain)[0] == 0


def test_backend_without_eis_is_a_clear_error(bus):
    start_suite(bus, {"eis": False})
    c, session = started_v2(bus)
    name, msg = c.error("ConnectToEIS", (session, {}), "(oa{sv})")
    assert name == FAILED and "EIS" in msg
    # Not taken: once the backend has EIS, the same session can connect.
    bus.call(rh.CONTROL_IFACE, "SetEis", (True,), "(b)", dest=rh.BACKEND_NAME)
    assert c.eis(session) == b"EIS!"


def test_backend_eis_fd_must_be_a_socket(bus):
    start_suite(bus, {"eis-pipe": True})
    c, session = started_v2(bus)
    name, msg = c.error("ConnectToEIS", (session, {}), "(oa{sv})")
    assert name == FAILED and "EIS" in msg


def test_backend_leaving_closes_its_sessions(ic, bus):
    c, session = started_v2(bus)
    ic.kill()
    assert limentest.wait_until(lambda: session in c.closed)


def test_backend_started_by_the_first_call(bus):
    """A backend that is D-Bus-activated by the session's first call: its name has no owner when
    the session is made, which is not the backend leaving (the session stays open)."""
    import sys
    rh.start_documents(bus)
    write_config(bus, [IMPL])
    bus.write_service_file(rh.BACKEND_NAME, f"{sys.executable} -m dbusmock --template {rh.template('input_capture')}")
    bus.start_portal()
    c = Caller(bus)
    session = c.create2("activated")
    assert bus.has_owner(rh.BACKEND_NAME)
    assert c.start_session(session) == (0, {"capabilities": 3})
    assert session not in c.closed
    # Once it was there, its leaving does close the session.
    pid = bus.conn.call_sync("org.freedesktop.DBus", "/org/freedesktop/DBus", "org.freedesktop.DBus",
                             "GetConnectionUnixProcessID", GLib.Variant("(s)", (rh.BACKEND_NAME,)), None, 0, 5000,
                             None).unpack()[0]
    os.kill(pid, 9)
    assert limentest.wait_until(lambda: session in c.closed)


# ---- sandboxed callers: every method, and restore tokens ---------------------------------
SANDBOX_IC = r'''
import json, socket, sys
from gi.repository import Gio, GLib
conn = Gio.bus_get_sync(Gio.BusType.SESSION, None)
params = json.loads(sys.argv[1])
responses, signals = {}, []
conn.signal_subscribe(None, "org.freedesktop.portal.Request", "Response", None, None, 0,
                      lambda *a: responses.__setitem__(a[2], a[5].unpack()))
IC = "org.freedesktop.portal.InputCapture"
def call(method, args, sig):
    return conn.call_sync("org.freedesktop.portal.Desktop", "/org/freedesktop/portal/desktop", IC, method,
                          GLib.Variant(sig, args), None, 0, 10000, None).unpack()
def wait(handle):
    ctx = GLib.MainContext.default()
    import time
    end = time.time() + 20
    while handle not in responses and time.time() < end:
        ctx.iteration(True)
    return responses[handle]
out = {}
try:
    session = call("CreateSession2", ({"session_handle_token": GLib.Variant("s", "sb")},), "(a{sv})")[0]["session_handle"]
    opts = {"handle_token": GLib.Variant("s", "st"), "capabilities": GLib.Variant("u", 3),
            "persist_mode": GLib.Variant("u", params["persist"])}
    if params.get("token") is not None:
        opts["restore_token"] = GLib.Variant("s", params["token"])
    CB = "org.freedesktop.portal.Clipboard"
    if params.get("clipboard"):
        conn.call_sync("org.freedesktop.portal.Desktop", "/org/freedesktop/portal/desktop", CB, "RequestClipboard",
                       GLib.Variant("(oa{sv})", (session, {})), None, 0, 10000, None)
    resp, res = wait(call("Start", (session, "", opts), "(osa{sv})")[0])
    out["start"] = resp
    out["token"] = res.get("restore_token")
    if params.get("clipboard"):
        out["session"] = session
        out["clipboard_enabled"] = res.get("clipboard_enabled")
        r, fds = conn.call_with_unix_fd_list_sync("org.freedesktop.portal.Desktop", "/org/freedesktop/portal/desktop",
                                                  CB, "SelectionRead", GLib.Variant("(os)", (session, "text/plain")),
                                                  None, 0, 10000, None, None)
        import os
        fd = fds.get(r.unpack()[0])
        out["clip"] = os.read(fd, 100).decode()
        os.close(fd)
    if params.get("all"):
        out["zones"] = wait(call("GetZones", (session, {"handle_token": GLib.Variant("s", "z")}), "(oa{sv})")[0])[1]
        b = [{"barrier_id": GLib.Variant("u", 1), "position": GLib.Variant("(iiii)", (0, 0, 0, 799))},
             {"barrier_id": GLib.Variant("u", 2), "position": GLib.Variant("(iiii)", (0, 0, 9, 9))}]
        out["barriers"] = wait(call("SetPointerBarriers", (session, {"handle_token": GLib.Variant("s", "b")}, b,
                                                           out["zones"]["zone_set"]), "(oa{sv}aa{sv}u)")[0])[1]
        r, fds = conn.call_with_unix_fd_list_sync("org.freedesktop.portal.Desktop", "/org/freedesktop/portal/desktop",
                                                  IC, "ConnectToEIS", GLib.Variant("(oa{sv})", (session, {})), None, 0,
                                                  10000, None, None)
        with socket.socket(fileno=fds.get(r.unpack()[0])) as s:
            s.settimeout(5)
            out["eis"] = s.recv(16).decode()
        for m in ("Enable", "Release", "Disable"):
            call(m, (session, {}), "(oa{sv})")
        out["session"] = session
except GLib.Error as e:
    out["error"] = Gio.DBusError.get_remote_error(e)
print(json.dumps(out))
'''


def _run_ic(bus, app_id, persist=0, token=None, all_methods=False, clipboard=False):
    import subprocess
    info = limentest.FLATPAK_INFO.format(app_id=app_id)
    r, w = os.pipe()
    os.write(w, info.encode())
    os.close(w)
    argv = limentest.bwrap_argv(bus) + ["--ro-bind-data", str(r), "/.flatpak-info", "/usr/bin/python3", "-c",
                                        SANDBOX_IC, json.dumps({"persist": persist, "token": token, "all": all_methods,
                                                    "clipboard": clipboard})]
    try:
        p = subprocess.run(argv, capture_output=True, text=True, timeout=60, pass_fds=(r,),
                           env={"PATH": "/usr/bin:/bin", "LANG": "C.UTF-8", "PYTHONDONTWRITEBYTECODE": "1"})
    finally:
        os.close(r)
    assert p.stdout.strip(), p.stderr
    return json.loads(p.stdout.strip().splitlines()[-1])


def test_sandboxed_app_every_method(ic, bus):
    out = _run_ic(bus, APP_A, all_methods=True)
    assert "error" not in out, out
    assert out["start"] == 0 and out["token"] is None
    assert out["zones"]["zone_set"] == 100 and out["barriers"] == {"failed_barriers": [2]}
    assert out["eis"] == "EIS!"
    # The backend knows the app by its Flatpak id, for every call.
    assert {r[2] for r in ic.requests()} == {APP_A}
    assert {a[1] for m in ("Enable", "Release", "Disable", "ConnectToEIS") for a in ic.args(m)} == {APP_A}
    assert limentest.wait_until(lambda: out["session"] in closed_sessions(bus))   # it left: closed


def test_restore_tokens_are_single_use_and_per_app(ic, bus):
    def last_start():
        return ic.requests("InputCapture.Start")[-1][3]

    first = _run_ic(bus, APP_A, persist=2)
    assert first["start"] == 0 and first["token"], first
    assert "restore_data" not in last_start()
    # Another app's token does nothing: asked as usual, and nothing tells it anything.
    other = _run_ic(bus, APP_B, persist=2, token=first["token"])
    assert other["start"] == 0 and "error" not in other and "restore_data" not in last_start()
    assert _run_ic(bus, APP_A, persist=2, token="not-a-token")["start"] == 0
    assert "restore_data" not in last_start()
    # The owner's token restores (the backend gets its restore data) and yields a new one...
    again = _run_ic(bus, APP_A, persist=2, token=first["token"])
    assert again["start"] == 0 and again["token"] and again["token"] != first["token"]
    assert last_start()["restore_data"] == ("mock", 1, 3)
    # ... and is used up.
    assert _run_ic(bus, APP_A, persist=2, token=first["token"])["start"] == 0
    assert "restore_data" not in last_start()
    # persist_mode 0: no token at all.
    assert _run_ic(bus, APP_A, persist=0)["token"] is None


# ---- the clipboard of an input capture session (Clipboard portal, InputCapture version 2) ----
@pytest.fixture
def icc(bus):
    return start_suite(bus, clipboard=True)


def clip_signals(*callers):
    """Every Clipboard signal that reaches each of @callers, as (caller index, name, args)."""
    got = []
    for i, c in enumerate(callers):
        c.conn.signal_subscribe(None, CB, None, None, None, 0,
                                lambda conn, s, p, iface, name, params, i=i: got.append((i, name, params.unpack())))
    return got


def backend_clip(bus, method, args, sig):
    """The backend sends a Clipboard signal (templates/clipboard.py's controls)."""
    bus.call(rh.CONTROL_IFACE, method, args, sig, dest=rh.BACKEND_NAME)


def test_clipboard_on_an_input_capture_session(icc, bus):
    owner, other = Caller(bus), Caller(bus)
    got = clip_signals(owner, other)
    session = owner.create2("clip")
    owner.cb("RequestClipboard", (session, {"junk": v("s", "dropped")}), "(oa{sv})")
    assert limentest.wait_until(lambda: icc.args("RequestClipboard"))
    assert icc.args("RequestClipboard") == [[session, {}]]
    # Once per session, and nothing else before Start.
    name, msg = owner.cb_error("RequestClipboard", (session, {}), "(oa{sv})")
    assert name == NOT_ALLOWED and "once" in msg
    assert owner.cb_error("SetSelection", (session, {}), "(oa{sv})")[0] == NOT_ALLOWED
    assert owner.cb_error("SelectionRead", (session, "text/plain"), "(os)")[0] == NOT_ALLOWED
    response, results = owner.start_session(session)
    assert response == 0 and results == {"capabilities": 3, "clipboard_enabled": True}
    name, msg = owner.cb_error("RequestClipboard", (session, {}), "(oa{sv})")
    assert name == NOT_ALLOWED and "before" in msg
    # The session owns the clipboard, reads it, and answers transfers the backend announced.
    owner.cb("SetSelection", (session, {"mime_types": v("as", ["text/plain"]), "junk": v("s", "x")}), "(oa{sv})")
    assert limentest.wait_until(lambda: icc.args("SetSelection"))
    assert icc.args("SetSelection") == [[session, {"mime_types": ["text/plain"]}]]
    fd = owner.cb_fd("SelectionRead", (session, "text/plain"), "(os)")
    assert os.read(fd, 100) == b"mock clipboard"
    os.close(fd)
    backend_clip(bus, "EmitTransfer", (session, "text/plain", 5), "(osu)")
    backend_clip(bus, "EmitOwnerChanged", (session, {"mime_types": v("as", ["text/html"]),
                                                     "session_is_owner": v("b", False), "x": v("s", "y")}),
                 "(oa{sv})")
    assert limentest.wait_until(lambda: len(got) == 2)
    limentest.pump(0.2)
    assert sorted(got) == [(0, "SelectionOwnerChanged", (session, {"mime_types": ["text/html"],
                                                                    "session_is_owner": False})),
                           (0, "SelectionTransfer", (session, "text/plain", 5))]
    assert owner.cb_error("SelectionWrite", (session, 6), "(ou)")[0] == INVALID
    os.close(owner.cb_fd("SelectionWrite", (session, 5), "(ou)"))
    owner.cb("SelectionWriteDone", (session, 5, True), "(oub)")
    assert owner.cb_error("SelectionWriteDone", (session, 5, True), "(oub)")[0] == INVALID
    assert limentest.wait_until(lambda: icc.args("SelectionWriteDone") == [[session, 5, True]])
    # The clipboard does not follow the capture's trigger state: released, it still works.
    assert owner.eis(session) == b"EIS!"
    owner.call("Enable", (session, {}), "(oa{sv})")
    owner.call("Disable", (session, {}), "(oa{sv})")
    owner.cb("SetSelection", (session, {"mime_types": v("as", ["text/uri-list"])}), "(oa{sv})")
    assert limentest.wait_until(lambda: len(icc.args("SetSelection")) == 2)
    # Another caller cannot touch it.
    for method, args, sig in (("RequestClipboard", (session, {}), "(oa{sv})"), ("SetSelection", (session, {}), "(oa{sv})"),
                              ("SelectionRead", (session, "text/plain"), "(os)"),
                              ("SelectionWrite", (session, 5), "(ou)"), ("SelectionWriteDone", (session, 5, False), "(oub)")):
        name, msg = other.cb_error(method, args, sig)
        assert name == INVALID and "session_handle" in msg, method
    # Signals from anyone but the backend, or for a closed session, reach nobody.
    bus.conn.emit_signal(None, limentest.PORTAL_PATH, CB_IMPL, "SelectionTransfer",
                         GLib.Variant("(osu)", (session, "text/plain", 9)))
    bus.call(SESSION, "Close", path=session, conn=owner.conn)
    assert limentest.wait_until(lambda: session in closed_sessions(bus))
    backend_clip(bus, "EmitTransfer", (session, "text/plain", 7), "(osu)")
    limentest.pump(0.3)
    assert len(got) == 2
    assert owner.cb_error("SetSelection", (session, {}), "(oa{sv})")[0] == INVALID


def test_clipboard_request_rules(icc, bus):
    c = Caller(bus)
    got = clip_signals(c)
    # A session of CreateSession (version 1) was started at once: too late for the clipboard.
    v1 = c.create_v1()["session_handle"]
    name, msg = c.cb_error("RequestClipboard", (v1, {}), "(oa{sv})")
    assert name == NOT_ALLOWED and "CreateSession2" in msg
    # Neither while its Start is with the backend.
    busy = c.create2("busy")
    icc.set_response("InputCapture.Start", 0, {"capabilities": v("u", 3)}, delay_ms=1500)
    _, pending = c.start(IC, "Start", (busy, "", {"capabilities": v("u", 3)}), "(osa{sv})", token="busy")
    assert limentest.wait_until(lambda: icc.requests("InputCapture.Start"))
    assert c.cb_error("RequestClipboard", (busy, {}), "(oa{sv})")[0] == NOT_ALLOWED
    assert pending.wait()[0] == 0
    # No such session, not a session, a session of a kind without a clipboard.
    sc = c.request("org.freedesktop.portal.ScreenCast", "CreateSession",
                   ({"session_handle_token": v("s", "cast")},), "(a{sv})")[1]["session_handle"]
    for path in ("/org/freedesktop/portal/desktop/session/1_1/nope", "/org/freedesktop/portal/desktop", sc):
        name, msg = c.cb_error("RequestClipboard", (path, {}), "(oa{sv})")
        assert name == INVALID and "session_handle" in msg, path
    assert icc.args("RequestClipboard") == []
    # A backend claiming the clipboard for a session that never asked is not believed.
    unasked = c.create2("unasked")
    icc.set_response("InputCapture.Start", 0, {"capabilities": v("u", 3), "clipboard_enabled": v("b", True)})
    assert c.start_session(unasked) == (0, {"capabilities": 3})
    assert c.cb_error("SetSelection", (unasked, {}), "(oa{sv})")[0] == NOT_ALLOWED
    backend_clip(bus, "EmitTransfer", (unasked, "text/plain", 1), "(osu)")
    # A backend that refuses it: clipboard_enabled false, and the clipboard stays shut.
    refused = c.create2("refused")
    c.cb("RequestClipboard", (refused, {}), "(oa{sv})")
    icc.set_response("InputCapture.Start", 0, {"capabilities": v("u", 3), "clipboard_enabled": v("b", False)})
    assert c.start_session(refused) == (0, {"capabilities": 3, "clipboard_enabled": False})
    assert c.cb_error("SelectionRead", (refused, "text/plain"), "(os)")[0] == NOT_ALLOWED
    backend_clip(bus, "EmitTransfer", (refused, "text/plain", 2), "(osu)")
    limentest.pump(0.3)
    assert got == [] and icc.args("SelectionRead") == []
    # A Start the person refuses ends the session, and its clipboard with it.
    denied = c.create2("denied")
    c.cb("RequestClipboard", (denied, {}), "(oa{sv})")
    icc.set_response("InputCapture.Start", 1, {})
    assert c.start_session(denied)[0] == 1
    assert limentest.wait_until(lambda: denied in c.closed)
    assert c.cb_error("SetSelection", (denied, {}), "(oa{sv})")[0] == INVALID


def test_clipboard_sandboxed_app(icc, bus):
    out = _run_ic(bus, APP_A, clipboard=True)
    assert "error" not in out, out
    assert out["start"] == 0 and out["clipboard_enabled"] is True and out["clip"] == "mock clipboard"
    assert icc.args("RequestClipboard") == [[out["session"], {}]]
    assert icc.args("SelectionRead") == [[out["session"], "text/plain"]]
