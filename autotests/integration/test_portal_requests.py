"""The request portals besides FileChooser through limen-portal, each against its dbusmock
backend (templates/): success, cancel, Close, a killed backend, a vanished caller, bad
input, and a bwrap-sandboxed caller."""
import os
import time

import pytest
from gi.repository import GLib

import limentest
import request_helpers as rh
from request_helpers import v

APP = "org.example.App"
ALL = ["account", "access", "appchooser", "screenshot", "print", "email", "secret", "wallpaper", "inhibit",
       "lockdown"]
HANDLER = "org.example.Handler"
HANDLER2 = "org.example.Handler2"

# name: (portal interface, method, args, signature, impl method, GVariant text of args for the sandbox)
CASES = {
    "account": ("org.freedesktop.portal.Account", "GetUserInformation", ("", {"reason": v("s", "r")}),
                "(sa{sv})", "GetUserInformation", "('', {'handle_token': <'sbx'>})"),
    "screenshot": ("org.freedesktop.portal.Screenshot", "Screenshot", ("", {"interactive": v("b", True)}),
                   "(sa{sv})", "Screenshot", "('', {'handle_token': <'sbx'>, 'interactive': <true>})"),
    "pick-color": ("org.freedesktop.portal.Screenshot", "PickColor", ("", {}), "(sa{sv})", "PickColor", None),
    "prepare-print": ("org.freedesktop.portal.Print", "PreparePrint",
                      ("", "Doc", {"copies": v("s", "2")}, {"PPDName": v("s", "A4")}, {"modal": v("b", True)}),
                      "(ssa{sv}a{sv}a{sv})", "PreparePrint",
                      "('', 'Doc', @a{sv} {}, @a{sv} {}, {'handle_token': <'sbx'>})"),
    "email": ("org.freedesktop.portal.Email", "ComposeEmail",
              ("", {"address": v("s", "a@example.org"), "subject": v("s", "Hi")}), "(sa{sv})", "ComposeEmail",
              "('', {'handle_token': <'sbx'>, 'address': <'a@example.org'>})"),
    "open-uri": ("org.freedesktop.portal.OpenURI", "OpenURI", ("", "limentest:hello", {}), "(ssa{sv})",
                 "ChooseApplication", "('', 'limentest:hello', {'handle_token': <'sbx'>})"),
    "wallpaper": ("org.freedesktop.portal.Wallpaper", "SetWallpaperURI",
                  ("", "https://example.org/w.png", {"set-on": v("s", "both")}), "(ssa{sv})", "SetWallpaperURI",
                  "('', 'https://example.org/w.png', {'handle_token': <'sbx'>})"),
}


def install_handler(bus):
    """Two handlers of each type, so that the chooser is asked (a type with one handler, or a
    folder with a system default, is opened without asking: test_portal_dropin_requests.py)."""
    apps = os.path.join(bus.data_home, "applications")
    os.makedirs(apps, exist_ok=True)
    log = os.path.join(bus.root, "handler.log")
    for handler in (HANDLER, HANDLER2):
        with open(os.path.join(apps, handler + ".desktop"), "w") as f:
            f.write("[Desktop Entry]\nType=Application\nName=Handler\n"
                    f"Exec=sh -c 'echo \"$1\" >> {log}' sh %u\n"
                    "MimeType=x-scheme-handler/limentest;text/x-limentest;inode/directory;\n")
    # GIO finds handlers through the cache update-desktop-database would write.
    with open(os.path.join(apps, "mimeinfo.cache"), "w") as f:
        f.write("[MIME Cache]\n")
        for t in ("x-scheme-handler/limentest", "text/x-limentest", "inode/directory"):
            f.write(f"{t}={HANDLER}.desktop;{HANDLER2}.desktop;\n")
    return log


@pytest.fixture
def env(bus):
    log = install_handler(bus)
    backend = rh.setup(bus, ALL)
    return bus, backend, rh.Client(bus), log


@pytest.mark.parametrize("case", sorted(CASES))
def test_success(env, case):
    bus, backend, client, log = env
    iface, method, args, sig, impl, _ = CASES[case]
    response, results = client.request(iface, method, args, sig)
    assert response == 0
    (m, handle, app_id, opts), = backend.requests(impl)
    assert handle.startswith("/org/freedesktop/portal/desktop/request/")
    assert app_id == ""
    if case == "account":
        assert results["name"] == "Test User" and opts == {"reason": "r"}
    if case == "pick-color":
        assert results["color"] == (0.5, 0.25, 1.0)
    if case == "prepare-print":
        assert results["token"] == 7
        assert backend.args("PreparePrint")[0] == [{"copies": "2"}, {"PPDName": "A4"}]
    if case == "email":
        assert opts == {"address": "a@example.org", "subject": "Hi"}
    if case == "open-uri":
        assert HANDLER in backend.args("ChooseApplication")[0][0]
        assert opts["content_type"] == "x-scheme-handler/limentest" and opts["uri"] == "limentest:hello"
        assert limentest.wait_until(lambda: os.path.exists(log) and "limentest:hello" in open(log).read())
    if case == "wallpaper":
        assert backend.args("SetWallpaperURI")[0] == ["https://example.org/w.png"]
        assert opts == {"set-on": "both"}


