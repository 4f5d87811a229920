"""org.freedesktop.portal.Location through limen-portal and a mock GeoClue2 on a private
system bus; without GeoClue, Start answers 2 at once."""
import os
import time

import pytest
from gi.repository import GLib

import limentest
import request_helpers as rh
from request_helpers import v

LOC = "org.freedesktop.portal.Location"
GC = "org.freedesktop.GeoClue2"


def gc_call(bus, path, iface, method, args=None, sig=None):
    r = bus.system_conn.call_sync(GC, path, iface, method, GLib.Variant(sig, args) if sig else None, None, 0,
                                  5000, None)
    return r.unpack() if r else None


@pytest.fixture
def geo(bus):
    bus.start_system_bus()
    bus.start_dbusmock_template(rh.template("geoclue"), system=True)
    bus.wait_for_name(GC, system=True)
    rh.setup(bus, ["access"])
    return bus


def test_location_updates_reach_the_session_owner(geo):
    bus = geo
    client = rh.Client(bus)
    got = []
    client.conn.signal_subscribe(None, LOC, "LocationUpdated", None, None, 0, lambda *a: got.append(a[5].unpack()))
    session = bus.call(LOC, "CreateSession", ({"session_handle_token": v("s", "geo"), "accuracy": v("u", 2),
                                               "distance-threshold": v("u", 100)},), "(a{sv})",
                       conn=client.conn)[0]
    assert session.endswith("/geo")
    assert client.request(LOC, "Start", (session, "", {}), "(osa{sv})") == (0, {})
    props = gc_call(bus, "/org/freedesktop/GeoClue2/Client/1", "org.freedesktop.DBus.Properties", "GetAll",
                    ("org.freedesktop.GeoClue2.Client",), "(s)")[0]
    assert props["Active"] is True
    assert props["RequestedAccuracyLevel"] == 4 and props["DistanceThreshold"] == 100
    assert props["DesktopId"] == "limen-portal"
    gc_call(bus, "/org/freedesktop/GeoClue2/Manager", "org.freedesktop.GeoClue2.Manager", "SetLocation",
            (52.5, 13.4, 25.0), "(ddd)")
    assert limentest.wait_until(lambda: got)
    path, loc = got[0]
    assert path == session
    assert (loc["Latitude"], loc["Longitude"], loc["Accuracy"]) == (52.5, 13.4, 25.0)
    assert loc["Timestamp"] == (1700000000, 0)
    # Closing the session stops the GeoClue client.
    bus.call("org.freedesktop.portal.Session", "Close", path=session, conn=client.conn)
    assert limentest.wait_until(lambda: gc_call(bus, "/org/freedesktop/GeoClue2/Client/1",
                                                "org.freedesktop.DBus.Properties", "Get",
                                                ("org.freedesktop.GeoClue2.Client", "Active"), "(ss)")[0] is False)


SANDBOXED_START = r'''
from gi.repository import Gio, GLib
import time
c = Gio.bus_get_sync(Gio.BusType.SESSION, None)
res = []
c.signal_subscribe(None, "org.freedesktop.portal.Request", "Response", None, None, 0, lambda *a: res.append(a[5].unpack()))
s = c.call_sync("org.freedesktop.portal.Desktop", "/org/freedesktop/portal/desktop", "org.freedesktop.portal.Location",
                "CreateSession", GLib.Variant("(a{sv})", ({"accuracy": GLib.Variant("u", %d)},)), None, 0, 5000,
                None).unpack()[0]
c.call_sync("org.freedesktop.portal.Desktop", "/org/freedesktop/portal/desktop", "org.freedesktop.portal.Location",
            "Start", GLib.Variant("(osa{sv})", (s, "", {})), None, 0, 5000, None)
end = time.time() + 10
GLib.timeout_add(50, lambda: True)
while not res and time.time() < end:
    GLib.MainContext.default().iteration(True)
print(res[0][0] if res else "none")
'''


