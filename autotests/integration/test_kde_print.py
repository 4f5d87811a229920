"""limen-kde Print and Lockdown: PreparePrint answered in the real QPrintDialog under
Xvfb, Print streaming the app's PDF to a private cupsd with a cups-pdf queue (started
here), the page count of what comes out, Kiosk lockdown, bad input."""

import os
import time
import uuid

import pytest

import kde_cups
import kde_helpers as kh
import limentest
from limentest import Gio, GLib

pytestmark = pytest.mark.skipif(not kde_cups.available(), reason="cups, cups-pdf, poppler-utils or gs missing")


@pytest.fixture(scope="module")
def cups():
    c = kde_cups.Cupsd()
    try:
        yield c
    finally:
        c.close()


@pytest.fixture
def kde(bus, x, cups):
    return kh.start_kde_x11(bus, x, **cups.env)


def prepare(bus, title, settings=None, page_setup=None, options=None):
    handle = kh.new_handle(bus)
    call = kh.AsyncCall(bus, "Print", "PreparePrint",
                        (handle, "org.example.App", "", title, settings or {}, page_setup or {}, options or {}),
                        "(osssa{sv}a{sv}a{sv})")
    return handle, call


def print_fd(bus, title, path, options, app_id="org.example.App", fd_index=0, timeout=60000):
    fd = os.open(path, os.O_RDONLY)
    fds = Gio.UnixFDList.new_from_array([fd])
    result = {}

    def done(conn, res):
        try:
            result["value"] = conn.call_with_unix_fd_list_finish(res)[0].unpack()
        except GLib.Error as e:
            result["error"] = e

    handle = kh.new_handle(bus)
    bus.conn.call_with_unix_fd_list(kh.KDE_NAME, kh.PATH, kh.IMPL + "Print", "Print",
                                    GLib.Variant("(osssha{sv})", (handle, app_id, "", title, fd_index, options)),
                                    None, Gio.DBusCallFlags.NONE, timeout, fds, None, done)
    return handle, result


def wait_result(result, timeout=60):
    limentest.wait_until(lambda: result, timeout)
    assert result, "no reply from limen-kde"
    if "error" in result:
        raise result["error"]
    return result["value"]


def accept_dialog(x, title, shot=None):
    wid = x.wait_window(title)
    time.sleep(0.8)
    if shot:
        x.screenshot(shot)
    x.press(wid, "Return")


def test_prepare_then_print(bus, x, kde, cups):
    title = "limen-" + uuid.uuid4().hex[:8]
    _, call = prepare(bus, title)
    accept_dialog(x, title, "print-dialog.png")
    response, results = call.wait(30)
    assert response == 0, kde.output()
    settings, page_setup, token = results["settings"], results["page-setup"], results["token"]
    assert settings["printer"] == "PDF"
    assert settings["n-copies"] == "1" and settings["print-pages"] == "all"
    assert settings["orientation"] in ("portrait", "landscape")
    assert page_setup["Width"] > 0 and page_setup["Height"] > 0 and "PPDName" in page_setup
    assert token > 0

    pdf = kde_cups.make_pdf(os.path.join(bus.root, "doc.pdf"), 4)
    _, result = print_fd(bus, title, pdf, {"token": GLib.Variant("u", token)})
    response, _ = wait_result(result)
    assert response == 0, kde.output()
    out = cups.wait_output(title)
    assert kde_cups.page_count(out) == 4
    os.unlink(out)
    # A token is used once.
    _, result = print_fd(bus, title + "b", pdf, {"token": GLib.Variant("u", token)})
    accept_dialog(x, title + "b")  # no token any more: the dialog asks
    response, _ = wait_result(result)
    assert response == 0
    os.unlink(cups.wait_output(title + "b"))


