"""limen-documents' FUSE mount as a user of the host sees it: host-side changes to a
document's file, the mount taken away under the daemon, and the whole mount compared
with the reference document portal (xdg-document-portal) run side by side."""

import os
import signal
import subprocess

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
