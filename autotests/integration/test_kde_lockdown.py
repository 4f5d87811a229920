"""limen-kde Lockdown: values from KDE's Kiosk keys ([KDE Action Restrictions] in
kdeglobals), a Properties.Set from the bus refused with Error.NotAllowed naming the
Kiosk key (the value never changes), live changes of kdeglobals, and what both frontends
(limen-portal and Debian's xdg-desktop-portal 1.16) make of it."""

import pytest

import kde_helpers as kh
import limentest
from limentest import GLib
from test_kde_frontends import start_limen_portal

LOCKDOWN = kh.IMPL + "Lockdown"
KIOSK = {"disable-printing": "print/system", "disable-save-to-disk": "action/file_save_as",
         "disable-application-handlers": "openwith", "disable-camera": "camera", "disable-location": "location"}


def props(bus):
    return {k: bus.get_property(LOCKDOWN, k, dest=kh.KDE_NAME, path=kh.PATH) for k in KIOSK}


def get_all(bus):
    return bus.call("org.freedesktop.DBus.Properties", "GetAll", (LOCKDOWN,), "(s)", dest=kh.KDE_NAME,
                    path=kh.PATH)[0]


def set_prop(bus, name, value):
    bus.call("org.freedesktop.DBus.Properties", "Set", (LOCKDOWN, name, value), "(ssv)", dest=kh.KDE_NAME,
             path=kh.PATH)


def test_set_is_refused_and_changes_nothing(bus):
    kh.write_kdeglobals(bus, "[KDE Action Restrictions]\nprint/system=false\nopenwith=false\n")
    kde = kh.start_kde(bus)
    before = props(bus)
    assert before == {"disable-printing": True, "disable-save-to-disk": False, "disable-application-handlers": True,
                      "disable-camera": False, "disable-location": False}
    for name, key in KIOSK.items():
        for value in (True, False):
            with pytest.raises(GLib.Error) as e:
                set_prop(bus, name, GLib.Variant("b", value))
            msg = str(e.value)
            assert "org.freedesktop.portal.Error.NotAllowed" in msg and name in msg and key in msg, msg
            assert "kdeglobals" in msg
    for name in ("disable-microphone", "disable-sound-output"):
        with pytest.raises(GLib.Error) as e:
            set_prop(bus, name, GLib.Variant("b", True))
        assert "NotAllowed" in str(e.value) and name in str(e.value)
    assert props(bus) == before
    allp = get_all(bus)
    assert {k: allp[k] for k in KIOSK} == before
    assert allp["disable-microphone"] is False and allp["disable-sound-output"] is False
    # GDBus's own checks come first: a wrong type or an unknown property.
    with pytest.raises(GLib.Error) as e:
        set_prop(bus, "disable-printing", GLib.Variant("s", "no"))
    assert "InvalidArgs" in str(e.value)
    with pytest.raises(GLib.Error) as e:
        set_prop(bus, "disable-everything", GLib.Variant("b", False))
    assert "InvalidArgs" in str(e.value) or "UnknownProperty" in str(e.value)
    assert "refused a write to disable-printing" in kde.output()
    assert kde.alive()


def test_live_kdeglobals_change_after_a_refused_set(bus):
    kh.write_kdeglobals(bus, "[KDE Action Restrictions]\ncamera=false\n")
    kh.start_kde(bus)
    assert props(bus)["disable-camera"] is True
    with pytest.raises(GLib.Error):
        set_prop(bus, "disable-camera", GLib.Variant("b", False))
    # The administrator's change is what takes effect, and is announced.
    changed = []
    sub = bus.conn.signal_subscribe(kh.KDE_NAME, "org.freedesktop.DBus.Properties", "PropertiesChanged",
                                    kh.PATH, None, 0, lambda *a: changed.append(a[5].unpack()[1]))
    try:
        kh.write_kdeglobals(bus, "[KDE Action Restrictions]\nlocation=false\n")
        limentest.wait_until(lambda: props(bus)["disable-location"], 10)
        assert props(bus) == {"disable-printing": False, "disable-save-to-disk": False,
                              "disable-application-handlers": False, "disable-camera": False,
                              "disable-location": True}
        limentest.wait_until(lambda: any("disable-location" in c for c in changed), 5)
        assert any(c.get("disable-camera") is False for c in changed), changed
    finally:
        bus.conn.signal_unsubscribe(sub)


def prepare_print(bus, token):
    return bus.call("org.freedesktop.portal.Print", "PreparePrint",
                    ("", "Lockdown test", {}, {}, {"handle_token": GLib.Variant("s", token)}), "(ssa{sv}a{sv}a{sv})",
                    timeout=20000)


@pytest.mark.parametrize("which", ["limen", "reference"])
def test_frontends_read_the_kiosk_value(bus, x, which):
    kh.write_kdeglobals(bus, "[KDE Action Restrictions]\nprint/system=false\n")
    kh.start_kde_x11(bus, x)
    if which == "limen":
        start_limen_portal(bus)
    else:
        kh.start_reference_frontend(bus)
    with pytest.raises(GLib.Error) as e:
        prepare_print(bus, "t1")
    assert "NotAllowed" in str(e.value)
    # A peer's write does not lift it for the frontend either.
    with pytest.raises(GLib.Error):
        set_prop(bus, "disable-printing", GLib.Variant("b", False))
    with pytest.raises(GLib.Error) as e:
        prepare_print(bus, "t2")
    assert "NotAllowed" in str(e.value)
    # The administrator lifts it: the frontend follows (limen-portal reads on every call,
    # the reference its proxy's cache, kept by PropertiesChanged).
    kh.write_kdeglobals(bus, "[KDE Action Restrictions]\nprint/system=true\n")
    limentest.wait_until(lambda: not props(bus)["disable-printing"], 10)
    def allowed():
        try:
            return prepare_print(bus, "t3")[0]
        except GLib.Error as err:
            assert "NotAllowed" in str(err)
            return None
    handle = limentest.wait_until(allowed, 10)
    assert handle, "the frontend still refuses printing"
    x.wait_window("Lockdown test")
    bus.call("org.freedesktop.portal.Request", "Close", None, None, path=handle)
