"""Drop-in behaviour found by running real clients and other implementations' harnesses
against limen-portal (issue 19): Trash with libportal's read-only fds, Notification's
version, icon fallbacks and dropped fields, the Registry's one-time Register, and where
portals.conf is read from."""
import os
import struct
import subprocess
import wave

import pytest
from gi.repository import GLib

import limentest
import request_helpers as rh
from limentest import dbus_error_name
from request_helpers import v

T = "org.freedesktop.portal.Trash"
N = "org.freedesktop.portal.Notification"
REG = "org.freedesktop.host.portal.Registry"
S = "org.freedesktop.portal.Settings"
SETTINGS_IMPL = "org.freedesktop.impl.portal.Settings"
HERE = os.path.dirname(os.path.abspath(__file__))


# ---- Trash ------------------------------------------------------------------------------

SANDBOX_TRASH = """
import os, sys
from gi.repository import Gio, GLib
path, flags = sys.argv[1], int(sys.argv[2])
fd = os.open(path, flags)
fdlist = Gio.UnixFDList.new()
fdlist.append(fd)
c = Gio.bus_get_sync(Gio.BusType.SESSION, None)
try:
    r, _ = c.call_with_unix_fd_list_sync('org.freedesktop.portal.Desktop', '/org/freedesktop/portal/desktop',
        'org.freedesktop.portal.Trash', 'TrashFile', GLib.Variant('(h)', (0,)), None, 0, 5000, fdlist, None)
    print('result', r.unpack()[0])
except GLib.Error as e:
    print(Gio.DBusError.get_remote_error(e))
"""


def sandboxed_trash(bus, path, flags, **kw):
    script = f"import sys; sys.argv = ['x', {path!r}, '{flags}']\n" + SANDBOX_TRASH
    r = limentest.run_sandboxed(bus, "org.example.App", script, **kw)
    assert r.returncode == 0, r.stderr
    return r.stdout.strip()


def make(bus, name):
    path = os.path.join(bus.home, name)
    with open(path, "w") as f:
        f.write("x")
    return path


def in_trash(bus, name):
    return os.path.exists(os.path.join(bus.data_home, "Trash", "files", name))


def test_trash_read_only_fd_as_libportal_sends_it(bus):
    """libportal built without _GNU_SOURCE opens the file O_RDONLY: the caller may write and
    delete the file where it sees it, so it is trashed."""
    bus.start_portal()
    path = make(bus, "libportal.txt")
    fd = os.open(path, os.O_RDONLY)
    assert bus.call(T, "TrashFile", (0,), "(h)", fds=[fd])[0] == 1
    os.close(fd)
    assert not os.path.exists(path) and in_trash(bus, "libportal.txt")


def test_trash_read_only_fd_from_sandbox(bus):
    bus.start_portal()
    path = make(bus, "sandboxed-ro.txt")
    assert sandboxed_trash(bus, path, os.O_RDONLY, binds=(bus.home,)) == "result 1"
    assert in_trash(bus, "sandboxed-ro.txt")


def test_trash_read_only_fd_where_the_app_cannot_write_answers_0(bus):
    """The app sees its home read-only: a read-only fd gives it no right to trash."""
    bus.start_portal()
    path = make(bus, "ro-bind.txt")
    assert sandboxed_trash(bus, path, os.O_RDONLY, ro_binds=(bus.home,)) == "result 0"
    assert os.path.exists(path)


