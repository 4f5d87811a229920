"""org.freedesktop.impl.portal.DynamicLauncher in limen-kde, end to end: limen-portal in front,
the launcher dialog on Xvfb driven with xdotool, callers that are a bwrap-sandboxed Flatpak app
and a host app (named through the host Registry); then the frontend's Install, GetDesktopEntry
and Launch of what the person accepted. Hostile impl calls get clear errors and limen-kde
keeps serving."""

import json
import os
import shutil
import subprocess
import time

import pytest

import kde_helpers as kh
import limentest
import request_helpers as rh
from limentest import GLib

DL = "org.freedesktop.portal.DynamicLauncher"
IMPL_DL = "DynamicLauncher"
SANDBOXED = "org.example.Sandboxed"
HOST = "org.example.HostTool"
ENTRY = "[Desktop Entry]\nType=Application\nName=Ignored\nExec=mytool --open %u\n"
TITLE = "Add Application"
TITLE_WEB = "Add Web Application"
TITLE_DE = "Anwendung hinzufügen"
TITLE_WEB_DE = "Webanwendung hinzufügen"


def make_png(bus, size=64, name="icon.png"):
    """An orange square with a blue disc: easy to see in a screenshot."""
    path = os.path.join(bus.root, name)
    r = size // 2
    subprocess.run(["convert", "-size", f"{size}x{size}", "xc:orange", "-fill", "blue",
                    "-draw", f"circle {r},{r} {r},{size // 8}", path], check=True)
    return path


def icon_variant(path):
    with open(path, "rb") as f:
        return GLib.Variant("(sv)", ("bytes", GLib.Variant("ay", f.read())))


def start_stack(bus, x, env=None):
    """limen-kde on the Xvfb @x and limen-portal choosing it (kde-portals.conf)."""
    e = {"LIMEN_LOCALEDIR": os.path.join(limentest.BUILD_DIR, "locale")}
    e.update(env or {})
    kde = kh.start_kde_x11(bus, x, **e)
    shutil.copy(kh.portal_file_path(), os.path.join(bus.env["XDG_DESKTOP_PORTAL_DIR"], "limen.portal"))
    conf = os.path.join(bus.config_home, "xdg-desktop-portal")
    os.makedirs(conf, exist_ok=True)
    with open(os.path.join(conf, "kde-portals.conf"), "w") as f:
        f.write("[preferred]\ndefault=limen\n")
    bus.start_portal(env={"XDG_CURRENT_DESKTOP": "KDE"})
    return kde


def host_client(bus, app_id=HOST):
    client = rh.Client(bus)
    bus.install_app(app_id)
    bus.call("org.freedesktop.host.portal.Registry", "Register", (app_id, {}), "(sa{sv})", conn=client.conn)
    return client


# A Flatpak app in bwrap: PrepareInstall, then (response 0) Install with the token and
# GetDesktopEntry; prints one JSON line.
SANDBOX_SCRIPT = r'''
import json, sys
from gi.repository import Gio, GLib
name, icon_path, did, entry, opts_text = sys.argv[1:6]
bus = Gio.bus_get_sync(Gio.BusType.SESSION, None)
def call(method, sig, args, rsig=None):
    return bus.call_sync("org.freedesktop.portal.Desktop", "/org/freedesktop/portal/desktop",
                         "org.freedesktop.portal.DynamicLauncher", method, GLib.Variant(sig, args),
                         GLib.VariantType(rsig) if rsig else None, 0, 60000, None).unpack()
sender = bus.get_unique_name()[1:].replace(".", "_")
path = "/org/freedesktop/portal/desktop/request/%s/dl1" % sender
loop = GLib.MainLoop()
out = {}
def on_response(c, s, p, i, sig, params):
    out["r"] = params.unpack()
    loop.quit()
bus.signal_subscribe(None, "org.freedesktop.portal.Request", "Response", path, None, 0, on_response)
with open(icon_path, "rb") as f:
    icon = GLib.Variant("(sv)", ("bytes", GLib.Variant("ay", f.read())))
options = GLib.Variant.parse(GLib.VariantType("a{sv}"), opts_text, None, None)
opts = {k: options.lookup_value(k, None) for k in options.keys()}
opts["handle_token"] = GLib.Variant("s", "dl1")
call("PrepareInstall", "(ssva{sv})", ("", name, icon, opts))
GLib.timeout_add_seconds(50, loop.quit)
loop.run()
res = {"response": None}
if "r" in out:
    response, results = out["r"]
    res = {"response": response, "name": results.get("name"), "has_token": "token" in results}
    if response == 0:
        call("Install", "(sssa{sv})", (results["token"], did, entry, {}))
        res["entry"] = call("GetDesktopEntry", "(s)", (did,), "(s)")[0]
print(json.dumps(res))
'''