@pytest.mark.parametrize("case", sorted(CASES))
def test_cancel(env, case):
    bus, backend, client, log = env
    iface, method, args, sig, impl, _ = CASES[case]
    backend.set_response(impl, 1, {})
    assert client.request(iface, method, args, sig) == (1, {})


@pytest.mark.parametrize("case", sorted(CASES))
def test_close_mid_request(env, case):
    bus, backend, client, log = env
    iface, method, args, sig, impl, _ = CASES[case]
    backend.set_response(impl, 0, {}, delay_ms=-1)
    handle, pending = client.start(iface, method, args, sig)
    assert limentest.wait_until(lambda: backend.requests(impl))
    pending.close_request(bus)
    assert limentest.wait_until(lambda: handle in backend.closed())
    limentest.pump(0.1)
    assert not pending.got()


@pytest.mark.parametrize("case", sorted(CASES))
def test_backend_killed(env, case):
    bus, backend, client, log = env
    iface, method, args, sig, impl, _ = CASES[case]
    backend.set_response(impl, 0, {}, delay_ms=-1)
    handle, pending = client.start(iface, method, args, sig)
    assert limentest.wait_until(lambda: backend.requests(impl))
    t0 = time.monotonic()
    backend.kill()
    assert pending.wait(5)[0] == 2
    # Watched, not timed out (25 s); how fast is bench-requests' business.
    assert pending.time - t0 < 3


@pytest.mark.parametrize("case", sorted(CASES))
def test_caller_vanishes(env, case):
    bus, backend, _, log = env
    iface, method, args, sig, impl, _ = CASES[case]
    backend.set_response(impl, 0, {}, delay_ms=-1)
    client = rh.Client(bus)
    handle, pending = client.start(iface, method, args, sig)
    assert limentest.wait_until(lambda: backend.requests(impl))
    client.close()
    assert limentest.wait_until(lambda: handle in backend.closed())


@pytest.mark.parametrize("case", sorted(c for c in CASES if CASES[c][5]))
def test_sandboxed_caller(env, case, tmp_path):
    bus, backend, client, log = env
    iface, method, args, sig, impl, text = CASES[case]
    if case == "screenshot":
        # The picture reaches a sandboxed app as a document.
        rh.start_documents(bus)
        shot = tmp_path / "s.png"
        shot.write_bytes(b"png")
        backend.set_response("Screenshot", 0, {"uri": v("s", shot.as_uri())})
    kind, result = rh.sandboxed_request(bus, APP, iface, method, sig, text)
    assert kind == "RESPONSE", result
    assert result[0] == 0
    assert backend.requests(impl)[-1][2] == APP
    if case == "screenshot":
        assert "/doc/" in result[1]["uri"]


def test_sandboxed_wallpaper_file_uri_is_passed_on(env):
    """A file: URI from a sandbox goes to the backend as given, as the reference passes it
    (the app learns nothing from it; the person or the stored permission decides)."""
    bus, backend, client, log = env
    kind, result = rh.sandboxed_request(bus, APP, "org.freedesktop.portal.Wallpaper", "SetWallpaperURI", "(ssa{sv})",
                                        "('', 'file:///test', {'handle_token': <'w'>})")
    assert kind == "RESPONSE", result
    assert result[0] == 0
    assert backend.args("SetWallpaperURI")[-1] == ["file:///test"]


BAD = [
    ("account", "org.freedesktop.portal.Account", "GetUserInformation", ("", {"reason": v("i", 1)}), "(sa{sv})", "reason"),
    ("screenshot", "org.freedesktop.portal.Screenshot", "Screenshot", ("", {"interactive": v("s", "y")}), "(sa{sv})", "interactive"),
    ("screenshot", "org.freedesktop.portal.Screenshot", "Screenshot", ("", {"handle_token": v("s", "..")}), "(sa{sv})", "handle_token"),
    ("print", "org.freedesktop.portal.Print", "PreparePrint", ("", "T", {"x": v("as", ["a"])}, {}, {}), "(ssa{sv}a{sv}a{sv})", "settings"),
    ("email", "org.freedesktop.portal.Email", "ComposeEmail", ("", {"address": v("s", "not an address")}), "(sa{sv})", "address"),
    ("email", "org.freedesktop.portal.Email", "ComposeEmail", ("", {"cc": v("as", ["a@b", "x"])}), "(sa{sv})", "cc"),
    ("email", "org.freedesktop.portal.Email", "ComposeEmail", ("", {"subject": v("s", "a\nBcc: x@y")}), "(sa{sv})", "subject"),
    ("email", "org.freedesktop.portal.Email", "ComposeEmail", ("", {"attachment_fds": v("ah", [0])}), "(sa{sv})", "attachment_fds"),
    ("open-uri", "org.freedesktop.portal.OpenURI", "OpenURI", ("", "not a uri", {}), "(ssa{sv})", "uri"),
    ("open-uri", "org.freedesktop.portal.OpenURI", "OpenURI", ("", "limentest:x", {"ask": v("s", "y")}), "(ssa{sv})", "ask"),
    ("open-uri", "org.freedesktop.portal.OpenURI", "OpenURI", ("", "limentest:x", {"handle_token": v("s", "a-b.c")}), "(ssa{sv})", "handle_token"),
    ("open-uri", "org.freedesktop.portal.OpenURI", "OpenURI", ("", "limentest:x", {"handle_token": v("s", "")}), "(ssa{sv})", "handle_token"),
    ("open-uri", "org.freedesktop.portal.OpenURI", "OpenURI", ("", "limentest:x", {"handle_token": v("s", "\u00fcber")}), "(ssa{sv})", "handle_token"),
    ("wallpaper", "org.freedesktop.portal.Wallpaper", "SetWallpaperURI", ("", "https://x/y", {"set-on": v("s", "ceiling")}), "(ssa{sv})", "set-on"),
    ("inhibit", "org.freedesktop.portal.Inhibit", "Inhibit", ("", 16, {}), "(sua{sv})", "flags"),
    ("inhibit", "org.freedesktop.portal.Inhibit", "Inhibit", ("", 4, {"reason": v("b", True)}), "(sua{sv})", "reason"),
    # A bad token is refused first, before a bad argument or option (as in the reference).
    ("inhibit", "org.freedesktop.portal.Inhibit", "Inhibit", ("", 0, {"handle_token": v("s", "a-b")}), "(sua{sv})", "handle_token"),
    ("email", "org.freedesktop.portal.Email", "ComposeEmail",
     ("", {"address": v("s", "not an address"), "handle_token": v("s", "a.b")}), "(sa{sv})", "handle_token"),
]


