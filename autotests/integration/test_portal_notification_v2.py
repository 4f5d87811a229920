"""Notification version 2's later keys: markup-body, display-hint, category, button purpose,
SupportedOptions, icons and sounds as the specification passes them on (sealed memfds).

Each key twice: through limen-portal to the dbusmock test backend (what reaches a backend
after validation), and through limen-kde to dbusmock's notification_daemon (what reaches
org.freedesktop.Notifications: body, actions, hints, timeout); then limen-portal in front
of limen-kde, with a bwrap-sandboxed caller."""
import os
import xml.dom.minidom

import pytest
from gi.repository import GLib

import kde_helpers as kh
import limentest
import request_helpers as rh
from request_helpers import v
from test_kde_frontends import start_limen_portal
from test_kde_services import install_notifyrc, mock_calls, start_mock

N = "org.freedesktop.portal.Notification"
IMPL = "org.freedesktop.impl.portal.Notification"
APP = "org.example.App"
NOTIFY = ("org.freedesktop.Notifications", "/org/freedesktop/Notifications")


def add(bus, client, id, notification, fds=None):
    bus.call(N, "AddNotification", (id, notification), "(sa{sv})", conn=client.conn, fds=fds)


def memfd(data, seal=True):
    fd = os.memfd_create("limen-test", os.MFD_ALLOW_SEALING if seal else 0)
    os.write(fd, data)
    return fd


def well_formed(markup):
    xml.dom.minidom.parseString("<m>" + markup + "</m>")
    return True


@pytest.fixture
def env(bus):
    backend = rh.setup(bus, ["notification"])
    return bus, backend, rh.Client(bus)


def only(backend):
    (app_id, id, n), = backend.args("AddNotification")
    return n


# ---- frontend → test backend --------------------------------------------------------------

MARKUP = [
    ("<b>Ada</b> &amp; <i>Lin</i>", "<b>Ada</b> &amp; <i>Lin</i>"),
    ("<u>under</u><script>x()</script><br/>", "underx()"),
    ("<a href='https://kde.org/a?b=1&amp;c=2'>KDE</a>", "<a href=\"https://kde.org/a?b=1&amp;c=2\">KDE</a>"),
    ("<a href=\"javascript:alert(1)\">click</a> <a href=\"file:///etc/passwd\">f</a>", "click f"),
    ("tom &amp; jerry &lt; 3 > 2", "tom &amp; jerry &lt; 3 &gt; 2"),
    ("<!-- hidden -->shown<![CDATA[<b>]]>", "shown"),
    ("test \n newline \n\n some more space \n  with trailing space ", "test newline some more space with trailing space"),
    ("test <custom> tag </custom>", "test tag"),
]


@pytest.mark.parametrize("markup,expected", MARKUP, ids=[str(i) for i in range(len(MARKUP))])
def test_markup_body_sanitised(env, markup, expected):
    bus, backend, client = env
    add(bus, client, "m", {"title": v("s", "t"), "markup-body": v("s", markup)})
    n = only(backend)
    assert n["markup-body"] == expected and well_formed(n["markup-body"])


@pytest.mark.parametrize("markup", ["tom & jerry", "a < b", "<b><i>crossed</b></i>", "<b>unclosed",
                                    "test <markup><i>x</i><markup> body", "&bogus;"])
def test_markup_body_not_well_formed_is_refused(env, markup):
    """As the reference: the app's mistake is InvalidArgument, in the parser's words."""
    bus, backend, client = env
    with pytest.raises(GLib.Error) as e:
        add(bus, client, "m", {"title": v("s", "t"), "markup-body": v("s", markup)})
    assert rh.error_name(e) == "org.freedesktop.portal.Error.InvalidArgument"
    assert "invalid markup-body" in e.value.message
    assert backend.args("AddNotification") == []


