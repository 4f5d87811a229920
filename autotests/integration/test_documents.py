"""limen-documents: org.freedesktop.portal.Documents v5, the FUSE filesystem and
FileTransfer, with the real mount, sandboxed callers (bwrap) and the flatpak CLI."""

import errno
import os
import signal
import stat
import subprocess
import threading
import time

import pytest
from gi.repository import Gio, GLib

import documents_helpers as dh
from documents_helpers import read, write
import limentest

NA = "org.freedesktop.portal.Error.NotAllowed"
NF = "org.freedesktop.portal.Error.NotFound"
IA = "org.freedesktop.portal.Error.InvalidArgument"
APP = "org.example.App"


@pytest.fixture
def work(bus):
    w = os.path.join(bus.root, "work")
    os.makedirs(w)
    return w


def test_host_add_and_queries(bus, work):
    dh.start(bus)
    f = os.path.join(work, "a.txt")
    write(f, "hello")
    doc = dh.add(bus, f)
    assert len(doc) >= 16 and doc.isalnum()
    assert dh.add(bus, f) == doc                      # reuse_existing
    assert dh.add(bus, f, reuse=False) != doc
    mnt = dh.mountpoint(bus)
    assert bytes(dh.docs(bus, "GetMountPoint")[0]).rstrip(b"\0").decode() == mnt
    assert read(f"{mnt}/{doc}/a.txt") == "hello"
    assert os.listdir(f"{mnt}/{doc}") == ["a.txt"]
    assert dh.docs(bus, "Lookup", (f.encode(),), "(ay)")[0] == doc
    assert dh.docs(bus, "Lookup", (f"{mnt}/{doc}/a.txt".encode() + b"\0",), "(ay)")[0] == doc
    write(os.path.join(work, "other.txt"), "x")
    assert dh.docs(bus, "Lookup", (os.path.join(work, "other.txt").encode(),), "(ay)")[0] == ""
    # A path that does not open is NotFound, as in the reference (which opens it first).
    assert dh.error_name(dh.docs, bus, "Lookup", (os.path.join(work, "none").encode(),), "(ay)") == NF
    path, apps = dh.docs(bus, "Info", (doc,), "(s)")
    assert bytes(path).rstrip(b"\0").decode() == f and apps == {}
    dh.docs(bus, "GrantPermissions", (doc, APP, ["read"]), "(ssas)")
    assert dh.docs(bus, "Info", (doc,), "(s)")[1] == {APP: ["read"]}
    listed = dh.docs(bus, "List", (APP,), "(s)")[0]
    assert list(listed) == [doc]
    paths = dh.docs(bus, "GetHostPaths", ([doc, "nonexistent", "../x"],), "(as)")[0]
    assert {k: bytes(v).rstrip(b"\0").decode() for k, v in paths.items()} == {doc: f}
    assert bus.get_property(dh.DOCS_IFACE, "version", dest=dh.DOCS_NAME, path=dh.DOCS_PATH) == 5
    dh.docs(bus, "Delete", (doc,), "(s)")
    assert dh.error_name(dh.docs, bus, "Info", (doc,), "(s)") == NF
    assert not os.path.exists(f"{mnt}/{doc}")
    assert read(f) == "hello"                          # the file itself stays


def test_the_documents_object_as_a_client_sees_it(bus, work):
    """The object serves Documents 5 and FileTransfer 1 with the specification's methods and
    argument names, the standard interfaces, and D-Bus's own errors for what it has not got."""
    import xml.etree.ElementTree as ET
    dh.start(bus)
    xml = bus.call("org.freedesktop.DBus.Introspectable", "Introspect", dest=dh.DOCS_NAME, path=dh.DOCS_PATH)[0]
    ifaces = {i.get("name"): i for i in ET.fromstring(xml).findall("interface")}
    assert {dh.DOCS_IFACE, "org.freedesktop.portal.FileTransfer", "org.freedesktop.DBus.Properties",
            "org.freedesktop.DBus.Introspectable", "org.freedesktop.DBus.Peer"} <= set(ifaces)

    def args(iface, method):
        m = ifaces[iface].find(f"method[@name='{method}']")
        return [(a.get("direction"), a.get("name"), a.get("type")) for a in m.findall("arg")]
    assert args(dh.DOCS_IFACE, "AddFull") == [
        ("in", "o_path_fds", "ah"), ("in", "flags", "u"), ("in", "app_id", "s"), ("in", "permissions", "as"),
        ("out", "doc_ids", "as"), ("out", "extra_out", "a{sv}")]
    assert {m.get("name") for m in ifaces[dh.DOCS_IFACE].findall("method")} == {
        "GetMountPoint", "Add", "AddNamed", "AddFull", "AddNamedFull", "GrantPermissions", "RevokePermissions",
        "Delete", "Lookup", "Info", "List", "GetHostPaths"}
    ft = "org.freedesktop.portal.FileTransfer"
    assert {m.get("name") for m in ifaces[ft].findall("method")} == {
        "StartTransfer", "AddFiles", "RetrieveFiles", "StopTransfer"}
    assert args(ft, "AddFiles") == [("in", "key", "s"), ("in", "fds", "ah"), ("in", "options", "a{sv}")]
    assert ifaces[ft].find("signal[@name='TransferClosed']/arg").get("type") == "s"
    assert bus.get_property(ft, "version", dest=dh.DOCS_NAME, path=dh.DOCS_PATH) == 1
    everything = bus.call("org.freedesktop.DBus.Properties", "GetAll", (dh.DOCS_IFACE,), "(s)",
                          dest=dh.DOCS_NAME, path=dh.DOCS_PATH)[0]
    assert everything == {"version": 5}
    bus.call("org.freedesktop.DBus.Peer", "Ping", dest=dh.DOCS_NAME, path=dh.DOCS_PATH)
    assert dh.error_name(dh.docs, bus, "Export", ("x",), "(s)") == "org.freedesktop.DBus.Error.UnknownMethod"
    assert dh.error_name(dh.docs, bus, "Info", (5,), "(u)") == "org.freedesktop.DBus.Error.InvalidArgs"
    # The mistakes a client can make are named as the reference (a GDBus service) names them.
    unknown, invalid = "org.freedesktop.DBus.Error.UnknownMethod", "org.freedesktop.DBus.Error.InvalidArgs"
    assert dh.error_name(bus.call, dh.DOCS_IFACE, "Info", ("x",), "(s)", dest=dh.DOCS_NAME,
                         path="/org/freedesktop/portal/elsewhere") == unknown
    props = "org.freedesktop.DBus.Properties"
    for method, args, sig in (("Get", (dh.DOCS_IFACE, "nope"), "(ss)"), ("Get", ("x.Nope", "version"), "(ss)"),
                              ("GetAll", ("x.Nope",), "(s)"), ("Get", (dh.DOCS_IFACE,), "(s)"),
                              ("Set", (dh.DOCS_IFACE, "version", GLib.Variant("u", 9)), "(ssv)")):
        assert dh.error_name(bus.call, props, method, args, sig, dest=dh.DOCS_NAME, path=dh.DOCS_PATH) == invalid
    assert bus.get_property(dh.DOCS_IFACE, "version", dest=dh.DOCS_NAME, path=dh.DOCS_PATH) == 5
    # A call that names no interface is refused as the reference refuses it.
    msg = Gio.DBusMessage.new_method_call(dh.DOCS_NAME, dh.DOCS_PATH, None, "GetMountPoint")
    reply = bus.conn.send_message_with_reply_sync(msg, Gio.DBusSendMessageFlags.NONE, 5000, None)[0]
    assert reply.get_error_name() == unknown
    # An fd handle naming no fd the message carries is the caller's mistake, said as such,
    # and the daemon goes on serving.
    f = os.path.join(work, "h.txt")
    write(f, "x")
    fd = os.open(f, os.O_PATH)
    try:
        assert dh.error_name(dh.docs, bus, "Add", (3, True, False), "(hbb)", fds=[fd]) == IA
        assert dh.error_name(dh.docs, bus, "AddFull", ([0, 7], 0, "", []), "(ahusas)", fds=[fd]) == IA
        assert dh.error_name(dh.docs, bus, "Add", (0, True, False), "(hbb)") == IA
    finally:
        os.close(fd)
    assert dh.add(bus, f)


def test_an_idle_daemon_sleeps(bus, work):
    """After serving, the daemon waits for the next call without using the CPU (its Documents
    connection is polled for what it waits for, not woken again and again)."""
    d = dh.start(bus)
    f = os.path.join(work, "i.txt")
    write(f, "x")
    dh.add(bus, f)
    dh.docs(bus, "GetMountPoint")
    time.sleep(0.5)

    def ticks():
        with open(f"/proc/{d.pid}/stat") as st:
            fields = st.read().rsplit(")", 1)[1].split()
        return int(fields[11]) + int(fields[12])        # utime + stime
    before = ticks()
    time.sleep(2)
    # A busy loop takes ~2 s of CPU here (200 ticks at 100 Hz); waiting takes next to none.
    assert ticks() - before < 20


def test_a_call_costs_the_daemon_no_wakeup_of_its_own(bus, work):
    """Serving a call writes nothing but the call's journal record: the daemon does not signal
    its own main loop (a write to its wakeup fd, read back by the next poll) for every call.
    Counted in write-family system calls (/proc/PID/io; a reply goes out by sendmsg, which is
    not among them): 200 Adds of new documents, 200 records."""
    d = dh.start(bus)
    files = []
    for i in range(201):
        files.append(os.path.join(work, f"w{i}"))
        write(files[-1], "w")
    dh.add(bus, files[0], reuse=False)

    def writes():
        with open(f"/proc/{d.pid}/io") as io:
            return int(next(line for line in io if line.startswith("syscw:")).split()[1])
    before = writes()
    for f in files[1:]:
        dh.add(bus, f, reuse=False)
    # Some slack for a takeover of the journal by the database, which may fall in between;
    # a wakeup per call would be 400 more.
    n = writes() - before
    assert 200 <= n < 300, n


