"""Screen sharing as a person lives with it every day, on the headless Plasma 5.27 Wayland
session of wayland_session.py (kwin_wayland --virtual, PipeWire, WirePlumber):
notifications stay private while sharing (Do Not Disturb through Inhibit on a
notification server that implements it), and a shared window is found again after its
app restarted."""

import os
import signal

import pytest

import kde_helpers as kh
import limentest
import test_kde_screencast as sc
import wayland_session
from limentest import GLib

MOCK = "org.freedesktop.DBus.Mock"
NOTIFY = "org.freedesktop.Notifications"
NOTIFY_PATH = "/org/freedesktop/Notifications"
COOKIE = 4711


def notification_server(bus):
    """dbusmock's notification server plus Plasma's Inhibit/UnInhibit, every call recorded."""
    d = os.path.join(bus.data_home, "knotifications5")
    os.makedirs(d, exist_ok=True)
    limentest.shutil.copy(os.path.join(limentest.BUILD_DIR, "kde-backend", "limen.notifyrc"), d)
    bus.start_dbusmock_template("notification_daemon", params={"capabilities": "body actions icon-static"},
                                wait_name=NOTIFY)
    for name, in_sig, out_sig, code in [("Inhibit", "ssa{sv}", "u", f"ret = {COOKIE}"),
                                        ("UnInhibit", "u", "", "")]:
        bus.call(MOCK, "AddMethod", (NOTIFY, name, in_sig, out_sig, code), "(sssss)", dest=NOTIFY, path=NOTIFY_PATH)


def calls(bus, *names):
    return [(c[1], c[2]) for c in bus.call(MOCK, "GetCalls", None, None, dest=NOTIFY, path=NOTIFY_PATH)[0]
            if c[1] in names]


def close_session(bus, handle):
    bus.call(kh.IMPL + "Session", "Close", None, None, dest=kh.KDE_NAME, path=handle)


def share_screen(bus):
    s = sc.create(bus)
    assert sc.select_sources(bus, s, restore_data=sc.restore_data("screen:Virtual-0"))[0] == 0
    response, results = sc.start(bus, s)
    assert response == 0, results
    return s


def test_do_not_disturb_for_the_length_of_a_share(bus, session):
    notification_server(bus)
    kde = sc.start_kde_in(session, "en")
    s = share_screen(bus)

    def inhibited():
        limentest.pump(0.1)
        return calls(bus, "Inhibit")
    assert limentest.wait_until(inhibited, 10), "sharing did not turn on Do Not Disturb"
    (_, (desktop_entry, reason, hints)), = calls(bus, "Inhibit")
    assert desktop_entry == sc.APP and reason == "Screen sharing in progress"
    assert not calls(bus, "UnInhibit")

    # The Stop notification still shows: it comes after the inhibition, with critical
    # urgency, which Plasma shows in Do Not Disturb mode.
    assert limentest.wait_until(lambda: calls(bus, "Notify"), 10), "no notification says that sharing runs"
    order = [name for name, _ in calls(bus, "Inhibit", "Notify")]
    assert order[0] == "Inhibit", order
    (_, args), = calls(bus, "Notify")
    summary, actions, hints = args[3], args[5], args[6]
    assert summary == "Screen sharing" and "Stop" in actions
    assert hints["urgency"] == 2, hints

    close_session(bus, s)
    assert limentest.wait_until(lambda: (limentest.pump(0.1), calls(bus, "UnInhibit"))[1], 10), \
        "Do Not Disturb outlived the share"
    assert [args for _, args in calls(bus, "UnInhibit")] == [[COOKIE]]
    assert len(calls(bus, "Inhibit")) == 1
    assert kde.alive()


@pytest.mark.parametrize("value", ["false", "Off", "0"])
def test_no_do_not_disturb_when_the_settings_say_so(bus, session, value):
    with open(os.path.join(bus.config_home, "plasmanotifyrc"), "w") as f:
        f.write(f"[DoNotDisturb]\nWhenScreenSharing={value}\n")
    notification_server(bus)
    kde = sc.start_kde_in(session, "en")
    s = share_screen(bus)
    # The sharing notification comes after the point where Inhibit would have been asked.
    assert limentest.wait_until(lambda: (limentest.pump(0.1), calls(bus, "Notify"))[1], 10)
    assert calls(bus, "Inhibit") == []
    close_session(bus, s)
    limentest.pump(0.5)
    assert calls(bus, "UnInhibit") == []
    assert kde.alive()