def test_markup_body_hostile(env):
    bus, backend, client = env
    deep = "".join("<b>" if i % 2 else "<i>" for i in range(2000)) + "deep" + \
        "".join("</b>" if i % 2 else "</i>" for i in reversed(range(2000)))
    add(bus, client, "deep", {"markup-body": v("s", deep)})
    n = only(backend)
    assert well_formed(n["markup-body"]) and n["markup-body"].count("<") < 100
    for bad in (v("s", "x" * 16385), v("i", 1), v("s", "&" * 16000), v("s", "<a/>&amp;" * 1900)):
        with pytest.raises(GLib.Error) as e:
            add(bus, client, "bad", {"markup-body": bad})
        assert rh.error_name(e) == "org.freedesktop.portal.Error.InvalidArgument"
        assert "markup-body" in e.value.message
    add(bus, client, "ok", {"title": v("s", "still serving")})
    assert len(backend.args("AddNotification")) == 2


def test_display_hints(env):
    """Known hints pass, once each; an unknown one refuses the notification, naming it."""
    bus, backend, client = env
    add(bus, client, "h", {"display-hint": v("as", ["transient", "persistent", "transient", "show-as-new"])})
    add(bus, client, "l", {"display-hint": v("as", ["hide-on-lockscreen", "hide-content-on-lock-screen", "tray"])})
    for hints in (["transient", "bogus"], ["only-unknown"]):
        with pytest.raises(GLib.Error) as e:
            add(bus, client, "u", {"title": v("s", "t"), "display-hint": v("as", hints)})
        assert rh.error_name(e) == "org.freedesktop.portal.Error.InvalidArgument"
        assert "not a display-hint" in e.value.message and hints[-1] in e.value.message
    got = [n for _, _, n in backend.args("AddNotification")]
    assert len(got) == 2
    assert got[0]["display-hint"] == ["transient", "persistent", "show-as-new"]
    assert got[1]["display-hint"] == ["hide-on-lockscreen", "hide-content-on-lockscreen", "tray"]


@pytest.mark.parametrize("value", [v("s", "transient"), v("as", ["tray"] * 17), v("ay", b"x")])
def test_display_hint_wrong_type_or_count(env, value):
    bus, backend, client = env
    with pytest.raises(GLib.Error) as e:
        add(bus, client, "h", {"display-hint": value})
    assert rh.error_name(e) == "org.freedesktop.portal.Error.InvalidArgument" and "display-hint" in e.value.message


CATEGORIES = ["im.received", "alarm.ringing", "call.incoming", "call.ongoing", "call.unanswered",
              "weather.warning.extreme", "cellbroadcast.danger.presidential", "cellbroadcast.danger.extreme",
              "cellbroadcast.danger.severe", "cellbroadcast.public-safety", "cellbroadcast.amber-alert",
              "cellbroadcast.test", "os.battery.low", "browser.web-notification",
              "x-kde.kdeconnect.sms", "x-gnome.music"]


def test_categories_of_the_specification_and_vendors_pass(env):
    bus, backend, client = env
    for i, c in enumerate(CATEGORIES):
        add(bus, client, f"c{i}", {"category": v("s", c)})
    assert [n["category"] for _, _, n in backend.args("AddNotification")] == CATEGORIES


@pytest.mark.parametrize("value", [v("s", "im"), v("s", "made.up"), v("s", "x-"), v("s", "x-bad vendor"),
                                   v("s", ""), v("as", ["im.received"])])
def test_bad_category_is_invalid(env, value):
    bus, backend, client = env
    with pytest.raises(GLib.Error) as e:
        add(bus, client, "c", {"category": value})
    assert rh.error_name(e) == "org.freedesktop.portal.Error.InvalidArgument" and "category" in e.value.message
    assert backend.args("AddNotification") == []


def test_button_purpose(env):
    bus, backend, client = env
    add(bus, client, "b", {"buttons": v("aa{sv}", [
        {"label": v("s", "Reply"), "action": v("s", "reply"), "purpose": v("s", "im.reply-with-text"),
         "target": v("s", "chat-7"), "icon": v("s", "dropped")},
        {"action": v("s", "accept"), "purpose": v("s", "call.accept")},
        {"label": v("s", "Mine"), "action": v("s", "mine"), "purpose": v("s", "x-example.thing")},
    ])})
    assert only(backend)["buttons"] == [
        {"label": "Reply", "action": "reply", "target": "chat-7", "purpose": "im.reply-with-text"},
        {"action": "accept", "purpose": "call.accept"},
        {"label": "Mine", "action": "mine", "purpose": "x-example.thing"}]


