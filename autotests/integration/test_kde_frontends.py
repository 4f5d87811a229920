"""limen-kde behind the two frontends, end to end: our limen-portal and Debian's
xdg-desktop-portal 1.16 (with Debian's document portal, so a bwrap-sandboxed caller's
pick comes back as a document path)."""

import os
import subprocess

import pytest

import kde_helpers as kh
import limentest
from limentest import GLib

BREEZE_DARK = "[General]\nColorScheme=BreezeDark\n[Colors:Window]\nBackgroundNormal=32,35,38\n"
LIGHT = "[General]\nColorScheme=BreezeLight\n[Colors:Window]\nBackgroundNormal=239,240,241\n"


def start_limen_portal(bus, env=None):
    """limen-portal choosing limen-kde through kde-portals.conf (XDG_CURRENT_DESKTOP=KDE)."""
    import shutil
    shutil.copy(kh.portal_file_path(), os.path.join(bus.env["XDG_DESKTOP_PORTAL_DIR"], "limen.portal"))
    conf = os.path.join(bus.config_home, "xdg-desktop-portal")
    os.makedirs(conf, exist_ok=True)
    with open(os.path.join(conf, "kde-portals.conf"), "w") as f:
        f.write("[preferred]\ndefault=limen\n")
    e = {"XDG_CURRENT_DESKTOP": "KDE"}
    e.update(env or {})
    return bus.start_portal(env=e)


def unwrap(v):
    while isinstance(v, GLib.Variant):
        v = v.unpack()
    return v


def test_settings_behind_limen_portal(bus):
    kh.write_kdeglobals(bus, BREEZE_DARK)
    kh.start_kde(bus)
    start_limen_portal(bus)
    v = bus.call("org.freedesktop.portal.Settings", "ReadOne", ("org.freedesktop.appearance", "color-scheme"), "(ss)")
    assert unwrap(v[0]) == 1
    allv = bus.call("org.freedesktop.portal.Settings", "ReadAll", (["org.kde.kdeglobals.General"],), "(as)")[0]
    assert allv["org.kde.kdeglobals.General"]["ColorScheme"] == "BreezeDark"
    seen = []
    bus.conn.signal_subscribe("org.freedesktop.portal.Desktop", "org.freedesktop.portal.Settings", "SettingChanged",
                              limentest.PORTAL_PATH, None, 0, lambda *a: seen.append(a[5].unpack()))
    limentest.pump(0.2)
    kh.write_kdeglobals(bus, LIGHT)
    assert limentest.wait_until(lambda: any(s[0] == "org.freedesktop.appearance" and s[1] == "color-scheme"
                                            and unwrap(s[2]) == 2 for s in seen), 5), seen


def test_notification_version_2_behind_limen_portal(bus):
    """limen-kde takes version 2 notifications (icons and sounds as bytes), so limen-portal,
    which offers min(backend's version, 2), offers 2 in front of it."""
    kh.start_kde(bus)
    assert bus.get_property("org.freedesktop.impl.portal.Notification", "version",
                            dest="org.freedesktop.impl.portal.desktop.limen") == 2
    start_limen_portal(bus)
    assert limentest.wait_until(
        lambda: bus.get_property("org.freedesktop.portal.Notification", "version") == 2, 5)


def request_response(bus, iface, method, args, sig, token, conn=None):
    conn = conn or bus.conn
    sender = conn.get_unique_name()[1:].replace(".", "_")
    path = f"/org/freedesktop/portal/desktop/request/{sender}/{token}"
    got = []
    conn.signal_subscribe("org.freedesktop.portal.Desktop", "org.freedesktop.portal.Request", "Response",
                          path, None, 0, lambda *a: got.append(a[5].unpack()))
    bus.call(iface, method, args, sig, conn=conn)
    return got


def test_file_chooser_behind_limen_portal(bus, x):
    path = os.path.join(bus.home, "via-limen.txt")
    with open(path, "w") as f:
        f.write("x")
    kh.start_kde_x11(bus, x)
    start_limen_portal(bus)
    got = request_response(bus, "org.freedesktop.portal.FileChooser", "OpenFile",
                           ("", "Through limen-portal", {"handle_token": GLib.Variant("s", "lp1")}), "(ssa{sv})",
                           "lp1")
    wid = x.wait_window("Through limen-portal")
    x.focus(wid, 0.4)
    x.type_text(path)
    x.run("xdotool", "key", "Return")
    assert limentest.wait_until(lambda: got, 20)
    response, results = got[0]
    assert response == 0
    assert results["uris"] == ["file://" + path]


SANDBOX_CLIENT = r'''
import sys
from gi.repository import Gio, GLib
bus = Gio.bus_get_sync(Gio.BusType.SESSION, None)
sender = bus.get_unique_name()[1:].replace(".", "_")
path = "/org/freedesktop/portal/desktop/request/%s/sb1" % sender
loop = GLib.MainLoop()
out = {}
def on_response(conn, s, p, i, sig, params):
    out["r"] = params.unpack()
    loop.quit()
bus.signal_subscribe("org.freedesktop.portal.Desktop", "org.freedesktop.portal.Request", "Response", path,
                     None, 0, on_response)
bus.call_sync("org.freedesktop.portal.Desktop", "/org/freedesktop/portal/desktop",
              "org.freedesktop.portal.FileChooser", "OpenFile",
              GLib.Variant("(ssa{sv})", ("", "Sandboxed pick", {"handle_token": GLib.Variant("s", "sb1")})),
              None, 0, 30000, None)
GLib.timeout_add_seconds(40, loop.quit)
loop.run()
print(repr(out.get("r")))
'''


