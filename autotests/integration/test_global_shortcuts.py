"""GlobalShortcuts v2 against a real kglobalaccel5 on Xvfb: limen-kde's impl interface
directly, and (further down) the whole path through limen-portal for host and
bwrap-sandboxed callers. Keys are typed with xdotool into the X server, where kglobalaccel
grabs them; the binding dialog is driven with xdotool and photographed in English at 100%
and German at 200% (<build>/autotests/artifacts/kde/)."""

import configparser
import os
import time

import pytest

import kde_helpers as kh
import limentest
import request_helpers
import wayland_session
from limentest import Gio, GLib

IFACE = "org.freedesktop.impl.portal.GlobalShortcuts"
KGA = "org.kde.kglobalaccel"
STORE = "org.freedesktop.impl.portal.PermissionStore"
STORE_PATH = "/org/freedesktop/impl/portal/PermissionStore"
APP = "org.example.Talk"
TITLE = "Global Shortcuts"
TITLE_DE = "Globale Kurzbefehle"


def start_kglobalaccel(bus, x):
    return bus.start(["/usr/bin/kglobalaccel5"], env=dict(x.env(), QT_QPA_PLATFORM="xcb"), wait_name=KGA,
                     timeout=30)


def write_desktop_file(bus, app_id, name):
    apps = os.path.join(bus.data_home, "applications")
    os.makedirs(apps, exist_ok=True)
    with open(os.path.join(apps, app_id + ".desktop"), "w") as f:
        f.write(f"[Desktop Entry]\nType=Application\nName={name}\nExec=/bin/true\n")


@pytest.fixture
def stack(bus, x):
    """kglobalaccel5, a permission store and limen-kde, on one Xvfb and one private bus."""
    write_desktop_file(bus, APP, "Example Talk")
    bus.kglobalaccel = start_kglobalaccel(bus, x)
    request_helpers.start_documents(bus)
    kde = kh.start_kde_x11(bus, x)
    return kde


def shortcuts(*entries):
    """a(sa{sv}) from (id, description, trigger or None)."""
    out = []
    for sid, desc, trigger in entries:
        d = {"description": GLib.Variant("s", desc)}
        if trigger:
            d["preferred_trigger"] = GLib.Variant("s", trigger)
        out.append((sid, d))
    return out


class Impl:
    """A caller of limen-kde's impl GlobalShortcuts on its own connection, as a frontend
    would be; it records the signals limen-kde sends it."""

    def __init__(self, bus):
        self.bus = bus
        self.conn = bus.new_connection()
        self.sender = self.conn.get_unique_name()[1:].replace(".", "_")
        self.signals = []
        self.conn.signal_subscribe(kh.KDE_NAME, IFACE, None, kh.PATH, None, Gio.DBusSignalFlags.NONE,
                                   self._on_signal)
        self.n = 0

    def _on_signal(self, conn, sender, path, iface, name, params):
        self.signals.append((name, params.unpack()))

    def path(self, kind):
        self.n += 1
        return f"/org/freedesktop/portal/desktop/{kind}/{self.sender}/t{self.n}"

    def call(self, method, args, sig, timeout=10000):
        return kh.call_impl(self.bus, "GlobalShortcuts", method, args, sig, conn=self.conn, timeout=timeout)

    def create_session(self, app_id=APP):
        session = self.path("session")
        assert self.call("CreateSession", (self.path("request"), session, app_id, {}), "(oosa{sv})") == (0, {})
        return session

    def bind_async(self, session, entries, parent=""):
        handle = self.path("request")
        call = kh.AsyncCall(self.bus, "GlobalShortcuts", "BindShortcuts",
                            (handle, session, shortcuts(*entries), parent, {}), "(ooa(sa{sv})sa{sv})", conn=self.conn)
        return handle, call

    def list(self, session):
        return self.call("ListShortcuts", (self.path("request"), session), "(oo)")

    def configure(self, session, options=None):
        return self.call("ConfigureShortcuts", (session, "", options or {}), "(osa{sv})")

    def wait_signal(self, name, count=1, timeout=10):
        limentest.wait_until(lambda: len(self.got(name)) >= count, timeout)
        return self.got(name)

    def got(self, name):
        return [args for n, args in self.signals if n == name]

    def close(self):
        self.conn.close_sync(None)


def bound(results):
    return {sid: v["trigger_description"] for sid, v in results["shortcuts"]}


def kglobalshortcutsrc(bus):
    cp = configparser.ConfigParser(interpolation=None, strict=False)
    cp.optionxform = str
    cp.read(os.path.join(bus.config_home, "kglobalshortcutsrc"))
    return cp


def wait_rc(bus, pred, timeout=5):
    """kglobalshortcutsrc once @pred holds (kglobalaccel writes it half a second late)."""
    limentest.wait_until(lambda: pred(kglobalshortcutsrc(bus)), timeout)
    rc = kglobalshortcutsrc(bus)
    assert pred(rc), {s: dict(rc[s]) for s in rc.sections()}
    return rc


def refused_in_store(bus, app_id=APP):
    try:
        perms, _ = bus.call(STORE, "Lookup", ("global-shortcuts", app_id), "(ss)", dest=STORE, path=STORE_PATH)
    except GLib.Error:
        return None
    return sorted(w for w in perms.get(app_id, []) if w)   # "" only keeps the row


def component_active(bus, component):
    try:
        path = bus.call("org.kde.KGlobalAccel", "getComponent", (component,), "(s)", dest=KGA,
                        path="/kglobalaccel")[0]
    except GLib.Error:
        return False   # not registered yet
    return bus.call("org.kde.kglobalaccel.Component", "isActive", dest=KGA, path=path)[0]


def press(x, combo, hold=0.4):
    """Hold @combo (xdotool names) down for @hold seconds, then release it. Auto-repeat is
    off, so a slow machine holding the keys longer still makes one key press."""
    x.run("xset", "r", "off")
    x.run("xdotool", "keydown", combo)
    time.sleep(hold)
    x.run("xdotool", "keyup", combo)


def accept_dialog(x, title=TITLE, shot=None):
    x.answer(title, "alt+a", shot=shot, shown=0.8)


TALK = ("talk", "Push to talk", "CTRL+ALT+t")
MUTE = ("mute", "Mute the microphone", "LOGO+F9")


