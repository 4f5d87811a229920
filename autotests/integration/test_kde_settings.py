"""limen-kde Settings: values from a test kdeglobals, live changes, behind Debian's frontend."""

import os

import pytest

import kde_helpers as kh
import limentest
from limentest import GLib

BREEZE_DARK = """\
[General]
ColorScheme=BreezeDark
AccentColor=61,174,233

[Colors:Window]
BackgroundNormal=32,35,38
ForegroundNormal=252,252,252

[KDE]
AnimationDurationFactor=0
widgetStyle=Breeze
"""

LIGHT = """\
[General]
ColorScheme=BreezeLight

[Colors:Window]
BackgroundNormal=239,240,241
ForegroundNormal=35,38,41

[Colors:Selection]
BackgroundNormal=61,174,233
"""


def read(bus, ns, key):
    return kh.call_impl(bus, "Settings", "Read", (ns, key), "(ss)")[0]


def test_breeze_dark_from_kdeglobals(bus):
    kh.write_kdeglobals(bus, BREEZE_DARK)
    kh.start_kde(bus)
    assert read(bus, "org.freedesktop.appearance", "color-scheme") == 1
    r, g, b = read(bus, "org.freedesktop.appearance", "accent-color")
    assert (round(r * 255), round(g * 255), round(b * 255)) == (61, 174, 233)
    assert read(bus, "org.freedesktop.appearance", "reduced-motion") == 1
    assert read(bus, "org.freedesktop.appearance", "contrast") == 0
    assert read(bus, "org.kde.kdeglobals.General", "ColorScheme") == "BreezeDark"
    assert read(bus, "org.kde.kdeglobals.KDE", "widgetStyle") == "Breeze"
    assert bus.get_property("org.freedesktop.impl.portal.Settings", "version",
                            dest=kh.KDE_NAME) == 1


def test_dark_by_scheme_name_without_scheme_file(bus):
    # No colours in kdeglobals and no BreezeDark.colors installed: still dark.
    kh.write_kdeglobals(bus, "[General]\nColorScheme=BreezeDark\n")
    kh.start_kde(bus, env={"XDG_DATA_DIRS": bus.data_home})
    assert read(bus, "org.freedesktop.appearance", "color-scheme") == 1


def test_scheme_file_decides_when_kdeglobals_has_no_colours(bus):
    schemes = os.path.join(bus.data_home, "color-schemes")
    os.makedirs(schemes)
    # A scheme whose name says nothing, dark by its colours.
    with open(os.path.join(schemes, "Midnight.colors"), "w") as f:
        f.write("[Colors:Window]\nBackgroundNormal=20,20,30\n[Colors:Selection]\nBackgroundNormal=200,10,10\n")
    kh.write_kdeglobals(bus, "[General]\nColorScheme=Midnight\n")
    kh.start_kde(bus)
    assert read(bus, "org.freedesktop.appearance", "color-scheme") == 1
    r, g, b = read(bus, "org.freedesktop.appearance", "accent-color")
    assert round(r * 255) == 200 and round(g * 255) == 10


def test_light_and_no_preference(bus):
    kh.write_kdeglobals(bus, LIGHT)
    kh.start_kde(bus)
    assert read(bus, "org.freedesktop.appearance", "color-scheme") == 2
    # Accent falls back to the selection colour.
    r, _, _ = read(bus, "org.freedesktop.appearance", "accent-color")
    assert round(r * 255) == 61


def test_nothing_known_is_default(bus):
    kh.start_kde(bus, env={"XDG_CONFIG_DIRS": bus.root + "/nonexistent"})
    assert read(bus, "org.freedesktop.appearance", "color-scheme") == 0
    assert read(bus, "org.freedesktop.appearance", "accent-color") == (-1.0, -1.0, -1.0)


def test_cascade_and_format(bus):
    sysdir = os.path.join(bus.root, "xdg")
    os.makedirs(sysdir)
    with open(os.path.join(sysdir, "kdeglobals"), "w") as f:
        f.write("[General]\nfont=System\nlocked=sys\n[Locked][$i]\nkey=system\n")
    kh.write_kdeglobals(bus, "# comment\n[General]\nfont=User\\sFont\\tX\nlocal[de]=ignored\n"
                        "home[$e]=$HOME/x\n[Locked]\nkey=user\n[Outer][Inner]\nk = v \n")
    kh.start_kde(bus, env={"XDG_CONFIG_DIRS": sysdir})
    assert read(bus, "org.kde.kdeglobals.General", "font") == "User FontX".replace("X", "\tX")
    assert read(bus, "org.kde.kdeglobals.General", "locked") == "sys"
    assert read(bus, "org.kde.kdeglobals.General", "home") == bus.home + "/x"
    assert read(bus, "org.kde.kdeglobals.Locked", "key") == "system"
    assert read(bus, "org.kde.kdeglobals.Outer.Inner", "k") == "v"
    with pytest.raises(GLib.Error) as e:
        read(bus, "org.kde.kdeglobals.General", "local")
    assert limentest.dbus_error_name(e.value) == "org.freedesktop.portal.Error.NotFound"


