"""limen-documents: what a host program does to a document's file shows through the mount
at once, in the host's view and in an app's, as it does on the host and with the reference:
a deleted file is gone (stat and open by path say ENOENT), a replaced one is the new file,
and a process holding the file open keeps it, as it would on the host."""

import errno
import os

import pytest
from gi.repository import GLib

import documents_helpers as dh
import limentest
from documents_helpers import read, write

APP = "org.example.App"


def gone(path):
    with pytest.raises(FileNotFoundError):
        os.stat(path)
    with pytest.raises(FileNotFoundError):
        open(path).close()
    assert not os.path.exists(path)


@pytest.fixture
def store(bus):
    dh.start(bus)
    work = os.path.join(bus.root, "work")
    os.makedirs(work)
    return bus, work


def views(bus, doc, name):
    mp = dh.mountpoint(bus)
    return [f"{mp}/{doc}/{name}", f"{mp}/by-app/{APP}/{doc}/{name}"]


def test_document_file_deleted_on_the_host(store):
    bus, work = store
    host = os.path.join(work, "a.txt")
    write(host, "one")
    doc = dh.add(bus, host)
    dh.docs(bus, "GrantPermissions", (doc, APP, ["read", "write"]), "(ssas)")
    for v in views(bus, doc, "a.txt"):
        assert read(v) == "one" and os.stat(v).st_size == 3
    os.unlink(host)
    for v in views(bus, doc, "a.txt"):
        gone(v)
    # The document itself stays; a file the host puts back under the name is its file.
    write(host, "again")
    for v in views(bus, doc, "a.txt"):
        assert read(v) == "again"


def test_document_file_replaced_on_the_host(store):
    bus, work = store
    host = os.path.join(work, "b.txt")
    write(host, "old")
    doc = dh.add(bus, host)
    dh.docs(bus, "GrantPermissions", (doc, APP, ["read"]), "(ssas)")
    for v in views(bus, doc, "b.txt"):
        assert os.stat(v).st_size == 3
    # An atomic save on the host (a new inode renamed over the name): stat shows it at once.
    GLib.file_set_contents(host, b"the new contents")
    for v in views(bus, doc, "b.txt"):
        assert os.stat(v).st_size == len("the new contents")
        assert read(v) == "the new contents"
    # Written in place on the host: the size is current too.
    with open(host, "a") as f:
        f.write("!")
    for v in views(bus, doc, "b.txt"):
        assert os.stat(v).st_size == len("the new contents!")


def test_open_file_outlives_its_deletion_on_the_host(store):
    bus, work = store
    host = os.path.join(work, "c.txt")
    write(host, "kept open")
    doc = dh.add(bus, host)
    v = views(bus, doc, "c.txt")[0]
    fd = os.open(v, os.O_RDONLY)
    try:
        os.unlink(host)
        # The holder keeps the file, as on the host: fstat and read work, no name is left.
        # (The kernel does not say whether a GETATTR comes from fstat or from a stat by path;
        # while a handle is open the attributes are answered and the kernel is told to drop
        # the entry, which it does a moment later, from another thread.)
        st = os.fstat(fd)
        assert st.st_size == len("kept open") and st.st_nlink == 0
        assert os.pread(fd, 100, 0) == b"kept open"
        assert limentest.wait_until(lambda: not os.path.exists(v))
        gone(v)
        assert os.fstat(fd).st_size == len("kept open")
    finally:
        os.close(fd)
    gone(v)


def test_file_in_an_exported_directory_changed_on_the_host(store):
    bus, work = store
    root = os.path.join(work, "proj")
    os.makedirs(root)
    write(os.path.join(root, "x.txt"), "x")
    write(os.path.join(root, "y.txt"), "y")
    doc = dh.add_full(bus, [root], dh.FLAG_DIRECTORY, APP, ["read", "write"])[0][0]
    v = f"{dh.mountpoint(bus)}/by-app/{APP}/{doc}/proj"
    assert os.stat(f"{v}/x.txt").st_size == 1 and read(f"{v}/y.txt") == "y"
    os.unlink(os.path.join(root, "x.txt"))
    gone(f"{v}/x.txt")
    assert sorted(os.listdir(v)) == ["y.txt"]
    GLib.file_set_contents(os.path.join(root, "y.txt"), b"yyy")
    assert os.stat(f"{v}/y.txt").st_size == 3
    assert read(f"{v}/y.txt") == "yyy"


def test_stat_of_a_kept_file_is_served_each_time(store):
    """The kernel keeps no attributes of a host file: a stat after each host change sees
    it, many times over, and nothing in the daemon grows or fails on the way."""
    bus, work = store
    host = os.path.join(work, "d.txt")
    write(host, "")
    doc = dh.add(bus, host)
    v = views(bus, doc, "d.txt")[1]
    dh.docs(bus, "GrantPermissions", (doc, APP, ["read"]), "(ssas)")
    for i in range(1, 200):
        with open(host, "a") as f:
            f.write("z")
        assert os.stat(v).st_size == i
    os.unlink(host)
    with pytest.raises(OSError) as e:
        os.stat(v)
    assert e.value.errno == errno.ENOENT
