"""org.freedesktop.portal.Notification (version 2) through limen-portal with a dbusmock
backend; icon bytes are judged by limen-validate-icon (or XDP_VALIDATE_ICON), sound bytes by
limen-validate-sound (or XDP_VALIDATE_SOUND), and reach the backend as sealed memfds.
test_portal_notification_v2.py has version 2's other keys."""
import math
import os
import struct
import subprocess
import wave

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
    assert n["icon"] == ("themed", ["dialog-information", "dialog-information-symbolic"])
    bus.call(N, "RemoveNotification", ("n1",), "(s)", conn=client.conn)
    assert limentest.wait_until(lambda: backend.args("RemoveNotification"))
    assert backend.args("RemoveNotification")[0] == ["", "n1"]


def test_valid_png_icon_passes(env, tmp_path):
    bus, backend, client = env
    data = png(tmp_path, 64)
    add(bus, client, "img", {"title": v("s", "t"), "icon": v("v", v("(sv)", ("bytes", v("ay", data))))})
    (app_id, id, n), = backend.args("AddNotification")
    # A version 2 backend gets image data as a sealed memfd, never as bytes.
    assert n["icon"][0] == "file-descriptor" and bytes(n["icon"][1]) == data


@pytest.mark.parametrize("what", ["random", "too-big", "truncated", "svg-external"])
def test_bad_icon_bytes_left_out(env, tmp_path, what):
    """Icon data the validator refuses never reaches the backend; the notification does."""
    bus, backend, client = env
    data = {"random": os.urandom(200), "too-big": png(tmp_path, 600), "truncated": png(tmp_path, 32)[:40],
            "svg-external": b'<svg xmlns="http://www.w3.org/2000/svg"><image href="file:///etc/passwd"/></svg>'}[what]
    add(bus, client, "bad", {"title": v("s", "t"), "icon": v("v", v("(sv)", ("bytes", v("ay", data))))})
    (app_id, id, n), = backend.args("AddNotification")
    assert n["title"] == "t" and "icon" not in n


def test_validator_override(bus, tmp_path):
    """XDP_VALIDATE_ICON names the validator: one that refuses everything refuses a good PNG."""
    refuse = tmp_path / "refuse.sh"
    refuse.write_text("#!/bin/sh\nexit 1\n")
    refuse.chmod(0o755)
    backend = rh.setup(bus, ["notification"], portal_env={"XDP_VALIDATE_ICON": str(refuse)})
    client = rh.Client(bus)
    add(bus, client, "x", {"icon": v("v", v("(sv)", ("bytes", v("ay", png(tmp_path, 16)))))})
    add(bus, client, "y", {"title": v("s", "no icon")})
    assert [n for _, _, n in backend.args("AddNotification")] == [{}, {"title": "no icon"}]


BAD = [
    ("", {"title": v("s", "t")}, "id"),
    ("x" * 300, {}, "id"),
    ("n", {"title": v("i", 1)}, "title"),
    ("n", {"priority": v("s", "extreme")}, "priority"),
    ("n", {"default-action": v("s", "bad\x01action")}, "default-action"),
    ("n", {"default-action": v("s", "")}, "default-action"),
    ("n", {"buttons": v("as", ["x"])}, "buttons"),
    ("n", {"buttons": v("aa{sv}", [{"label": v("s", "x")}])}, "buttons"),
    ("n", {"buttons": v("aa{sv}", [{"label": v("s", "x"), "action": v("s", "a")}] * 65)}, "buttons"),
    ("n", {"title": v("s", "t" * 16385)}, "title"),
    ("n", {"icon": v("v", v("u", 3))}, "icon"),
    ("n", {"sound": v("u", 1)}, "sound"),
    # Icons and sounds not of the specification's form are refused too, as by the reference
    # (only data the validators refuse is left out, see test_bad_icon_bytes_left_out).
    ("n", {"icon": v("v", v("(sv)", ("themed", v("s", "dialog-information"))))}, "icon"),
    ("n", {"icon": v("v", v("(sv)", ("bytes", v("as", ["x"]))))}, "icon"),
    ("n", {"icon": v("v", v("(sv)", ("file-descriptor", v("h", 0))))}, "icon"),
    ("n", {"sound": v("s", "loud")}, "sound"),
    ("n", {"sound": v("v", v("(sv)", ("file-descriptor", v("h", 3))))}, "sound"),
    ("n", {"sound": v("v", v("(sv)", ("file-descriptor", v("s", ""))))}, "sound"),
    ("n", {"sound": v("v", v("(sv)", ("bytes", v("ay", b""))))}, "sound"),
]


def test_what_the_reference_takes_passes(env):
    """Ten buttons, a 2 KiB title, a 20 KB body and an action name with a space: the reference
    passes them on, and so does Limen."""
    bus, backend, client = env
    buttons = [{"label": v("s", f"B{i}"), "action": v("s", f"act {i}")} for i in range(10)]
    add(bus, client, "big", {"title": v("s", "t" * 2048), "body": v("s", "b" * 20000),
                             "default-action": v("s", "open it"), "buttons": v("aa{sv}", buttons)})
    (app_id, id, n), = backend.args("AddNotification")
    assert len(n["title"]) == 2048 and len(n["body"]) == 20000 and n["default-action"] == "open it"
    assert [b["action"] for b in n["buttons"]] == [f"act {i}" for i in range(10)]


