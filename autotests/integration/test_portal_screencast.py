"""ScreenCast v6, RemoteDesktop v2 and Clipboard v1 through limen-portal, with the dbusmock
backends of templates/screencast.py, remote_desktop.py and clipboard.py, limen-documents as
the permission store (restore tokens), host callers and bwrap-sandboxed Flatpak callers, and
a real PipeWire + WirePlumber on the private bus for OpenPipeWireRemote."""
import json
import os
import re
import shutil
import subprocess
import time

import pytest
from gi.repository import Gio, GLib

import limentest
import request_helpers as rh
from request_helpers import v

SC = "org.freedesktop.portal.ScreenCast"
RD = "org.freedesktop.portal.RemoteDesktop"
CB = "org.freedesktop.portal.Clipboard"
SESSION = "org.freedesktop.portal.Session"
IMPLS = ["org.freedesktop.impl.portal.ScreenCast", "org.freedesktop.impl.portal.RemoteDesktop",
         "org.freedesktop.impl.portal.Clipboard"]
APP_A = "org.example.CastA"
APP_B = "org.example.CastB"


def start_suite(bus, params=None):
    rh.start_documents(bus)   # the permission store keeps the restore tokens
    bus.write_portal_file("limentest", rh.BACKEND_NAME, IMPLS, use_in="test")
    conf_dir = os.path.join(bus.config_home, "xdg-desktop-portal")
    os.makedirs(conf_dir, exist_ok=True)
    with open(os.path.join(conf_dir, "test-portals.conf"), "w") as f:
        f.write("[preferred]\ndefault=limentest\n")
    backend = rh.Backend(bus, ["screencast", "remote_desktop", "clipboard"], params or {})
    bus.start_portal()
    return backend


@pytest.fixture
def cast(bus):
    return start_suite(bus)


def portal_daemon(bus):
    """The limen-portal started last."""
    return [d for d in bus.daemons if "limen-portal" in d.argv[0]][-1]


def portal_log(bus):
    return portal_daemon(bus).output()


class Caller(rh.Client):
    """A host app driving sessions over a connection of its own."""

    def __init__(self, bus):
        super().__init__(bus)
        self.closed = []
        self.conn.signal_subscribe(None, SESSION, "Closed", None, None, 0, lambda *a: self.closed.append(a[2]))

    def call(self, iface, method, args, sig):
        return self.bus.call(iface, method, args, sig, conn=self.conn)

    def create(self, iface=SC, token="s1"):
        response, results = self.request(iface, "CreateSession", ({"session_handle_token": v("s", token)},),
                                         "(a{sv})")
        assert response == 0, results
        return results["session_handle"]

    def select(self, session, **opts):
        return self.request(SC, "SelectSources", (session, opts), "(oa{sv})")

    def start_session(self, session, iface=SC):
        return self.request(iface, "Start", (session, "", {}), "(osa{sv})")

    def error(self, iface, method, args, sig):
        with pytest.raises(GLib.Error) as e:
            self.call(iface, method, args, sig)
        return limentest.dbus_error_name(e.value), e.value.message


def test_interfaces_and_versions(cast, bus):
    assert {SC, RD, CB} <= bus.interfaces()
    assert bus.get_property(SC, "version") == 6
    assert bus.get_property(RD, "version") == 2
    assert bus.get_property(CB, "version") == 1
    # Taken from the backend (the mock offers monitor+window, hidden+embedded), which was
    # running when limen-portal started: read without any session.
    assert limentest.wait_until(lambda: bus.get_property(SC, "AvailableSourceTypes") == 3)
    assert bus.get_property(SC, "AvailableCursorModes") == 3
    assert limentest.wait_until(lambda: bus.get_property(RD, "AvailableDeviceTypes") == 7)


def test_properties_follow_a_backend_that_starts_later(bus):
    rh.start_documents(bus)
    bus.write_portal_file("limentest", rh.BACKEND_NAME, IMPLS, use_in="test")
    conf_dir = os.path.join(bus.config_home, "xdg-desktop-portal")
    os.makedirs(conf_dir, exist_ok=True)
    with open(os.path.join(conf_dir, "test-portals.conf"), "w") as f:
        f.write("[preferred]\ndefault=limentest\n")
    bus.start_portal()
    # No backend yet: nothing offered, and nothing was started to find out.
    assert bus.get_property(SC, "AvailableSourceTypes") == 0
    assert not bus.has_owner(rh.BACKEND_NAME)
    rh.Backend(bus, ["screencast", "remote_desktop", "clipboard"], {"source-types": 1})
    assert limentest.wait_until(lambda: bus.get_property(SC, "AvailableSourceTypes") == 1)
    # (The mock adds its RemoteDesktop interface only after taking the name: a session
    # makes limen-portal read that backend's properties again.)
    Caller(bus).create(RD, "late")
    assert limentest.wait_until(lambda: bus.get_property(RD, "AvailableDeviceTypes") == 7)


def test_screencast_session_lifecycle(cast, bus):
    c = Caller(bus)
    session = c.create()
    assert session.endswith("/s1")
    assert c.error(SC, "Start", (session, "", {}), "(osa{sv})")[0] == "org.freedesktop.portal.Error.NotAllowed"
    assert c.select(session, types=v("u", 1), multiple=v("b", False), cursor_mode=v("u", 2)) == (0, {})
    opts = cast.requests("ScreenCast.SelectSources")[0][3]
    assert opts["types"] == 1 and opts["cursor_mode"] == 2
    response, results = c.start_session(session)
    assert response == 0
    (node, props), = results["streams"]
    assert node == 42
    assert props == {"id": "0", "position": (0, 0), "size": (1280, 800), "source_type": 1,
                     "mapping_id": "mock-output-0"}
    assert "restore_token" not in results
    # One Start per session, no selection after it.
    name, msg = c.error(SC, "Start", (session, "", {"handle_token": v("s", "again")}), "(osa{sv})")
    assert name == "org.freedesktop.portal.Error.NotAllowed" and "already started" in msg
    assert c.error(SC, "SelectSources", (session, {}), "(oa{sv})")[0] == "org.freedesktop.portal.Error.NotAllowed"
    assert len(cast.requests("ScreenCast.Start")) == 1
    # Closed by the app: the backend's session ends, and the app gets no Closed for it (as
    # from the reference).
    bus.call(SESSION, "Close", path=session, conn=c.conn)
    assert limentest.wait_until(lambda: session in cast.bus.call(rh.CONTROL_IFACE, "GetClosedSessions",
                                                                  dest=rh.BACKEND_NAME)[0])
    limentest.pump(0.2)
    assert session not in c.closed
    # Gone: every method now says so.
    assert c.error(SC, "OpenPipeWireRemote", (session, {}), "(oa{sv})")[0] == \
        "org.freedesktop.portal.Error.InvalidArgument"


def test_bad_select_options_name_the_key(cast, bus):
    c = Caller(bus)
    session = c.create()
    limentest.wait_until(lambda: bus.get_property(SC, "AvailableSourceTypes") == 3)
    for opts, key in (({"types": v("u", 8)}, "types"),
                      ({"types": v("s", "monitor")}, "types"), ({"cursor_mode": v("u", 4)}, "cursor_mode"),
                      ({"cursor_mode": v("u", 3)}, "cursor_mode"), ({"persist_mode": v("u", 3)}, "persist_mode"),
                      ({"multiple": v("s", "yes")}, "multiple"), ({"restore_token": v("u", 1)}, "restore_token"),
                      ({"types": v("u", 4)}, "types")):
        name, msg = c.error(SC, "SelectSources", (session, opts), "(oa{sv})")
        assert name == "org.freedesktop.portal.Error.InvalidArgument", (opts, name)
        assert key in msg, (opts, msg)
    assert cast.requests("ScreenCast.SelectSources") == []
    # Still usable after all that.
    assert c.select(session)[0] == 0