def test_bind_accept_then_keys_fire_activated_and_deactivated(bus, x, stack):
    caller = Impl(bus)
    session = caller.create_session()
    _, call = caller.bind_async(session, [TALK, MUTE])
    accept_dialog(x, shot="global-shortcuts-bind-en-1x.png")
    response, results = call.wait()
    assert response == 0
    assert bound(results) == {"talk": "Ctrl+Alt+T", "mute": "Meta+F9"}
    assert dict(results["shortcuts"])["talk"]["description"] == "Push to talk"

    press(x, "ctrl+alt+t")
    activated = caller.wait_signal("Activated")
    deactivated = caller.wait_signal("Deactivated")
    assert activated[0][:2] == (session, "talk")
    assert deactivated[0][:2] == (session, "talk")
    # An X11 activation token: a startup id carrying the key event's time.
    token = activated[0][3]["activation_token"]
    assert token.endswith(f"_TIME{activated[0][2]}")
    assert "activation_token" not in deactivated[0][3]

    # System Settings shows them under the app's name, from its .desktop file.
    rc = wait_rc(bus, lambda rc: rc.has_section(APP) and "mute" in rc[APP])
    assert rc[APP]["_k_friendly_name"] == "Example Talk"
    assert rc[APP]["talk"].startswith("Ctrl+Alt+T,")
    assert rc[APP]["mute"].startswith("Meta+F9,")
    assert caller.list(session) == (0, results)
    assert component_active(bus, APP)

    # Key events go to the session's owner only: another bus client hears nothing.
    other = Impl(bus)
    press(x, "super+F9")
    limentest.wait_until(lambda: any(a[1] == "mute" for a in caller.got("Activated")), 10)
    limentest.pump(0.3)
    assert any(a[:2] == (session, "mute") for a in caller.got("Activated"))
    assert other.signals == []


def test_change_key_and_refuse_is_remembered(bus, x, stack):
    caller = Impl(bus)
    session = caller.create_session()
    _, call = caller.bind_async(session, [TALK, MUTE])
    wid = x.wait_window(TITLE)
    time.sleep(0.5)
    # Focus starts on the first check box; Tab reaches its key button: record Ctrl+Alt+K.
    x.press(wid, "Tab")
    x.run("xdotool", "key", "space")
    time.sleep(0.3)
    x.run("xdotool", "key", "ctrl+alt+k")
    time.sleep(0.5)
    # Tab past the clear button to the second check box; leave "mute" out.
    x.run("xdotool", "key", "Tab", "Tab")
    x.run("xdotool", "key", "space")
    time.sleep(0.3)
    x.screenshot("global-shortcuts-changed.png")
    x.run("xdotool", "key", "alt+a")
    response, results = call.wait()
    assert response == 0
    assert bound(results) == {"talk": "Ctrl+Alt+K"}
    assert refused_in_store(bus) == ["mute"]
    rc = wait_rc(bus, lambda rc: rc.has_section(APP) and "talk" in rc[APP])
    assert rc[APP]["talk"].startswith("Ctrl+Alt+K,")
    assert "mute" not in rc[APP]

    # Another session of the app proposing the same: nothing is asked, the saved key is
    # kept and the refused shortcut stays out.
    caller2 = Impl(bus)
    session2 = caller2.create_session()
    _, call2 = caller2.bind_async(session2, [TALK, MUTE])
    response, results = call2.wait(timeout=10)
    assert response == 0
    assert bound(results) == {"talk": "Ctrl+Alt+K"}
    press(x, "ctrl+alt+k")
    assert caller2.wait_signal("Activated")[0][:2] == (session2, "talk")


def test_bind_survives_a_restart_of_limen_kde(bus, x, stack):
    caller = Impl(bus)
    session = caller.create_session()
    _, call = caller.bind_async(session, [TALK])
    accept_dialog(x)
    assert bound(call.wait()[1]) == {"talk": "Ctrl+Alt+T"}
    assert stack.stop() == 0
    # The grab went with the session; the keys stay saved.
    limentest.wait_until(lambda: not component_active(bus, APP), 5)
    assert not component_active(bus, APP)
    wait_rc(bus, lambda rc: rc.has_section(APP) and rc[APP].get("talk", "").startswith("Ctrl+Alt+T,"))

    kh.start_kde_x11(bus, x)
    caller2 = Impl(bus)
    session2 = caller2.create_session()
    _, call2 = caller2.bind_async(session2, [TALK])
    response, results = call2.wait(timeout=10)
    assert (response, bound(results)) == (0, {"talk": "Ctrl+Alt+T"})
    press(x, "ctrl+alt+t")
    assert caller2.wait_signal("Activated")[0][:2] == (session2, "talk")


def test_kglobalaccel_restart_binds_again(bus, x, stack):
    caller = Impl(bus)
    session = caller.create_session()
    _, call = caller.bind_async(session, [TALK])
    accept_dialog(x)
    assert call.wait()[0] == 0
    bus.kglobalaccel.stop()
    bus.wait_for_name_gone(KGA)
    start_kglobalaccel(bus, x)
    # limen-kde saw the daemon come back and made the session's shortcuts present again.
    limentest.wait_until(lambda: component_active(bus, APP), 10)
    press(x, "ctrl+alt+t")
    assert caller.wait_signal("Activated")[0][:2] == (session, "talk")


def test_cancel_binds_nothing_and_asks_again(bus, x, stack):
    caller = Impl(bus)
    session = caller.create_session()
    _, call = caller.bind_async(session, [TALK])
    x.answer(TITLE, "Escape")
    assert call.wait() == (1, {})
    assert caller.list(session) == (0, {"shortcuts": []})
    assert refused_in_store(bus) in (None, [])
    _, call = caller.bind_async(session, [TALK])
    accept_dialog(x)
    assert bound(call.wait()[1]) == {"talk": "Ctrl+Alt+T"}


def test_request_close_and_session_close(bus, x, stack):
    caller = Impl(bus)
    session = caller.create_session()
    handle, call = caller.bind_async(session, [TALK])
    x.wait_window(TITLE)
    kh.close_request(bus, handle, conn=caller.conn)
    assert call.wait() == (2, {})
    limentest.wait_until(lambda: x.run("xdotool", "search", "--onlyvisible", "--name", TITLE,
                                       check=False).returncode != 0, 5)
    _, call = caller.bind_async(session, [TALK])
    accept_dialog(x)
    assert call.wait()[0] == 0
    assert component_active(bus, APP)
    bus.call("org.freedesktop.impl.portal.Session", "Close", dest=kh.KDE_NAME, path=session, conn=caller.conn)
    limentest.wait_until(lambda: not component_active(bus, APP), 5)
    assert not component_active(bus, APP)


