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
    assert f"Exec=flatpak run --command=mytool {APP} --open %u" in entry
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


# ---- what an installed launcher may contain (issue 39) -----------------------------------

HOSTILE = (
    "[Desktop Entry]\nType=Application\nName=Evil\nName[de]=Firefox\nGenericName=Web Browser\n"
    "Icon=/etc/shadow\nExec=mytool %U\nExec[de]=/bin/sh -c evil\nTryExec=/bin/true\nPath=/\nTerminal=true\n"
    "TerminalOptions=-e /bin/sh\nX-KDE-SubstituteUID=true\nX-KDE-Username=root\n"
    "X-KDE-ServiceTypes=KonqPopupMenu/Plugin\nX-KDE-Protocols=http\nMimeType=x-scheme-handler/https;\n"
    "X-DBUS-ServiceName=org.kde.kded5\nX-KDE-DBUS-Restricted-Interfaces=org.kde.KWin.ScreenShot2\n"
    "X-KDE-Wayland-Interfaces=zkde_screencast_unstable_v1\nDBusActivatable=true\nImplements=org.x.Y\n"
    "Hidden=true\nX-GNOME-Autostart-enabled=true\nX-KDE-autostart-after=panel\nX-Flatpak=org.other.App\n"
    "Comment=A tool\nComment[de]=Ein Werkzeug\nCategories=Utility;\nActions=new;\n\n"
    "[Desktop Action new]\nName=New\nIcon=/etc/passwd\nExec=/bin/sh -c \"touch /tmp/evil\"\nPath=/\n")


def installed(bus, did):
    kf = GLib.KeyFile()
    kf.load_from_file(os.path.join(bus.data_home, "applications", did), GLib.KeyFileFlags.KEEP_TRANSLATIONS)
    return kf


def test_install_keeps_only_the_allow_list(env, tmp_path):
    """Every key that makes a launcher run or configure something else is left out, and the
    action's Exec starts the app in its sandbox, like the main one."""
    bus, backend, client = env
    token = bus.call(DL, "RequestInstallToken", ("T", icon(tmp_path), {}), "(sva{sv})", conn=client.conn)[0]
    did = APP + ".hostile.desktop"
    bus.call(DL, "Install", (token, did, HOSTILE, {}), "(sssa{sv})", conn=client.conn)
    kf = installed(bus, did)
    assert kf.get_groups()[0] == ["Desktop Entry", "Desktop Action new"]
    assert kf.get_keys("Desktop Entry")[0] == ["Type", "Name", "Icon", "Exec", "Comment", "Comment[de]",
                                               "Categories", "X-Flatpak", "Actions"]
    assert kf.get_value("Desktop Entry", "Exec") == f"flatpak run --command=mytool {APP} %U"
    assert kf.get_value("Desktop Entry", "X-Flatpak") == APP
    assert kf.get_value("Desktop Entry", "Name") == "T"
    assert kf.get_value("Desktop Entry", "Icon").startswith(os.path.join(bus.data_home, "xdg-desktop-portal", "icons"))
    assert kf.get_keys("Desktop Action new")[0] == ["Name", "Exec"]
    assert kf.get_value("Desktop Action new", "Exec") == \
        f"flatpak run --command=/bin/sh {APP} -c 'touch /tmp/evil'"
    text = bus.call(DL, "GetDesktopEntry", (did,), "(s)", conn=client.conn)[0]
    for gone in ("Path", "Terminal", "SubstituteUID", "Username", "MimeType", "X-KDE", "X-DBUS", "X-GNOME",
                 "Implements", "Hidden", "Firefox", "/etc/", "org.other.App", "GenericName", "TryExec"):
        assert gone not in text, gone


