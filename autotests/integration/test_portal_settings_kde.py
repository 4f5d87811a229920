"""limen-portal with Debian's xdg-desktop-portal-kde as its Settings backend (Xvfb)."""
import os
import shutil
import subprocess
import time

import pytest

import limentest

KDE_BACKEND = "/usr/lib/x86_64-linux-gnu/libexec/xdg-desktop-portal-kde"
pytestmark = pytest.mark.skipif(not os.path.exists(KDE_BACKEND) or not shutil.which("Xvfb"),
                                reason="xdg-desktop-portal-kde or Xvfb not installed")


@pytest.fixture
def xvfb():
    n = 120
    while os.path.exists(f"/tmp/.X11-unix/X{n}") or os.path.exists(f"/tmp/.X{n}-lock"):
        n += 1
    p = subprocess.Popen(["Xvfb", f":{n}", "-screen", "0", "1280x800x24", "-nolisten", "tcp"],
                         stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    for _ in range(100):
        if os.path.exists(f"/tmp/.X11-unix/X{n}"):
            break
        time.sleep(0.05)
    yield f":{n}"
    p.terminate()
    p.wait()


def test_settings_from_reference_kde_backend(bus, xvfb):
    with open(os.path.join(bus.config_home, "kdeglobals"), "w") as f:
        f.write("[General]\nColorScheme=BreezeDark\n\n[Colors:Window]\nBackgroundNormal=32,35,38\n"
                "\n[KDE]\nwidgetStyle=Breeze\n")
    bus.write_portal_file("kde", "org.freedesktop.impl.portal.desktop.kde",
                          ["org.freedesktop.impl.portal.Settings"], use_in="KDE")
    bus.start([KDE_BACKEND], env={"DISPLAY": xvfb, "XDG_CURRENT_DESKTOP": "KDE", "QT_QPA_PLATFORM": "xcb"},
              wait_name="org.freedesktop.impl.portal.desktop.kde", timeout=30)
    bus.start_portal(env={"XDG_CURRENT_DESKTOP": "KDE"})
    all_ = bus.call("org.freedesktop.portal.Settings", "ReadAll", ([],), "(as)")[0]
    assert all_["org.kde.kdeglobals.General"]["ColorScheme"] == "BreezeDark"
    assert all_["org.kde.kdeglobals.KDE"]["widgetStyle"] == "Breeze"
    assert "color-scheme" in all_["org.freedesktop.appearance"]
    one = bus.call("org.freedesktop.portal.Settings", "ReadOne", ("org.kde.kdeglobals.General", "ColorScheme"), "(ss)")
    assert one[0] == "BreezeDark"
    # Read (v1) from the same backend, through our cache.
    assert bus.call("org.freedesktop.portal.Settings", "Read", ("org.kde.kdeglobals.KDE", "widgetStyle"), "(ss)")[0] == "Breeze"
