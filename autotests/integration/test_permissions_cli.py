"""limen-permissions (list / show / revoke / reset) on a private bus, against limen-documents
and against the reference's xdg-permission-store + xdg-document-portal (same interfaces)."""

import os
import subprocess
import time

import pytest
from gi.repository import GLib

import documents_helpers as dh
import limentest

APP = "org.example.Holder"
OTHER = "org.example.Other"
REF_STORE = "/usr/libexec/xdg-permission-store"
REF_DOCS = "/usr/libexec/xdg-document-portal"


def cli(bus, *args, check=True):
    env = dict(bus.env, LANGUAGE="C", LC_ALL="C.UTF-8",
               LIMEN_LOCALEDIR=os.path.join(limentest.BUILD_DIR, "locale"))
    r = subprocess.run([os.path.join(limentest.BUILD_DIR, "kde-backend/kcm/limen-permissions"), *args],
                       env=env, capture_output=True, text=True, timeout=60)
    if check:
        assert r.returncode == 0, r.stderr
    return r


def start(bus, which):
    if which == "limen":
        dh.start(bus)
        return
    bus.start([REF_STORE, "--replace"], wait_name=dh.PS_NAME)
    bus.start([REF_DOCS, "--replace"], wait_name=dh.DOCS_NAME)
    deadline = time.time() + 10
    while not dh.is_mounted(dh.mountpoint(bus)):
        assert time.time() < deadline, "reference mount did not appear"
        time.sleep(0.01)


def fill(bus):
    """What portals write: a file given read-write, a camera yes, a restore token with
    limen-kde's payload, an "open with" choice, and a refused notification."""
    f = os.path.join(bus.root, "given.txt")
    dh.write(f, "secret")
    doc = dh.add(bus, f)
    dh.docs(bus, "GrantPermissions", (doc, APP, ["read", "write"]), "(ssas)")
    set_perm = lambda t, i, app, p: dh.ps(bus, "SetPermission", (t, True, i, app, p), "(sbssas)")
    set_perm("devices", "camera", APP, ["yes"])
    set_perm("devices", "camera", OTHER, ["no"])
    set_perm("notifications", "notification", APP, ["no"])
    set_perm("desktop-used-apps", "text/plain", APP, ["org.kde.kate", "3"])
    set_perm("location", "location", "", ["CITY", "1"])
    windows = GLib.Variant("a{s(ss)}", {"window:abc": ("org.kde.kate", "notes.txt — Kate")})
    payload = GLib.Variant("a{sv}", {"sources": GLib.Variant("as", ["screen:DP-1", "window:abc", "window:def"]),
                                     "windows": windows, "devices": GLib.Variant("u", 3)})
    dh.ps(bus, "Set", ("remote-desktop", True, "0123456789abcdef", {APP: ["yes", "keyboard", "pointer", "since:1765022400"]},
                       GLib.Variant("(suv)", ("limen-kde", 1, payload))), "(sbsa{sas}v)")
    # Another backend's input capture token: its data says nothing; the frontend's row does.
    dh.ps(bus, "Set", ("input-capture", True, "11112222333344445555", {APP: ["yes", "pointer"]},
                       GLib.Variant("(suv)", ("other", 1, GLib.Variant("u", 3)))), "(sbsa{sas}v)")
    # As limen-kde records global shortcuts: the refused ids (and an empty word), the keys.
    held = GLib.Variant("a(sss)", [("talk", "Push to talk", "Ctrl+Alt+T"), ("mute", "Mute", "Meta+F9")])
    dh.ps(bus, "Set", ("global-shortcuts", True, APP, {APP: ["", "record"]},
                       GLib.Variant("a{sv}", {"shortcuts": held})), "(sbsa{sas}v)")
    return f, doc