def test_configure_shortcuts_reopens_the_dialog(bus, x, stack):
    caller = Impl(bus)
    session = caller.create_session()
    with pytest.raises(GLib.Error) as e:
        caller.configure(session)
    assert "none were bound" in e.value.message
    _, call = caller.bind_async(session, [TALK, MUTE])
    wid = x.wait_window(TITLE)
    time.sleep(0.3)
    x.press(wid, "Tab", "Tab", "Tab", "space")   # leave "mute" out
    x.run("xdotool", "key", "alt+a")
    assert bound(call.wait()[1]) == {"talk": "Ctrl+Alt+T"}

    # Configure: take "mute" back with its proposed key, drop "talk".
    caller.configure(session, {"activation_token": GLib.Variant("s", "limen-test_TIME0")})
    wid = x.wait_window(TITLE)
    time.sleep(0.5)
    x.screenshot("global-shortcuts-configure.png")
    # Focus starts on "talk"; past its key and clear buttons is "mute" (its own buttons are
    # disabled while it is left out): on; then back to "talk": off.
    x.press(wid, "Tab", "Tab", "Tab", "space")
    x.run("xdotool", "key", "shift+Tab", "shift+Tab", "shift+Tab", "space")
    time.sleep(0.3)
    x.run("xdotool", "key", "alt+s")
    changed = caller.wait_signal("ShortcutsChanged")
    assert changed[-1][0] == session
    assert {sid: v["trigger_description"] for sid, v in changed[-1][1]} == {"mute": "Meta+F9"}
    assert refused_in_store(bus) == ["talk"]
    wait_rc(bus, lambda rc: "talk" not in rc[APP] and rc[APP].get("mute", "").startswith("Meta+F9,"))


def test_changed_in_system_settings_emits_shortcuts_changed(bus, x, stack):
    caller = Impl(bus)
    session = caller.create_session()
    _, call = caller.bind_async(session, [TALK])
    accept_dialog(x)
    call.wait()
    # What System Settings does: set another component's keys.
    ctrl_alt_y = 0x04000000 | 0x08000000 | ord("Y")
    bus.call("org.kde.KGlobalAccel", "setForeignShortcutKeys",
             ([APP, "talk", "Example Talk", "Push to talk"], [([ctrl_alt_y, 0, 0, 0],)]), "(asa(ai))",
             dest=KGA, path="/kglobalaccel")
    changed = caller.wait_signal("ShortcutsChanged")
    assert changed[0] == (session, [("talk", {"description": "Push to talk", "trigger_description": "Ctrl+Alt+Y"})])
    press(x, "ctrl+alt+y")
    assert caller.wait_signal("Activated")[0][1] == "talk"


def test_unidentified_app_is_not_remembered(bus, x, stack):
    caller = Impl(bus)
    session = caller.create_session(app_id="")
    _, call = caller.bind_async(session, [TALK])
    wid = x.wait_window(TITLE)
    time.sleep(0.3)
    x.press(wid, "alt+a")
    assert bound(call.wait()[1]) == {"talk": "Ctrl+Alt+T"}
    rc = wait_rc(bus, lambda rc: any(s.startswith("limen-unidentified-") for s in rc.sections()))
    names = [s for s in rc.sections() if s.startswith("limen-unidentified-")]
    assert len(names) == 1 and rc[names[0]]["_k_friendly_name"] == "Unidentified application"
    caller.close()
    # The session went with its caller: the component's shortcuts are forgotten.
    wait_rc(bus, lambda rc: not rc.has_section(names[0]) or "talk" not in rc[names[0]])


@pytest.mark.parametrize("args,sig,error", [
    (("{req}", "{ses}", [("", {})], "", {}), "(ooa(sa{sv})sa{sv})", "InvalidArgument"),
    (("{req}", "{ses}", [("x" * 300, {})], "", {}), "(ooa(sa{sv})sa{sv})", "InvalidArgument"),
    (("{req}", "{ses}", [("a\tb", {})], "", {}), "(ooa(sa{sv})sa{sv})", "InvalidArgument"),
    (("{req}", "{ses}", [("a", {}), ("a", {})], "", {}), "(ooa(sa{sv})sa{sv})", "InvalidArgument"),
    (("{req}", "{ses}", [(f"s{i}", {}) for i in range(129)], "", {}), "(ooa(sa{sv})sa{sv})", "InvalidArgument"),
    (("{req}", "{ses}", [("a", {"description": GLib.Variant("i", 3)})], "", {}), "(ooa(sa{sv})sa{sv})",
     "InvalidArgument"),
    (("{req}", "{ses}", [("a", {"description": GLib.Variant("s", "d" * 5000)})], "", {}),
     "(ooa(sa{sv})sa{sv})", "InvalidArgument"),
    (("{req}", "{ses}", [("a", {"preferred_trigger": GLib.Variant("s", "CTRL+" * 100)})], "", {}),
     "(ooa(sa{sv})sa{sv})", "InvalidArgument"),
    (("{req}", "{ses}", [("a", {})], "x11:zz", {}), "(ooa(sa{sv})sa{sv})", "InvalidArgument"),
    (("/not/a/request", "{ses}", [("a", {})], "", {}), "(ooa(sa{sv})sa{sv})", "InvalidArgument"),
    (("{req}", "/org/freedesktop/portal/desktop/session/x/none", [("a", {})], "", {}), "(ooa(sa{sv})sa{sv})",
     "NotFound"),
])
def test_hostile_bind_input(bus, x, stack, args, sig, error):
    caller = Impl(bus)
    session = caller.create_session()
    filled = tuple(a.format(req=caller.path("request"), ses=session) if isinstance(a, str) else a for a in args)
    with pytest.raises(GLib.Error) as e:
        caller.call("BindShortcuts", filled, sig)
    assert limentest.dbus_error_name(e.value) == "org.freedesktop.portal.Error." + error
    # Still serving, and the session still binds.
    assert caller.list(session) == (0, {"shortcuts": []})