# A file path (GIO's ("file", <s>), which GLib apps send; the reference refuses the call) is
# never opened for the app, and a name no icon theme can hold (the reference takes it) is not
# passed on: left out, the notification still shown.
LEFT_OUT = [
    {"icon": v("v", v("(sv)", ("file", v("s", "/etc/passwd"))))},
    {"icon": v("v", v("(sv)", ("themed", v("as", ["../../x"]))))},
    {"icon": v("s", "../dialog")},
    {"icon": v("v", v("(sv)", ("themed", v("as", ["..", "."]))))},
    {"icon": v("s", "..")},
    {"sound": v("v", v("(sv)", ("file", v("s", "/usr/share/sounds/x.oga"))))},
]


@pytest.mark.parametrize("field", LEFT_OUT, ids=["icon-file", "icon-bad-name", "icon-bad-string", "icon-dots",
                                               "icon-dots-string", "sound-file"])
def test_left_out(env, field):
    bus, backend, client = env
    add(bus, client, "n", dict(field, title=v("s", "shown")))
    (app_id, id, n), = backend.args("AddNotification")
    assert n == {"title": "shown"}


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
    # Someone who is not the backend, unicast to the portal and broadcast: not passed on.
    impostor = bus.new_connection()
    portal_owner = bus.call("org.freedesktop.DBus", "GetNameOwner", (limentest.PORTAL_BUS_NAME,), "(s)",
                            dest="org.freedesktop.DBus", path="/org/freedesktop/DBus")[0]
    for dest in (portal_owner, None):
        impostor.emit_signal(dest, limentest.PORTAL_PATH, "org.freedesktop.impl.portal.Notification",
                             "ActionInvoked", GLib.Variant("(sssav)", ("", "n2", "app.spoofed", [])))
    impostor.flush_sync(None)
    limentest.pump(0.2)
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


def test_version_is_2(env):
    """With a version 2 backend (the mock's default; test_portal_dropin.py has the others)."""
    bus, backend, client = env
    assert limentest.wait_until(lambda: bus.get_property(N, "version") == 2)


def test_plain_string_icon_is_a_themed_name(env):
    bus, backend, client = env
    add(bus, client, "s", {"icon": v("s", "dialog-information")})
    (app_id, id, n), = backend.args("AddNotification")
    assert n["icon"] == ("themed", ["dialog-information", "dialog-information-symbolic"])


def memfd(data, seal=True):
    fd = os.memfd_create("limen-test", os.MFD_ALLOW_SEALING if seal else 0)
    os.write(fd, data)
    return fd


def test_icon_in_a_memfd(env, tmp_path):
    bus, backend, client = env
    data = png(tmp_path, 48)
    fd = memfd(data)
    bus.call(N, "AddNotification", ("fd", {"icon": v("v", v("(sv)", ("file-descriptor", v("h", 0))))}),
             "(sa{sv})", conn=client.conn, fds=[fd])
    os.close(fd)
    (app_id, id, n), = backend.args("AddNotification")
    assert n["icon"][0] == "file-descriptor" and bytes(n["icon"][1]) == data


def test_icon_fd_that_is_not_a_sealable_memfd_is_refused(env, tmp_path):
    """The specification asks for a sealable memfd: a plain file or a memfd that can never be
    sealed is InvalidArgument, and nothing reaches the backend."""
    bus, backend, client = env
    p = tmp_path / "i.png"
    p.write_bytes(png(tmp_path, 16))
    for fd in (os.open(p, os.O_RDONLY), memfd(p.read_bytes(), seal=False)):
        with pytest.raises(GLib.Error) as e:
            bus.call(N, "AddNotification", ("fd", {"icon": v("v", v("(sv)", ("file-descriptor", v("h", 0))))}),
                     "(sa{sv})", conn=client.conn, fds=[fd])
        os.close(fd)
        assert rh.error_name(e) == "org.freedesktop.portal.Error.InvalidArgument" and "icon" in e.value.message
    assert backend.args("AddNotification") == []


def wav_bytes(tmp_path, seconds=0.5, rate=22050):
    p = tmp_path / f"s{seconds}.wav"
    with wave.open(str(p), "wb") as w:
        w.setnchannels(1)
        w.setsampwidth(2)
        w.setframerate(rate)
        w.writeframes(b"".join(struct.pack("<h", int(8000 * math.sin(i / 8))) for i in range(int(rate * seconds))))
    return p


def encoded(tmp_path, kind):
    src = wav_bytes(tmp_path)
    out = tmp_path / f"s.{kind}"
    if kind == "ogg":
        subprocess.run(["oggenc", "-Q", "-o", str(out), str(src)], check=True)
    elif kind == "opus":
        subprocess.run(["opusenc", "--quiet", str(src), str(out)], check=True)
    else:
        out = src
    return out.read_bytes()


