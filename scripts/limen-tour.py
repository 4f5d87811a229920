#!/usr/bin/python3
"""A short tour of real portal calls against a running Limen suite: once as a host app,
once as a Flatpak app inside a bwrap sandbox. Prints each call and what it returned.
Usage: limen-tour.py WORKDIR   (uses DBUS_SESSION_BUS_ADDRESS; WORKDIR holds scratch files)"""
import os
import subprocess
import sys
import textwrap

import gi

gi.require_version("Gio", "2.0")
from gi.repository import Gio, GLib  # noqa: E402

DEST, PATH = "org.freedesktop.portal.Desktop", "/org/freedesktop/portal/desktop"
workdir = sys.argv[1] if len(sys.argv) > 1 else "/tmp"
conn = Gio.bus_get_sync(Gio.BusType.SESSION, None)
failures = 0


def call(iface, method, args=None, sig=None, fds=None, dest=DEST, path=PATH):
    params = GLib.Variant(sig, tuple(args)) if sig else None
    if fds:
        fdlist = Gio.UnixFDList.new()
        for fd in fds:
            fdlist.append(fd)
        r, _ = conn.call_with_unix_fd_list_sync(dest, path, iface, method, params, None, 0, 10000, fdlist, None)
    else:
        r = conn.call_sync(dest, path, iface, method, params, None, 0, 10000, None)
    return r.unpack() if r else ()


def show(label, fn, expect_error=None):
    global failures
    try:
        value = fn()
        text = repr(value[0] if isinstance(value, tuple) and len(value) == 1 else value)
        ok = expect_error is None
    except GLib.Error as e:
        text = Gio.DBusError.get_remote_error(e) or e.message
        ok = expect_error is not None and text == expect_error
    if len(text) > 160:
        text = text[:157] + "..."
    print(f"  {'ok ' if ok else 'BAD'} {label:44} → {text}")
    if not ok:
        failures += 1


def has_owner(name):
    return conn.call_sync("org.freedesktop.DBus", "/org/freedesktop/DBus", "org.freedesktop.DBus", "NameHasOwner",
                          GLib.Variant("(s)", (name,)), None, 0, 5000, None).unpack()[0]


print("Host application (this script, unsandboxed):")
show("NetworkMonitor.GetStatus", lambda: call("org.freedesktop.portal.NetworkMonitor", "GetStatus"))
show("ProxyResolver.Lookup('https://kde.org/')",
     lambda: call("org.freedesktop.portal.ProxyResolver", "Lookup", ("https://kde.org/",), "(s)"))
show("Settings.ReadOne(appearance, color-scheme)",
     lambda: call("org.freedesktop.portal.Settings", "ReadOne", ("org.freedesktop.appearance", "color-scheme"), "(ss)"))
show("Settings.ReadAll([]) namespaces",
     lambda: (sorted(call("org.freedesktop.portal.Settings", "ReadAll", ([],), "(as)")[0]),))
show("OpenURI.SchemeSupported('mailto')",
     lambda: call("org.freedesktop.portal.OpenURI", "SchemeSupported", ("mailto", {}), "(sa{sv})"))
show("OpenURI.SchemeSupported('not a scheme')",
     lambda: call("org.freedesktop.portal.OpenURI", "SchemeSupported", ("not a scheme", {}), "(sa{sv})"),
     expect_error="org.freedesktop.portal.Error.InvalidArgument")
victim = os.path.join(workdir, "tour-trash-me.txt")
with open(victim, "w") as f:
    f.write("bye\n")
fd = os.open(victim, os.O_RDWR)
show("Trash.TrashFile(fd of a scratch file)", lambda: call("org.freedesktop.portal.Trash", "TrashFile", (0,), "(h)", fds=[fd]))
os.close(fd)
show("Trash.TrashFile(fd index 7, no fds)", lambda: call("org.freedesktop.portal.Trash", "TrashFile", (7,), "(h)"),
     expect_error="org.freedesktop.portal.Error.InvalidArgument")
show("Settings.ReadOne(org.example, missing)",
     lambda: call("org.freedesktop.portal.Settings", "ReadOne", ("org.example", "missing"), "(ss)"),
     expect_error="org.freedesktop.portal.Error.NotFound")

def available(name):
    """Running, or startable by the bus (an installed suite is D-Bus-activated)."""
    activatable = conn.call_sync("org.freedesktop.DBus", "/org/freedesktop/DBus", "org.freedesktop.DBus",
                                 "ListActivatableNames", None, None, 0, 5000, None).unpack()[0]
    return has_owner(name) or name in activatable


docs = available("org.freedesktop.portal.Documents")
if docs:
    doc_file = os.path.join(workdir, "tour-document.txt")
    with open(doc_file, "w") as f:
        f.write("hello from the document store\n")
    show("Documents.GetMountPoint", lambda: (bytes(call("org.freedesktop.portal.Documents", "GetMountPoint",
                                                        dest="org.freedesktop.portal.Documents",
                                                        path="/org/freedesktop/portal/documents")[0]).rstrip(b"\0").decode(),))
    fd = os.open(doc_file, os.O_PATH)
    show("Documents.AddFull(file, for org.example.Tour)",
         lambda: call("org.freedesktop.portal.Documents", "AddFull",
                      ([0], 0, "org.example.Tour", ["read"]), "(ahusas)", fds=[fd],
                      dest="org.freedesktop.portal.Documents", path="/org/freedesktop/portal/documents"))
    os.close(fd)