@pytest.mark.parametrize("button", [
    {"action": v("s", "a")},
    {"action": v("s", "a"), "purpose": v("s", "call.explode")},
    {"action": v("s", "a"), "purpose": v("u", 1)},
    {"purpose": v("s", "call.accept")},
    {"label": v("s", ""), "action": v("s", "a")},
], ids=["no-label-no-purpose", "unknown-purpose", "purpose-type", "no-action", "empty-label"])
def test_bad_buttons(env, button):
    bus, backend, client = env
    with pytest.raises(GLib.Error) as e:
        add(bus, client, "b", {"buttons": v("aa{sv}", [button])})
    assert rh.error_name(e) == "org.freedesktop.portal.Error.InvalidArgument" and "buttons" in e.value.message
    add(bus, client, "ok", {"title": v("s", "still serving")})


def test_supported_options_from_the_backend(bus):
    opts = {"category": ["im.received", "x-kde.thing"], "button-purpose": ["im.reply-with-text"]}
    rh.setup(bus, ["notification"], params={"supported_options": opts})
    assert limentest.wait_until(lambda: bus.get_property(N, "SupportedOptions") == opts, 5), \
        bus.get_property(N, "SupportedOptions")


def test_supported_options_empty_without_backend_property(env):
    bus, backend, client = env
    limentest.pump(0.3)
    assert bus.get_property(N, "SupportedOptions") == {}


def test_supported_options_as_the_backend_says(bus):
    """A vendor's keys pass as they are (as from the reference); the specification's only in
    its form, a list of strings."""
    rh.setup(bus, ["notification"], params={"supported_options": {"category": ["im.received"],
                                                                   "x-vendor-thing": ["a"],
                                                                   "button-purpose": "im.reply-with-text"}})
    assert limentest.wait_until(lambda: bus.get_property(N, "SupportedOptions") ==
                                {"category": ["im.received"], "x-vendor-thing": ["a"]}, 5), \
        bus.get_property(N, "SupportedOptions")


def test_sound_forms(env, tmp_path):
    """"default"/"silent" pass as words; a sound memfd reaches the backend as a sealed memfd
    of the frontend's own (the app's fd is never passed on)."""
    from test_portal_notification import encoded
    bus, backend, client = env
    data = encoded(tmp_path, "wav")
    fd = memfd(data, seal=True)
    add(bus, client, "s1", {"sound": v("v", v("(sv)", ("file-descriptor", v("h", 0))))}, fds=[fd])
    os.write(fd, b"changed after the call")
    os.close(fd)
    add(bus, client, "s2", {"sound": v("v", v("s", "silent"))})
    got = [n for _, _, n in backend.args("AddNotification")]
    assert got[0]["sound"][0] == "file-descriptor" and bytes(got[0]["sound"][1]) == data
    assert got[1]["sound"] == "silent"


def test_bad_fds_are_refused(env, tmp_path):
    """An fd that is missing, not a memfd or empty, or a handle of the wrong type, is not an
    icon or sound of the specification's form: InvalidArgument, as from the reference."""
    bus, backend, client = env
    r, w = os.pipe()
    cases = [({"icon": v("v", v("(sv)", ("file-descriptor", v("h", 3))))}, []),          # index out of range
             ({"icon": v("v", v("(sv)", ("file-descriptor", v("h", 0))))}, [r]),         # a pipe
             ({"sound": v("v", v("(sv)", ("file-descriptor", v("h", 0))))}, [w]),
             ({"icon": v("v", v("(sv)", ("file-descriptor", v("h", 0))))}, [memfd(b"")]),  # empty
             ({"icon": v("v", v("(sv)", ("file-descriptor", v("s", "0"))))}, [])]
    for i, (n, fds) in enumerate(cases):
        with pytest.raises(GLib.Error) as e:
            add(bus, client, f"f{i}", dict(n, title=v("s", "t")), fds=fds or None)
        assert rh.error_name(e) == "org.freedesktop.portal.Error.InvalidArgument"
        assert next(iter(n)) in e.value.message
    for fd in (r, w):
        os.close(fd)
    assert backend.args("AddNotification") == []
    add(bus, client, "ok", {"title": v("s", "still serving")})


