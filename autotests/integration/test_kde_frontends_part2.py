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
