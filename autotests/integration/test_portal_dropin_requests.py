"""Drop-in behaviour of the request and session portals (issue 19): Inhibit's Response,
stored permissions for every caller, Background granted on first use with an autostart file
of the frontend's own, OpenURI's direct opens, and the option checks of Account, Email,
FileChooser and Camera. Each backend is a dbusmock template (templates/)."""
import configparser
import os

import pytest
from gi.repository import Gio, GLib

import limentest
import request_helpers as rh
from request_helpers import v

APP = "org.example.App"
HOST_APP = "org.example.Host"
# Behaviour not in this build yet: strict, so a fix that lands makes the mark go.
pending = pytest.mark.xfail(strict=True, reason="issue 19 item not fixed yet")
INH = "org.freedesktop.portal.Inhibit"
SHOT = "org.freedesktop.portal.Screenshot"
WALL = "org.freedesktop.portal.Wallpaper"
BG = "org.freedesktop.portal.Background"
OPEN = "org.freedesktop.portal.OpenURI"
STORE, STORE_PATH = rh.STORE, rh.STORE_PATH


set_permission = rh.set_permission
lookup = rh.lookup_permissions


def registered_client(bus, app_id=HOST_APP):
    """A host connection that registered @app_id as its first call."""
    client = rh.Client(bus)
    bus.install_app(app_id)
    bus.call("org.freedesktop.host.portal.Registry", "Register", (app_id, {}), "(sa{sv})", conn=client.conn)
    return client


# ---- Inhibit ----------------------------------------------------------------------------

def test_inhibit_answers_0_and_stays_until_close(bus):
    """ashpd waits for the Response; the Request still lifts the inhibition when closed."""
    backend = rh.setup(bus, ["inhibit"])
    client = rh.Client(bus)
    handle, pending = client.start(INH, "Inhibit", ("", 4, {"reason": v("s", "film")}), "(sua{sv})")
    assert pending.wait(5) == (0, {})
    assert backend.closed() == []
    bus.call(rh.REQUEST_IFACE, "Close", path=handle, conn=client.conn)
    assert limentest.wait_until(lambda: handle in backend.closed())


def test_inhibit_flags_masked_by_stored_permission(bus):
    backend = rh.setup(bus, ["inhibit"])
    rh.start_documents(bus)
    set_permission(bus, "inhibit", "inhibit", APP, ["logout", "idle"])
    kind, result = rh.sandboxed_request(bus, APP, INH, "Inhibit", "(sua{sv})",
                                        "('', uint32 12, {'handle_token': <'i1'>})")
    assert (kind, result) == ("RESPONSE", (0, {}))
    assert backend.args("Inhibit") == [[8]]
    # Nothing left of the flags: refused without asking the backend.
    kind, result = rh.sandboxed_request(bus, APP, INH, "Inhibit", "(sua{sv})",
                                        "('', uint32 4, {'handle_token': <'i2'>})")
    assert kind == "RESPONSE" and result[0] == 2
    assert backend.args("Inhibit") == [[8]]


def test_backend_closing_a_session_closes_the_apps_session(bus):
    backend = rh.setup(bus, ["inhibit"])
    client = rh.Client(bus)
    response, results = client.request(INH, "CreateMonitor", ("", {"session_handle_token": v("s", "m")}),
                                       "(sa{sv})")
    assert response == 0
    session = results["session_handle"]
    closed = []
    client.conn.signal_subscribe(None, "org.freedesktop.portal.Session", "Closed", session, None, 0,
                                 lambda *a: closed.append(a[2]))
    bus.call("org.limen.MockBackend", "CloseSession", (session,), "(o)", dest=rh.BACKEND_NAME)
    assert limentest.wait_until(lambda: closed, 5)
    assert closed == [session]
    with pytest.raises(GLib.Error):
        bus.call(INH, "QueryEndResponse", (session,), "(o)", conn=client.conn)


REFERENCE_FRONTEND = "/usr/libexec/xdg-desktop-portal"


def start_frontend(bus, frontend, names):
    """@frontend ("limen" or "reference", Debian's 1.16) in front of the mock backends @names;
    skips when the reference is asked for and not installed."""
    if frontend == "reference" and not os.path.exists(REFERENCE_FRONTEND):
        pytest.skip("xdg-desktop-portal 1.16 not installed")
    rh.write_config(bus, names)
    rh.Backend(bus, names)
    if frontend == "limen":
        bus.start_portal()
    else:
        bus.start([REFERENCE_FRONTEND, "--verbose"], env={"XDG_CURRENT_DESKTOP": "test"},
                  wait_name=limentest.PORTAL_BUS_NAME)


