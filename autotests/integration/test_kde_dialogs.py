"""limen-kde dialogs under Xvfb, answered with xdotool: FileChooser (pick, save, cancel,
Close mid-dialog), Access, AppChooser, Account; directly over D-Bus and behind Debian's
xdg-desktop-portal. Screenshots land in <build>/autotests/artifacts/kde/."""

import os
import time

import pytest

import kde_helpers as kh
import limentest
import test_kde_screencast as sc
from limentest import GLib


@pytest.fixture
def kde(bus, x):
    return kh.start_kde_x11(bus, x)


def type_and_enter(x, wid, text):
    x.focus(wid)
    x.type_text(text)
    time.sleep(0.2)
    x.run("xdotool", "key", "Return")


def open_file(bus, title, options, signature_opts="a{sv}", method="OpenFile", conn=None):
    handle = kh.new_handle(bus, conn)
    call = kh.AsyncCall(bus, "FileChooser", method, (handle, "org.example.App", "", title, options),
                        f"(osss{signature_opts})", conn=conn)
    return handle, call


def test_open_file_pick(bus, x, kde):
    docs = os.path.join(bus.home, "Documents")
    os.makedirs(docs)
    for name in ("a.txt", "b.png"):
        with open(os.path.join(docs, name), "w") as f:
            f.write(name)
    opts = {
        "filters": GLib.Variant("a(sa(us))", [("Text", [(0, "*.txt")]), ("Images", [(1, "image/png")])]),
        "current_filter": GLib.Variant("(sa(us))", ("Images", [(1, "image/png")])),
        "choices": GLib.Variant("a(ssa(ss)s)", [("enc", "Encoding", [("utf8", "UTF-8"), ("latin1", "Latin-1")],
                                                 "latin1"), ("ro", "Open _read-only", [], "true")]),
        "current_folder": GLib.Variant("ay", docs.encode() + b"\0"),
        "accept_label": GLib.Variant("s", "_Open it"),
    }
    _, call = open_file(bus, "Pick a file", opts)
    wid = x.wait_window("Pick a file")
    time.sleep(0.5)
    x.screenshot("file-chooser-open.png")
    type_and_enter(x, wid, "b.png")
    response, results = call.wait()
    assert response == 0
    assert results["uris"] == ["file://" + os.path.join(docs, "b.png")]
    assert results["current_filter"] == ("Images", [(1, "image/png")])
    assert sorted(results["choices"]) == [("enc", "latin1"), ("ro", "true")]
    # Size and last folder are remembered in our own file, not kdeglobals.
    with open(os.path.join(bus.config_home, "limen-kderc")) as f:
        state = f.read()
    assert "LastFolder[$e]=$HOME/Documents" in state and "Width=" in state
    assert not os.path.exists(os.path.join(bus.config_home, "kdeglobals"))


def test_several_typed_names_come_in_the_order_typed(bus, x, kde):
    """"c.txt" "a.txt" "b.txt" in the Name field: the app gets c, a, b. (GTK 3's portal
    chooser then hands its app the list reversed: it prepends each URI.)"""
    docs = os.path.join(bus.home, "Typed")
    os.makedirs(docs)
    for name in ("a.txt", "b.txt", "c.txt"):
        open(os.path.join(docs, name), "w").close()
    _, call = open_file(bus, "Pick several", {"multiple": GLib.Variant("b", True),
                                              "current_folder": GLib.Variant("ay", docs.encode() + b"\0")})
    wid = x.wait_window("Pick several")
    time.sleep(0.5)
    type_and_enter(x, wid, '"c.txt" "a.txt" "b.txt"')
    response, results = call.wait()
    assert response == 0
    assert results["uris"] == ["file://" + os.path.join(docs, n) for n in ("c.txt", "a.txt", "b.txt")]


def test_open_file_cancel(bus, x, kde):
    _, call = open_file(bus, "Cancel me", {})
    x.answer("Cancel me", "Escape")
    response, results = call.wait()
    assert response == 1 and "uris" not in results


