"""Trash.TrashFile: fds checked for type, access and visibility to the caller."""
import os
import socket

import pytest
from gi.repository import GLib

import limentest
from limentest import dbus_error_name

T = "org.freedesktop.portal.Trash"

SANDBOX_TRASH = """
import os, sys
from gi.repository import Gio, GLib
path, mode = sys.argv[1], sys.argv[2]
if mode == 'inherited':
    fd = int(path)
else:
    flags = {'rw': os.O_RDWR, 'ro': os.O_RDONLY, 'path': os.O_PATH, 'dir': os.O_PATH | os.O_DIRECTORY}[mode]
    fd = os.open(path, flags)
fdlist = Gio.UnixFDList.new()
fdlist.append(fd)
c = Gio.bus_get_sync(Gio.BusType.SESSION, None)
try:
    r, _ = c.call_with_unix_fd_list_sync('org.freedesktop.portal.Desktop', '/org/freedesktop/portal/desktop',
        'org.freedesktop.portal.Trash', 'TrashFile', GLib.Variant('(h)', (0,)), None, 0, 5000, fdlist, None)
    print('result', r.unpack()[0])
except GLib.Error as e:
    print(Gio.DBusError.get_remote_error(e))
"""


def trash(bus, fd):
    return bus.call(T, "TrashFile", (0,), "(h)", fds=[fd])[0]


def make(bus, name, content="x"):
    path = os.path.join(bus.home, name)
    with open(path, "w") as f:
        f.write(content)
    return path


def trashed(bus, name):
    return os.path.exists(os.path.join(bus.data_home, "Trash", "files", name))


def test_host_trash(bus):
    bus.start_portal()
    path = make(bus, "doomed.txt")
    fd = os.open(path, os.O_RDWR)
    assert trash(bus, fd) == 1
    os.close(fd)
    assert not os.path.exists(path)
    assert trashed(bus, "doomed.txt")


def test_host_trash_directory_by_opath(bus):
    bus.start_portal()
    d = os.path.join(bus.home, "somedir")
    os.mkdir(d)
    fd = os.open(d, os.O_PATH | os.O_DIRECTORY)
    assert trash(bus, fd) == 1
    os.close(fd)
    assert trashed(bus, "somedir")


def test_read_only_fd_where_the_app_cannot_write_answers_0(bus):
    """A read-only fd is judged by what the caller may do with the file where it sees it:
    through a read-only bind, nothing."""
    bus.start_portal()
    path = make(bus, "keep.txt")
    assert run_sandboxed_trash(bus, path, "ro", ro_binds=(bus.home,)) == "result 0"
    assert os.path.exists(path)


def test_bad_fds(bus):
    d = bus.start_portal()
    with pytest.raises(GLib.Error) as e:
        bus.call(T, "TrashFile", (0,), "(h)")
    assert dbus_error_name(e.value) == "org.freedesktop.portal.Error.InvalidArgument"
    path = make(bus, "keep2.txt")
    fd = os.open(path, os.O_RDWR)
    with pytest.raises(GLib.Error) as e:
        bus.call(T, "TrashFile", (7,), "(h)", fds=[fd])
    assert dbus_error_name(e.value) == "org.freedesktop.portal.Error.InvalidArgument"
    a, b = socket.socketpair()
    with pytest.raises(GLib.Error) as e:
        trash(bus, a.fileno())
    assert dbus_error_name(e.value) == "org.freedesktop.portal.Error.InvalidArgument"
    null = os.open("/dev/null", os.O_RDWR)
    with pytest.raises(GLib.Error) as e:
        trash(bus, null)
    assert dbus_error_name(e.value) == "org.freedesktop.portal.Error.InvalidArgument"
    assert os.path.exists(path) and os.path.exists("/dev/null")
    assert d.alive()


def run_sandboxed_trash(bus, path, mode, binds=(), ro_binds=(), pass_fds=()):
    script = f"import sys; sys.argv = ['x', {path!r}, {mode!r}]\n" + SANDBOX_TRASH
    r = limentest.run_sandboxed(bus, "org.example.App", script, binds=binds, ro_binds=ro_binds, pass_fds=pass_fds)
    assert r.returncode == 0, r.stderr
    return r.stdout.strip()


def test_sandboxed_trash_visible_file(bus):
    bus.start_portal()
    path = make(bus, "shared.txt")
    assert run_sandboxed_trash(bus, path, "rw", binds=(bus.home,)) == "result 1"
    assert trashed(bus, "shared.txt")


def test_sandboxed_hidden_file_through_inherited_fd(bus):
    """The app got an fd to a file outside its sandbox: it must not trash it."""
    bus.start_portal()
    secret_dir = os.path.join(bus.root, "hidden")
    os.mkdir(secret_dir)
    path = os.path.join(secret_dir, "secret.txt")
    with open(path, "w") as f:
        f.write("s")
    fd = os.open(path, os.O_RDWR)
    os.set_inheritable(fd, True)
    out = run_sandboxed_trash(bus, str(fd), "inherited", pass_fds=(fd,))
    os.close(fd)
    assert out == "result 0"
    assert os.path.exists(path)


def test_sandboxed_opath_on_read_only_bind(bus):
    bus.start_portal()
    path = make(bus, "ro.txt")
    assert run_sandboxed_trash(bus, path, "path", ro_binds=(bus.home,)) == "result 0"
    assert os.path.exists(path)


def test_sandboxed_cannot_delete_in_read_only_folder(bus):
    """The file itself is writable, but the app sees its folder read-only."""
    bus.start_portal()
    path = make(bus, "inner.txt")
    # Bind the folder read-only and the file itself read-write on top.
    script = f"import sys; sys.argv = ['x', {path!r}, 'rw']\n" + SANDBOX_TRASH
    r = limentest.run_sandboxed(bus, "org.example.App", script, ro_binds=(bus.home,),
                                extra_args=("--bind", path, path))
    assert r.stdout.strip() == "result 0", r.stderr
    assert os.path.exists(path)
