"""limen-portal as a daemon: lifecycle, bus name handling, exported interfaces, bad input."""
import os
import signal
import subprocess
import time

import pytest
from gi.repository import GLib

import limentest
from limentest import dbus_error_name, PORTAL_BUS_NAME

FOUNDATION_INTERFACES = {
    "org.freedesktop.portal.NetworkMonitor": 3,
    "org.freedesktop.portal.ProxyResolver": 1,
    "org.freedesktop.portal.MemoryMonitor": 1,
    "org.freedesktop.portal.PowerProfileMonitor": 1,
    "org.freedesktop.portal.Settings": 2,
    "org.freedesktop.portal.Trash": 1,
    "org.freedesktop.portal.GameMode": 4,
    "org.freedesktop.portal.Realtime": 1,
    "org.freedesktop.host.portal.Registry": 1,
}


def test_version_says_whether_hooks_are_compiled():
    out = subprocess.run([limentest.binary("limen-portal"), "--version"], capture_output=True, text=True, check=True)
    assert out.stdout.startswith("limen-portal ")
    assert "test hooks: compiled in" in out.stdout or "test hooks: not compiled in" in out.stdout


def test_interfaces_and_versions(bus):
    bus.start_portal()
    ifaces = bus.interfaces()
    for iface, version in FOUNDATION_INTERFACES.items():
        assert iface in ifaces
        assert bus.get_property(iface, "version") == version, iface


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT, signal.SIGHUP])
def test_signals_exit_cleanly(bus, sig):
    d = bus.start_portal()
    # A call in flight and a peer connected while the signal lands.
    bus.call("org.freedesktop.portal.Settings", "ReadAll", ([],), "(as)")
    t0 = time.monotonic()
    d.signal(sig)
    assert d.wait(timeout=5) == 0
    assert time.monotonic() - t0 < 1.0
    bus.wait_for_name_gone(PORTAL_BUS_NAME)


def test_replace(bus):
    first = bus.start_portal()
    second = bus.start("limen-portal", "--replace")
    assert first.wait(timeout=5) == 0, first.output()
    bus.wait_for_name(PORTAL_BUS_NAME)
    assert second.alive()
    assert bus.get_property("org.freedesktop.portal.Trash", "version") == 1


def test_second_instance_without_replace_fails(bus):
    bus.start_portal()
    second = bus.start("limen-portal")
    assert second.wait(timeout=5) == 1
    assert "--replace" in second.output()


def test_no_session_bus():
    env = dict(os.environ, DBUS_SESSION_BUS_ADDRESS="unix:path=/nonexistent/bus")
    out = subprocess.run([limentest.binary("limen-portal")], env=env, capture_output=True, text=True, timeout=10)
    assert out.returncode == 1
    assert "session bus" in out.stderr


def test_wrong_signature_is_invalid_args_and_daemon_serves(bus):
    d = bus.start_portal()
    with pytest.raises(GLib.Error) as e:
        bus.call("org.freedesktop.portal.Settings", "ReadOne", (1, 2), "(uu)")
    assert "InvalidArgs" in str(e.value) or dbus_error_name(e.value) == "org.freedesktop.DBus.Error.InvalidArgs"
    with pytest.raises(GLib.Error):
        bus.call("org.freedesktop.portal.NetworkMonitor", "NoSuchMethod")
    assert bus.call("org.freedesktop.portal.NetworkMonitor", "GetAvailable")[0] in (True, False)
    assert d.alive()


def test_oversized_strings_refused(bus):
    bus.start_portal()
    with pytest.raises(GLib.Error) as e:
        bus.call("org.freedesktop.portal.Settings", "ReadOne", ("x" * 100000, "k"), "(ss)")
    assert dbus_error_name(e.value) == "org.freedesktop.portal.Error.InvalidArgument"
    with pytest.raises(GLib.Error) as e:
        bus.call("org.freedesktop.portal.Settings", "ReadAll", (["a"] * 1000,), "(as)")
    assert dbus_error_name(e.value) == "org.freedesktop.portal.Error.InvalidArgument"
    with pytest.raises(GLib.Error) as e:
        bus.call("org.freedesktop.portal.ProxyResolver", "Lookup", ("http://" + "a" * 20000,), "(s)")
    assert dbus_error_name(e.value) == "org.freedesktop.portal.Error.InvalidArgument"