class SandboxedPrepare:
    """SANDBOX_SCRIPT running as Flatpak app SANDBOXED while the test answers the dialog."""

    def __init__(self, bus, name, icon_path, did, options="@a{sv} {}"):
        r, w = os.pipe()
        here = os.path.dirname(os.path.abspath(__file__))
        argv = limentest.bwrap_argv(bus, ro_binds=(here, os.path.dirname(icon_path)))
        argv += ["--ro-bind-data", str(r), "/.flatpak-info", "/usr/bin/python3", "-c", SANDBOX_SCRIPT,
                 name, icon_path, did, ENTRY, options]
        os.write(w, limentest.FLATPAK_INFO.format(app_id=SANDBOXED).encode())
        os.close(w)
        self.proc = subprocess.Popen(argv, env={"PATH": "/usr/bin:/bin", "LANG": "C.UTF-8"}, pass_fds=(r,),
                                     stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        os.close(r)

    def result(self, timeout=60):
        out, err = self.proc.communicate(timeout=timeout)
        lines = out.strip().splitlines()
        assert lines, f"sandboxed client printed nothing ({self.proc.returncode}): {err}"
        return json.loads(lines[-1])

    def kill(self):
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()


def rename_and_add(x, title, new_name, shot=None):
    """In the launcher dialog titled @title: replace the name, then press Add (Alt+A)."""
    wid = x.wait_window(title)
    if shot:
        time.sleep(0.6)
        x.screenshot(shot)
    x.focus(wid, 0.4)
    x.run("xdotool", "key", "ctrl+a")
    x.type_text(new_name)
    time.sleep(0.2)
    x.run("xdotool", "key", "alt+a")


def test_sandboxed_app_renames_and_installs(bus, x):
    start_stack(bus, x)
    icon = make_png(bus)
    did = SANDBOXED + ".mytool.desktop"
    client = SandboxedPrepare(bus, "My Tool", icon, did)
    try:
        rename_and_add(x, TITLE, "Renamed Tool", shot="dynamic-launcher-sandboxed-en-1x.png")
        res = client.result()
    finally:
        client.kill()
    assert res["response"] == 0 and res["name"] == "Renamed Tool" and res["has_token"]
    assert "Name=Renamed Tool" in res["entry"]
    assert f"Exec=flatpak run --command=mytool {SANDBOXED} --open %u" in res["entry"]
    link = os.path.join(bus.data_home, "applications", did)
    assert os.path.islink(link)
    with open(link) as f:
        assert "Name=Renamed Tool" in f.read()


def test_behind_the_reference_frontend(bus, x):
    """Debian's xdg-desktop-portal 1.16 in front of limen-kde: it takes the dialog's name
    (and the icon handed back) for the launcher it writes."""
    kh.start_kde_x11(bus, x)
    kh.start_reference_frontend(bus)
    # The reference links the launcher into applications/ without creating that folder,
    # which a real home has.
    os.makedirs(os.path.join(bus.data_home, "applications"), exist_ok=True)
    did = SANDBOXED + ".reference.desktop"
    client = SandboxedPrepare(bus, "Via Reference", make_png(bus), did)
    try:
        rename_and_add(x, TITLE, "Named in KDE")
        res = client.result()
    finally:
        client.kill()
    assert res["response"] == 0 and res["name"] == "Named in KDE" and res["has_token"]
    assert "Name=Named in KDE" in res["entry"]


def test_host_app_install_and_launch(bus, x):
    start_stack(bus, x)
    client = host_client(bus)
    marker = os.path.join(bus.root, "launched")
    handle, pending = client.start(DL, "PrepareInstall", ("", "Host Tool", icon_variant(make_png(bus, 128)), {}),
                                   "(ssva{sv})")
    rename_and_add(x, TITLE, "Tool from the Host")
    response, results = pending.wait(30)
    assert response == 0 and results["name"] == "Tool from the Host"
    did = HOST + ".tool.desktop"
    entry = f"[Desktop Entry]\nType=Application\nName=x\nExec=/usr/bin/touch {marker}\n"
    bus.call(DL, "Install", (results["token"], did, entry, {}), "(sssa{sv})", conn=client.conn)
    text = bus.call(DL, "GetDesktopEntry", (did,), "(s)", conn=client.conn)[0]
    assert "Name=Tool from the Host" in text and f"Exec=/usr/bin/touch {marker}" in text
    _, fmt, size = bus.call(DL, "GetIcon", (did,), "(s)", conn=client.conn)
    assert (fmt, size) == ("png", 128)
    bus.call(DL, "Launch", (did, {}), "(sa{sv})", conn=client.conn)
    assert limentest.wait_until(lambda: os.path.exists(marker), 10)


def test_cancel_and_close(bus, x):
    start_stack(bus, x)
    client = host_client(bus)
    icon = icon_variant(make_png(bus))
    handle, pending = client.start(DL, "PrepareInstall", ("", "Cancelled", icon, {}), "(ssva{sv})")
    wid = x.wait_window(TITLE)
    x.press(wid, "Escape")
    assert pending.wait(20) == (1, {})
    # Close from the app: the frontend closes the impl request and the dialog goes away.
    handle, pending = client.start(DL, "PrepareInstall", ("", "Closed", icon, {}), "(ssva{sv})")
    x.wait_window(TITLE)
    pending.close_request(bus)

    def gone():
        r = x.run("xdotool", "search", "--onlyvisible", "--name", TITLE, check=False)
        return r.returncode != 0 or not r.stdout.split()
    assert limentest.wait_until(gone, 10)


def test_name_not_editable_and_empty_name_cannot_be_added(bus, x):
    kh.start_kde_x11(bus, x)
    icon = icon_variant(make_png(bus))
    handle = kh.new_handle(bus)
    call = kh.AsyncCall(bus, IMPL_DL, "PrepareInstall",
                        (handle, SANDBOXED, "", "Fixed Name", icon, {"editable_name": GLib.Variant("b", False)}),
                        "(osssva{sv})")
    rename_and_add(x, TITLE, "Changed")
    response, results = call.wait()
    assert response == 0 and results["name"] == "Fixed Name"
    assert results["icon"] == icon.unpack()
    # An emptied name leaves Add disabled: Alt+A does nothing, Escape cancels.
    handle = kh.new_handle(bus)
    call = kh.AsyncCall(bus, IMPL_DL, "PrepareInstall", (handle, SANDBOXED, "", "Name", icon, {}), "(osssva{sv})")
    wid = x.wait_window(TITLE)
    x.press(wid, "ctrl+a", "BackSpace", "alt+a")
    time.sleep(1.0)
    assert not call.done
    x.press(wid, "Escape")
    assert call.wait()[0] == 1


SVG = (b'<svg xmlns="http://www.w3.org/2000/svg" width="48" height="48" viewBox="0 0 48 48">'
       b'<rect width="48" height="48" fill="orange"/><circle cx="24" cy="24" r="18" fill="blue"/></svg>')


@pytest.mark.parametrize("fmt", ["png", "jpeg", "svg"])
def test_icon_formats(bus, x, fmt):
    """The three formats the frontends accept decode in the dialog (a raster one up to 512 px)."""
    kh.start_kde_x11(bus, x)
    if fmt == "svg":
        data = SVG
    else:
        path = make_png(bus, 512)
        if fmt == "jpeg":
            subprocess.run(["convert", path, path + ".jpg"], check=True)
            path += ".jpg"
        with open(path, "rb") as f:
            data = f.read()
    icon = GLib.Variant("(sv)", ("bytes", GLib.Variant("ay", data)))
    call = kh.AsyncCall(bus, IMPL_DL, "PrepareInstall", (kh.new_handle(bus), SANDBOXED, "", fmt, icon, {}),
                        "(osssva{sv})")
    wid = x.wait_window(TITLE)
    x.press(wid, "alt+a")
    response, results = call.wait()
    assert response == 0 and results["name"] == fmt and results["icon"] == icon.unpack()


def test_request_install_token_policy(bus, x):
    start_stack(bus, x)
    for app_id, expected in [("org.kde.discover", 0), ("org.gnome.Software", 0), ("org.gnome.SoftwareDevel", 0),
                             ("org.example.App", 2), ("", 2), ("org.kde.discover.evil", 2)]:
        assert kh.call_impl(bus, IMPL_DL, "RequestInstallToken", (app_id, {}), "(sa{sv})") == (expected,), app_id
    assert bus.get_property(kh.IMPL + IMPL_DL, "SupportedLauncherTypes", dest=kh.KDE_NAME) == 3
    assert bus.get_property(kh.IMPL + IMPL_DL, "version", dest=kh.KDE_NAME) == 1
    icon = icon_variant(make_png(bus))
    # A software centre on the host gets a token without a dialog, and installs with it.
    discover = host_client(bus, "org.kde.discover")
    token = bus.call(DL, "RequestInstallToken", ("Some App", icon, {}), "(sva{sv})", conn=discover.conn)[0]
    did = "org.kde.discover.someapp.desktop"
    bus.call(DL, "Install", (token, did, ENTRY, {}), "(sssa{sv})", conn=discover.conn)
    assert "Name=Some App" in bus.call(DL, "GetDesktopEntry", (did,), "(s)", conn=discover.conn)[0]
    # Any other app is refused.
    other = host_client(bus, HOST)
    with pytest.raises(GLib.Error) as e:
        bus.call(DL, "RequestInstallToken", ("T", icon, {}), "(sva{sv})", conn=other.conn)
    assert rh.error_name(e) == "org.freedesktop.portal.Error.NotAllowed"


def test_webapp_dialog_shows_address(bus, x):
    start_stack(bus, x)
    client = host_client(bus)
    opts = {"launcher_type": GLib.Variant("u", 2), "target": GLib.Variant("s", "https://example.org/app")}
    handle, pending = client.start(DL, "PrepareInstall", ("", "Example Web App", icon_variant(make_png(bus)), opts),
                                   "(ssva{sv})")
    rename_and_add(x, TITLE_WEB, "Example", shot="dynamic-launcher-webapp-en-1x.png")
    assert pending.wait(30)[0] == 0


@pytest.mark.parametrize("language,scale", [("en", "1"), ("de", "2")], ids=["en-1x", "de-2x"])
def test_dialog_screenshots(bus, language, scale):
    """The dialog as a person sees it, at English 100% and German 200%: a long name, a long
    address, the icon; the German titles prove the catalog is used."""
    x = kh.Xvfb(size="1600x1000x24")
    try:
        env = {"QT_SCALE_FACTOR": scale, "LANGUAGE": "de" if language == "de" else "",
               "LIMEN_LOCALEDIR": os.path.join(limentest.BUILD_DIR, "locale")}
        kh.start_kde_x11(bus, x, **env)
        icon = icon_variant(make_png(bus, 256))
        for webapp, title in [(False, TITLE_DE if language == "de" else TITLE),
                              (True, TITLE_WEB_DE if language == "de" else TITLE_WEB)]:
            opts = {"launcher_type": GLib.Variant("u", 2 if webapp else 1)}
            if webapp:
                opts["target"] = GLib.Variant("s", "https://web.example.org/a/rather/long/path/to/the/"
                                                   "application/index.html?with=query&and=more")
            handle = kh.new_handle(bus)
            call = kh.AsyncCall(bus, IMPL_DL, "PrepareInstall",
                                (handle, "org.example.Sandboxed", "", "Photo Editor for Long Evenings", icon, opts),
                                "(osssva{sv})")
            x.wait_window(title)
            time.sleep(1.0)
            path = x.screenshot(f"dynamic-launcher-{'webapp' if webapp else 'app'}-{language}-{scale}x.png")
            assert os.path.getsize(path) > 1000
            kh.close_request(bus, handle)
            assert call.wait()[0] == 2
    finally:
        x.close()


BIG = "B" * 257


@pytest.mark.parametrize("name,icon,options,needle", [
    (BIG, None, {}, "name"),
    ("two\nlines", None, {}, "name"),
    ("", None, {}, "name"),
    ("ok", GLib.Variant("(sv)", ("themed", GLib.Variant("as", ["x"]))), {}, "icon_v"),
    ("ok", GLib.Variant("s", "not an icon"), {}, "icon_v"),
    ("ok", GLib.Variant("(sv)", ("bytes", GLib.Variant("ay", b"definitely not an image"))), {}, "icon_v"),
    ("ok", GLib.Variant("(sv)", ("bytes", GLib.Variant("ay", b"\x89PNG\r\n\x1a\n" + b"\0" * 64))), {}, "icon_v"),
    ("ok", None, {"modal": GLib.Variant("s", "yes")}, "modal"),
    ("ok", None, {"launcher_type": GLib.Variant("u", 7)}, "launcher_type"),
    ("ok", None, {"target": GLib.Variant("s", "ftp://example.org")}, "target"),
    ("ok", None, {"editable_name": GLib.Variant("i", 1)}, "editable_name"),
], ids=["long-name", "newline", "empty-name", "themed-icon", "string-icon", "garbage-bytes", "broken-png",
        "modal-type", "launcher-type", "target-scheme", "editable-type"])
def test_hostile_prepare_install(bus, x, name, icon, options, needle):
    kde = kh.start_kde_x11(bus, x)
    good = icon_variant(make_png(bus))
    with pytest.raises(GLib.Error) as e:
        kh.call_impl(bus, IMPL_DL, "PrepareInstall",
                     (kh.new_handle(bus), SANDBOXED, "", name, icon if icon is not None else good, options),
                     "(osssva{sv})")
    assert limentest.dbus_error_name(e.value) == "org.freedesktop.portal.Error.InvalidArgument"
    assert needle in e.value.message
    # Still serving: a good call shows the dialog.
    handle = kh.new_handle(bus)
    call = kh.AsyncCall(bus, IMPL_DL, "PrepareInstall", (handle, SANDBOXED, "", "Fine", good, {}), "(osssva{sv})")
    x.wait_window(TITLE)
    kh.close_request(bus, handle)
    assert call.wait()[0] == 2
    assert kde.alive()


def test_hostile_oversized_icons(bus, x):
    kde = kh.start_kde_x11(bus, x)
    huge = make_png(bus, 1024, "huge.png")
    for icon in [icon_variant(huge), GLib.Variant("(sv)", ("bytes", GLib.Variant("ay", b"\0" * (4 * 1024 * 1024 + 1))))]:
        with pytest.raises(GLib.Error) as e:
            kh.call_impl(bus, IMPL_DL, "PrepareInstall", (kh.new_handle(bus), SANDBOXED, "", "Big", icon, {}),
                         "(osssva{sv})", timeout=20000)
        assert limentest.dbus_error_name(e.value) == "org.freedesktop.portal.Error.InvalidArgument"
    with pytest.raises(GLib.Error) as e:
        kh.call_impl(bus, IMPL_DL, "PrepareInstall", ("/not/a/request", SANDBOXED, "", "x", icon_variant(huge), {}),
                     "(osssva{sv})")
    assert limentest.dbus_error_name(e.value) == "org.freedesktop.portal.Error.InvalidArgument"
    with pytest.raises(GLib.Error) as e:
        kh.call_impl(bus, IMPL_DL, "RequestInstallToken", ("org.kde.discover", {"launcher_type": GLib.Variant("s", "1")}),
                     "(sa{sv})")
    assert limentest.dbus_error_name(e.value) == "org.freedesktop.portal.Error.InvalidArgument"
    assert kh.call_impl(bus, IMPL_DL, "RequestInstallToken", ("org.kde.discover", {}), "(sa{sv})") == (0,)
    assert kde.alive()


# ---- the KDE menu ---------------------------------------------------------------------

def start_menu_probe(bus, desktop_id, seconds):
    """sycoca-probe: a KService cache listener like Plasma's menu, on the test's XDG dirs;
    returns once it has opened the cache (without the launcher)."""
    proc = subprocess.Popen([os.path.join(limentest.BUILD_DIR, "autotests", "sycoca-probe"), desktop_id,
                             str(seconds)], env=bus.env, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    first = proc.stdout.readline()
    assert first.strip() == "start: missing", first
    return proc


def kde_log(bus):
    logs = [os.path.join(bus.logs, f) for f in os.listdir(bus.logs) if f.startswith("limen-kde")]
    return "".join(open(p, errors="replace").read() for p in logs)


def kde_log_tail(bus):
    """The end of limen-kde's log, for a failure message."""
    return kde_log(bus)[-3000:]


def install_as_discover(bus, did):
    discover = host_client(bus, "org.kde.discover")
    icon = icon_variant(make_png(bus))
    token = bus.call(DL, "RequestInstallToken", ("Menu Entry", icon, {}), "(sva{sv})", conn=discover.conn)[0]
    bus.call(DL, "Install", (token, did, ENTRY, {}), "(sssa{sv})", conn=discover.conn)


def recording_kbuildsycoca(bus):
    """A kbuildsycoca5 first on limen-kde's PATH that notes each run in a file, then runs the
    real one. KService readers rebuild the cache themselves when they see a changed folder
    (any process querying it may), so only this file tells whether limen-kde ran it.
    Returns (environment for limen-kde, path of the record)."""
    real = shutil.which("kbuildsycoca5")
    assert real, "kbuildsycoca5 (Debian: libkf5service-bin) is needed"
    wrap = os.path.join(bus.root, "wrapbin")
    os.makedirs(wrap, exist_ok=True)
    record = os.path.join(bus.root, "kbuildsycoca5.runs")
    script = os.path.join(wrap, "kbuildsycoca5")
    with open(script, "w") as f:
        f.write(f"#!/bin/sh\necho run >> '{record}'\nexec '{real}' \"$@\"\n")
    os.chmod(script, 0o755)
    return {"PATH": wrap + os.pathsep + bus.env.get("PATH", os.environ["PATH"])}, record


def test_installed_launcher_reaches_a_running_menu(bus, x):
    """Without kded5, limen-kde rebuilds KService's cache after an approved install, so a
    running menu hears databaseChanged with the launcher in it."""
    env, record = recording_kbuildsycoca(bus)
    start_stack(bus, x, env)
    did = "org.kde.discover.menuentry.desktop"
    probe = start_menu_probe(bus, did, 30)
    try:
        install_as_discover(bus, did)
        out, _ = probe.communicate(timeout=40)
    finally:
        if probe.poll() is None:
            probe.kill()
            probe.wait()
    assert probe.returncode == 0 and "changed: Menu Entry" in out, out + kde_log_tail(bus)
    assert limentest.wait_until(lambda: os.path.exists(record), timeout=10), kde_log_tail(bus)


def test_menu_refresh_left_to_kded(bus, x):
    """With kded5 on the bus, its own folder watch rebuilds the cache (kded5(8)): limen-kde
    sees the new launcher and leaves the rebuild to kded5 instead of running kbuildsycoca5."""
    owner = bus.new_connection()
    owner.call_sync("org.freedesktop.DBus", "/org/freedesktop/DBus", "org.freedesktop.DBus", "RequestName",
                    GLib.Variant("(su)", ("org.kde.kded5", 4)), None, 0, 5000, None)
    env, record = recording_kbuildsycoca(bus)
    start_stack(bus, x, env)
    install_as_discover(bus, "org.kde.discover.leftalone.desktop")
    assert limentest.wait_until(lambda: "kded5 rebuilds KService's cache itself" in kde_log(bus),
                                timeout=15), kde_log_tail(bus)
    assert not os.path.exists(record), kde_log_tail(bus)
