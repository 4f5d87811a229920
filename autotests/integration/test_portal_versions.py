"""Screenshot version 3 (target, AvailableTargets) and Print version 4 (output formats, current
page, selection) through limen-portal against the dbusmock backends (templates/)."""
import pytest
from gi.repository import GLib

import limentest
import request_helpers as rh
from request_helpers import v

SHOT = "org.freedesktop.portal.Screenshot"
PRINT = "org.freedesktop.portal.Print"
MOCK = "org.freedesktop.DBus.Mock"


def start(bus, **params):
    # A non-interactive screenshot asks first (the Access mock allows), host callers too.
    backend = rh.setup(bus, ["screenshot", "print", "access"], params=params)
    return backend, rh.Client(bus)


def shot(client, **opts):
    return client.request(SHOT, "Screenshot", ("", opts), "(sa{sv})")


def test_version_3_and_targets_follow_the_backend(bus):
    backend, client = start(bus, available_targets=1 | 4)
    # The backend's properties are read when it appears (it is already running here).
    assert limentest.wait_until(lambda: bus.get_property(SHOT, "version") == 3)
    assert bus.get_property(SHOT, "AvailableTargets") == 1 | 4
    assert bus.get_property(PRINT, "version") == 4


def test_target_reaches_the_backend(bus):
    backend, client = start(bus)
    assert shot(client, target=v("u", 4))[0] == 0
    (_, _, _, opts), = backend.requests("Screenshot")
    assert opts["target"] == 4
    assert shot(client)[0] == 0
    assert "target" not in backend.requests("Screenshot")[1][3]


@pytest.mark.parametrize("bad", [0, 3, 16, 6, 0xffffffff])
def test_target_must_be_one_known_target(bus, bad):
    backend, client = start(bus)
    with pytest.raises(GLib.Error) as e:
        shot(client, target=v("u", bad))
    assert rh.error_name(e) == "org.freedesktop.portal.Error.InvalidArgument"
    assert "target" in e.value.message
    with pytest.raises(GLib.Error) as e:
        shot(client, target=v("s", "screen"))
    assert rh.error_name(e) == "org.freedesktop.portal.Error.InvalidArgument"
    assert backend.requests("Screenshot") == []


def test_target_the_backend_does_not_offer_is_refused(bus):
    backend, client = start(bus, available_targets=1)
    with pytest.raises(GLib.Error) as e:
        shot(client, target=v("u", 2))
    assert rh.error_name(e) == "org.freedesktop.portal.Error.InvalidArgument"
    assert backend.requests("Screenshot") == []
    # A backend that gains a target later is read again at the next call.
    bus.call(MOCK, "UpdateProperties", ("org.freedesktop.impl.portal.Screenshot",
                                        {"AvailableTargets": v("u", 3)}), "(sa{sv})", dest=rh.BACKEND_NAME)
    assert shot(client, target=v("u", 2))[0] == 0
    assert bus.get_property(SHOT, "AvailableTargets") == 3


def test_version_2_backend_keeps_version_2_and_never_sees_target(bus):
    backend, client = start(bus, screenshot_version=2)
    assert shot(client, target=v("u", 1))[0] == 0
    (_, _, _, opts), = backend.requests("Screenshot")
    assert "target" not in opts
    assert bus.get_property(SHOT, "version") == 2
    assert bus.get_property(SHOT, "AvailableTargets") == 0


def prepare(client, **opts):
    return client.request(PRINT, "PreparePrint", ("", "Doc", {}, {}, opts), "(ssa{sv}a{sv}a{sv})")


def test_print_v3_v4_options_reach_the_backend(bus):
    backend, client = start(bus)
    assert prepare(client, supported_output_file_formats=v("as", ["pdf", "svg"]),
                   has_current_page=v("b", True), has_selected_pages=v("b", False))[0] == 0
    (_, _, _, opts), = backend.requests("PreparePrint")
    assert opts == {"supported_output_file_formats": ["pdf", "svg"], "has_current_page": True,
                    "has_selected_pages": False}


@pytest.mark.parametrize("key,value", [
    ("supported_output_file_formats", v("as", ["pdf", "docx"])),
    ("supported_output_file_formats", v("as", ["pdf", "pdf"])),
    ("supported_output_file_formats", v("s", "pdf")),
    ("has_current_page", v("s", "yes")),
    ("has_selected_pages", v("u", 1)),
])
def test_print_bad_v3_v4_options_are_left_out(bus, key, value):
    """As upstream filters Print's options: a bad one never reaches the backend, and the
    person still gets the dialog (the call is not refused)."""
    backend, client = start(bus)
    assert prepare(client, modal=v("b", False), **{key: value})[0] == 0
    (_, _, _, opts), = backend.requests("PreparePrint")
    assert opts == {"modal": False}