def test_a_share_without_a_notification_server_runs(bus, session):
    """No notification server: Inhibit fails, the share goes on and ends cleanly."""
    kde = sc.start_kde_in(session, "en")
    s = share_screen(bus)
    limentest.pump(1.0)
    close_session(bus, s)
    limentest.pump(0.5)
    assert kde.alive()


# ---- a shared window found again after its app restarted ----------------------------

CHAT = "org.example.Chat"
GREEN, RED, BLUE = (0x20, 0xc0, 0x40), (0xd0, 0x20, 0x20), (0x20, 0x40, 0xd0)


def share_window_for_good(bus, session, title, app_id, colour):
    """Share the window of @app_id titled @title with persist_mode 2 (as a person who left
    "Allow restoring" ticked would): the restore data the app keeps."""
    probe = session.probe(title, colour, app_id=app_id)
    win = session.wait_window(title)
    s = sc.create(bus)
    assert sc.select_sources(bus, s, types=GLib.Variant("u", 2), persist_mode=GLib.Variant("u", 2),
                             restore_data=sc.restore_data("window:" + win["uuid"]))[0] == 0
    response, results = sc.start(bus, s)
    assert response == 0 and results["persist_mode"] == 2, results
    close_session(bus, s)
    return probe, results["restore_data"]


def restore_options(data):
    vendor, version, payload = data
    rd = GLib.Variant("(suv)", (vendor, version, GLib.Variant("a{sv}", {
        k: GLib.Variant("as" if k == "sources" else "a{s(ss)}" if k == "windows" else "u", v)
        for k, v in payload.items()})))
    return {"types": GLib.Variant("u", 2), "persist_mode": GLib.Variant("u", 2), "restore_data": rd}


def restore(bus, data):
    s = sc.create(bus)
    assert sc.select_sources(bus, s, **restore_options(data))[0] == 0
    return s


@pytest.mark.parametrize("asks", ["later", "at-once", "news-unread"])
def test_a_window_is_found_again_after_its_app_restarted(bus, session, asks):
    """"at-once": the app asks as soon as its window has the focus; "news-unread": limen-kde
    was busy (stopped) while the window came, so the question and KWin's news of the window
    wait together; either way the window is found without asking."""
    kde = sc.start_kde_in(session, "en")
    probe, data = share_window_for_good(bus, session, "Chat — Team room", CHAT, GREEN)
    probe.close()
    # The app restarts: a new window (a new uuid), its title a little different. Another
    # app shows a window with exactly the old title, and must never be the one shared.
    session.probe("Chat — Team room", RED, app_id="org.example.Impostor")
    session.wait_window("Chat — Team room")
    if asks == "news-unread":
        s = sc.create(bus)
        os.kill(kde.pid, signal.SIGSTOP)
    restarted = session.probe("Chat — Team room (3)", BLUE, app_id=CHAT)
    if asks == "news-unread":
        try:
            new = session.wait_window("Chat — Team room (3)")
            call = kh.AsyncCall(bus, "ScreenCast", "SelectSources",
                                (sc.paths(bus)[0], s, sc.APP, restore_options(data)), "(oosa{sv})")
            limentest.pump(0.3)
        finally:
            os.kill(kde.pid, signal.SIGCONT)
        assert call.wait()[0] == 0
    elif asks == "at-once":
        restarted.wait_for("FOCUS")
        s = restore(bus, data)
        new = session.wait_window("Chat — Team room (3)")
    else:
        new = session.wait_window("Chat — Team room (3)")
        s = restore(bus, data)
    response, results = sc.start(bus, s)   # no dialog: it would never be answered here
    assert response == 0, results
    (node, props), = results["streams"]
    assert props["mapping_id"] == "window:" + new["uuid"]
    frame = session.consume(node, count=3)
    assert frame and sc.rgb_at(frame, 200, 150) == BLUE
    # The new token describes the new window, for the next restart.
    assert results["restore_data"][2]["windows"] == {"window:" + new["uuid"]: (CHAT, "Chat — Team room (3)")}
    assert kde.alive()


