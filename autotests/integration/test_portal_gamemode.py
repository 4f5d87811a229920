"""GameMode and Realtime forwarded to mock services, with pids translated out of a real
bwrap pid namespace."""
import os
import subprocess

import pytest
from gi.repository import Gio, GLib

import limentest
from limentest import dbus_error_name, wait_until

GM_NAME = "com.feralinteractive.GameMode"
GM_PATH = "/com/feralinteractive/GameMode"
RTKIT = "org.freedesktop.RealtimeKit1"
RTKIT_PATH = "/org/freedesktop/RealtimeKit1"
MOCK = "org.freedesktop.DBus.Mock"


def start_mock(bus, name, path, iface, system=False):
    argv = [limentest.python_exe(), "-m", "dbusmock"] + (["--system"] if system else []) + [name, path, iface]
    bus.start(argv)
    conn = bus.system_conn if system else bus.conn
    assert wait_until(lambda: conn.call_sync("org.freedesktop.DBus", "/org/freedesktop/DBus", "org.freedesktop.DBus",
                                             "NameHasOwner", GLib.Variant("(s)", (name,)), None, 0, 5000,
                                             None).unpack()[0], 10)
    return conn


def mock_call(conn, name, path, method, args, sig):
    return conn.call_sync(name, path, MOCK, method, GLib.Variant(sig, args), None, 0, 5000, None)


@pytest.fixture
def gamemode(bus):
    conn = start_mock(bus, GM_NAME, GM_PATH, GM_NAME)
    # Each method answers with the first pid it got, so the test sees what GameMode saw.
    for method, sig in (("QueryStatus", "i"), ("RegisterGame", "i"), ("UnregisterGame", "i"),
                        ("QueryStatusByPid", "ii"), ("RegisterGameByPid", "ii"), ("UnregisterGameByPid", "ii")):
        mock_call(conn, GM_NAME, GM_PATH, "AddMethod", (GM_NAME, method, sig, "i", "ret = args[0]"), "(sssss)")
    mock_call(conn, GM_NAME, GM_PATH, "AddProperty", (GM_NAME, "ClientCount", GLib.Variant("i", 0)), "(ssv)")
    bus.start_portal()
    return conn


def test_host_pid_passes_through(bus, gamemode):
    assert wait_until(lambda: _query(bus, os.getpid()) == os.getpid(), 5)
    assert bus.call("org.freedesktop.portal.GameMode", "RegisterGameByPid", (os.getpid(), os.getpid()), "(ii)")[0] == os.getpid()


def _query(bus, pid):
    try:
        return bus.call("org.freedesktop.portal.GameMode", "QueryStatus", (pid,), "(i)")[0]
    except GLib.Error:
        return None


SANDBOX_QUERY = """
import os
from gi.repository import Gio, GLib
c = Gio.bus_get_sync(Gio.BusType.SESSION, None)
def q(pid):
    try:
        return c.call_sync('org.freedesktop.portal.Desktop', '/org/freedesktop/portal/desktop',
                           'org.freedesktop.portal.GameMode', 'QueryStatus', GLib.Variant('(i)', (pid,)),
                           None, 0, 5000, None).unpack()[0]
    except GLib.Error as e:
        return Gio.DBusError.get_remote_error(e)
print(os.getpid(), q(os.getpid()), q(31337))
"""


def test_sandbox_pid_is_translated(bus, gamemode):
    r = limentest.run_sandboxed(bus, "org.example.Game", SANDBOX_QUERY)
    assert r.returncode == 0, r.stderr
    inner, seen, missing = r.stdout.split()
    assert int(inner) < 10                  # a pid inside bwrap's own pid namespace
    assert int(seen) != int(inner)          # GameMode got the host's pid for it
    assert missing == "org.freedesktop.portal.Error.NotFound"   # no such process in the sandbox


def test_gamemode_pidfds(bus, gamemode):
    pidfd = os.pidfd_open(os.getpid())
    r = bus.call("org.freedesktop.portal.GameMode", "QueryStatusByPIDFd", (0, 1), "(hh)", fds=[pidfd, pidfd])
    assert r[0] == os.getpid()
    f = open("/etc/hostname")
    with pytest.raises(GLib.Error) as e:
        bus.call("org.freedesktop.portal.GameMode", "QueryStatusByPIDFd", (0, 1), "(hh)", fds=[f.fileno(), pidfd])
    assert dbus_error_name(e.value) == "org.freedesktop.portal.Error.InvalidArgument"
    with pytest.raises(GLib.Error) as e:
        bus.call("org.freedesktop.portal.GameMode", "QueryStatusByPIDFd", (0, 5), "(hh)", fds=[pidfd])
    assert dbus_error_name(e.value) == "org.freedesktop.portal.Error.InvalidArgument"
    os.close(pidfd)
    f.close()


def test_gamemode_bad_pids(bus, gamemode):
    for pid in (0, -1):
        with pytest.raises(GLib.Error) as e:
            bus.call("org.freedesktop.portal.GameMode", "QueryStatus", (pid,), "(i)")
        assert dbus_error_name(e.value) == "org.freedesktop.portal.Error.InvalidArgument"