def test_ids_and_descriptions_with_config_syntax_stay_in_the_apps_group(bus, x, stack):
    """Shortcut ids become keys, descriptions values, in kglobalshortcutsrc: an app's `=`, `[`,
    `]`, `,`, `$` and backslashes are escaped by KConfig, so they never start a group of another
    component or a key of its own (issue 39). Control characters are refused before (above)."""
    ids = ["a=b", "[org.kde.kwin]", "x]y[z", "a/b", "p\\x5b", "k[$e]"]
    caller = Impl(bus)
    session = caller.create_session()
    _, call = caller.bind_async(session, [(i, f"d,[{i}]=x", None) for i in ids])
    accept_dialog(x)
    response, results = call.wait()
    assert response == 0
    assert sorted(sid for sid, _ in results["shortcuts"]) == sorted(ids)
    path = os.path.join(bus.config_home, "kglobalshortcutsrc")
    limentest.wait_until(lambda: os.path.exists(path) and APP in open(path).read(), 5)
    with open(path) as f:
        text = f.read()
    groups = {line.strip() for line in text.splitlines() if line.startswith("[")}
    # Beside the app's: the desktop's own components that kglobalaccel writes at its first start.
    assert f"[{APP}]" in groups and "[org.kde.kwin]" not in groups, groups
    assert all(g in (f"[{APP}]", "[$Version]") or g.startswith("[org.kde.") and g.endswith(".desktop]")
               for g in groups), groups
    assert caller.list(session) == (0, results)


def test_hostile_other_calls(bus, x, stack):
    caller = Impl(bus)
    session = caller.create_session()
    intruder = Impl(bus)
    # Someone else's session is not found for them.
    for method, args, sig in (("ListShortcuts", (intruder.path("request"), session), "(oo)"),
                              ("ConfigureShortcuts", (session, "", {}), "(osa{sv})")):
        with pytest.raises(GLib.Error) as e:
            intruder.call(method, args, sig)
        assert limentest.dbus_error_name(e.value) == "org.freedesktop.portal.Error.NotFound"
    with pytest.raises(GLib.Error) as e:
        caller.call("ConfigureShortcuts", (session, "", {"activation_token": GLib.Variant("u", 1)}), "(osa{sv})")
    assert limentest.dbus_error_name(e.value) == "org.freedesktop.portal.Error.InvalidArgument"
    with pytest.raises(GLib.Error) as e:
        caller.call("CreateSession", (caller.path("request"), "/org/freedesktop/portal/desktop/request/x/y", APP, {}),
                    "(oosa{sv})")
    assert limentest.dbus_error_name(e.value) == "org.freedesktop.portal.Error.InvalidArgument"
    with pytest.raises(GLib.Error) as e:
        caller.call("CreateSession", (caller.path("request"), session, APP, {}), "(oosa{sv})")
    assert limentest.dbus_error_name(e.value) == "org.freedesktop.portal.Error.Exists"
    # Wrong argument types never reach us: GDBus answers InvalidArgs.
    with pytest.raises(GLib.Error) as e:
        caller.call("BindShortcuts", (caller.path("request"), session, [("a", 1)], "", {}), "(ooa(si)sa{sv})")
    assert limentest.dbus_error_name(e.value) == "org.freedesktop.DBus.Error.InvalidArgs"
    # A preferred trigger nobody understands proposes no key, it is no error.
    _, call = caller.bind_async(session, [("odd", "Odd", "HYPER+nokey")])
    wid = x.wait_window(TITLE)
    time.sleep(0.3)
    x.press(wid, "alt+a")
    assert call.wait() == (0, {"shortcuts": [("odd", {"description": "Odd", "trigger_description": ""})]})


@pytest.mark.parametrize("language,scale", [("en", "1"), ("de", "2")], ids=["en-1x", "de-2x"])
def test_dialog_screenshots(bus, language, scale):
    x = kh.Xvfb(size="1600x1000x24")
    try:
        write_desktop_file(bus, APP, "Example Talk")
        start_kglobalaccel(bus, x)
        request_helpers.start_documents(bus)
        env = dict(x.env(), QT_QPA_PLATFORM="xcb", QT_SCALE_FACTOR=scale,
                   LANGUAGE="de" if language == "de" else "",
                   LIMEN_LOCALEDIR=os.path.join(limentest.BUILD_DIR, "locale"))
        kh.start_kde(bus, env=env)
        caller = Impl(bus)
        session = caller.create_session()
        handle, call = caller.bind_async(session, [TALK, MUTE, ("long", "Start or stop recording the "
                                                                "whole screen with sound from every source", None)])
        x.wait_window(TITLE_DE if language == "de" else TITLE)
        time.sleep(1.0)
        path = x.screenshot(f"global-shortcuts-{language}-{scale}x.png")
        assert os.path.getsize(path) > 1000
        kh.close_request(bus, handle, conn=caller.conn)
        assert call.wait()[0] == 2
    finally:
        x.close()


# ---- through limen-portal ---------------------------------------------------------------

PORTAL_IFACE = "org.freedesktop.portal.GlobalShortcuts"
SESSION_IFACE = "org.freedesktop.portal.Session"


def start_limen_portal(bus):
    """limen-portal choosing limen-kde for everything (XDG_CURRENT_DESKTOP=KDE)."""
    import shutil
    shutil.copy(kh.portal_file_path(), os.path.join(bus.env["XDG_DESKTOP_PORTAL_DIR"], "limen.portal"))
    conf = os.path.join(bus.config_home, "xdg-desktop-portal")
    os.makedirs(conf, exist_ok=True)
    with open(os.path.join(conf, "kde-portals.conf"), "w") as f:
        f.write("[preferred]\ndefault=limen\n")
    return bus.start_portal(env={"XDG_CURRENT_DESKTOP": "KDE"})


@pytest.fixture
def portal_stack(bus, x, stack):
    start_limen_portal(bus)
    return stack


class App:
    """A host app calling the portal on its own connection; records what it is sent."""

    def __init__(self, bus):
        self.bus = bus
        self.client = request_helpers.Client(bus)
        self.conn = self.client.conn
        self.signals = []
        self.conn.signal_subscribe(None, PORTAL_IFACE, None, limentest.PORTAL_PATH, None, Gio.DBusSignalFlags.NONE,
                                   lambda c, s, p, i, n, a: self.signals.append((n, a.unpack())))
        self.closed = []
        self.conn.signal_subscribe(None, SESSION_IFACE, "Closed", None, None, Gio.DBusSignalFlags.NONE,
                                   lambda c, s, p, i, n, a: self.closed.append(p))

    def create_session(self, token="s1"):
        response, results = self.client.request(PORTAL_IFACE, "CreateSession",
                                                ({"session_handle_token": GLib.Variant("s", token)},), "(a{sv})")
        assert response == 0
        return results["session_handle"]

    def bind(self, session, entries, parent=""):
        return self.client.start(PORTAL_IFACE, "BindShortcuts", (session, shortcuts(*entries), parent, {}),
                                 "(oa(sa{sv})sa{sv})")

    def list(self, session):
        return self.client.request(PORTAL_IFACE, "ListShortcuts", (session, {}), "(oa{sv})")

    def call(self, method, args, sig):
        return self.bus.call(PORTAL_IFACE, method, args, sig, conn=self.conn)

    def got(self, name):
        return [a for n, a in self.signals if n == name]

    def wait_signal(self, name, count=1, timeout=10):
        limentest.wait_until(lambda: len(self.got(name)) >= count, timeout)
        return self.got(name)