def test_prepare_print_button_takes_the_apps_label(bus, x, kde):
    """accept_label names PreparePrint's button, its GTK-style mnemonic included: Alt+S
    presses "_Send to printer" (the dialog has no other S)."""
    title = "limen-" + uuid.uuid4().hex[:8]
    _, call = prepare(bus, title, options={"accept_label": GLib.Variant("s", "_Send to printer")})
    wid = x.wait_window(title)
    time.sleep(0.8)
    x.screenshot("print-dialog-accept-label.png")
    x.press(wid, "alt+s")
    response, results = call.wait(30)
    assert response == 0 and results["token"] > 0


def test_page_range_reaches_cups(bus, x, kde, cups):
    title = "limen-" + uuid.uuid4().hex[:8]
    settings = {"print-pages": GLib.Variant("s", "ranges"), "page-ranges": GLib.Variant("s", "2-3"),
                "n-copies": GLib.Variant("s", "1"), "printer": GLib.Variant("s", "PDF")}
    _, call = prepare(bus, title, settings)
    accept_dialog(x, title, "print-dialog-range.png")
    response, results = call.wait(30)
    assert response == 0
    assert results["settings"]["print-pages"] == "ranges" and results["settings"]["page-ranges"] == "2-3"
    pdf = kde_cups.make_pdf(os.path.join(bus.root, "five.pdf"), 5)
    _, result = print_fd(bus, title, pdf, {"token": GLib.Variant("u", results["token"])})
    assert wait_result(result)[0] == 0
    out = cups.wait_output(title)
    assert kde_cups.page_count(out) == 2
    os.unlink(out)


@pytest.mark.parametrize("pages,option", [("current", "has_current_page"), ("selection", "has_selected_pages")])
def test_current_page_and_selection_when_the_app_has_them(bus, x, kde, cups, pages, option):
    """Version 4: the app says it has a current page / a selection; the dialog offers (and
    here starts on) that range and answers it; the app then prints just that, all of it."""
    title = "limen-" + uuid.uuid4().hex[:8]
    settings = {"print-pages": GLib.Variant("s", pages), "printer": GLib.Variant("s", "PDF")}
    _, call = prepare(bus, title, settings, options={option: GLib.Variant("b", True)})
    accept_dialog(x, title, f"print-dialog-{pages}.png")
    response, results = call.wait(30)
    assert response == 0, kde.output()
    assert results["settings"]["print-pages"] == pages
    assert "page-ranges" not in results["settings"]
    pdf = kde_cups.make_pdf(os.path.join(bus.root, "rendered.pdf"), 1)
    _, result = print_fd(bus, title, pdf, {"token": GLib.Variant("u", results["token"])})
    assert wait_result(result)[0] == 0
    out = cups.wait_output(title)
    assert kde_cups.page_count(out) == 1
    os.unlink(out)


@pytest.mark.parametrize("pages", ["current", "selection"])
def test_current_page_and_selection_not_offered_without_the_option(bus, x, kde, pages):
    title = "limen-" + uuid.uuid4().hex[:8]
    _, call = prepare(bus, title, {"print-pages": GLib.Variant("s", pages)},
                      options={"has_current_page": GLib.Variant("b", False)})
    accept_dialog(x, title)
    response, results = call.wait(30)
    assert response == 0
    assert results["settings"]["print-pages"] == "all"


@pytest.mark.parametrize("lang", ["en", "de"])
def test_dialog_with_current_page_and_selection_screenshots(bus, cups, lang):
    env = dict(cups.env, LIMEN_LOCALEDIR=os.path.join(limentest.BUILD_DIR, "locale"))
    if lang == "de":
        env.update({"LANGUAGE": "de", "QT_SCALE_FACTOR": "2"})
    # 200% on a screen of twice the pixels, as a HiDPI screen is: Qt's dialog with its
    # options shown is taller than 400 logical pixels.
    x = kh.Xvfb("2560x1600x24" if lang == "de" else "1280x800x24")
    try:
        dialog_screenshot(bus, x, env, lang)
    finally:
        x.close()


