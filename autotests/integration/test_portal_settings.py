"""Settings v2: merged from backends, cached and kept current, defaults, bad input."""
import os
import subprocess
import time

import pytest
from gi.repository import Gio, GLib

import limentest
from limentest import dbus_error_name, wait_until, PORTAL_BUS_NAME, PORTAL_PATH

HERE = os.path.dirname(os.path.abspath(__file__))
S = "org.freedesktop.portal.Settings"
IMPL = "org.freedesktop.impl.portal.Settings"

FIRST = "{'org.freedesktop.appearance': {'color-scheme': <uint32 1>}, 'org.example.a': {'x': <'first'>, 'only1': <1>}}"
SECOND = ("{'org.freedesktop.appearance': {'color-scheme': <uint32 2>, 'accent-color': <(0.1, 0.2, 0.3)>},"
          " 'org.example.a': {'x': <'second'>, 'only2': <2>}, 'org.other': {'y': <true>}}")


def start_backend(bus, name, values, *extra):
    d = bus.start([limentest.python_exe(), os.path.join(HERE, "settings_backend.py"), name, values, *extra],
                  wait_name=name)
    return d


def two_backends(bus, conf="[preferred]\ndefault=first;second\n"):
    bus.write_portal_file("first", "org.freedesktop.impl.portal.desktop.first", [IMPL])
    bus.write_portal_file("second", "org.freedesktop.impl.portal.desktop.second", [IMPL])
    conf_dir = os.path.join(bus.config_home, "xdg-desktop-portal")
    os.makedirs(conf_dir, exist_ok=True)
    with open(os.path.join(conf_dir, "test-portals.conf"), "w") as f:
        f.write(conf)
    start_backend(bus, "org.freedesktop.impl.portal.desktop.first", FIRST)
    start_backend(bus, "org.freedesktop.impl.portal.desktop.second", SECOND)
    return bus.start_portal()


def read_all(bus, namespaces=()):
    return bus.call(S, "ReadAll", (list(namespaces),), "(as)")[0]


def test_defaults_without_backend(bus):
    bus.start_portal()
    assert read_all(bus) == {"org.freedesktop.appearance": {"color-scheme": 0, "contrast": 0, "reduced-motion": 0}}
    assert bus.call(S, "ReadOne", ("org.freedesktop.appearance", "color-scheme"), "(ss)")[0] == 0
    assert bus.call(S, "ReadOne", ("org.freedesktop.appearance", "reduced-motion"), "(ss)")[0] == 0
    with pytest.raises(GLib.Error) as e:
        bus.call(S, "ReadOne", ("org.example", "nothing"), "(ss)")
    assert dbus_error_name(e.value) == "org.freedesktop.portal.Error.NotFound"


def test_merge_first_backend_wins(bus):
    two_backends(bus)
    all_ = read_all(bus)
    # The backends' appearance keys as they gave them, no defaults added (as the reference and
    # upstream's harness, whose backend gives no reduced-motion, expect); ReadOne still
    # answers the keys the specification defines.
    assert all_["org.freedesktop.appearance"] == {"color-scheme": 1, "accent-color": (0.1, 0.2, 0.3)}
    assert bus.call(S, "ReadOne", ("org.freedesktop.appearance", "contrast"), "(ss)")[0] == 0
    assert bus.call(S, "ReadOne", ("org.freedesktop.appearance", "reduced-motion"), "(ss)")[0] == 0
    assert all_["org.example.a"] == {"x": "first", "only1": 1, "only2": 2}
    assert all_["org.other"] == {"y": True}


def test_namespace_filter(bus):
    two_backends(bus)
    assert set(read_all(bus, ["org.example.*"])) == {"org.example.a"}
    assert set(read_all(bus, ["org.other"])) == {"org.other"}
    assert set(read_all(bus, [""])) >= {"org.other", "org.example.a", "org.freedesktop.appearance"}
    assert read_all(bus, ["org.nothing"]) == {}


def test_read_is_wrapped_read_one_is_not(bus):
    two_backends(bus)
    r = bus.conn.call_sync(PORTAL_BUS_NAME, PORTAL_PATH, S, "Read",
                           GLib.Variant("(ss)", ("org.freedesktop.appearance", "color-scheme")),
                           None, 0, 5000, None)
    assert r.get_child_value(0).get_variant().get_type_string() == "v"
    assert r.get_child_value(0).get_variant().get_variant().get_uint32() == 1
    r = bus.conn.call_sync(PORTAL_BUS_NAME, PORTAL_PATH, S, "ReadOne",
                           GLib.Variant("(ss)", ("org.freedesktop.appearance", "color-scheme")),
                           None, 0, 5000, None)
    assert r.get_child_value(0).get_variant().get_uint32() == 1