def test_version_1_backend_gets_version_1_keys(bus, tmp_path):
    """Behind a version 1 backend: markup-body becomes the plain body, the other version 2
    keys and sounds are left out, image data is ("bytes", <ay>)."""
    from test_portal_notification import png
    backend = rh.setup(bus, ["notification"], params={"version": 1})
    client = rh.Client(bus)
    assert limentest.wait_until(lambda: bus.get_property(N, "version") == 1, 5)
    data = png(tmp_path, 32)
    add(bus, client, "v1", {"markup-body": v("s", "<b>Ada</b> &amp; Lin"), "category": v("s", "im.received"),
                            "display-hint": v("as", ["tray"]), "sound": v("v", v("s", "silent")),
                            "icon": v("v", v("(sv)", ("bytes", v("ay", data)))),
                            "buttons": v("aa{sv}", [{"label": v("s", "OK"), "action": v("s", "ok"),
                                                     "purpose": v("s", "call.accept")}])})
    n = only(backend)
    assert n["body"] == "Ada & Lin"
    assert n["buttons"] == [{"label": "OK", "action": "ok"}]
    assert n["icon"][0] == "bytes" and bytes(n["icon"][1]) == data
    assert not {"markup-body", "category", "display-hint", "sound"} & set(n)
    with pytest.raises(GLib.Error) as e:
        add(bus, client, "v1b", {"buttons": v("aa{sv}", [{"action": v("s", "ok"), "purpose": v("s", "call.accept")}])})
    assert rh.error_name(e) == "org.freedesktop.portal.Error.InvalidArgument"


SANDBOXED = """
from gi.repository import Gio, GLib
c = Gio.bus_get_sync(Gio.BusType.SESSION, None)
n = {'markup-body': GLib.Variant('s', '<b>hi</b><img src="x"/>'), 'category': GLib.Variant('s', 'im.received'),
     'display-hint': GLib.Variant('as', ['transient']),
     'buttons': GLib.Variant('aa{sv}', [{'action': GLib.Variant('s', 'r'),
                                         'purpose': GLib.Variant('s', 'im.reply-with-text')}])}
c.call_sync('org.freedesktop.portal.Desktop', '/org/freedesktop/portal/desktop',
            'org.freedesktop.portal.Notification', 'AddNotification', GLib.Variant('(sa{sv})', ('sb', n)),
            None, 0, 5000, None)
try:
    c.call_sync('org.freedesktop.portal.Desktop', '/org/freedesktop/portal/desktop',
                'org.freedesktop.portal.Notification', 'AddNotification',
                GLib.Variant('(sa{sv})', ('bad', {'category': GLib.Variant('s', 'nope')})), None, 0, 5000, None)
    print('accepted')
except GLib.Error as e:
    print(Gio.DBusError.get_remote_error(e))
"""


def test_sandboxed_caller(env):
    bus, backend, client = env
    r = limentest.run_sandboxed(bus, APP, SANDBOXED)
    assert r.stdout.strip() == "org.freedesktop.portal.Error.InvalidArgument", r.stderr
    (app_id, id, n), = backend.args("AddNotification")
    assert (app_id, id) == (APP, "sb")
    assert n == {"markup-body": "<b>hi</b>", "category": "im.received", "display-hint": ["transient"],
                 "buttons": [{"action": "r", "purpose": "im.reply-with-text"}]}


# ---- limen-kde → notification server ---------------------------------------------------------

def kde_env(bus, caps):
    install_notifyrc(bus)
    start_mock(bus, *NOTIFY, "org.freedesktop.Notifications", template="notification_daemon",
               params={"capabilities": caps})
    kh.start_kde(bus)


