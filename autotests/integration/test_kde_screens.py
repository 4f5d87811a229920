"""Screenshots of every limen-kde dialog under Xvfb, in English at 100% and in German at
200%, kept in <build>/autotests/artifacts/kde/. German window titles are checked, so a
missing catalog fails the test; the images are for people to look at."""

import os
import subprocess
import time

import pytest

import kde_helpers as kh
import limentest
from limentest import GLib

CASES = [("en", "1", "C.UTF-8", ""), ("de", "2", "C.UTF-8", "de")]


@pytest.fixture(params=CASES, ids=lambda c: f"{c[0]}-{c[1]}x")
def setup(request, bus):
    name, scale, lang, language = request.param
    x = kh.Xvfb(size="1600x1000x24")
    env = dict(x.env())
    env.update({"QT_QPA_PLATFORM": "xcb", "QT_SCALE_FACTOR": scale, "LANGUAGE": language,
                "LIMEN_LOCALEDIR": os.path.join(limentest.BUILD_DIR, "locale")})
    # LC_ALL stays C.UTF-8 (no de_DE locale is generated here); gettext honours LANGUAGE
    # in C.UTF-8, which is all KI18n needs.
    kh.start_kde(bus, env=env)
    apps = os.path.join(bus.data_home, "applications")
    os.makedirs(apps)
    for app, title in (("org.example.Viewer", "Example Viewer"), ("org.example.Editor", "Example Editor")):
        with open(os.path.join(apps, app + ".desktop"), "w") as f:
            f.write(f"[Desktop Entry]\nType=Application\nName={title}\nExec=/bin/true\nIcon=text-x-generic\n")
    yield name + "-" + scale + "x", x, language
    x.close()


def shoot(bus, x, tag, title, iface, method, args, sig):
    handle = kh.new_handle(bus)
    call = kh.AsyncCall(bus, iface, method, (handle,) + tuple(args), sig)
    x.wait_window(title)
    time.sleep(0.8)
    path = x.screenshot(f"{tag}-{method.lower()}.png")
    kh.close_request(bus, handle)
    assert call.wait()[0] == 2
    assert os.path.getsize(path) > 1000
    return path


def test_screenshots(bus, setup):
    tag, x, language = setup
    de = language == "de"
    shoot(bus, x, tag, "Datei laden" if de else "Open a file", "FileChooser", "OpenFile",
          ("org.example.App", "", "Datei laden" if de else "Open a file",
           {"filters": GLib.Variant("a(sa(us))", [("Text", [(0, "*.txt")])]),
            "choices": GLib.Variant("a(ssa(ss)s)", [("ro", "Read only", [], "false")])}), "(osssa{sv})")
    shoot(bus, x, tag, "Save as" if not de else "Speichern unter", "FileChooser", "SaveFiles",
          ("org.example.App", "", "Save as" if not de else "Speichern unter",
           {"files": GLib.Variant("aay", [b"a.txt\0"])}), "(osssa{sv})")
    shoot(bus, x, tag, "Use the camera?", "Access", "AccessDialog",
          ("org.example.App", "", "Use the camera?", "Example wants to take a picture",
           "The app will see what your camera sees.", {}), "(osssssa{sv})")
    # Titles written by us: these must be translated.
    shoot(bus, x, tag, "ffnen mit" if de else "Open With", "AppChooser", "ChooseApplication",
          ("org.example.App", "", ["org.example.Viewer", "org.example.Editor"],
           {"content_type": GLib.Variant("s", "text/plain")}), "(ossasa{sv})")
    shoot(bus, x, tag, "Ihre Informationen teilen" if de else "Share Your Information", "Account",
          "GetUserInformation", ("org.example.App", "", {"reason": GLib.Variant("s", "To sign comments")}),
          "(ossa{sv})")
    # Part 2: screenshot, background, wallpaper and print dialogs.
    shoot(bus, x, tag, "Bildschirmfoto" if de else "Screenshot", "Screenshot", "Screenshot",
          ("org.example.App", "", {"interactive": GLib.Variant("b", True)}), "(ossa{sv})")
    shoot(bus, x, tag, "Hintergrundaktivit" if de else "Background Activity", "Background", "NotifyBackground",
          ("org.example.App", "Example Player"), "(oss)")
    picture = os.path.join(bus.home, "wallpaper.png")
    subprocess.run(["convert", "-size", "640x400", "gradient:orange-purple", picture], check=True)
    shoot(bus, x, tag, "Hintergrundbild festlegen" if de else "Set Wallpaper", "Wallpaper", "SetWallpaperURI",
          ("org.example.App", "", GLib.filename_to_uri(picture), {"show-preview": GLib.Variant("b", True)}),
          "(osssa{sv})")
    shoot(bus, x, tag, "Report", "Print", "PreparePrint",
          ("org.example.App", "", "Report", {}, {}, {}), "(osssa{sv}a{sv}a{sv})")
