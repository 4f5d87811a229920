"""OpenURI version 5 through limen-portal: SchemeSupported answers from the host's handlers of
x-scheme-handler/SCHEME (a .desktop file in a temp XDG_DATA_HOME here), for host and
bwrap-sandboxed callers alike, and refuses what is not an RFC 3986 scheme."""
import json
import os

import pytest
from gi.repository import GLib

import limentest
import request_helpers as rh
from request_helpers import v

OPEN_URI = "org.freedesktop.portal.OpenURI"
INVALID = "org.freedesktop.portal.Error.InvalidArgument"
HANDLER = "org.example.SchemeHandler"


def install_handler(bus, scheme="limenscheme"):
    apps = os.path.join(bus.data_home, "applications")
    os.makedirs(apps, exist_ok=True)
    with open(os.path.join(apps, HANDLER + ".desktop"), "w") as f:
        f.write("[Desktop Entry]\nType=Application\nName=Scheme Handler\nExec=true %u\n"
                f"MimeType=x-scheme-handler/{scheme};\n")
    # What update-desktop-database writes beside it.
    with open(os.path.join(apps, "mimeinfo.cache"), "w") as f:
        f.write(f"[MIME Cache]\nx-scheme-handler/{scheme}={HANDLER}.desktop;\n")


@pytest.fixture
def portal(bus):
    install_handler(bus)
    rh.setup(bus, ["appchooser"])
    return bus


def supported(bus, scheme, options=None):
    return bus.call(OPEN_URI, "SchemeSupported", (scheme, options or {}), "(sa{sv})")[0]


def test_version_5(portal):
    assert portal.get_property(OPEN_URI, "version") == 5
    method = portal.introspect().lookup_interface(OPEN_URI).lookup_method("SchemeSupported")
    assert [(a.name, a.signature) for a in method.in_args] == [("scheme", "s"), ("options", "a{sv}")]
    assert [a.signature for a in method.out_args] == ["b"]


def test_handled_scheme_is_supported(portal):
    assert supported(portal, "limenscheme") is True
    # Schemes are case-insensitive (RFC 3986 3.1).
    assert supported(portal, "LimenScheme") is True
    # Options are not defined yet: whatever comes is ignored.
    assert supported(portal, "limenscheme", {"future": v("s", "x")}) is True


@pytest.mark.parametrize("scheme", ["limen-unknown-scheme", "x" * 255, "a+b.c-d9"])
def test_unknown_scheme_is_not_supported(portal, scheme):
    assert supported(portal, scheme) is False


@pytest.mark.parametrize("scheme", ["", "1abc", "-abc", "ab c", "limenscheme:", "a/b", "x" * 256, "\u00e9t\u00e9",
                                    "a\tb", "x-scheme-handler/limenscheme"])
def test_malformed_scheme_is_refused(portal, scheme):
    with pytest.raises(GLib.Error) as e:
        supported(portal, scheme)
    assert rh.error_name(e) == INVALID
    assert "scheme" in e.value.message
    # The daemon keeps serving.
    assert supported(portal, "limenscheme") is True


def test_wrong_signature_is_refused(portal):
    with pytest.raises(GLib.Error) as e:
        portal.call(OPEN_URI, "SchemeSupported", ("limenscheme",), "(s)")
    assert limentest.dbus_error_name(e.value) == "org.freedesktop.DBus.Error.InvalidArgs"
    assert supported(portal, "limenscheme") is True


SANDBOX = r'''
import json
from gi.repository import Gio, GLib
bus = Gio.bus_get_sync(Gio.BusType.SESSION, None)
out = []
for scheme in ("limenscheme", "limen-unknown-scheme", "bad scheme"):
    try:
        r = bus.call_sync("org.freedesktop.portal.Desktop", "/org/freedesktop/portal/desktop",
                          "org.freedesktop.portal.OpenURI", "SchemeSupported",
                          GLib.Variant("(sa{sv})", (scheme, {})), GLib.VariantType("(b)"), 0, 10000, None)
        out.append(r.unpack()[0])
    except GLib.Error as e:
        out.append(Gio.DBusError.get_remote_error(e))
print(json.dumps(out))
'''


def test_sandboxed_caller_gets_the_hosts_answer(portal):
    p = limentest.run_sandboxed(portal, "org.example.Browser", SANDBOX)
    assert p.returncode == 0, p.stderr
    assert json.loads(p.stdout.strip().splitlines()[-1]) == [True, False, INVALID]


def test_handler_installed_later_is_seen(portal):
    assert supported(portal, "limenlater") is False
    install_handler(portal, "limenlater")
    assert limentest.wait_until(lambda: supported(portal, "limenlater") is True, 10)
    # The first handler's file was rewritten for the new scheme: the old one is gone.
    assert limentest.wait_until(lambda: supported(portal, "limenscheme") is False, 10)
