"""Global shortcuts taken back in the permission store, against a real kglobalaccel5 on Xvfb:
limen-kde records what an app holds (its shortcuts with their keys) in the store's
"global-shortcuts" entry, and when that entry's row goes — the permissions page's Revoke and
limen-permissions (DeletePermission), a raw Delete from any client — the app's sessions get
Closed and kglobalaccel forgets the keys; a shortcut another client adds to the refused ones
stops at once. The next bind asks the person again."""

import os
import subprocess

import pytest

import kde_helpers as kh
import limentest
from limentest import Gio, GLib
from test_global_shortcuts import (APP, KGA, MUTE, STORE, STORE_PATH, TALK, TITLE, Impl, accept_dialog, bound,
                                   kglobalshortcutsrc, stack)  # noqa: F401 (stack: a fixture)

SESSION_IFACE = "org.freedesktop.impl.portal.Session"
CLI = os.path.join(limentest.BUILD_DIR, "kde-backend", "kcm", "limen-permissions")


def store(bus, method, args, sig):
    return bus.call(STORE, method, args, sig, dest=STORE, path=STORE_PATH)


def entry(bus):
    try:
        return store(bus, "Lookup", ("global-shortcuts", APP), "(ss)")
    except GLib.Error:
        return None


def accel_actions(bus, component=APP):
    """The actions kglobalaccel knows for @component, with their keys (Qt codes)."""
    try:
        path = bus.call("org.kde.KGlobalAccel", "getComponent", (component,), "(s)", dest=KGA,
                        path="/kglobalaccel")[0]
    except GLib.Error:
        return {}
    infos = bus.call("org.kde.kglobalaccel.Component", "allShortcutInfos", dest=KGA, path=path)[0]
    return {info[0]: [k for k in info[6] if k] for info in infos}


def watch_closed(caller, session):
    closed = []
    caller.conn.signal_subscribe(kh.KDE_NAME, SESSION_IFACE, "Closed", session, None, Gio.DBusSignalFlags.NONE,
                                 lambda *a: closed.append(session))
    return closed


def bind_both(bus, x):
    caller = Impl(bus)
    session = caller.create_session()
    closed = watch_closed(caller, session)
    _, call = caller.bind_async(session, [TALK, MUTE])
    accept_dialog(x)
    response, results = call.wait()
    assert (response, bound(results)) == (0, {"talk": "Ctrl+Alt+T", "mute": "Meta+F9"})
    return caller, session, closed


def recorded(bus):
    """The entry limen-kde wrote once the bind answered: (row, shortcuts in the data)."""
    limentest.wait_until(lambda: entry(bus) is not None and len(entry(bus)[1].get("shortcuts", [])) == 2, 10)
    perms, data = entry(bus)
    return perms.get(APP), sorted(data.get("shortcuts", []))


def test_what_an_app_holds_is_recorded_with_its_keys(bus, x, stack):
    bind_both(bus, x)
    row, held = recorded(bus)
    # The row keeps the app listed though nothing is refused; the data has the keys.
    assert row == [""]
    assert held == [("mute", "Mute the microphone", "Meta+F9"), ("talk", "Push to talk", "Ctrl+Alt+T")]
    env = dict(bus.env, LANGUAGE="C", LC_ALL="C.UTF-8", LIMEN_LOCALEDIR=os.path.join(limentest.BUILD_DIR, "locale"))
    shown = subprocess.run([CLI, "show", APP], env=env, capture_output=True, text=True, timeout=60).stdout
    assert "Global shortcuts: Mute the microphone (Meta+F9); Push to talk (Ctrl+Alt+T)" in shown, shown


