"""NetworkMonitor, ProxyResolver, MemoryMonitor, PowerProfileMonitor against real GIO
monitors fed by dbusmock's NetworkManager, low-memory-monitor and power-profiles-daemon on
a private system bus."""
import socket

import pytest
from gi.repository import Gio, GLib

import limentest
from limentest import dbus_error_name, wait_until, PORTAL_BUS_NAME, PORTAL_PATH


@pytest.fixture
def monitored(bus):
    sysconn = bus.start_system_bus()
    bus.start_dbusmock_template("networkmanager", system=True)
    bus.start_dbusmock_template("low_memory_monitor", system=True)
    bus.start_dbusmock_template("power_profiles_daemon", system=True)
    for name in ("org.freedesktop.NetworkManager", "org.freedesktop.LowMemoryMonitor", "net.hadess.PowerProfiles"):
        deadline = 100
        while deadline:
            r = sysconn.call_sync("org.freedesktop.DBus", "/org/freedesktop/DBus", "org.freedesktop.DBus",
                                  "NameHasOwner", GLib.Variant("(s)", (name,)), None, 0, 5000, None)
            if r.unpack()[0]:
                break
            deadline -= 1
            limentest.pump(0.05)
        assert deadline, name
    bus.start_portal()
    return bus, sysconn


def collect_signals(bus, iface, member):
    got = []
    bus.conn.signal_subscribe(PORTAL_BUS_NAME, iface, member, PORTAL_PATH, None, Gio.DBusSignalFlags.NONE,
                              lambda c, s, p, i, m, params: got.append(params.unpack()))
    return got


def test_network_status(monitored):
    bus, sysconn = monitored
    status = bus.call("org.freedesktop.portal.NetworkMonitor", "GetStatus")[0]
    assert status["available"] is True
    assert status["connectivity"] == 4
    assert bus.call("org.freedesktop.portal.NetworkMonitor", "GetAvailable")[0] == status["available"]
    assert bus.call("org.freedesktop.portal.NetworkMonitor", "GetMetered")[0] == status["metered"]
    assert bus.call("org.freedesktop.portal.NetworkMonitor", "GetConnectivity")[0] == status["connectivity"]


def test_network_changed(monitored):
    bus, sysconn = monitored
    changed = collect_signals(bus, "org.freedesktop.portal.NetworkMonitor", "changed")
    # NM_CONNECTIVITY_PORTAL (2) is G_NETWORK_CONNECTIVITY_PORTAL (3).
    sysconn.call_sync("org.freedesktop.NetworkManager", "/org/freedesktop/NetworkManager",
                      "org.freedesktop.DBus.Mock", "SetConnectivity", GLib.Variant("(u)", (2,)), None, 0, 5000, None)
    assert wait_until(lambda: changed, 5)
    assert wait_until(lambda: bus.call("org.freedesktop.portal.NetworkMonitor", "GetConnectivity")[0] == 3, 5)


def test_can_reach(monitored):
    bus, _ = monitored
    srv = socket.socket()
    srv.bind(("127.0.0.1", 0))
    srv.listen(1)
    port = srv.getsockname()[1]
    assert bus.call("org.freedesktop.portal.NetworkMonitor", "CanReach", ("127.0.0.1", port), "(su)")[0] is True
    for host, p in (("127.0.0.1", 0), ("127.0.0.1", 70000), ("", 80), ("x" * 5000, 80)):
        with pytest.raises(GLib.Error) as e:
            bus.call("org.freedesktop.portal.NetworkMonitor", "CanReach", (host, p), "(su)")
        assert dbus_error_name(e.value) == "org.freedesktop.portal.Error.InvalidArgument"
    srv.close()


def test_low_memory_warning(monitored):
    bus, sysconn = monitored
    warnings = collect_signals(bus, "org.freedesktop.portal.MemoryMonitor", "LowMemoryWarning")
    limentest.pump(0.2)
    sysconn.call_sync("org.freedesktop.LowMemoryMonitor", "/org/freedesktop/LowMemoryMonitor",
                      "org.freedesktop.DBus.Mock", "EmitWarning", GLib.Variant("(y)", (100,)), None, 0, 5000, None)
    assert wait_until(lambda: warnings, 5)
    assert warnings[0] == (100,)


def test_power_saver(monitored):
    bus, sysconn = monitored
    iface = "org.freedesktop.portal.PowerProfileMonitor"
    assert bus.get_property(iface, "power-saver-enabled") is False
    sysconn.call_sync("net.hadess.PowerProfiles", "/net/hadess/PowerProfiles", "org.freedesktop.DBus.Properties",
                      "Set", GLib.Variant("(ssv)", ("net.hadess.PowerProfiles", "ActiveProfile",
                                                    GLib.Variant("s", "power-saver"))), None, 0, 5000, None)
    assert wait_until(lambda: bus.get_property(iface, "power-saver-enabled") is True, 5)


def test_proxy_lookup(bus):
    bus.start_portal()
    proxies = bus.call("org.freedesktop.portal.ProxyResolver", "Lookup", ("http://example.com/",), "(s)")[0]
    assert proxies == ["direct://"]
    for bad in ("", "not a uri", "http://[::1"):
        with pytest.raises(GLib.Error) as e:
            bus.call("org.freedesktop.portal.ProxyResolver", "Lookup", (bad,), "(s)")
        assert dbus_error_name(e.value) == "org.freedesktop.portal.Error.InvalidArgument", bad


def test_proxy_from_environment(bus):
    """GIO's resolver (libproxy) reads the standard proxy variables of the session."""
    bus.start_portal(env={"http_proxy": "http://proxy.invalid:3128", "no_proxy": ""})
    proxies = bus.call("org.freedesktop.portal.ProxyResolver", "Lookup", ("http://example.com/",), "(s)")[0]
    assert "http://proxy.invalid:3128" in proxies


SANDBOXED_LOOKUP = """
from gi.repository import Gio, GLib
c = Gio.bus_get_sync(Gio.BusType.SESSION, None)
for iface, method, args in (("org.freedesktop.portal.ProxyResolver", "Lookup", GLib.Variant("(s)", ("http://x/",))),
                            ("org.freedesktop.portal.NetworkMonitor", "CanReach", GLib.Variant("(su)", ("127.0.0.1", 80)))):
    try:
        c.call_sync('org.freedesktop.portal.Desktop', '/org/freedesktop/portal/desktop', iface, method, args, None, 0, 5000, None)
        print('ok')
    except GLib.Error as e:
        print(Gio.DBusError.get_remote_error(e))
"""


def test_no_network_no_proxies(bus):
    bus.start_portal()
    r = limentest.run_sandboxed(bus, "org.example.App", SANDBOXED_LOOKUP)
    assert r.stdout.split() == ["org.freedesktop.portal.Error.NotAllowed"] * 2, r.stderr


def test_gamemode_and_realtime_absent_answer_promptly(bus):
    bus.start_portal()
    with pytest.raises(GLib.Error) as e:
        bus.call("org.freedesktop.portal.GameMode", "QueryStatus", (1,), "(i)", timeout=1000)
    assert dbus_error_name(e.value) == "org.freedesktop.portal.Error.NotFound"
    with pytest.raises(GLib.Error) as e:
        bus.call("org.freedesktop.portal.Realtime", "MakeThreadRealtimeWithPID", (1, 1, 5), "(ttu)", timeout=1000)
    assert dbus_error_name(e.value) == "org.freedesktop.portal.Error.NotFound"
