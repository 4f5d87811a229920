"""org.freedesktop.portal.Notification through limen-portal with a dbusmock backend; icon
bytes are judged by limen-validate-icon (or XDP_VALIDATE_ICON)."""
import os
import subprocess

import pytest
from gi.repository import GLib

import limentest
import request_helpers as rh
from request_helpers import v

N = "org.freedesktop.portal.Notification"
APP = "org.example.App"


def png(tmp_path, size):
    p = tmp_path / f"i{size}.png"
    subprocess.run(["convert", "-size", f"{size}x{size}", "xc:red", str(p)], check=True)
    return p.read_bytes()


@pytest.fixture
def env(bus):
    backend = rh.setup(bus, ["notification"])
    return bus, backend, rh.Client(bus)


def add(bus, client, id, notification):
    bus.call(N, "AddNotification", (id, notification), "(sa{sv})", conn=client.conn)


def test_add_remove(env):
    bus, backend, client = env
    add(bus, client, "n1", {"title": v("s", "Hello"), "body": v("s", "World"), "priority": v("s", "high"),
                            "icon": v("v", v("(sv)", ("themed", v("as", ["dialog-information"])))),
                            "buttons": v("aa{sv}", [{"label": v("s", "OK"), "action": v("s", "app.ok")}]),
                            "unknown": v("s", "dropped")})
    (app_id, id, n), = backend.args("AddNotification")
    assert (app_id, id) == ("", "n1")
    assert n["title"] == "Hello" and n["priority"] == "high" and "unknown" not in n
    assert n["buttons"] == [{"label": "OK", "action": "app.ok"}]
    assert n["icon"] == ("themed", ["dialog-information"])
    bus.call(N, "RemoveNotification", ("n1",), "(s)", conn=client.conn)
    assert limentest.wait_until(lambda: backend.args("RemoveNotification"))
    assert backend.args("RemoveNotification")[0] == ["", "n1"]


def test_valid_png_icon_passes(env, tmp_path):
    bus, backend, client = env
    data = png(tmp_path, 64)
    add(bus, client, "img", {"title": v("s", "t"), "icon": v("v", v("(sv)", ("bytes", v("ay", data))))})
    (app_id, id, n), = backend.args("AddNotification")
    assert bytes(n["icon"][1]) == data


@pytest.mark.parametrize("what", ["random", "too-big", "truncated", "svg-external"])
def test_bad_icon_bytes_refused(env, tmp_path, what):
    bus, backend, client = env
    data = {"random": os.urandom(200), "too-big": png(tmp_path, 600), "truncated": png(tmp_path, 32)[:40],
            "svg-external": b'<svg xmlns="http://www.w3.org/2000/svg"><image href="file:///etc/passwd"/></svg>'}[what]
    with pytest.raises(GLib.Error) as e:
        add(bus, client, "bad", {"title": v("s", "t"), "icon": v("v", v("(sv)", ("bytes", v("ay", data))))})
    assert rh.error_name(e) == "org.freedesktop.portal.Error.InvalidArgument"
    assert "icon" in e.value.message
    assert backend.args("AddNotification") == []


def test_validator_override(bus, tmp_path):
    """XDP_VALIDATE_ICON names the validator: one that refuses everything refuses a good PNG."""
    refuse = tmp_path / "refuse.sh"
    refuse.write_text("#!/bin/sh\nexit 1\n")
    refuse.chmod(0o755)
    backend = rh.setup(bus, ["notification"], portal_env={"XDP_VALIDATE_ICON": str(refuse)})
    client = rh.Client(bus)
    with pytest.raises(GLib.Error):
        add(bus, client, "x", {"icon": v("v", v("(sv)", ("bytes", v("ay", png(tmp_path, 16)))))})
    add(bus, client, "y", {"title": v("s", "no icon")})
    assert len(backend.args("AddNotification")) == 1


BAD = [
    ("", {"title": v("s", "t")}, "id"),
    ("x" * 300, {}, "id"),
    ("n", {"title": v("i", 1)}, "title"),
    ("n", {"priority": v("s", "extreme")}, "priority"),
    ("n", {"default-action": v("s", "bad action!")}, "default-action"),
    ("n", {"buttons": v("as", ["x"])}, "buttons"),
    ("n", {"buttons": v("aa{sv}", [{"label": v("s", "x")}])}, "buttons"),
    ("n", {"buttons": v("aa{sv}", [{"label": v("s", "x"), "action": v("s", "a")}] * 9)}, "buttons"),
    ("n", {"icon": v("v", v("(sv)", ("file", v("s", "/etc/passwd"))))}, "icon"),
    ("n", {"icon": v("v", v("(sv)", ("themed", v("as", ["../../x"]))))}, "icon"),
    ("n", {"icon": v("s", "dialog")}, "icon"),
]


