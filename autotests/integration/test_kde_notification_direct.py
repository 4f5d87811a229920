"""limen-kde without its limen.notifyrc where KNotification looks (an uninstalled build, a
broken package): KNotification would drop every notification without a word while the app
is told it was shown. limen-kde says so at start and sends them to the notification server
(dbusmock's notification_daemon) itself: shown, updated, clicked, withdrawn."""

import os

import pytest

import kde_helpers as kh
import limentest
from limentest import GLib
from test_kde_services import add, click_until, mock_calls, notify_calls, start_mock, watch_action_invoked

NOTIFY = ("org.freedesktop.Notifications", "/org/freedesktop/Notifications")


@pytest.fixture
def no_notifyrc(bus):
    # Data dirs of the test's own, none with a knotifications5/limen.notifyrc.
    empty = os.path.join(bus.root, "share")
    os.makedirs(empty, exist_ok=True)
    bus.env["XDG_DATA_DIRS"] = empty
    start_mock(bus, *NOTIFY, "org.freedesktop.Notifications", template="notification_daemon",
               params={"capabilities": "body actions"})
    return kh.start_kde(bus)


def test_start_log_names_the_missing_notifyrc(bus, no_notifyrc):
    assert limentest.wait_until(lambda: "limen.notifyrc" in no_notifyrc.output(), 10), no_notifyrc.output()


def test_notification_reaches_the_server(bus, no_notifyrc):
    add(bus, "org.example.App", "n1", {
        "title": GLib.Variant("s", "Build finished"),
        "markup-body": GLib.Variant("s", "All <b>42</b> tests passed"),
        "priority": GLib.Variant("s", "urgent"),
        "category": GLib.Variant("s", "im.received"),
        "icon": GLib.Variant("v", GLib.Variant("(sv)", ("themed", GLib.Variant("as", ["dialog-information"])))),
        "default-action": GLib.Variant("s", "app.open"),
        "buttons": GLib.Variant("aa{sv}", [{"label": GLib.Variant("s", "Later"),
                                            "action": GLib.Variant("s", "app.later")}]),
    })
    calls = limentest.wait_until(lambda: notify_calls(bus), 10)
    assert calls, "no Notify reached the server:\n" + no_notifyrc.output()
    app_name, replaces, icon, summary, body, actions, hints, timeout = calls[-1][2]
    assert (summary, body, icon, replaces) == ("Build finished", "All 42 tests passed", "dialog-information", 0)
    assert dict(zip(actions[0::2], actions[1::2])) == {"default": "Open", "0": "Later"}
    assert hints["urgency"] == 2 and hints["desktop-entry"] == "org.example.App"
    assert hints["category"] == "im.received"

    # The same id again updates it in place: the server's number comes back as replaces_id.
    add(bus, "org.example.App", "n1", {"title": GLib.Variant("s", "Build finished again")})
    calls = limentest.wait_until(lambda: notify_calls(bus)[1:], 10)
    assert calls and calls[-1][2][1] == 1 and calls[-1][2][3] == "Build finished again"


def test_a_click_comes_back_and_removal_withdraws_it(bus, no_notifyrc):
    seen = watch_action_invoked(bus)
    add(bus, "org.example.App", "n2", {
        "title": GLib.Variant("s", "Reply?"),
        "buttons": GLib.Variant("aa{sv}", [
            {"label": GLib.Variant("s", "Later"), "action": GLib.Variant("s", "later")},
            {"label": GLib.Variant("s", "Reply"), "action": GLib.Variant("s", "reply"),
             "target": GLib.Variant("v", GLib.Variant("s", "thread-7"))}]),
    })
    assert limentest.wait_until(lambda: notify_calls(bus), 10)
    assert click_until(bus, "1", lambda: seen, token="token-1")
    app_id, nid, action, params = seen[0]
    assert (app_id, nid, action) == ("org.example.App", "n2", "reply")
    assert params[0] == "thread-7" and params[1] == {"activation-token": "token-1",
                                                     "desktop-startup-id": "token-1"}

    kh.call_impl(bus, "Notification", "RemoveNotification", ("org.example.App", "n2"), "(ss)")
    closes = lambda: [c for c in mock_calls(bus, *NOTIFY) if c[1] == "CloseNotification"]
    assert limentest.wait_until(closes, 10)
    assert closes()[0][2] == [1]