@pytest.mark.parametrize("how", ["delete-permission", "delete", "cli-reset"])
def test_revoked_shortcuts_are_unbound_and_the_session_closed(bus, x, stack, how):
    caller, session, closed = bind_both(bus, x)
    recorded(bus)
    assert sorted(accel_actions(bus)) == ["mute", "talk"] and all(accel_actions(bus).values())
    other = Impl(bus)
    other_session = other.create_session("org.example.Other")
    other_closed = watch_closed(other, other_session)

    if how == "delete-permission":   # the permissions page's Revoke, limen-permissions revoke
        store(bus, "DeletePermission", ("global-shortcuts", APP, APP), "(sss)")
    elif how == "delete":            # a raw Delete from another client
        store(bus, "Delete", ("global-shortcuts", APP), "(ss)")
    else:
        env = dict(bus.env, LANGUAGE="C", LC_ALL="C.UTF-8")
        r = subprocess.run([CLI, "reset", APP], env=env, capture_output=True, text=True, timeout=60)
        assert r.returncode == 0, r.stderr

    assert limentest.wait_until(lambda: closed, 10), "the session was not closed"
    assert limentest.wait_until(lambda: accel_actions(bus) == {}, 10), accel_actions(bus)
    rc = kglobalshortcutsrc(bus)
    assert not (rc.has_section(APP) and ("talk" in rc[APP] or "mute" in rc[APP])), dict(rc[APP])
    # Another app's session runs on.
    assert other_closed == []
    assert other.call("ListShortcuts", (other.path("request"), other_session), "(oo)")[0] == 0

    # Asked again: the dialog opens for a new session of the app.
    caller2 = Impl(bus)
    session2 = caller2.create_session()
    _, call = caller2.bind_async(session2, [TALK])
    accept_dialog(x)
    assert bound(call.wait()[1]) == {"talk": "Ctrl+Alt+T"}


def test_a_refusal_written_by_another_client_unbinds_that_shortcut(bus, x, stack):
    caller, session, closed = bind_both(bus, x)
    recorded(bus)
    store(bus, "SetPermission", ("global-shortcuts", True, APP, APP, ["mute", ""]), "(sbssas)")
    changed = caller.wait_signal("ShortcutsChanged")
    assert [sid for sid, _ in changed[-1][1]] == ["talk"]
    assert limentest.wait_until(lambda: sorted(accel_actions(bus)) == ["talk"], 10), accel_actions(bus)
    assert closed == []


def test_revoked_while_limen_kde_was_not_running_asks_again(bus, x, stack):
    """kglobalaccel still has the keys, but the store says the app holds nothing: asked."""
    caller, session, closed = bind_both(bus, x)
    recorded(bus)
    assert stack.stop() == 0
    store(bus, "DeletePermission", ("global-shortcuts", APP, APP), "(sss)")
    assert sorted(accel_actions(bus)) == ["mute", "talk"]
    kh.start_kde_x11(bus, x)
    caller2 = Impl(bus)
    session2 = caller2.create_session()
    _, call = caller2.bind_async(session2, [TALK])
    x.wait_window(TITLE)
    accept_dialog(x)
    assert bound(call.wait()[1]) == {"talk": "Ctrl+Alt+T"}


def test_the_app_hears_closed_through_limen_portal(bus, x, stack):
    """The whole path: a host app known by its app id (Registry.Register) binds through
    limen-portal; limen-permissions revoke (what the page's Revoke does) ends its Session
    with Closed, and its keys are gone from kglobalaccel."""
    from test_global_shortcuts import App, start_limen_portal
    start_limen_portal(bus)
    app = App(bus)
    bus.call("org.freedesktop.host.portal.Registry", "Register", (APP, {}), "(sa{sv})", conn=app.conn)
    session = app.create_session()
    _, pending = app.bind(session, [TALK])
    accept_dialog(x)
    assert bound(pending.wait(30)[1]) == {"talk": "Ctrl+Alt+T"}
    assert limentest.wait_until(lambda: accel_actions(bus).get("talk"), 10)
    env = dict(bus.env, LANGUAGE="C", LC_ALL="C.UTF-8")
    r = subprocess.run([CLI, "revoke", APP, "global-shortcuts"], env=env, capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    assert limentest.wait_until(lambda: session in app.closed, 10), app.closed
    assert limentest.wait_until(lambda: accel_actions(bus) == {}, 10), accel_actions(bus)


def test_binding_the_same_again_writes_nothing(bus, x, stack):
    """An app binding the same shortcuts at each start is not asked and changes nothing in the
    store: no Changed for the frontend or an open permissions page. (limen-kde records before
    it answers, so a Changed would have come before the answer.)"""
    bind_both(bus, x)
    recorded(bus)
    changes = []
    bus.conn.signal_subscribe(STORE, STORE, "Changed", STORE_PATH, None, Gio.DBusSignalFlags.NONE,
                              lambda *a: changes.append(a[5].unpack()[:2]))
    caller = Impl(bus)
    session = caller.create_session()
    _, call = caller.bind_async(session, [TALK, MUTE])
    assert bound(call.wait()[1]) == {"talk": "Ctrl+Alt+T", "mute": "Meta+F9"}
    limentest.pump(0.1)
    assert changes == []