@pytest.mark.parametrize("entry,needle", [
    ("[Desktop Entry]\nType=Link\nURL=file:///bin/sh\nExec=x\n", "Type"),
    ("[Desktop Entry]\nExec=x\n\n[X-Evil]\nExec=/bin/sh\n", "group"),
    ("[Desktop Entry]\nExec=x\n\n[Desktop Action evil]\nName=E\nExec=/bin/sh\n", "group"),
    ("[Desktop Entry]\nExec=x\nActions=a;\n", "Actions"),
    ("[Desktop Entry]\nExec=\"%f\"\n", "Exec"),
    ("[Desktop Entry]\nExec=tool \"--x=%u\"\n", "Exec"),
    ("[Desktop Entry]\nExec=tool \"a\\nb\"\n", "Exec"),
    ("[Desktop Entry]\nExec=x\nActions=a;\n[Desktop Action a]\nName=A\nExec=\"%u\"\n", "Exec"),
], ids=["link", "extra-group", "unlisted-action", "action-without-group", "field-code-command",
        "field-code-quoted", "newline", "action-field-code"])
def test_install_refuses_entries_it_cannot_make_safe(env, tmp_path, entry, needle):
    bus, backend, client = env
    token = bus.call(DL, "RequestInstallToken", ("T", icon(tmp_path), {}), "(sva{sv})", conn=client.conn)[0]
    did = APP + ".refused.desktop"
    with pytest.raises(GLib.Error) as e:
        bus.call(DL, "Install", (token, did, entry, {}), "(sssa{sv})", conn=client.conn)
    assert rh.error_name(e) == "org.freedesktop.portal.Error.InvalidArgument"
    assert "desktop_entry" in e.value.message and needle in e.value.message
    assert not os.path.lexists(os.path.join(bus.data_home, "applications", did))
    assert not os.path.exists(os.path.join(bus.data_home, "xdg-desktop-portal", "applications", did))


def test_snap_app_cannot_install(bus, tmp_path):
    """A Snap app's command could only be installed as it is, outside its confinement."""
    meta = tmp_path / "snap-info"
    meta.write_text("[Snap Info]\nInstanceName=tool\n")
    rh.setup(bus, ["dynamiclauncher"], portal_env={"XDG_DESKTOP_PORTAL_TEST_APP_INFO_KIND": "snap",
                                                  "XDG_DESKTOP_PORTAL_TEST_SNAP_METADATA": str(meta)})
    client = rh.Client(bus)
    token = bus.call(DL, "RequestInstallToken", ("T", icon(tmp_path), {}), "(sva{sv})", conn=client.conn)[0]
    with pytest.raises(GLib.Error) as e:
        bus.call(DL, "Install", (token, "snap.tool.x.desktop", "[Desktop Entry]\nExec=/bin/sh\n", {}),
                 "(sssa{sv})", conn=client.conn)
    assert rh.error_name(e) == "org.freedesktop.portal.Error.NotAllowed"
    assert not os.path.lexists(os.path.join(bus.data_home, "applications", "snap.tool.x.desktop"))


def test_host_app_gets_the_same_allow_list(bus, tmp_path):
    """A host app's commands stay its own (it could run them anyway), but its launcher holds
    no more than a sandboxed app's: one rule for what the portal writes after a dialog."""
    rh.setup(bus, ["dynamiclauncher"])
    client = rh.Client(bus)
    bus.call("org.freedesktop.host.portal.Registry", "Register", ("org.example.Host", {}), "(sa{sv})",
             conn=client.conn)
    token = bus.call(DL, "RequestInstallToken", ("T", icon(tmp_path), {}), "(sva{sv})", conn=client.conn)[0]
    did = "org.example.Host.tool.desktop"
    bus.call(DL, "Install", (token, did, HOSTILE, {}), "(sssa{sv})", conn=client.conn)
    kf = installed(bus, did)
    assert kf.get_keys("Desktop Entry")[0] == ["Type", "Name", "Icon", "Exec", "Comment", "Comment[de]",
                                               "Categories", "Actions"]
    assert kf.get_value("Desktop Entry", "Exec") == "mytool %U"
    assert kf.get_value("Desktop Action new", "Exec") == "/bin/sh -c 'touch /tmp/evil'"