def test_trash_refusals_answer_0_not_an_error(bus):
    """A file that cannot be trashed answers 0, as the specification says: a read-only file,
    a file in a folder the app cannot change, a file the app cannot see."""
    bus.start_portal()
    ro = make(bus, "readonly.txt")
    os.chmod(ro, 0o444)
    # Root passes every mode check; the app's uid is what counts, so use a mount instead.
    inner = make(bus, "inner.txt")
    assert sandboxed_trash(bus, inner, os.O_RDWR, ro_binds=(bus.home,),
                           extra_args=("--bind", inner, inner)) == "result 0"
    assert os.path.exists(inner)
    # A file outside the app's view, reached through an fd it inherited.
    secret_dir = os.path.join(bus.root, "hidden")
    os.mkdir(secret_dir)
    secret = os.path.join(secret_dir, "secret.txt")
    with open(secret, "w") as f:
        f.write("s")
    fd = os.open(secret, os.O_RDWR)
    os.set_inheritable(fd, True)
    script = ("import os\nfrom gi.repository import Gio, GLib\n"
              "l = Gio.UnixFDList.new(); l.append(%d)\n"
              "c = Gio.bus_get_sync(Gio.BusType.SESSION, None)\n"
              "try:\n"
              "    r, _ = c.call_with_unix_fd_list_sync('org.freedesktop.portal.Desktop', "
              "'/org/freedesktop/portal/desktop', 'org.freedesktop.portal.Trash', 'TrashFile', "
              "GLib.Variant('(h)', (0,)), None, 0, 5000, l, None)\n"
              "    print('result', r.unpack()[0])\n"
              "except GLib.Error as e:\n    print(Gio.DBusError.get_remote_error(e))\n") % fd
    r = limentest.run_sandboxed(bus, "org.example.App", script, pass_fds=(fd,))
    os.close(fd)
    assert r.stdout.strip() == "result 0", r.stderr
    assert os.path.exists(secret)
    # A deleted file (host caller).
    gone = make(bus, "gone.txt")
    fd = os.open(gone, os.O_RDWR)
    os.unlink(gone)
    assert bus.call(T, "TrashFile", (0,), "(h)", fds=[fd])[0] == 0
    os.close(fd)


def test_trash_malformed_fd_is_still_invalid_argument(bus):
    """Keep: no fd at the index, or not a file at all, is a broken call, not a refusal."""
    d = bus.start_portal()
    with pytest.raises(GLib.Error) as e:
        bus.call(T, "TrashFile", (0,), "(h)")
    assert dbus_error_name(e.value) == "org.freedesktop.portal.Error.InvalidArgument"
    r, w = os.pipe()
    with pytest.raises(GLib.Error) as e:
        bus.call(T, "TrashFile", (0,), "(h)", fds=[w])
    assert dbus_error_name(e.value) == "org.freedesktop.portal.Error.InvalidArgument"
    assert d.alive()


# ---- Registry ---------------------------------------------------------------------------

def register(bus, app_id, conn):
    bus.install_app(app_id)
    bus.call(REG, "Register", (app_id, {}), "(sa{sv})", conn=conn)


def test_register_after_a_call_is_refused(bus):
    """The connection was identified (and may have been served) as what it is: it cannot
    become another app afterwards."""
    bus.start_portal()
    conn = bus.new_connection()
    bus.call(S, "ReadAll", ([],), "(as)", conn=conn)
    with pytest.raises(GLib.Error) as e:
        register(bus, "org.example.Late", conn)
    assert dbus_error_name(e.value) == "org.freedesktop.portal.Error.Failed"
    # The reference's words, which clients match.
    assert "Connection already associated with an application ID" in e.value.message


def test_second_register_is_refused(bus):
    bus.start_portal()
    conn = bus.new_connection()
    register(bus, "org.example.Host", conn)
    for again in ("org.example.Host", "org.example.Other"):
        with pytest.raises(GLib.Error) as e:
            register(bus, again, conn)
        assert dbus_error_name(e.value) == "org.freedesktop.portal.Error.Failed"
        assert "Connection already associated with an application ID" in e.value.message
    # A fresh connection registers as its first call.
    register(bus, "org.example.Other", bus.new_connection())


# ---- Notification -----------------------------------------------------------------------

def notification_env(bus, version=None, portal_env=None):
    params = {} if version is None else {"version": version}
    backend = rh.setup(bus, ["notification"], params=params, portal_env=portal_env)
    return backend, rh.Client(bus)


def add(bus, client, id, notification, fds=None):
    bus.call(N, "AddNotification", (id, notification), "(sa{sv})", conn=client.conn, fds=fds)


@pytest.mark.parametrize("backend_version,expected", [(1, 1), (0, 1), (2, 2), (5, 2)])
def test_notification_version_follows_the_backend(bus, backend_version, expected):
    notification_env(bus, version=backend_version)
    assert limentest.wait_until(lambda: bus.get_property(N, "version") == expected, 5), \
        bus.get_property(N, "version")
    limentest.pump(0.2)
    assert bus.get_property(N, "version") == expected