@pytest.mark.parametrize("case", ["other-app-same-title", "same-app-other-title"])
def test_no_other_window_is_taken_without_asking(bus, session, case):
    kde = sc.start_kde_in(session, "en")
    probe, data = share_window_for_good(bus, session, "Chat — Team room", CHAT, GREEN)
    probe.close()
    if case == "other-app-same-title":
        session.probe("Chat — Team room", RED, app_id="org.example.Impostor")
        session.wait_window("Chat — Team room")
    else:
        session.probe("Settings", RED, app_id=CHAT)
        session.wait_window("Settings")
    s = restore(bus, data)
    # Nothing is taken: the person is asked (the picker opens; the app gives up here).
    handle = sc.paths(bus)[0]
    call = kh.AsyncCall(bus, "ScreenCast", "Start", (handle, s, sc.APP, "", {}), "(oossa{sv})")
    session.wait_window("Screen Sharing")
    kh.close_request(bus, handle)
    assert call.wait()[0] == 2
    assert kde.alive()


# ---- the picker: "All screens" as one source -----------------------------------------

@pytest.fixture
def two_screens(bus):
    s = wayland_session.WaylandSession(bus, width=1280, height=800, outputs=2)
    try:
        yield s
    finally:
        s.close()


@pytest.mark.parametrize("lang", ["en", "de"])
def test_all_screens_as_one_source(bus, two_screens, lang):
    """With two screens the picker offers the whole workspace first; chosen (by keys through
    KWin's fake input), it is one stream of KWin's region of both screens, restorable."""
    session = two_screens
    kde = sc.start_kde_in(session, lang)
    s = sc.create(bus)
    assert sc.select_sources(bus, s, types=GLib.Variant("u", 1), persist_mode=GLib.Variant("u", 2))[0] == 0
    handle = sc.paths(bus)[0]
    call = kh.AsyncCall(bus, "ScreenCast", "Start", (handle, s, sc.APP, "", {}), "(oossa{sv})")
    title = "Bildschirmfreigabe" if lang == "de" else "Screen Sharing"
    win = session.wait_window(title)
    limentest.pump(1.0)
    shot = session.screenshot(os.path.join(bus.root, "picker.png"))
    sc.crop_window(session, shot, win, f"screencast-picker-all-screens-{lang}.png")
    rd, _ = sc.rd_start(bus, devices=1)
    session.activate(title)
    limentest.pump(0.5)
    sc.press(bus, rd, sc.KEY_ENTER)   # the first item, selected: All screens
    response, results = call.wait()
    assert response == 0, results
    (node, props), = results["streams"]
    assert props["mapping_id"] == "all-screens" and props["source_type"] == 1
    assert props["position"] == (0, 0) and props["size"] == (2560, 800), props
    assert results["restore_data"][2]["sources"] == ["all-screens"]
    # Restored without a question.
    s2 = sc.create(bus)
    assert sc.select_sources(bus, s2, types=GLib.Variant("u", 1), persist_mode=GLib.Variant("u", 2),
                             restore_data=sc.restore_data("all-screens"))[0] == 0
    response, results2 = sc.start(bus, s2)
    assert response == 0 and results2["streams"][0][1]["mapping_id"] == "all-screens"
    assert kde.alive()


def test_one_screen_offers_no_all_screens(bus, session):
    """One screen: "All screens" would be the same thing twice; restore data naming it asks."""
    kde = sc.start_kde_in(session, "en")
    s = sc.create(bus)
    assert sc.select_sources(bus, s, types=GLib.Variant("u", 1),
                             restore_data=sc.restore_data("all-screens"))[0] == 0
    handle = sc.paths(bus)[0]
    call = kh.AsyncCall(bus, "ScreenCast", "Start", (handle, s, sc.APP, "", {}), "(oossa{sv})")
    session.wait_window("Screen Sharing")
    kh.close_request(bus, handle)
    assert call.wait()[0] == 2
    assert kde.alive()


# ---- the picker: a region the person draws -------------------------------------------

BTN_LEFT = 0x110


