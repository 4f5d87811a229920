"""Hostile battery for limen-documents (issue 9): each case is tried as an attacker
would, its outcome recorded as refused(<error>) / accepted / crashed / hung, checked
against the expected one, and the daemon must still serve afterwards."""

import os
import socket
import threading
import time

import pytest
from gi.repository import Gio, GLib

import documents_helpers as dh
import limentest

NA = "org.freedesktop.portal.Error.NotAllowed"
NF = "org.freedesktop.portal.Error.NotFound"
IA = "org.freedesktop.portal.Error.InvalidArgument"
APP = "org.example.App"
NOARG = GLib.Variant("v", GLib.Variant("b", True))


def outcome(fn):
    """refused:<name> | accepted | hung"""
    try:
        fn()
        return "accepted"
    except GLib.Error as e:
        if e.matches(Gio.io_error_quark(), Gio.IOErrorEnum.TIMED_OUT):
            return "hung"
        return "refused:" + (Gio.DBusError.get_remote_error(e) or e.message)


def still_serving(bus, daemon):
    assert daemon.alive(), "crashed:\n" + daemon.output()[-2000:]
    assert dh.docs(bus, "GetMountPoint", timeout=3000)[0]
    assert dh.ps(bus, "List", ("x",), "(s)", timeout=3000) == ([],)


@pytest.fixture
def env(bus):
    d = dh.start(bus)
    work = os.path.join(bus.root, "work")
    os.makedirs(work)
    f = os.path.join(work, "f.txt")
    with open(f, "w") as fh:
        fh.write("f")
    doc = dh.add(bus, f)
    yield bus, d, work, f, doc
    still_serving(bus, d)


# ---- bad D-Bus input from the host -------------------------------------------------------

BAD_DOC_IDS = ["", "..", "../x", "a/b", "x" * 65, "by-app", "é", "a b", "\t", "0" * 64 + "1"]


@pytest.mark.parametrize("doc_id", BAD_DOC_IDS)
@pytest.mark.parametrize("method", ["Info", "Delete"])
def test_bad_doc_ids(env, method, doc_id):
    bus, d, *_ = env
    r = outcome(lambda: dh.docs(bus, method, (doc_id,), "(s)", timeout=3000))
    assert r in ("refused:" + IA, "refused:" + NF), r


BAD_APP_IDS = ["", "a", "a..b", "x.-y/z", "x" * 300, "org.example.App/../x", "org.my-x.a", "org.a.", ".org.a"]


@pytest.mark.parametrize("app_id", BAD_APP_IDS)
@pytest.mark.parametrize("method", ["GrantPermissions", "RevokePermissions"])
def test_bad_app_ids(env, method, app_id):
    bus, d, work, f, doc = env
    r = outcome(lambda: dh.docs(bus, method, (doc, app_id, ["read"]), "(ssas)", timeout=3000))
    assert r == "refused:" + IA, r


@pytest.mark.parametrize("perms", [["fly"], ["read", ""], ["READ"], ["read"] * 1000 + ["x"]])
def test_bad_permissions(env, perms):
    bus, d, work, f, doc = env
    assert outcome(lambda: dh.docs(bus, "GrantPermissions", (doc, APP, perms), "(ssas)")) == "refused:" + IA


@pytest.mark.parametrize("name", [b"", b".", b"..", b"a/b", b"../../etc/passwd", b"x" * 300, b"a\0b"])
def test_bad_names(env, name):
    bus, d, work, *_ = env
    fd = os.open(work, os.O_PATH)
    try:
        r = outcome(lambda: dh.docs(bus, "AddNamed", (0, name, True, True), "(haybb)", fds=[fd]))
    finally:
        os.close(fd)
    assert r == "refused:" + IA, r


@pytest.mark.parametrize("index", [1, 7, -1, 2 ** 31 - 1])
def test_fd_index_out_of_range(env, index):
    bus, d, work, f, doc = env
    fd = os.open(f, os.O_PATH)
    try:
        r = outcome(lambda: dh.docs(bus, "Add", (index, True, True), "(hbb)", fds=[fd], timeout=3000))
    finally:
        os.close(fd)
    assert r == "refused:" + IA, r


@pytest.mark.parametrize("method,args,sig", [
    ("Add", (0, True, True), "(hbb)"),
    ("AddNamed", (0, b"x", True, True), "(haybb)"),
    ("AddFull", ([0], 0, "", []), "(ahusas)"),
    ("AddNamedFull", (0, b"x", 0, "", []), "(hayusas)"),
])
def test_no_fds_at_all(env, method, args, sig):
    bus, *_ = env
    assert outcome(lambda: dh.docs(bus, method, args, sig, timeout=3000)) == "refused:" + IA


def special_fds(work):
    a, b = socket.socketpair()
    r, w = os.pipe()
    out = {"socket": a.detach(), "pipe": r, "devnull": os.open("/dev/null", os.O_RDONLY),
           "proc": os.open("/proc/self/status", os.O_RDONLY),
           "deleted": None}
    p = os.path.join(work, "gone")
    with open(p, "w") as fh:
        fh.write("x")
    out["deleted"] = os.open(p, os.O_RDONLY)
    os.unlink(p)
    b.close()
    os.close(w)
    return out