def test_sandboxed_caller_gets_document_path(bus, x):
    """Debian's frontend + document portal: the file a Flatpak app picked in our dialog is
    exported and handed back under $XDG_RUNTIME_DIR/doc."""
    if not os.path.exists("/dev/fuse"):
        pytest.skip("no /dev/fuse")
    secret = os.path.join(bus.home, "picked-by-sandbox.txt")
    with open(secret, "w") as f:
        f.write("for the app")
    bus.start(["/usr/libexec/xdg-permission-store", "--replace"], wait_name="org.freedesktop.impl.portal.PermissionStore")
    bus.start(["/usr/libexec/xdg-document-portal", "--replace"], wait_name="org.freedesktop.portal.Documents")
    kh.start_kde_x11(bus, x)
    kh.start_reference_frontend(bus)
    r, w = os.pipe()
    argv = limentest.bwrap_argv(bus) + ["--ro-bind-data", str(r), "/.flatpak-info",
                                        "/usr/bin/python3", "-c", SANDBOX_CLIENT]
    os.write(w, limentest.FLATPAK_INFO.format(app_id="org.example.Sandboxed").encode())
    os.close(w)
    proc = subprocess.Popen(argv, env={"PATH": "/usr/bin:/bin", "LANG": "C.UTF-8"}, pass_fds=(r,),
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    os.close(r)
    try:
        try:
            wid = x.wait_window("Sandboxed pick")
        except subprocess.TimeoutExpired:
            proc.kill()
            out, err = proc.communicate()
            pytest.fail(f"no dialog; client said: {out} {err}")
        x.focus(wid, 0.4)
        x.type_text(secret)
        x.run("xdotool", "key", "Return")
        out, err = proc.communicate(timeout=45)
    finally:
        if proc.poll() is None:
            proc.kill()
    result = eval(out.strip())  # repr of (response, results) from our own script
    assert result is not None, err
    response, results = result
    assert response == 0
    uri = results["uris"][0]
    doc_prefix = "file://" + os.path.join(bus.runtime_dir, "doc") + "/"
    assert uri.startswith(doc_prefix) and uri.endswith("/picked-by-sandbox.txt"), uri
    with open(uri[len("file://"):]) as f:
        assert f.read() == "for the app"


@pytest.mark.parametrize("frontend", ["reference", "limen"])
def test_caller_close_closes_dialog(bus, x, frontend):
    kde = kh.start_kde_x11(bus, x)
    if frontend == "reference":
        kh.start_reference_frontend(bus)
    else:
        start_limen_portal(bus)
    token = "cl1"
    request_response(bus, "org.freedesktop.portal.FileChooser", "OpenFile",
                     ("", "Closed by caller", {"handle_token": GLib.Variant("s", token)}), "(ssa{sv})", token)
    x.wait_window("Closed by caller")
    sender = bus.conn.get_unique_name()[1:].replace(".", "_")
    bus.call("org.freedesktop.portal.Request", "Close", None, None,
             path=f"/org/freedesktop/portal/desktop/request/{sender}/{token}")

    def gone():
        r = x.run("xdotool", "search", "--onlyvisible", "--name", "Closed by caller", check=False)
        return r.stdout.strip() == ""
    assert limentest.wait_until(gone, 10)
    assert kde.alive()


@pytest.mark.parametrize("frontend", ["reference", "limen"])
def test_inhibit_through_frontend(bus, frontend):
    import test_kde_services as svc
    svc.start_inhibit_mocks(bus)
    kh.start_kde(bus)
    if frontend == "reference":
        kh.start_reference_frontend(bus)
    else:
        start_limen_portal(bus)
    token = "inh1"
    got = request_response(bus, "org.freedesktop.portal.Inhibit", "Inhibit",
                           ("", 8, {"handle_token": GLib.Variant("s", token),
                                    "reason": GLib.Variant("s", "Presenting")}), "(sua{sv})", token)
    ss = "org.freedesktop.ScreenSaver"

    def calls(method):
        return [c for c in svc.mock_calls(bus, ss, "/org/freedesktop/ScreenSaver") if c[1] == method]
    assert limentest.wait_until(lambda: calls("Inhibit"), 10)
    assert calls("Inhibit")[0][2][1] == "Presenting"
    sender = bus.conn.get_unique_name()[1:].replace(".", "_")
    bus.call("org.freedesktop.portal.Request", "Close", None, None,
             path=f"/org/freedesktop/portal/desktop/request/{sender}/{token}")
    assert limentest.wait_until(lambda: calls("UnInhibit"), 10)


def test_notification_through_reference_frontend(bus):
    import test_kde_services as svc
    svc.install_notifyrc(bus)
    svc.start_mock(bus, "org.freedesktop.Notifications", "/org/freedesktop/Notifications",
                   "org.freedesktop.Notifications", template="notification_daemon",
                   params={"capabilities": "body actions"})
    kh.start_kde(bus)
    kh.start_reference_frontend(bus)
    bus.call("org.freedesktop.portal.Notification", "AddNotification",
             ("hello", {"title": GLib.Variant("s", "From the app"), "body": GLib.Variant("s", "via 1.16")}),
             "(sa{sv})")
    calls = limentest.wait_until(lambda: svc.notify_calls(bus), 10)
    assert calls and calls[-1][2][3] == "From the app"