def test_a_unique_document_is_never_found_by_its_path(bus, work):
    """A document made without reuse_existing is the caller's alone, as in the reference:
    neither Lookup nor a later Add with reuse_existing finds it by its path (so no other
    export shares it, and its Delete takes nothing from anyone else), also after a restart."""
    d = dh.start(bus)
    f = os.path.join(work, "u.txt")
    write(f, "u")
    unique = dh.add(bus, f, reuse=False)
    assert dh.docs(bus, "Lookup", (f.encode(),), "(ay)")[0] == ""
    shared = dh.add(bus, f)
    assert shared != unique
    assert dh.add(bus, f) == shared
    assert dh.docs(bus, "Lookup", (f.encode(),), "(ay)")[0] == shared
    assert dh.add(bus, f, reuse=False) not in (unique, shared)
    dh.docs(bus, "Delete", (shared,), "(s)")
    assert dh.docs(bus, "Lookup", (f.encode(),), "(ay)")[0] == ""
    assert d.stop() == 0
    bus.wait_for_name_gone(dh.DOCS_NAME)
    dh.start(bus)
    assert dh.docs(bus, "Lookup", (f.encode(),), "(ay)")[0] == ""
    assert dh.add(bus, f) not in (unique, shared)
    assert bytes(dh.docs(bus, "Info", (unique,), "(s)")[0]).rstrip(b"\0").decode() == f


def test_reuse_finds_only_a_document_kept_as_long(bus, work):
    """As in the reference, reuse_existing finds a persistent document only for a persistent
    export and a session one only for a session export, so a grant meant for this session
    never outlives it and a session grant is never made permanent by someone else's export.
    Lookup names the persistent one first."""
    d = dh.start(bus)
    f = os.path.join(work, "p.txt")
    write(f, "p")
    persistent = dh.add(bus, f)
    session = dh.add(bus, f, persistent=False)
    assert session != persistent
    assert dh.add(bus, f, persistent=False) == session and dh.add(bus, f) == persistent
    assert dh.docs(bus, "Lookup", (f.encode(),), "(ay)")[0] == persistent
    dh.docs(bus, "GrantPermissions", (session, APP, ["read"]), "(ssas)")
    g = os.path.join(work, "s.txt")
    write(g, "s")
    first = dh.add(bus, g, persistent=False)
    assert dh.add(bus, g) != first
    dh.docs(bus, "Delete", (persistent,), "(s)")
    assert dh.docs(bus, "Lookup", (f.encode(),), "(ay)")[0] == session
    assert d.stop() == 0
    bus.wait_for_name_gone(dh.DOCS_NAME)
    dh.start(bus)
    # The session's document and its grant are gone with the session.
    assert dh.error_name(dh.docs, bus, "Info", (session,), "(s)") == NF
    assert dh.docs(bus, "Lookup", (f.encode(),), "(ay)")[0] == ""
    assert dh.docs(bus, "List", (APP,), "(s)")[0] == {}


def test_lookup_names_only_a_documents_own_entry(bus, work):
    """Lookup of a path on the mount names a document only for the document's own file (or a
    directory document's directory), in the store or an app's view: a temporary file beside
    it, the document's folder, or a file inside a directory document names nothing (the
    reference answers the same, from the inode the path opens)."""
    dh.start(bus)
    mnt = dh.mountpoint(bus)
    f = os.path.join(work, "a.txt")
    write(f, "a")
    os.makedirs(os.path.join(work, "dir", "subdir"))
    write(os.path.join(work, "dir", "sub"), "s")
    doc = dh.add(bus, f)
    (ddoc,), _ = dh.add_full(bus, [os.path.join(work, "dir")], 8 | 1, APP, ["read", "write"])

    def lookup(path):
        return dh.docs(bus, "Lookup", (path.encode(),), "(ay)")[0]

    write(f"{mnt}/{doc}/tmpfile", "t")              # an app's temporary file beside the document
    assert lookup(f"{mnt}/{doc}/a.txt") == doc
    assert lookup(f"{mnt}/{doc}/tmpfile") == ""
    assert lookup(f"{mnt}/{doc}") == lookup(f"{mnt}/{doc}/") == ""
    assert lookup(f"{mnt}/{ddoc}/dir") == ddoc
    assert lookup(f"{mnt}/by-app/{APP}/{ddoc}/dir") == ddoc
    # Its directory on the mount, exported again as a directory, names it again.
    assert list(dh.add_full(bus, [f"{mnt}/{ddoc}/dir"], 8 | 1, "", [])[0]) == [ddoc]
    for inside in (f"{mnt}/{ddoc}", f"{mnt}/{ddoc}/dir/sub", f"{mnt}/{ddoc}/dir/subdir",
                   f"{mnt}/by-app/{APP}/{ddoc}/dir/sub", os.path.join(work, "dir", "sub"), mnt, f"{mnt}/by-app"):
        assert lookup(inside) == "", inside
    # Paths that do not open: a missing name, a view of an app the document is not shared with.
    for missing in (f"{mnt}/{doc}/missing", f"{mnt}/nodoc", f"{mnt}/by-app/{APP}/{doc}/a.txt"):
        assert dh.error_name(dh.docs, bus, "Lookup", (missing.encode(),), "(ay)") == NF, missing
    # Symlinks and dot-dot are followed as the caller's open would.
    os.symlink(f, os.path.join(work, "link"))
    assert lookup(os.path.join(work, "link")) == doc
    assert lookup(os.path.join(work, "dir", "..", "a.txt")) == doc
    assert dh.error_name(dh.docs, bus, "Lookup", (b"a.txt",), "(ay)") == "org.freedesktop.portal.Error.InvalidArgument"


def test_bad_input(bus, work):
    dh.start(bus)
    f = os.path.join(work, "a.txt")
    write(f, "x")
    fd = os.open(f, os.O_PATH)
    try:
        # fd index out of range / no fds at all
        assert dh.error_name(dh.docs, bus, "Add", (7, True, True), "(hbb)", fds=[fd]) == IA
        assert dh.error_name(dh.docs, bus, "Add", (0, True, True), "(hbb)") == IA
        assert dh.error_name(dh.docs, bus, "AddFull", ([0], 1 << 10, "", []), "(ahusas)", fds=[fd]) == IA
        assert dh.error_name(dh.docs, bus, "AddFull", ([0], 0, "", ["fly"]), "(ahusas)", fds=[fd]) == IA
        assert dh.error_name(dh.docs, bus, "AddFull", ([0], 0, "not an id", ["read"]), "(ahusas)", fds=[fd]) == IA
        assert dh.error_name(dh.docs, bus, "AddFull", ([0], dh.FLAG_DIRECTORY, "", []), "(ahusas)", fds=[fd]) == IA
        dfd = os.open(work, os.O_PATH)
        for name in ("", "..", ".", "a/b"):
            assert dh.error_name(dh.docs, bus, "AddNamed", (0, name.encode(), True, True), "(haybb)",
                                 fds=[dfd]) == IA, name
        # a directory without export-directory
        assert dh.error_name(dh.docs, bus, "Add", (0, True, True), "(hbb)", fds=[dfd]) == IA
        os.close(dfd)
    finally:
        os.close(fd)
    for bad in ("", "../etc", "a/b", "x" * 100):
        assert dh.error_name(dh.docs, bus, "Info", (bad,), "(s)") == NF
        assert dh.error_name(dh.docs, bus, "Delete", (bad,), "(s)") in (IA, NF)
    doc = dh.add(bus, f)
    assert dh.error_name(dh.docs, bus, "GrantPermissions", (doc, "", ["read"]), "(ssas)") == IA
    assert dh.error_name(dh.docs, bus, "GrantPermissions", (doc, APP, ["all"]), "(ssas)") == IA
    assert dh.docs(bus, "Lookup", (f.encode(),), "(ay)")[0] == doc     # still serving


def test_app_view_mode_bits_and_rights(bus, work):
    dh.start(bus)
    f = os.path.join(work, "b.txt")
    write(f, "data")
    os.chmod(f, 0o644)
    doc = dh.add(bus, f)
    mnt = dh.mountpoint(bus)
    view = f"{mnt}/by-app/{APP}"
    assert not os.path.exists(f"{view}/{doc}")
    dh.docs(bus, "GrantPermissions", (doc, APP, ["read"]), "(ssas)")
    st = os.stat(f"{view}/{doc}/b.txt")
    assert stat.S_IMODE(st.st_mode) == 0o444
    assert read(f"{view}/{doc}/b.txt") == "data"
    with pytest.raises(PermissionError):
        open(f"{view}/{doc}/b.txt", "w")
    dh.docs(bus, "GrantPermissions", (doc, APP, ["write"]), "(ssas)")
    assert limentest.wait_until(lambda: stat.S_IMODE(os.stat(f"{view}/{doc}/b.txt").st_mode) == 0o644)
    write(f"{view}/{doc}/b.txt", "changed")
    assert read(f) == "changed"
    assert os.listdir(view) == [doc]
    # The host view of the same document, and the host path xattr
    assert os.getxattr(f"{view}/{doc}/b.txt", "user.document-portal.host-path").decode() == f
    dh.docs(bus, "RevokePermissions", (doc, APP, ["read", "write"]), "(ssas)")
    assert limentest.wait_until(lambda: not os.path.exists(f"{view}/{doc}/b.txt"))


def test_revocation_hits_open_handles(bus, work):
    dh.start(bus)
    f = os.path.join(work, "c.txt")
    write(f, "0123456789" * 1000)
    doc = dh.add(bus, f)
    dh.docs(bus, "GrantPermissions", (doc, APP, ["read", "write"]), "(ssas)")
    p = f"{dh.mountpoint(bus)}/by-app/{APP}/{doc}/c.txt"
    fd = os.open(p, os.O_RDWR)
    try:
        assert os.pread(fd, 10, 0) == b"0123456789"       # now in the page cache
        dh.docs(bus, "RevokePermissions", (doc, APP, ["read"]), "(ssas)")

        def read_fails():
            try:
                os.pread(fd, 10, 0)
                return False
            except PermissionError:
                return True
        assert limentest.wait_until(read_fails, timeout=5)
        os.pwrite(fd, b"A", 0)                             # write is still granted
        dh.docs(bus, "Delete", (doc,), "(s)")
        with pytest.raises(PermissionError):
            os.pwrite(fd, b"B", 0)
    finally:
        os.close(fd)
    assert read(f).startswith("A123")


