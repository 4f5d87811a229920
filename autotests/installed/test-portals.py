#!/usr/bin/python3
"""The portals as apps meet them, against the installed suite: a host app (this process)
and a Flatpak app in a bwrap sandbox. limen-portal, and limen-kde behind it, are started by
the bus from their installed .service files."""

import os
import shutil
import textwrap

from limen_installed import PORTAL, GLib, SkipTest, main, remote_error


def frontend_activated(s):
    status = s.call(PORTAL, "org.freedesktop.portal.NetworkMonitor", "GetStatus", reply="(a{sv})")[0]
    assert "available" in status
    s.assert_activated_from_install(PORTAL[0], "limen-portal")


def versions(s):
    for iface, at_least in (("org.freedesktop.portal.Settings", 1), ("org.freedesktop.portal.FileChooser", 3),
                            ("org.freedesktop.portal.OpenURI", 4), ("org.freedesktop.portal.Trash", 1),
                            ("org.freedesktop.portal.Notification", 1), ("org.freedesktop.portal.ScreenCast", 4)):
        v = s.call(PORTAL, "org.freedesktop.DBus.Properties", "Get", (iface, "version"), "(ss)")[0]
        assert v >= at_least, (iface, v)


def settings_from_backend(s):
    # The color scheme comes from limen-kde, which the frontend's call starts.
    value = s.call(PORTAL, "org.freedesktop.portal.Settings", "ReadOne",
                   ("org.freedesktop.appearance", "color-scheme"), "(ss)")[0]
    assert value in (0, 1, 2), value
    s.assert_activated_from_install("org.freedesktop.impl.portal.desktop.limen", "limen-kde")


def proxy_resolver(s):
    proxies = s.call(PORTAL, "org.freedesktop.portal.ProxyResolver", "Lookup", ("https://kde.org/",), "(s)")[0]
    assert proxies, proxies


def invalid_argument(s):
    try:
        s.call(PORTAL, "org.freedesktop.portal.OpenURI", "SchemeSupported", ("not a scheme", {}), "(sa{sv})")
    except GLib.Error as e:
        assert remote_error(e) == "org.freedesktop.portal.Error.InvalidArgument", e.message
        assert s.home not in e.message
    else:
        raise AssertionError("a bad scheme was accepted")


def trash(s):
    victim = os.path.join(s.home, "trash-me.txt")
    with open(victim, "w") as f:
        f.write("bye\n")
    fd = os.open(victim, os.O_RDWR)
    try:
        assert s.call(PORTAL, "org.freedesktop.portal.Trash", "TrashFile", (0,), "(h)", fds=[fd])[0] == 1
    finally:
        os.close(fd)
    assert not os.path.exists(victim)
    assert os.path.exists(os.path.join(s.home, ".local/share/Trash/files/trash-me.txt"))


SANDBOX = textwrap.dedent('''
    import sys
    from gi.repository import Gio, GLib
    c = Gio.bus_get_sync(Gio.BusType.SESSION, None)
    def call(iface, method, args=None, sig=None, fds=()):
        fl = Gio.UnixFDList.new()
        for fd in fds:
            fl.append(fd)
        r, _ = c.call_with_unix_fd_list_sync('org.freedesktop.portal.Desktop', '/org/freedesktop/portal/desktop',
                                             iface, method, GLib.Variant(sig, tuple(args)) if sig else None,
                                             None, 0, 20000, fl, None)
        return r.unpack()
    def show(label, fn):
        try:
            print(label, 'ok', repr(fn()[0]))
        except GLib.Error as e:
            print(label, 'err', Gio.DBusError.get_remote_error(e))
    show('register', lambda: call('org.freedesktop.host.portal.Registry', 'Register', ('org.example.Fake', {}),
                                  '(sa{sv})'))
    show('network', lambda: call('org.freedesktop.portal.NetworkMonitor', 'GetAvailable'))
    show('settings', lambda: call('org.freedesktop.portal.Settings', 'ReadOne',
                                  ('org.freedesktop.appearance', 'color-scheme'), '(ss)'))
    show('trash', lambda: call('org.freedesktop.portal.Trash', 'TrashFile', (0,), '(h)', fds=[int(sys.argv[1])]))
''')


def flatpak_app(s):
    if not shutil.which("bwrap"):
        raise SkipTest("bwrap is not installed")
    hidden = os.path.join(s.home, "hidden.txt")
    with open(hidden, "w") as f:
        f.write("not for the sandbox\n")
    fd = os.open(hidden, os.O_RDWR)
    try:
        r = s.bwrap_app("org.example.Installed", SANDBOX.replace("int(sys.argv[1])", str(fd)), pass_fds=(fd,))
    finally:
        os.close(fd)
    assert r.returncode == 0, r.stderr[-2000:]
    got = dict(line.split(" ", 1) for line in r.stdout.splitlines())
    # Only a host app may register an app id; the sandbox's identity is its own.
    assert got["register"] == "err org.freedesktop.portal.Error.NotAllowed", got
    assert got["network"] == "ok True", got
    assert got["settings"].startswith("ok "), got
    # The app cannot see the file: not trashed, the specification's 0.
    assert got["trash"] == "ok 0", got
    assert os.path.exists(hidden)


if __name__ == "__main__":
    main([
        ("the frontend is activated from its installed service file", frontend_activated),
        ("interface versions", versions),
        ("Settings through limen-kde, activated", settings_from_backend),
        ("ProxyResolver.Lookup", proxy_resolver),
        ("a bad argument is InvalidArgument, naming no host path", invalid_argument),
        ("Trash.TrashFile of the host app's file", trash),
        ("a Flatpak app in bwrap", flatpak_app),
    ])