@pytest.mark.parametrize("name,names", [
    ("mail-unread", ["mail-unread", "mail-unread-symbolic"]),
    ("mail-unread-symbolic", ["mail-unread-symbolic", "mail-unread"]),
])
def test_single_icon_name_gets_symbolic_fallbacks(bus, name, names):
    backend, client = notification_env(bus)
    add(bus, client, "plain", {"title": v("s", "t"), "icon": v("s", name)})
    add(bus, client, "themed", {"title": v("s", "t"), "icon": v("v", v("(sv)", ("themed", v("as", [name]))))})
    got = backend.args("AddNotification")
    assert [n["icon"] for _, _, n in got] == [("themed", names)] * 2


@pytest.mark.parametrize("icon", [
    v("(sv)", ("file", v("s", "/usr/share/icons/hicolor/48x48/apps/x.png"))),
    v("(sv)", ("themed", v("as", ["../../etc/passwd"]))),
    v("(sv)", ("bytes", v("ay", b"not an image at all"))),
    v("s", "bad/name"),
], ids=["file", "bad-name", "bad-bytes", "bad-string"])
def test_unsupported_icon_is_dropped_and_the_notification_shown(bus, icon):
    backend, client = notification_env(bus)
    add(bus, client, "n", {"title": v("s", "Still here"), "icon": v("v", icon)})
    (app_id, id, n), = backend.args("AddNotification")
    assert n["title"] == "Still here" and "icon" not in n


def test_unsupported_sound_is_dropped_and_the_notification_shown(bus):
    backend, client = notification_env(bus)
    add(bus, client, "n", {"title": v("s", "t"), "sound": v("v", v("(sv)", ("file", v("s", "/x.oga"))))})
    add(bus, client, "m", {"title": v("s", "t"), "sound": v("v", v("(sv)", ("bytes", v("ay", b"noise"))))})
    got = backend.args("AddNotification")
    assert len(got) == 2 and all("sound" not in n for _, _, n in got)


def test_icon_of_the_wrong_type_is_still_invalid(bus):
    """Keep: a value that is neither a string nor a serialized (sv) is a broken call, and so
    is an icon kind the specification does not have (as Debian's 1.16 answers)."""
    backend, client = notification_env(bus)
    for icon in (v("u", 7), v("(sv)", ("emblemed", v("s", "x")))):
        with pytest.raises(GLib.Error) as e:
            add(bus, client, "n", {"title": v("s", "t"), "icon": v("v", icon)})
        assert rh.error_name(e) == "org.freedesktop.portal.Error.InvalidArgument"


def empty_wav(tmp_path):
    p = tmp_path / "empty.wav"
    with wave.open(str(p), "wb") as w:
        w.setnchannels(1)
        w.setsampwidth(2)
        w.setframerate(8000)
        w.writeframes(b"")
    return p.read_bytes()


def test_zero_length_wav_is_accepted(bus, tmp_path):
    backend, client = notification_env(bus)
    data = empty_wav(tmp_path)
    assert len(data) == 44
    add(bus, client, "quiet", {"title": v("s", "t"), "sound": v("v", v("(sv)", ("bytes", v("ay", data))))})
    (app_id, id, n), = backend.args("AddNotification")
    assert n["sound"][0] == "file-descriptor" and bytes(n["sound"][1]) == data


def sound_validator():
    for rel in (("src", "validators", "limen-validate-sound"), ("src", "portal", "limen-validate-sound")):
        path = os.path.join(limentest.BUILD_DIR, *rel)
        if os.path.exists(path):
            return path
    raise FileNotFoundError("limen-validate-sound")


def test_zero_length_wav_validator_directly(tmp_path):
    data = empty_wav(tmp_path)
    r = subprocess.run([sound_validator()], input=data, capture_output=True)
    assert r.returncode == 0, r.stderr
    assert r.stdout.split() == [b"wav", b"1", b"8000", b"0"]
    # Half a frame is still refused.
    bad = bytearray(data[:40]) + struct.pack("<I", 1) + b"\x00"
    bad[4:8] = struct.pack("<I", len(bad) - 8)
    r = subprocess.run([sound_validator()], input=bytes(bad), capture_output=True)
    assert r.returncode == 1