def test_atomic_save_leaves_nothing_behind(bus, work):
    dh.start(bus)
    f = os.path.join(work, "doc.txt")
    write(f, "old")
    doc = dh.add(bus, f)
    dh.docs(bus, "GrantPermissions", (doc, APP, ["read", "write"]), "(ssas)")
    d = f"{dh.mountpoint(bus)}/by-app/{APP}/{doc}"
    before = set(os.listdir(work))
    # A save like g_file_set_contents: temp file in the same dir, fsync, rename over.
    tmp = f"{d}/doc.txt.XYZ123"
    with open(tmp, "w") as t:
        t.write("new contents")
        t.flush()
        os.fsync(t.fileno())
    assert sorted(os.listdir(d)) == ["doc.txt", "doc.txt.XYZ123"]
    assert set(os.listdir(work)) == before                  # nothing visible on the host yet
    os.rename(tmp, f"{d}/doc.txt")
    assert read(f) == "new contents"
    assert read(f"{d}/doc.txt") == "new contents"
    assert set(os.listdir(work)) == before
    # A failed save: the temp is dropped, not left on the host.
    with open(f"{d}/doc.txt.tmp2", "w") as t:
        t.write("abandoned")
    os.unlink(f"{d}/doc.txt.tmp2")
    assert set(os.listdir(work)) == before and os.listdir(d) == ["doc.txt"]
    # An app crashing mid-save (temp still open when it dies) leaves nothing either.
    subprocess.run([limentest.python_exe(), "-c",
                    f"import os; fd = os.open({d + '/doc.txt.crash'!r}, os.O_CREAT | os.O_WRONLY); "
                    "os.write(fd, b'x'); os.kill(os.getpid(), 9)"])
    assert set(os.listdir(work)) == before
    # The document keeps following the file after the save; the host view too.
    assert read(f"{dh.mountpoint(bus)}/{doc}/doc.txt") == "new contents"
    with pytest.raises(OSError):
        os.symlink("/etc/passwd", f"{d}/link")
    os.truncate(f"{d}/doc.txt", 3)
    assert read(f) == "new"
    # A save that keeps a backup (the file to "doc.txt~", then a new doc.txt), as the
    # reference allows: the backup is a temp of the document, hidden on the host, and goes
    # when the app removes it; nothing else is left on the host.
    os.unlink(f"{d}/doc.txt.crash")   # the temp the crashed app left in the document
    os.rename(f"{d}/doc.txt", f"{d}/doc.txt~")
    assert os.listdir(d) == ["doc.txt~"] and not os.path.exists(f)
    assert read(f"{d}/doc.txt~") == "new"
    with open(f"{d}/doc.txt", "w") as t:
        t.write("after backup")
    assert read(f) == "after backup" and sorted(os.listdir(d)) == ["doc.txt", "doc.txt~"]
    os.unlink(f"{d}/doc.txt~")
    assert set(os.listdir(work)) == before and os.listdir(d) == ["doc.txt"]
    # The file moved away and back (rename over the document) is the document again.
    os.rename(f"{d}/doc.txt", f"{d}/moved")
    os.rename(f"{d}/moved", f"{d}/doc.txt")
    assert read(f) == "after backup" and set(os.listdir(work)) == before


def test_add_named_creates_through_the_document(bus, work):
    dh.start(bus)
    dfd = os.open(work, os.O_PATH)
    try:
        doc = dh.docs(bus, "AddNamed", (0, b"new.txt", True, True), "(haybb)", fds=[dfd])[0]
    finally:
        os.close(dfd)
    d = f"{dh.mountpoint(bus)}/{doc}"
    assert os.listdir(d) == []
    write(f"{d}/new.txt", "born")
    assert read(os.path.join(work, "new.txt")) == "born"
    assert dh.docs(bus, "Lookup", (os.path.join(work, "new.txt").encode(),), "(ay)")[0] == doc
    # Removing the file through the document (apps save by unlink and create): with write
    # access it goes on the host, the document stays and no view still shows the file.
    dh.docs(bus, "GrantPermissions", (doc, APP, ["read", "write"]), "(ssas)")
    dh.docs(bus, "GrantPermissions", (doc, "org.example.Reader", ["read"]), "(ssas)")
    app_view = f"{dh.mountpoint(bus)}/by-app/{APP}/{doc}"
    reader_view = f"{dh.mountpoint(bus)}/by-app/org.example.Reader/{doc}"
    assert read(f"{app_view}/new.txt") == "born"
    with pytest.raises(OSError) as e:
        os.unlink(f"{reader_view}/new.txt")
    assert e.value.errno == errno.EACCES
    assert os.path.exists(os.path.join(work, "new.txt"))
    with pytest.raises(FileNotFoundError):
        os.unlink(f"{d}/other.txt")
    os.unlink(f"{d}/new.txt")
    assert not os.path.exists(os.path.join(work, "new.txt"))
    assert os.path.isdir(d) and os.path.isdir(app_view)
    assert not os.path.exists(f"{d}/new.txt") and not os.path.exists(f"{app_view}/new.txt")
    write(f"{app_view}/new.txt", "again")
    assert read(os.path.join(work, "new.txt")) == "again"
    assert read(f"{d}/new.txt") == "again"


def test_export_directory(bus, work):
    dh.start(bus)
    root = os.path.join(work, "proj")
    os.makedirs(os.path.join(root, "sub"))
    write(os.path.join(root, "sub", "x.txt"), "x")
    secret = os.path.join(work, "secret.txt")
    write(secret, "secret")
    os.symlink(secret, os.path.join(root, "link"))
    ids, extra = dh.add_full(bus, [root], dh.FLAG_DIRECTORY | dh.FLAG_PERSISTENT, APP, ["read", "write"])
    doc = ids[0]
    assert bytes(extra["mountpoint"]).rstrip(b"\0").decode() == dh.mountpoint(bus)
    v = f"{dh.mountpoint(bus)}/by-app/{APP}/{doc}/proj"
    assert sorted(os.listdir(v)) == ["link", "sub"]
    assert read(f"{v}/sub/x.txt") == "x"
    write(f"{v}/sub/y.txt", "y")
    os.mkdir(f"{v}/newdir")
    os.rename(f"{v}/sub/y.txt", f"{v}/newdir/y.txt")
    assert read(os.path.join(root, "newdir", "y.txt")) == "y"
    os.unlink(f"{v}/newdir/y.txt")
    os.rmdir(f"{v}/newdir")
    assert sorted(os.listdir(root)) == ["link", "sub"]
    # No escape: the symlink is served as a symlink, never followed by the daemon; new
    # symlinks only with a relative text that stays inside the document, hard links only
    # inside it (as the reference allows both), renames out of it refused.
    assert os.readlink(f"{v}/link") == secret
    assert os.lstat(f"{v}/link").st_mode & stat.S_IFLNK
    for target in ("/", "/etc/passwd", "../..", "../../../x", "sub/../../.."):
        with pytest.raises(OSError) as e:
            os.symlink(target, f"{v}/sub/up")
        assert e.value.errno == errno.EPERM, target
    os.symlink("../sub/x.txt", f"{v}/sub/rel")
    assert os.readlink(os.path.join(root, "sub", "rel")) == "../sub/x.txt"
    assert read(f"{v}/sub/rel") == "x"
    os.unlink(f"{v}/sub/rel")
    os.link(f"{v}/sub/x.txt", f"{v}/sub/hard")
    assert os.stat(os.path.join(root, "sub", "hard")).st_ino == os.stat(os.path.join(root, "sub", "x.txt")).st_ino
    assert os.lstat(f"{v}/sub/hard").st_ino == os.lstat(f"{v}/sub/x.txt").st_ino
    os.unlink(f"{v}/sub/hard")
    other = dh.add_full(bus, [os.path.join(work)], dh.FLAG_DIRECTORY, APP, ["read", "write"])[0][0]
    with pytest.raises(OSError) as e:
        os.rename(f"{v}/sub/x.txt", f"{dh.mountpoint(bus)}/by-app/{APP}/{other}/work/stolen")
    assert e.value.errno == errno.EXDEV
    # ".." climbs the kernel's own dentries, so it stays inside the app's view.
    assert sorted(os.listdir(f"{v}/sub/../..")) == ["proj"]
    # The exported root itself cannot be replaced through the document.
    with pytest.raises(OSError):
        os.rename(f"{v}", f"{dh.mountpoint(bus)}/by-app/{APP}/{doc}/elsewhere")