def test_types_zero_is_the_default(cast, bus):
    """types 0 asks for no type in particular: taken as the default (a monitor for
    SelectSources, every device type for SelectDevices) and passed on as it came, as the
    reference does, where Limen once refused it."""
    c = Caller(bus)
    session = c.create()
    limentest.wait_until(lambda: bus.get_property(SC, "AvailableSourceTypes") == 3)
    assert c.select(session, types=v("u", 0))[0] == 0
    assert last_select_options(cast)["types"] == 0
    rd = c.create(RD, "r0")
    assert c.request(RD, "SelectDevices", (rd, {"types": v("u", 0)}), "(oa{sv})")[0] == 0
    assert cast.requests("RemoteDesktop.SelectDevices")[-1][3]["types"] == 0
    # Every type the backend grants counts, as when none was asked.
    cast.set_response("RemoteDesktop.Start", 0, {"devices": v("u", 7)})
    response, results = c.start_session(rd, RD)
    assert response == 0 and results["devices"] == 7, results


def test_session_belongs_to_its_caller(cast, bus):
    owner, other = Caller(bus), Caller(bus)
    session = owner.create()
    assert other.error(SC, "SelectSources", (session, {}), "(oa{sv})")[0] == \
        "org.freedesktop.portal.Error.InvalidArgument"
    with pytest.raises(GLib.Error):
        bus.call(SESSION, "Close", path=session, conn=other.conn)
    assert owner.select(session)[0] == 0


def test_caller_leaving_closes_the_session(cast, bus):
    c = Caller(bus)
    session = c.create()
    assert c.select(session)[0] == 0
    assert c.start_session(session)[0] == 0
    c.close()
    assert limentest.wait_until(lambda: session in bus.call(rh.CONTROL_IFACE, "GetClosedSessions",
                                                            dest=rh.BACKEND_NAME)[0])


def test_refused_start_closes_the_session(cast, bus):
    c = Caller(bus)
    session = c.create()
    assert c.select(session)[0] == 0
    cast.set_response("ScreenCast.Start", 1, {})
    assert c.start_session(session)[0] == 1
    assert limentest.wait_until(lambda: session in c.closed)


def test_closing_the_start_request_closes_the_session(cast, bus):
    c = Caller(bus)
    session = c.create()
    assert c.select(session)[0] == 0
    cast.set_response("ScreenCast.Start", 0, {}, delay_ms=-1)   # the picker stays open
    handle, pending = c.start(SC, "Start", (session, "", {}), "(osa{sv})")
    assert limentest.wait_until(lambda: cast.requests("ScreenCast.Start"))
    bus.call(rh.REQUEST_IFACE, "Close", path=handle, conn=c.conn)
    # The backend's dialog is told, and the session cannot be started any more: it is gone.
    assert limentest.wait_until(lambda: handle in cast.closed())
    assert limentest.wait_until(lambda: session in c.closed)
    assert c.error(SC, "Start", (session, "", {}), "(osa{sv})")[0] == "org.freedesktop.portal.Error.InvalidArgument"


def test_backend_streams_are_checked(cast, bus):
    c = Caller(bus)
    session = c.create()
    assert c.select(session)[0] == 0
    # Node 0 is PipeWire's core: never a stream.
    cast.set_response("ScreenCast.Start", 0, {"streams": v("a(ua{sv})", [(0, {})])})
    assert c.start_session(session)[0] == 2
    c2 = Caller(bus)
    s2 = c2.create(token="s2")
    assert c2.select(s2)[0] == 0
    cast.set_response("ScreenCast.Start", 0, {"streams": v("a(ua{sv})", [(7, {"size": v("s", "big"),
                                                                              "extra": v("s", "x")})])})
    response, results = c2.start_session(s2)
    assert response == 0 and results["streams"] == [(7, {})]
    # A backend's own pipewire-serial (version 6) reaches the app as it is; one of another
    # type is dropped.
    for serial, expected in ((v("t", 133742), {"pipewire-serial": 133742}), (v("s", "133742"), {})):
        c4 = Caller(bus)
        s4 = c4.create(token="serial")
        assert c4.select(s4)[0] == 0
        cast.set_response("ScreenCast.Start", 0, {"streams": v("a(ua{sv})", [(9, {"pipewire-serial": serial})])})
        response, results = c4.start_session(s4)
        assert response == 0 and results["streams"] == [(9, expected)]
    # One source asked for: one stream answered, whatever the backend says; several if asked.
    two = v("a(ua{sv})", [(7, {}), (8, {})])
    for multiple, expected in ((False, [(7, {})]), (True, [(7, {}), (8, {})])):
        c3 = Caller(bus)
        s3 = c3.create(token="m")
        assert c3.select(s3, multiple=v("b", multiple))[0] == 0
        cast.set_response("ScreenCast.Start", 0, {"streams": two})
        response, results = c3.start_session(s3)
        assert response == 0 and results["streams"] == expected


# ---- restore tokens, as Flatpak apps in bwrap ------------------------------------------------
SANDBOX_CAST = r'''
import json, sys
from gi.repository import Gio, GLib
conn = Gio.bus_get_sync(Gio.BusType.SESSION, None)
params = json.loads(sys.argv[1])
responses = {}
conn.signal_subscribe(None, "org.freedesktop.portal.Request", "Response", None, None, 0,
                      lambda *a: responses.__setitem__(a[2], a[5].unpack()))
def call(method, args, sig):
    r = conn.call_sync("org.freedesktop.portal.Desktop", "/org/freedesktop/portal/desktop",
                       "org.freedesktop.portal.ScreenCast", method, GLib.Variant(sig, args), None, 0, 10000, None)
    return r.unpack()[0]
def wait(handle):
    ctx = GLib.MainContext.default()
    import time
    end = time.time() + 20
    while handle not in responses and time.time() < end:
        ctx.iteration(True)
    return responses[handle]
out = {}
try:
    h = call("CreateSession", ({"session_handle_token": GLib.Variant("s", "sb"),
                                "handle_token": GLib.Variant("s", "c")},), "(a{sv})")
    session = wait(h)[1]["session_handle"]
    opts = {"handle_token": GLib.Variant("s", "sel"), "persist_mode": GLib.Variant("u", params["persist"])}
    if params.get("token") is not None:
        opts["restore_token"] = GLib.Variant("s", params["token"])
    out["select"] = wait(call("SelectSources", (session, opts), "(oa{sv})"))[0]
    resp, res = wait(call("Start", (session, "", {"handle_token": GLib.Variant("s", "st")}), "(osa{sv})"))
    out["start"] = resp
    out["token"] = res.get("restore_token")
    out["streams"] = [n for n, _ in res.get("streams", [])]
    if params.get("probe"):
        import subprocess
        r, fds = conn.call_with_unix_fd_list_sync(
            "org.freedesktop.portal.Desktop", "/org/freedesktop/portal/desktop", "org.freedesktop.portal.ScreenCast",
            "OpenPipeWireRemote", GLib.Variant("(oa{sv})", (session, {})), None, 0, 10000, None, None)
        fd = fds.get(r.unpack()[0])
        p = subprocess.run([params["probe"], str(fd)], pass_fds=(fd,), capture_output=True, text=True, timeout=20)
        out["probe"] = p.stdout
        out["probe_status"] = p.returncode
except GLib.Error as e:
    out["error"] = Gio.DBusError.get_remote_error(e)
print(json.dumps(out))
'''