def test_close_mid_dialog(bus, x, kde):
    handle, call = open_file(bus, "Closed by the app", {})
    x.wait_window("Closed by the app")
    kh.close_request(bus, handle)
    response, _ = call.wait()
    assert response == 2
    # The window is gone and the request object too.
    r = x.run("xdotool", "search", "--onlyvisible", "--name", "Closed by the app", check=False)
    assert r.stdout.strip() == ""
    with pytest.raises(GLib.Error):
        kh.close_request(bus, handle)
    assert kde.alive()


def test_save_file(bus, x, kde):
    folder = os.path.join(bus.home, "out")
    os.makedirs(folder)
    opts = {"current_name": GLib.Variant("s", "report.odt"),
            "current_folder": GLib.Variant("ay", folder.encode() + b"\0")}
    _, call = open_file(bus, "Save the report", opts, method="SaveFile")
    x.answer("Save the report", "Return", shot="file-chooser-save.png")
    response, results = call.wait()
    assert response == 0
    assert results["uris"] == ["file://" + os.path.join(folder, "report.odt")]


def test_save_files(bus, x, kde):
    folder = os.path.join(bus.home, "many")
    os.makedirs(folder)
    opts = {"files": GLib.Variant("aay", [b"one.txt\0", b"two.txt\0"]),
            "current_folder": GLib.Variant("ay", folder.encode() + b"\0")}
    _, call = open_file(bus, "Save these", opts, method="SaveFiles")
    x.answer("Save these", "Return", shot="file-chooser-save-files.png")
    response, results = call.wait()
    assert response == 0
    assert results["uris"] == ["file://" + os.path.join(folder, n) for n in ("one.txt", "two.txt")]


@pytest.mark.parametrize("key,value,sig", [
    ("filters", [("x", [(7, "*")])], "a(sa(us))"),
    ("filters", "nope", "s"),
    ("current_folder", b"no-nul", "ay"),
    ("choices", [("c", "C", [("a", "A")], "zzz")], "a(ssa(ss)s)"),
    ("files", [b"../escape\0"], "aay"),
])
def test_bad_options(bus, kde, key, value, sig):
    method = "SaveFiles" if key == "files" else "OpenFile"
    with pytest.raises(GLib.Error) as e:
        kh.call_impl(bus, "FileChooser", method,
                     (kh.new_handle(bus), "org.example.App", "", "t", {key: GLib.Variant(sig, value)}),
                     "(osssa{sv})")
    assert limentest.dbus_error_name(e.value) == "org.freedesktop.portal.Error.InvalidArgument"
    assert key in e.value.message
    assert kde.alive()


def test_bad_handle_and_parent(bus, kde):
    for handle, parent in (("/org/freedesktop/portal/desktop", ""), ("/x/y", ""),
                           (None, "x11:zz"), (None, "mir:1")):
        with pytest.raises(GLib.Error) as e:
            kh.call_impl(bus, "FileChooser", "OpenFile",
                         (handle or kh.new_handle(bus), "a", parent, "t", {}), "(osssa{sv})")
        assert limentest.dbus_error_name(e.value) == "org.freedesktop.portal.Error.InvalidArgument"


def test_no_display_fails_cleanly(bus):
    kh.start_kde(bus)   # no DISPLAY in the bus env
    with pytest.raises(GLib.Error) as e:
        kh.call_impl(bus, "FileChooser", "OpenFile", (kh.new_handle(bus), "a", "", "t", {}), "(osssa{sv})")
    assert limentest.dbus_error_name(e.value) == "org.freedesktop.portal.Error.Failed"
    assert kh.call_impl(bus, "Settings", "Read", ("org.freedesktop.appearance", "color-scheme"), "(ss)")