@pytest.mark.parametrize("bad", BAD, ids=[f"{b[0]}-{b[5]}-{i}" for i, b in enumerate(BAD)])
def test_bad_input(env, bad):
    bus, backend, client, log = env
    _, iface, method, args, sig, key = bad
    with pytest.raises(GLib.Error) as e:
        bus.call(iface, method, args, sig, conn=client.conn, fds=[] if "attachment_fds" == key else None)
    assert rh.error_name(e) == "org.freedesktop.portal.Error.InvalidArgument"
    assert key in e.value.message
    assert backend.requests() == []
    assert client.request(*CASES["account"][:4])[0] == 0


# ---- OpenURI specifics ------------------------------------------------------------

def test_open_uri_file_from_sandbox_is_refused(env):
    bus, backend, client, log = env
    kind, name = rh.sandboxed_request(bus, APP, "org.freedesktop.portal.OpenURI", "OpenURI", "(ssa{sv})",
                                      "('', 'file:///etc/passwd', {'handle_token': <'f'>})")
    assert (kind, name) == ("ERROR", "org.freedesktop.portal.Error.InvalidArgument")
    assert backend.requests() == []


@pytest.mark.parametrize("index,fds", [(7, None), (7, 1), (-1, 1), (0, None)])
def test_open_file_bad_fd_index_is_immediate(env, index, fds, tmp_path):
    bus, backend, client, log = env
    f = tmp_path / "x.txt"
    f.write_text("x")
    fdl = [os.open(str(f), os.O_RDONLY)] if fds else None
    with pytest.raises(GLib.Error) as e:
        bus.call("org.freedesktop.portal.OpenURI", "OpenFile", ("", index, {}), "(sha{sv})", conn=client.conn,
                 fds=fdl if fdl is not None else [], timeout=2000)
    assert rh.error_name(e) == "org.freedesktop.portal.Error.InvalidArgument"
    if fdl:
        os.close(fdl[0])


@pytest.mark.parametrize("token", ["..", "a-b.c", "", "t\u00e9st"])
def test_open_file_bad_tokens(env, token, tmp_path):
    bus, backend, client, log = env
    f = tmp_path / "x.limentest"
    f.write_text("x")
    fd = os.open(str(f), os.O_RDONLY)
    with pytest.raises(GLib.Error) as e:
        bus.call("org.freedesktop.portal.OpenURI", "OpenFile", ("", 0, {"handle_token": v("s", token)}),
                 "(sha{sv})", conn=client.conn, fds=[fd], timeout=2000)
    os.close(fd)
    assert rh.error_name(e) == "org.freedesktop.portal.Error.InvalidArgument"


def test_open_file_with_fd_launches_handler_with_the_host_path(env, tmp_path):
    bus, backend, client, log = env
    d = tmp_path / "dir"
    d.mkdir()
    fd = os.open(str(d), os.O_RDONLY | os.O_DIRECTORY)
    response, _ = client.request("org.freedesktop.portal.OpenURI", "OpenFile", ("", 0, {}), "(sha{sv})", fds=[fd])
    os.close(fd)
    assert response == 0
    # A folder opens in the system's default folder handler without asking, as by the reference.
    assert backend.requests("ChooseApplication") == []
    # GIO hands a local file to %u as a path.
    assert limentest.wait_until(lambda: os.path.exists(log) and str(d) in open(log).read()), \
        open(log).read() if os.path.exists(log) else "handler not run"


def test_open_uri_lockdown(bus):
    install_handler(bus)
    rh.write_config(bus, ["appchooser", "lockdown"])
    rh.Backend(bus, ["lockdown", "appchooser"], params={"disable-application-handlers": True})
    bus.start_portal()
    with pytest.raises(GLib.Error) as e:
        rh.Client(bus).request(*CASES["open-uri"][:4])
    assert rh.error_name(e) == "org.freedesktop.portal.Error.NotAllowed"


