"""limen-kde Wallpaper (preview dialog, Plasma's scripting D-Bus API mocked with
dbusmock, the lock screen's kscreenlockerrc, a clear failure without Plasma) and
Background (NotifyBackground dialog answered with xdotool, EnableAutostart's .desktop
file, GetAppState from kwin_x11's window list). Screenshots land in
<build>/autotests/artifacts/kde/."""

import configparser
import os
import shutil
import time

import pytest

import kde_helpers as kh
import limentest
from limentest import GLib


@pytest.fixture
def kde(bus, x):
    return kh.start_kde_x11(bus, x)


def plasma_mock(bus):
    bus.start([limentest.python_exe(), "-m", "dbusmock", "org.kde.plasmashell", "/PlasmaShell", "org.kde.PlasmaShell"],
              wait_name="org.kde.plasmashell")
    bus.call("org.freedesktop.DBus.Mock", "AddMethod", ("org.kde.PlasmaShell", "evaluateScript", "s", "", ""),
             "(sssss)", dest="org.kde.plasmashell", path="/PlasmaShell")


def plasma_scripts(bus):
    calls = bus.call("org.freedesktop.DBus.Mock", "GetMethodCalls", ("evaluateScript",), "(s)",
                     dest="org.kde.plasmashell", path="/PlasmaShell")[0]
    return [args[0] for _, args in calls]


def picture(bus, name="wall paper's.png"):
    path = os.path.join(bus.home, name)
    kh.subprocess.run(["convert", "-size", "320x200", "gradient:orange-purple", path], check=True)
    return path


def set_wallpaper(bus, uri, options):
    handle = kh.new_handle(bus)
    return handle, kh.AsyncCall(bus, "Wallpaper", "SetWallpaperURI", (handle, "org.example.App", "", uri, options),
                                "(osssa{sv})")


def lockscreen_image(bus):
    cp = configparser.RawConfigParser(strict=False)
    cp.optionxform = str
    cp.read(os.path.join(bus.config_home, "kscreenlockerrc"))
    return cp.get("Greeter][Wallpaper][org.kde.image][General", "Image", fallback=None)


def test_wallpaper_with_preview_both(bus, x, kde):
    plasma_mock(bus)
    path = picture(bus)
    uri = GLib.filename_to_uri(path)
    _, call = set_wallpaper(bus, uri, {"show-preview": GLib.Variant("b", True), "set-on": GLib.Variant("s", "both")})
    x.answer("Set Wallpaper", "Return", shot="wallpaper-preview.png")
    assert call.wait(20)[0] == 0, kde.output()
    scripts = plasma_scripts(bus)
    assert len(scripts) == 1
    assert "org.kde.image" in scripts[0] and f'"{uri}"' in scripts[0]
    assert lockscreen_image(bus) == uri


def test_wallpaper_lockscreen_only_needs_no_plasma(bus, x, kde):
    uri = GLib.filename_to_uri(picture(bus, "lock.png"))
    _, call = set_wallpaper(bus, uri, {"set-on": GLib.Variant("s", "lockscreen")})
    assert call.wait(20)[0] == 0
    assert lockscreen_image(bus) == uri


def test_wallpaper_without_plasma_fails_clearly(bus, x, kde):
    uri = GLib.filename_to_uri(picture(bus, "bg.png"))
    _, call = set_wallpaper(bus, uri, {"set-on": GLib.Variant("s", "background")})
    assert call.wait(20)[0] == 2
    assert "Plasma's scripting interface failed" in kde.output()


def test_wallpaper_cancel_and_bad_input(bus, x, kde):
    plasma_mock(bus)
    uri = GLib.filename_to_uri(picture(bus, "c.png"))
    _, call = set_wallpaper(bus, uri, {"show-preview": GLib.Variant("b", True)})
    x.answer("Set Wallpaper", "Escape")
    assert call.wait(20)[0] == 1
    assert plasma_scripts(bus) == [] and lockscreen_image(bus) is None
    for u, opts, err in (("https://example.com/a.png", {}, "InvalidArgument"),
                         (uri, {"set-on": GLib.Variant("s", "ceiling")}, "InvalidArgument"),
                         (uri, {"show-preview": GLib.Variant("s", "yes")}, "InvalidArgument"),
                         ("file:///nonexistent/x.png", {}, "NotFound")):
        with pytest.raises(GLib.Error) as e:
            set_wallpaper(bus, u, opts)[1].wait(10)
        assert err in str(e.value)
    assert kde.alive()