@pytest.fixture
def kde(bus):
    kde_env(bus, "body body-markup actions icon-static inline-reply")
    return bus


def notify_calls(bus):
    return [c[2] for c in mock_calls(bus, *NOTIFY) if c[1] == "Notify"]


def kde_add(bus, nid, n, fds=None):
    bus.call(IMPL, "AddNotification", ("org.example.App", nid, n), "(ssa{sv})", dest=kh.KDE_NAME, path=kh.PATH,
             fds=fds)


def last_notify(bus, count=1):
    calls = limentest.wait_until(lambda: len(notify_calls(bus)) >= count and notify_calls(bus), 10)
    assert calls, "no Notify reached the server"
    app_name, replaces, icon, summary, body, actions, hints, timeout = calls[-1]
    return {"icon": icon, "summary": summary, "body": body, "actions": list(actions), "hints": dict(hints),
            "timeout": timeout, "replaces": replaces}


def test_kde_supported_options(kde):
    opts = kde.get_property(IMPL, "SupportedOptions", dest=kh.KDE_NAME, path=kh.PATH)
    assert opts["button-purpose"] == ["im.reply-with-text"]
    assert set(opts["category"]) == set(CATEGORIES) - {"x-kde.kdeconnect.sms", "x-gnome.music"}


def test_kde_markup_body(kde):
    kde_add(kde, "m", {"title": v("s", "Chat"), "body": v("s", "plain"),
                       "markup-body": v("s", "<b>Ada</b> <u>says</u> <a href='javascript:x'>hi</a> &amp; bye")})
    n = last_notify(kde)
    assert n["body"] == "<b>Ada</b> says hi &amp; bye"


def test_kde_markup_body_stripped_without_body_markup(bus):
    kde_env(bus, "body actions")
    kde_add(bus, "m", {"markup-body": v("s", "<b>Ada</b> &amp; <i>Lin</i>")})
    assert last_notify(bus)["body"] == "Ada & Lin"


def test_kde_category_and_display_hints(kde):
    kde_add(kde, "c1", {"title": v("s", "IM"), "category": v("s", "im.received"),
                        "display-hint": v("as", ["transient", "hide-on-lock-screen"])})
    n = last_notify(kde)
    assert n["hints"]["category"] == "im.received" and n["hints"].get("transient") is True
    assert n["hints"]["urgency"] == 1
    kde_add(kde, "c2", {"title": v("s", "Wake up"), "category": v("s", "alarm.ringing")})
    n = last_notify(kde, 2)
    assert n["hints"]["urgency"] == 2 and n["timeout"] == 0       # critical, stays
    kde_add(kde, "c3", {"title": v("s", "Later"), "display-hint": v("as", ["tray"])})
    n = last_notify(kde, 3)
    assert n["hints"]["urgency"] == 0 and "transient" not in n["hints"]
    kde_add(kde, "c4", {"title": v("s", "Stay"), "display-hint": v("as", ["persistent"])})
    assert last_notify(kde, 4)["timeout"] == 0
    kde_add(kde, "c5", {"title": v("s", "Vendor"), "category": v("s", "x-kde.test")})
    assert last_notify(kde, 5)["hints"]["category"] == "x-kde.test"
    # xdg-desktop-portal 1.21's cell broadcast levels: a presidential alert is critical like the
    # other danger alerts; a public safety message is high (the notification server's normal).
    kde_add(kde, "c6", {"title": v("s", "Alert"), "category": v("s", "cellbroadcast.danger.presidential")})
    n = last_notify(kde, 6)
    assert n["hints"]["category"] == "cellbroadcast.danger.presidential" and n["hints"]["urgency"] == 2
    kde_add(kde, "c7", {"title": v("s", "Advice"), "category": v("s", "cellbroadcast.public-safety")})
    n = last_notify(kde, 7)
    assert n["hints"]["category"] == "cellbroadcast.public-safety" and n["hints"]["urgency"] == 1