# ---- Screenshot permission ----------------------------------------------------------

def test_sandboxed_noninteractive_screenshot_asks_and_remembers(env, tmp_path):
    bus, backend, client, log = env
    rh.start_documents(bus)
    shot = tmp_path / "shot.png"
    shot.write_bytes(b"\x89PNG")
    backend.set_response("Screenshot", 0, {"uri": v("s", shot.as_uri())})
    backend.set_response("AccessDialog", 1, {})
    kind, result = rh.sandboxed_request(bus, APP, "org.freedesktop.portal.Screenshot", "Screenshot", "(sa{sv})",
                                        "('', {'handle_token': <'s1'>})")
    assert result[0] == 2 and backend.requests("Screenshot") == []
    assert len(backend.requests("AccessDialog")) == 1
    # The "no" was stored: no second dialog.
    kind, result = rh.sandboxed_request(bus, APP, "org.freedesktop.portal.Screenshot", "Screenshot", "(sa{sv})",
                                        "('', {'handle_token': <'s2'>})")
    assert result[0] == 2 and len(backend.requests("AccessDialog")) == 1
    # Allowed by the store: the screenshot comes as a read-only document.
    bus.call("org.freedesktop.impl.portal.PermissionStore", "SetPermission",
             ("screenshot", True, "screenshot", APP, ["yes"]), "(sbssas)",
             dest="org.freedesktop.impl.portal.PermissionStore", path="/org/freedesktop/impl/portal/PermissionStore")
    kind, result = rh.sandboxed_request(bus, APP, "org.freedesktop.portal.Screenshot", "Screenshot", "(sa{sv})",
                                        "('', {'handle_token': <'s3'>})")
    assert result[0] == 0
    assert "/doc/" in result[1]["uri"] and result[1]["uri"].endswith("/shot.png")


# ---- Print / Secret / Email with fds -------------------------------------------------

def test_print_sends_the_checked_fd(env, tmp_path):
    bus, backend, client, log = env
    doc = tmp_path / "doc.pdf"
    doc.write_bytes(b"%PDF-1.4 test")
    fd = os.open(str(doc), os.O_RDONLY)
    response, _ = client.request("org.freedesktop.portal.Print", "Print", ("", "Doc", 0, {"token": v("u", 7)}),
                                 "(ssha{sv})", fds=[fd])
    os.close(fd)
    assert response == 0
    assert bytes(backend.args("Print")[0][0]).startswith(b"%PDF-1.4")
    assert backend.requests("Print")[0][3] == {"token": 7}


def test_print_options_as_upstream_takes_them(env, tmp_path):
    """Print's options are filtered as upstream's frontend filters them (1.16 crashes on a
    mistyped token): a key of the wrong type or
    an unknown output format is left out and the call goes on (a token that is not a u
    prints nothing without a dialog); supported_output_file_formats (version 3) reaches the
    backend for Print as for PreparePrint. The settings dicts are still checked strictly."""
    bus, backend, client, log = env
    doc = tmp_path / "doc.pdf"
    doc.write_bytes(b"%PDF-1.4 test")
    fd = os.open(str(doc), os.O_RDONLY)
    try:
        for options, reached in [
                ({"token": v("s", "token"), "modal": v("b", True), "supported_output_file_formats": v("as", ["svg"])},
                 {"modal": True, "supported_output_file_formats": ["svg"]}),
                ({"modal": v("s", "no"), "supported_output_file_formats": v("as", ["doc"]), "token": v("u", 3)},
                 {"token": 3})]:
            response, _ = client.request("org.freedesktop.portal.Print", "Print", ("", "Doc", 0, options),
                                         "(ssha{sv})", fds=[fd])
            assert response == 0
            assert backend.requests("Print")[-1][3] == reached
    finally:
        os.close(fd)
    response, _ = client.request("org.freedesktop.portal.Print", "PreparePrint",
                                 ("", "T", {}, {}, {"modal": v("s", "no"), "accept_label": v("u", 1),
                                                    "has_current_page": v("b", True)}), "(ssa{sv}a{sv}a{sv})")
    assert response == 0
    assert backend.requests("PreparePrint")[-1][3] == {"has_current_page": True}


def test_print_refuses_a_directory_fd_and_lockdown(bus, tmp_path):
    rh.write_config(bus, ["print", "lockdown"])
    rh.Backend(bus, ["lockdown", "print"], params={"disable-printing": True})
    bus.start_portal()
    client = rh.Client(bus)
    fd = os.open(str(tmp_path), os.O_RDONLY | os.O_DIRECTORY)
    with pytest.raises(GLib.Error) as e:
        client.request("org.freedesktop.portal.Print", "Print", ("", "Doc", 0, {}), "(ssha{sv})", fds=[fd])
    os.close(fd)
    assert rh.error_name(e) == "org.freedesktop.portal.Error.NotAllowed"


def test_print_directory_fd_is_refused(env, tmp_path):
    bus, backend, client, log = env
    fd = os.open(str(tmp_path), os.O_RDONLY | os.O_DIRECTORY)
    with pytest.raises(GLib.Error) as e:
        client.request("org.freedesktop.portal.Print", "Print", ("", "Doc", 0, {}), "(ssha{sv})", fds=[fd])
    os.close(fd)
    assert rh.error_name(e) in ("org.freedesktop.portal.Error.InvalidArgument", "org.freedesktop.portal.Error.NotAllowed")
    assert backend.requests() == []


