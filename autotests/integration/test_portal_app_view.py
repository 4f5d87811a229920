"""What upstream's newest frontend does and Limen matches (issue 39, item 6): a sandboxed
app gets the user's picture from Account.GetUserInformation as a document of its own, not
a host path; a Flatpak app is told the path of documents (Screenshot, Account) where its
own sandbox mounts the store, /run/flatpak/doc, while a Snap app and a host app keep theirs;
Registry.Register takes only the id of an installed application."""
import os

import pytest
from gi.repository import GLib

import limentest
import request_helpers as rh
from limentest import dbus_error_name
from request_helpers import v

APP = "org.example.App"
ACCOUNT = "org.freedesktop.portal.Account"
SHOT = "org.freedesktop.portal.Screenshot"
REG = "org.freedesktop.host.portal.Registry"
DOCS = "org.freedesktop.portal.Documents"
DOCS_PATH = "/org/freedesktop/portal/documents"
FLATPAK_DOC = "file:///run/flatpak/doc/"


def document_info(bus, uri):
    """The host path and the apps of the document @uri names (…/ID/NAME)."""
    doc_id = os.path.basename(os.path.dirname(GLib.filename_from_uri(uri)[0]))
    host, apps = bus.call(DOCS, "Info", (doc_id,), "(s)", dest=DOCS, path=DOCS_PATH)
    return bytes(host).rstrip(b"\0").decode(), apps


@pytest.fixture
def env(bus):
    rh.start_documents(bus)
    backend = rh.setup(bus, ["account", "screenshot"])
    return bus, backend


def sandboxed_account(bus):
    return rh.sandboxed_request(bus, APP, ACCOUNT, "GetUserInformation", "(sa{sv})",
                                "('', {'handle_token': <'sbx'>})", read_back=True)


def test_account_picture_is_a_document_in_the_flatpak_apps_view(env, tmp_path):
    bus, backend = env
    face = tmp_path / "face.png"
    face.write_bytes(b"the user's face")
    backend.set_response("GetUserInformation", 0, {"id": v("s", "tester"), "name": v("s", "Test User"),
                                                   "image": v("s", face.as_uri()),
                                                   "extra": v("s", str(tmp_path))})
    kind, (response, results) = sandboxed_account(bus)
    assert kind == "RESPONSE" and response == 0
    assert results["id"] == "tester" and results["name"] == "Test User"
    image = results["image"]
    assert image.startswith(FLATPAK_DOC) and image.endswith("/face.png"), image
    # Readable by the app through its own mount, and nothing in the answer names the host file.
    assert rh.sandboxed_request.reads == [b"the user's face"]
    assert not any(str(tmp_path) in str(value) for value in results.values()), results
    host, apps = document_info(bus, image)
    assert host == str(face)
    assert list(apps[APP]) == ["read"]


def test_account_picture_that_cannot_be_handed_over_is_left_out(env, tmp_path):
    bus, backend = env
    gone = tmp_path / "gone.png"
    for image in (gone.as_uri(), "https://example.org/face.png"):
        backend.set_response("GetUserInformation", 0, {"id": v("s", "tester"), "name": v("s", "Test User"),
                                                       "image": v("s", image)})
        kind, (response, results) = sandboxed_account(bus)
        assert kind == "RESPONSE" and response == 0
        assert results == {"id": "tester", "name": "Test User"}, (image, results)


def test_account_picture_of_a_host_app_is_passed_on(env, tmp_path):
    bus, backend = env
    face = tmp_path / "face.png"
    face.write_bytes(b"png")
    backend.set_response("GetUserInformation", 0, {"id": v("s", "tester"), "name": v("s", "Test User"),
                                                   "image": v("s", face.as_uri())})
    response, results = rh.Client(bus).request(ACCOUNT, "GetUserInformation", ("", {}), "(sa{sv})")
    assert response == 0 and results["image"] == face.as_uri()


def test_screenshot_uri_is_in_the_flatpak_apps_view(env, tmp_path):
    bus, backend = env
    shot = tmp_path / "shot.png"
    shot.write_bytes(b"pixels")
    backend.set_response("Screenshot", 0, {"uri": v("s", shot.as_uri())})
    kind, (response, results) = rh.sandboxed_request(bus, APP, SHOT, "Screenshot", "(sa{sv})",
                                                     "('', {'handle_token': <'sbx'>, 'interactive': <true>})",
                                                     read_back=True)
    assert kind == "RESPONSE" and response == 0
    uri = results["uri"]
    assert uri.startswith(FLATPAK_DOC) and uri.endswith("/shot.png"), uri
    assert rh.sandboxed_request.reads == [b"pixels"]
    assert document_info(bus, uri)[0] == str(shot)


def test_snap_app_keeps_the_runtime_dir_view(bus, tmp_path):
    """A Snap's confinement sees the store at $XDG_RUNTIME_DIR/doc, as the host does."""
    md = tmp_path / "snap"
    md.write_text("[Snap Info]\nInstanceName=hello\nAppName=hello\nCommonID=org.example.Hello\n")
    rh.start_documents(bus)
    backend = rh.setup(bus, ["account", "screenshot"],
                       portal_env={"XDG_DESKTOP_PORTAL_TEST_APP_INFO_KIND": "snap",
                                   "XDG_DESKTOP_PORTAL_TEST_SNAP_METADATA": str(md)})
    shot = tmp_path / "shot.png"
    shot.write_bytes(b"pixels")
    face = tmp_path / "face.png"
    face.write_bytes(b"face")
    backend.set_response("Screenshot", 0, {"uri": v("s", shot.as_uri())})
    backend.set_response("GetUserInformation", 0, {"id": v("s", "tester"), "name": v("s", "Test User"),
                                                   "image": v("s", face.as_uri())})
    client = rh.Client(bus)
    prefix = "file://" + os.path.join(bus.runtime_dir, "doc") + "/"
    response, results = client.request(SHOT, "Screenshot", ("", {"interactive": v("b", True)}), "(sa{sv})")
    assert response == 0 and results["uri"].startswith(prefix), results
    response, results = client.request(ACCOUNT, "GetUserInformation", ("", {}), "(sa{sv})")
    assert response == 0 and results["image"].startswith(prefix), results
    with open(GLib.filename_from_uri(results["image"])[0], "rb") as f:
        assert f.read() == b"face"
    assert document_info(bus, results["image"])[0] == str(face)


def test_register_wants_an_installed_application(bus):
    bus.start_portal()
    conn = bus.new_connection()
    with pytest.raises(GLib.Error) as e:
        bus.call(REG, "Register", ("org.example.NotInstalled", {}), "(sa{sv})", conn=conn)
    # The reference's name and words (clients match them).
    assert dbus_error_name(e.value) == "org.freedesktop.portal.Error.Failed"
    assert "Can't create registered app" in e.value.message
    # Installed, the same id registers (on a connection that made no call yet).
    bus.install_app("org.example.NotInstalled")
    conn = bus.new_connection()
    bus.call(REG, "Register", ("org.example.NotInstalled", {}), "(sa{sv})", conn=conn)
    # An id that is no application id stays InvalidArgument, installed or not.
    apps = os.path.join(bus.data_home, "applications")
    with open(os.path.join(apps, "nodots.desktop"), "w") as f:
        f.write("[Desktop Entry]\nType=Application\nName=x\nExec=true\n")
    with pytest.raises(GLib.Error) as e:
        bus.call(REG, "Register", ("nodots", {}), "(sa{sv})", conn=bus.new_connection())
    assert dbus_error_name(e.value) == "org.freedesktop.portal.Error.InvalidArgument"