def dialog_screenshot(bus, x, env, lang):
    kde = kh.start_kde_x11(bus, x, **env)
    title = "limen-" + uuid.uuid4().hex[:8]
    _, call = prepare(bus, title, {"print-pages": GLib.Variant("s", "current")},
                      options={"has_current_page": GLib.Variant("b", True),
                               "has_selected_pages": GLib.Variant("b", True)})
    wid = x.wait_window(title)
    time.sleep(0.8)
    x.press(wid, "alt+o" if lang == "en" else "alt+i")   # Options >>: the page ranges
    time.sleep(1.0)
    x.screenshot(f"print-dialog-current-selection-{lang}.png")
    x.press(wid, "Escape")
    assert call.wait(30)[0] == 1
    assert kde.alive()


def test_print_to_file_when_the_app_writes_pdf(bus, x, kde, cups):
    """Version 3: an app that can write PDF may print to a file; the dialog starts on the
    file its settings name, and Print writes the app's document there, not to CUPS."""
    title = "limen-" + uuid.uuid4().hex[:8]
    target = os.path.join(bus.root, "printed.pdf")
    settings = {"output-uri": GLib.Variant("s", GLib.filename_to_uri(target)),
                "output-file-format": GLib.Variant("s", "pdf")}
    _, call = prepare(bus, title, settings,
                      options={"supported_output_file_formats": GLib.Variant("as", ["svg", "pdf"])})
    accept_dialog(x, title, "print-dialog-to-file.png")
    response, results = call.wait(30)
    assert response == 0, kde.output()
    assert results["settings"]["printer"] == "Print to File"
    assert results["settings"]["output-uri"] == GLib.filename_to_uri(target)
    assert results["settings"]["output-file-format"] == "pdf"
    pdf = kde_cups.make_pdf(os.path.join(bus.root, "doc.pdf"), 3)
    _, result = print_fd(bus, title, pdf, {"token": GLib.Variant("u", results["token"])})
    assert wait_result(result)[0] == 0, kde.output()
    with open(target, "rb") as a, open(pdf, "rb") as b:
        assert a.read() == b.read()


def test_no_print_to_file_for_an_app_without_pdf(bus, x, kde, cups):
    title = "limen-" + uuid.uuid4().hex[:8]
    target = os.path.join(bus.root, "never.pdf")
    settings = {"output-uri": GLib.Variant("s", GLib.filename_to_uri(target)),
                "printer": GLib.Variant("s", "PDF")}
    _, call = prepare(bus, title, settings,
                      options={"supported_output_file_formats": GLib.Variant("as", ["ps"])})
    accept_dialog(x, title, "print-dialog-no-file.png")
    response, results = call.wait(30)
    assert response == 0
    assert results["settings"]["printer"] == "PDF"
    assert "output-uri" not in results["settings"]


def test_token_of_another_app_is_not_used(bus, x, kde, cups):
    title = "limen-" + uuid.uuid4().hex[:8]
    _, call = prepare(bus, title)
    accept_dialog(x, title)
    token = call.wait(30)[1]["token"]
    pdf = kde_cups.make_pdf(os.path.join(bus.root, "one.pdf"), 1)
    _, result = print_fd(bus, title, pdf, {"token": GLib.Variant("u", token)}, app_id="org.example.Other")
    # The other app gets the dialog, not the first app's settings; it cancels.
    x.answer(title, "Escape")
    assert wait_result(result)[0] == 1


def test_cancel_and_close(bus, x, kde):
    _, call = prepare(bus, "Cancel print")
    x.answer("Cancel print", "Escape")
    response, results = call.wait(30)
    assert response == 1 and "token" not in results
    handle, call = prepare(bus, "Close print")
    x.wait_window("Close print")
    kh.close_request(bus, handle)
    assert call.wait(10)[0] == 2
    limentest.wait_until(lambda: x.run("xdotool", "search", "--onlyvisible", "--name", "Close print",
                                       check=False).stdout.strip() == "", 5)
    assert kde.alive()