else:
    print("  --  Documents: limen-documents is not running (not built?)")

print("Flatpak application org.example.Tour (bwrap sandbox, synthesized /.flatpak-info):")
SANDBOX = textwrap.dedent('''
    import os, sys
    from gi.repository import Gio, GLib
    c = Gio.bus_get_sync(Gio.BusType.SESSION, None)
    def call(iface, method, args=None, sig=None, fds=None):
        p = GLib.Variant(sig, tuple(args)) if sig else None
        fl = Gio.UnixFDList.new()
        for fd in fds or ():
            fl.append(fd)
        r, _ = c.call_with_unix_fd_list_sync('org.freedesktop.portal.Desktop', '/org/freedesktop/portal/desktop',
                                             iface, method, p, None, 0, 10000, fl, None)
        return r.unpack()
    def show(label, fn):
        try:
            v = fn(); print('ok', label, '|', repr(v[0] if len(v) == 1 else v))
        except GLib.Error as e:
            print('err', label, '|', Gio.DBusError.get_remote_error(e) or e.message)
    # Register is judged only as a connection's first call (else it is refused for that).
    show('host.portal.Registry.Register (host only)', lambda: call('org.freedesktop.host.portal.Registry', 'Register',
         ('org.example.Fake', {}), '(sa{sv})'))
    show('NetworkMonitor.GetStatus (shared=network)', lambda: call('org.freedesktop.portal.NetworkMonitor', 'GetStatus'))
    show('Settings.ReadOne(appearance, color-scheme)', lambda: call('org.freedesktop.portal.Settings', 'ReadOne',
         ('org.freedesktop.appearance', 'color-scheme'), '(ss)'))
    fd = int(sys.argv[1])
    # Not trashed: the app cannot see the file. The specification's answer for that is 0.
    show('Trash.TrashFile(fd of a file hidden from it)', lambda: call('org.freedesktop.portal.Trash', 'TrashFile',
         (0,), '(h)', fds=[fd]))
    # No [USB Devices] rules in its /.flatpak-info: no device is listed.
    show('Usb.EnumerateDevices (no USB rules)', lambda: call('org.freedesktop.portal.Usb', 'EnumerateDevices',
         ({},), '(a{sv})'))
    doc = '/run/user/0/doc'
    print('ok', 'document mount seen by the app', '|', sorted(os.listdir(doc)) if os.path.isdir(doc) else 'not mounted here')
''')
hidden = os.path.join(workdir, "hidden")
os.makedirs(hidden, exist_ok=True)
secret = os.path.join(hidden, "secret.txt")
with open(secret, "w") as f:
    f.write("not for the sandbox\n")
secret_fd = os.open(secret, os.O_RDWR)
os.set_inheritable(secret_fd, True)
bus_socket = os.environ["DBUS_SESSION_BUS_ADDRESS"].split("unix:path=", 1)[-1].split(",")[0]
runtime = os.environ.get("XDG_RUNTIME_DIR", "")
r, w = os.pipe()
os.write(w, b"[Application]\nname=org.example.Tour\n\n[Context]\nshared=network;ipc;\n")
os.close(w)
argv = ["bwrap", "--unshare-all", "--share-net", "--die-with-parent", "--ro-bind", "/usr", "/usr",
        "--symlink", "usr/lib", "/lib", "--symlink", "usr/lib64", "/lib64", "--symlink", "usr/bin", "/bin",
        "--ro-bind", "/etc", "/etc", "--proc", "/proc", "--dev", "/dev", "--tmpfs", "/tmp",
        "--ro-bind", bus_socket, "/run/user/0/bus",
        "--setenv", "DBUS_SESSION_BUS_ADDRESS", "unix:path=/run/user/0/bus"]
if runtime and os.path.isdir(os.path.join(runtime, "doc", "by-app", "org.example.Tour")):
    argv += ["--bind", os.path.join(runtime, "doc", "by-app", "org.example.Tour"), "/run/user/0/doc"]
argv += ["--ro-bind-data", str(r), "/.flatpak-info", "/usr/bin/python3", "-c", SANDBOX, str(secret_fd)]
out = subprocess.run(argv, capture_output=True, text=True, pass_fds=(r, secret_fd), timeout=60,
                     env={"PATH": "/usr/bin", "LANG": "C.UTF-8"})
os.close(r)
os.close(secret_fd)
expected_errors = {"host.portal.Registry.Register (host only)": "org.freedesktop.portal.Error.NotAllowed"}
expected_values = {"Trash.TrashFile(fd of a file hidden from it)": "0", "Usb.EnumerateDevices (no USB rules)": "[]"}
for line in out.stdout.splitlines():
    status, rest = line.split(" ", 1)
    label, _, value = rest.partition(" | ")
    want = expected_errors.get(label)
    ok = ((status == "ok" and want is None and expected_values.get(label, value) == value)
          or (status == "err" and value == want))
    failures += 0 if ok else 1
    print(f"  {'ok ' if ok else 'BAD'} {label:44} → {value[:110]}")
if not os.path.exists(secret):
    failures += 1
    print("  BAD the hidden file was trashed")
if out.returncode != 0:
    failures += 1
    print("  BAD sandbox run failed:", out.stderr.strip()[-400:])
print(f"Tour: {failures} unexpected result(s).")
sys.exit(1 if failures else 0)
