"""limen-kde's part-2 portals behind both frontends (our limen-portal and Debian's
xdg-desktop-portal 1.16): an interactive Screenshot answered in our dialog, PreparePrint
answered in the print dialog, and the Lockdown that the frontends read."""

import os

import pytest

import kde_cups
import kde_helpers as kh
import limentest
from limentest import GLib
from test_kde_frontends import request_response, start_limen_portal


def start_frontend(bus, which):
    if which == "limen":
        return start_limen_portal(bus)
    return kh.start_reference_frontend(bus)


@pytest.mark.parametrize("which", ["limen", "reference"])
def test_interactive_screenshot_through_frontend(bus, x, which):
    kh.set_root_pattern(x, os.path.join(bus.root, "pattern.png"))
    kde = kh.start_kde_x11(bus, x)
    start_frontend(bus, which)
    token = "shot" + which
    got = request_response(bus, "org.freedesktop.portal.Screenshot", "Screenshot",
                           ("", {"handle_token": GLib.Variant("s", token), "interactive": GLib.Variant("b", True)}),
                           "(sa{sv})", token)
    x.answer("Screenshot", "Return", settle=0.4)
    assert limentest.wait_until(lambda: got, 20), kde.output()
    response, results = got[0]
    assert response == 0
    path = GLib.filename_from_uri(results["uri"])[0]
    assert kh.png_info(path)[:2] == (1280, 800)


@pytest.mark.skipif(not kde_cups.available(), reason="cups, cups-pdf, poppler-utils or gs missing")
@pytest.mark.parametrize("which", ["limen", "reference"])
def test_prepare_print_through_frontend(bus, x, which):
    cups = kde_cups.Cupsd()
    try:
        kh.start_kde_x11(bus, x, **cups.env)
        start_frontend(bus, which)
        token = "pp" + which
        title = "Frontend print " + which
        got = request_response(bus, "org.freedesktop.portal.Print", "PreparePrint",
                               ("", title, {}, {}, {"handle_token": GLib.Variant("s", token)}),
                               "(ssa{sv}a{sv}a{sv})", token)
        x.answer(title, "Return", settle=0.4)
        assert limentest.wait_until(lambda: got, 20)
        response, results = got[0]
        assert response == 0
        assert results["settings"]["printer"] == "PDF" and results["token"] > 0
    finally:
        cups.close()


@pytest.mark.parametrize("which", ["limen", "reference"])
def test_wallpaper_without_preview_asks_an_unidentified_host_app(bus, x, which):
    """SetWallpaperURI without a preview from a host app without an app id, through either
    frontend and limen-kde: nobody would see it coming, so the Access dialog asks first (the
    reference's question, or ours saying the answer counts for every unidentified app);
    denying it answers 2, sets nothing and stores "no" under the empty id."""
    import request_helpers as rh
    if which == "reference":
        bus.write_service_file("org.freedesktop.impl.portal.PermissionStore", "/usr/libexec/xdg-permission-store")
    else:
        rh.start_documents(bus)
    kde = kh.start_kde_x11(bus, x)
    start_frontend(bus, which)
    picture = os.path.join(bus.home, "wall.png")
    with open(picture, "wb") as f:
        f.write(b"\x89PNG\r\n\x1a\n")
    token = "wall" + which
    got = request_response(bus, "org.freedesktop.portal.Wallpaper", "SetWallpaperURI",
                           ("", GLib.filename_to_uri(picture), {"handle_token": GLib.Variant("s", token)}),
                           "(ssa{sv})", token)
    title = "Allow this app to set the wallpaper?" if which == "limen" else "Allow Applications to Set Backgrounds?"
    x.answer(title, "Escape", shot=f"wallpaper-access-{which}.png")
    assert limentest.wait_until(lambda: got, 20), kde.output()
    assert got[0][0] == 2
    store = "org.freedesktop.impl.portal.PermissionStore"
    perms, _ = bus.call(store, "Lookup", ("wallpaper", "wallpaper"), "(ss)", dest=store,
                        path="/org/freedesktop/impl/portal/PermissionStore")
    assert perms.get("") == ["no"]