def reply_signals(bus):
    got = []
    bus.conn.signal_subscribe(kh.KDE_NAME, IMPL, "ActionInvoked", kh.PATH, None, 0,
                              lambda *a: got.append(a[5].unpack()))
    return got


def test_kde_inline_reply(kde):
    got = reply_signals(kde)
    kde_add(kde, "r", {"title": v("s", "Message"), "buttons": v("aa{sv}", [
        {"label": v("s", "Answer"), "action": v("s", "reply"), "purpose": v("s", "im.reply-with-text"),
         "target": v("s", "chat-7")},
        {"action": v("s", "accept"), "purpose": v("s", "call.accept")}])})
    n = last_notify(kde)
    pairs = list(zip(n["actions"][::2], n["actions"][1::2]))
    assert ("inline-reply", "Answer") in pairs, n
    assert n["hints"]["x-kde-reply-placeholder-text"] == "Write a reply…"
    assert any(label == "Accept" for key, label in pairs)        # a purpose names a label-less button
    server_id = len(notify_calls(kde))
    kde.call("org.freedesktop.DBus.Mock", "EmitSignal",
             ("org.freedesktop.Notifications", "NotificationReplied", "us", [GLib.Variant("u", server_id),
                                                                              GLib.Variant("s", "On my way")]),
             "(sssav)", dest=NOTIFY[0], path=NOTIFY[1])
    assert limentest.wait_until(lambda: got, 5)
    app, nid, action, params = got[0]
    assert (app, nid, action) == ("org.example.App", "r", "reply")
    assert params == ["chat-7", {}, "On my way"]


def test_kde_reply_is_a_plain_button_without_inline_reply(bus):
    """A server without inline-reply gets a plain "Reply" button (KNotification keeps its
    action key); pressing it invokes the app's action without text."""
    kde_env(bus, "body actions")
    got = reply_signals(bus)
    kde_add(bus, "r", {"buttons": v("aa{sv}", [{"action": v("s", "reply"), "purpose": v("s", "im.reply-with-text")}])})
    n = last_notify(bus)
    assert "Reply" in n["actions"] and "x-kde-reply-placeholder-text" not in n["hints"]
    key = n["actions"][n["actions"].index("Reply") - 1]
    bus.call("org.freedesktop.DBus.Mock", "EmitSignal",
             ("org.freedesktop.Notifications", "ActionInvoked", "us", [GLib.Variant("u", 1), GLib.Variant("s", key)]),
             "(sssav)", dest=NOTIFY[0], path=NOTIFY[1])
    assert limentest.wait_until(lambda: got, 5)
    assert got[0] == ("org.example.App", "r", "reply", [{}])   # the platform data, no token here


def closes(bus):
    return [c[2] for c in mock_calls(bus, *NOTIFY) if c[1] == "CloseNotification"]


def test_kde_same_id_updates_show_as_new_replaces(kde):
    """Reusing an id updates the shown notification (the server gets its id back, nothing is
    closed) and its buttons; show-as-new closes it and shows a new one."""
    got = reply_signals(kde)
    kde_add(kde, "u", {"title": v("s", "one"), "buttons": v("aa{sv}", [{"label": v("s", "A"), "action": v("s", "a")}])})
    first = last_notify(kde)
    limentest.pump(0.3)
    kde_add(kde, "u", {"title": v("s", "two"), "buttons": v("aa{sv}", [{"label": v("s", "B"), "action": v("s", "b")}])})
    second = last_notify(kde, 2)
    assert first["replaces"] == 0 and second["replaces"] == 1 and second["summary"] == "two"
    assert second["actions"][1::2] == ["B"]
    limentest.pump(0.3)
    assert closes(kde) == []
    kde.call("org.freedesktop.DBus.Mock", "EmitSignal",
             ("org.freedesktop.Notifications", "ActionInvoked", "us", [GLib.Variant("u", 1),
                                                                        GLib.Variant("s", second["actions"][0])]),
             "(sssav)", dest=NOTIFY[0], path=NOTIFY[1])
    assert limentest.wait_until(lambda: got, 5) and got[0] == ("org.example.App", "u", "b", [{}])

    kde_add(kde, "v", {"title": v("s", "old")})
    assert last_notify(kde, 3)["replaces"] == 0
    limentest.pump(0.3)
    kde_add(kde, "v", {"title": v("s", "new"), "display-hint": v("as", ["show-as-new"])})
    fourth = last_notify(kde, 4)
    assert fourth["replaces"] == 0 and fourth["summary"] == "new"
    assert limentest.wait_until(lambda: [2] in closes(kde), 5), closes(kde)