@pytest.mark.parametrize("frontend", ["limen", "reference"])
def test_session_closed_only_when_the_caller_did_not_close_it(bus, frontend):
    """Closed tells an app that a session ended without it: after its own Session.Close
    none comes, as from Debian's 1.16. A session the backend ends does get one."""
    start_frontend(bus, frontend, ["inhibit"])
    client = rh.Client(bus)
    closed = []
    client.conn.signal_subscribe(None, "org.freedesktop.portal.Session", "Closed", None, None, 0,
                                 lambda *a: closed.append(a[2]))
    sessions = []
    for token in ("mine", "backends"):
        response, results = client.request(INH, "CreateMonitor", ("", {"session_handle_token": v("s", token)}),
                                           "(sa{sv})")
        assert response == 0
        sessions.append(results["session_handle"])
    bus.call("org.freedesktop.portal.Session", "Close", path=sessions[0], conn=client.conn)
    bus.call("org.limen.MockBackend", "CloseSession", (sessions[1],), "(o)", dest=rh.BACKEND_NAME)
    assert limentest.wait_until(lambda: closed, 5)
    limentest.pump(0.3)
    assert closed == [sessions[1]]


# (backend template, portal interface, method, its arguments, their signature)
SESSION_CREATORS = [
    ("inhibit", "org.freedesktop.portal.Inhibit", "CreateMonitor", ("", {}), "(sa{sv})"),
    ("screencast", "org.freedesktop.portal.ScreenCast", "CreateSession", ({},), "(a{sv})"),
    ("remote_desktop", "org.freedesktop.portal.RemoteDesktop", "CreateSession", ({},), "(a{sv})"),
    ("globalshortcuts", "org.freedesktop.portal.GlobalShortcuts", "CreateSession", ({},), "(a{sv})"),
]


@pytest.mark.parametrize("frontend", ["limen", "reference"])
@pytest.mark.parametrize("creator", SESSION_CREATORS, ids=[c[0] for c in SESSION_CREATORS])
def test_session_handle_result_is_a_string(bus, frontend, creator):
    """CreateSession's (and CreateMonitor's) session_handle is an "s" holding the Session's
    path, as the specification says of these four and as Debian's 1.16 sends it: clients
    (libportal, OBS, WebRTC) read it with the "s" format, which finds nothing in an "o"."""
    name, iface, method, args, signature = creator
    start_frontend(bus, frontend, [name])
    client = rh.Client(bus)
    args = args[:-1] + ({"session_handle_token": v("s", "typed")},)
    _, pending = client.start(iface, method, args, signature)
    response, _ = pending.wait()
    assert response == 0
    handle = pending.raw.get_child_value(1).lookup_value("session_handle", None)
    assert handle.get_type_string() == "s"
    assert handle.get_string() == client.session_path("typed")


def test_input_capture_session_handle_result_is_an_object_path(bus):
    """InputCapture's specification types it "o" (and newer upstream sends that)."""
    start_frontend(bus, "limen", ["input_capture"])
    client = rh.Client(bus)
    _, pending = client.start("org.freedesktop.portal.InputCapture", "CreateSession",
                              ("", {"session_handle_token": v("s", "typed"), "capabilities": v("u", 1)}), "(sa{sv})")
    response, _ = pending.wait()
    assert response == 0
    handle = pending.raw.get_child_value(1).lookup_value("session_handle", None)
    assert handle.get_type_string() == "o" and handle.get_string() == client.session_path("typed")


def test_session_closed_signal_from_another_peer_is_ignored(bus):
    backend = rh.setup(bus, ["inhibit"])
    client = rh.Client(bus)
    response, results = client.request(INH, "CreateMonitor", ("", {"session_handle_token": v("s", "m")}),
                                       "(sa{sv})")
    session = results["session_handle"]
    intruder = bus.new_connection()
    intruder.emit_signal(None, session, "org.freedesktop.impl.portal.Session", "Closed", None)
    intruder.flush_sync(None)
    limentest.pump(0.3)
    bus.call(INH, "QueryEndResponse", (session,), "(o)", conn=client.conn)