def test_bad_input(bus, x, kde):
    pdf = kde_cups.make_pdf(os.path.join(bus.root, "bad.pdf"), 1)
    with pytest.raises(GLib.Error) as e:
        wait_result(print_fd(bus, "t", pdf, {}, fd_index=3)[1])
    assert "InvalidArgument" in str(e.value)
    with pytest.raises(GLib.Error) as e:
        wait_result(print_fd(bus, "t", pdf, {"token": GLib.Variant("s", "1")})[1])
    assert "InvalidArgument" in str(e.value) and "token" in str(e.value)
    with pytest.raises(GLib.Error) as e:
        prepare(bus, "t", {"n-copies": GLib.Variant("i", 2)})[1].wait(10)
    assert "InvalidArgument" in str(e.value) and "n-copies" in str(e.value)
    with pytest.raises(GLib.Error) as e:
        prepare(bus, "t", None, {"Width": GLib.Variant("s", "wide")})[1].wait(10)
    assert "InvalidArgument" in str(e.value) and "Width" in str(e.value)
    # A directory is no document.
    fd = os.open(bus.root, os.O_RDONLY | os.O_DIRECTORY)
    os.close(fd)
    assert kde.alive()


def lockdown_props(bus):
    return {k: bus.get_property(kh.IMPL + "Lockdown", k, dest=kh.KDE_NAME, path=kh.PATH)
            for k in ("disable-printing", "disable-save-to-disk", "disable-application-handlers",
                      "disable-camera", "disable-location")}


def test_lockdown_from_kiosk_keys(bus, x, cups):
    kh.write_kdeglobals(bus, "[KDE Action Restrictions]\nprint/system=false\nopenwith=false\n")
    kde = kh.start_kde_x11(bus, x, **cups.env)
    props = lockdown_props(bus)
    assert props == {"disable-printing": True, "disable-save-to-disk": False, "disable-application-handlers": True,
                     "disable-camera": False, "disable-location": False}
    with pytest.raises(GLib.Error) as e:
        prepare(bus, "Locked")[1].wait(10)
    assert "NotAllowed" in str(e.value)
    pdf = kde_cups.make_pdf(os.path.join(bus.root, "locked.pdf"), 1)
    with pytest.raises(GLib.Error) as e:
        wait_result(print_fd(bus, "Locked", pdf, {})[1])
    assert "NotAllowed" in str(e.value)
    # A peer cannot lift the lockdown: the write is refused (test_kde_lockdown.py has more).
    with pytest.raises(GLib.Error) as e:
        bus.call("org.freedesktop.DBus.Properties", "Set",
                 (kh.IMPL + "Lockdown", "disable-printing", GLib.Variant("b", False)), "(ssv)",
                 dest=kh.KDE_NAME, path=kh.PATH)
    assert "NotAllowed" in str(e.value)
    assert lockdown_props(bus)["disable-printing"] is True
    with pytest.raises(GLib.Error) as e:
        prepare(bus, "Still locked")[1].wait(10)
    assert "NotAllowed" in str(e.value)
    # Live: the administrator changes kdeglobals.
    kh.write_kdeglobals(bus, "[KDE Action Restrictions]\naction/file_save_as=false\ncamera=false\nlocation=false\n")
    limentest.wait_until(lambda: lockdown_props(bus)["disable-save-to-disk"], 10)
    assert lockdown_props(bus) == {"disable-printing": False, "disable-save-to-disk": True,
                                   "disable-application-handlers": False, "disable-camera": True,
                                   "disable-location": True}
    _, call = prepare(bus, "Unlocked")
    x.answer("Unlocked", "Escape")
    assert call.wait(30)[0] == 1
    assert kde.alive()