@pytest.mark.parametrize("which", ["limen", "reference"])
def test_list_show_revoke_reset(bus, which):
    if which == "reference" and not (os.path.exists(REF_STORE) and os.path.exists(REF_DOCS)):
        pytest.skip("no reference permission store installed")
    start(bus, which)
    f, doc = fill(bus)

    listed = cli(bus, "list").stdout.splitlines()
    assert APP in listed and OTHER in listed
    assert "- (Apps that could not be identified)" in listed

    shown = cli(bus, "show", APP).stdout
    assert f"{f} — read and write, kept" in shown
    assert "Camera: Allowed" in shown
    assert "Notifications: Denied" in shown
    assert "text/plain: org.kde.kate (chosen 3 times)" in shown
    assert ("Remote control it may resume: token 01234567…, screen DP-1, window “notes.txt — Kate”, 1 window, "
            "control of: keyboard pointer, since 12/06/25") in shown
    assert "Input capture it may resume: token 11112222…, may capture: pointer" in shown
    assert "Files and folders:" in shown and "Devices and location:" in shown
    assert "Global shortcuts: Push to talk (Ctrl+Alt+T); Mute (Meta+F9); refused: record" in shown
    assert "Location: Allowed, accuracy: city" in cli(bus, "show", "-").stdout

    # One entry: the camera; the other app keeps its own answer.
    r = cli(bus, "revoke", APP, "devices", "camera")
    assert r.stdout.strip() == "1 permission revoked"
    assert dh.ps(bus, "Lookup", ("devices", "camera"), "(ss)")[0] == {OTHER: ["no"]}
    # Nothing held there any more: a status a script can test.
    assert cli(bus, "revoke", APP, "devices", "camera", check=False).returncode == 3
    assert cli(bus, "revoke", APP, "no-such-table", check=False).returncode == 1

    # Reset takes the rest, the file through the document portal (so its mount forgets it).
    r = cli(bus, "reset", APP)
    assert r.stdout.strip() == "6 permissions revoked"
    assert cli(bus, "show", APP).stdout.strip() == "Holds nothing."
    assert APP not in dh.docs(bus, "Info", (doc,), "(s)")[1]
    assert APP not in cli(bus, "list").stdout.splitlines()
    assert OTHER in cli(bus, "list").stdout.splitlines()


def test_no_store_is_an_error_not_a_hang(bus):
    """Without a permission store (none activatable), each command says so and fails."""
    r = cli(bus, "list", check=False)
    assert r.returncode == 1 and "limen-permissions:" in r.stderr
    assert cli(bus, "frobnicate", check=False).returncode == 2


def test_usage_needs_no_bus(bus):
    """--help prints the usage on stdout with status 0, and a mistaken command line is told
    so (status 2) before any bus is reached: both with no session bus at all."""
    env = {k: v for k, v in bus.env.items() if k not in ("DBUS_SESSION_BUS_ADDRESS", "DISPLAY")}
    exe = os.path.join(limentest.BUILD_DIR, "kde-backend/kcm/limen-permissions")
    run = lambda *a: subprocess.run([exe, *a], env=dict(env, LANGUAGE="C", LC_ALL="C.UTF-8"),
                                    capture_output=True, text=True, timeout=60)
    r = run("--help")
    assert r.returncode == 0 and r.stdout.startswith("Usage: limen-permissions list") and not r.stderr
    for wrong in (["show"], ["list", "extra"], ["revoke", "app"], ["set", "app", "t", "i"], ["frobnicate"]):
        r = run(*wrong)
        assert r.returncode == 2 and r.stderr.startswith("Usage:"), (wrong, r.stderr)


def test_what_apps_wrote_cannot_drive_the_terminal(bus):
    """A window title, a file name and an app id (any host program can store one) carrying
    terminal control sequences or a bidi override: `list` and `show` write them escaped,
    so what reaches the person's terminal is text, not commands to it."""
    start(bus, "limen")
    app = "org.example.Esc"
    f = os.path.join(bus.root, "clear\x1b[2J.txt")
    dh.write(f, "x")
    doc = dh.add(bus, f)
    dh.docs(bus, "GrantPermissions", (doc, app, ["read"]), "(ssas)")
    windows = GLib.Variant("a{s(ss)}", {"window:abc": ("org.kde.kate", "clip\x1b]52;c;aGk=\x07 \u202etxt.exe")})
    payload = GLib.Variant("a{sv}", {"sources": GLib.Variant("as", ["window:abc"]), "windows": windows})
    dh.ps(bus, "Set", ("screencast", True, "0123456789abcdef", {app: ["yes"]},
                       GLib.Variant("(suv)", ("limen-kde", 1, payload))), "(sbsa{sas}v)")
    dh.ps(bus, "SetPermission", ("devices", True, "camera", "bell\x07\x1b[31m", ["yes"]), "(sbssas)")

    listed = cli(bus, "list").stdout
    shown = cli(bus, "show", app).stdout
    for out in (listed, shown):
        assert not any(ord(c) < 0x20 and c != "\n" or 0x7f <= ord(c) < 0xa0 or c == "\u202e" for c in out), repr(out)
    assert "bell\\x07\\x1b[31m" in listed.splitlines()
    assert "clear\\x1b[2J.txt" in shown
    assert "clip\\x1b]52;c;aGk=\\x07 \\u202etxt.exe" in shown
