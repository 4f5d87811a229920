"""The permissions page (kcm_limen_permissions) clicked through with QTest on Qt's
offscreen platform, against limen-documents and the reference's store: it lists the apps
by their desktop names, shows what one holds in words, and its switch, Revoke and "Reset
this app" change the store. Screenshots, English at 100% and German at 200%, go to
<build>/autotests/artifacts/kde/."""

import os
import subprocess

import pytest

from gi.repository import GLib

import documents_helpers as dh
import kde_helpers
import limentest
from test_permissions_cli import APP, OTHER, REF_DOCS, REF_STORE, fill, start

DRIVER = os.path.join(limentest.BUILD_DIR, "autotests", "kcm-permissions-driver")
IC_TOKEN = "11112222333344445555"


def desktop_file(bus):
    apps = os.path.join(bus.data_home, "applications")
    os.makedirs(apps, exist_ok=True)
    dh.write(os.path.join(apps, APP + ".desktop"),
             "[Desktop Entry]\nType=Application\nName=Holder Notes\nName[de]=Halter-Notizen\n"
             "Icon=accessories-text-editor\nExec=true\n")


def driver_env(bus, german=False):
    env = dict(bus.env, QT_QPA_PLATFORM="offscreen", QT_QPA_PLATFORMTHEME="kde", XDG_CURRENT_DESKTOP="KDE",
               LIMEN_LOCALEDIR=os.path.join(limentest.BUILD_DIR, "locale"),
               LANGUAGE="de" if german else "en", LC_ALL="C.UTF-8", LANG="C.UTF-8")
    if german:
        env["QT_SCALE_FACTOR"] = "2"
    return env