def test_portal_host_caller_end_to_end(bus, x, portal_stack):
    assert bus.get_property(PORTAL_IFACE, "version") == 2
    app = App(bus)
    session = app.create_session()
    _, pending = app.bind(session, [TALK, MUTE])
    accept_dialog(x)
    response, results = pending.wait(30)
    assert response == 0
    assert bound(results) == {"talk": "Ctrl+Alt+T", "mute": "Meta+F9"}
    assert app.list(session) == (0, results)

    onlooker = App(bus)
    press(x, "ctrl+alt+t")
    activated = app.wait_signal("Activated")
    app.wait_signal("Deactivated")
    assert activated[0][:2] == (session, "talk")
    assert activated[0][3]["activation_token"].endswith(f"_TIME{activated[0][2]}")
    assert app.got("Deactivated")[0][:2] == (session, "talk")
    limentest.pump(0.3)
    assert onlooker.signals == []

    # Another caller cannot use this session.
    for method, args, sig in (("ListShortcuts", (session, {}), "(oa{sv})"),
                              ("ConfigureShortcuts", (session, "", {}), "(osa{sv})"),
                              ("BindShortcuts", (session, shortcuts(TALK), "", {}), "(oa(sa{sv})sa{sv})")):
        with pytest.raises(GLib.Error) as e:
            onlooker.call(method, args, sig)
        assert limentest.dbus_error_name(e.value) == "org.freedesktop.portal.Error.InvalidArgument"

    # ConfigureShortcuts (v2) shows the dialog again; Cancel changes nothing.
    app.call("ConfigureShortcuts", (session, "", {"activation_token": GLib.Variant("s", "t_TIME1")}), "(osa{sv})")
    x.answer(TITLE, "Escape")
    limentest.pump(0.5)
    assert app.got("ShortcutsChanged") == []

    # Session.Close: the backend lets the keys go. No Closed: the app closed it itself.
    bus.call(SESSION_IFACE, "Close", path=session, conn=app.conn)
    limentest.wait_until(lambda: not component_active_any(bus), 5)
    limentest.pump(0.2)
    assert session not in app.closed
    press(x, "ctrl+alt+t")
    limentest.pump(0.5)
    assert len(app.got("Activated")) == 1


def component_active_any(bus):
    comps = bus.call("org.kde.KGlobalAccel", "allComponents", dest=KGA, path="/kglobalaccel")[0]
    for path in comps:
        name = bus.call("org.freedesktop.DBus.Properties", "Get", ("org.kde.kglobalaccel.Component", "uniqueName"),
                        "(ss)", dest=KGA, path=path)[0]
        if name.startswith("limen-unidentified-") or name == APP:
            if bus.call("org.kde.kglobalaccel.Component", "isActive", dest=KGA, path=path)[0]:
                return True
    return False


SANDBOXED_APP = """
import sys, time
from gi.repository import Gio, GLib
c = Gio.bus_get_sync(Gio.BusType.SESSION)
D, P, I = "org.freedesktop.portal.Desktop", "/org/freedesktop/portal/desktop", "org.freedesktop.portal.GlobalShortcuts"
me = c.get_unique_name()[1:].replace(".", "_")
got = []
c.signal_subscribe(None, "org.freedesktop.portal.Request", "Response", None, None, 0,
                   lambda *a: got.append(a[5].unpack()))
def on_signal(conn, sender, path, iface, name, params):
    args = params.unpack()
    print("SIGNAL", name, args[1], flush=True)
    if name in ("Activated", "Deactivated"):
        print("TOKEN", name, args[3].get("activation_token", "-"), flush=True)
c.signal_subscribe(D, I, None, P, None, 0, on_signal)
def wait():
    ctx = GLib.MainContext.default()
    end = time.time() + 60
    while not got and time.time() < end:
        ctx.iteration(False); time.sleep(0.01)
    return got.pop()
c.call_sync(D, P, I, "CreateSession", GLib.Variant("(a{sv})", ({"handle_token": GLib.Variant("s", "c1"),
            "session_handle_token": GLib.Variant("s", "s1")},)), None, 0, 5000, None)
session = wait()[1]["session_handle"]
print("SESSION", session, flush=True)
c.call_sync(D, P, I, "BindShortcuts", GLib.Variant("(oa(sa{sv})sa{sv})", (session,
            [("talk", {"description": GLib.Variant("s", "Push to talk"),
                       "preferred_trigger": GLib.Variant("s", "CTRL+ALT+t")})], "", {"handle_token": GLib.Variant("s", "b1")})),
            None, 0, 5000, None)
print("BOUND", wait(), flush=True)
ctx = GLib.MainContext.default()
end = time.time() + float(sys.argv[1] if len(sys.argv) > 1 else 20)
while time.time() < end:
    ctx.iteration(False); time.sleep(0.01)
"""


def start_sandboxed_app(bus, seconds):
    """SANDBOXED_APP in bwrap as Flatpak app APP, listening @seconds for signals."""
    import subprocess
    here = os.path.dirname(os.path.abspath(__file__))
    r, w = os.pipe()
    os.write(w, limentest.FLATPAK_INFO.format(app_id=APP).encode())
    os.close(w)
    argv = limentest.bwrap_argv(bus, ro_binds=(here,)) + ["--ro-bind-data", str(r), "/.flatpak-info",
                                                           "/usr/bin/python3", "-c", SANDBOXED_APP, str(seconds)]
    proc = subprocess.Popen(argv, env={"PATH": "/usr/bin:/bin", "LANG": "C.UTF-8"}, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, pass_fds=(r,))
    os.close(r)
    return proc