def test_realtime_forwarded_with_thread_translation(bus):
    bus.start_system_bus()
    conn = start_mock(bus, RTKIT, RTKIT_PATH, RTKIT, system=True)
    mock_call(conn, RTKIT, RTKIT_PATH, "AddMethod", (RTKIT, "MakeThreadRealtimeWithPID", "ttu", "", ""), "(sssss)")
    mock_call(conn, RTKIT, RTKIT_PATH, "AddMethod", (RTKIT, "MakeThreadHighPriorityWithPID", "tti", "", ""), "(sssss)")
    mock_call(conn, RTKIT, RTKIT_PATH, "AddProperties", (RTKIT, {"MaxRealtimePriority": GLib.Variant("i", 20),
                                                                 "MinNiceLevel": GLib.Variant("i", -15),
                                                                 "RTTimeUSecMax": GLib.Variant("x", 200000)}),
              "(sa{sv})")
    bus.start_portal()
    iface = "org.freedesktop.portal.Realtime"
    assert wait_until(lambda: bus.get_property(iface, "MaxRealtimePriority") == 20, 5)
    assert bus.get_property(iface, "MinNiceLevel") == -15
    assert bus.get_property(iface, "RTTimeUSecMax") == 200000
    bus.call(iface, "MakeThreadRealtimeWithPID", (os.getpid(), os.getpid(), 5), "(ttu)")
    calls = conn.call_sync(RTKIT, RTKIT_PATH, MOCK, "GetMethodCalls", GLib.Variant("(s)", ("MakeThreadRealtimeWithPID",)),
                           None, 0, 5000, None).unpack()[0]
    assert [tuple(a) for _, a in calls] == [(os.getpid(), os.getpid(), 5)]
    r = limentest.run_sandboxed(bus, "org.example.Audio", REALTIME_SANDBOX)
    assert r.returncode == 0, r.stderr
    inner = int(r.stdout.split()[0])
    assert r.stdout.split()[1] == "ok"
    calls = conn.call_sync(RTKIT, RTKIT_PATH, MOCK, "GetMethodCalls",
                           GLib.Variant("(s)", ("MakeThreadHighPriorityWithPID",)), None, 0, 5000, None).unpack()[0]
    (pid, tid, prio), = [tuple(a) for _, a in calls]
    assert pid != inner and tid != inner and prio == -5


REALTIME_SANDBOX = """
import os
from gi.repository import Gio, GLib
c = Gio.bus_get_sync(Gio.BusType.SESSION, None)
try:
    c.call_sync('org.freedesktop.portal.Desktop', '/org/freedesktop/portal/desktop', 'org.freedesktop.portal.Realtime',
                'MakeThreadHighPriorityWithPID', GLib.Variant('(tti)', (os.getpid(), os.getpid(), -5)), None, 0, 5000, None)
    print(os.getpid(), 'ok')
except GLib.Error as e:
    print(os.getpid(), Gio.DBusError.get_remote_error(e))
"""


def _deny(bus, table, app):
    """The person's "no" for @app, as GNOME's, Plasma 6's and Limen's pages write it."""
    import documents_helpers as dh
    dh.start(bus, wait_mount=False)
    dh.ps(bus, "SetPermission", (table, True, table, app, ["no"]), "(sbssas)")


def test_gamemode_denied_in_the_store(bus, gamemode):
    """Table "gamemode", id "gamemode": a stored "no" refuses the app (NotAllowed, GameMode
    never asked); another app, and the same app once allowed again, go through."""
    _deny(bus, "gamemode", "org.example.Game")
    r = limentest.run_sandboxed(bus, "org.example.Game", SANDBOX_QUERY)
    assert r.returncode == 0, r.stderr
    assert r.stdout.split()[1] == "org.freedesktop.portal.Error.NotAllowed"
    calls = mock_call(gamemode, GM_NAME, GM_PATH, "GetMethodCalls", ("QueryStatus",), "(s)").unpack()[0]
    assert calls == []
    r = limentest.run_sandboxed(bus, "org.example.Other", SANDBOX_QUERY)
    assert r.stdout.split()[1] != "org.freedesktop.portal.Error.NotAllowed"
    import documents_helpers as dh
    dh.ps(bus, "SetPermission", ("gamemode", True, "gamemode", "org.example.Game", ["yes"]), "(sbssas)")
    r = limentest.run_sandboxed(bus, "org.example.Game", SANDBOX_QUERY)
    assert r.stdout.split()[1] != "org.freedesktop.portal.Error.NotAllowed"


def test_realtime_denied_in_the_store(bus):
    """Table "realtime", id "realtime": a stored "no" refuses the app; RealtimeKit is never asked."""
    bus.start_system_bus()
    conn = start_mock(bus, RTKIT, RTKIT_PATH, RTKIT, system=True)
    mock_call(conn, RTKIT, RTKIT_PATH, "AddMethod", (RTKIT, "MakeThreadHighPriorityWithPID", "tti", "", ""), "(sssss)")
    _deny(bus, "realtime", "org.example.Audio")
    bus.start_portal()
    r = limentest.run_sandboxed(bus, "org.example.Audio", REALTIME_SANDBOX)
    assert r.returncode == 0, r.stderr
    assert r.stdout.split()[1] == "org.freedesktop.portal.Error.NotAllowed"
    calls = conn.call_sync(RTKIT, RTKIT_PATH, MOCK, "GetMethodCalls",
                           GLib.Variant("(s)", ("MakeThreadHighPriorityWithPID",)), None, 0, 5000, None).unpack()[0]
    assert calls == []
    r = limentest.run_sandboxed(bus, "org.example.Other", REALTIME_SANDBOX)
    assert r.stdout.split()[1] == "ok"