def sandboxed_start(bus, accuracy=5):
    """Start a location session with @accuracy as the Flatpak app org.example.App: its Response."""
    r = limentest.run_sandboxed(bus, "org.example.App", SANDBOXED_START % accuracy)
    assert r.stdout.strip() != "none", r.stderr
    return int(r.stdout.strip())


def requested_level(bus):
    return gc_call(bus, "/org/freedesktop/GeoClue2/Client/1", "org.freedesktop.DBus.Properties", "Get",
                   ("org.freedesktop.GeoClue2.Client", "RequestedAccuracyLevel"), "(ss)")[0]


@pytest.fixture
def sandboxed(geo):
    rh.start_documents(geo)
    backend = rh.Backend.__new__(rh.Backend)
    backend.bus = geo
    return backend


def test_sandboxed_location_needs_permission(geo, sandboxed):
    sandboxed.set_response("AccessDialog", 1, {})
    assert sandboxed_start(geo) == 2
    assert len(sandboxed.requests("AccessDialog")) == 1
    # Stored as the reference stores a refusal: asked once.
    assert rh.lookup_permissions(geo, "location", "location")["org.example.App"] == ["NONE", "0"]
    assert sandboxed_start(geo) == 2
    assert len(sandboxed.requests("AccessDialog")) == 1


def test_the_question_names_the_app(geo, sandboxed):
    """The Access dialog names the app as its installed desktop file does, with its id."""
    apps = os.path.join(geo.data_home, "applications")
    os.makedirs(apps, exist_ok=True)
    with open(os.path.join(apps, "org.example.App.desktop"), "w") as f:
        f.write("[Desktop Entry]\nType=Application\nName=Example Maps\nExec=true\n")
    sandboxed.set_response("AccessDialog", 1, {})
    assert sandboxed_start(geo) == 2
    (title, subtitle, body), = sandboxed.args("AccessDialog")
    assert subtitle == "Example Maps (org.example.App)"


def test_sandboxed_location_granted_is_stored_as_the_reference_does(geo, sandboxed):
    assert sandboxed_start(geo) == 0
    assert len(sandboxed.requests("AccessDialog")) == 1
    level, last_used = rh.lookup_permissions(geo, "location", "location")["org.example.App"]
    assert level == "EXACT" and int(last_used) > 0
    assert requested_level(geo) == 8


def test_an_entry_the_reference_stored_is_honoured(geo, sandboxed):
    """[CITY, time] from the reference: allowed without asking, at most city accuracy."""
    rh.set_permission(geo, "location", "location", "org.example.App", ["CITY", "12"])
    assert sandboxed_start(geo, accuracy=5) == 0
    assert sandboxed.requests("AccessDialog") == []
    assert requested_level(geo) == 4
    level, last_used = rh.lookup_permissions(geo, "location", "location")["org.example.App"]
    assert level == "CITY" and int(last_used) != 12


@pytest.mark.parametrize("stored,response,asked", [(["NONE", "5"], 2, 0), (["no"], 2, 0), (["yes"], 0, 0),
                                                   (["ask"], 0, 1)])
def test_stored_answers(geo, sandboxed, stored, response, asked):
    rh.set_permission(geo, "location", "location", "org.example.App", stored)
    assert sandboxed_start(geo) == response
    assert len(sandboxed.requests("AccessDialog")) == asked


def test_host_app_is_not_asked(geo, sandboxed):
    """As the reference: an unsandboxed app could ask GeoClue itself, so it is not asked."""
    sandboxed.set_response("AccessDialog", 1, {})
    client = rh.Client(geo)
    session = geo.call(LOC, "CreateSession", ({},), "(a{sv})", conn=client.conn)[0]
    assert client.request(LOC, "Start", (session, "", {}), "(osa{sv})") == (0, {})
    assert sandboxed.requests("AccessDialog") == []
    assert "" not in rh.lookup_permissions(geo, "location", "location")


def test_without_geoclue_start_fails_promptly(bus):
    bus.start_system_bus()
    rh.setup(bus, ["access"])
    client = rh.Client(bus)
    session = bus.call(LOC, "CreateSession", ({},), "(a{sv})", conn=client.conn)[0]
    t0 = time.monotonic()
    assert client.request(LOC, "Start", (session, "", {}), "(osa{sv})") == (2, {})
    assert time.monotonic() - t0 < 2