def test_access_dialog(bus, x, kde):
    opts = {"grant_label": GLib.Variant("s", "_Record"), "deny_label": GLib.Variant("s", "_Not now"),
            "icon": GLib.Variant("s", "audio-input-microphone"),
            "choices": GLib.Variant("a(ssa(ss)s)", [("remember", "Remember this choice", [], "false")])}
    call = kh.AsyncCall(bus, "Access", "AccessDialog",
                        (kh.new_handle(bus), "org.example.App", "", "Allow microphone access?",
                         "Example wants to record audio", "You can change this later in System Settings.", opts),
                        "(osssssa{sv})")
    x.answer("Allow microphone access?", "alt+r", shot="access.png", shown=0.4)
    response, results = call.wait()
    assert response == 0
    assert results["choices"] == [("remember", "false")]


def test_access_dialog_shows_the_apps_words_as_text(bus, x, kde):
    """A choice's label is the app's text: markup in it (here a bright green background)
    shows as the characters it is, never styled. The title and body are plain too."""
    styled = '<span style="background-color:#00ff00">' + "W" * 40 + "</span>"
    opts = {"choices": GLib.Variant("a(ssa(ss)s)", [("enc", "Encoding " + styled, [("a", "A"), ("b", "B")], "a")])}
    call = kh.AsyncCall(bus, "Access", "AccessDialog",
                        (kh.new_handle(bus), "org.example.App", "", "Styled " + styled, styled, styled, opts),
                        "(osssssa{sv})")
    x.answer("Styled ", "Escape", shot="access-markup.png", shown=0.6)
    assert call.wait()[0] == 1
    shot = os.path.join(kh.artifacts_dir(), "access-markup.png")
    assert sc.count_colour(shot, (0, 255, 0)) == 0, "the app's markup was rendered"


@pytest.mark.parametrize("language,scale", [("en", "1"), ("de", "2")], ids=["en-1x", "de-2x"])
def test_access_dialog_long_words_screenshots(bus, language, scale):
    """An app's words with no place to break (an 80-letter title, a long address, long
    choice labels) wrap inside the dialog, which fits the screen: screenshots at English
    100% and German 200% (the buttons prove the catalog is used)."""
    x = kh.Xvfb(size="1600x1000x24")
    try:
        kh.start_kde_x11(bus, x, QT_SCALE_FACTOR=scale, LANGUAGE="de" if language == "de" else "",
                         LIMEN_LOCALEDIR=os.path.join(limentest.BUILD_DIR, "locale"))
        opts = {"choices": GLib.Variant("a(ssa(ss)s)", [
            ("long", "C" * 60, [("a", "A"), ("b", "B")], "a"),
            ("keep", "Keep a copy of every recording in the folder it was made in " * 2, [], "false")])}
        call = kh.AsyncCall(bus, "Access", "AccessDialog",
                            (kh.new_handle(bus), "org.example.App", "", "W" * 80,
                             "https://example.org/" + "a" * 120, "", opts), "(osssssa{sv})")
        wid = x.wait_window("W" * 20)
        time.sleep(1.0)
        x.screenshot(f"access-long-words-{language}-{scale}x.png")
        left, top, width, height = x.geometry(wid)
        assert left >= 0 and top >= 0 and left + width <= 1600 and top + height <= 1000, (left, top, width, height)
        x.press(wid, "Escape")
        assert call.wait()[0] == 1
    finally:
        x.close()


def test_access_default_is_deny(bus, x, kde):
    call = kh.AsyncCall(bus, "Access", "AccessDialog",
                        (kh.new_handle(bus), "org.example.App", "", "Grant it?", "", "", {}), "(osssssa{sv})")
    x.answer("Grant it?", "Return")
    response, _ = call.wait()
    assert response == 1