@pytest.mark.parametrize("kind", ["socket", "pipe", "devnull", "proc", "deleted"])
def test_special_fds(env, kind):
    bus, d, work, *_ = env
    fds = special_fds(work)
    try:
        r = outcome(lambda: dh.docs(bus, "Add", (0, True, True), "(hbb)", fds=[fds[kind]], timeout=3000))
    finally:
        for fd in fds.values():
            os.close(fd)
    assert r in ("refused:" + IA, "refused:" + NA), r


KERNEL_FILES = ["/proc/self/status", "/proc/version", "/sys/kernel/mm/transparent_hugepage/enabled",
                "/sys/fs/cgroup/cgroup.controllers", "/sys/fs/cgroup/memory/memory.usage_in_bytes"]


@pytest.mark.parametrize("path", KERNEL_FILES)
def test_kernel_filesystem_files(env, path):
    """A file of /proc or /sys is refused as such (it would hand out a process's view of
    itself), whichever device number its filesystem has."""
    bus, *_ = env
    if not os.path.exists(path):
        pytest.skip(f"{path} is not on this machine")
    fd = os.open(path, os.O_RDONLY)
    try:
        r = outcome(lambda: dh.docs(bus, "Add", (0, False, True), "(hbb)", fds=[fd], timeout=3000))
    finally:
        os.close(fd)
    assert r == "refused:" + NA, r


def test_file_on_tmpfs_is_exported(env):
    """tmpfs (like btrfs, overlayfs, NFS) has an anonymous device number, as /proc and /sys
    have: its files are still documents, readable through the mount."""
    bus, *_ = env
    if not os.path.isdir("/dev/shm"):
        pytest.skip("no /dev/shm")
    path = os.path.join("/dev/shm", f"limen-hostile-{os.getpid()}")
    with open(path, "w") as fh:
        fh.write("on tmpfs")
    try:
        assert os.major(os.stat(path).st_dev) == 0
        doc = dh.add(bus, path)
        with open(os.path.join(dh.mountpoint(bus), doc, os.path.basename(path))) as fh:
            assert fh.read() == "on tmpfs"
    finally:
        os.unlink(path)


def test_exporting_the_mount_itself(env):
    bus, d, work, f, doc = env
    for target in (dh.mountpoint(bus), f"{dh.mountpoint(bus)}/{doc}", f"{dh.mountpoint(bus)}/by-app"):
        fd = os.open(target, os.O_PATH)
        try:
            r = outcome(lambda: dh.docs(bus, "AddFull", ([0], dh.FLAG_DIRECTORY, "", []), "(ahusas)", fds=[fd]))
        finally:
            os.close(fd)
        assert r == "refused:" + NA, (target, r)
    # A document's own file may only name that document again (reuse), never a new one.
    fd = os.open(f"{dh.mountpoint(bus)}/{doc}/f.txt", os.O_PATH)
    try:
        assert dh.docs(bus, "Add", (0, True, True), "(hbb)", fds=[fd])[0] == doc
        assert outcome(lambda: dh.docs(bus, "Add", (0, False, True), "(hbb)", fds=[fd])) == "refused:" + NA
    finally:
        os.close(fd)


@pytest.mark.parametrize("table", ["../../../x", "a/b", "", "..", "/", "x" * 129, "\x01", "a\\b/..", "./x", "a/"])
@pytest.mark.parametrize("method", ["Set", "SetValue", "SetPermission", "Lookup"])
def test_permission_store_bad_tables(env, table, method):
    bus, d, work, *_ = env
    calls = {
        "Set": (("sbsa{sas}v"), (table, True, "id", {APP: ["yes"]}, NOARG)),
        "SetValue": ("sbsv", (table, True, "id", NOARG)),
        "SetPermission": ("sbssas", (table, True, "id", APP, ["yes"])),
        "Lookup": ("ss", (table, "id")),
    }
    sig, args = calls[method]
    r = outcome(lambda: dh.ps(bus, method, args, f"({sig})", timeout=3000))
    assert r == "refused:" + IA, r
    assert not os.path.exists(os.path.join(bus.root, "x")) and not os.path.exists("/x")


def test_permission_store_oversized_input(env):
    bus, *_ = env
    many_perms = ["p"] * 300
    assert outcome(lambda: dh.ps(bus, "SetPermission", ("t", True, "id", APP, many_perms), "(sbssas)")) == \
        "refused:" + IA
    assert outcome(lambda: dh.ps(bus, "SetPermission", ("t", True, "id", "a" * 2000, ["yes"]), "(sbssas)")) == \
        "refused:" + IA
    assert outcome(lambda: dh.ps(bus, "SetPermission", ("t", True, "id", APP, ["y" * 300]), "(sbssas)")) == \
        "refused:" + IA
    assert outcome(lambda: dh.ps(bus, "List", ("t",), "(s)")) == "accepted"


# ---- identity claims from a sandbox ------------------------------------------------------

