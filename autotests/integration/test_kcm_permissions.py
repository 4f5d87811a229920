"""The permissions page (kcm_limen_permissions) clicked through with QTest on Qt's
offscreen platform, against limen-documents and the reference's store: it lists the apps
by their desktop names, shows what one holds in words, and its switch, Revoke and "Reset
this app" change the store. Screenshots, English at 100% and German at 200%, go to
<build>/autotests/artifacts/kde/."""

import os
import subprocess

import pytest

import documents_helpers as dh
import kde_helpers
import limentest
from test_permissions_cli import APP, OTHER, REF_DOCS, REF_STORE, fill, start

DRIVER = os.path.join(limentest.BUILD_DIR, "autotests", "kcm-permissions-driver")
TOKEN = "0123456789abcdef"


def desktop_file(bus):
    apps = os.path.join(bus.data_home, "applications")
    os.makedirs(apps, exist_ok=True)
    dh.write(os.path.join(apps, APP + ".desktop"),
             "[Desktop Entry]\nType=Application\nName=Holder Notes\nName[de]=Halter-Notizen\n"
             "Icon=accessories-text-editor\nExec=true\n")


def drive(bus, shot, *actions, german=False):
    env = dict(bus.env, QT_QPA_PLATFORM="offscreen", QT_QPA_PLATFORMTHEME="kde", XDG_CURRENT_DESKTOP="KDE",
               LIMEN_LOCALEDIR=os.path.join(limentest.BUILD_DIR, "locale"),
               LANGUAGE="de" if german else "en", LC_ALL="C.UTF-8", LANG="C.UTF-8")
    if german:
        env["QT_SCALE_FACTOR"] = "2"
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
                "value:devices:camera=no", f"revoke:remote-desktop:{TOKEN}",
                f"shot:{kde_helpers.artifacts_dir()}/kcm-permissions-{which}-en-after.png")
    assert "header: Holder Notes" in out
    assert f"{f} — read and write, kept" in out
    before, after = out.split("--\n")[:2]
    assert "Remote control it may resume" in before and "Remote control it may resume" not in after
    assert dh.ps(bus, "Lookup", ("devices", "camera"), "(ss)")[0] == {APP: ["no"], OTHER: ["no"]}
    assert APP not in dh.ps(bus, "Lookup", ("remote-desktop", TOKEN), "(ss)")[0]

    out = drive(bus, f"kcm-permissions-{which}-de-200.png", f"revoke:documents:{doc}", "reset", german=True)
    assert "header: Halter-Notizen" in out
    assert f"{f} — Lesen und Schreiben, dauerhaft" in out and ": Datei oder Ordner" in out
    assert "File or folder" not in out and "kept" not in out
    assert APP not in dh.docs(bus, "Info", (doc,), "(s)")[1]
    assert APP not in dh.ps(bus, "Lookup", ("devices", "camera"), "(ss)")[0]
    assert OTHER in dh.ps(bus, "Lookup", ("devices", "camera"), "(ss)")[0]


def test_kcmshell_finds_the_module(bus):
    """kcmshell5 (and System Settings) find the module by its plugin id."""
    env = dict(bus.env, QT_QPA_PLATFORM="offscreen",
               QT_PLUGIN_PATH=os.path.join(limentest.BUILD_DIR, "kde-backend", "kcm"))
    r = subprocess.run(["kcmshell5", "--list"], env=env, capture_output=True, text=True, timeout=60)
    assert any(line.startswith("kcm_limen_permissions ") for line in r.stdout.splitlines()), r.stdout