# ---- stored permissions for every caller ------------------------------------------------

@pytest.fixture
def shots(bus, tmp_path):
    backend = rh.setup(bus, ["screenshot", "access", "wallpaper"])
    rh.start_documents(bus)
    shot = tmp_path / "shot.png"
    shot.write_bytes(b"\x89PNG")
    backend.set_response("Screenshot", 0, {"uri": v("s", shot.as_uri())})
    return backend


def test_host_app_with_stored_no_is_refused_a_screenshot(bus, shots):
    set_permission(bus, "screenshot", "screenshot", HOST_APP, ["no"])
    client = registered_client(bus)
    response, results = client.request(SHOT, "Screenshot", ("", {}), "(sa{sv})")
    assert response == 2 and shots.requests("Screenshot") == []


def test_host_app_with_stored_ask_is_asked_every_time(bus, shots):
    set_permission(bus, "screenshot", "screenshot", HOST_APP, ["ask"])
    client = registered_client(bus)
    for i in range(2):
        assert client.request(SHOT, "Screenshot", ("", {}), "(sa{sv})")[0] == 0
    assert len(shots.requests("AccessDialog")) == 2
    assert lookup(bus, "screenshot", "screenshot")[HOST_APP] == ["ask"]


def test_host_app_with_nothing_stored_is_asked_once_and_the_answer_kept(bus, shots):
    """As the reference: a host app is asked like any app, and its answer stored under its id."""
    client = registered_client(bus)
    assert client.request(SHOT, "Screenshot", ("", {}), "(sa{sv})")[0] == 0
    (method, handle, app_id, options), = shots.requests("AccessDialog")
    assert app_id == HOST_APP
    assert lookup(bus, "screenshot", "screenshot")[HOST_APP] == ["yes"]
    assert client.request(SHOT, "Screenshot", ("", {}), "(sa{sv})")[0] == 0
    assert len(shots.requests("AccessDialog")) == 1


def test_unidentified_host_apps_share_the_empty_ids_answer(bus, shots):
    """A host app without an app id is asked under the empty id (the dialog says the answer
    counts for every such app), and a refusal then holds for another one too."""
    shots.set_response("AccessDialog", 1)
    client = rh.Client(bus)
    assert client.request(SHOT, "Screenshot", ("", {}), "(sa{sv})")[0] == 2
    (method, handle, app_id, options), = shots.requests("AccessDialog")
    assert app_id == ""
    (title, subtitle, body), = shots.args("AccessDialog")
    assert "every unidentified app" in body
    assert lookup(bus, "screenshot", "screenshot")[""] == ["no"]
    assert rh.Client(bus).request(SHOT, "Screenshot", ("", {}), "(sa{sv})")[0] == 2
    assert len(shots.requests("AccessDialog")) == 1 and shots.requests("Screenshot") == []


def test_stored_ask_stays_ask_for_a_sandboxed_app(bus, shots):
    set_permission(bus, "screenshot", "screenshot", APP, ["ask"])
    for token in ("a1", "a2"):
        kind, result = rh.sandboxed_request(bus, APP, SHOT, "Screenshot", "(sa{sv})",
                                            f"('', {{'handle_token': <'{token}'>}})")
        assert result[0] == 0
    assert len(shots.requests("AccessDialog")) == 2
    assert lookup(bus, "screenshot", "screenshot")[APP] == ["ask"]


def test_modal_reaches_the_access_dialog(bus, shots):
    kind, result = rh.sandboxed_request(bus, APP, SHOT, "Screenshot", "(sa{sv})",
                                        "('', {'handle_token': <'m'>, 'modal': <false>})")
    assert result[0] == 0
    (method, handle, app_id, options), = shots.requests("AccessDialog")
    assert options.get("modal") is False
    # An answer given where nothing was stored is stored.
    assert lookup(bus, "screenshot", "screenshot")[APP] == ["yes"]