def test_behind_reference_frontend(bus, x, kde):
    """Debian's xdg-desktop-portal 1.16 → limen-kde → KFileWidget, end to end."""
    kh.start_reference_frontend(bus, env=x.env())
    path = os.path.join(bus.home, "picked.txt")
    with open(path, "w") as f:
        f.write("x")
    token = "kdetest1"
    sender = bus.conn.get_unique_name()[1:].replace(".", "_")
    req_path = f"/org/freedesktop/portal/desktop/request/{sender}/{token}"
    got = []
    bus.conn.signal_subscribe("org.freedesktop.portal.Desktop", "org.freedesktop.portal.Request", "Response",
                              req_path, None, 0, lambda *a: got.append(a[5].unpack()))
    bus.call("org.freedesktop.portal.FileChooser", "OpenFile",
             ("", "Through the reference", {"handle_token": GLib.Variant("s", token)}), "(ssa{sv})")
    wid = x.wait_window("Through the reference")
    type_and_enter(x, wid, path)
    assert limentest.wait_until(lambda: got, 20)
    response, results = got[0]
    assert response == 0
    assert results["uris"] == ["file://" + path]


def write_app(bus, app_id, name):
    apps = os.path.join(bus.data_home, "applications")
    os.makedirs(apps, exist_ok=True)
    with open(os.path.join(apps, app_id + ".desktop"), "w") as f:
        f.write(f"[Desktop Entry]\nType=Application\nName={name}\nExec=/bin/true %f\nIcon=text-editor\n"
                "MimeType=text/plain;\n")


def test_app_chooser(bus, x, kde):
    write_app(bus, "org.example.Viewer", "Example Viewer")
    write_app(bus, "org.example.Editor", "Example Editor")
    handle = kh.new_handle(bus)
    call = kh.AsyncCall(bus, "AppChooser", "ChooseApplication",
                        (handle, "org.example.App", "", ["org.example.Viewer", "org.example.Editor"],
                         {"last_choice": GLib.Variant("s", "org.example.Editor"),
                          "content_type": GLib.Variant("s", "text/plain"),
                          "uri": GLib.Variant("s", "file:///home/user/notes.txt")}), "(ossasa{sv})")
    wid = x.wait_window("Open With")
    time.sleep(0.5)
    x.screenshot("app-chooser.png")
    # A new handler appears while the dialog is open.
    write_app(bus, "org.example.Third", "Third Tool")
    kh.call_impl(bus, "AppChooser", "UpdateChoices",
                 (handle, ["org.example.Viewer", "org.example.Editor", "org.example.Third"]), "(oas)")
    x.press(wid, "Return")
    response, results = call.wait()
    assert response == 0
    # The last choice comes first and is preselected.
    assert results["choice"] == "org.example.Editor"


def test_app_chooser_long_link_fits_the_screen(bus, x, kde):
    """A link as long as OpenURI takes (16 KiB, no place to wrap) is shown with its middle left
    out: the dialog stays within the screen, its buttons on it."""
    write_app(bus, "org.example.Viewer", "Example Viewer")
    link = "magnet:?xt=urn:btih:" + "a" * 16000 + "&dn=end"
    call = kh.AsyncCall(bus, "AppChooser", "ChooseApplication",
                        (kh.new_handle(bus), "org.example.App", "", ["org.example.Viewer"],
                         {"content_type": GLib.Variant("s", "x-scheme-handler/magnet"),
                          "uri": GLib.Variant("s", link)}), "(ossasa{sv})")
    wid = x.wait_window("Open With")
    time.sleep(0.5)
    x.screenshot("app-chooser-long-link.png")
    left, _, width, height = x.geometry(wid)
    assert left >= 0 and left + width <= 1280 and height <= 800, (left, width, height)
    x.press(wid, "Escape")
    assert call.wait()[0] == 1