def _run_cast(bus, app_id, persist, token, probe=None):
    info = limentest.FLATPAK_INFO.format(app_id=app_id)
    r, w = os.pipe()
    os.write(w, info.encode())
    os.close(w)
    argv = limentest.bwrap_argv(bus, ro_binds=(probe,) if probe else ()) + [
        "--ro-bind-data", str(r), "/.flatpak-info", "/usr/bin/python3", "-c", SANDBOX_CAST,
        json.dumps({"persist": persist, "token": token, "probe": probe})]
    try:
        p = subprocess.run(argv, capture_output=True, text=True, timeout=60, pass_fds=(r,),
                           env={"PATH": "/usr/bin:/bin", "LANG": "C.UTF-8", "PYTHONDONTWRITEBYTECODE": "1"})
    finally:
        os.close(r)
    assert p.stdout.strip(), p.stderr
    return json.loads(p.stdout.strip().splitlines()[-1])


def last_select_options(backend):
    return backend.requests("ScreenCast.SelectSources")[-1][3]


def test_restore_tokens_are_single_use_and_per_app(cast, bus):
    first = _run_cast(bus, APP_A, 2, None)
    assert first["start"] == 0 and first["token"], first
    assert "restore_data" not in last_select_options(cast)
    # Another app's token does nothing: it is asked as usual, and no error tells it anything.
    other = _run_cast(bus, APP_B, 2, first["token"])
    assert other["select"] == 0 and "error" not in other
    assert "restore_data" not in last_select_options(cast)
    # A malformed token is ignored the same way.
    assert _run_cast(bus, APP_A, 2, "not-a-token")["select"] == 0
    assert "restore_data" not in last_select_options(cast)
    # The owner's token restores (the backend gets its restore data) and yields a new one...
    again = _run_cast(bus, APP_A, 2, first["token"])
    assert again["start"] == 0
    assert tuple(last_select_options(cast)["restore_data"]) == ("mock", 1, 42)
    assert again["token"] and again["token"] != first["token"]
    # ...and works once only.
    assert _run_cast(bus, APP_A, 2, first["token"])["select"] == 0
    assert "restore_data" not in last_select_options(cast)


def test_restore_token_survives_a_restart(cast, bus):
    first = _run_cast(bus, APP_A, 2, None)
    portal_daemon(bus).stop()
    bus.wait_for_name_gone(limentest.PORTAL_BUS_NAME)
    bus.start_portal()
    again = _run_cast(bus, APP_A, 2, first["token"])
    assert again["start"] == 0
    assert tuple(last_select_options(cast)["restore_data"]) == ("mock", 1, 42)


def test_transient_token_lives_in_the_daemon(cast, bus):
    """Mode 1 lasts as long as the app runs: the token is kept in memory, not in the store,
    and only the connection it was issued to can use it (as in the reference)."""
    c = Caller(bus)
    s = c.create(token="t1")
    assert c.select(s, types=v("u", 1), persist_mode=v("u", 1))[0] == 0
    response, results = c.start_session(s)
    token = results["restore_token"]
    assert response == 0 and token
    # Mode 1 is not written to the permission store.
    with pytest.raises(GLib.Error) as e:
        bus.call("org.freedesktop.impl.portal.PermissionStore", "Lookup", ("screencast", token), "(ss)",
                 dest="org.freedesktop.impl.portal.PermissionStore",
                 path="/org/freedesktop/impl/portal/PermissionStore")
    assert limentest.dbus_error_name(e.value) == "org.freedesktop.portal.Error.NotFound"
    # Another connection of the same app (a restarted app) has no use for it: asked again.
    other = Caller(bus)
    s_other = other.create(token="t2")
    assert other.select(s_other, types=v("u", 1), persist_mode=v("u", 1), restore_token=v("s", token))[0] == 0
    assert "restore_data" not in last_select_options(cast)
    # Still good for its own connection, once.
    s2 = c.create(token="t3")
    assert c.select(s2, types=v("u", 1), persist_mode=v("u", 1), restore_token=v("s", token))[0] == 0
    assert tuple(last_select_options(cast)["restore_data"]) == ("mock", 1, 42)
    response, again = c.start_session(s2)
    assert response == 0 and again["restore_token"] not in ("", token)
    s3 = c.create(token="t4")
    assert c.select(s3, types=v("u", 1), persist_mode=v("u", 1), restore_token=v("s", token))[0] == 0
    assert "restore_data" not in last_select_options(cast)
    # Sandboxed: one process, one connection, two sessions.
    first = _run_cast(bus, APP_A, 1, None)
    assert first["token"]
    assert _run_cast(bus, APP_A, 1, first["token"])["start"] == 0
    assert "restore_data" not in last_select_options(cast)


# ---- RemoteDesktop ---------------------------------------------------------------------------
def rd_start(c, types=7, sources=False, clipboard=False, token="r1"):
    session = c.create(RD, token)
    if clipboard:
        c.call(CB, "RequestClipboard", (session, {}), "(oa{sv})")
    if sources:
        assert c.select(session)[0] == 0
    assert c.request(RD, "SelectDevices", (session, {"types": v("u", types)}), "(oa{sv})")[0] == 0
    response, results = c.start_session(session, RD)
    assert response == 0, results
    return session, results


def test_remote_desktop_streams_the_backend_gave_without_select_sources(cast, bus):
    """A remote-desktop backend may answer Start with streams nobody selected (absolute input
    names one): the app gets them and may use them, as from upstream's frontend; a stream
    without a size takes any position."""
    cast.set_response("RemoteDesktop.Start", 0, {
        "devices": v("u", 2),
        "streams": v("a(ua{sv})", [(42, {"size": v("(ii)", (640, 480))}), (43, {})])})
    c = Caller(bus)
    session = c.create(RD, "r8")
    assert c.request(RD, "SelectDevices", (session, {"types": v("u", 2)}), "(oa{sv})")[0] == 0
    response, results = c.start_session(session, RD)
    assert response == 0, results
    assert [node for node, _ in results["streams"]] == [42, 43]
    c.call(RD, "NotifyPointerMotionAbsolute", (session, {}, 42, 639.0, 479.0), "(oa{sv}udd)")
    c.call(RD, "NotifyPointerMotionAbsolute", (session, {}, 43, 5000.0, 5000.0), "(oa{sv}udd)")
    assert limentest.wait_until(lambda: len(cast.args("NotifyPointerMotionAbsolute")) == 2)
    assert "Invalid position" in c.error(RD, "NotifyPointerMotionAbsolute", (session, {}, 42, 640.0, 0.0),
                                         "(oa{sv}udd)")[1]
    # Malformed streams are left out; the session still starts.
    cast.set_response("RemoteDesktop.Start", 0, {"devices": v("u", 2), "streams": v("a(ua{sv})", [(0, {})])})
    s2 = c.create(RD, "r7")
    response, results = c.start_session(s2, RD)
    assert response == 0 and "streams" not in results, results