# ---- portals.conf and Settings ----------------------------------------------------------

FIRST = "{'org.example.a': {'x': <'first'>, 'only1': <1>}}"
SECOND = "{'org.example.a': {'x': <'second'>, 'only2': <2>}}"


def settings_backend(bus, name, values):
    return bus.start([limentest.python_exe(), os.path.join(HERE, "settings_backend.py"), name, values],
                     wait_name=name)


def test_portals_conf_in_xdg_desktop_portal_dir(bus):
    """The reference's harnesses write portals.conf next to their .portal files."""
    bus.write_portal_file("first", "org.freedesktop.impl.portal.desktop.first", [SETTINGS_IMPL], use_in="test")
    bus.write_portal_file("second", "org.freedesktop.impl.portal.desktop.second", [SETTINGS_IMPL], use_in="test")
    with open(os.path.join(bus.env["XDG_DESKTOP_PORTAL_DIR"], "portals.conf"), "w") as f:
        f.write("[preferred]\ndefault=second\n")
    settings_backend(bus, "org.freedesktop.impl.portal.desktop.first", FIRST)
    settings_backend(bus, "org.freedesktop.impl.portal.desktop.second", SECOND)
    bus.start_portal()
    assert bus.call(S, "ReadAll", (["org.example.a"],), "(as)")[0] == {"org.example.a": {"x": "second", "only2": 2}}


def test_desktop_portals_conf_in_xdg_desktop_portal_dir(bus):
    bus.write_portal_file("first", "org.freedesktop.impl.portal.desktop.first", [SETTINGS_IMPL], use_in="test")
    bus.write_portal_file("second", "org.freedesktop.impl.portal.desktop.second", [SETTINGS_IMPL], use_in="test")
    d = bus.env["XDG_DESKTOP_PORTAL_DIR"]
    with open(os.path.join(d, "portals.conf"), "w") as f:
        f.write("[preferred]\ndefault=first\n")
    with open(os.path.join(d, "test-portals.conf"), "w") as f:
        f.write("[preferred]\ndefault=second\n")
    settings_backend(bus, "org.freedesktop.impl.portal.desktop.first", FIRST)
    settings_backend(bus, "org.freedesktop.impl.portal.desktop.second", SECOND)
    bus.start_portal()
    assert bus.call(S, "ReadOne", ("org.example.a", "x"), "(ss)")[0] == "second"


def test_settings_without_configuration_merges_only_this_desktops_backends(bus):
    """No portals.conf, and no .portal file names this desktop for Settings: no backend's
    values are merged (another desktop's settings would change every app's look)."""
    bus.write_portal_file("first", "org.freedesktop.impl.portal.desktop.first", [SETTINGS_IMPL], use_in="gnome")
    bus.write_portal_file("second", "org.freedesktop.impl.portal.desktop.second", [SETTINGS_IMPL])
    settings_backend(bus, "org.freedesktop.impl.portal.desktop.first", FIRST)
    settings_backend(bus, "org.freedesktop.impl.portal.desktop.second", SECOND)
    bus.start_portal()
    with pytest.raises(GLib.Error) as e:
        bus.call(S, "ReadOne", ("org.example.a", "x"), "(ss)")
    assert dbus_error_name(e.value) == "org.freedesktop.portal.Error.NotFound"


def test_settings_without_configuration_merges_the_desktops_backend(bus):
    bus.write_portal_file("first", "org.freedesktop.impl.portal.desktop.first", [SETTINGS_IMPL], use_in="gnome")
    bus.write_portal_file("second", "org.freedesktop.impl.portal.desktop.second", [SETTINGS_IMPL],
                          use_in="test")
    settings_backend(bus, "org.freedesktop.impl.portal.desktop.first", FIRST)
    settings_backend(bus, "org.freedesktop.impl.portal.desktop.second", SECOND)
    bus.start_portal()
    assert bus.call(S, "ReadAll", (["org.example.a"],), "(as)")[0] == {"org.example.a": {"x": "second", "only2": 2}}