def test_kde_media_as_file_descriptors(kde, tmp_path):
    png = b"\x89PNG\r\n\x1a\n" + bytes(64)
    fds = [memfd(png), memfd(b"RIFF" + bytes(40))]
    kde_add(kde, "fd", {"title": v("s", "Media"),
                        "icon": v("v", v("(sv)", ("file-descriptor", v("h", 0)))),
                        "sound": v("v", v("(sv)", ("file-descriptor", v("h", 1))))}, fds=fds)
    for fd in fds:
        os.close(fd)
    n = last_notify(kde)
    icon = n["icon"][len("file://"):] if n["icon"].startswith("file://") else n["icon"]
    assert icon.startswith(kde.runtime_dir) and open(icon, "rb").read() == png
    assert open(n["hints"]["sound-file"], "rb").read() == b"RIFF" + bytes(40)


@pytest.mark.parametrize("value,fds", [
    (v("v", v("(sv)", ("file-descriptor", v("h", 4)))), []),
    (v("v", v("(sv)", ("file-descriptor", v("h", 0)))), ["dir"]),
    (v("v", v("(sv)", ("file-descriptor", v("s", "0")))), []),
    (v("v", v("(sv)", ("file", v("s", "/etc/passwd")))), []),
], ids=["out-of-range", "directory", "wrong-type", "file-kind"])
def test_kde_bad_media(kde, tmp_path, value, fds):
    opened = [os.open(tmp_path, os.O_RDONLY | os.O_DIRECTORY) for f in fds]
    with pytest.raises(GLib.Error) as e:
        kde_add(kde, "bad", {"icon": value}, fds=opened or None)
    for fd in opened:
        os.close(fd)
    assert limentest.dbus_error_name(e.value) == "org.freedesktop.portal.Error.InvalidArgument"
    assert "icon" in e.value.message
    kde_add(kde, "ok", {"title": v("s", "still serving")})
    assert last_notify(kde)["summary"] == "still serving"


@pytest.mark.parametrize("key,value", [
    ("markup-body", v("s", "x" * 20000)),
    ("category", v("s", "made.up")),
    ("display-hint", v("s", "transient")),
    ("buttons", v("aa{sv}", [{"action": v("s", "a"), "purpose": v("s", "call.explode")}])),
])
def test_kde_bad_v2_keys(kde, key, value):
    with pytest.raises(GLib.Error) as e:
        kde_add(kde, "bad", {key: value})
    assert limentest.dbus_error_name(e.value) == "org.freedesktop.portal.Error.InvalidArgument"
    assert key in e.value.message


# ---- limen-portal in front of limen-kde ------------------------------------------------------

def test_through_both_daemons_sandboxed(kde):
    start_limen_portal(kde)
    assert limentest.wait_until(lambda: kde.get_property(N, "version") == 2, 5)
    assert limentest.wait_until(lambda: kde.get_property(N, "SupportedOptions").get("button-purpose")
                                == ["im.reply-with-text"], 5)
    r = limentest.run_sandboxed(kde, APP, SANDBOXED)
    assert r.stdout.strip() == "org.freedesktop.portal.Error.InvalidArgument", r.stderr
    n = last_notify(kde)
    assert n["body"] == "<b>hi</b>" and n["hints"]["category"] == "im.received"
    assert n["hints"]["desktop-entry"] == APP and n["hints"].get("transient") is True
    assert ("inline-reply", "Reply") in list(zip(n["actions"][::2], n["actions"][1::2]))
