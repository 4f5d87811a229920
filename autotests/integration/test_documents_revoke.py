"""limen-documents: revoking a right or deleting a document takes effect at once, also where
the kernel keeps what a path walk found (a Flatpak app's view is a bind mount of
by-app/APPID, so its walks never ask the daemon who they are), and also for writes,
which bypass the kernel's page cache when a handle is write-only."""

import os
import threading
import time

import documents_helpers as dh
from documents_helpers import read, write
import limentest
import pytest

APP = "org.example.App"


@pytest.fixture
def env(bus):
    work = os.path.join(bus.root, "work")
    os.makedirs(work)
    dh.start(bus)
    f = os.path.join(work, "r.txt")
    write(f, "0123456789" * 1000)
    doc = dh.add(bus, f)
    dh.docs(bus, "GrantPermissions", (doc, APP, ["read", "write"]), "(ssas)")
    return bus, work, f, doc


# Steps of the sandboxed app: open and read its document through its own view (the kernel
# then holds the entries of DOCID and NAME), say "ready N", wait for "go N", open again.
SANDBOX_STEPS = r'''
import time
def step(n):
    open(f"{sync}/ready{n}", "w").close()
    deadline = time.monotonic() + 20
    while not os.path.exists(f"{sync}/go{n}"):
        if time.monotonic() > deadline:
            raise SystemExit(f"no go{n}")
        time.sleep(0.005)
def read_doc():
    with open(path) as f:
        return f.read(10)
def open_only():
    os.close(os.open(path, os.O_RDONLY))
out["before"] = try_io(read_doc)
out["before_again"] = try_io(read_doc)      # every entry of the walk is now in the kernel
step(1)                                      # the host revokes "read"
out["open_after_revoke"] = try_io(open_only)
out["after_revoke"] = try_io(read_doc)
step(2)                                      # the host grants "read" again
out["after_grant"] = try_io(read_doc)
step(3)                                      # the host deletes the document
out["open_after_delete"] = try_io(open_only)
out["after_delete"] = try_io(read_doc)
'''


def host_steps(bus, sync, doc, steps, failures):
    """The host's side of SANDBOX_STEPS: each step's change, then "go"."""
    try:
        for n, change in enumerate(steps, 1):
            assert limentest.wait_until(lambda: os.path.exists(f"{sync}/ready{n}"), timeout=20), f"no ready{n}"
            change()
            open(f"{sync}/go{n}", "w").close()
    except Exception as e:   # reported by the test's thread
        failures.append(e)


def test_revoke_and_delete_hit_the_very_next_open_of_a_flatpak_view(env):
    """The app's walks through its bind-mounted view reach no gate lookup and come from the
    kernel's cached entries; the revoke, the grant and the delete must each show on the
    app's very next open, with no wait in between."""
    bus, work, f, doc = env
    sync = os.path.join(work, "sync")
    os.makedirs(sync)
    mnt = dh.mountpoint(bus)
    failures = []
    steps = [lambda: dh.docs(bus, "RevokePermissions", (doc, APP, ["read"]), "(ssas)"),
             lambda: dh.docs(bus, "GrantPermissions", (doc, APP, ["read"]), "(ssas)"),
             lambda: dh.docs(bus, "Delete", (doc,), "(s)")]
    host = threading.Thread(target=host_steps, args=(bus, sync, doc, steps, failures))
    host.start()
    try:
        out = dh.run_in_sandbox(bus, APP, f"sync = {sync!r}\npath = '/run/user/0/doc/{doc}/r.txt'\n" + SANDBOX_STEPS,
                                binds=(sync,), extra_args=["--bind", f"{mnt}/by-app/{APP}", "/run/user/0/doc"])
    finally:
        host.join()
    assert not failures, failures
    assert out["before"] == ["ok", "0123456789"] and out["before_again"] == out["before"]
    for k in ("open_after_revoke", "after_revoke", "open_after_delete", "after_delete"):
        assert out[k][0] == "errno" and out[k][1] in ("EACCES", "ENOENT"), (k, out)
    assert out["after_grant"] == ["ok", "0123456789"], out


