"""limen-kde portals that talk to desktop services: Notification (KNotification against
dbusmock's notification_daemon), Inhibit (dbusmock ScreenSaver and PowerDevil
PolicyAgent), Email (KDE's launcher starting a fake mail client)."""

import json
import os
import shutil
import time

import pytest

import kde_helpers as kh
import limentest
from limentest import GLib

MOCK = "org.freedesktop.DBus.Mock"


def start_mock(bus, name, path, iface, template=None, params=None):
    argv = [limentest.python_exe(), "-m", "dbusmock"]
    if template:
        argv += ["--template", template]
        if params:
            argv += ["-p", json.dumps(params)]
    else:
        argv += [name, path, iface]
    return bus.start(argv, wait_name=name)


def mock_calls(bus, name, path):
    return bus.call(MOCK, "GetCalls", None, None, dest=name, path=path)[0]


def install_notifyrc(bus):
    d = os.path.join(bus.data_home, "knotifications5")
    os.makedirs(d, exist_ok=True)
    shutil.copy(os.path.join(limentest.BUILD_DIR, "kde-backend", "limen.notifyrc"), d)


@pytest.fixture
def notifications(bus):
    install_notifyrc(bus)
    start_mock(bus, "org.freedesktop.Notifications", "/org/freedesktop/Notifications",
               "org.freedesktop.Notifications", template="notification_daemon",
               params={"capabilities": "body actions icon-static"})
    return kh.start_kde(bus)


def notify_calls(bus):
    return [c for c in mock_calls(bus, "org.freedesktop.Notifications", "/org/freedesktop/Notifications")
            if c[1] == "Notify"]


def add(bus, app, nid, n):
    kh.call_impl(bus, "Notification", "AddNotification", (app, nid, n), "(ssa{sv})")


def test_notification_reaches_server(bus, notifications):
    add(bus, "org.example.App", "n1", {
        "title": GLib.Variant("s", "Build finished"),
        "body": GLib.Variant("s", "All 42 tests passed"),
        "icon": GLib.Variant("v", GLib.Variant("(sv)", ("themed", GLib.Variant("as", ["dialog-information"])))),
        "priority": GLib.Variant("s", "urgent"),
        "buttons": GLib.Variant("aa{sv}", [{"label": GLib.Variant("s", "Open"), "action": GLib.Variant("s", "app.open")}]),
    })
    calls = limentest.wait_until(lambda: notify_calls(bus), 10)
    assert calls, "no Notify reached the server"
    app_name, replaces, icon, summary, body, actions, hints, timeout = calls[-1][2]
    assert summary == "Build finished" and "42 tests" in body
    assert icon == "dialog-information"
    assert "Open" in actions
    assert hints.get("urgency") == 2
    assert hints.get("desktop-entry") == "org.example.App"


def watch_action_invoked(bus):
    """The impl ActionInvoked signals limen-kde emits from now on, unpacked, in a list."""
    seen = []
    bus.conn.signal_subscribe(kh.KDE_NAME, "org.freedesktop.impl.portal.Notification", "ActionInvoked",
                              kh.PATH, None, 0, lambda *a: seen.append(a[5].unpack()))
    return seen


def server_invokes(bus, server_id, key, token=None):
    """The mock notification server emits ActionInvoked(@server_id, @key), as on a click;
    with @token, ActivationToken first, as Plasma's server does for a click."""
    if token:
        bus.call(MOCK, "EmitSignal", ("org.freedesktop.Notifications", "ActivationToken", "us",
                                      [GLib.Variant("u", server_id), GLib.Variant("s", token)]),
                 "(sssav)", dest="org.freedesktop.Notifications", path="/org/freedesktop/Notifications")
    bus.call(MOCK, "EmitSignal", ("org.freedesktop.Notifications", "ActionInvoked", "us",
                                  [GLib.Variant("u", server_id), GLib.Variant("s", key)]),
             "(sssav)", dest="org.freedesktop.Notifications", path="/org/freedesktop/Notifications")