def drive(bus, shot, *actions, german=False):
    env = driver_env(bus, german)
    path = os.path.join(kde_helpers.artifacts_dir(), shot)
    r = subprocess.run([DRIVER, APP, path, *actions], env=env, capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stdout + r.stderr
    assert os.path.getsize(path) > 0
    return r.stdout


@pytest.mark.parametrize("which", ["limen", "reference"])
def test_page_changes_what_the_store_holds(bus, which):
    if which == "reference" and not (os.path.exists(REF_STORE) and os.path.exists(REF_DOCS)):
        pytest.skip("no reference permission store installed")
    start(bus, which)
    desktop_file(bus)
    f, doc = fill(bus)

    out = drive(bus, f"kcm-permissions-{which}-en.png",
                "value:devices:camera=no", f"revoke:input-capture:{IC_TOKEN}",
                f"shot:{kde_helpers.artifacts_dir()}/kcm-permissions-{which}-en-after.png")
    assert "header: Holder Notes" in out
    assert f"{f} — read and write, kept" in out
    before, after = out.split("--\n")[:2]
    assert "Input capture it may resume" in before and "Input capture it may resume" not in after
    assert "token 11112222…, may capture: pointer" in before
    assert ("token 01234567…, screen DP-1, window “notes.txt — Kate”, 1 window, control of: keyboard pointer, "
            "since 12/06/25" in after)
    # Global shortcuts with their keys, one a line, and what the person refused.
    assert "Push to talk: Ctrl+Alt+T\nMute: Meta+F9\nRefused: record" in before
    assert dh.ps(bus, "Lookup", ("devices", "camera"), "(ss)")[0] == {APP: ["no"], OTHER: ["no"]}
    assert APP not in dh.ps(bus, "Lookup", ("input-capture", IC_TOKEN), "(ss)")[0]

    out = drive(bus, f"kcm-permissions-{which}-de-200.png", f"revoke:documents:{doc}", "reset", german=True)
    assert "header: Halter-Notizen" in out
    assert f"{f} — Lesen und Schreiben, dauerhaft" in out and ": Datei oder Ordner" in out
    assert "File or folder" not in out and "kept" not in out
    assert "Push to talk: Strg+Alt+T" in out and "Abgelehnt: record" in out
    assert ("Fernsteuerung, die sie fortsetzen darf" in out and "Bildschirm DP-1, Fenster „notes.txt — Kate“, 1 Fenster, "
            "Steuerung von: Tastatur Zeiger, seit 12/06/25" in out)
    assert APP not in dh.docs(bus, "Info", (doc,), "(s)")[1]
    assert APP not in dh.ps(bus, "Lookup", ("devices", "camera"), "(ss)")[0]
    assert OTHER in dh.ps(bus, "Lookup", ("devices", "camera"), "(ss)")[0]


@pytest.mark.parametrize("which", ["limen", "reference"])
def test_page_follows_changes_made_elsewhere(bus, which):
    """While the page is open, another client changes the store (a portal keeps a new restore
    token, limen-permissions takes the file back): the page shows it without a click."""
    if which == "reference" and not (os.path.exists(REF_STORE) and os.path.exists(REF_DOCS)):
        pytest.skip("no reference permission store installed")
    start(bus, which)
    desktop_file(bus)
    f, doc = fill(bus)
    shots = kde_helpers.artifacts_dir()
    p = subprocess.Popen([DRIVER, APP, f"{shots}/kcm-permissions-{which}-live-before.png",
                          "wait:Screen sharing it may resume", f"gone:{f}",
                          f"shot:{shots}/kcm-permissions-{which}-live-after.png"],
                         env=driver_env(bus), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        lines = []
        while not lines or lines[-1] != "--\n":   # the page is shown, read from the store
            lines.append(p.stdout.readline())
            assert lines[-1], p.stderr.read()
        assert "Screen sharing it may resume" not in "".join(lines) and f in "".join(lines)
        payload = GLib.Variant("a{sv}", {"sources": GLib.Variant("as", ["window:w1"])})
        dh.ps(bus, "Set", ("screencast", True, "fedcba9876543210", {APP: ["yes"]},
                           GLib.Variant("(suv)", ("limen-kde", 1, payload))), "(sbsa{sas}v)")
        r = subprocess.run([os.path.join(limentest.BUILD_DIR, "kde-backend/kcm/limen-permissions"), "revoke", APP,
                            "documents"], env=bus.env, capture_output=True, text=True, timeout=60)
        assert r.returncode == 0, r.stderr
        out, err = p.communicate(timeout=60)
    finally:
        p.kill()
        p.wait()
    assert p.returncode == 0, err
    after = out.split("--\n")[0]
    assert "Screen sharing it may resume" in after and "token fedcba98…, 1 window" in after
    assert f not in after


def test_kcmshell_finds_the_module(bus):
    """kcmshell5 (and System Settings) find the module by its plugin id."""
    env = dict(bus.env, QT_QPA_PLATFORM="offscreen",
               QT_PLUGIN_PATH=os.path.join(limentest.BUILD_DIR, "kde-backend", "kcm"))
    r = subprocess.run(["kcmshell5", "--list"], env=env, capture_output=True, text=True, timeout=60)
    assert any(line.startswith("kcm_limen_permissions ") for line in r.stdout.splitlines()), r.stdout


MARKUP_APP = "org.example.Markup"


def test_what_apps_wrote_is_shown_as_text(bus):
    """Names, file names, shortcut descriptions and window titles come from apps: the page
    (and its confirmation, and the list's tool tips) shows them as the text they are, never
    as markup that could hide or restyle what an app holds; a name with a long unbroken word
    wraps inside the header."""
    start(bus, "limen")
    apps = os.path.join(bus.data_home, "applications")
    os.makedirs(apps, exist_ok=True)
    name = ('<b>Bold</b> <img src="/usr/share/icons/hicolor/48x48/apps/x.png"> <a href="https://x">Link</a> '
            + "W" * 80)
    dh.write(os.path.join(apps, MARKUP_APP + ".desktop"),
             f"[Desktop Entry]\nType=Application\nName={name}\nExec=true\n")
    f = os.path.join(bus.root, "<big><s>struck &amp; big.txt")   # no "/" in a file name
    dh.write(f, "x")
    doc = dh.add(bus, f)
    dh.docs(bus, "GrantPermissions", (doc, MARKUP_APP, ["read"]), "(ssas)")
    held = GLib.Variant("a(sss)", [("talk", "<i>Push</i> <br>to talk", "Ctrl+Alt+T")])
    dh.ps(bus, "Set", ("global-shortcuts", True, MARKUP_APP, {MARKUP_APP: [""]},
                       GLib.Variant("a{sv}", {"shortcuts": held})), "(sbsa{sas}v)")
    windows = GLib.Variant("a{s(ss)}", {"window:abc": ("org.kde.kate", "<h1>Big</h1> title")})
    payload = GLib.Variant("a{sv}", {"sources": GLib.Variant("as", ["window:abc"]), "windows": windows})
    dh.ps(bus, "Set", ("screencast", True, "0123456789abcdef", {MARKUP_APP: ["yes"]},
                       GLib.Variant("(suv)", ("limen-kde", 1, payload))), "(sbsa{sas}v)")
    # A host program may write any app id into the store; the list's tool tip shows it.
    odd_id = "<b>odd</b>"
    dh.ps(bus, "SetPermission", ("devices", True, "camera", odd_id, ["yes"]), "(sbssas)")

    env = driver_env(bus)
    path = os.path.join(kde_helpers.artifacts_dir(), "kcm-permissions-markup-en.png")
    r = subprocess.run([DRIVER, MARKUP_APP, path, "reset"], env=env, capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stdout + r.stderr
    out = r.stdout
    assert f"header: {name}\n" in out
    assert "overflow:" not in out, out
    assert f"{f} — " in out, out
    assert "<i>Push</i> <br>to talk: Ctrl+Alt+T" in out
    assert "“<h1>Big</h1> title”" in out
    assert f"tooltip: {odd_id}\n" in out and f"tooltip: {MARKUP_APP}\n" in out
    assert f"confirm: Take back every permission {name} holds?" in out
    assert MARKUP_APP not in dh.ps(bus, "Lookup", ("screencast", "0123456789abcdef"), "(ss)")[0]
