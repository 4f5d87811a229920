"""limen-documents' FUSE mount as a user of the host sees it: host-side changes to a
document's file, the mount taken away under the daemon, and the whole mount compared
with the reference document portal (xdg-document-portal) run side by side."""

import os
import re
import signal
import subprocess
import time

import pytest

import documents_helpers as dh
from documents_helpers import read, write
import limentest

APP = "org.example.App"
HOOKS = "test hooks: compiled in" in subprocess.run(
    [limentest.binary("limen-documents"), "--version"], capture_output=True, text=True).stdout


@pytest.fixture
def work(bus):
    w = os.path.join(bus.root, "work")
    os.makedirs(w)
    return w


def replace_atomically(path, data):
    """What every editor does on save: write a temporary file, rename it over."""
    tmp = path + ".tmp~"
    write(tmp, data)
    os.rename(tmp, path)


def views(bus, doc, name):
    mnt = dh.mountpoint(bus)
    return [f"{mnt}/{doc}/{name}", f"{mnt}/by-app/{APP}/{doc}/{name}"]


def test_reads_see_a_host_side_atomic_save(bus, work):
    dh.start(bus)
    f = os.path.join(work, "notes.txt")
    write(f, "first version\n")
    doc = dh.add(bus, f)
    dh.docs(bus, "GrantPermissions", (doc, APP, ["read", "write"]), "(ssas)")
    paths = views(bus, doc, "notes.txt")
    for p in paths:                      # warm: entries, attributes and pages cached
        assert read(p) == "first version\n"
        assert read(p) == "first version\n"
    for i, text in enumerate(["second, longer version of the notes\n", "3rd\n", "4th, same\n", "5th, same\n"]):
        replace_atomically(f, text)
        for p in paths:
            assert read(p) == text, f"stale read through {p} after save {i}"
            with open(p) as fh:          # fstat on the open file agrees with what is read
                assert os.fstat(fh.fileno()).st_size == len(text)
    # Through the host and app views, the document is still the same one.
    assert dh.docs(bus, "Lookup", (f.encode(),), "(ay)")[0] == doc


def test_reads_see_a_host_side_rewrite_in_place(bus, work):
    dh.start(bus)
    f = os.path.join(work, "data.bin")
    write(f, "a" * 5000)
    doc = dh.add(bus, f)
    dh.docs(bus, "GrantPermissions", (doc, APP, ["read"]), "(ssas)")
    paths = views(bus, doc, "data.bin")
    for p in paths:
        assert read(p) == "a" * 5000
    ino = os.stat(f).st_ino
    for text in ["b" * 9000, "c" * 100, "d" * 100]:
        with open(f, "r+") as fh:        # same inode, new contents and size
            fh.truncate(0)
            fh.write(text)
        assert os.stat(f).st_ino == ino
        for p in paths:
            assert read(p) == text, f"stale read through {p}"


def test_unchanged_file_keeps_its_page_cache(bus, work):
    """Revalidation at open keeps the kernel's pages while the host file's identity, size
    and mtime are unchanged (warm reads never reach the daemon). Shown by a change that
    keeps all three (same length, mtime put back): the mount still serves the cached pages."""
    dh.start(bus)
    f = os.path.join(work, "same.txt")
    write(f, "cached contents\n")
    doc = dh.add(bus, f)
    p = f"{dh.mountpoint(bus)}/{doc}/same.txt"
    assert read(p) == "cached contents\n"
    assert read(p) == "cached contents\n"
    st = os.stat(f)
    with open(f, "r+") as fh:
        fh.write("CACHED CONTENTS\n")
    os.utime(f, ns=(st.st_atime_ns, st.st_mtime_ns))
    assert read(p) == "cached contents\n"
    # Any real change is seen at the next open.
    write(f, "cached contents, v2\n")
    assert read(p) == "cached contents, v2\n"