BAD_IDENTITIES = {
    "symlink": (False, ["--symlink", "/etc/hostname", "/.flatpak-info"]),
    "dangling-symlink": (False, ["--symlink", "/nonexistent", "/.flatpak-info"]),
    "directory": (False, ["--dir", "/.flatpak-info"]),
    "no-application-group": ("[Instance]\ninstance-id=1\n", []),
    "empty-name": ("[Application]\nname=\n", []),
    "slash-name": ("[Application]\nname=org.example/../App\n", []),
    "dotdot-name": ("[Application]\nname=..\n", []),
    "one-element": ("[Application]\nname=App\n", []),
    "garbage": ("\x00\x01\x02garbage", []),
}


@pytest.mark.parametrize("kind", sorted(BAD_IDENTITIES))
def test_unidentifiable_callers_are_refused(env, kind):
    bus, d, work, f, doc = env
    info, extra = BAD_IDENTITIES[kind]
    r = limentest.run_sandboxed(bus, APP, dh.SANDBOX_PRELUDE + f'''
out["add"] = call("Add", "(hbb)", (0, True, True), [os.open("/usr/bin/env", os.O_PATH)])
out["lookup"] = call("Lookup", "(ay)", ({f!r}.encode(),))
out["grant"] = call("GrantPermissions", "(ssas)", ({doc!r}, "org.example.App", ["read"]))
out["ps_set"] = ps("SetPermission", "(sbssas)", ("devices", True, "camera", "org.example.App", ["yes"]))
out["ps_lookup"] = ps("Lookup", "(ss)", ("devices", "camera"))
''' + dh.SANDBOX_EPILOGUE, flatpak_info=info, extra_args=extra)
    import json
    assert r.returncode == 0, r.stderr
    out = json.loads(r.stdout.strip().splitlines()[-1])
    for k, v in out.items():
        assert v == ["error", NA], (kind, k, v)
    assert dh.docs(bus, "Info", (doc,), "(s)")[1] == {}


# ---- faults ------------------------------------------------------------------------------

def test_clients_vanishing_mid_call(env):
    bus, d, work, f, doc = env
    for i in range(20):
        conn = bus.new_connection()
        fd = os.open(f, os.O_PATH)
        fl = Gio.UnixFDList.new()
        fl.append(fd)
        conn.call_with_unix_fd_list(dh.DOCS_NAME, dh.DOCS_PATH, dh.DOCS_IFACE, "Add",
                                    GLib.Variant("(hbb)", (0, False, False)), None, 0, 5000, fl, None, None)
        conn.flush_sync(None)
        conn.close_sync(None)
        os.close(fd)
    still_serving(bus, d)


def test_200_concurrent_requests_from_20_connections(env):
    bus, d, work, f, doc = env
    conns = [bus.new_connection() for _ in range(20)]
    done = []
    lock = threading.Lock()
    ctx = GLib.MainContext.default()

    def cb(conn, res, _):
        try:
            conn.call_finish(res)
            with lock:
                done.append(True)
        except GLib.Error:
            with lock:
                done.append(False)
    t0 = time.monotonic()
    for i in range(200):
        c = conns[i % 20]
        if i % 2:
            c.call(dh.DOCS_NAME, dh.DOCS_PATH, dh.DOCS_IFACE, "Info", GLib.Variant("(s)", (doc,)), None, 0, 5000,
                   None, cb, None)
        else:
            c.call(dh.PS_NAME, dh.PS_PATH, dh.PS_IFACE, "SetPermission",
                   GLib.Variant("(sbssas)", ("load", True, f"id{i}", APP, ["yes"])), None, 0, 5000, None, cb, None)
    while len(done) < 200 and time.monotonic() - t0 < 10:
        ctx.iteration(True)
    elapsed = time.monotonic() - t0
    assert len(done) == 200 and all(done)
    print(f"200 requests from 20 connections answered in {elapsed * 1000:.0f} ms")
    assert len(dh.ps(bus, "List", ("load",), "(s)")[0]) == 100


@pytest.mark.parametrize("kind", ["symlink", "directory", "slash-name"])
def test_unidentifiable_process_gets_nothing_from_the_mount(env, kind):
    """FUSE requests are identified by pid too: a process with a bad identity claim sees no view."""
    bus, d, work, f, doc = env
    dh.docs(bus, "GrantPermissions", (doc, APP, ["read"]), "(ssas)")
    mnt = dh.mountpoint(bus)
    info, extra = BAD_IDENTITIES[kind]
    r = limentest.run_sandboxed(bus, APP, dh.SANDBOX_PRELUDE + f'''
out["app_view"] = try_io(lambda: open("{mnt}/by-app/{APP}/{doc}/f.txt").read())
out["host_view"] = try_io(lambda: open("{mnt}/{doc}/f.txt").read())
out["root"] = try_io(lambda: os.listdir("{mnt}"))
''' + dh.SANDBOX_EPILOGUE, flatpak_info=info, extra_args=extra + ["--bind", mnt, mnt])
    import json
    assert r.returncode == 0, r.stderr
    out = json.loads(r.stdout.strip().splitlines()[-1])
    for k, v in out.items():
        assert v[0] == "errno" and v[1] in ("ENOENT", "EACCES"), (kind, k, v)