def test_remote_desktop_starts_without_select_devices(cast, bus):
    """SelectDevices is optional before Start (the reference starts such a session too): the
    backend decides the devices, and only those it granted may be used."""
    c = Caller(bus)
    session = c.create(RD, "r9")
    response, results = c.start_session(session, RD)
    assert response == 0, results
    assert cast.requests("RemoteDesktop.SelectDevices") == []
    granted = results["devices"]
    if granted & 1:
        c.call(RD, "NotifyKeyboardKeycode", (session, {}, 30, 1), "(oa{sv}iu)")
        assert limentest.wait_until(lambda: cast.args("NotifyKeyboardKeycode"))
    else:
        assert c.error(RD, "NotifyKeyboardKeycode", (session, {}, 30, 1), "(oa{sv}iu)")[0] == \
            "org.freedesktop.portal.Error.NotAllowed"


def test_notify_refused_before_start_after_close_and_when_not_granted(cast, bus):
    c = Caller(bus)
    session = c.create(RD, "r0")
    name, msg = c.error(RD, "NotifyKeyboardKeycode", (session, {}, 30, 1), "(oa{sv}iu)")
    assert name == "org.freedesktop.portal.Error.NotAllowed" and "started" in msg
    assert c.request(RD, "SelectDevices", (session, {"types": v("u", 1)}), "(oa{sv})")[0] == 0
    response, results = c.start_session(session, RD)
    assert response == 0 and results["devices"] == 1 and results["clipboard_enabled"] is False
    c.call(RD, "NotifyKeyboardKeycode", (session, {}, 30, 1), "(oa{sv}iu)")
    c.call(RD, "NotifyKeyboardKeysym", (session, {}, 0x61, 0), "(oa{sv}iu)")
    assert limentest.wait_until(lambda: len(cast.args("NotifyKeyboardKeysym")) == 1)
    assert cast.args("NotifyKeyboardKeycode")[0][2:] == [30, 1]
    for method, args, sig in (("NotifyPointerMotion", (session, {}, 1.0, 2.0), "(oa{sv}dd)"),
                              ("NotifyPointerButton", (session, {}, 272, 1), "(oa{sv}iu)"),
                              ("NotifyTouchUp", (session, {}, 0), "(oa{sv}u)")):
        name, msg = c.error(RD, method, args, sig)
        assert name == "org.freedesktop.portal.Error.NotAllowed" and "not granted" in msg, (method, msg)
    assert c.error(RD, "NotifyKeyboardKeycode", (session, {}, 30, 7), "(oa{sv}iu)")[0] == \
        "org.freedesktop.portal.Error.InvalidArgument"
    assert c.error(RD, "ConnectToEIS", (session, {}), "(oa{sv})")[0] == "org.freedesktop.DBus.Error.NotSupported"
    bus.call(SESSION, "Close", path=session, conn=c.conn)
    assert c.error(RD, "NotifyKeyboardKeycode", (session, {}, 30, 1), "(oa{sv}iu)")[0] == \
        "org.freedesktop.portal.Error.InvalidArgument"
    assert cast.args("NotifyPointerMotion") == [] and len(cast.args("NotifyKeyboardKeycode")) == 1


def test_remote_desktop_with_streams(cast, bus):
    c = Caller(bus)
    session, results = rd_start(c, types=6, sources=True)
    assert results["devices"] == 6 and results["streams"][0][0] == 42
    c.call(RD, "NotifyPointerMotionAbsolute", (session, {}, 42, 10.0, 20.0), "(oa{sv}udd)")
    c.call(RD, "NotifyTouchDown", (session, {}, 42, 0, 1.0, 1.0), "(oa{sv}uudd)")
    c.call(RD, "NotifyPointerAxis", (session, {"finish": v("b", True)}, 0.0, 3.0), "(oa{sv}dd)")
    assert limentest.wait_until(lambda: len(cast.args("NotifyPointerAxis")) == 1)
    assert cast.args("NotifyPointerAxis")[0][1] == {"finish": True}
    name, msg = c.error(RD, "NotifyPointerMotionAbsolute", (session, {}, 7, 1.0, 1.0), "(oa{sv}udd)")
    assert name == "org.freedesktop.portal.Error.InvalidArgument" and "Invalid position" in msg, msg
    # Positions lie within the stream's size (1280x800 from the backend), as upstream checks.
    for x, y in ((-1.0, 0.0), (0.0, -1.0), (1280.0, 0.0), (0.0, 800.0)):
        for method, args, sig in (("NotifyPointerMotionAbsolute", (session, {}, 42, x, y), "(oa{sv}udd)"),
                                  ("NotifyTouchDown", (session, {}, 42, 1, x, y), "(oa{sv}uudd)"),
                                  ("NotifyTouchMotion", (session, {}, 42, 1, x, y), "(oa{sv}uudd)")):
            name, msg = c.error(RD, method, args, sig)
            assert name == "org.freedesktop.portal.Error.InvalidArgument" and "Invalid position" in msg, (method, msg)
    c.call(RD, "NotifyPointerMotionAbsolute", (session, {}, 42, 1279.5, 799.5), "(oa{sv}udd)")
    assert limentest.wait_until(lambda: len(cast.args("NotifyPointerMotionAbsolute")) == 2)
    assert [a[2:] for a in cast.args("NotifyPointerMotionAbsolute")] == [[42, 10.0, 20.0], [42, 1279.5, 799.5]]
    assert len(cast.args("NotifyTouchDown")) == 1 and cast.args("NotifyTouchMotion") == []
    assert c.error(RD, "NotifyPointerMotion", (session, {}, float("nan"), 1.0), "(oa{sv}dd)")[0] == \
        "org.freedesktop.portal.Error.InvalidArgument"
    assert c.error(RD, "NotifyPointerAxis", (session, {"finish": v("s", "x")}, 0.0, 1.0), "(oa{sv}dd)")[0] == \
        "org.freedesktop.portal.Error.InvalidArgument"
    # A remote desktop session persists through SelectDevices only.
    s2 = c.create(RD, "r2")
    name, msg = c.error(SC, "SelectSources", (s2, {"persist_mode": v("u", 2)}), "(oa{sv})")
    assert name == "org.freedesktop.portal.Error.InvalidArgument" and "persist_mode" in msg
    # ScreenCast.Start does not start a remote desktop session.
    assert c.error(SC, "Start", (session, "", {}), "(osa{sv})")[0] == "org.freedesktop.portal.Error.NotAllowed"


def test_connect_to_eis_answers_the_backend_fd(cast, bus):
    c = Caller(bus)
    session, _ = rd_start(c)
    # A backend without EIS: the app hears NotSupported.
    assert c.error(RD, "ConnectToEIS", (session, {}), "(oa{sv})")[0] == "org.freedesktop.DBus.Error.NotSupported"
    bus.call(rh.CONTROL_IFACE, "SetEis", (True,), "(b)", dest=rh.BACKEND_NAME)
    s2, _ = rd_start(c, token="r2")
    r, fds = c.conn.call_with_unix_fd_list_sync(limentest.PORTAL_BUS_NAME, limentest.PORTAL_PATH, RD,
                                                "ConnectToEIS", GLib.Variant("(oa{sv})", (s2, {})),
                                                None, 0, 5000, None, None)
    fd = fds.get(r.unpack()[0])
    assert fd >= 0
    os.close(fd)
    # Once connected, input goes through EIS only, and there is one connection per session.
    name, msg = c.error(RD, "NotifyKeyboardKeycode", (s2, {}, 30, 1), "(oa{sv}iu)")
    assert name == "org.freedesktop.portal.Error.NotAllowed" and "EIS" in msg
    assert c.error(RD, "ConnectToEIS", (s2, {}), "(oa{sv})")[0] == "org.freedesktop.portal.Error.NotAllowed"
    assert len(cast.args("ConnectToEIS")) == 2