def test_secret_written_into_pipe(env):
    bus, backend, client, log = env
    r, w = os.pipe()
    response, _ = client.request("org.freedesktop.portal.Secret", "RetrieveSecret", (0, {}), "(ha{sv})", fds=[w])
    os.close(w)
    assert response == 0
    assert os.read(r, 100) == b"secret-of-"
    os.close(r)


def test_secret_refuses_regular_file(env, tmp_path):
    bus, backend, client, log = env
    f = tmp_path / "s"
    f.write_text("")
    fd = os.open(str(f), os.O_WRONLY)
    with pytest.raises(GLib.Error) as e:
        client.request("org.freedesktop.portal.Secret", "RetrieveSecret", (0, {}), "(ha{sv})", fds=[fd])
    os.close(fd)
    assert rh.error_name(e) == "org.freedesktop.portal.Error.InvalidArgument"


def test_email_attachments_become_host_paths(env, tmp_path):
    bus, backend, client, log = env
    a = tmp_path / "att.txt"
    a.write_text("a")
    fd = os.open(str(a), os.O_RDONLY)
    response, _ = client.request("org.freedesktop.portal.Email", "ComposeEmail",
                                 ("", {"attachment_fds": v("ah", [0])}), "(sa{sv})", fds=[fd])
    os.close(fd)
    assert response == 0
    assert backend.requests("ComposeEmail")[0][3] == {"attachments": [str(a)]}


# ---- Inhibit -------------------------------------------------------------------------

def test_inhibit_lives_until_close(env):
    bus, backend, client, log = env
    handle, pending = client.start("org.freedesktop.portal.Inhibit", "Inhibit", ("", 4 | 8, {"reason": v("s", "film")}),
                                   "(sua{sv})")
    assert limentest.wait_until(lambda: backend.requests("Inhibit"))
    assert backend.args("Inhibit")[0] == [12]
    assert backend.requests("Inhibit")[0][3] == {"reason": "film"}
    # Response 0 once the backend took it; the Request stays (test_portal_dropin_requests.py).
    assert pending.wait(5) == (0, {})
    pending.close_request(bus)
    assert limentest.wait_until(lambda: handle in backend.closed())


def test_inhibit_monitor_state_reaches_owner_only(env):
    bus, backend, client, log = env
    other = rh.Client(bus)
    got = []
    sub = other.conn.signal_subscribe(None, "org.freedesktop.portal.Inhibit", "StateChanged", None, None, 0,
                                      lambda *a: got.append(("other", a[5].unpack())))
    mine = client.conn.signal_subscribe(None, "org.freedesktop.portal.Inhibit", "StateChanged", None, None, 0,
                                        lambda *a: got.append(("me", a[5].unpack())))
    response, results = client.request("org.freedesktop.portal.Inhibit", "CreateMonitor",
                                       ("", {"session_handle_token": v("s", "mon")}), "(sa{sv})")
    assert response == 0
    session = results["session_handle"]
    assert session.endswith("/mon")
    # Someone who is not the backend, unicast to the portal and broadcast: not passed on.
    impostor = bus.new_connection()
    portal_owner = bus.call("org.freedesktop.DBus", "GetNameOwner", (limentest.PORTAL_BUS_NAME,), "(s)",
                            dest="org.freedesktop.DBus", path="/org/freedesktop/DBus")[0]
    for dest in (portal_owner, None):
        impostor.emit_signal(dest, limentest.PORTAL_PATH, "org.freedesktop.impl.portal.Inhibit", "StateChanged",
                             GLib.Variant("(oa{sv})", (session, {"session-state": GLib.Variant("u", 2)})))
    impostor.flush_sync(None)
    limentest.pump(0.2)
    bus.call("org.limen.MockBackend", "EmitStateChanged", (session, {"session-state": v("u", 3)}), "(oa{sv})",
             dest=rh.BACKEND_NAME)
    assert limentest.wait_until(lambda: got)
    limentest.pump(0.1)
    assert got == [("me", (session, {"session-state": 3}))]
    bus.call("org.freedesktop.portal.Inhibit", "QueryEndResponse", (session,), "(o)", conn=client.conn)
    assert limentest.wait_until(lambda: backend.args("QueryEndResponse"))
    with pytest.raises(GLib.Error):
        bus.call("org.freedesktop.portal.Inhibit", "QueryEndResponse", (session,), "(o)", conn=other.conn)
    other.conn.signal_unsubscribe(sub)
    client.conn.signal_unsubscribe(mine)