@pytest.mark.parametrize("kind", ["wav", "ogg", "opus"])
def test_sound_bytes_pass_validation(env, tmp_path, kind):
    bus, backend, client = env
    data = encoded(tmp_path, kind)
    add(bus, client, "snd", {"title": v("s", "t"), "sound": v("v", v("(sv)", ("bytes", v("ay", data))))})
    (app_id, id, n), = backend.args("AddNotification")
    assert n["sound"][0] == "file-descriptor" and bytes(n["sound"][1]) == data


def test_sound_in_a_memfd(env, tmp_path):
    bus, backend, client = env
    data = encoded(tmp_path, "opus")
    fd = memfd(data)
    bus.call(N, "AddNotification", ("fd", {"sound": v("v", v("(sv)", ("file-descriptor", v("h", 0))))}),
             "(sa{sv})", conn=client.conn, fds=[fd])
    os.close(fd)
    (app_id, id, n), = backend.args("AddNotification")
    assert bytes(n["sound"][1]) == data


@pytest.mark.parametrize("word", ["default", "silent"])
def test_sound_words_pass_through(env, word):
    bus, backend, client = env
    add(bus, client, "w", {"sound": v("v", v("s", word))})
    (app_id, id, n), = backend.args("AddNotification")
    assert n["sound"] == word


@pytest.mark.parametrize("what", ["random", "truncated-ogg", "corrupt-opus", "mp3-like", "too-long", "float-wav"])
def test_bad_sound_bytes_left_out(env, tmp_path, what):
    bus, backend, client = env
    if what == "random":
        data = os.urandom(400)
    elif what == "truncated-ogg":
        data = encoded(tmp_path, "ogg")[:-300]
    elif what == "corrupt-opus":
        data = bytearray(encoded(tmp_path, "opus"))
        data[len(data) // 2] ^= 0x40
        data = bytes(data)
    elif what == "mp3-like":
        data = b"ID3\x03\x00\x00\x00\x00\x00\x00" + os.urandom(500)
    elif what == "too-long":
        data = wav_bytes(tmp_path, seconds=31, rate=8000).read_bytes()
    else:
        data = bytearray(encoded(tmp_path, "wav"))
        data[20] = 3  # WAVE_FORMAT_IEEE_FLOAT: not the PCM the specification names
        data = bytes(data)
    add(bus, client, "bad", {"title": v("s", "t"), "sound": v("v", v("(sv)", ("bytes", v("ay", data))))})
    (app_id, id, n), = backend.args("AddNotification")
    assert n == {"title": "t"}


def test_sound_validator_override(bus, tmp_path):
    """XDP_VALIDATE_SOUND names the sound validator: the frontend runs that program, with the
    sound on its stdin, and follows its verdict."""
    seen = tmp_path / "seen"
    fake = tmp_path / "fake-validate-sound.sh"
    fake.write_text(f"#!/bin/sh\ncat > {seen}\necho 'wav 1 8000 5'\n")
    fake.chmod(0o755)
    backend = rh.setup(bus, ["notification"], portal_env={"XDP_VALIDATE_SOUND": str(fake)})
    client = rh.Client(bus)
    # Garbage our validator would refuse; the named one accepts it and saw exactly these bytes.
    add(bus, client, "x", {"sound": v("v", v("(sv)", ("bytes", v("ay", b"not a sound at all"))))})
    assert seen.read_bytes() == b"not a sound at all"
    assert len(backend.args("AddNotification")) == 1


def test_sound_validator_override_refusing(bus, tmp_path):
    refuse = tmp_path / "refuse.sh"
    refuse.write_text("#!/bin/sh\nexit 1\n")
    refuse.chmod(0o755)
    backend = rh.setup(bus, ["notification"], portal_env={"XDP_VALIDATE_SOUND": str(refuse)})
    client = rh.Client(bus)
    add(bus, client, "x", {"sound": v("v", v("(sv)", ("bytes", v("ay", encoded(tmp_path, "wav")))))})
    add(bus, client, "y", {"sound": v("v", v("s", "silent"))})
    assert [n for _, _, n in backend.args("AddNotification")] == [{}, {"sound": "silent"}]


def test_icon_validator_override_is_what_runs(bus, tmp_path):
    """The validator XDP_VALIDATE_ICON names really runs: it sees the bytes and its yes counts."""
    seen = tmp_path / "seen"
    fake = tmp_path / "fake-validate-icon.sh"
    fake.write_text(f"#!/bin/sh\ncat > {seen}\necho 'png 16 16'\n")
    fake.chmod(0o755)
    backend = rh.setup(bus, ["notification"], portal_env={"XDP_VALIDATE_ICON": str(fake)})
    client = rh.Client(bus)
    add(bus, client, "x", {"icon": v("v", v("(sv)", ("bytes", v("ay", b"no image"))))})
    assert seen.read_bytes() == b"no image"
    assert len(backend.args("AddNotification")) == 1