def click_until(bus, key, done, timeout=15, token=None):
    """The server's ActionInvoked for the notification it numbered last, as a person clicks
    again when nothing happened: KNotification learns the number from the reply to its
    Notify, which can reach it after the server has logged the call, and it drops a signal
    for a number it does not know yet. True once done() is."""
    # notification_daemon numbers new notifications 1, 2, ... in the order it gets them.
    server_id = sum(1 for c in notify_calls(bus) if c[2][1] == 0)
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        server_invokes(bus, server_id, key, token)
        if limentest.wait_until(done, 1):
            return True
    return False


def click_until_seen(bus, key, seen):
    """click_until limen-kde has emitted an ActionInvoked (into @seen)."""
    return click_until(bus, key, lambda: seen)


def test_action_invoked(bus, notifications):
    seen = watch_action_invoked(bus)
    add(bus, "org.example.App", "n2", {
        "title": GLib.Variant("s", "Reply?"),
        "default-action": GLib.Variant("s", "app.activate"),
        "buttons": GLib.Variant("aa{sv}", [
            {"label": GLib.Variant("s", "Later"), "action": GLib.Variant("s", "app.later")},
            {"label": GLib.Variant("s", "Reply"), "action": GLib.Variant("s", "app.reply"),
             "target": GLib.Variant("v", GLib.Variant("s", "thread-7"))}]),
    })
    calls = limentest.wait_until(lambda: notify_calls(bus), 10)
    assert calls
    actions = calls[-1][2][5]
    # Action keys as KNotification sent them: pairs (key, label).
    keys = dict(zip(actions[1::2], actions[0::2]))
    # The server's activation token comes with the click; the app gets it after the target
    # (the platform data of the specification's version 2), to raise its window on Wayland.
    assert click_until(bus, keys["Reply"], lambda: seen, token="tok-1"), "no ActionInvoked"
    assert seen[0][:3] == ("org.example.App", "n2", "app.reply")
    assert seen[0][3] == ["thread-7", {"activation-token": "tok-1", "desktop-startup-id": "tok-1"}]


def test_default_action(bus, notifications):
    seen = watch_action_invoked(bus)
    add(bus, "org.example.App", "n5", {
        "title": GLib.Variant("s", "Click me"),
        "default-action": GLib.Variant("s", "app.show"),
        "default-action-target": GLib.Variant("v", GLib.Variant("u", 7)),
    })
    calls = limentest.wait_until(lambda: notify_calls(bus), 10)
    actions = calls[-1][2][5]
    assert "default" in actions[0::2]
    assert click_until_seen(bus, "default", seen), "no ActionInvoked"
    assert seen[0] == ("org.example.App", "n5", "app.show", [7, {}])   # no token from this server


def test_remove_and_replace(bus, notifications):
    add(bus, "org.example.App", "n3", {"title": GLib.Variant("s", "one")})
    # KNotification can only close what the server has numbered, so let the first land.
    assert limentest.wait_until(lambda: len(notify_calls(bus)) >= 1, 10)
    limentest.pump(0.3)
    add(bus, "org.example.App", "n3", {"title": GLib.Variant("s", "two")})
    assert limentest.wait_until(lambda: len(notify_calls(bus)) >= 2, 10)
    limentest.pump(0.3)
    kh.call_impl(bus, "Notification", "RemoveNotification", ("org.example.App", "n3"), "(ss)")
    closes = limentest.wait_until(lambda: [c for c in mock_calls(bus, "org.freedesktop.Notifications",
                                                                  "/org/freedesktop/Notifications")
                                           if c[1] == "CloseNotification"], 10)
    assert closes
    # Removing an unknown one is fine.
    kh.call_impl(bus, "Notification", "RemoveNotification", ("org.example.App", "nope"), "(ss)")