def test_inhibit_monitor_initial_state_follows_the_response(env):
    """A backend sends the current state right behind its CreateMonitor reply. The owner
    gets the Response first, then that state, so a client that starts listening on the
    Response does not depend on the frontend for the order."""
    bus, backend, client, log = env
    backend.set_response("CreateMonitor", 0, {"initial-state": v("u", 1)})
    order = []
    sub = client.conn.signal_subscribe(None, "org.freedesktop.portal.Inhibit", "StateChanged", None, None, 0,
                                       lambda *a: order.append(("state", a[5].unpack())))
    resp = client.conn.signal_subscribe(None, rh.REQUEST_IFACE, "Response", client.handle_path("first"), None, 0,
                                        lambda *a: order.append(("response", a[5].unpack()[0])))
    handle, pending = client.start("org.freedesktop.portal.Inhibit", "CreateMonitor",
                                   ("", {"session_handle_token": v("s", "first")}), "(sa{sv})", token="first")
    assert pending.wait()[0] == 0
    assert limentest.wait_until(lambda: len(order) == 2)
    session = pending.result[1]["session_handle"]
    assert order == [("response", 0), ("state", (session, {"session-state": 1}))]
    client.conn.signal_unsubscribe(sub)
    client.conn.signal_unsubscribe(resp)


# ---- Background / Camera -------------------------------------------------------------

BG = "org.freedesktop.portal.Background"


@pytest.fixture
def bgenv(bus):
    backend = rh.setup(bus, ["background", "access"])
    return bus, backend


def test_background_sandboxed_granted_then_remembered(bgenv):
    """Granted on first use and recorded (test_portal_dropin_requests.py has the rest)."""
    bus, backend = bgenv
    rh.start_documents(bus)   # the permission store
    text = "('', {'handle_token': <'bg'>, 'reason': <'sync'>, 'autostart': <true>, 'commandline': <['app', '--bg']>})"
    kind, result = rh.sandboxed_request(bus, APP, BG, "RequestBackground", "(sa{sv})", text)
    assert result == (0, {"background": True, "autostart": True})
    assert backend.args("AccessDialog") == []
    kind, result = rh.sandboxed_request(bus, APP, BG, "RequestBackground", "(sa{sv})", text)
    assert result[1]["background"] is True


def test_background_stored_ask_denied(bgenv):
    bus, backend = bgenv
    rh.start_documents(bus)
    bus.call("org.freedesktop.impl.portal.PermissionStore", "SetPermission",
             ("background", True, "background", APP, ["ask"]), "(sbssas)",
             dest="org.freedesktop.impl.portal.PermissionStore", path="/org/freedesktop/impl/portal/PermissionStore")
    backend.set_response("AccessDialog", 1, {})
    kind, result = rh.sandboxed_request(bus, APP, BG, "RequestBackground", "(sa{sv})",
                                        "('', {'handle_token': <'bg'>, 'reason': <'sync'>, 'autostart': <true>})")
    assert result[0] == 1
    assert backend.args("AccessDialog")[0][1] == "sync"
    assert not os.path.exists(os.path.join(bus.config_home, "autostart", APP + ".desktop"))


def test_background_autostart_without_commandline_uses_the_desktop_files_exec(bus):
    """No commandline: the Exec line of the app's desktop file, as the specification says; a
    host app without one gets no autostart entry (there would be nothing to run)."""
    apps = os.path.join(bus.data_home, "applications")
    os.makedirs(apps, exist_ok=True)
    with open(os.path.join(apps, "org.example.Syncer.desktop"), "w") as f:
        f.write("[Desktop Entry]\nType=Application\nName=Syncer\nExec=/bin/true --daemon %U\n")
    rh.start_documents(bus)
    # A host app known by an id no desktop entry describes cannot register it (Register wants
    # an installed app), but can be named so by its systemd unit: the test hook stands in.
    rh.setup(bus, ["background", "access"], portal_env={"XDG_DESKTOP_PORTAL_TEST_APP_INFO_KIND": "host",
                                                       "XDG_DESKTOP_PORTAL_TEST_HOST_APPID": "org.example.NoEntry"})
    for app_id, expected in (("org.example.Syncer", "/bin/true --daemon %U"), ("org.example.NoEntry", None)):
        conn = bus.new_connection()
        if expected is not None:
            bus.call("org.freedesktop.host.portal.Registry", "Register", (app_id, {}), "(sa{sv})", conn=conn)
        client = rh.Client(bus, conn)
        response, results = client.request(BG, "RequestBackground",
                                           ("", {"reason": v("s", "sync"), "autostart": v("b", True)}), "(sa{sv})")
        assert response == 0 and results["autostart"] is (expected is not None), results
        path = os.path.join(bus.config_home, "autostart", app_id + ".desktop")
        if expected is None:
            assert not os.path.exists(path)
            continue
        kf = GLib.KeyFile()
        kf.load_from_file(path, GLib.KeyFileFlags.NONE)
        assert kf.get_string("Desktop Entry", "Exec") == expected
        assert kf.get_string("Desktop Entry", "X-XDP-Autostart") == app_id