def test_reexport_through_the_mount(bus, work):
    """A file or folder inside an exported directory, named through the mount, is exported by
    its host path, as the reference does (upstream's test-document-fuse relies on it); a
    sandboxed app gets no more than its rights on the directory, through its own view only.
    A file of a single-file document's temp stays refused."""
    dh.start(bus)
    proj = os.path.join(work, "proj")
    os.makedirs(os.path.join(proj, "inner"))
    write(os.path.join(proj, "a.txt"), "a")
    write(os.path.join(proj, "inner", "b.txt"), "b")
    dir_doc = dh.add_full(bus, [proj], dh.FLAG_DIRECTORY, APP, ["read"])[0][0]
    mnt = dh.mountpoint(bus)
    new = dh.add(bus, f"{mnt}/{dir_doc}/proj/a.txt")
    assert new != dir_doc
    assert bytes(dh.docs(bus, "Info", (new,), "(s)")[0]).rstrip(b"\0").decode() == os.path.join(proj, "a.txt")
    assert read(f"{mnt}/{new}/a.txt") == "a"
    assert dh.add(bus, os.path.join(proj, "a.txt")) == new          # the same file, reused
    fd = os.open(f"{mnt}/{dir_doc}/proj/inner", os.O_PATH)
    try:
        inner = dh.docs(bus, "AddFull", ([0], dh.FLAG_DIRECTORY, "", []), "(ahusas)", fds=[fd])[0][0]
    finally:
        os.close(fd)
    assert read(f"{mnt}/{inner}/inner/b.txt") == "b"
    # From the sandbox, through its own (read-only) view: read only, whatever the fd says.
    out = dh.run_in_sandbox(bus, APP, f'''
view = "/run/user/0/doc/{dir_doc}/proj"
fd = os.open(view + "/inner/b.txt", os.O_RDONLY)
r = call("AddFull", "(ahusas)", ([0], 0, "", []), [fd])
out["add"] = r
''', extra_args=["--bind", f"{mnt}/by-app/{APP}", "/run/user/0/doc"])
    assert out["add"][0] == "ok", out
    child = out["add"][1][0][0]
    perms = dh.docs(bus, "Info", (child,), "(s)")[1].get(APP)
    assert "read" in perms and "write" not in perms, perms
    assert bytes(dh.docs(bus, "Info", (child,), "(s)")[0]).rstrip(b"\0").decode() == os.path.join(proj, "inner", "b.txt")
    # A single-file document's temp file cannot be exported.
    single = dh.add(bus, os.path.join(proj, "a.txt"))
    write(f"{mnt}/{single}/scratch", "t")
    assert dh.error_name(dh.add, bus, f"{mnt}/{single}/scratch") == "org.freedesktop.portal.Error.NotAllowed"


def test_a_former_document_file_names_no_document_from_a_sandbox(bus, work):
    """Through an app's bind-mounted view, where an fd is told by its node: a document's file
    renamed to another name (an editor's NAME~ backup) is a temp, also while the kernel keeps
    the file's node under the new name; so is the file a save replaced and the file unlinked
    through the mount. An fd of any of them names no document (the reference refuses these
    with InvalidArgument), and the backup keeps its contents when a new NAME is written.
    Renamed back, the file is the document's again."""
    dh.start(bus)
    f = os.path.join(work, "doc.txt")
    write(f, "original")
    (doc,), _ = dh.add_full(bus, [f], dh.FLAG_REUSE | dh.FLAG_PERSISTENT, APP, ["read", "write"])
    mnt = dh.mountpoint(bus)
    out = dh.run_in_sandbox(bus, APP, f'''
v = "/run/user/0/doc/{doc}"
def add_full(fd, app="", perms=()):
    return call("AddFull", "(ahusas)", ([0], 1, app, list(perms)), [fd])
def add_path(path, mode=os.O_RDONLY):
    fd = os.open(path, mode)
    try:
        return add_full(fd)
    finally:
        os.close(fd)
def write(path, text):
    with open(path, "w") as fh:
        fh.write(text)
out["own file"] = add_path(v + "/doc.txt")
os.rename(v + "/doc.txt", v + "/doc.txt~")
backup = os.open(v + "/doc.txt~", os.O_PATH)     # no handle: nothing holds the file open
out["backup"] = add_path(v + "/doc.txt~")
out["backup, O_PATH"] = add_full(backup)
out["backup, for itself"] = add_full(backup, {APP!r}, ["read"])
out["backup, Add"] = call("Add", "(hbb)", (0, True, True), [backup])
write(v + "/doc.txt", "new")
out["backup read"] = open(v + "/doc.txt~").read()
out["new file"] = add_path(v + "/doc.txt")
os.rename(v + "/doc.txt~", v + "/doc.txt")
out["renamed back"] = add_full(backup)
out["renamed back read"] = open(v + "/doc.txt").read()
old = os.open(v + "/doc.txt", os.O_RDONLY)
write(v + "/.doc.txt.tmp", "saved")
os.rename(v + "/.doc.txt.tmp", v + "/doc.txt")
out["replaced by a save"] = add_full(old)
held = os.open(v + "/doc.txt", os.O_RDONLY)
os.unlink(v + "/doc.txt")
out["unlinked"] = add_full(held)
''', extra_args=["--bind", f"{mnt}/by-app/{APP}", "/run/user/0/doc"])
    assert out["own file"][0] == "ok" and out["own file"][1][0] == [doc], out
    for k in ("backup", "backup, O_PATH", "backup, for itself", "backup, Add", "replaced by a save", "unlinked"):
        assert out[k] == ["error", NA], (k, out[k])
    assert out["backup read"] == "original"
    assert out["new file"][0] == "ok" and out["new file"][1][0] == [doc], out
    assert out["renamed back"][0] == "ok" and out["renamed back"][1][0] == [doc], out
    assert out["renamed back read"] == "original"
    assert list(dh.docs(bus, "List", ("",), "(s)")[0]) == [doc]


def test_symlink_swap_on_the_host_path(bus, work):
    dh.start(bus)
    inner = os.path.join(work, "dir")
    os.makedirs(inner)
    write(os.path.join(inner, "f.txt"), "mine")
    hidden = os.path.join(work, "hidden")
    os.makedirs(hidden)
    write(os.path.join(hidden, "f.txt"), "secret")
    doc = dh.add(bus, os.path.join(inner, "f.txt"))
    dh.docs(bus, "GrantPermissions", (doc, APP, ["read"]), "(ssas)")
    # Swap the document's directory for a symlink to another directory with the same name inside.
    os.rename(inner, os.path.join(work, "moved"))
    os.symlink(hidden, inner)
    p = f"{dh.mountpoint(bus)}/by-app/{APP}/{doc}/f.txt"
    # A fresh view (no cached entry) must not serve the other directory's file.
    subprocess.run(["sh", "-c", "echo 3 > /proc/sys/vm/drop_caches"], stderr=subprocess.DEVNULL)
    try:
        content = read(p)
    except OSError:
        content = None
    assert content != "secret"


def test_sandboxed_app_cannot_name_files_in_a_folder(bus, work):
    """AddNamed and AddNamedFull are the host's, as in the reference: from a sandbox the
    answer would tell which names exist in a folder it holds an fd of. Even its own writable
    folder gets NotAllowed, and no document is made."""
    dh.start(bus)
    own = os.path.join(work, "own")
    os.makedirs(own)
    write(os.path.join(own, "there.txt"), "t")
    out = dh.run_in_sandbox(bus, APP, f'''
for label, flags in (("path", os.O_PATH), ("read", os.O_RDONLY | os.O_DIRECTORY)):
    dfd = os.open({own!r}, flags)
    for name in (b"new.txt\\0", b"there.txt\\0"):
        out[f"AddNamed {{label}} {{name[:-1].decode()}}"] = call("AddNamed", "(haybb)", (0, name, True, True), [dfd])
        out[f"AddNamedFull {{label}} {{name[:-1].decode()}}"] = call(
            "AddNamedFull", "(hayusas)", (0, name, 3, {APP!r}, ["read", "write"]), [dfd])
fd = os.open({own!r} + "/there.txt", os.O_RDWR)
out["Add"] = call("Add", "(hbb)", (0, True, True), [fd])
''', binds=(own,))
    for key, value in out.items():
        if key != "Add":
            assert value == ["error", "org.freedesktop.portal.Error.NotAllowed"], (key, value)
    assert out["Add"][0] == "ok"
    assert list(dh.docs(bus, "List", ("",), "(s)")[0]) == [out["Add"][1][0]]     # the only document


def test_sandboxed_caller(bus, work):
    dh.start(bus)
    shared = os.path.join(work, "shared")
    os.makedirs(shared)
    f = os.path.join(shared, "s.txt")
    write(f, "visible")
    ro = os.path.join(work, "ro")
    os.makedirs(ro)
    write(os.path.join(ro, "r.txt"), "readonly")
    hidden = os.path.join(work, "hidden.txt")
    write(hidden, "hidden")
    host_doc = dh.add(bus, hidden)
    hfd = os.open(hidden, os.O_RDWR)
    try:
        out = dh.run_in_sandbox(bus, APP, f'''
fd = os.open({f!r}, os.O_PATH)
out["add"] = call("Add", "(hbb)", (0, True, True), [fd])
rfd = os.open({os.path.join(ro, "r.txt")!r}, os.O_PATH)
out["add_ro"] = call("Add", "(hbb)", (0, True, True), [rfd])
out["add_hidden"] = call("Add", "(hbb)", (0, True, True), [{hfd}])
out["lookup"] = call("Lookup", "(ay)", ({f!r}.encode(),))
out["info"] = call("Info", "(s)", ({host_doc!r},))
out["list"] = call("List", "(s)", ("",))
out["delete_other"] = call("Delete", "(s)", ({host_doc!r},))
out["grant_other"] = call("GrantPermissions", "(ssas)", ({host_doc!r}, "org.example.App", ["read"]))
out["hostpaths_other"] = call("GetHostPaths", "(as)", ([{host_doc!r}],))
if out["add_ro"][0] == "ok":
    d = out["add_ro"][1][0]
    out["grant_more"] = call("GrantPermissions", "(ssas)", (d, "org.friend.App", ["write"]))
    out["grant_ok"] = call("GrantPermissions", "(ssas)", (d, "org.friend.App", ["read"]))
    out["full_more"] = call("AddFull", "(ahusas)", ([0], 1, "org.friend.App", ["write"]), [rfd])
    out["hostpaths"] = call("GetHostPaths", "(as)", ([d],))
out["as_needed"] = call("AddFull", "(ahusas)", ([0], 4, "org.example.App", ["read"]), [fd])
''', binds=(shared,), ro_binds=(ro,), pass_fds=(hfd,))
    finally:
        os.close(hfd)
    assert out["add"][0] == "ok", out
    doc = out["add"][1][0]
    # Added with reuse_existing: a shared document, not the app's to delete (the reference's rights).
    assert dh.docs(bus, "Info", (doc,), "(s)")[1] == {APP: ["read", "write", "grant-permissions"]}
    ro_doc = out["add_ro"][1][0]
    # An O_PATH fd to a read-only bind mount gives no write right.
    assert dh.docs(bus, "Info", (ro_doc,), "(s)")[1][APP] == ["read", "grant-permissions"]
    assert out["add_hidden"] == ["error", NA]          # a file the sandbox cannot see by path
    for k in ("lookup", "info", "list"):
        assert out[k] == ["error", NA], k
    assert out["delete_other"] == ["error", NF]
    assert out["grant_other"] == ["error", NF]
    assert out["hostpaths_other"] == ["ok", [{}]]
    assert out["grant_more"] == ["error", NA]
    assert out["grant_ok"] == ["ok", []]
    assert out["full_more"] == ["error", NA]
    assert list(out["hostpaths"][1][0]) == [ro_doc]
    assert out["as_needed"] == ["ok", [[""], {"mountpoint": dh.mountpoint(bus) + "\0"}]] or \
        out["as_needed"][1][0] == [""]
    assert dh.docs(bus, "Info", (host_doc,), "(s)")[1] == {}