def test_mount_taken_away_ends_the_daemon(bus, work):
    """fusermount3 -u under a running daemon: it notices, says so, and exits with 0; the
    FUSE loop's end status is "ok" (test hooks); a new daemon serves the documents again."""
    status = os.path.join(work, "fuse-status")
    d = dh.start(bus, env={"TEST_DOCUMENT_PORTAL_FUSE_STATUS": status})
    f = os.path.join(work, "kept.txt")
    write(f, "kept")
    doc = dh.add(bus, f)
    mnt = dh.mountpoint(bus)
    assert read(f"{mnt}/{doc}/kept.txt") == "kept"
    subprocess.run(["fusermount3", "-u", mnt], check=True)
    assert d.wait(timeout=10) == 0
    assert "document filesystem at %s was unmounted" % mnt in d.output()
    if HOOKS:
        assert read(status) == "ok"
    bus.wait_for_name_gone(dh.DOCS_NAME)
    dh.start(bus)
    assert read(f"{mnt}/{doc}/kept.txt") == "kept"


@pytest.mark.skipif(not HOOKS, reason="built without LIMEN_TEST_HOOKS")
@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT])
def test_fuse_status_after_a_normal_stop(bus, work, sig):
    status = os.path.join(work, "fuse-status")
    d = dh.start(bus, env={"TEST_DOCUMENT_PORTAL_FUSE_STATUS": status})
    d.signal(sig)
    assert d.wait(timeout=10) == 0
    assert read(status) == "ok"
    assert not dh.is_mounted(dh.mountpoint(bus))


def test_by_app_listing_follows_changes(bus, work):
    """by-app/ is kept by the kernel between opens; every grant, revoke and delete shows in
    the next listing after its D-Bus reply."""
    dh.start(bus)
    by_app = f"{dh.mountpoint(bus)}/by-app"
    f = os.path.join(work, "shared.txt")
    write(f, "x")
    doc = dh.add(bus, f)
    assert os.listdir(by_app) == []
    dh.docs(bus, "GrantPermissions", (doc, APP, ["read"]), "(ssas)")
    for _ in range(3):                       # a listing the kernel may keep
        assert os.listdir(by_app) == [APP]
    dh.docs(bus, "GrantPermissions", (doc, "org.example.Second", ["read"]), "(ssas)")
    assert sorted(os.listdir(by_app)) == [APP, "org.example.Second"]
    assert sorted(os.listdir(by_app)) == [APP, "org.example.Second"]
    dh.docs(bus, "RevokePermissions", (doc, "org.example.Second", ["read"]), "(ssas)")
    assert os.listdir(by_app) == [APP]
    dh.docs(bus, "Delete", (doc,), "(s)")
    assert os.listdir(by_app) == []


def test_document_listing_follows_changes(bus, work):
    """A document's listing may be kept by the kernel: it still shows every save in
    progress through the mount and every rename or removal of the file on the host."""
    dh.start(bus)
    f = os.path.join(work, "list.txt")
    write(f, "x")
    doc = dh.add(bus, f)
    dh.docs(bus, "GrantPermissions", (doc, APP, ["read", "write"]), "(ssas)")
    for d in [f"{dh.mountpoint(bus)}/{doc}", f"{dh.mountpoint(bus)}/by-app/{APP}/{doc}"]:
        for _ in range(3):
            assert os.listdir(d) == ["list.txt"]
        fd = os.open(f"{d}/.list.txt.tmp", os.O_CREAT | os.O_WRONLY, 0o644)
        assert sorted(os.listdir(d)) == [".list.txt.tmp", "list.txt"]
        os.close(fd)
        os.unlink(f"{d}/.list.txt.tmp")
        assert os.listdir(d) == ["list.txt"]
    d = f"{dh.mountpoint(bus)}/{doc}"
    os.rename(f, os.path.join(work, "renamed.txt"))        # the document follows its file
    assert os.listdir(d) == ["renamed.txt"]
    assert os.listdir(d) == ["renamed.txt"]
    os.unlink(os.path.join(work, "renamed.txt"))
    assert os.listdir(d) == []