def test_portal_sandboxed_caller(bus, x, portal_stack):
    proc = start_sandboxed_app(bus, 15)
    try:
        # The dialog names the app from its sandbox identity and its .desktop file.
        wid = x.wait_window(TITLE)
        time.sleep(0.5)
        x.screenshot("global-shortcuts-sandboxed.png")
        x.press(wid, "alt+a")
        limentest.wait_until(lambda: component_active(bus, APP), 10)
        press(x, "ctrl+alt+t")
        out, err = proc.communicate(timeout=40)
    finally:
        if proc.poll() is None:
            proc.kill()
    lines = out.splitlines()
    assert any(l.startswith("SESSION /org/freedesktop/portal/desktop/session/") for l in lines), (out, err)
    assert any(l.startswith("BOUND (0, {'shortcuts': [('talk'") for l in lines), (out, err)
    assert "SIGNAL Activated talk" in lines and "SIGNAL Deactivated talk" in lines, (out, err)
    # The keys are kept for the app (its id from /.flatpak-info), and released when it left.
    wait_rc(bus, lambda rc: rc.has_section(APP) and rc[APP].get("talk", "").startswith("Ctrl+Alt+T,"))
    limentest.wait_until(lambda: not component_active(bus, APP), 5)
    assert not component_active(bus, APP)


def test_portal_hostile_input(bus, x, portal_stack):
    app = App(bus)
    session = app.create_session()
    cases = [
        ("BindShortcuts", (session, [("", {})], "", {}), "(oa(sa{sv})sa{sv})"),
        ("BindShortcuts", (session, [("i" * 100000, {})], "", {}), "(oa(sa{sv})sa{sv})"),
        ("BindShortcuts", (session, [(f"s{i}", {}) for i in range(1000)], "", {}), "(oa(sa{sv})sa{sv})"),
        ("BindShortcuts", (session, [("a", {"description": GLib.Variant("as", ["x"])})], "", {}),
         "(oa(sa{sv})sa{sv})"),
        ("BindShortcuts", (session, [("a", {"preferred_trigger": GLib.Variant("s", "x" * 100000)})], "", {}),
         "(oa(sa{sv})sa{sv})"),
        ("BindShortcuts", (session, [("a", {}), ("a", {})], "", {}), "(oa(sa{sv})sa{sv})"),
        ("BindShortcuts", (session, [("a", {})], "gtk:1", {}), "(oa(sa{sv})sa{sv})"),
        ("BindShortcuts", (session, [("a", {})], "", {"handle_token": GLib.Variant("u", 1)}), "(oa(sa{sv})sa{sv})"),
        ("BindShortcuts", ("/org/freedesktop/portal/desktop/session/x/y", [("a", {})], "", {}), "(oa(sa{sv})sa{sv})"),
        ("ListShortcuts", ("/org/freedesktop/portal/desktop/session/x/y", {}), "(oa{sv})"),
        ("ConfigureShortcuts", (session, "", {"activation_token": GLib.Variant("s", "t" * 10000)}), "(osa{sv})"),
        ("ConfigureShortcuts", (session, "x" * 1000, {}), "(osa{sv})"),
        ("CreateSession", ({"session_handle_token": GLib.Variant("s", "bad/token")},), "(a{sv})"),
    ]
    for method, args, sig in cases:
        with pytest.raises(GLib.Error) as e:
            app.call(method, args, sig)
        assert limentest.dbus_error_name(e.value) == "org.freedesktop.portal.Error.InvalidArgument", (method, e.value)
        assert app.list(session) == (0, {"shortcuts": []}), (method, args)
    # A wrong signature never reaches the portal's code.
    with pytest.raises(GLib.Error) as e:
        app.call("BindShortcuts", (session, [("a", 1)], "", {}), "(oa(si)sa{sv})")
    assert limentest.dbus_error_name(e.value) == "org.freedesktop.DBus.Error.InvalidArgs"
    # Still serving: the session binds.
    assert app.list(session) == (0, {"shortcuts": []})


# ---- limen-portal against a mock backend: what it lets through ----------------------------

MOCK = request_helpers.BACKEND_NAME


@pytest.fixture
def mock_backend(bus):
    bus.write_portal_file("limentest", MOCK, ["org.freedesktop.impl.portal.GlobalShortcuts"], use_in="test")
    conf = os.path.join(bus.config_home, "xdg-desktop-portal")
    os.makedirs(conf, exist_ok=True)
    with open(os.path.join(conf, "test-portals.conf"), "w") as f:
        f.write("[preferred]\ndefault=limentest\n")
    backend = request_helpers.Backend(bus, ["globalshortcuts"])
    bus.start_portal()
    return backend


def emit_key(bus, signal, session, sid, options=None):
    bus.call(request_helpers.CONTROL_IFACE, "EmitKey", (signal, session, sid, 42, options or {}), "(sosta{sv})",
             dest=MOCK)


def test_mock_signals_reach_only_the_owner(bus, mock_backend):
    alice, bob = App(bus), App(bus)
    sa, sb = alice.create_session("a"), bob.create_session("b")
    token = {"activation_token": GLib.Variant("s", "x_TIME42"), "junk": GLib.Variant("s", "dropped")}
    emit_key(bus, "Activated", sa, "talk", token)
    emit_key(bus, "Deactivated", sb, "mute")
    alice.wait_signal("Activated")
    bob.wait_signal("Deactivated")
    limentest.pump(0.3)
    assert alice.signals == [("Activated", (sa, "talk", 42, {"activation_token": "x_TIME42"}))]
    assert bob.signals == [("Deactivated", (sb, "mute", 42, {}))]

    # Dropped: a bad id, an oversized token, a session that does not exist, a bad list.
    emit_key(bus, "Activated", sa, "")
    emit_key(bus, "Activated", sa, "talk", {"activation_token": GLib.Variant("s", "t" * 5000)})
    emit_key(bus, "Activated", "/org/freedesktop/portal/desktop/session/1_1/nobody", "talk")
    bus.call(request_helpers.CONTROL_IFACE, "EmitChanged", (sa, [("", {})]), "(oa(sa{sv}))", dest=MOCK)
    # Dropped: the same signal from someone who is not the backend, sent to the portal.
    impostor = bus.new_connection()
    portal_owner = bus.call("org.freedesktop.DBus", "GetNameOwner", (limentest.PORTAL_BUS_NAME,), "(s)",
                            dest="org.freedesktop.DBus", path="/org/freedesktop/DBus")[0]
    impostor.emit_signal(portal_owner, limentest.PORTAL_PATH, "org.freedesktop.impl.portal.GlobalShortcuts",
                         "Activated", GLib.Variant("(osta{sv})", (sa, "talk", 7, {})))
    impostor.flush_sync(None)
    # ShortcutsChanged with a good list arrives, filtered.
    bus.call(request_helpers.CONTROL_IFACE, "EmitChanged",
             (sa, [("talk", {"description": GLib.Variant("s", "Talk"), "trigger_description": GLib.Variant("s", "F1"),
                             "extra": GLib.Variant("i", 1)})]), "(oa(sa{sv}))", dest=MOCK)
    changed = alice.wait_signal("ShortcutsChanged")
    limentest.pump(0.3)
    assert changed == [(sa, [("talk", {"description": "Talk", "trigger_description": "F1"})])]
    assert [n for n, _ in alice.signals] == ["Activated", "ShortcutsChanged"]
    assert len(bob.signals) == 1