def test_a_sandboxed_exporters_rights_are_the_references(bus, work):
    """What a sandboxed app holds on what it exports, as in the reference: read always, write
    only when its fd proves it, grant-permissions, and delete only on a document of its own
    (made without reuse_existing); an AddFull naming its own app gives it just the rights
    asked for there; naming another app, it keeps its own besides."""
    dh.start(bus)
    own = os.path.join(work, "own")
    os.makedirs(own)
    for n in "abcdefg":
        write(os.path.join(own, n), n)
    out = dh.run_in_sandbox(bus, APP, f'''
own = {own!r}
def add(name, mode, *args):
    fd = os.open(own + "/" + name, mode)
    if len(args) == 2:
        return call("Add", "(hbb)", (0,) + args, [fd])
    return call("AddFull", "(ahusas)", ([0],) + args, [fd])
out["Add rw, reuse"] = add("a", os.O_RDWR, True, True)
out["Add rw, unique"] = add("b", os.O_RDWR, False, True)
out["Add read-only fd, reuse"] = add("c", os.O_RDONLY, True, True)
out["AddFull reuse, no app"] = add("d", os.O_RDWR, 3, "", [])
out["AddFull unique, no app"] = add("e", os.O_RDWR, 2, "", [])
out["AddFull reuse, other app"] = add("f", os.O_RDWR, 3, "org.other.App", ["read"])
out["AddFull reuse, own app"] = add("g", os.O_RDWR, 3, {APP!r}, ["read"])
''', binds=(own,))
    gw, gwd = ["grant-permissions", "read", "write"], ["delete", "grant-permissions", "read", "write"]
    want = {
        "Add rw, reuse": {APP: gw},
        "Add rw, unique": {APP: gwd},
        "Add read-only fd, reuse": {APP: ["grant-permissions", "read"]},
        "AddFull reuse, no app": {APP: gw},
        "AddFull unique, no app": {APP: gwd},
        "AddFull reuse, other app": {APP: gw, "org.other.App": ["read"]},
        "AddFull reuse, own app": {APP: ["read"]},
    }
    for key, rights in want.items():
        assert out[key][0] == "ok", (key, out[key])
        ids = out[key][1][0]
        doc = ids[0] if isinstance(ids, list) else ids
        got = dh.docs(bus, "Info", (doc,), "(s)")[1]
        assert {app: sorted(p) for app, p in got.items()} == rights, key


def test_by_app_isolation(bus, work):
    """A sandbox that sees the whole mount still cannot use another app's view or the host view."""
    dh.start(bus)
    f = os.path.join(work, "iso.txt")
    write(f, "for A only")
    doc = dh.add(bus, f)
    dh.docs(bus, "GrantPermissions", (doc, "org.a.App", ["read", "write"]), "(ssas)")
    mnt = dh.mountpoint(bus)
    # A's own view, mounted where Flatpak mounts it
    out = dh.run_in_sandbox(bus, "org.a.App", f'''
out["own"] = try_io(lambda: open("/run/user/0/doc/{doc}/iso.txt").read())
out["ls"] = try_io(lambda: os.listdir("/run/user/0/doc"))
''', extra_args=["--bind", f"{mnt}/by-app/org.a.App", "/run/user/0/doc"])
    assert out["own"] == ["ok", "for A only"]
    assert out["ls"] == ["ok", [doc]]
    # B with the whole mount visible
    out = dh.run_in_sandbox(bus, "org.b.App", f'''
out["other_view"] = try_io(lambda: open("{mnt}/by-app/org.a.App/{doc}/iso.txt").read())
out["host_view"] = try_io(lambda: open("{mnt}/{doc}/iso.txt").read())
out["list_root"] = try_io(lambda: os.listdir("{mnt}"))
out["list_byapp"] = try_io(lambda: os.listdir("{mnt}/by-app"))
out["own_view"] = try_io(lambda: os.listdir("{mnt}/by-app/org.b.App"))
''', extra_args=["--bind", mnt, mnt])
    for k in ("other_view", "host_view", "list_root", "list_byapp"):
        assert out[k][0] == "errno" and out[k][1] in ("ENOENT", "EACCES"), (k, out[k])
    assert out["own_view"] == ["ok", []]
    # The host itself still reads everything.
    assert read(f"{mnt}/by-app/org.a.App/{doc}/iso.txt") == "for A only"


def test_persistence_restart_and_stale_mount(bus, work):
    d = dh.start(bus)
    f = os.path.join(work, "p.txt")
    write(f, "persist")
    persistent = dh.add(bus, f, persistent=True)
    g = os.path.join(work, "t.txt")
    write(g, "transient")
    transient = dh.add(bus, g, persistent=False)
    dh.docs(bus, "GrantPermissions", (persistent, APP, ["read"]), "(ssas)")
    d.stop(signal.SIGKILL)                          # leaves a dead mount behind
    bus.wait_for_name_gone(dh.DOCS_NAME)
    assert dh.is_mounted(dh.mountpoint(bus))
    dh.start(bus)
    assert dh.docs(bus, "Info", (persistent,), "(s)")[1] == {APP: ["read"]}
    assert dh.error_name(dh.docs, bus, "Info", (transient,), "(s)") == NF
    assert read(f"{dh.mountpoint(bus)}/by-app/{APP}/{persistent}/p.txt") == "persist"


def test_document_follows_a_rename(bus, work):
    dh.start(bus)
    f = os.path.join(work, "orig.txt")
    write(f, "moving")
    doc = dh.add(bus, f)
    os.rename(f, os.path.join(work, "renamed.txt"))
    # The file handle finds it again (we run as root, so open_by_handle_at works).
    assert os.listdir(f"{dh.mountpoint(bus)}/{doc}") == ["renamed.txt"]
    assert read(f"{dh.mountpoint(bus)}/{doc}/renamed.txt") == "moving"
    path = bytes(dh.docs(bus, "Info", (doc,), "(s)")[0]).rstrip(b"\0").decode()
    assert path == os.path.join(work, "renamed.txt")


def test_pipelined_calls_keep_their_order(bus, work):
    """A client that sends Delete and then Add (reusing) of the same file without waiting in
    between gets them answered in that order: Add is answered on the D-Bus thread when it can,
    but never ahead of a call the main thread has not taken yet. So the Add makes a new
    document; it never hands out the one the Delete removes."""
    dh.start(bus)
    f = os.path.join(work, "order.txt")
    write(f, "x")
    conn = bus.new_connection()
    ctx = GLib.MainContext.default()

    def send(method, body, fds=None):
        msg = Gio.DBusMessage.new_method_call(dh.DOCS_NAME, dh.DOCS_PATH, dh.DOCS_IFACE, method)
        msg.set_body(body)
        if fds:
            fdlist = Gio.UnixFDList.new()
            for fd in fds:
                fdlist.append(fd)
            msg.set_unix_fd_list(fdlist)
        box = []
        conn.send_message_with_reply(msg, Gio.DBusSendMessageFlags.NONE, 10000, None,
                                     lambda c, res: box.append(c.send_message_with_reply_finish(res)))
        return box

    fd = os.open(f, os.O_PATH)
    try:
        for _ in range(100):
            doc = dh.docs(bus, "Add", (0, True, True), "(hbb)", fds=[fd], conn=conn)[0]
            deleted = send("Delete", GLib.Variant("(s)", (doc,)))
            added = send("Add", GLib.Variant("(hbb)", (0, True, True)), [fd])
            while not (deleted and added):
                ctx.iteration(True)
            assert deleted[0].get_message_type() == Gio.DBusMessageType.METHOD_RETURN
            assert added[0].get_message_type() == Gio.DBusMessageType.METHOD_RETURN, added[0].get_body()
            new = added[0].get_body().unpack()[0]
            assert new != doc
            path = bytes(dh.docs(bus, "Info", (new,), "(s)")[0]).rstrip(b"\0").decode()
            assert path == f
    finally:
        os.close(fd)


def test_kill9_during_writes_loses_no_committed_document(bus, work):
    d = dh.start(bus)
    committed = []
    stop = threading.Event()
    files = []
    for i in range(200):
        p = os.path.join(work, f"k{i}.txt")
        write(p, str(i))
        files.append(p)
    conn = bus.new_connection()

    def adder():
        for p in files:
            if stop.is_set():
                return
            try:
                fd = os.open(p, os.O_PATH)
                try:
                    doc = dh.docs(bus, "Add", (0, False, True), "(hbb)", fds=[fd], conn=conn)[0]
                finally:
                    os.close(fd)
                committed.append((doc, p))
            except GLib.Error:
                return
    t = threading.Thread(target=adder)
    t.start()
    limentest.wait_until(lambda: len(committed) > 30, timeout=20)
    d.signal(signal.SIGKILL)
    stop.set()
    t.join(20)
    d.stop()
    bus.wait_for_name_gone(dh.DOCS_NAME)
    dh.start(bus)
    assert len(committed) > 30
    for doc, p in committed:
        path = bytes(dh.docs(bus, "Info", (doc,), "(s)")[0]).rstrip(b"\0").decode()
        assert path == p


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT, signal.SIGHUP])
def test_signals_with_open_files(bus, work, sig):
    d = dh.start(bus)
    f = os.path.join(work, "open.txt")
    write(f, "x" * 100000)
    doc = dh.add(bus, f)
    p = f"{dh.mountpoint(bus)}/{doc}/open.txt"
    fd = os.open(p, os.O_RDONLY)
    reader = subprocess.Popen([limentest.python_exe(), "-c",
                               f"import os\nfd=os.open({p!r}, os.O_RDONLY)\n"
                               "while True:\n    os.pread(fd, 4096, 0)\n"],
                              stderr=subprocess.DEVNULL)
    time.sleep(0.3)
    t0 = time.monotonic()
    d.signal(sig)
    status = d.wait(timeout=5)
    elapsed = time.monotonic() - t0
    reader.kill()
    reader.wait()
    try:
        os.close(fd)
    except OSError:
        pass  # the connection is gone: that is the point
    assert status == 0
    assert elapsed < 1.0, elapsed
    assert not dh.is_mounted(dh.mountpoint(bus))