def test_wallpaper_without_preview_asks_first(bus, shots):
    """Nobody sees a wallpaper set without a preview coming: the Access dialog asks (and the
    answer is kept), as in the reference; with a preview the backend's dialog is the question."""
    shots.set_response("AccessDialog", 1)
    kind, result = rh.sandboxed_request(bus, APP, WALL, "SetWallpaperURI", "(ssa{sv})",
                                        "('', 'https://example.org/w.png', {'handle_token': <'w1'>})")
    assert result[0] == 2 and shots.requests("SetWallpaperURI") == []
    (method, handle, app_id, options), = shots.requests("AccessDialog")
    assert app_id == APP
    assert lookup(bus, "wallpaper", "wallpaper")[APP] == ["no"]
    set_permission(bus, "wallpaper", "wallpaper", APP, ["yes"])
    kind, result = rh.sandboxed_request(bus, APP, WALL, "SetWallpaperURI", "(ssa{sv})",
                                        "('', 'https://example.org/w.png', {'handle_token': <'w2'>})")
    assert result[0] == 0 and len(shots.requests("SetWallpaperURI")) == 1
    assert len(shots.requests("AccessDialog")) == 1


def test_wallpaper_with_preview_is_the_backends_question(bus, shots):
    kind, result = rh.sandboxed_request(bus, APP, WALL, "SetWallpaperURI", "(ssa{sv})",
                                        "('', 'https://example.org/w.png', "
                                        "{'handle_token': <'w3'>, 'show-preview': <true>})")
    assert result[0] == 0 and len(shots.requests("SetWallpaperURI")) == 1
    assert shots.requests("AccessDialog") == []
    assert APP not in lookup(bus, "wallpaper", "wallpaper")


def test_host_app_with_stored_no_is_refused_a_wallpaper(bus, shots):
    set_permission(bus, "wallpaper", "wallpaper", HOST_APP, ["no"])
    client = registered_client(bus)
    response, results = client.request(WALL, "SetWallpaperURI", ("", "https://example.org/w.png", {}), "(ssa{sv})")
    assert response == 2 and shots.requests("SetWallpaperURI") == []


# ---- Background -------------------------------------------------------------------------

@pytest.fixture
def bg(bus):
    backend = rh.setup(bus, ["background", "access"])
    rh.start_documents(bus)
    return backend


def autostart_file(bus, app_id=APP):
    return os.path.join(bus.config_home, "autostart", f"{app_id}.desktop")


def read_desktop(path):
    kf = GLib.KeyFile()
    kf.load_from_file(path, GLib.KeyFileFlags.NONE)
    return {k: kf.get_string("Desktop Entry", k) for k in kf.get_keys("Desktop Entry")[0]}


def test_background_granted_on_first_use_and_recorded(bus, bg):
    text = "('', {'handle_token': <'b1'>, 'reason': <'sync'>})"
    kind, result = rh.sandboxed_request(bus, APP, BG, "RequestBackground", "(sa{sv})", text)
    assert result == (0, {"background": True, "autostart": False})
    assert bg.requests("AccessDialog") == []
    assert lookup(bus, "background", "background")[APP] == ["yes"]


def test_background_stored_no_is_response_1(bus, bg):
    set_permission(bus, "background", "background", APP, ["no"])
    kind, result = rh.sandboxed_request(bus, APP, BG, "RequestBackground", "(sa{sv})",
                                        "('', {'handle_token': <'b2'>, 'autostart': <true>})")
    assert result[0] == 1
    assert not os.path.exists(autostart_file(bus))
    assert bg.args("EnableAutostart") == []


def test_background_writes_the_autostart_file_itself(bus, bg):
    # The entry shows the app's own name, from its installed desktop file.
    apps = os.path.join(bus.data_home, "applications")
    os.makedirs(apps, exist_ok=True)
    with open(os.path.join(apps, APP + ".desktop"), "w") as f:
        f.write("[Desktop Entry]\nType=Application\nName=Example App\nExec=true\n")
    text = ("('', {'handle_token': <'b3'>, 'autostart': <true>, 'dbus-activatable': <true>, "
            "'commandline': <['my-app', '--background', 'two words', '100%']>})")
    kind, result = rh.sandboxed_request(bus, APP, BG, "RequestBackground", "(sa{sv})", text)
    assert result == (0, {"background": True, "autostart": True})
    entry = read_desktop(autostart_file(bus))
    assert entry["Type"] == "Application" and entry["Name"] == "Example App"
    assert entry["Exec"] == f"flatpak run --command=my-app {APP} --background \"two words\" 100%%"
    assert entry["X-Flatpak"] == APP and entry["X-XDP-Autostart"] == APP
    assert entry["DBusActivatable"] == "true"
    # The deprecated backend method is not used.
    assert bg.args("EnableAutostart") == []
    # Autostart off again: the file goes.
    kind, result = rh.sandboxed_request(bus, APP, BG, "RequestBackground", "(sa{sv})",
                                        "('', {'handle_token': <'b4'>, 'autostart': <false>})")
    assert result == (0, {"background": True, "autostart": False})
    assert not os.path.exists(autostart_file(bus))