def test_background_denied_later_removes_the_autostart_entry(bgenv):
    """A "no" written to the store after the grant (by the permissions page, GNOME's or
    Plasma 6's, or flatpak permission-set) removes the autostart entry the frontend wrote;
    an entry the person wrote themselves (no X-XDP-Autostart) stays."""
    bus, backend = bgenv
    rh.start_documents(bus)
    text = "('', {'handle_token': <'bg'>, 'autostart': <true>, 'commandline': <['app', '--bg']>})"
    assert rh.sandboxed_request(bus, APP, BG, "RequestBackground", "(sa{sv})", text)[1][1]["autostart"] is True
    autostart = os.path.join(bus.config_home, "autostart")
    ours, own = os.path.join(autostart, APP + ".desktop"), os.path.join(autostart, "org.example.Own.desktop")
    assert os.path.exists(ours)
    with open(own, "w") as f:
        f.write("[Desktop Entry]\nType=Application\nName=Own\nExec=own\n")
    store = dict(dest="org.freedesktop.impl.portal.PermissionStore", path="/org/freedesktop/impl/portal/PermissionStore")
    for app in ("org.example.Own", APP):
        bus.call("org.freedesktop.impl.portal.PermissionStore", "SetPermission",
                 ("background", True, "background", app, ["no"]), "(sbssas)", **store)
    assert limentest.wait_until(lambda: not os.path.exists(ours), 10)
    assert os.path.exists(own)


@pytest.mark.parametrize("opts,key", [({"commandline": v("as", [])}, "commandline"),
                                      ({"autostart": v("s", "yes")}, "autostart"),
                                      ({"reason": v("s", "x" * 300)}, "reason")])
def test_background_bad_options(bgenv, opts, key):
    bus, backend = bgenv
    with pytest.raises(GLib.Error) as e:
        bus.call(BG, "RequestBackground", ("", opts), "(sa{sv})")
    assert rh.error_name(e) == "org.freedesktop.portal.Error.InvalidArgument" and key in e.value.message


def test_camera_without_pipewire(bgenv):
    """No PipeWire on the bus: no camera, and a remote cannot be had, said plainly; a host
    caller's AccessCamera is allowed (test_portal_camera.py has PipeWire itself)."""
    bus, backend = bgenv
    cam = "org.freedesktop.portal.Camera"
    assert bus.get_property(cam, "IsCameraPresent") is False
    assert rh.Client(bus).request(cam, "AccessCamera", ({},), "(a{sv})") == (0, {})
    with pytest.raises(GLib.Error) as e:
        bus.call(cam, "OpenPipeWireRemote", ({},), "(a{sv})", fds=[])
    assert rh.error_name(e).startswith("org.freedesktop.portal.Error."), rh.error_name(e)
    assert bus.get_property(cam, "IsCameraPresent") is False


# ---- OpenURI: remembered choices, OpenDirectory -------------------------------------

def test_open_uri_choice_remembered_then_used_without_asking(env):
    bus, backend, client, log = env
    rh.start_documents(bus)   # the permission store
    text = "('', 'limentest:r{}', {{'handle_token': <'o{}'>}})"
    for i in range(4):
        kind, result = rh.sandboxed_request(bus, APP, "org.freedesktop.portal.OpenURI", "OpenURI", "(ssa{sv})",
                                            text.format(i, i))
        assert result[0] == 0
    # Asked three times (the third saw last_choice), then the handler was used directly.
    asked = backend.requests("ChooseApplication")
    assert len(asked) == 3
    assert asked[2][3]["last_choice"] == HANDLER
    stored = bus.call("org.freedesktop.impl.portal.PermissionStore", "Lookup",
                      ("desktop-used-apps", "x-scheme-handler/limentest"), "(ss)",
                      dest="org.freedesktop.impl.portal.PermissionStore",
                      path="/org/freedesktop/impl/portal/PermissionStore")[0]
    assert stored[APP] == [HANDLER, "4"]
    assert limentest.wait_until(lambda: "limentest:r3" in open(log).read())
    # ask=true shows the dialog again.
    kind, result = rh.sandboxed_request(bus, APP, "org.freedesktop.portal.OpenURI", "OpenURI", "(ssa{sv})",
                                        "('', 'limentest:r9', {'handle_token': <'o9'>, 'ask': <true>})")
    assert result[0] == 0 and len(backend.requests("ChooseApplication")) == 4


def test_open_directory_uses_file_manager(env, tmp_path):
    bus, backend, client, log = env
    fm = bus.start([limentest.python_exe(), "-m", "dbusmock", "org.freedesktop.FileManager1",
                    "/org/freedesktop/FileManager1", "org.freedesktop.FileManager1"],
                   wait_name="org.freedesktop.FileManager1")
    for m in ("ShowFolders", "ShowItems"):
        bus.call("org.freedesktop.DBus.Mock", "AddMethod", ("", m, "ass", "", ""), "(sssss)",
                 dest="org.freedesktop.FileManager1", path="/org/freedesktop/FileManager1")
    f = tmp_path / "shown.txt"
    f.write_text("x")
    fd = os.open(str(f), os.O_RDONLY)
    response, _ = client.request("org.freedesktop.portal.OpenURI", "OpenDirectory", ("", 0, {}), "(sha{sv})",
                                 fds=[fd])
    os.close(fd)
    assert response == 0
    calls = bus.call("org.freedesktop.DBus.Mock", "GetMethodCalls", ("ShowItems",), "(s)",
                     dest="org.freedesktop.FileManager1", path="/org/freedesktop/FileManager1")[0]
    assert calls[0][1][0] == [f.as_uri()]
    assert backend.requests("ChooseApplication") == []
    fm.stop()