def test_mock_results_and_session_life(bus, mock_backend):
    app = App(bus)
    session = app.create_session()
    created = mock_backend.requests("CreateSession")
    assert created[0][1] == session and created[0][2] == ""
    # Only shortcuts the app proposed come back, with known keys only.
    mock_backend.set_response("BindShortcuts", 0, {"shortcuts": GLib.Variant("a(sa{sv})", [
        ("talk", {"description": GLib.Variant("s", "Talk"), "trigger_description": GLib.Variant("s", "F1"),
                  "x": GLib.Variant("s", "y")}),
        ("sneaky", {"description": GLib.Variant("s", "Not asked for")})])})
    _, pending = app.bind(session, [TALK])
    assert pending.wait() == (0, {"shortcuts": [("talk", {"description": "Talk", "trigger_description": "F1"})]})
    args = mock_backend.args("BindShortcuts")[0]
    assert args[0] == session and args[2] == ""
    assert args[1] == [("talk", {"description": "Push to talk", "preferred_trigger": "CTRL+ALT+t"})]
    # A malformed list from the backend is a failure, not passed on.
    mock_backend.set_response("BindShortcuts", 0, {"shortcuts": GLib.Variant("a(sa{sv})", [("", {})])})
    _, pending = app.bind(session, [TALK])
    assert pending.wait() == (2, {})
    # ConfigureShortcuts reaches the backend with its checked options.
    app.call("ConfigureShortcuts", (session, "x11:1a", {"activation_token": GLib.Variant("s", "tok"),
                                                         "junk": GLib.Variant("i", 1)}), "(osa{sv})")
    assert mock_backend.args("ConfigureShortcuts") == [[session, "x11:1a", {"activation_token": "tok"}]]
    # The caller leaves: the session closes and the backend's impl Session is told.
    app.client.close()
    limentest.wait_until(lambda: session in mock_backend.closed(), 5)
    assert session in mock_backend.closed()


def test_mock_backend_gone_closes_sessions(bus, mock_backend):
    app = App(bus)
    session = app.create_session()
    mock_backend.kill()
    limentest.wait_until(lambda: session in app.closed, 5)
    assert session in app.closed
    with pytest.raises(GLib.Error) as e:
        app.call("ListShortcuts", (session, {}), "(oa{sv})")
    assert limentest.dbus_error_name(e.value) == "org.freedesktop.portal.Error.InvalidArgument"


def test_behind_the_reference_frontend(bus, x, stack):
    """Debian's xdg-desktop-portal 1.16 (GlobalShortcuts version 1) in front of limen-kde."""
    kh.start_reference_frontend(bus)
    app = App(bus)
    session = app.create_session()
    _, pending = app.bind(session, [TALK])
    accept_dialog(x)
    response, results = pending.wait(30)
    assert (response, bound(results)) == (0, {"talk": "Ctrl+Alt+T"})
    press(x, "ctrl+alt+t")
    assert app.wait_signal("Activated")[0][:2] == (session, "talk")
    assert app.wait_signal("Deactivated")[0][:2] == (session, "talk")


# ---- under kwin_wayland --virtual (kglobalaccel runs inside KWin) -----------------------

WL_SOCKET = "wayland-limen-shortcuts"
KEY_LEFTCTRL, KEY_LEFTALT, KEY_T = 29, 56, 20   # evdev codes


def start_kwin_wayland(bus):
    """kwin_wayland --virtual with its own global shortcut handling (KGlobalAccel in KWin).
    /usr/bin/kwin_wayland's file capability is refused here: a copy named kwin_wayland runs."""
    import shutil
    bindir = os.path.join(bus.root, "kwin-bin")
    os.makedirs(bindir, exist_ok=True)
    exe = os.path.join(bindir, "kwin_wayland")
    shutil.copy("/usr/bin/kwin_wayland", exe)
    env = {"WAYLAND_DISPLAY": "", "DISPLAY": "", "QT_QPA_PLATFORM": "", "LIBGL_ALWAYS_SOFTWARE": "1"}
    bus.start([exe, "--virtual", "--width", "1280", "--height", "800", "--socket", WL_SOCKET, "--no-lockscreen",
               "--no-kactivities"], env=env, wait_name="org.kde.KWin", timeout=30)
    bus.wait_for_name(KGA, timeout=20)


KEYS_EXE = os.path.realpath(os.path.join(limentest.BUILD_DIR, "autotests", "limen-wayland-keys"))


def allow_typing(bus):
    """The .desktop file that lets limen-wayland-keys use KWin's fake input. Written before
    any client connects: KWin looks .desktop files up in a cache it does not rebuild at once."""
    apps = os.path.join(bus.data_home, "applications")
    os.makedirs(apps, exist_ok=True)
    with open(os.path.join(apps, "limen-wayland-keys.desktop"), "w") as f:
        f.write(f"[Desktop Entry]\nType=Application\nName=Limen test keys\nExec={KEYS_EXE}\n"
                "X-KDE-Wayland-Interfaces=org_kde_kwin_fake_input\n")


def type_on_wayland(bus, *keys, hold_ms=300):
    """Press @keys (evdev codes) through KWin's fake input, as the .desktop file allows."""
    import subprocess
    env = dict(bus.env, WAYLAND_DISPLAY=WL_SOCKET)
    done = subprocess.run([KEYS_EXE, str(hold_ms)] + [str(k) for k in keys], env=env, timeout=20,
                          capture_output=True, text=True)
    assert done.returncode == 0, done.stderr


class Lines(wayland_session.Probe):
    """wait_for() / drain() / command() / close() over the stdout of a process of ours."""

    def __init__(self, proc):
        self.proc, self.seen, self.partial = proc, [], b""

    def close(self):
        if self.proc.stdin:
            super().close()
        elif self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()


def start_window(bus, title):
    """limen-wayland-activate: a window that says when it is active and raises itself with
    the tokens it is given."""
    import subprocess
    exe = os.path.join(limentest.BUILD_DIR, "autotests", "limen-wayland-activate")
    window = Lines(subprocess.Popen([exe, title], env=dict(bus.env, WAYLAND_DISPLAY=WL_SOCKET),
                                    stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE))
    window.wait_for("MAPPED")
    return window