# ---- Clipboard -------------------------------------------------------------------------------
def test_clipboard_on_a_remote_desktop_session(cast, bus):
    c = Caller(bus)
    transfers, owners = [], []
    c.conn.signal_subscribe(None, CB, "SelectionTransfer", None, None, 0, lambda *a: transfers.append(a[5].unpack()))
    c.conn.signal_subscribe(None, CB, "SelectionOwnerChanged", None, None, 0, lambda *a: owners.append(a[5].unpack()))
    plain = c.create(RD, "plain")
    assert c.error(CB, "SetSelection", (plain, {}), "(oa{sv})")[0] == "org.freedesktop.portal.Error.NotAllowed"
    session, results = rd_start(c, clipboard=True)
    assert results["clipboard_enabled"] is True
    assert c.error(CB, "RequestClipboard", (session, {}), "(oa{sv})")[0] == "org.freedesktop.portal.Error.NotAllowed"
    c.call(CB, "SetSelection", (session, {"mime_types": v("as", ["text/plain", "text/html;charset=utf-8"])}),
           "(oa{sv})")
    # X11 target names are clipboard types too (GTK 3 and XWayland owners list them).
    c.call(CB, "SetSelection", (session, {"mime_types": v("as", ["text/plain;charset=utf-8", "UTF8_STRING",
                                                                 "STRING"])}), "(oa{sv})")
    for bad in (["x"] * 65, ["a/" + "b" * 300], ["text/plain\n"], ["two words"], [""], ["/plain"], ["text/"],
                ["tëxt/plain"]):
        name, msg = c.error(CB, "SetSelection", (session, {"mime_types": v("as", bad)}), "(oa{sv})")
        assert name == "org.freedesktop.portal.Error.InvalidArgument" and "mime_types" in msg
    assert c.error(CB, "SelectionRead", (session, "no mime"), "(os)")[0] == \
        "org.freedesktop.portal.Error.InvalidArgument"
    r, fds = c.conn.call_with_unix_fd_list_sync(limentest.PORTAL_BUS_NAME, limentest.PORTAL_PATH, CB,
                                                "SelectionRead", GLib.Variant("(os)", (session, "text/plain")),
                                                None, 0, 5000, None, None)
    fd = fds.get(r.unpack()[0])
    assert os.read(fd, 100) == b"mock clipboard"
    os.close(fd)
    # The backend's signals reach the owner; the serial it names can be answered, others not.
    bus.call(rh.CONTROL_IFACE, "EmitTransfer", (session, "text/plain", 5), "(osu)", dest=rh.BACKEND_NAME)
    bus.call(rh.CONTROL_IFACE, "EmitOwnerChanged", (session, {"mime_types": v("as", ["text/plain", "UTF8_STRING"]),
                                                              "session_is_owner": v("b", False)}), "(oa{sv})",
             dest=rh.BACKEND_NAME)
    assert limentest.wait_until(lambda: transfers and owners)
    assert transfers == [(session, "text/plain", 5)]
    assert owners == [(session, {"mime_types": ["text/plain", "UTF8_STRING"], "session_is_owner": False})]
    assert c.error(CB, "SelectionWrite", (session, 6), "(ou)")[0] == "org.freedesktop.portal.Error.InvalidArgument"
    r, fds = c.conn.call_with_unix_fd_list_sync(limentest.PORTAL_BUS_NAME, limentest.PORTAL_PATH, CB,
                                                "SelectionWrite", GLib.Variant("(ou)", (session, 5)),
                                                None, 0, 5000, None, None)
    os.close(fds.get(r.unpack()[0]))
    c.call(CB, "SelectionWriteDone", (session, 5, True), "(oub)")
    assert c.error(CB, "SelectionWriteDone", (session, 5, True), "(oub)")[0] == \
        "org.freedesktop.portal.Error.InvalidArgument"
    # A signal from anyone but the backend is not passed on.
    bus.conn.emit_signal(None, limentest.PORTAL_PATH, "org.freedesktop.impl.portal.Clipboard", "SelectionTransfer",
                         GLib.Variant("(osu)", (session, "text/plain", 9)))
    limentest.pump(0.3)
    assert len(transfers) == 1


# ---- OpenPipeWireRemote with a real PipeWire -------------------------------------------------
def probe_binary():
    path = os.path.join(limentest.BUILD_DIR, "autotests", "limen-pw-probe")
    if not os.path.exists(path):
        pytest.skip("limen-pw-probe not built")
    return path


class PipeWire:
    def __init__(self, bus):
        for tool in ("pipewire", "wireplumber", "gst-launch-1.0", "pw-cli"):
            if shutil.which(tool) is None:
                pytest.skip(f"{tool} not installed")
        self.bus = bus
        bus.start(["pipewire"])
        assert limentest.wait_until(lambda: os.path.exists(os.path.join(bus.runtime_dir, "pipewire-0")), 10)
        bus.start(["wireplumber"])

    def publish(self, name):
        self.bus.start(["gst-launch-1.0", "videotestsrc", "is-live=true", "!", "video/x-raw,width=320,height=240",
                        "!", "pipewiresink", "mode=provide",
                        f"stream-properties=p,node.name={name},media.class=Video/Source"])
        return limentest.wait_until(lambda: self.node_id(name), 15)

    def node_id(self, name):
        out = subprocess.run(["pw-cli", "ls", "Node"], env=self.bus.env, capture_output=True, text=True,
                             timeout=10).stdout
        current = None
        for line in out.splitlines():
            line = line.strip()
            if line.startswith("id "):
                current = int(line.split()[1].rstrip(","))
            elif line == f'node.name = "{name}"':
                return current
        return None


def open_remote(c, session):
    r, fds = c.conn.call_with_unix_fd_list_sync(limentest.PORTAL_BUS_NAME, limentest.PORTAL_PATH, SC,
                                                "OpenPipeWireRemote", GLib.Variant("(oa{sv})", (session, {})),
                                                None, 0, 10000, None, None)
    # Taken out of the list, so that closing it closes the only copy in this process.
    return fds.steal_fds()[r.unpack()[0]]


def probe(fd, *args, timeout=20):
    p = subprocess.run([probe_binary(), str(fd)] + [str(a) for a in args], pass_fds=(fd,), capture_output=True,
                       text=True, timeout=timeout)
    return p.returncode, p.stdout


def test_pipewire_remote_shows_only_the_session_nodes(cast, bus):
    probe_binary()
    pw = PipeWire(bus)
    mine, other = pw.publish("limen-test-mine"), pw.publish("limen-test-other")
    assert mine and other
    c = Caller(bus)
    session = c.create()
    assert c.error(SC, "OpenPipeWireRemote", (session, {}), "(oa{sv})")[0] == "org.freedesktop.portal.Error.NotAllowed"
    assert c.select(session)[0] == 0
    cast.set_response("ScreenCast.Start", 0, {"streams": v("a(ua{sv})", [(mine, {"source_type": v("u", 1)})])})
    assert c.start_session(session)[0] == 0
    fd = open_remote(c, session)
    status, out = probe(fd)
    assert status == 0, out
    nodes = [line.split() for line in out.splitlines() if " PipeWire:Interface:Node " in line]
    assert [int(n[0]) for n in nodes] == [mine], out
    assert f"{other} " not in out and "Device" not in out and "Metadata" not in out
    # Watch from the caller's side while the session closes: the node disappears from it.
    watcher = subprocess.Popen([probe_binary(), str(fd), str(mine), "15"], pass_fds=(fd,), stdout=subprocess.PIPE,
                               text=True)
    time.sleep(0.5)
    bus.call(SESSION, "Close", path=session, conn=c.conn)
    out, _ = watcher.communicate(timeout=20)
    assert watcher.returncode == 0 and f"gone {mine}" in out, out
    # The node itself is still there for everyone else: it was hidden, not destroyed.
    assert pw.node_id("limen-test-mine") == mine
    os.close(fd)