def test_revoke_hits_the_very_next_open_of_a_host_walk(env):
    """The host walks by-app/APP/DOCID/NAME with DOCID and NAME held by the kernel."""
    bus, work, f, doc = env
    p = f"{dh.mountpoint(bus)}/by-app/{APP}/{doc}/r.txt"
    for _ in range(3):
        assert read(p).startswith("0123")
    dh.docs(bus, "RevokePermissions", (doc, APP, ["write"]), "(ssas)")
    with pytest.raises(PermissionError):
        os.open(p, os.O_WRONLY)
    assert read(p).startswith("0123")
    dh.docs(bus, "RevokePermissions", (doc, APP, ["read"]), "(ssas)")
    with pytest.raises((PermissionError, FileNotFoundError)):
        os.open(p, os.O_RDONLY)


@pytest.mark.parametrize("flags", [os.O_WRONLY, os.O_RDWR], ids=["write-only", "read-write"])
@pytest.mark.parametrize("how", ["revoke", "delete"])
def test_no_write_reaches_the_host_after_revocation(env, flags, how):
    """Nothing is held back for later: each write is on the host when it returns, and after a
    revoke or a delete the very next write fails and changes nothing on the host (a write-only
    handle bypasses the page cache, a read-write one writes through it)."""
    bus, work, f, doc = env
    fd = os.open(f"{dh.mountpoint(bus)}/by-app/{APP}/{doc}/r.txt", flags)
    try:
        for i in range(64):
            assert os.pwrite(fd, b"W" * 4096, i * 4096) == 4096
        with open(f, "rb") as h:
            assert h.read() == b"W" * 4096 * 64    # on the host before any close or fsync
        if how == "revoke":
            dh.docs(bus, "RevokePermissions", (doc, APP, ["write"]), "(ssas)")
        else:
            dh.docs(bus, "Delete", (doc,), "(s)")
        with pytest.raises(PermissionError):
            os.pwrite(fd, b"X" * 4096, 0)
        with pytest.raises(PermissionError):
            os.write(fd, b"Y" * (1 << 20))
    finally:
        os.close(fd)
    time.sleep(0.2)
    with open(f, "rb") as h:
        assert h.read() == b"W" * 4096 * 64


def test_write_only_handles_keep_readers_coherent(env):
    """A write-only handle writes past the page cache: a reader that holds the file's pages
    (same view or another) sees the new bytes on its next read, and the size grows for it."""
    bus, work, f, doc = env
    mnt = dh.mountpoint(bus)
    dh.docs(bus, "GrantPermissions", (doc, "org.example.Other", ["read"]), "(ssas)")
    app_path = f"{mnt}/by-app/{APP}/{doc}/r.txt"
    other_path = f"{mnt}/by-app/org.example.Other/{doc}/r.txt"
    r1 = os.open(app_path, os.O_RDONLY)
    r2 = os.open(other_path, os.O_RDONLY)
    w = os.open(app_path, os.O_WRONLY)
    try:
        assert os.pread(r1, 10, 4096) == b"6789012345"   # cached pages in both readers
        assert os.pread(r2, 10, 4096) == b"6789012345"
        assert os.pwrite(w, b"NEW", 4096) == 3
        assert os.pread(r1, 10, 4096) == b"NEW9012345"
        assert os.pwrite(w, b"TAIL", 10000) == 4
        assert os.pread(r1, 8, 9998) == b"89TAIL"
        assert os.fstat(w).st_size == 10004
    finally:
        for fd in (r1, r2, w):
            os.close(fd)
    assert read(other_path)[4096:4099] == "NEW"
    assert read(f).endswith("89TAIL")
    # A new read of the file after the writes sees them all, through either view.
    assert read(app_path) == read(f) == read(other_path)