def test_open_directory_without_file_manager_falls_back_to_a_folder_handler(env, tmp_path):
    bus, backend, client, log = env
    fd = os.open(str(tmp_path), os.O_RDONLY | os.O_DIRECTORY)
    response, _ = client.request("org.freedesktop.portal.OpenURI", "OpenDirectory", ("", 0, {}), "(sha{sv})",
                                 fds=[fd])
    os.close(fd)
    assert response == 0
    assert limentest.wait_until(lambda: os.path.exists(log) and str(tmp_path) in open(log).read())


# ---- fds a sandbox could not reach itself ---------------------------------------------

HIDDEN_FD_SCRIPT = r'''
import sys
from gi.repository import Gio, GLib
c = Gio.bus_get_sync(Gio.BusType.SESSION, None)
iface, method, sig, text = %r
fdl = Gio.UnixFDList.new()
fdl.append(%d)
try:
    c.call_with_unix_fd_list_sync("org.freedesktop.portal.Desktop", "/org/freedesktop/portal/desktop", iface, method,
                                  GLib.Variant.parse(GLib.VariantType(sig), text, None, None), None, 0, 5000, fdl, None)
    print("ACCEPTED")
except GLib.Error as e:
    print(Gio.DBusError.get_remote_error(e))
'''

HIDDEN_CALLS = [
    ("org.freedesktop.portal.Print", "Print", "(ssha{sv})", "('', 'Doc', handle 0, @a{sv} {})"),
    ("org.freedesktop.portal.Email", "ComposeEmail", "(sa{sv})", "('', {'attachment_fds': <[handle 0]>})"),
    ("org.freedesktop.portal.OpenURI", "OpenFile", "(sha{sv})", "('', handle 0, @a{sv} {})"),
    ("org.freedesktop.portal.Wallpaper", "SetWallpaperFile", "(sha{sv})", "('', handle 0, @a{sv} {})"),
]


@pytest.mark.parametrize("call", HIDDEN_CALLS, ids=[c[1] for c in HIDDEN_CALLS])
def test_sandbox_cannot_pass_an_inherited_fd_to_a_hidden_file(env, tmp_path, call):
    """The sandbox holds an fd (inherited from outside) to a host file it cannot see by path:
    the portal refuses it instead of printing/mailing/opening the hidden file."""
    bus, backend, client, log = env
    secret = tmp_path / "secret.txt"
    secret.write_text("host only")
    fd = os.open(str(secret), os.O_RDONLY)
    try:
        script = HIDDEN_FD_SCRIPT % (call, fd)
        r = limentest.run_sandboxed(bus, APP, script, pass_fds=(fd,))
    finally:
        os.close(fd)
    assert r.stdout.strip() == "org.freedesktop.portal.Error.NotAllowed", r.stdout + r.stderr
    assert backend.requests() == []


def test_sandbox_can_print_a_file_it_sees(env, tmp_path):
    bus, backend, client, log = env
    doc = tmp_path / "visible.pdf"
    doc.write_bytes(b"%PDF-1.4 visible")
    script = HIDDEN_FD_SCRIPT.replace("fdl.append(%d)", "import os\nfdl.append(os.open(%r, os.O_RDONLY))") % (
        HIDDEN_CALLS[0], str(doc))
    r = limentest.run_sandboxed(bus, APP, script, binds=(str(tmp_path),))
    assert r.stdout.strip() == "ACCEPTED", r.stdout + r.stderr
    assert limentest.wait_until(lambda: backend.args("Print"))
    assert bytes(backend.args("Print")[0][0]).startswith(b"%PDF-1.4 visible")
    assert backend.requests("Print")[0][2] == APP


def test_open_file_with_a_flatpak_handler_hands_it_a_document(env, tmp_path):
    bus, backend, client, log = env
    rh.start_documents(bus)
    apps = os.path.join(bus.data_home, "applications")
    viewer_log = os.path.join(bus.root, "viewer.log")
    with open(os.path.join(apps, "org.example.Viewer.desktop"), "w") as f:
        f.write("[Desktop Entry]\nType=Application\nName=Viewer\nX-Flatpak=org.example.Viewer\n"
                f"Exec=sh -c 'echo \"$1\" >> {viewer_log}' sh %u\nMimeType=text/plain;\n")
    with open(os.path.join(apps, "mimeinfo.cache"), "a") as f:
        f.write("text/plain=org.example.Viewer.desktop;\n")
    doc = tmp_path / "notes.txt"
    doc.write_text("read me")
    fd = os.open(str(doc), os.O_RDONLY)
    response, _ = client.request("org.freedesktop.portal.OpenURI", "OpenFile", ("", 0, {}), "(sha{sv})", fds=[fd])
    os.close(fd)
    assert response == 0
    assert limentest.wait_until(lambda: os.path.exists(viewer_log) and "/doc/" in open(viewer_log).read())
    launched = open(viewer_log).read().strip()
    assert launched.endswith("/notes.txt") and launched.startswith(bus.runtime_dir + "/doc/")
    doc_id = launched.split("/doc/")[1].split("/")[0]
    host_path, apps_ = bus.call("org.freedesktop.portal.Documents", "Info", (doc_id,), "(s)",
                                dest="org.freedesktop.portal.Documents", path="/org/freedesktop/portal/documents")
    assert list(apps_["org.example.Viewer"]) == ["read"]
