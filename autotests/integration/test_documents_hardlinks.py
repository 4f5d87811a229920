"""A host file and its host hard link inside an exported folder are one inode through the
mount, as in the reference's test-document-fuse.py (check_directory_doc_perms), while many
workers export, look through and delete folder documents at once, each view again and
again with the folder's contents made anew on the host each time.

Each new pass finds the kernel's entry for `dir` leading to the last pass's (deleted)
folder; the daemon answers ESTALE and queued an invalidation of `dir`. Sent late (the
invalidation thread runs behind), it used to drop the entry the kernel had just looked up
again, and every file below it with it: the next stat of one name got a new node, and the
two names of one file showed two inode numbers (the reference's stress run failed so)."""

import os
import stat
import threading
import traceback

import documents_helpers as dh
from documents_helpers import read, write

APPS = ["org.example.App", "org.example.Other"]
WORKERS = 8
ROUNDS = 6


def check_view(p, real_dir, where, failures):
    """One pass of the reference's check_directory_doc_perms over the view at @p: files
    made on the host, looked at through the mount, then deleted on the host again."""
    os.listdir(p)
    os.mkdir(real_dir)
    write(real_dir + "/realfile", "real1")
    write(real_dir + "/readonly", "readonly")
    os.mkdir(real_dir + "/subdir")
    os.link(real_dir + "/realfile", real_dir + "/subdir/hardlink")
    d = p + "/dir"
    assert os.listdir(p) == ["dir"]
    assert stat.S_ISDIR(os.lstat(d).st_mode)
    assert sorted(os.listdir(d)) == ["readonly", "realfile", "subdir"]
    first = os.lstat(d + "/realfile").st_ino
    assert stat.S_ISDIR(os.lstat(d + "/subdir").st_mode)
    assert os.listdir(d + "/subdir") == ["hardlink"]
    assert read(d + "/realfile") == "real1"
    assert read(d + "/readonly") == "readonly"
    assert read(d + "/subdir/hardlink") == "real1"
    a, b = os.lstat(d + "/realfile").st_ino, os.lstat(d + "/subdir/hardlink").st_ino
    # Both names are held by the kernel (nothing was changed on the host since): they agree.
    if a != b:
        again = (os.lstat(d + "/realfile").st_ino, os.lstat(d + "/subdir/hardlink").st_ino)
        host = (os.lstat(real_dir + "/realfile").st_ino, os.lstat(real_dir + "/subdir/hardlink").st_ino)
        failures.append(f"{where}: realfile {a}, hardlink {b} (again {again}, host {host})")
    names = [d + "/realfile", d + "/subdir/hardlink"]
    for held, other in (names, names[::-1]):
        # An open file keeps its inode in the kernel, so no FORGET can come between:
        # the other name must lead to the very same node.
        with open(held) as f:
            a = os.fstat(f.fileno()).st_ino
            b = os.lstat(other).st_ino
        if a != b:
            failures.append(f"{where}: {held} open {a}, {other} {b}")
    # Nothing of this pass was changed on the host since: the kernel had no reason to
    # forget the file, and its number stays the one it had when first looked up.
    last = os.lstat(d + "/realfile").st_ino
    if last != first:
        failures.append(f"{where}: realfile was {first}, then {last}")
    for n in ("realfile", "readonly", "subdir/hardlink"):
        os.unlink(f"{real_dir}/{n}")
    os.rmdir(real_dir + "/subdir")
    os.rmdir(real_dir)


def one_round(bus, calls, base, mnt, worker, rnd, failures):
    folder = os.path.join(base, f"w{worker}-r{rnd}")
    os.makedirs(folder)
    fd = os.open(folder, os.O_PATH)
    try:
        with calls:
            doc = dh.docs(bus, "AddFull", ([0], dh.FLAG_DIRECTORY | dh.FLAG_PERSISTENT, APPS[0],
                                           ["read", "write"]), "(ahusas)", fds=[fd])[0][0]
            dh.docs(bus, "GrantPermissions", (doc, APPS[1], ["read"]), "(ssas)")
    finally:
        os.close(fd)
    name = os.path.basename(folder)
    docpaths = [f"{mnt}/{doc}/{name}"] + [f"{mnt}/by-app/{app}/{doc}/{name}" for app in APPS]
    for again in range(3):              # each view again and again, as the reference's passes
        for p in docpaths:
            check_view(p, folder + "/dir", f"worker {worker} round {rnd} pass {again} {p}", failures)
    with calls:
        dh.docs(bus, "Delete", (doc,), "(s)")


def worker_main(bus, calls, base, mnt, worker, failures, errors):
    try:
        for rnd in range(ROUNDS):
            one_round(bus, calls, base, mnt, worker, rnd, failures)
    except Exception as e:  # noqa: BLE001 - reported by the test body
        errors.append(f"worker {worker}: {e!r} " + traceback.format_exc().replace("\n", " | ")[-900:])


def test_host_hard_link_is_one_inode_under_parallel_workers(bus):
    dh.start(bus)
    mnt = dh.mountpoint(bus)
    base = os.path.join(bus.root, "work")
    os.makedirs(base)
    calls = threading.Lock()            # one D-Bus call at a time; the mount is shared
    failures, errors = [], []
    workers = [threading.Thread(target=worker_main, args=(bus, calls, base, mnt, w, failures, errors))
               for w in range(WORKERS)]
    for t in workers:
        t.start()
    for t in workers:
        t.join()
    assert not errors, errors
    assert not failures, failures
