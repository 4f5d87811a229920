"""org.freedesktop.portal.Location through limen-portal and a mock GeoClue2 on a private
system bus; without GeoClue, Start answers 2 at once."""
import time

import pytest
from gi.repository import Gio, GLib

import limentest
import request_helpers as rh
from request_helpers import v

LOC = "org.freedesktop.portal.Location"
GC = "org.freedesktop.GeoClue2"


def wait_system_name(bus, name, timeout=15):
    end = time.time() + timeout
    while time.time() < end:
        r = bus.system_conn.call_sync("org.freedesktop.DBus", "/org/freedesktop/DBus", "org.freedesktop.DBus",
                                      "NameHasOwner", GLib.Variant("(s)", (name,)), None, 0, 5000, None)
        if r.unpack()[0]:
            return
        time.sleep(0.02)
    raise TimeoutError(name)


def gc_call(bus, path, iface, method, args=None, sig=None):
    r = bus.system_conn.call_sync(GC, path, iface, method, GLib.Variant(sig, args) if sig else None, None, 0,
                                  5000, None)
    return r.unpack() if r else None


@pytest.fixture
def geo(bus):
    bus.start_system_bus()
    bus.start_dbusmock_template(rh.template("geoclue"), system=True)
    wait_system_name(bus, GC)
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


def test_sandboxed_location_needs_permission(geo):
    bus = geo
    rh.start_documents(bus)
    script = r'''
from gi.repository import Gio, GLib
import time
c = Gio.bus_get_sync(Gio.BusType.SESSION, None)
res = []
c.signal_subscribe(None, "org.freedesktop.portal.Request", "Response", None, None, 0, lambda *a: res.append(a[5].unpack()))
s = c.call_sync("org.freedesktop.portal.Desktop", "/org/freedesktop/portal/desktop", "org.freedesktop.portal.Location",
                "CreateSession", GLib.Variant("(a{sv})", ({},)), None, 0, 5000, None).unpack()[0]
c.call_sync("org.freedesktop.portal.Desktop", "/org/freedesktop/portal/desktop", "org.freedesktop.portal.Location",
            "Start", GLib.Variant("(osa{sv})", (s, "", {})), None, 0, 5000, None)
end = time.time() + 10
GLib.timeout_add(50, lambda: True)
while not res and time.time() < end:
    GLib.MainContext.default().iteration(True)
print(res[0][0] if res else "none")
'''
    backend = rh.Backend.__new__(rh.Backend)
    backend.bus = bus
    backend.set_response("AccessDialog", 1, {})
    r = limentest.run_sandboxed(bus, "org.example.App", script)
    assert r.stdout.strip() == "2", r.stderr
    assert len(backend.requests("AccessDialog")) == 1


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
