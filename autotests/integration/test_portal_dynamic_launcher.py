"""org.freedesktop.portal.DynamicLauncher through limen-portal with a dbusmock backend. The
caller is made a Flatpak app through the test-identity hook (LIMEN_TEST_HOOKS builds)."""
import os
import subprocess

import pytest
from gi.repository import GLib

import limentest
import request_helpers as rh
from request_helpers import v

DL = "org.freedesktop.portal.DynamicLauncher"
APP = "org.example.App"
ENTRY = "[Desktop Entry]\nType=Application\nName=Ignored\nExec=mytool --open %u\nTryExec=/bin/evil\nDBusActivatable=true\n"


def icon(tmp_path, size=64):
    p = tmp_path / f"icon{size}.png"
    subprocess.run(["convert", "-size", f"{size}x{size}", "xc:green", str(p)], check=True)
    return v("(sv)", ("bytes", v("ay", p.read_bytes())))


@pytest.fixture
def env(bus, tmp_path):
    meta = tmp_path / "flatpak-info"
    meta.write_text(f"[Application]\nname={APP}\n")
    backend = rh.setup(bus, ["dynamiclauncher"], portal_env={
        "XDG_DESKTOP_PORTAL_TEST_APP_INFO_KIND": "flatpak",
        "XDG_DESKTOP_PORTAL_TEST_FLATPAK_METADATA": str(meta)})
    return bus, backend, rh.Client(bus)


def test_supported_launcher_types_are_the_backends(bus):
    """As in the reference: a backend that installs only applications (1) makes the portal
    say so, so that no app offers web apps it cannot install."""
    rh.write_config(bus, ["dynamiclauncher"])
    rh.Backend(bus, ["dynamiclauncher"], {"launcher_types": 1})
    bus.start_portal()
    assert limentest.wait_until(lambda: bus.get_property(DL, "SupportedLauncherTypes") == 1, 5), \
        bus.get_property(DL, "SupportedLauncherTypes")


def test_prepare_install_roundtrip(env, tmp_path):
    bus, backend, client = env
    response, results = client.request(DL, "PrepareInstall", ("", "My Tool", icon(tmp_path), {"modal": v("b", True)}),
                                       "(ssva{sv})")
    assert response == 0 and results["name"] == "My Tool"
    assert backend.requests("PrepareInstall")[0][2] == APP
    token = results["token"]
    did = APP + ".mytool.desktop"
    bus.call(DL, "Install", (token, did, ENTRY, {}), "(sssa{sv})", conn=client.conn)
    entry = bus.call(DL, "GetDesktopEntry", (did,), "(s)", conn=client.conn)[0]
    assert f"Exec=flatpak run --command='mytool' {APP} '--open' %u" in entry
    assert "Name=My Tool" in entry and "TryExec" not in entry and "DBusActivatable" not in entry
    assert os.path.islink(os.path.join(bus.data_home, "applications", did))
    icon_v, fmt, size = bus.call(DL, "GetIcon", (did,), "(s)", conn=client.conn)
    assert (fmt, size) == ("png", 64)
    # The token was single-use.
    with pytest.raises(GLib.Error) as e:
        bus.call(DL, "Install", (token, APP + ".again.desktop", ENTRY, {}), "(sssa{sv})", conn=client.conn)
    assert rh.error_name(e) == "org.freedesktop.portal.Error.NotAllowed"
    bus.call(DL, "Uninstall", (did, {}), "(sa{sv})", conn=client.conn)
    with pytest.raises(GLib.Error) as e:
        bus.call(DL, "GetDesktopEntry", (did,), "(s)", conn=client.conn)
    assert rh.error_name(e) == "org.freedesktop.portal.Error.NotFound"


def test_cancelled_prepare_gives_no_token(env, tmp_path):
    bus, backend, client = env
    backend.set_response("PrepareInstall", 1, {})
    assert client.request(DL, "PrepareInstall", ("", "T", icon(tmp_path), {}), "(ssva{sv})") == (1, {})


def test_request_install_token(env, tmp_path):
    bus, backend, client = env
    token = bus.call(DL, "RequestInstallToken", ("T", icon(tmp_path), {}), "(sva{sv})", conn=client.conn)[0]
    bus.call(DL, "Install", (token, APP + ".t.desktop", ENTRY, {}), "(sssa{sv})", conn=client.conn)
    backend.set_response("RequestInstallToken", 2, {})
    with pytest.raises(GLib.Error) as e:
        bus.call(DL, "RequestInstallToken", ("T", icon(tmp_path), {}), "(sva{sv})", conn=client.conn)
    assert rh.error_name(e) == "org.freedesktop.portal.Error.NotAllowed"


@pytest.mark.parametrize("did", ["org.other.App.x.desktop", APP + ".desktop", APP + ".x", APP + "./../x.desktop",
                                 APP + ".a b.desktop"])
def test_install_refuses_foreign_or_bad_ids(env, tmp_path, did):
    bus, backend, client = env
    token = bus.call(DL, "RequestInstallToken", ("T", icon(tmp_path), {}), "(sva{sv})", conn=client.conn)[0]
    with pytest.raises(GLib.Error) as e:
        bus.call(DL, "Install", (token, did, ENTRY, {}), "(sssa{sv})", conn=client.conn)
    assert rh.error_name(e) == "org.freedesktop.portal.Error.InvalidArgument"


@pytest.mark.parametrize("name,icon_kind,opts,key", [
    ("", "ok", {}, "name"),
    ("T", "themed", {}, "icon_v"),
    ("T", "big", {}, "icon_v"),
    ("T", "junk", {}, "icon_v"),
    ("T", "ok", {"launcher_type": v("u", 7)}, "launcher_type"),
    ("T", "ok", {"target": v("s", "file:///etc/passwd")}, "target"),
])
def test_prepare_bad_input(env, tmp_path, name, icon_kind, opts, key):
    bus, backend, client = env
    ic = {"ok": icon(tmp_path), "big": icon(tmp_path, 600),
          "themed": v("(sv)", ("themed", v("as", ["x"]))),
          "junk": v("(sv)", ("bytes", v("ay", os.urandom(100))))}[icon_kind]
    with pytest.raises(GLib.Error) as e:
        bus.call(DL, "PrepareInstall", ("", name, ic, opts), "(ssva{sv})", conn=client.conn)
    assert rh.error_name(e) == "org.freedesktop.portal.Error.InvalidArgument"
    assert key in e.value.message
    assert backend.requests() == []