def test_bytes_icon(bus, notifications):
    png = open("/usr/share/icons/hicolor/48x48/apps/" + sorted(os.listdir("/usr/share/icons/hicolor/48x48/apps"))[0],
               "rb").read() if os.path.isdir("/usr/share/icons/hicolor/48x48/apps") else b"\x89PNG\r\n\x1a\n" + b"0" * 64
    add(bus, "org.example.App", "n4", {
        "title": GLib.Variant("s", "Picture"),
        "icon": GLib.Variant("v", GLib.Variant("(sv)", ("bytes", GLib.Variant("ay", png)))),
    })
    calls = limentest.wait_until(lambda: notify_calls(bus), 10)
    icon = calls[-1][2][2]
    assert icon.startswith(bus.runtime_dir) or icon.startswith("file://" + bus.runtime_dir)


@pytest.mark.parametrize("key,value", [
    ("priority", GLib.Variant("s", "extreme")),
    ("title", GLib.Variant("u", 1)),
    ("icon", GLib.Variant("v", GLib.Variant("(sv)", ("file", GLib.Variant("s", "/etc/passwd"))))),
    ("buttons", GLib.Variant("aa{sv}", [{"label": GLib.Variant("s", "x")}])),
    ("buttons", GLib.Variant("aa{sv}", [{"label": GLib.Variant("s", "x"), "action": GLib.Variant("s", "a")}] * 65)),
])
def test_notification_bad_input(bus, notifications, key, value):
    with pytest.raises(GLib.Error) as e:
        add(bus, "org.example.App", "bad", {key: value})
    assert limentest.dbus_error_name(e.value) == "org.freedesktop.portal.Error.InvalidArgument"
    assert key in e.value.message


# ---- Inhibit ---------------------------------------------------------------------------

def start_inhibit_mocks(bus):
    start_mock(bus, "org.freedesktop.ScreenSaver", "/org/freedesktop/ScreenSaver", "org.freedesktop.ScreenSaver")
    bus.call(MOCK, "AddMethods", ("org.freedesktop.ScreenSaver", [
        ("Inhibit", "ss", "u", "ret = 11"), ("UnInhibit", "u", "", ""), ("GetActive", "", "b", "ret = False")]),
        "(sa(ssss))", dest="org.freedesktop.ScreenSaver", path="/org/freedesktop/ScreenSaver")
    name = "org.kde.Solid.PowerManagement.PolicyAgent"
    path = "/org/kde/Solid/PowerManagement/PolicyAgent"
    start_mock(bus, name, path, name)
    bus.call(MOCK, "AddMethods", (name, [("AddInhibition", "uss", "u", "ret = 22"),
                                         ("ReleaseInhibition", "u", "", "")]),
             "(sa(ssss))", dest=name, path=path)


def test_inhibit_and_release(bus):
    start_inhibit_mocks(bus)
    kh.start_kde(bus)
    handle = kh.new_handle(bus)
    kh.call_impl(bus, "Inhibit", "Inhibit", (handle, "org.example.Player", "", 4 | 8,
                                             {"reason": GLib.Variant("s", "Playing a film")}), "(ossua{sv})")
    ss = mock_calls(bus, "org.freedesktop.ScreenSaver", "/org/freedesktop/ScreenSaver")
    pa = mock_calls(bus, "org.kde.Solid.PowerManagement.PolicyAgent", "/org/kde/Solid/PowerManagement/PolicyAgent")
    assert [c[2] for c in ss if c[1] == "Inhibit"] == [["org.example.Player", "Playing a film"]]
    added = [c[2] for c in pa if c[1] == "AddInhibition"]
    assert added == [[1 | 4, "org.example.Player", "Playing a film"]]
    kh.close_request(bus, handle)

    def released():
        ss = mock_calls(bus, "org.freedesktop.ScreenSaver", "/org/freedesktop/ScreenSaver")
        pa = mock_calls(bus, "org.kde.Solid.PowerManagement.PolicyAgent",
                        "/org/kde/Solid/PowerManagement/PolicyAgent")
        return ([c[2] for c in ss if c[1] == "UnInhibit"] == [[11]] and
                [c[2] for c in pa if c[1] == "ReleaseInhibition"] == [[22]])
    assert limentest.wait_until(released, 5)