def test_app_chooser_update_unknown_handle(bus, kde):
    with pytest.raises(GLib.Error) as e:
        kh.call_impl(bus, "AppChooser", "UpdateChoices", (kh.new_handle(bus), ["a"]), "(oas)")
    assert limentest.dbus_error_name(e.value) == "org.freedesktop.portal.Error.NotFound"
    with pytest.raises(GLib.Error) as e:
        kh.call_impl(bus, "AppChooser", "ChooseApplication", (kh.new_handle(bus), "a", "", ["../x"], {}),
                     "(ossasa{sv})")
    assert limentest.dbus_error_name(e.value) == "org.freedesktop.portal.Error.InvalidArgument"


def test_account(bus, x, kde):
    call = kh.AsyncCall(bus, "Account", "GetUserInformation",
                        (kh.new_handle(bus), "org.example.App", "",
                         {"reason": GLib.Variant("s", "To sign your comments")}), "(ossa{sv})")
    x.answer("Share Your Information", "alt+s", shot="account.png", shown=0.4)
    response, results = call.wait()
    assert response == 0
    assert results["id"] and "name" in results and "image" in results


def test_account_close(bus, x, kde):
    handle = kh.new_handle(bus)
    call = kh.AsyncCall(bus, "Account", "GetUserInformation", (handle, "a", "", {}), "(ossa{sv})")
    x.wait_window("Share Your Information")
    kh.close_request(bus, handle)
    assert call.wait()[0] == 2


def test_parent_window_is_transient_parent(bus, x, kde):
    # Any X window serves as the "app window": here an access dialog of our own.
    parent_handle = kh.new_handle(bus)
    parent_call = kh.AsyncCall(bus, "Access", "AccessDialog",
                               (parent_handle, "a", "", "Parent window", "", "", {}), "(osssssa{sv})")
    parent = x.wait_window("Parent window")
    handle = kh.new_handle(bus)
    call = kh.AsyncCall(bus, "FileChooser", "OpenFile",
                        (handle, "a", "x11:%x" % parent, "Child dialog", {"modal": GLib.Variant("b", True)}),
                        "(osssa{sv})")
    child = x.wait_window("Child dialog")
    r = x.run("xprop", "-id", str(child), "WM_TRANSIENT_FOR", "_NET_WM_STATE")
    assert "window id # 0x%x" % parent in r.stdout, r.stdout
    assert "_NET_WM_STATE_MODAL" in r.stdout, r.stdout
    kh.close_request(bus, handle)
    kh.close_request(bus, parent_handle)
    assert call.wait()[0] == 2 and parent_call.wait()[0] == 2


@pytest.mark.parametrize("sig", [15, 2, 1])
def test_signal_with_dialog_open(bus, x, kde, sig):
    """SIGTERM/SIGINT/SIGHUP with a dialog up: the caller gets its answer, exit 0 within 1 s."""
    call = kh.AsyncCall(bus, "FileChooser", "OpenFile", (kh.new_handle(bus), "a", "", "Open at exit", {}),
                        "(osssa{sv})")
    x.wait_window("Open at exit")
    t = time.time()
    kde.signal(sig)
    assert kde.wait(5) == 0
    assert time.time() - t < 1.0
    assert call.wait()[0] == 2


def test_kio_url_comes_back_local(bus, x, kde):
    """A KIO URL the user enters (trash:/) is handed back as the local file behind it."""
    trash = os.path.join(bus.data_home, "Trash")
    os.makedirs(os.path.join(trash, "files"))
    os.makedirs(os.path.join(trash, "info"))
    with open(os.path.join(trash, "files", "binned.txt"), "w") as f:
        f.write("x")
    with open(os.path.join(trash, "info", "binned.txt.trashinfo"), "w") as f:
        f.write(f"[Trash Info]\nPath={bus.home}/binned.txt\nDeletionDate=2026-01-01T00:00:00\n")
    _, call = open_file(bus, "Pick from the bin", {})
    wid = x.wait_window("Pick from the bin")
    type_and_enter(x, wid, "trash:/0-binned.txt")
    response, results = call.wait()
    assert response == 0
    assert results["uris"] == ["file://" + os.path.join(trash, "files", "binned.txt")]