def notify(bus, name="Example"):
    handle = kh.new_handle(bus)
    return handle, kh.AsyncCall(bus, "Background", "NotifyBackground", (handle, "org.example.App", name), "(oss)")


@pytest.mark.parametrize("button,expected", [("Forbid", 0), ("Allow", 1), ("Return", 2), ("Escape", 2)])
def test_notify_background(bus, x, kde, button, expected):
    _, call = notify(bus, "Example Player")
    wid = x.wait_window("Background Activity")
    time.sleep(0.4)
    if button == "Return":
        x.screenshot("background-dialog.png")
    # Alt+mnemonic for the buttons: &Forbid / &Allow.
    x.press(wid, button if button in ("Return", "Escape") else "alt+" + button[0].lower())
    response, results = call.wait(20)
    assert response == 0 and results["result"] == expected


def test_notify_background_close(bus, x, kde):
    handle, call = notify(bus)
    x.wait_window("Background Activity")
    kh.close_request(bus, handle)
    assert call.wait(10)[0] == 2
    assert kde.alive()


def test_enable_autostart(bus):
    kde = kh.start_kde(bus)
    r = kh.call_impl(bus, "Background", "EnableAutostart",
                     ("org.example.App", True, ["flatpak", "run", "org.example.App", "--minimized", "a b"], 1),
                     "(sbasu)")
    assert r == (True,)
    path = os.path.join(bus.config_home, "autostart", "org.example.App.desktop")
    cp = configparser.RawConfigParser()
    cp.optionxform = str
    cp.read(path)
    entry = cp["Desktop Entry"]
    assert entry["Type"] == "Application"
    assert entry["Exec"] == "flatpak run org.example.App --minimized 'a b'"
    assert entry["DBusActivatable"] == "true" and entry["X-Flatpak"] == "org.example.App"
    assert kh.call_impl(bus, "Background", "EnableAutostart", ("org.example.App", False, [], 0), "(sbasu)") == (False,)
    assert not os.path.exists(path)
    for app_id, cmd in (("../evil", ["x"]), ("org.example.App", []), ("org.example.App", ["x %f"])):
        with pytest.raises(GLib.Error) as e:
            kh.call_impl(bus, "Background", "EnableAutostart", (app_id, True, cmd, 0), "(sbasu)")
        assert "InvalidArgument" in str(e.value)
    assert not os.listdir(os.path.join(bus.config_home, "autostart"))
    assert kde.alive()


def test_get_app_state(bus, x):
    if not shutil.which("kwin_x11"):
        pytest.skip("kwin-x11 is not installed")
    kh.start_kwin(bus, x)
    kde = kh.start_kde_x11(bus, x)
    path = picture(bus, "w.png")
    windows = []
    for cls, title in (("org.example.Front", "limen-front"), ("org.example.Back", "limen-back")):
        bus.start(["display", "-title", title, path], env=x.env())
        wid = x.wait_window(title)
        x.run("xdotool", "set_window", "--class", cls, str(wid))
        windows.append(wid)
    x.run("xdotool", "windowactivate", "--sync", str(windows[0]), check=False)
    time.sleep(0.5)
    apps = kh.call_impl(bus, "Background", "GetAppState", None, None)[0]
    assert apps.get("org.example.Front") == 2, (apps, kde.output())
    assert apps.get("org.example.Back") == 1
    # From the first GetAppState on, window changes are signalled.
    seen = []
    bus.conn.signal_subscribe(kh.KDE_NAME, kh.IMPL + "Background", "RunningApplicationsChanged", kh.PATH, None, 0,
                              lambda *a: seen.append(1))
    limentest.pump(0.5)
    seen.clear()
    x.run("xdotool", "windowactivate", "--sync", str(windows[1]), check=False)
    assert limentest.wait_until(lambda: seen, 10)
    apps = kh.call_impl(bus, "Background", "GetAppState", None, None)[0]
    assert apps.get("org.example.Back") == 2 and apps.get("org.example.Front") == 1


def test_get_app_state_without_display(bus):
    kh.start_kde(bus, env={"DISPLAY": "", "WAYLAND_DISPLAY": ""})
    assert kh.call_impl(bus, "Background", "GetAppState", None, None) == ({},)