def test_inhibit_released_when_frontend_leaves(bus):
    start_inhibit_mocks(bus)
    kh.start_kde(bus)
    conn = bus.new_connection()
    kh.call_impl(bus, "Inhibit", "Inhibit", (kh.new_handle(bus, conn), "org.example.A", "", 8, {}),
                 "(ossua{sv})", conn=conn)
    conn.close_sync(None)
    assert limentest.wait_until(lambda: [c for c in mock_calls(bus, "org.freedesktop.ScreenSaver",
                                                                "/org/freedesktop/ScreenSaver")
                                         if c[1] == "UnInhibit"], 5)


def test_inhibit_without_services_fails_promptly(bus):
    kh.start_kde(bus)
    t = time.time()
    with pytest.raises(GLib.Error) as e:
        kh.call_impl(bus, "Inhibit", "Inhibit", (kh.new_handle(bus), "a", "", 8, {}), "(ossua{sv})")
    assert time.time() - t < 3
    assert limentest.dbus_error_name(e.value) == "org.freedesktop.portal.Error.Failed"
    for flags in (0, 16, 0xFFFFFFFF):
        with pytest.raises(GLib.Error) as e:
            kh.call_impl(bus, "Inhibit", "Inhibit", (kh.new_handle(bus), "a", "", flags, {}), "(ossua{sv})")
        assert limentest.dbus_error_name(e.value) == "org.freedesktop.portal.Error.InvalidArgument"


def test_monitor_state(bus):
    start_inhibit_mocks(bus)
    kh.start_kde(bus)
    states = []
    bus.conn.signal_subscribe(kh.KDE_NAME, "org.freedesktop.impl.portal.Inhibit", "StateChanged", kh.PATH, None, 0,
                              lambda *a: states.append(a[5].unpack()))
    sender = bus.conn.get_unique_name()[1:].replace(".", "_")
    session = f"/org/freedesktop/portal/desktop/session/{sender}/m1"
    assert kh.call_impl(bus, "Inhibit", "CreateMonitor", (kh.new_handle(bus), session, "a", ""), "(ooss)") == (0,)
    assert limentest.wait_until(lambda: states, 5)
    assert states[0] == (session, {"screensaver-active": False, "session-state": 1})
    bus.call(MOCK, "EmitSignal", ("org.freedesktop.ScreenSaver", "ActiveChanged", "b", [GLib.Variant("b", True)]),
             "(sssav)", dest="org.freedesktop.ScreenSaver", path="/org/freedesktop/ScreenSaver")
    assert limentest.wait_until(lambda: any(s[1]["screensaver-active"] for s in states), 5)
    kh.call_impl(bus, "Inhibit", "QueryEndResponse", (session,), "(o)")
    bus.call("org.freedesktop.impl.portal.Session", "Close", None, None, dest=kh.KDE_NAME, path=session)
    with pytest.raises(GLib.Error):
        kh.call_impl(bus, "Inhibit", "QueryEndResponse", (session,), "(o)")


# ---- Email -----------------------------------------------------------------------------

def test_compose_email_starts_mail_client(bus):
    out = os.path.join(bus.root, "mail-args.txt")
    script = os.path.join(bus.root, "fake-mailer")
    with open(script, "w") as f:
        f.write(f"#!/bin/sh\nprintf '%s\\n' \"$@\" > {out}\n")
    os.chmod(script, 0o755)
    apps = os.path.join(bus.data_home, "applications")
    os.makedirs(apps)
    with open(os.path.join(apps, "fakemail.desktop"), "w") as f:
        f.write(f"[Desktop Entry]\nType=Application\nName=Fake Mail\nExec={script} %u\n"
                "MimeType=x-scheme-handler/mailto;\n")
    with open(os.path.join(bus.config_home, "mimeapps.list"), "w") as f:
        f.write("[Default Applications]\nx-scheme-handler/mailto=fakemail.desktop\n")
    attachment = os.path.join(bus.home, "report.pdf")
    with open(attachment, "w") as f:
        f.write("%PDF")
    kh.start_kde(bus)
    response, _ = kh.call_impl(bus, "Email", "ComposeEmail", (kh.new_handle(bus), "org.example.App", "", {
        "addresses": GLib.Variant("as", ["a@example.org"]), "cc": GLib.Variant("as", ["c@example.org"]),
        "subject": GLib.Variant("s", "Hello there"), "body": GLib.Variant("s", "Body text"),
        "attachments": GLib.Variant("as", [attachment])}), "(ossa{sv})", timeout=60000)
    assert response == 0
    assert limentest.wait_until(lambda: os.path.exists(out) and os.path.getsize(out) > 0, 10)
    with open(out) as f:
        args = f.read()
    assert "mailto:a@example.org" in args and "Hello" in args and "report.pdf" in args and "c@example.org" in args