def pointer(bus, rd, dx, dy):
    sc.notify(bus, "NotifyPointerMotion", "(oa{sv}dd)", rd, {}, float(dx), float(dy))


@pytest.mark.parametrize("lang", ["en", "de"])
def test_a_region_the_person_draws(bus, session, lang):
    """The picker offers a region; chosen, the person drags a rectangle over the dimmed
    screen (pointer and keys through KWin's fake input) and KWin streams that region of the
    workspace, in logical coordinates whatever Qt's scale (German at 200%)."""
    session.probe("Behind", GREEN, size=(1000, 700))   # something for the layer to dim
    kde = sc.start_kde_in(session, lang)
    s = sc.create(bus)
    assert sc.select_sources(bus, s, types=GLib.Variant("u", 1), persist_mode=GLib.Variant("u", 2))[0] == 0
    handle = sc.paths(bus)[0]
    call = kh.AsyncCall(bus, "ScreenCast", "Start", (handle, s, sc.APP, "", {}), "(oossa{sv})")
    title = "Bildschirmfreigabe" if lang == "de" else "Screen Sharing"
    win = session.wait_window(title)
    rd, _ = sc.rd_start(bus, devices=3)
    session.activate(title)
    limentest.pump(0.5)
    # Screen, then the region: Down selects it, Enter shares.
    sc.press(bus, rd, sc.KEY_DOWN)
    limentest.pump(0.5)
    shot = session.screenshot(os.path.join(bus.root, "picker.png"))
    sc.crop_window(session, shot, win, f"screencast-picker-region-{lang}.png")
    sc.press(bus, rd, sc.KEY_ENTER)
    layer = "Freizugebenden Bereich aufziehen" if lang == "de" else "Draw the Region to Share"
    session.wait_window(layer)
    limentest.pump(0.5)
    pointer(bus, rd, -5000, -5000)      # into the corner: (0, 0)
    pointer(bus, rd, 200, 150)
    limentest.pump(0.3)
    sc.notify(bus, "NotifyPointerButton", "(oa{sv}iu)", rd, {}, BTN_LEFT, 1)
    for _ in range(4):
        pointer(bus, rd, 100, 75)
        limentest.pump(0.1)
    limentest.pump(0.5)
    session.screenshot(os.path.join(kh.artifacts_dir(), f"screencast-region-drawing-{lang}.png"))
    sc.notify(bus, "NotifyPointerButton", "(oa{sv}iu)", rd, {}, BTN_LEFT, 0)
    response, results = call.wait()
    assert response == 0, results
    (node, props), = results["streams"]
    assert props["mapping_id"] == "region:200,150,400,300", props
    assert props["position"] == (200, 150) and props["size"] == (400, 300) and props["source_type"] == 1
    assert results["restore_data"][2]["sources"] == ["region:200,150,400,300"]
    assert limentest.wait_until(lambda: not [w for w in session.windows() if w["caption"] in (layer, title)], 10), \
        "the picker or the region layer stayed"
    # Restored without a question; a region off the workspace is not.
    s2 = sc.create(bus)
    assert sc.select_sources(bus, s2, types=GLib.Variant("u", 1),
                             restore_data=sc.restore_data("region:200,150,400,300"))[0] == 0
    response, results2 = sc.start(bus, s2)
    assert response == 0 and results2["streams"][0][1]["size"] == (400, 300)
    assert kde.alive()


@pytest.mark.parametrize("bad", ["region:1200,700,400,300", "region:0,0,0,10", "region:-5,0,10,10",
                                 "region:Virtual-0:0,0,10,10", "region:1,2,3", "region:1,2,3,4x"])
def test_a_region_off_the_workspace_is_not_restored(bus, session, bad):
    kde = sc.start_kde_in(session, "en")
    s = sc.create(bus)
    assert sc.select_sources(bus, s, types=GLib.Variant("u", 1), restore_data=sc.restore_data(bad))[0] == 0
    handle = sc.paths(bus)[0]
    call = kh.AsyncCall(bus, "ScreenCast", "Start", (handle, s, sc.APP, "", {}), "(oossa{sv})")
    session.wait_window("Screen Sharing")
    kh.close_request(bus, handle)
    assert call.wait()[0] == 2
    assert kde.alive()