# ---- OpenURI ----------------------------------------------------------------------------

def install_app(bus, desktop_id, types, log):
    apps = os.path.join(bus.data_home, "applications")
    os.makedirs(apps, exist_ok=True)
    with open(os.path.join(apps, desktop_id + ".desktop"), "w") as f:
        f.write("[Desktop Entry]\nType=Application\nName=" + desktop_id + "\n"
                f"Exec=sh -c 'echo \"{desktop_id} $1\" >> {log}' sh %u\n"
                "MimeType=" + ";".join(types) + ";\n")


def write_mime_cache(bus, mapping, defaults=None):
    apps = os.path.join(bus.data_home, "applications")
    with open(os.path.join(apps, "mimeinfo.cache"), "w") as f:
        f.write("[MIME Cache]\n")
        for t, ids in mapping.items():
            f.write(f"{t}=" + "".join(i + ".desktop;" for i in ids) + "\n")
    if defaults:
        with open(os.path.join(bus.config_home, "mimeapps.list"), "w") as f:
            f.write("[Default Applications]\n")
            for t, i in defaults.items():
                f.write(f"{t}={i}.desktop\n")


@pytest.fixture
def opener(bus):
    log = os.path.join(bus.root, "opened.log")
    open(log, "w").close()
    return log


def start_open_uri(bus):
    backend = rh.setup(bus, ["appchooser"])
    rh.start_documents(bus)
    return backend


def opened(log):
    return open(log).read().split("\n")


@pytest.mark.parametrize("uri,scheme", [("https://example.org/", "https"), ("mailto:a@example.org", "mailto"),
                                        ("webcal://example.org/c.ics", "webcal")])
def test_open_uri_uses_the_default_handler_without_asking(bus, opener, uri, scheme):
    t = f"x-scheme-handler/{scheme}"
    install_app(bus, "org.example.First", [t], opener)
    install_app(bus, "org.example.Second", [t], opener)
    write_mime_cache(bus, {t: ["org.example.First", "org.example.Second"]}, {t: "org.example.Second"})
    backend = start_open_uri(bus)
    kind, result = rh.sandboxed_request(bus, APP, OPEN, "OpenURI", "(ssa{sv})",
                                        f"('', '{uri}', {{'handle_token': <'o'>}})")
    assert result[0] == 0
    assert backend.requests("ChooseApplication") == []
    assert limentest.wait_until(lambda: f"org.example.Second {uri}" in opened(opener))


def test_open_uri_with_one_handler_opens_it_directly(bus, opener):
    t = "x-scheme-handler/limentest"
    install_app(bus, "org.example.Only", [t], opener)
    write_mime_cache(bus, {t: ["org.example.Only"]})
    backend = start_open_uri(bus)
    kind, result = rh.sandboxed_request(bus, APP, OPEN, "OpenURI", "(ssa{sv})",
                                        "('', 'limentest:one', {'handle_token': <'o'>})")
    assert result[0] == 0 and backend.requests("ChooseApplication") == []
    assert limentest.wait_until(lambda: "org.example.Only limentest:one" in opened(opener))


def test_open_uri_always_ask_for_the_type_shows_the_chooser(bus, opener):
    t = "x-scheme-handler/https"
    install_app(bus, "org.example.First", [t], opener)
    write_mime_cache(bus, {t: ["org.example.First"]}, {t: "org.example.First"})
    backend = start_open_uri(bus)
    bus.call(STORE, "SetValue", ("desktop-used-apps", True, t, v("a{sv}", {"always-ask": v("b", True)})),
             "(sbsv)", dest=STORE, path=STORE_PATH)
    kind, result = rh.sandboxed_request(bus, APP, OPEN, "OpenURI", "(ssa{sv})",
                                        "('', 'https://example.org/', {'handle_token': <'o'>})")
    assert result[0] == 0
    assert len(backend.requests("ChooseApplication")) == 1