def test_read_all_filters(bus):
    kh.write_kdeglobals(bus, BREEZE_DARK)
    kh.start_kde(bus)
    everything = kh.call_impl(bus, "Settings", "ReadAll", ([],), "(as)")[0]
    assert {"org.freedesktop.appearance", "org.kde.kdeglobals.General", "org.kde.kdeglobals.KDE",
            "org.kde.kdeglobals.Colors:Window"} <= set(everything)
    only = kh.call_impl(bus, "Settings", "ReadAll", (["org.kde.kdeglobals.*"],), "(as)")[0]
    assert "org.freedesktop.appearance" not in only and "org.kde.kdeglobals.General" in only
    exact = kh.call_impl(bus, "Settings", "ReadAll", (["org.freedesktop.appearance"],), "(as)")[0]
    assert list(exact) == ["org.freedesktop.appearance"]
    assert exact["org.freedesktop.appearance"]["color-scheme"] == 1
    none = kh.call_impl(bus, "Settings", "ReadAll", (["org.example.nothing"],), "(as)")[0]
    assert none == {}


def test_bad_input(bus):
    kh.start_kde(bus)
    for ns, key in (("org.freedesktop.appearance", "nope"), ("x" * 100000, "y"), ("", "")):
        with pytest.raises(GLib.Error) as e:
            read(bus, ns, key)
        assert limentest.dbus_error_name(e.value) == "org.freedesktop.portal.Error.NotFound"
    with pytest.raises(GLib.Error) as e:
        kh.call_impl(bus, "Settings", "ReadAll", (["a"] * 1000,), "(as)")
    assert limentest.dbus_error_name(e.value) == "org.freedesktop.portal.Error.InvalidArgument"
    with pytest.raises(GLib.Error) as e:
        kh.call_impl(bus, "Settings", "Read", ("a",), "(s)")
    assert "InvalidArgs" in limentest.dbus_error_name(e.value)
    assert read(bus, "org.freedesktop.appearance", "color-scheme") in (0, 1, 2)


def test_live_change(bus):
    kh.write_kdeglobals(bus, LIGHT)
    kh.start_kde(bus)
    seen = []
    bus.conn.signal_subscribe(kh.KDE_NAME, "org.freedesktop.impl.portal.Settings", "SettingChanged",
                              kh.PATH, None, 0, lambda *a: seen.append(a[5].unpack()))
    limentest.pump(0.2)
    kh.write_kdeglobals(bus, BREEZE_DARK)
    assert limentest.wait_until(lambda: ("org.freedesktop.appearance", "color-scheme", 1) in seen and
                                ("org.kde.kdeglobals.General", "ColorScheme", "BreezeDark") in seen, 5), seen
    # Unchanged values are not announced.
    assert not any(s[1] == "ForegroundNormal" and s[0].endswith("Selection") for s in seen)
    assert read(bus, "org.freedesktop.appearance", "color-scheme") == 1


def test_behind_reference_frontend(bus):
    kh.write_kdeglobals(bus, BREEZE_DARK)
    kh.start_kde(bus)
    kh.start_reference_frontend(bus)
    v = bus.call("org.freedesktop.portal.Settings", "Read", ("org.freedesktop.appearance", "color-scheme"),
                 "(ss)")[0]
    # 1.16's Read wraps the backend's variant once more.
    while isinstance(v, GLib.Variant):
        v = v.unpack()
    assert v == 1
    allv = bus.call("org.freedesktop.portal.Settings", "ReadAll", (["org.kde.kdeglobals.General"],), "(as)")[0]
    assert allv["org.kde.kdeglobals.General"]["ColorScheme"] == "BreezeDark"
    seen = []
    bus.conn.signal_subscribe("org.freedesktop.portal.Desktop", "org.freedesktop.portal.Settings",
                              "SettingChanged", limentest.PORTAL_PATH, None, 0,
                              lambda *a: seen.append(a[5].unpack()))
    limentest.pump(0.2)
    kh.write_kdeglobals(bus, LIGHT)
    assert limentest.wait_until(lambda: any(s[:2] == ("org.freedesktop.appearance", "color-scheme")
                                            for s in seen), 5), seen


def test_portal_file_lists_what_is_exported(bus):
    kh.start_kde(bus)
    exported = {i for i in bus.interfaces(dest=kh.KDE_NAME, path=kh.PATH)
                if i.startswith("org.freedesktop.impl.portal.")}
    assert exported == kh.read_portal_interfaces()
    with open(kh.portal_file_path()) as f:
        text = f.read()
    assert "DBusName=org.freedesktop.impl.portal.desktop.limen" in text and "UseIn=KDE" in text


def test_signals_exit_cleanly(bus):
    import signal
    for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
        d = kh.start_kde(bus)
        d.signal(sig)
        assert d.wait(5) == 0
        bus.wait_for_name_gone(kh.KDE_NAME)


def test_replace_exits_zero(bus):
    first = kh.start_kde(bus)
    kh.start_kde(bus, "--replace")
    assert first.wait(5) == 0


def test_settings_never_load_qt(bus):
    """Settings (and anything without a dialog) must not pay for Qt."""
    kh.write_kdeglobals(bus, BREEZE_DARK)
    d = kh.start_kde(bus)
    kh.call_impl(bus, "Settings", "ReadAll", ([],), "(as)")
    read(bus, "org.freedesktop.appearance", "color-scheme")
    kh.write_kdeglobals(bus, LIGHT)
    limentest.pump(0.5)
    with open(f"/proc/{d.pid}/maps") as f:
        maps = f.read()
    assert "libQt5" not in maps and "liblimen-qt" not in maps