def start_wayland_stack(bus, privileged=True):
    """KWin, limen-kde (privileged in KWin's eyes through its .desktop file when
    @privileged), limen-portal and the sandboxed app, its keys bound before (in
    kglobalshortcutsrc: no dialog is asked on Wayland, where xdotool cannot answer one)."""
    write_desktop_file(bus, APP, "Example Talk")
    with open(os.path.join(bus.config_home, "kglobalshortcutsrc"), "w") as f:
        f.write(f"[{APP}]\n_k_friendly_name=Example Talk\ntalk=Ctrl+Alt+T,none,Push to talk\n")
    allow_typing(bus)
    if privileged:
        kh.install_kwin_desktop_file(bus)
    start_kwin_wayland(bus)
    request_helpers.start_documents(bus)
    kde = kh.start_kde(bus, env={"WAYLAND_DISPLAY": WL_SOCKET, "QT_QPA_PLATFORM": "wayland"})
    start_limen_portal(bus)
    # An idle limen-kde has no Wayland module mapped (a frontend's look at the Available*
    # properties maps it for a moment only).
    assert limentest.wait_until(lambda: not kde_maps_wayland(kde), 10)
    # The caller is the sandboxed app (its id names the component the keys were saved for).
    app = Lines(start_sandboxed_app(bus, 40))
    assert app.wait_for("BOUND ", 20).startswith("BOUND (0, {'shortcuts': [('talk', {'description': 'Push to talk', "
                                                  "'trigger_description': 'Ctrl+Alt+T'})]})")
    assert limentest.wait_until(lambda: component_active(bus, APP), 20)
    # Bound: limen-kde connected for tokens at once, and KWin has taken the connection in
    # (it looks the client's .desktop file up first, which can outlast a key's wait).
    assert kde_maps_wayland(kde)
    assert limentest.wait_until(lambda: "The compositor listed its globals" in kde.output(), 20)
    return kde, app


def kde_maps_wayland(kde):
    with open(f"/proc/{kde.pid}/maps") as f:
        return "liblimen-kde-wayland" in f.read()


def test_kwin_wayland_key_press_carries_a_kwin_token(bus):
    kde, app = start_wayland_stack(bus)
    windows = []
    try:
        windows.append(start_window(bus, "Raise me"))
        raise_me = windows[0]
        raise_me.wait_for("ACTIVE 1")
        windows.append(start_window(bus, "Other window"))
        windows[1].wait_for("ACTIVE 1")
        raise_me.wait_for("ACTIVE 0")
        # KWin 5.27 gives a client without the focus no token of its own ...
        raise_me.command("token")
        assert raise_me.wait_for("TOKEN ").startswith("TOKEN not-granted-")
        # ... and a token it did not issue raises nothing (so the check below can fail).
        raise_me.command("activate kwin-424242")
        raise_me.drain(1.0)
        assert "ACTIVE 1" not in raise_me.seen

        type_on_wayland(bus, KEY_LEFTCTRL, KEY_LEFTALT, KEY_T)
        assert app.wait_for("SIGNAL Activated talk", 20)
        token = app.wait_for("TOKEN Activated ").split(" ", 2)[2]
        assert app.wait_for("SIGNAL Deactivated talk")
        # Only the press carries one: KWin keeps one token at a time.
        assert app.wait_for("TOKEN Deactivated ") == "TOKEN Deactivated -"
        # KWin's own numbering, granted to limen-kde for its .desktop file's
        # org_kde_plasma_window_management; never a "not-granted-" one.
        assert token.startswith("kwin-"), token
        # The app raises its window with it, over the active one.
        raise_me.command("activate " + token)
        raise_me.wait_for("ACTIVE 1", 10)
        windows[1].wait_for("ACTIVE 0")
        # Pressed again: a new token, again accepted.
        type_on_wayland(bus, KEY_LEFTCTRL, KEY_LEFTALT, KEY_T)
        token2 = app.wait_for("TOKEN Activated ", 20).split(" ", 2)[2]
        assert token2.startswith("kwin-") and token2 != token
        windows[1].command("activate " + token2)
        windows[1].wait_for("ACTIVE 1", 10)
    finally:
        for w in windows + [app]:
            w.close()


def test_kwin_wayland_unprivileged_backend_sends_no_token(bus):
    """Without its .desktop file KWin treats limen-kde as any client without the focus: it
    answers with a "not-granted-" token, which is not passed on."""
    kde, app = start_wayland_stack(bus, privileged=False)
    window = start_window(bus, "Other window")
    try:
        window.wait_for("ACTIVE 1")
        type_on_wayland(bus, KEY_LEFTCTRL, KEY_LEFTALT, KEY_T)
        assert app.wait_for("SIGNAL Activated talk", 20)
        assert app.wait_for("TOKEN Activated ") == "TOKEN Activated -"
        assert app.wait_for("SIGNAL Deactivated talk")
        assert "refused an activation token" in kde.output()
    finally:
        window.close()
        app.close()


@pytest.mark.parametrize("compositor", ["silent", "absent"])
def test_a_compositor_that_does_not_answer_never_holds_a_key_back(bus, x, compositor):
    """limen-kde told it runs on Wayland (WAYLAND_DISPLAY) whose compositor never answers
    (a socket nobody reads) or is not there: Activated still comes, without a token, and
    before Deactivated; kglobalaccel5 on Xvfb stands in for KWin's key handling."""
    import socket
    name = "wayland-silent"
    listener = None
    if compositor == "silent":
        listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        listener.bind(os.path.join(bus.runtime_dir, name))
        listener.listen(16)
    try:
        write_desktop_file(bus, APP, "Example Talk")
        start_kglobalaccel(bus, x)
        request_helpers.start_documents(bus)
        kde = kh.start_kde_x11(bus, x, WAYLAND_DISPLAY=name)
        caller = Impl(bus)
        session = caller.create_session()
        _, call = caller.bind_async(session, [TALK])
        accept_dialog(x)
        assert call.wait()[0] == 0
        for n in (1, 2):
            press(x, "ctrl+alt+t")
            caller.wait_signal("Deactivated", count=n)
            keys = [(name_, args[1], args[3]) for name_, args in caller.signals if name_ != "ShortcutsChanged"]
            assert keys == [("Activated", "talk", {}), ("Deactivated", "talk", {})] * n
        if compositor == "silent":
            assert "did not list its globals in time" in kde.output()
    finally:
        if listener:
            listener.close()