def test_open_local_file_sends_uri_and_filename_and_sniffs_contents(bus, opener, tmp_path):
    """An extension-less text file is text/plain by its contents; the chooser gets the
    file's name and its URI."""
    install_app(bus, "org.example.Editor", ["text/plain"], opener)
    install_app(bus, "org.example.Viewer", ["text/plain"], opener)
    write_mime_cache(bus, {"text/plain": ["org.example.Editor", "org.example.Viewer"]})
    backend = start_open_uri(bus)
    path = os.path.join(bus.home, "notes")
    with open(path, "w") as f:
        f.write("Just some words.\nNothing else.\n")
    client = rh.Client(bus)
    response, results = client.request(OPEN, "OpenURI", ("", GLib.filename_to_uri(path), {}), "(ssa{sv})")
    assert response == 0
    (method, handle, app_id, options), = backend.requests("ChooseApplication")
    assert options["content_type"] == "text/plain"
    assert options["filename"] == "notes"
    assert options["uri"] == GLib.filename_to_uri(path)
    assert sorted(backend.args("ChooseApplication")[0][0]) == ["org.example.Editor", "org.example.Viewer"]


def test_open_uri_chooser_success_without_choice_opens_nothing(bus, opener):
    """As the reference: a chooser's success without a choice is passed on as success, and
    nothing is opened."""
    t = "x-scheme-handler/limentest"
    install_app(bus, "org.example.First", [t], opener)
    install_app(bus, "org.example.Second", [t], opener)
    write_mime_cache(bus, {t: ["org.example.First", "org.example.Second"]})
    backend = start_open_uri(bus)
    backend.set_response("ChooseApplication", 0, {})
    response, results = rh.Client(bus).request(OPEN, "OpenURI", ("", "limentest:x", {}), "(ssa{sv})")
    assert response == 0
    limentest.pump(0.3)
    assert not any(line for line in opened(opener))


@pytest.mark.parametrize("below", ["file.txt", "dir/file.txt"])
@pytest.mark.parametrize("view", ["", "by-app/org.example.Viewer/"])
def test_open_file_of_the_document_store_names_the_host_file(bus, opener, below, view):
    """An fd of a file in the document store (a sandboxed app's document, here a file inside an
    exported folder, reached through the store or an app's view of it): the chooser and the
    handler get the file's place on the host, as the reference gives them."""
    install_app(bus, "org.example.Viewer", ["text/plain"], opener)
    install_app(bus, "org.example.Editor", ["text/plain"], opener)
    write_mime_cache(bus, {"text/plain": ["org.example.Viewer", "org.example.Editor"]})
    backend = start_open_uri(bus)
    folder = os.path.join(bus.home, "exported")
    os.makedirs(os.path.join(folder, "dir"))
    fd = os.open(folder, os.O_PATH)
    try:
        ids = bus.call("org.freedesktop.portal.Documents", "AddFull", ([0], 8, "org.example.Viewer", ["read"]),
                       "(ahusas)", dest="org.freedesktop.portal.Documents",
                       path="/org/freedesktop/portal/documents", fds=[fd])[0]
    finally:
        os.close(fd)
    host_file = os.path.join(folder, below)
    with open(host_file, "w") as f:
        f.write("in the store\n")
    store_file = os.path.join(bus.runtime_dir, "doc", view + ids[0], "exported", below)
    backend.set_response("ChooseApplication", 0, {"choice": v("s", "org.example.Editor")})
    with open(store_file) as f:
        response, results = rh.Client(bus).request(OPEN, "OpenFile", ("", 0, {}), "(sha{sv})",
                                                   fds=[f.fileno()], options_index=2)
    assert response == 0
    (method, handle, app_id, options), = backend.requests("ChooseApplication")
    assert options["uri"] == GLib.filename_to_uri(host_file)
    assert options["filename"] == "file.txt"
    # GIO hands a local file's path to a handler's %u.
    assert limentest.wait_until(lambda: f"org.example.Editor {host_file}" in opened(opener)), opened(opener)


# ---- Account, Email, FileChooser, Camera -------------------------------------------------

def test_account_long_reason_is_dropped_not_fatal(bus):
    backend = rh.setup(bus, ["account"])
    client = rh.Client(bus)
    for reason in ("r" * 257, "r" * 5000):
        response, results = client.request("org.freedesktop.portal.Account", "GetUserInformation",
                                           ("", {"reason": v("s", reason)}), "(sa{sv})")
        assert response == 0
    assert all("reason" not in r[3] for r in backend.requests("GetUserInformation"))
    client.request("org.freedesktop.portal.Account", "GetUserInformation",
                   ("", {"reason": v("s", "r" * 256)}), "(sa{sv})")
    assert backend.requests("GetUserInformation")[-1][3]["reason"] == "r" * 256