def test_cache_and_live_change(bus):
    two_backends(bus)
    changes = []
    bus.conn.signal_subscribe(PORTAL_BUS_NAME, S, "SettingChanged", PORTAL_PATH, None, Gio.DBusSignalFlags.NONE,
                              lambda c, s, p, i, m, params: changes.append(params.unpack()))
    for _ in range(50):
        read_all(bus)
        bus.call(S, "ReadOne", ("org.example.a", "x"), "(ss)")
    calls = bus.get_property("org.limen.TestSettings", "ReadAllCalls", dest="org.freedesktop.impl.portal.desktop.first")
    assert calls == 1  # served from the cache after the first
    bus.call("org.limen.TestSettings", "Change", ("org.example.a", "x", GLib.Variant("s", "changed")), "(ssv)",
             dest="org.freedesktop.impl.portal.desktop.first")
    assert wait_until(lambda: changes, 5)
    assert changes[0] == ("org.example.a", "x", "changed")
    assert bus.call(S, "ReadOne", ("org.example.a", "x"), "(ss)")[0] == "changed"
    assert read_all(bus)["org.example.a"]["x"] == "changed"


def test_backend_restart_is_read_again(bus):
    bus.write_portal_file("first", "org.freedesktop.impl.portal.desktop.first", [IMPL], use_in="test")
    b = start_backend(bus, "org.freedesktop.impl.portal.desktop.first", FIRST)
    bus.start_portal()
    assert bus.call(S, "ReadOne", ("org.example.a", "x"), "(ss)")[0] == "first"
    b.stop()
    bus.wait_for_name_gone("org.freedesktop.impl.portal.desktop.first")
    start_backend(bus, "org.freedesktop.impl.portal.desktop.first", SECOND)
    assert wait_until(lambda: bus.call(S, "ReadOne", ("org.example.a", "x"), "(ss)")[0] == "second", 5)


def test_backend_started_after_frontend(bus):
    bus.write_portal_file("first", "org.freedesktop.impl.portal.desktop.first", [IMPL], use_in="test")
    bus.start_portal()
    assert read_all(bus) == {"org.freedesktop.appearance": {"color-scheme": 0, "contrast": 0, "reduced-motion": 0}}
    start_backend(bus, "org.freedesktop.impl.portal.desktop.first", FIRST)
    assert wait_until(lambda: read_all(bus)["org.freedesktop.appearance"]["color-scheme"] == 1, 5)


def test_backend_activated_by_service_file(bus):
    bus.write_portal_file("first", "org.freedesktop.impl.portal.desktop.first", [IMPL], use_in="test")
    bus.write_service_file("org.freedesktop.impl.portal.desktop.first",
                           f"{limentest.python_exe()} {HERE}/settings_backend.py "
                           f"org.freedesktop.impl.portal.desktop.first \"{{'org.example.a': {{'x': <'activated'>}}}}\"")
    bus.call("org.freedesktop.DBus", "ReloadConfig", dest="org.freedesktop.DBus", path="/org/freedesktop/DBus")
    bus.start_portal()
    assert bus.call(S, "ReadOne", ("org.example.a", "x"), "(ss)")[0] == "activated"
    # Activated by the bus, not by us: end it by its pid.
    pid = bus.call("org.freedesktop.DBus", "GetConnectionUnixProcessID", ("org.freedesktop.impl.portal.desktop.first",),
                   "(s)", dest="org.freedesktop.DBus", path="/org/freedesktop/DBus")[0]
    os.kill(pid, 15)


def test_hung_backend_costs_only_itself(bus):
    bus.write_portal_file("first", "org.freedesktop.impl.portal.desktop.first", [IMPL], use_in="test")
    start_backend(bus, "org.freedesktop.impl.portal.desktop.first", FIRST, "--hang")
    bus.start_portal()
    results = []
    bus.conn.call(PORTAL_BUS_NAME, PORTAL_PATH, S, "ReadAll", GLib.Variant("(as)", ([],)), None, 0, 20000, None,
                  lambda c, res: results.append(c.call_finish(res).unpack()))
    t0 = time.monotonic()
    assert bus.call("org.freedesktop.portal.NetworkMonitor", "GetAvailable")[0] in (True, False)
    assert time.monotonic() - t0 < 0.5
    # The Settings call ends after the backend timeout with the defaults.
    assert wait_until(lambda: results, 10)
    assert results[0][0]["org.freedesktop.appearance"]["color-scheme"] == 0


def test_bad_input(bus):
    d = bus.start_portal()
    for args, sig in (((["x" * 2000],), "(as)"), ((["a"] * 300,), "(as)")):
        with pytest.raises(GLib.Error) as e:
            bus.call(S, "ReadAll", args, sig)
        assert dbus_error_name(e.value) == "org.freedesktop.portal.Error.InvalidArgument"
    with pytest.raises(GLib.Error) as e:
        bus.call(S, "ReadOne", ("org.example", "k" * 5000), "(ss)")
    assert dbus_error_name(e.value) == "org.freedesktop.portal.Error.InvalidArgument"
    assert d.alive()