@pytest.mark.parametrize("key,value", [
    ("addresses", GLib.Variant("as", ["a@example.org\nBcc: evil@example.org"])),
    ("address", GLib.Variant("s", "not-an-address")),
    ("attachments", GLib.Variant("as", ["relative/path"])),
])
def test_email_bad_input(bus, key, value):
    kh.start_kde(bus)
    with pytest.raises(GLib.Error) as e:
        kh.call_impl(bus, "Email", "ComposeEmail", (kh.new_handle(bus), "a", "", {key: value}), "(ossa{sv})")
    assert limentest.dbus_error_name(e.value) == "org.freedesktop.portal.Error.InvalidArgument"


def test_notification_sound_hints(bus, notifications):
    """Sound bytes (validated by the frontend) reach the server as a private sound-file;
    "silent" as suppress-sound."""
    data = b"RIFF" + bytes(40)
    add(bus, "org.example.App", "s1", {"title": GLib.Variant("s", "Ding"),
                                       "sound": GLib.Variant("v", GLib.Variant("(sv)", ("bytes", GLib.Variant("ay", data))))})
    calls = limentest.wait_until(lambda: notify_calls(bus), 10)
    assert calls
    hints = calls[-1][2][6]
    path = hints.get("sound-file")
    assert path and path.startswith(bus.runtime_dir)
    with open(path, "rb") as f:
        assert f.read() == data
    assert oct(os.stat(path).st_mode & 0o777) == "0o600"
    add(bus, "org.example.App", "s2", {"title": GLib.Variant("s", "Quiet"),
                                       "sound": GLib.Variant("v", GLib.Variant("s", "silent"))})
    assert limentest.wait_until(lambda: len(notify_calls(bus)) >= 2, 10)
    hints = notify_calls(bus)[-1][2][6]
    assert hints.get("suppress-sound") is True and "sound-file" not in hints
    with pytest.raises(GLib.Error) as e:
        add(bus, "org.example.App", "s3", {"sound": GLib.Variant("v", GLib.Variant("s", "loud"))})
    assert "sound" in e.value.message


GIO_APP = r'''
from gi.repository import Gio, GLib
app = Gio.Application(application_id="org.example.Notifier", flags=Gio.ApplicationFlags.DEFAULT_FLAGS)
def reply(action, param):
    print("ACTION reply " + param.unpack(), flush=True)
    app.quit()
act = Gio.SimpleAction.new("reply", GLib.VariantType.new("s"))
act.connect("activate", reply)
app.add_action(act)
def startup(a):
    n = Gio.Notification.new("Build finished")
    n.set_body("All 42 tests passed")
    n.set_icon(Gio.ThemedIcon.new("mail-unread"))
    n.add_button_with_target("Reply", "app.reply", GLib.Variant("s", "thread-7"))
    n.set_default_action_and_target("app.reply", GLib.Variant("s", "opened"))
    a.send_notification("build", n)
    print("SENT", flush=True)
app.connect("startup", startup)
app.connect("activate", lambda a: None)
app.hold()
GLib.timeout_add_seconds(40, app.quit)
app.run([])
'''