def test_registry(bus):
    bus.start_portal()
    conn = bus.new_connection()
    bus.install_app("org.example.Host")
    bus.install_app("org.example.Other")
    bus.call("org.freedesktop.host.portal.Registry", "Register", ("org.example.Host", {}), "(sa{sv})", conn=conn)
    # Registering again, with any id, is not (test_portal_dropin.py has more).
    with pytest.raises(GLib.Error) as e:
        bus.call("org.freedesktop.host.portal.Registry", "Register", ("org.example.Other", {}), "(sa{sv})", conn=conn)
    assert dbus_error_name(e.value) == "org.freedesktop.portal.Error.Failed"
    for bad in ("", "nodots", "org..x", "../../etc", "org/example"):
        with pytest.raises(GLib.Error) as e:
            bus.call("org.freedesktop.host.portal.Registry", "Register", (bad, {}), "(sa{sv})")
        assert dbus_error_name(e.value) == "org.freedesktop.portal.Error.InvalidArgument", bad


def test_registry_refused_to_sandboxed_apps(bus):
    bus.start_portal()
    r = limentest.run_sandboxed(bus, "org.example.App", SANDBOX_REGISTER)
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == "org.freedesktop.portal.Error.NotAllowed"


SANDBOX_REGISTER = """
import gi
from gi.repository import Gio, GLib
c = Gio.bus_get_sync(Gio.BusType.SESSION, None)
try:
    c.call_sync('org.freedesktop.portal.Desktop', '/org/freedesktop/portal/desktop',
                'org.freedesktop.host.portal.Registry', 'Register',
                GLib.Variant('(sa{sv})', ('org.example.Host', {})), None, 0, 5000, None)
    print('accepted')
except GLib.Error as e:
    print(Gio.DBusError.get_remote_error(e))
"""


def test_caller_vanishing_mid_call_does_not_hurt(bus):
    """Many clients that call and disconnect at once: the daemon keeps serving."""
    d = bus.start_portal()
    for _ in range(20):
        c = bus.new_connection()
        c.call("org.freedesktop.portal.Desktop", "/org/freedesktop/portal/desktop",
               "org.freedesktop.portal.Settings", "ReadAll", GLib.Variant("(as)", ([],)), None, 0, 5000, None, None)
        c.close_sync(None)
    assert bus.call("org.freedesktop.portal.Settings", "ReadAll", ([],), "(as)")[0]
    assert d.alive()


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT, signal.SIGHUP])
def test_signals_with_calls_in_flight(bus, sig):
    """A backend that never answers holds Settings calls open; the signal still ends the
    daemon at once with status 0."""
    here = os.path.dirname(os.path.abspath(__file__))
    bus.write_portal_file("hang", "org.freedesktop.impl.portal.desktop.hang", ["org.freedesktop.impl.portal.Settings"],
                          use_in="test")
    bus.start([limentest.python_exe(), os.path.join(here, "settings_backend.py"),
               "org.freedesktop.impl.portal.desktop.hang", "{}", "--hang"],
              wait_name="org.freedesktop.impl.portal.desktop.hang")
    d = bus.start_portal()
    conns = [bus.new_connection() for _ in range(5)]
    for c in conns:
        for _ in range(10):
            c.call(PORTAL_BUS_NAME, limentest.PORTAL_PATH, "org.freedesktop.portal.Settings", "ReadAll",
                   GLib.Variant("(as)", ([],)), None, 0, 20000, None, None)
    limentest.pump(0.2)
    t0 = time.monotonic()
    d.signal(sig)
    assert d.wait(timeout=5) == 0
    assert time.monotonic() - t0 < 1.0
    for c in conns:
        c.close_sync(None)


def test_portal_dir_is_the_only_one_searched(bus):
    """With XDG_DESKTOP_PORTAL_DIR set, *.portal files elsewhere are not used."""
    here = os.path.dirname(os.path.abspath(__file__))
    elsewhere = os.path.join(bus.data_home, "xdg-desktop-portal", "portals")
    os.makedirs(elsewhere)
    with open(os.path.join(elsewhere, "other.portal"), "w") as f:
        f.write("[portal]\nDBusName=org.freedesktop.impl.portal.desktop.other\n"
                "Interfaces=org.freedesktop.impl.portal.Settings;\nUseIn=test\n")
    bus.start([limentest.python_exe(), os.path.join(here, "settings_backend.py"),
               "org.freedesktop.impl.portal.desktop.other", "{'org.example': {'k': <'other'>}}"],
              wait_name="org.freedesktop.impl.portal.desktop.other")
    bus.start_portal()
    with pytest.raises(GLib.Error):
        bus.call("org.freedesktop.portal.Settings", "ReadOne", ("org.example", "k"), "(ss)")
    # The same file where the variable points is used.
    os.rename(os.path.join(elsewhere, "other.portal"), os.path.join(bus.env["XDG_DESKTOP_PORTAL_DIR"], "other.portal"))
    bus.start("limen-portal", "--replace", wait_name=None)
    assert limentest.wait_until(lambda: _read_k(bus) == "other", 10)


def _read_k(bus):
    try:
        return bus.call("org.freedesktop.portal.Settings", "ReadOne", ("org.example", "k"), "(ss)")[0]
    except GLib.Error:
        return None