def test_reads_see_host_side_saves_inside_an_exported_directory(bus, work):
    dh.start(bus)
    folder = os.path.join(work, "project")
    os.makedirs(os.path.join(folder, "sub"))
    f = os.path.join(folder, "sub", "main.c")
    write(f, "int main;\n")
    fd = os.open(folder, os.O_PATH)
    try:
        doc = dh.docs(bus, "AddFull", ([0], dh.FLAG_DIRECTORY, APP, ["read", "write"]), "(ahusas)", fds=[fd])[0][0]
    finally:
        os.close(fd)
    paths = [f"{dh.mountpoint(bus)}/{doc}/project/sub/main.c",
             f"{dh.mountpoint(bus)}/by-app/{APP}/{doc}/project/sub/main.c"]
    for p in paths:
        assert read(p) == "int main;\n"
        assert read(p) == "int main;\n"
    for i, text in enumerate(["int main (void);\n", "x\n", "y\n"]):
        replace_atomically(f, text)
        for p in paths:
            assert read(p) == text, f"stale read through {p} after save {i}"
    with open(paths[1]) as held:                   # an open file keeps what it opened
        replace_atomically(f, "z\n")
        assert held.read() == "y\n"
    for p in paths:
        assert read(p) == "z\n"


TRACING = "/sys/kernel/tracing"


class FuseRequests:
    """The FUSE requests sent to the mount at @path while the block runs, counted by the
    kernel's fuse_request_send event in a tracing instance of the test's own (the machine's
    own tracing is left alone)."""

    def __init__(self, path):
        self.conn = os.minor(os.stat(path).st_dev)
        self.inst = f"{TRACING}/instances/limen-test-{os.getpid()}"

    def __enter__(self):
        try:
            os.mkdir(self.inst)
        except OSError as e:
            pytest.skip(f"no tracing instance of our own: {e}")
        with open(f"{self.inst}/events/fuse/fuse_request_send/enable", "w") as f:
            f.write("1")
        return self

    def __exit__(self, *exc):
        with open(f"{self.inst}/events/fuse/fuse_request_send/enable", "w") as f:
            f.write("0")
        with open(f"{self.inst}/trace") as f:
            self.lines = f.read().splitlines()
        os.rmdir(self.inst)

    def count(self, comm):
        """Requests of programs named @comm, by opcode."""
        got = {}
        for line in self.lines:
            m = re.match(r"^\s*(.+)-\d+\s+\[\d+\].*fuse_request_send: connection (\d+) req \d+ opcode \d+ \((\w+)\)",
                         line)
            if m and m.group(1) == comm and int(m.group(2)) == self.conn:
                got[m.group(3)] = got.get(m.group(3), 0) + 1
        return got


@pytest.mark.skipif(os.geteuid() != 0 or not os.path.isdir(f"{TRACING}/events/fuse"),
                    reason="needs root and the kernel's fuse trace events")
def test_detailed_listing_asks_only_the_gate_again(bus, work):
    """`ls -l by-app/APP` (what a file manager does) once the kernel's short timeouts have
    passed: each document costs the walks through the app's gate entry, which the kernel
    never keeps (one LOOKUP per walk, and `ls -l` walks four times: statx and three
    getxattr), and the getxattr calls themselves; its own entry and attributes stay in the
    kernel, which a grant, revoke or delete makes it drop."""
    n = 16   # dbus-daemon takes at most 16 fds in one message
    dh.start(bus)
    files = []
    for i in range(n):
        files.append(os.path.join(work, f"f{i}.txt"))
        write(files[-1], "x")
    dh.add_full(bus, files, 0, APP, ["read"])
    app_dir = f"{dh.mountpoint(bus)}/by-app/{APP}"
    subprocess.run(["ls", "-l", app_dir], check=True, stdout=subprocess.DEVNULL)
    time.sleep(6)   # past the 5 s the kernel keeps the attributes of the mount's own folders
    with FuseRequests(dh.mountpoint(bus)) as requests:
        out = subprocess.run(["ls", "-l", app_dir], check=True, capture_output=True, text=True).stdout
    counts = requests.count("ls")
    assert len(out.splitlines()) == n + 1, out
    assert counts.get("FUSE_GETXATTR", 0) >= n, counts     # the trace saw the listing
    assert counts.get("FUSE_GETATTR", 0) <= 2, counts
    assert counts.get("FUSE_LOOKUP", 0) <= 4 * n + 8, counts   # and a few for the folder itself