def test_exit_removes_nothing_from_the_data_directory(bus, work):
    """Whoever removes the data directory while the daemon exits (upstream's test harness does,
    right after unmounting the store) finds every file it listed still there: the daemon leaves
    its files in place at exit, as the reference does, and the next start reads them."""
    d = dh.start(bus)
    f = os.path.join(work, "kept.txt")
    write(f, "k")
    doc = dh.add(bus, f)
    data = os.path.join(bus.data_home, "limen")
    before = set(os.listdir(data))
    assert {"documents.sqlite", "documents.sqlite-wal"} <= before
    assert d.stop() == 0
    assert set(os.listdir(data)) == before
    dh.start(bus)
    assert read(f"{dh.mountpoint(bus)}/{doc}/kept.txt") == "k"


def flatpak(bus, *args):
    return subprocess.run(["flatpak", *args], env=bus.env, capture_output=True, text=True, timeout=30)


def test_flatpak_cli(bus, work):
    dh.start(bus)
    f = os.path.join(work, "cli.txt")
    write(f, "cli")
    r = flatpak(bus, "document-export", f"--app={APP}", "-r", "-w", f)
    assert r.returncode == 0, r.stderr
    exported = r.stdout.strip()
    assert read(exported) == "cli"
    doc = exported.split("/")[-2]
    assert dh.docs(bus, "Info", (doc,), "(s)")[1] == {APP: ["read", "write"]}
    r = flatpak(bus, "documents")
    assert r.returncode == 0 and doc in r.stdout
    r = flatpak(bus, "document-info", f)
    assert r.returncode == 0 and doc in r.stdout and APP in r.stdout, r.stdout
    r = flatpak(bus, "document-unexport", f)
    assert r.returncode == 0, r.stderr
    assert dh.error_name(dh.docs, bus, "Info", (doc,), "(s)") == NF


def test_file_transfer(bus, work):
    dh.start(bus)
    f = os.path.join(work, "transfer.txt")
    write(f, "payload")
    key = bus.call(dh.FT_IFACE, "StartTransfer", ({"autostop": GLib.Variant("b", True)},), "(a{sv})",
                   dest=dh.DOCS_NAME, path=dh.DOCS_PATH)[0]
    fd = os.open(f, os.O_RDONLY)
    try:
        bus.call(dh.FT_IFACE, "AddFiles", (key, [0], {}), "(saha{sv})", dest=dh.DOCS_NAME, path=dh.DOCS_PATH,
                 fds=[fd])
    finally:
        os.close(fd)
    closed = []
    bus.conn.signal_subscribe(dh.DOCS_NAME, dh.FT_IFACE, "TransferClosed", dh.DOCS_PATH, None, 0,
                              lambda *a: closed.append(a[5].unpack()[0]))
    out = dh.run_in_sandbox(bus, "org.receiver.App", f'''
out["files"] = call("RetrieveFiles", "(sa{{sv}})", ({key!r}, {{}}), iface="org.freedesktop.portal.FileTransfer")
out["again"] = call("RetrieveFiles", "(sa{{sv}})", ({key!r}, {{}}), iface="org.freedesktop.portal.FileTransfer")
''')
    assert out["files"][0] == "ok"
    path = out["files"][1][0][0]
    assert path.startswith(dh.mountpoint(bus) + "/") and path.endswith("/transfer.txt")
    doc = path.split("/")[-2]
    assert dh.docs(bus, "Info", (doc,), "(s)")[1] == {"org.receiver.App": ["read"]}
    assert out["again"] == ["error", NF]               # autostop
    assert limentest.wait_until(lambda: closed == [key])
    # Only the sender adds files; an unknown key is NotFound.
    assert dh.error_name(bus.call, dh.FT_IFACE, "StopTransfer", ("nope",), "(s)", dest=dh.DOCS_NAME,
                         path=dh.DOCS_PATH) == NF