@pytest.mark.parametrize("subject", ["s" * 201, "two\nlines", "carriage\rreturn"],
                         ids=["201", "newline", "return"])
def test_email_bad_subject_is_invalid_argument(bus, subject):
    backend = rh.setup(bus, ["email"])
    with pytest.raises(GLib.Error) as e:
        rh.Client(bus).request("org.freedesktop.portal.Email", "ComposeEmail",
                               ("", {"subject": v("s", subject)}), "(sa{sv})")
    assert rh.error_name(e) == "org.freedesktop.portal.Error.InvalidArgument" and "subject" in e.value.message
    assert backend.requests("ComposeEmail") == []


def test_email_subject_of_200_is_fine(bus):
    backend = rh.setup(bus, ["email"])
    assert rh.Client(bus).request("org.freedesktop.portal.Email", "ComposeEmail",
                                  ("", {"subject": v("s", "s" * 200)}), "(sa{sv})")[0] == 0


FILTER_A = ("Text", [(0, "*.txt")])
FILTER_B = ("Images", [(1, "image/png")])


@pytest.mark.parametrize("method", ["OpenFile", "SaveFile"])
def test_current_filter_must_be_one_of_the_filters(bus, method):
    backend = rh.setup(bus, ["filechooser"])
    client = rh.Client(bus)
    opts = {"filters": v("a(sa(us))", [FILTER_A]), "current_filter": v("(sa(us))", FILTER_B)}
    with pytest.raises(GLib.Error) as e:
        client.request("org.freedesktop.portal.FileChooser", method, ("", "t", opts), "(ssa{sv})")
    assert rh.error_name(e) == "org.freedesktop.portal.Error.InvalidArgument" and "current_filter" in e.value.message
    # In the list, or no list at all: fine.
    opts["filters"] = v("a(sa(us))", [FILTER_A, FILTER_B])
    client.request("org.freedesktop.portal.FileChooser", method, ("", "t", opts), "(ssa{sv})")
    client.request("org.freedesktop.portal.FileChooser", method, ("", "t", {"current_filter": opts["current_filter"]}),
                   "(ssa{sv})")
    assert len(backend.requests(method)) == 2


@pytest.mark.parametrize("choices", [
    [("c", "", [], "true")],
    [("c", "Colour", [("r", "Red"), ("g", "")], "r")],
], ids=["empty-label", "empty-option-label"])
def test_choices_with_empty_labels_are_invalid(bus, choices):
    backend = rh.setup(bus, ["filechooser"])
    with pytest.raises(GLib.Error) as e:
        rh.Client(bus).request("org.freedesktop.portal.FileChooser", "OpenFile",
                               ("", "t", {"choices": v("a(ssa(ss)s)", choices)}), "(ssa{sv})")
    assert rh.error_name(e) == "org.freedesktop.portal.Error.InvalidArgument" and "choices" in e.value.message
    assert backend.requests("OpenFile") == []


def test_save_file_with_several_uris_reaches_a_host_app_as_is(bus):
    """As from the reference: a host app gets the backend's SaveFile answer unchanged (a
    sandboxed app is not given several files for one save: test_portal_file_chooser)."""
    backend = rh.setup(bus, ["filechooser"])
    backend.set_response("SaveFile", 0, {"uris": v("as", ["file:///tmp/a", "file:///tmp/b"])})
    response, results = rh.Client(bus).request("org.freedesktop.portal.FileChooser", "SaveFile", ("", "t", {}),
                                               "(ssa{sv})")
    assert response == 0 and list(results["uris"]) == ["file:///tmp/a", "file:///tmp/b"]


def test_camera_refused_while_lockdown_disables_it(bus):
    rh.write_config(bus, ["lockdown", "access"])
    rh.Backend(bus, ["lockdown", "access"], params={"disable-camera": True})
    bus.start_portal()
    with pytest.raises(GLib.Error) as e:
        rh.Client(bus).request("org.freedesktop.portal.Camera", "AccessCamera", ({},), "(a{sv})")
    assert rh.error_name(e) == "org.freedesktop.portal.Error.NotAllowed"
