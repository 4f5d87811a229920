#!/usr/bin/python3
"""limen-kde as installed, beside Debian's xdg-desktop-portal-kde (whose kde.portal also says
UseIn=KDE and sorts first): activated by the bus, it serves every interface its installed
limen.portal lists, and in a KDE session the installed kde-portals.conf makes the frontend
use it rather than KDE's own backend."""

import configparser
import os

from limen_installed import DATADIR, KDE, PORTAL, Gio, SkipTest, main

PORTALS = os.path.join(DATADIR, "xdg-desktop-portal", "portals")
KDE_PORTAL = "/usr/share/xdg-desktop-portal/portals/kde.portal"


def interfaces_of(path):
    p = configparser.ConfigParser(interpolation=None)
    p.read(path)
    return [i for i in p["portal"]["Interfaces"].split(";") if i]


def serves_every_listed_interface(s):
    listed = interfaces_of(os.path.join(PORTALS, "limen.portal"))
    xml = s.call(KDE, "org.freedesktop.DBus.Introspectable", "Introspect")[0]
    s.assert_activated_from_install(KDE[0], "limen-kde")
    exported = {i.name for i in Gio.DBusNodeInfo.new_for_xml(xml).interfaces}
    missing = [i for i in listed if i not in exported]
    assert not missing, missing
    assert len(listed) >= 15, listed


def frontend_prefers_limen(s):
    if not os.path.exists(KDE_PORTAL):
        raise SkipTest("xdg-desktop-portal-kde is not installed")
    assert os.path.exists(os.path.join(DATADIR, "xdg-desktop-portal", "kde-portals.conf"))
    # Interfaces both backends serve, answered without a dialog.
    s.call(PORTAL, "org.freedesktop.portal.Settings", "ReadAll", ([],), "(as)")
    s.call(PORTAL, "org.freedesktop.portal.Settings", "ReadOne", ("org.freedesktop.appearance", "color-scheme"),
           "(ss)")
    s.call(PORTAL, "org.freedesktop.DBus.Properties", "GetAll", ("org.freedesktop.portal.ScreenCast",), "(s)")
    s.call(PORTAL, "org.freedesktop.DBus.Properties", "GetAll", ("org.freedesktop.portal.RemoteDesktop",), "(s)")
    assert s.dbus("NameHasOwner", KDE[0], sig="(s)")[0]
    # KDE's own backend was never asked (the bus would have started it).
    assert not s.dbus("NameHasOwner", "org.freedesktop.impl.portal.desktop.kde", sig="(s)")[0]


if __name__ == "__main__":
    main([
        ("limen-kde serves every interface limen.portal lists", serves_every_listed_interface),
        ("in a KDE session the frontend asks limen-kde, not kde", frontend_prefers_limen),
    ])