def test_import_from_reference_document_portal(bus, work):
    """Documents made by Debian's xdg-document-portal are ours after the switch."""
    ps = subprocess.Popen(["/usr/libexec/xdg-permission-store", "--replace"], env=bus.env,
                          stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    dp = subprocess.Popen(["/usr/libexec/xdg-document-portal", "--replace"], env=bus.env,
                          stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    f = os.path.join(work, "ref.txt")
    write(f, "from the reference")
    try:
        bus.wait_for_name(dh.DOCS_NAME)
        r = flatpak(bus, "document-export", f"--app={APP}", "-r", "-w", f)
        assert r.returncode == 0, r.stderr
        ref_doc = r.stdout.strip().split("/")[-2]
        # xdg-permission-store writes its file a little later: wait for the grant to land.
        db = os.path.join(bus.data_home, "flatpak", "db", "documents")
        assert limentest.wait_until(lambda: os.path.exists(db) and b"write" in open(db, "rb").read(), timeout=10)
    finally:
        dp.terminate()
        ps.terminate()
        dp.wait(10)
        ps.wait(10)
    subprocess.run(["fusermount3", "-u", "-z", dh.mountpoint(bus)], stderr=subprocess.DEVNULL)
    bus.wait_for_name_gone(dh.DOCS_NAME)
    dh.start(bus)
    assert dh.docs(bus, "Info", (ref_doc,), "(s)")[1] == {APP: ["read", "write"]}
    assert read(f"{dh.mountpoint(bus)}/by-app/{APP}/{ref_doc}/ref.txt") == "from the reference"


def test_replace_hands_over_the_mount(bus, work):
    first = dh.start(bus)
    f = os.path.join(work, "r.txt")
    write(f, "kept")
    doc = dh.add(bus, f, persistent=True)
    second = dh.start(bus, "--replace", wait_mount=False)
    assert first.wait(timeout=5) == 0
    # The successor serves the same documents on a live mount.
    assert limentest.wait_until(lambda: dh.is_mounted(dh.mountpoint(bus)), timeout=5)

    def readable():
        try:
            return read(f"{dh.mountpoint(bus)}/{doc}/r.txt") == "kept"
        except OSError:
            return False
    assert limentest.wait_until(readable, timeout=5)
    assert second.alive()


def test_non_empty_mount_dir(bus, work):
    mnt = dh.mountpoint(bus)
    os.makedirs(mnt)
    write(os.path.join(mnt, "left-over"), "x")
    dh.start(bus)
    f = os.path.join(work, "n.txt")
    write(f, "n")
    doc = dh.add(bus, f)
    assert read(f"{mnt}/{doc}/n.txt") == "n"
    assert "left-over" not in os.listdir(mnt)


def test_directory_moved_out_of_an_export_is_unreachable(bus, work):
    dh.start(bus)
    root = os.path.join(work, "proj")
    os.makedirs(os.path.join(root, "sub"))
    write(os.path.join(root, "sub", "a.txt"), "inside")
    doc = dh.add_full(bus, [root], dh.FLAG_DIRECTORY, APP, ["read", "write"])[0][0]
    v = f"{dh.mountpoint(bus)}/by-app/{APP}/{doc}/proj"
    assert read(f"{v}/sub/a.txt") == "inside"           # the kernel now caches proj/sub
    outside = os.path.join(work, "outside")
    os.makedirs(outside)
    os.rename(os.path.join(root, "sub"), os.path.join(outside, "sub"))
    write(os.path.join(outside, "sub", "secret.txt"), "outside the export")
    for p in (f"{v}/sub/secret.txt", f"{v}/sub/a.txt"):
        with pytest.raises(OSError):
            read(p)
    with pytest.raises(OSError):
        os.listdir(f"{v}/sub")
    with pytest.raises(OSError):
        write(f"{v}/sub/new.txt", "x")
    assert not os.path.exists(os.path.join(outside, "sub", "new.txt"))
    # Moving the whole export keeps it working (found again by its file handle).
    os.rename(root, os.path.join(work, "proj2"))
    os.makedirs(os.path.join(work, "proj2", "d"))
    write(os.path.join(work, "proj2", "d", "b.txt"), "moved along")
    assert read(f"{dh.mountpoint(bus)}/{doc}/proj/d/b.txt") == "moved along" or \
        read(f"{dh.mountpoint(bus)}/{doc}/proj2/d/b.txt") == "moved along"


def test_dbus_activation(bus, work):
    exe = limentest.binary("limen-documents")
    bus.write_service_file(dh.DOCS_NAME, exe)
    bus.write_service_file(dh.PS_NAME, exe)
    # No daemon started: the first call activates it. Activated for the permission store,
    # it mounts nothing (as the reference's separate permission store): a harness may
    # remove $XDG_RUNTIME_DIR right after stopping the bus.
    assert dh.ps(bus, "List", ("t",), "(s)", timeout=20000) == ([],)
    limentest.pump(0.3)
    assert not dh.is_mounted(dh.mountpoint(bus))
    # The first call on Documents mounts; GetMountPoint answers once the mount is there.
    assert dh.get_mount_point(bus) == dh.mountpoint(bus)
    assert dh.is_mounted(dh.mountpoint(bus))
    f = os.path.join(work, "act.txt")
    write(f, "activated")
    doc = dh.add(bus, f)
    assert read(f"{dh.mountpoint(bus)}/{doc}/act.txt") == "activated"
    pid = bus.call("org.freedesktop.DBus", "GetConnectionUnixProcessID", (dh.DOCS_NAME,), "(s)",
                   dest="org.freedesktop.DBus", path="/org/freedesktop/DBus")[0]
    os.kill(pid, signal.SIGTERM)
    bus.wait_for_name_gone(dh.DOCS_NAME)
    assert limentest.wait_until(lambda: not dh.is_mounted(dh.mountpoint(bus)), timeout=5)


def test_first_add_after_permission_store_calls_mounts(bus, work):
    """A client known from permission-store calls whose first Documents call is an Add: the
    document is there through the mount when the Add returns."""
    d = dh.start(bus, wait_mount=False)
    bus.wait_for_name(dh.PS_NAME, daemon=d)      # requested with Documents, owned a moment later
    conn = bus.new_connection()
    assert dh.ps(bus, "List", ("t",), "(s)", conn=conn) == ([],)
    assert not dh.is_mounted(dh.mountpoint(bus))
    f = os.path.join(work, "first.txt")
    write(f, "first")
    fd = os.open(f, os.O_PATH)
    try:
        doc = dh.docs(bus, "Add", (0, False, True), "(hbb)", fds=[fd], conn=conn)[0]
    finally:
        os.close(fd)
    assert read(f"{dh.mountpoint(bus)}/{doc}/first.txt") == "first"
    assert d.alive()


def test_file_transfer_call_mounts(bus, work):
    dh.start(bus, wait_mount=False)
    limentest.pump(0.2)
    assert not dh.is_mounted(dh.mountpoint(bus))
    key = bus.call(dh.FT_IFACE, "StartTransfer", ({},), "(a{sv})", dest=dh.DOCS_NAME, path=dh.DOCS_PATH)[0]
    assert key
    assert limentest.wait_until(lambda: dh.is_mounted(dh.mountpoint(bus)), timeout=5)


def test_test_hook_identity(bus, work):
    """XDG_DESKTOP_PORTAL_TEST_APP_INFO_KIND in the daemon's environment (LIMEN_TEST_HOOKS builds)."""
    meta = os.path.join(work, "flatpak-info")
    write(meta, f"[Application]\nname={APP}\n")
    d = dh.start(bus, env={"XDG_DESKTOP_PORTAL_TEST_APP_INFO_KIND": "flatpak",
                           "XDG_DESKTOP_PORTAL_TEST_FLATPAK_METADATA": meta}, wait_mount=True)
    if "test hooks: compiled in" not in subprocess.run([limentest.binary("limen-documents"), "--version"],
                                                        capture_output=True, text=True).stdout:
        pytest.skip("built without LIMEN_TEST_HOOKS")
    f = os.path.join(work, "hook.txt")
    write(f, "x")
    assert dh.error_name(dh.docs, bus, "Lookup", (f.encode(),), "(ay)") == NA
    # The permission store is not the frontend: harnesses start it with the same environment
    # and write to it from the test process, as to the reference's, which checks no caller.
    assert dh.error_name(dh.ps, bus, "SetPermission", ("t", True, "i", APP, ["yes"]), "(sbssas)") is None
    assert d.alive()


def test_file_transfer_rules(bus, work):
    dh.start(bus)
    f = os.path.join(work, "w.txt")
    write(f, "w")
    call = lambda m, a, s, **kw: bus.call(dh.FT_IFACE, m, a, s, dest=dh.DOCS_NAME, path=dh.DOCS_PATH, **kw)
    key = call("StartTransfer", ({"writable": GLib.Variant("b", True), "autostop": GLib.Variant("b", False)},),
               "(a{sv})")[0]
    ro = os.open(f, os.O_RDONLY)
    rw = os.open(f, os.O_RDWR)
    other = bus.new_connection()
    try:
        # A writable transfer needs writable fds; another peer cannot add to it.
        assert dh.error_name(call, "AddFiles", (key, [0], {}), "(saha{sv})", fds=[ro]) in (NA, IA)
        assert dh.error_name(call, "AddFiles", (key, [0], {}), "(saha{sv})", fds=[rw], conn=other) == NF
        call("AddFiles", (key, [0], {}), "(saha{sv})", fds=[rw])
        assert dh.error_name(call, "AddFiles", (key, [3], {}), "(saha{sv})", fds=[rw]) == IA
    finally:
        os.close(ro)
        os.close(rw)
    # A host receiver gets host paths; autostop off keeps the transfer until stopped.
    assert call("RetrieveFiles", (key, {}), "(sa{sv})", conn=other)[0] == [f]
    assert call("RetrieveFiles", (key, {}), "(sa{sv})")[0] == [f]
    assert dh.error_name(call, "StopTransfer", (key,), "(s)", conn=other) == NF
    call("StopTransfer", (key,), "(s)")
    assert dh.error_name(call, "RetrieveFiles", (key, {}), "(sa{sv})") == NF
    assert dh.error_name(call, "StartTransfer", ({"writable": GLib.Variant("s", "yes")},), "(a{sv})") == IA
    # The sender vanishing ends its transfers.
    conn = bus.new_connection()
    key2 = call("StartTransfer", ({},), "(a{sv})", conn=conn)[0]
    conn.close_sync(None)
    assert limentest.wait_until(
        lambda: dh.error_name(call, "RetrieveFiles", (key2, {}), "(sa{sv})") == NF, timeout=5)


def test_sigterm_with_requests_in_flight(bus, work):
    status, elapsed, _ = dh.sigterm_during_fd_flood(bus, work, peers=4, calls=300)
    assert status == 0 and elapsed < 1.0, (status, elapsed)
    assert not dh.is_mounted(dh.mountpoint(bus))


def test_kill9_during_atomic_saves_leaves_whole_files(bus, work):
    """A daemon killed while an app saves through the mount: the host file is one complete
    version or another, and no temporary file is left in the host directory."""
    d = dh.start(bus)
    f = os.path.join(work, "save.txt")
    versions = [(f"version {i} " * 2000) for i in range(200)]
    write(f, versions[0])
    doc = dh.add(bus, f)
    dh.docs(bus, "GrantPermissions", (doc, APP, ["read", "write"]), "(ssas)")
    view = f"{dh.mountpoint(bus)}/by-app/{APP}/{doc}"
    saver = subprocess.Popen([limentest.python_exe(), "-c", f'''
import os
vs = [("version %d " % i) * 2000 for i in range(200)]
for i in range(1, 1000000):
    tmp = {view!r} + "/.save.txt.%d" % i
    try:
        with open(tmp, "w") as t:
            t.write(vs[i % 200])
        os.rename(tmp, {view!r} + "/save.txt")
    except OSError:
        raise SystemExit(3)   # the daemon went away mid-save
'''], stderr=subprocess.DEVNULL)
    time.sleep(0.5)
    d.signal(signal.SIGKILL)
    assert saver.wait(20) == 3           # it really was interrupted
    d.stop()
    assert read(f) in versions
    # Killed between linking the new file under its hidden name and the rename, the daemon
    # leaves that one name (nothing else); the next daemon removes it on first serving the
    # document, before any save through it.
    left = sorted(os.listdir(work))
    assert left in (["save.txt"], sorted(["save.txt", f".limen-save-{doc}"])), left
    dh.start(bus)
    # The killed daemon's mount stays listed until the new one replaces it.
    assert limentest.wait_until(lambda: os.path.isdir(view), 10)
    assert os.listdir(work) == ["save.txt"]



def test_stale_save_name_removed_on_first_serve(bus, work):
    """What a daemon killed mid-save leaves (the document's .limen-save-DOCID) is removed
    when the next daemon first serves the document; other files are left alone."""
    f = os.path.join(work, "doc.txt")
    write(f, "content")
    d = dh.start(bus)
    doc = dh.add(bus, f)
    dh.docs(bus, "GrantPermissions", (doc, APP, ["read", "write"]), "(ssas)")
    assert d.stop() == 0
    write(os.path.join(work, f".limen-save-{doc}"), "half a save")
    write(os.path.join(work, ".limen-save-other"), "not ours to judge")
    dh.start(bus)
    assert read(f"{dh.mountpoint(bus)}/by-app/{APP}/{doc}/doc.txt") == "content"
    assert sorted(os.listdir(work)) == [".limen-save-other", "doc.txt"]

def test_add_named_full_and_persistent_flags(bus, work):
    d = dh.start(bus)
    dfd = os.open(work, os.O_PATH)
    try:
        doc, extra = dh.docs(bus, "AddNamedFull", (0, b"named.txt\0", dh.FLAG_PERSISTENT, APP, ["read", "write"]),
                             "(hayusas)", fds=[dfd])
        again, _ = dh.docs(bus, "AddNamedFull", (0, b"named.txt", dh.FLAG_REUSE, APP, ["read"]), "(hayusas)",
                           fds=[dfd])
        third, _ = dh.docs(bus, "AddNamedFull", (0, b"named.txt", dh.FLAG_REUSE, APP, ["read"]), "(hayusas)",
                           fds=[dfd])
        assert dh.error_name(dh.docs, bus, "AddNamedFull", (0, b"x", dh.FLAG_DIRECTORY, "", []), "(hayusas)",
                             fds=[dfd]) == IA
    finally:
        os.close(dfd)
    # The first was made without reuse_existing: a later reuse does not find it (as the
    # reference), the second is found by the third.
    assert again != doc and third == again
    assert bytes(extra["mountpoint"]).rstrip(b"\0").decode() == dh.mountpoint(bus)
    write(f"{dh.mountpoint(bus)}/by-app/{APP}/{doc}/named.txt", "through the app")
    assert read(os.path.join(work, "named.txt")) == "through the app"
    d.stop()
    bus.wait_for_name_gone(dh.DOCS_NAME)
    dh.start(bus)
    assert dh.docs(bus, "Info", (doc,), "(s)")[1] == {APP: ["read", "write"]}


def test_sandboxed_app_saves_through_its_view(bus, work):
    dh.start(bus)
    f = os.path.join(work, "edit.txt")
    write(f, "before")
    doc = dh.add(bus, f)
    dh.docs(bus, "GrantPermissions", (doc, "org.a.App", ["read", "write"]), "(ssas)")
    mnt = dh.mountpoint(bus)
    out = dh.run_in_sandbox(bus, "org.a.App", f'''
d = "/run/user/0/doc/{doc}"
out["read"] = try_io(lambda: open(d + "/edit.txt").read())
def save():
    with open(d + "/.edit.txt.tmp", "w") as t:
        t.write("after")
    os.rename(d + "/.edit.txt.tmp", d + "/edit.txt")
    return open(d + "/edit.txt").read()
out["save"] = try_io(save)
out["xattr"] = try_io(lambda: os.getxattr(d + "/edit.txt", "user.document-portal.host-path").decode())
out["escape"] = try_io(lambda: os.listdir(d + "/../.."))
''', extra_args=["--bind", f"{mnt}/by-app/org.a.App", "/run/user/0/doc"])
    assert out["read"] == ["ok", "before"]
    assert out["save"] == ["ok", "after"]
    assert out["xattr"] == ["ok", f]
    assert read(f) == "after" and os.listdir(work) == ["edit.txt"]
    # ".." from the view's root stays in the sandbox's own /run/user/0, never the mount's root.
    assert out["escape"][0] == "ok" and "by-app" not in out["escape"][1]


def test_user_xattrs_through_the_mount(bus):
    """As in the reference: a single-file document's file shows the host file's xattrs but
    keeps them (EPERM to set or remove, its temporary files too); a file inside an exported
    directory takes user.* xattrs; the host-path xattr and other namespaces never."""
    bus.start("limen-documents", "--verbose", wait_name="org.freedesktop.portal.Documents")
    docs = dict(dest="org.freedesktop.portal.Documents", path="/org/freedesktop/portal/documents")
    f = os.path.join(bus.home, "xattr.txt")
    with open(f, "w") as fh:
        fh.write("hi")
    os.setxattr(f, "user.from-host", b"h")
    fd = os.open(f, os.O_PATH)
    r = bus.call("org.freedesktop.portal.Documents", "AddFull", ([0], 0, "", []), "(ahusas)", fds=[fd], **docs)
    os.close(fd)
    p = f"{bus.runtime_dir}/doc/{r[0][0]}/xattr.txt"
    assert os.getxattr(p, "user.from-host") == b"h"
    tmp = f"{bus.runtime_dir}/doc/{r[0][0]}/.save.tmp"
    with open(tmp, "w") as fh:
        fh.write("t")
    for path in (p, tmp):
        for change in (lambda: os.setxattr(path, "user.limen", b"v"), lambda: os.removexattr(path, "user.from-host")):
            with pytest.raises(OSError) as e:
                change()
            assert e.value.errno == errno.EPERM
    os.unlink(tmp)
    assert os.getxattr(f, "user.from-host") == b"h"

    d = os.path.join(bus.home, "xattr-dir")
    os.mkdir(d)
    with open(os.path.join(d, "in.txt"), "w") as fh:
        fh.write("in")
    fd = os.open(d, os.O_PATH)
    r = bus.call("org.freedesktop.portal.Documents", "AddFull", ([0], 8, "", []), "(ahusas)", fds=[fd], **docs)
    os.close(fd)
    q = f"{bus.runtime_dir}/doc/{r[0][0]}/xattr-dir/in.txt"
    os.setxattr(q, "user.limen", b"v")
    assert os.getxattr(q, "user.limen") == b"v" and os.getxattr(os.path.join(d, "in.txt"), "user.limen") == b"v"
    os.removexattr(q, "user.limen")
    assert "user.limen" not in os.listxattr(q)
    # EPERM, as the reference answers a refused xattr (test_documents_reference.py).
    for path in (p, q):
        for name in ("user.document-portal.host-path", "trusted.x"):
            with pytest.raises(OSError) as e:
                os.setxattr(path, name, b"z")
            assert e.value.errno == errno.EPERM
        with pytest.raises(OSError) as e:
            os.removexattr(path, "user.document-portal.host-path")
        assert e.value.errno == errno.EPERM


def test_app_listing_follows_changes(bus, work):
    """by-app/APPID's listing is cached by the kernel across opens: every grant, revoke and
    delete must show in the next listing at once."""
    dh.start(bus)
    appdir = f"{dh.mountpoint(bus)}/by-app/{APP}"
    paths = []
    for i in range(3):
        paths.append(os.path.join(work, f"l{i}.txt"))
        with open(paths[-1], "w") as f:
            f.write("x")
    a = dh.add(bus, paths[0])
    dh.docs(bus, "GrantPermissions", (a, APP, ["read"]), "(ssas)")
    assert sorted(os.listdir(appdir)) == [a]
    assert sorted(os.listdir(appdir)) == [a]  # served from the kernel's copy
    b = dh.add(bus, paths[1])
    dh.docs(bus, "GrantPermissions", (b, APP, ["read"]), "(ssas)")
    assert sorted(os.listdir(appdir)) == sorted([a, b])
    c = dh.add_full(bus, [paths[2]], 0, APP, ["read"])[0][0]
    assert sorted(os.listdir(appdir)) == sorted([a, b, c])
    dh.docs(bus, "RevokePermissions", (a, APP, ["read"]), "(ssas)")
    assert sorted(os.listdir(appdir)) == sorted([b, c])
    dh.docs(bus, "Delete", (b,), "(s)")
    assert os.listdir(appdir) == [c]


def _call_async(conn, method, args, sig, fds=None):
    """Send a Documents call without waiting; returns a dict that gets "r" (value or GLib.Error) and "t"."""
    out = {}
    fl = None
    if fds:
        fl = Gio.UnixFDList.new()
        for fd in fds:
            fl.append(fd)

    def done(c, res):
        try:
            v, _ = c.call_with_unix_fd_list_finish(res)
            out["r"] = v.unpack()
        except GLib.Error as e:
            out["r"] = e
        out["t"] = time.monotonic()
    conn.call_with_unix_fd_list(dh.DOCS_NAME, dh.DOCS_PATH, dh.DOCS_IFACE, method, GLib.Variant(sig, args), None,
                                0, 20000, fl, None, done)
    return out


@pytest.mark.skipif("test hooks: compiled in" not in subprocess.run(
    [limentest.binary("limen-documents"), "--version"], capture_output=True, text=True).stdout,
    reason="built without LIMEN_TEST_HOOKS")
def test_identifying_a_new_caller_blocks_no_one(bus, tmp_path):
    """While the bus is asked who a new peer is (held here for 1.5 s by a test hook), the daemon
    serves peers it knows; the new peer's calls wait and then run in the order they were sent."""
    dh.start(bus, env={"LIMEN_TEST_IDENTIFY_DELAY_MS": "1500"})
    known = bus.new_connection()
    f = tmp_path / "ordered.txt"
    f.write_text("x")
    t0 = time.monotonic()
    assert dh.docs(bus, "List", ("",), "(s)", conn=known, timeout=20000) is not None   # identified now
    assert time.monotonic() - t0 >= 1.4

    newcomer = bus.new_connection()
    fd = os.open(f, os.O_PATH)
    try:
        t_sent = time.monotonic()
        added = _call_async(newcomer, "Add", (0, True, True), "(hbb)", fds=[fd])
        looked_up = _call_async(newcomer, "Lookup", (str(f).encode(),), "(ay)")
    finally:
        os.close(fd)
    # The known peer is answered at once, the newcomer's calls are still held.
    t = time.monotonic()
    dh.docs(bus, "List", ("",), "(s)", conn=known)
    assert time.monotonic() - t < 1.0
    limentest.wait_until(lambda: False, 0.05)
    assert "r" not in added and "r" not in looked_up
    assert limentest.wait_until(lambda: "r" in added and "r" in looked_up, 10)
    assert added["t"] - t_sent >= 1.4
    assert not isinstance(added["r"], GLib.Error), added["r"]
    assert not isinstance(looked_up["r"], GLib.Error), looked_up["r"]
    # Add ran before the Lookup sent after it, so the Lookup finds the new document.
    assert looked_up["r"][0] == added["r"][0] != ""
    # Once known, the newcomer is answered without waiting.
    t = time.monotonic()
    dh.docs(bus, "Info", (added["r"][0],), "(s)", conn=newcomer)
    assert time.monotonic() - t < 1.0


@pytest.mark.skipif("test hooks: compiled in" not in subprocess.run(
    [limentest.binary("limen-documents"), "--version"], capture_output=True, text=True).stdout,
    reason="built without LIMEN_TEST_HOOKS")
def test_sigterm_while_calls_are_held(bus, tmp_path):
    """SIGTERM while a new peer's calls wait for its identity: the daemon still exits at once and
    cleanly (status 0, also under ASan), the held calls end in an error, none succeeds."""
    d = dh.start(bus, env={"LIMEN_TEST_IDENTIFY_DELAY_MS": "3000"})
    f = tmp_path / "held.txt"
    f.write_text("x")
    newcomer = bus.new_connection()
    fd = os.open(f, os.O_PATH)
    try:
        added = _call_async(newcomer, "Add", (0, True, True), "(hbb)", fds=[fd])
        listed = _call_async(newcomer, "List", ("",), "(s)")
    finally:
        os.close(fd)
    limentest.wait_until(lambda: False, 0.3)
    assert "r" not in added and "r" not in listed
    t0 = time.monotonic()
    d.signal(signal.SIGTERM)
    status = d.wait(timeout=5)
    assert time.monotonic() - t0 < 1.0
    assert status == 0, d.output()
    assert limentest.wait_until(lambda: "r" in added and "r" in listed, 5)
    assert isinstance(added["r"], GLib.Error) and isinstance(listed["r"], GLib.Error), (added, listed)
    assert not dh.is_mounted(dh.mountpoint(bus))