@pytest.mark.parametrize("id,notification,key", BAD, ids=[b[2] + str(i) for i, b in enumerate(BAD)])
def test_bad_notifications(env, id, notification, key):
    bus, backend, client = env
    with pytest.raises(GLib.Error) as e:
        add(bus, client, id, notification)
    assert rh.error_name(e) == "org.freedesktop.portal.Error.InvalidArgument"
    assert key in e.value.message
    assert backend.args("AddNotification") == []
    add(bus, client, "ok", {"title": v("s", "still serving")})


def test_action_reaches_only_the_app_that_added_it(env):
    bus, backend, client = env
    other = rh.Client(bus)
    got = []
    s1 = client.conn.signal_subscribe(None, N, "ActionInvoked", None, None, 0,
                                      lambda *a: got.append(("me", a[5].unpack())))
    s2 = other.conn.signal_subscribe(None, N, "ActionInvoked", None, None, 0,
                                     lambda *a: got.append(("other", a[5].unpack())))
    add(bus, client, "n2", {"title": v("s", "t"), "default-action": v("s", "app.open")})
    bus.call("org.limen.MockBackend", "InvokeAction", ("", "n2", "app.open"), "(sss)", dest=rh.BACKEND_NAME)
    bus.call("org.limen.MockBackend", "InvokeAction", ("", "unknown", "app.open"), "(sss)", dest=rh.BACKEND_NAME)
    assert limentest.wait_until(lambda: got)
    limentest.pump(0.1)
    assert got == [("me", ("n2", "app.open", []))]
    client.conn.signal_unsubscribe(s1)
    other.conn.signal_unsubscribe(s2)


def test_sandboxed_app_id(env):
    bus, backend, client = env
    script = ("from gi.repository import Gio, GLib\n"
              "c = Gio.bus_get_sync(Gio.BusType.SESSION, None)\n"
              "c.call_sync('org.freedesktop.portal.Desktop', '/org/freedesktop/portal/desktop', "
              f"'{N}', 'AddNotification', GLib.Variant('(sa{{sv}})', ('sb', {{'title': GLib.Variant('s', 'x')}})), "
              "None, 0, 5000, None)\nprint('OK')\n")
    r = limentest.run_sandboxed(bus, APP, script)
    assert r.stdout.strip() == "OK", r.stderr
    assert backend.args("AddNotification")[0][:2] == [APP, "sb"]


def test_backend_gone_gives_failed_promptly(env):
    bus, backend, client = env
    backend.kill()
    with pytest.raises(GLib.Error) as e:
        add(bus, client, "n", {"title": v("s", "t")})
    assert rh.error_name(e) == "org.freedesktop.portal.Error.Failed"


def test_turned_off_notifications_are_refused(env):
    bus, backend, client = env
    rh.start_documents(bus)   # the permission store
    bus.call("org.freedesktop.impl.portal.PermissionStore", "SetPermission",
             ("notifications", True, "notification", APP, ["no"]), "(sbssas)",
             dest="org.freedesktop.impl.portal.PermissionStore", path="/org/freedesktop/impl/portal/PermissionStore")
    script = ("from gi.repository import Gio, GLib\n"
              "c = Gio.bus_get_sync(Gio.BusType.SESSION, None)\n"
              "try:\n"
              "    c.call_sync('org.freedesktop.portal.Desktop', '/org/freedesktop/portal/desktop', "
              f"'{N}', 'AddNotification', GLib.Variant('(sa{{sv}})', ('sb', {{'title': GLib.Variant('s', 'x')}})), "
              "None, 0, 5000, None)\n    print('OK')\n"
              "except GLib.Error as e:\n    print(Gio.DBusError.get_remote_error(e))\n")
    r = limentest.run_sandboxed(bus, APP, script)
    assert r.stdout.strip() == "org.freedesktop.portal.Error.NotAllowed", r.stderr
    assert backend.args("AddNotification") == []
    # Another app is not affected.
    r = limentest.run_sandboxed(bus, "org.example.Other", script)
    assert r.stdout.strip() == "OK"