def test_gnotification_of_a_flatpak_app(bus, notifications):
    """GLib's own client: a Gio.Application inside a Flatpak sandbox sends a GNotification
    (GIO uses the Notification portal there) through limen-portal and limen-kde to the
    notification server, its themed icon too; a click on its button activates the app's
    action, with its target,
    through org.freedesktop.Application (GIO's portal client listens for nothing else), as
    with the reference."""
    import threading
    from test_kde_frontends import start_limen_portal
    start_limen_portal(bus)
    result = {}
    t = threading.Thread(target=lambda: result.update(r=limentest.run_sandboxed(bus, "org.example.Notifier", GIO_APP,
                                                                                 timeout=60)))
    t.start()
    try:
        calls = limentest.wait_until(lambda: notify_calls(bus), 15)
        assert calls, "no Notify reached the server"
        app_name, replaces, icon, summary, body, actions, hints, timeout = calls[-1][2]
        assert (summary, body, icon) == ("Build finished", "All 42 tests passed", "mail-unread")
        assert hints.get("desktop-entry") == "org.example.Notifier"
        keys = dict(zip(actions[1::2], actions[0::2]))
        # The app quits once its action ran.
        click_until(bus, keys["Reply"], lambda: not t.is_alive(), timeout=20)
    finally:
        t.join(60)
    out = result["r"].stdout
    assert "SENT" in out and "ACTION reply thread-7" in out, (out, result["r"].stderr)


FDO_APPLICATION = """<node><interface name="org.freedesktop.Application">
<method name="Activate"><arg type="a{sv}" name="platform_data" direction="in"/></method>
<method name="ActivateAction"><arg type="s" name="action" direction="in"/><arg type="av" name="parameter" direction="in"/>
<arg type="a{sv}" name="platform_data" direction="in"/></method>
<method name="Open"><arg type="as" name="uris" direction="in"/><arg type="a{sv}" name="platform_data" direction="in"/></method>
</interface></node>"""


class FakeApplication:
    """An app owning @app_id with org.freedesktop.Application at its path, recording calls."""

    def __init__(self, bus, app_id):
        from gi.repository import Gio
        self.calls = []
        self.conn = bus.new_connection()
        info = Gio.DBusNodeInfo.new_for_xml(FDO_APPLICATION).interfaces[0]
        path = "/" + app_id.replace(".", "/").replace("-", "_")

        def on_call(conn, sender, obj, iface, method, params, invocation):
            self.calls.append((method, params.unpack()))
            invocation.return_value(None)

        self.conn.register_object(path, info, on_call, None, None)
        bus.call("org.freedesktop.DBus", "RequestName", (app_id, 4), "(su)", dest="org.freedesktop.DBus",
                 path="/org/freedesktop/DBus", conn=self.conn)


def test_app_actions_go_to_the_app(bus, notifications):
    """An "app." action of an app on the bus with org.freedesktop.Application is activated
    there, with its target and the click's activation token, and not sent as ActionInvoked;
    any other action raises the app (Activate) and comes as ActionInvoked."""
    app = FakeApplication(bus, "org.example.Exported")
    seen = watch_action_invoked(bus)

    def show_and_click(nid, label, action, done, target=None, token=None):
        button = {"label": GLib.Variant("s", label), "action": GLib.Variant("s", action)}
        if target is not None:
            button["target"] = GLib.Variant("v", target)
        before = len(notify_calls(bus))
        add(bus, "org.example.Exported", nid, {"title": GLib.Variant("s", nid),
                                               "buttons": GLib.Variant("aa{sv}", [button])})
        assert limentest.wait_until(lambda: len(notify_calls(bus)) > before, 10)
        actions = notify_calls(bus)[-1][2][5]
        return click_until(bus, dict(zip(actions[1::2], actions[0::2]))[label], done, token=token)

    assert show_and_click("n9", "Reply", "app.reply", lambda: app.calls, GLib.Variant("s", "thread-7"))
    assert app.calls[0] == ("ActivateAction", ("reply", ["thread-7"], {}))
    assert show_and_click("n11", "Open", "app.open", lambda: len(app.calls) > 1, token="kwin-token-42")
    assert app.calls[1] == ("ActivateAction", ("open", [], {"activation-token": "kwin-token-42",
                                                            "desktop-startup-id": "kwin-token-42"}))
    limentest.wait_until(lambda: seen, 0.5)
    assert seen == []
    assert show_and_click("n10", "Mute", "mute", lambda: seen)
    assert seen[0][:3] == ("org.example.Exported", "n10", "mute")
    assert limentest.wait_until(lambda: ("Activate", ({},)) in app.calls), app.calls