def remote_clients(bus):
    """(client id, serial) of each PipeWire remote limen-portal handed out, in order."""
    return [(int(m.group(1)), int(m.group(2)))
            for m in re.finditer(r"PipeWire remote: client (\d+), serial (\d+)", portal_log(bus))]


def test_closing_an_old_session_spares_a_remote_that_reuses_its_client_id(cast, bus):
    """PipeWire gives a new client the id of one that left. A session whose caller closed its
    remote, then a second session's remote (the same id, new serial), then the first session
    closes: its streams are hidden from its own remote only, never from the second one (which
    Chromium's restored share is, when its first session ends late)."""
    probe_binary()
    pw = PipeWire(bus)
    mine = pw.publish("limen-test-reused")
    assert mine
    cast.set_response("ScreenCast.Start", 0, {"streams": v("a(ua{sv})", [(mine, {"source_type": v("u", 1)})])})
    c = Caller(bus)
    first = c.create(token="first")
    assert c.select(first)[0] == 0 and c.start_session(first)[0] == 0
    os.close(open_remote(c, first))
    assert limentest.wait_until(lambda: len(remote_clients(bus)) == 1, 10)
    first_id, first_serial = remote_clients(bus)[0]

    def client_serials():
        # (By serial: pw-cli's own connection may well get the freed id.)
        out = subprocess.run(["pw-cli", "ls", "Client"], env=bus.env, capture_output=True, text=True,
                             timeout=10).stdout
        return [int(m) for m in re.findall(r'object\.serial = "(\d+)"', out)]

    assert limentest.wait_until(lambda: client_serials() and first_serial not in client_serials(), 10)
    second = c.create(token="second")
    assert c.select(second)[0] == 0 and c.start_session(second)[0] == 0
    fd = open_remote(c, second)
    assert limentest.wait_until(lambda: len(remote_clients(bus)) == 2, 10)
    second_id, second_serial = remote_clients(bus)[1]
    # What makes the case: the id came back (PipeWire hands out the id freed last).
    assert (second_id, second_serial != first_serial) == (first_id, True), remote_clients(bus)
    bus.call(SESSION, "Close", path=first, conn=c.conn)
    # Once the first session's revoke has run, whatever it found:
    assert limentest.wait_until(lambda: re.search(f"PipeWire remote {first_serial} (is gone|no longer sees)",
                                                  portal_log(bus)), 10), portal_log(bus)[-2000:]
    status, out = probe(fd)
    assert status == 0, out
    assert [int(line.split()[0]) for line in out.splitlines() if " PipeWire:Interface:Node " in line] == [mine], out
    assert f"PipeWire remote {first_serial} is gone" in portal_log(bus)
    # Its own session's end still hides the stream from it.
    bus.call(SESSION, "Close", path=second, conn=c.conn)
    assert limentest.wait_until(lambda: f"PipeWire remote {second_serial} no longer sees 1 node(s)" in portal_log(bus),
                                10), portal_log(bus)[-2000:]
    status, out = probe(fd)
    assert " PipeWire:Interface:Node " not in out, out
    os.close(fd)


def test_sandboxed_app_sees_only_its_stream(cast, bus):
    probe = probe_binary()
    pw = PipeWire(bus)
    mine, other = pw.publish("limen-test-app"), pw.publish("limen-test-camera")
    cast.set_response("ScreenCast.Start", 0, {"streams": v("a(ua{sv})", [(mine, {"source_type": v("u", 1)})])})
    out = _run_cast(bus, APP_A, 0, None, probe=probe)
    assert out["start"] == 0 and out["streams"] == [mine], out
    assert out["probe_status"] == 0, out
    nodes = [int(line.split()[0]) for line in out["probe"].splitlines() if " PipeWire:Interface:Node " in line]
    assert nodes == [mine], out["probe"]


def test_remote_desktop_restore_token(cast, bus):
    c = Caller(bus)
    session = c.create(RD, "p1")
    assert c.request(RD, "SelectDevices", (session, {"types": v("u", 3), "persist_mode": v("u", 2)}),
                     "(oa{sv})")[0] == 0
    response, results = c.start_session(session, RD)
    assert response == 0 and results["devices"] == 3
    token = results["restore_token"]
    # Kept in the permission store's remote-desktop table, for this (host) app only.
    stored = bus.call("org.freedesktop.impl.portal.PermissionStore", "Lookup", ("remote-desktop", token), "(ss)",
                      dest="org.freedesktop.impl.portal.PermissionStore",
                      path="/org/freedesktop/impl/portal/PermissionStore")
    assert list(stored[0]) == [""] and tuple(stored[1]) == ("mock", 1, 7)
    assert stored[0][""][:3] == ["yes", "keyboard", "pointer"] and stored[0][""][3].startswith("since:")  # the page
    # The ScreenCast table is another table: there the token does nothing (and is not used up).
    s3 = c.create(SC, "p3")
    assert c.select(s3, restore_token=v("s", token))[0] == 0
    assert "restore_data" not in last_select_options(cast)
    s2 = c.create(RD, "p2")
    assert c.request(RD, "SelectDevices", (s2, {"restore_token": v("s", token)}), "(oa{sv})")[0] == 0
    assert tuple(cast.requests("RemoteDesktop.SelectDevices")[-1][3]["restore_data"]) == ("mock", 1, 7)
    assert "restore_token" not in cast.requests("RemoteDesktop.SelectDevices")[-1][3]


# ---- end to end: limen-portal + limen-kde on a headless KWin (wayland_session.py) -------------
GREEN = (0x20, 0xc0, 0x40)


def start_limen_on_kde(bus):
    import kde_helpers as kh
    shutil.copy(kh.portal_file_path(), os.path.join(bus.env["XDG_DESKTOP_PORTAL_DIR"], "limen.portal"))
    conf = os.path.join(bus.config_home, "xdg-desktop-portal")
    os.makedirs(conf, exist_ok=True)
    with open(os.path.join(conf, "kde-portals.conf"), "w") as f:
        f.write("[preferred]\ndefault=limen\n")
    rh.start_documents(bus)
    return bus.start_portal(env={"XDG_CURRENT_DESKTOP": "KDE"})


def seed_token(bus, app_id, restore_data):
    """A token as if the person had allowed restoring earlier (the picker itself is tested
    by the backend's own tests): the store entry a persistent Start writes."""
    import uuid
    token = str(uuid.uuid4())
    bus.call("org.freedesktop.impl.portal.PermissionStore", "Set",
             ("screencast", True, token, {app_id: ["yes"]}, restore_data), "(sbsa{sas}v)",
             dest="org.freedesktop.impl.portal.PermissionStore", path="/org/freedesktop/impl/portal/PermissionStore")
    return token