@pytest.mark.parametrize("opts,key", [({"accuracy": v("u", 9)}, "accuracy"),
                                      ({"distance-threshold": v("s", "x")}, "distance-threshold"),
                                      ({"session_handle_token": v("s", "a-b")}, "session_handle_token")])
def test_bad_session_options(bus, opts, key):
    rh.setup(bus, ["access"])
    with pytest.raises(GLib.Error) as e:
        bus.call(LOC, "CreateSession", (opts,), "(a{sv})")
    assert rh.error_name(e) == "org.freedesktop.portal.Error.InvalidArgument" and key in e.value.message


def test_start_on_a_foreign_session_is_refused(bus):
    rh.setup(bus, ["access"])
    a, b = rh.Client(bus), rh.Client(bus)
    session = bus.call(LOC, "CreateSession", ({},), "(a{sv})", conn=a.conn)[0]
    with pytest.raises(GLib.Error) as e:
        bus.call(LOC, "Start", (session, "", {}), "(osa{sv})", conn=b.conn)
    assert rh.error_name(e) == "org.freedesktop.portal.Error.InvalidArgument"


SANDBOXED_RUNNING = r'''
from gi.repository import Gio, GLib
import time
c = Gio.bus_get_sync(Gio.BusType.SESSION, None)
res, closed = [], []
c.signal_subscribe(None, "org.freedesktop.portal.Request", "Response", None, None, 0, lambda *a: res.append(a[5].unpack()))
c.signal_subscribe(None, "org.freedesktop.portal.Session", "Closed", None, None, 0, lambda *a: closed.append(a[2]))
s = c.call_sync("org.freedesktop.portal.Desktop", "/org/freedesktop/portal/desktop", "org.freedesktop.portal.Location",
                "CreateSession", GLib.Variant("(a{sv})", ({},)), None, 0, 5000, None).unpack()[0]
c.call_sync("org.freedesktop.portal.Desktop", "/org/freedesktop/portal/desktop", "org.freedesktop.portal.Location",
            "Start", GLib.Variant("(osa{sv})", (s, "", {})), None, 0, 5000, None)
end = time.time() + 30
GLib.timeout_add(50, lambda: True)
while not closed and time.time() < end:
    GLib.MainContext.default().iteration(True)
print(res[0][0] if res else "none", "closed" if closed == [s] else "open")
'''


@pytest.mark.parametrize("how", ["deny", "revoke"])
def test_location_taken_back_closes_the_running_session(geo, sandboxed, how):
    """The person denies (accuracy NONE, as the pages write it) or revokes the app's location
    while its session runs: the session is closed (the app hears Closed) and its GeoClue
    client is stopped."""
    import threading
    rh.set_permission(geo, "location", "location", "org.example.App", ["EXACT", "1"])
    out = []
    app = threading.Thread(target=lambda: out.append(limentest.run_sandboxed(geo, "org.example.App", SANDBOXED_RUNNING)))
    app.start()
    assert limentest.wait_until(lambda: client_started(geo), 15)
    if how == "deny":
        rh.set_permission(geo, "location", "location", "org.example.App", ["NONE", "1"])
    else:
        geo.call("org.freedesktop.impl.portal.PermissionStore", "DeletePermission",
                 ("location", "location", "org.example.App"), "(sss)",
                 dest="org.freedesktop.impl.portal.PermissionStore", path="/org/freedesktop/impl/portal/PermissionStore")
    app.join(60)
    assert out and out[0].stdout.split() == ["0", "closed"], (out[0].stdout, out[0].stderr) if out else None
    assert limentest.wait_until(lambda: not client_active(geo), 10)


def client_started(bus):
    try:
        return client_active(bus)
    except GLib.Error:
        return False


def client_active(bus):
    return gc_call(bus, "/org/freedesktop/GeoClue2/Client/1", "org.freedesktop.DBus.Properties", "Get",
                   ("org.freedesktop.GeoClue2.Client", "Active"), "(ss)")[0]