def test_knotification_of_a_flatpak_kde_app(bus, notifications):
    """KDE's own client: KNotification inside a Flatpak sandbox sends through the
    Notification portal itself (its default-action-target a plain string, as GLib's is too)
    and hears of a click from ActionInvoked (its actions are not the app's exported ones): a
    click on its first button reaches it as button 1."""
    import subprocess
    import threading
    from test_kde_frontends import start_limen_portal
    client = os.path.join(limentest.BUILD_DIR, "autotests", "knotification-client")
    start_limen_portal(bus)
    # KNotification sends only events its app declares, in the app's own .notifyrc.
    data = os.path.join(bus.root, "app-data")
    os.makedirs(os.path.join(data, "knotifications5"))
    with open(os.path.join(data, "knotifications5", "knotification-client.notifyrc"), "w") as f:
        f.write("[Global]\nIconName=document-save\nComment=Backup\n\n"
                "[Event/notification]\nName=Notification\nAction=Popup\n")
    r, w = os.pipe()
    os.write(w, limentest.FLATPAK_INFO.format(app_id="org.kde.Backup").encode())
    os.close(w)
    argv = limentest.bwrap_argv(bus, ro_binds=(client,)) + [
        "--ro-bind-data", str(r), "/.flatpak-info", "--ro-bind", data, "/tmp/data",
        "--setenv", "XDG_DATA_HOME", "/tmp/data", "--setenv", "QT_QPA_PLATFORM", "offscreen",
        "--setenv", "HOME", "/tmp", client, "30"]
    proc = subprocess.Popen(argv, pass_fds=(r,), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env={"PATH": "/usr/bin:/bin", "LANG": "C.UTF-8"})
    os.close(r)
    out = []
    reader = threading.Thread(target=lambda: out.extend(proc.stdout))
    reader.start()
    try:
        calls = limentest.wait_until(lambda: notify_calls(bus), 15)
        assert calls, ("no Notify reached the server", out)
        app_name, replaces, icon, summary, body, actions, hints, timeout = calls[-1][2]
        assert (summary, body, icon) == ("Backup finished", "12 files copied", "document-save")
        assert hints.get("desktop-entry") == "org.kde.Backup"
        keys = dict(zip(actions[1::2], actions[0::2]))
        click_until(bus, keys["Reply"], lambda: proc.poll() is not None, timeout=20)
    finally:
        if proc.poll() is None:
            proc.kill()
        proc.wait()
        reader.join(5)
    assert out[:1] == ["sent\n"] and "action 1\n" in out, (out, proc.stderr.read()[-2000:])


@pytest.mark.parametrize("icon", [GLib.Variant("s", "mail-unread"),
                                  GLib.Variant("(sv)", ("themed", GLib.Variant("as", ["mail-unread"]))),
                                  GLib.Variant("v", GLib.Variant("(sv)", ("themed", GLib.Variant("as", ["mail-unread"])))),
                                  GLib.Variant("s", "/etc/hostname")],
                         ids=["name", "serialized", "boxed", "path"])
def test_icon_in_every_form_a_frontend_passes_on(bus, notifications, icon):
    """An icon as a plain name (Debian's frontend passes KNotification's on), a serialized
    GIcon as it is (GLib's, and what frontends pass on) or boxed in a variant (the
    specification's "v"): the same themed icon. A path is never an icon name: left out."""
    add(bus, "org.example.App", "icon", {"title": GLib.Variant("s", "Icons"), "icon": icon})
    calls = limentest.wait_until(lambda: notify_calls(bus), 10)
    assert calls
    shown = calls[-1][2][2]
    if icon.get_type_string() == "s" and icon.unpack().startswith("/"):
        assert "/" not in shown   # KNotification's default icon, not the file
    else:
        assert shown == "mail-unread"