def rgb_at(path, x, y):
    r = subprocess.run(["convert", path, "-format", f"%[fx:int(255*p{{{x},{y}}}.r)] %[fx:int(255*p{{{x},{y}}}.g)] "
                        f"%[fx:int(255*p{{{x},{y}}}.b)]", "info:"], capture_output=True, text=True, check=True)
    return tuple(int(x) for x in r.stdout.split())


def consume_through(fd, node, out_dir, count=3, timeout=40):
    """pipewiresrc on the portal's remote fd: the last of @count frames as PNG, or None."""
    out = os.path.join(out_dir, f"portal-frame-{node}.png")
    argv = ["gst-launch-1.0", "-q", "pipewiresrc", f"fd={fd}", f"path={node}", "always-copy=true",
            f"num-buffers={count}", "!", "videoconvert", "!", "video/x-raw,format=RGB", "!", "pngenc",
            "snapshot=false", "!", "multifilesink", f"location={out}.%d"]
    try:
        subprocess.run(argv, pass_fds=(fd,), timeout=timeout, capture_output=True)
    except subprocess.TimeoutExpired:
        return None
    frames = sorted((f for f in os.listdir(out_dir) if f.startswith(os.path.basename(out) + ".")),
                    key=lambda f: int(f.rsplit(".", 1)[1]))
    return os.path.join(out_dir, frames[-1]) if frames else None


def object_serial(bus, node):
    """PipeWire's object.serial of node @node, as pw-cli shows it."""
    out = subprocess.run(["pw-cli", "info", str(node)], env=bus.env, capture_output=True, text=True,
                         timeout=10).stdout
    for line in out.splitlines():
        if "object.serial = " in line:
            return int(line.split("=", 1)[1].strip().strip('"'))
    return None


def share_green_window_on_kwin(bus, session):
    """limen-kde on @session's KWin with limen-portal in front; a green probe window shared by
    a new Caller from a restore token seeded for it (the picker has tests of its own), asked
    to keep it (persist_mode 2). Returns (caller, session handle, window, token, results)."""
    session.start_kde()
    start_limen_on_kde(bus)
    window = session.probe("Green probe", GREEN)
    win = session.wait_window("Green probe")
    token = seed_token(bus, "", GLib.Variant("(suv)", ("KDE", 1, GLib.Variant(
        "a{sv}", {"sources": GLib.Variant("as", ["window:" + win["uuid"]])}))))
    c = Caller(bus)
    s = c.create()
    assert limentest.wait_until(lambda: bus.get_property(SC, "AvailableSourceTypes") == 7, 10)
    assert c.select(s, types=v("u", 2), persist_mode=v("u", 2), restore_token=v("s", token))[0] == 0
    response, results = c.request(SC, "Start", (s, "", {}), "(osa{sv})", timeout=30)
    assert response == 0, results
    return c, s, window, token, results


def test_end_to_end_window_share_on_kwin(bus):
    """A browser-like client shares a window through limen-portal and limen-kde on a headless
    KWin: streams from KWin, a remote that shows only that stream, frames of the window's
    colour through it, and the stream gone from the remote after Close."""
    import wayland_session
    if not os.path.exists(os.path.join(limentest.BUILD_DIR, "kde-backend", "limen-kde")):
        pytest.skip("limen-kde not built")
    probe_binary()
    session = wayland_session.WaylandSession(bus)
    try:
        c, s, window, token, results = share_green_window_on_kwin(bus, session)
        # The properties are limen-kde's (screens, windows, virtual; all cursor modes).
        assert bus.get_property(SC, "AvailableCursorModes") == 7
        (node, props), = results["streams"]
        assert props["source_type"] == 2 and results["restore_token"] != token
        # Version 6: the node's PipeWire object.serial (KWin names only the id).
        assert props["pipewire-serial"] == object_serial(bus, node), props
        fd = open_remote(c, s)
        status, out = probe(fd)
        assert status == 0
        assert [int(line.split()[0]) for line in out.splitlines() if " PipeWire:Interface:Node " in line] == [node]
        frame = consume_through(fd, node, bus.root)
        assert frame, "no frame through the portal's remote"
        assert rgb_at(frame, 200, 150) == GREEN
        # A consumer that targets the serial (target.object), as version 6 tells apps to.
        p = subprocess.run([probe_binary(), "--frames", str(fd), f"serial:{props['pipewire-serial']}", "2", "20"],
                           pass_fds=(fd,), capture_output=True, text=True, timeout=40)
        frames = [line.split() for line in p.stdout.splitlines() if line.startswith("frame ")]
        assert p.returncode == 0 and len(frames) == 2, (p.stdout, p.stderr)
        assert [int(x) for x in frames[-1][2:4]] == [400, 300]
        assert tuple(int(x) for x in frames[-1][4:7]) == GREEN[::-1]   # BGR
        watcher = subprocess.Popen([probe_binary(), str(fd), str(node), "15"], pass_fds=(fd,),
                                   stdout=subprocess.PIPE, text=True)
        time.sleep(0.5)
        bus.call(SESSION, "Close", path=s, conn=c.conn)
        out, _ = watcher.communicate(timeout=20)
        assert f"gone {node}" in out, out
        os.close(fd)
        window.close()
    finally:
        session.close()


def test_end_to_end_remote_input_reaches_a_window_on_kwin(bus):
    """RemoteDesktop through limen-portal and limen-kde: a restored keyboard+pointer grant
    (seeded as a persistent Start would have left it), a click and keys that reach the
    Wayland window under the pointer, and the touchscreen that was not granted refused
    before the backend hears of it."""
    import wayland_session
    if not os.path.exists(os.path.join(limentest.BUILD_DIR, "kde-backend", "limen-kde")):
        pytest.skip("limen-kde not built")
    session = wayland_session.WaylandSession(bus)
    try:
        session.start_kde()
        start_limen_on_kde(bus)
        window = session.probe("Input probe", GREEN)
        session.wait_window("Input probe")
        import uuid
        token = str(uuid.uuid4())
        data = GLib.Variant("(suv)", ("KDE", 1, GLib.Variant("a{sv}", {"devices": GLib.Variant("u", 3)})))
        bus.call("org.freedesktop.impl.portal.PermissionStore", "Set",
                 ("remote-desktop", True, token, {"": ["yes"]}, data), "(sbsa{sas}v)",
                 dest="org.freedesktop.impl.portal.PermissionStore",
                 path="/org/freedesktop/impl/portal/PermissionStore")
        c = Caller(bus)
        s = c.create(RD, "input")
        assert c.request(RD, "SelectDevices", (s, {"types": v("u", 3), "restore_token": v("s", token)}),
                         "(oa{sv})")[0] == 0
        response, results = c.request(RD, "Start", (s, "", {}), "(osa{sv})", timeout=30)
        assert response == 0 and results["devices"] == 3, results
        # The session's fake pointer is KWin's first pointer (limen-kde adds it at Start, not
        # before): once it moves, the window under it (KWin centres new windows) has it.
        def entered():
            c.call(RD, "NotifyPointerMotion", (s, {}, 1.0, 0.0), "(oa{sv}dd)")
            window.drain(0.3)
            return any(line.startswith("ENTER") for line in window.seen)
        assert limentest.wait_until(entered, 10), window.seen
        early = list(window.seen)
        window.seen.clear()
        # KWin 5.27 sometimes hands fake input to the window only with a later event (seen
        # with limen-kde's fake input, not a frontend matter): each gesture is repeated, as
        # a person would, until the window reports it.
        def gesture(method, sig, code, expect):
            seen = []
            for _ in range(5):
                c.call(RD, method, (s, {}, code, 1), sig)
                c.call(RD, method, (s, {}, code, 0), sig)
                seen += window.drain(1.0)
                window.seen.clear()
                if expect in seen:
                    return seen
            raise AssertionError(f"{expect!r} never reached the window: {seen}")

        clicks = gesture("NotifyPointerButton", "(oa{sv}iu)", 272, "BUTTON 272 1")
        assert "FOCUS" in early + clicks   # the window is active (mapped so, or by the click): keys go to it
        keys = gesture("NotifyKeyboardKeycode", "(oa{sv}iu)", 30, "KEY 30 1")
        assert all(line.split()[1] == "30" for line in keys if line.startswith("KEY"))
        # A keysym ('b') through KWin's keymap reaches the window as its key (KEY_B = 48).
        gesture("NotifyKeyboardKeysym", "(oa{sv}iu)", 0x62, "KEY 48 1")
        name, _ = c.error(RD, "NotifyTouchUp", (s, {}, 0), "(oa{sv}u)")
        assert name == "org.freedesktop.portal.Error.NotAllowed"
        bus.call(SESSION, "Close", path=s, conn=c.conn)
        assert c.error(RD, "NotifyKeyboardKeycode", (s, {}, 30, 1), "(oa{sv}iu)")[0] == \
            "org.freedesktop.portal.Error.InvalidArgument"
        window.close()
    finally:
        session.close()


def portal_fd(c, method, args, sig):
    """A Clipboard method answering an fd through limen-portal: the fd (ours to close)."""
    r, fdlist = c.conn.call_with_unix_fd_list_sync(limentest.PORTAL_BUS_NAME, limentest.PORTAL_PATH, CB, method,
                                                   GLib.Variant(sig, args), None, 0, 10000, None, None)
    fds = fdlist.steal_fds()   # no copy left behind to keep a pipe open
    index = r.unpack()[0]
    for i, fd in enumerate(fds):
        if i != index:
            os.close(fd)
    return fds[index]


def test_end_to_end_clipboard_both_ways_on_kwin(bus):
    """Clipboard through limen-portal and limen-kde: what a Wayland app copies is announced
    to the session and read by it; what the session offers is pasted by the app."""
    import uuid
    import wayland_session
    if not os.path.exists(os.path.join(limentest.BUILD_DIR, "kde-backend", "limen-kde")):
        pytest.skip("limen-kde not built")
    text = "text/plain;charset=utf-8"
    session = wayland_session.WaylandSession(bus)
    try:
        session.start_kde()
        start_limen_on_kde(bus)
        window = session.probe("Clipboard probe", GREEN)
        window.wait_for("FOCUS")
        token = str(uuid.uuid4())
        data = GLib.Variant("(suv)", ("KDE", 1, GLib.Variant("a{sv}", {"devices": GLib.Variant("u", 3)})))
        bus.call("org.freedesktop.impl.portal.PermissionStore", "Set",
                 ("remote-desktop", True, token, {"": ["yes"]}, data), "(sbsa{sas}v)",
                 dest="org.freedesktop.impl.portal.PermissionStore",
                 path="/org/freedesktop/impl/portal/PermissionStore")
        c = Caller(bus)
        signals = []
        c.conn.signal_subscribe(None, CB, None, limentest.PORTAL_PATH, None, 0,
                                lambda cn, snd, p, i, name, params: signals.append((name, params.unpack())))
        s = c.create(RD, "clip")
        c.call(CB, "RequestClipboard", (s, {}), "(oa{sv})")
        assert c.request(RD, "SelectDevices", (s, {"types": v("u", 3), "restore_token": v("s", token)}),
                         "(oa{sv})")[0] == 0
        response, results = c.request(RD, "Start", (s, "", {}), "(osa{sv})", timeout=30)
        assert response == 0 and results["clipboard_enabled"] is True, results
        # The Wayland app copies: the session hears of it and reads the text.
        window.command("copy from the probe")
        window.wait_for("COPIED")
        assert limentest.wait_until(lambda: any(n == "SelectionOwnerChanged" and text in p[1].get("mime_types", [])
                                                for n, p in signals), 10), signals
        fd = portal_fd(c, "SelectionRead", (s, text), "(os)")
        with os.fdopen(fd, "rb") as f:
            assert f.read() == b"from the probe"
        # The session offers text; the app pastes; the session writes it on request.
        c.call(CB, "SetSelection", (s, {"mime_types": v("as", [text])}), "(oa{sv})")
        assert limentest.wait_until(lambda: any(n == "SelectionOwnerChanged" and p[1].get("session_is_owner")
                                                for n, p in signals), 10), signals
        window.command("paste")
        assert limentest.wait_until(lambda: any(n == "SelectionTransfer" for n, _ in signals), 10), signals
        (path, mime, serial), = [p for n, p in signals if n == "SelectionTransfer"]
        assert path == s and mime == text
        fd = portal_fd(c, "SelectionWrite", (s, serial), "(ou)")
        with os.fdopen(fd, "wb") as f:
            f.write(b"from the portal")
        c.call(CB, "SelectionWriteDone", (s, serial, True), "(oub)")
        assert window.wait_for("PASTE") == "PASTE from the portal"
        window.close()
    finally:
        session.close()


@pytest.mark.parametrize("how", ["revoke", "reset"])
def test_revoked_restore_token_closes_the_running_session(cast, bus, how):
    """Revoking a kept restore token while its session runs (the store's DeletePermission, as
    the permissions page's Revoke; or limen-permissions reset) ends that session: the
    backend's session is closed (the share stops) and the app hears Closed. A session of the
    same app without a kept token runs on."""
    apps = os.path.join(bus.data_home, "applications")
    os.makedirs(apps, exist_ok=True)
    with open(os.path.join(apps, "org.example.Sharer.desktop"), "w") as f:
        f.write("[Desktop Entry]\nType=Application\nName=Sharer\nExec=/bin/true\n")
    c = Caller(bus)
    bus.call("org.freedesktop.host.portal.Registry", "Register", ("org.example.Sharer", {}), "(sa{sv})", conn=c.conn)
    kept, plain = c.create(token="kept"), c.create(token="plain")
    assert c.select(kept, types=v("u", 1), persist_mode=v("u", 2))[0] == 0
    response, results = c.start_session(kept)
    token = results["restore_token"]
    assert response == 0 and token
    assert c.select(plain, types=v("u", 1))[0] == 0
    assert c.start_session(plain)[0] == 0
    r = None
    if how == "revoke":
        bus.call("org.freedesktop.impl.portal.PermissionStore", "DeletePermission",
                 ("screencast", token, "org.example.Sharer"), "(sss)", dest="org.freedesktop.impl.portal.PermissionStore", path="/org/freedesktop/impl/portal/PermissionStore")
    else:
        r = subprocess.run([os.path.join(limentest.BUILD_DIR, "kde-backend/kcm/limen-permissions"), "reset",
                            "org.example.Sharer"], env=bus.env, capture_output=True, text=True, timeout=60)
        assert r.returncode == 0, r.stderr
    assert limentest.wait_until(lambda: kept in c.closed, 10), (r and r.stdout, r and r.stderr)
    closed = lambda: cast.bus.call(rh.CONTROL_IFACE, "GetClosedSessions", dest=rh.BACKEND_NAME)[0]
    assert limentest.wait_until(lambda: kept in closed(), 10)
    assert plain not in c.closed and plain not in closed()
