"""limen-documents after the faults its journal and database exist for: kill -9 at chosen
points, damaged files and a full disk. Every answered call must still be served afterwards,
and what cannot be served is kept aside and said loudly."""

import glob
import os
import signal
import subprocess
import time

import pytest
from gi.repository import GLib

import documents_helpers as dh
from documents_helpers import write
import limentest

APP = "org.example.App"


@pytest.fixture
def work(bus):
    w = os.path.join(bus.root, "work")
    os.makedirs(w)
    return w


def state(bus, name="documents.sqlite"):
    return os.path.join(bus.data_home, "limen", name)


def size(path):
    try:
        return os.path.getsize(path)
    except FileNotFoundError:
        return -1


def settle(pred, timeout=10.0):
    """Wait for @pred, but go on without it: a build that never gets there fails later, on
    what the test checks, not here."""
    deadline = time.monotonic() + timeout
    while not pred() and time.monotonic() < deadline:
        time.sleep(0.05)


def add_files(bus, work, prefix, n):
    out = []
    for i in range(n):
        p = os.path.join(work, f"{prefix}{i}.txt")
        write(p, str(i))
        out.append((dh.add(bus, p), p))
    return out


def served(bus, doc):
    try:
        return bytes(dh.docs(bus, "Info", (doc,), "(s)")[0]).rstrip(b"\0").decode()
    except Exception:
        return None


@pytest.fixture
def tiny_data_home(bus):
    """XDG_DATA_HOME on a 2 MiB tmpfs of its own (mounting needs root)."""
    if os.geteuid() != 0:
        pytest.skip("mounting a tmpfs needs root")
    subprocess.run(["mount", "-t", "tmpfs", "-o", "size=2m,mode=0755", "tmpfs", bus.data_home], check=True)
    try:
        yield bus.data_home
    finally:
        for d in reversed(bus.daemons):
            d.stop()
        subprocess.run(["fusermount3", "-u", "-z", dh.mountpoint(bus)], stdout=subprocess.DEVNULL,
                       stderr=subprocess.DEVNULL)
        subprocess.run(["umount", "-l", bus.data_home], check=False)


def fill(directory, leave=0):
    """Fill the filesystem of @directory, leaving @leave bytes (whole pages) free."""
    gap = os.path.join(directory, "gap")
    if leave:
        with open(gap, "wb") as f:
            f.write(b"\0" * leave)
    fd = os.open(os.path.join(directory, "filler"), os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
    try:
        while os.write(fd, b"\0" * 4096) == 4096:
            pass
    except OSError:
        pass
    finally:
        os.close(fd)
    if leave:
        os.unlink(gap)


def test_restart_on_a_full_disk_serves_what_the_journal_holds(bus, work, tiny_data_home):
    """Answered Adds that could not be taken over into SQLite (the disk filled up), then a
    kill -9 and a restart on the still full disk: the journal's documents are served all the
    same, and taken over into the database once there is room again."""
    d = dh.start(bus)
    first = add_files(bus, work, "warm", 1)
    # The first Add is in the database and the daemon idle (its quiet-time work done).
    settle(lambda: size(state(bus, "documents.sqlite-pending")) == 0 and
           size(state(bus, "documents.sqlite-wal")) <= 0)
    settle(lambda: os.path.exists(state(bus, "documents.sqlite.backup")), timeout=3)
    time.sleep(0.3)
    # Room for the journal's frames, not for the database's transaction that takes them over.
    fill(tiny_data_home, leave=8192)
    answered = add_files(bus, work, "full", 20)
    dh.kill9(bus, d)
    fill(tiny_data_home)

    d = dh.start(bus)
    for doc, p in first + answered:
        assert served(bus, doc) == p, doc
    listing = set(os.listdir(dh.mountpoint(bus)))
    assert {doc for doc, _ in answered} <= listing
    # What cannot be written now is refused with the reason, and no host path. (Adds go on
    # until the journal's last page is full; those answered must be served as well.)
    refusals = []
    for i in range(200):
        try:
            answered += add_files(bus, work, f"more{i}-", 1)
        except GLib.Error as e:
            refusals.append(e.message)
            break
    try:
        dh.ps(bus, "SetPermission", ("devices", True, "mic", APP, ["yes"]), "(sbssas)")
    except GLib.Error as e:
        refusals.append(e.message)
    assert len(refusals) == 2
    for message in refusals:
        assert "full" in message or "No space" in message, message
        assert bus.root not in message, message
    # Room again: the next change takes the journal over; after another kill -9 it all comes
    # from the database.
    os.unlink(os.path.join(tiny_data_home, "filler"))
    dh.ps(bus, "SetPermission", ("devices", True, "camera", APP, ["yes"]), "(sbssas)")
    settle(lambda: size(state(bus, "documents.sqlite-pending")) == 0)
    dh.kill9(bus, d)
    dh.start(bus)
    for doc, p in first + answered:
        assert served(bus, doc) == p, doc


def set_entries(bus, prefix, n):
    for i in range(n):
        dh.ps(bus, "SetPermission", ("crash", True, f"{prefix}{i}", APP, ["yes"]), "(sbssas)")
    return [f"{prefix}{i}" for i in range(n)]


def served_entries(bus, ids):
    out = []
    for i in ids:
        try:
            if dh.ps(bus, "Lookup", ("crash", i), "(ss)")[0] == {APP: ["yes"]}:
                out.append(i)
        except Exception:
            pass
    return out


def garbage_in_the_middle(path, n=4096):
    size = os.path.getsize(path)
    with open(path, "r+b") as f:
        f.seek(size // 2)
        f.write(os.urandom(n))


def test_damaged_wal_after_a_quiet_moment_loses_nothing(bus, work):
    """200 answered permission changes, a quiet moment, kill -9, then 4 KiB of garbage in the
    middle of the WAL: the changes are all served after the restart, since the quiet moment
    moved them out of the WAL into the database."""
    d = dh.start(bus, wait_mount=False)
    ids = set_entries(bus, "quiet", 200)
    docs = add_files(bus, work, "quiet", 20)
    wal = state(bus, "documents.sqlite-wal")
    settle(lambda: size(wal) == 0)
    dh.kill9(bus, d)
    garbage_in_the_middle(wal)
    dh.start(bus)
    assert served_entries(bus, ids) == ids
    for doc, p in docs:
        assert served(bus, doc) == p


def stopped_with_a_full_wal(bus, d, prefix):
    """Answered changes still in the WAL, the daemon stopped before its quiet moment (SIGSTOP
    right after the last answer; on a machine so slow that the moment came first, again)."""
    wal = state(bus, "documents.sqlite-wal")
    for attempt in range(5):
        ids = set_entries(bus, f"{prefix}{attempt}-", 200)
        d.signal(signal.SIGSTOP)
        if size(wal) > 100 * 4096:
            return ids
        d.signal(signal.SIGCONT)
    pytest.fail("the WAL never held the changes long enough to stop the daemon first")


def test_damaged_wal_is_kept_aside_and_said(bus, work):
    """kill -9 while 200 answered changes are still in the WAL, then 4 KiB of garbage in its
    middle: SQLite's recovery silently drops every commit after the garbage. The daemon says
    so, naming the file, and keeps the database and the WAL as they were beside them (a clean
    stop afterwards empties the WAL, so this is the only copy of what was lost)."""
    d = dh.start(bus, wait_mount=False)
    ids = stopped_with_a_full_wal(bus, d, "wal")
    dh.kill9(bus, d)
    wal = state(bus, "documents.sqlite-wal")
    garbage_in_the_middle(wal)
    with open(wal, "rb") as f:
        damaged = f.read()
    d = dh.start(bus, wait_mount=False)
    kept = glob.glob(wal + ".damaged-*")
    assert len(kept) == 1, os.listdir(os.path.dirname(wal))
    with open(kept[0], "rb") as f:
        assert f.read() == damaged
    assert glob.glob(state(bus) + ".damaged-*")
    assert "documents.sqlite-wal is damaged" in d.output() and kept[0] in d.output()
    served_now = served_entries(bus, ids)
    assert len(served_now) < len(ids)           # what the garbage took, and what was said
    assert d.stop() == 0
    assert os.path.exists(kept[0])


@pytest.mark.parametrize("where", ["header", "middle"])
def test_damaged_database_starts_from_its_copy(bus, work, where):
    """The database file damaged while the daemon was stopped: it starts from its copy made at
    a quiet moment, serves every answered change, and keeps the damaged file beside it."""
    d = dh.start(bus)
    ids = set_entries(bus, "db", 200)
    docs = add_files(bus, work, "db", 30)
    dh.docs(bus, "GrantPermissions", (docs[0][0], APP, ["read"]), "(ssas)")
    backup = state(bus, "documents.sqlite.backup")
    settle(lambda: size(backup) > 0 and size(state(bus, "documents.sqlite-wal")) == 0)
    time.sleep(0.2)
    assert d.stop() == 0
    db = state(bus)
    if where == "header":
        with open(db, "r+b") as f:
            f.write(os.urandom(4096))
    else:
        garbage_in_the_middle(db)
    d = dh.start(bus)
    assert served_entries(bus, ids) == ids
    for doc, p in docs:
        assert served(bus, doc) == p
    assert dh.docs(bus, "Info", (docs[0][0],), "(s)")[1] == {APP: ["read"]}
    if where == "header":
        assert glob.glob(db + ".damaged-*")
        assert f"{db} is damaged" in d.output()
    # It goes on serving writes as well.
    dh.ps(bus, "SetPermission", ("crash", True, "after", APP, ["yes"]), "(sbssas)")
    assert served_entries(bus, ["after"]) == ["after"]


def test_damaged_journal_end_then_kill9(bus, work):
    """What a crash in the middle of a multi-page AddFull frame leaves (a torn frame at the
    journal's end), a start, 20 answered Adds and a kill -9 before the database took them
    over: all 20 are served after the next start."""
    d = dh.start(bus)
    dh.kill9(bus, d)
    pending = state(bus, "documents.sqlite-pending")
    torn = (70000).to_bytes(4, "little") + b"\x01\x02\x03\x04" + os.urandom(5000)
    for attempt in range(5):
        with open(pending, "ab") as f:
            f.write(torn)
        d = dh.start(bus)
        answered = add_files(bus, work, f"j{attempt}-", 20)
        d.signal(signal.SIGSTOP)
        # Still in the journal (on a machine so slow that the database took them over
        # before the stop, again).
        if size(pending) > 20 * 64:
            break
        dh.kill9(bus, d)
    else:
        pytest.fail("the journal never kept the Adds long enough to stop the daemon first")
    dh.kill9(bus, d)
    d = dh.start(bus)
    for doc, p in answered:
        assert served(bus, doc) == p, doc
    assert glob.glob(pending + ".damaged-*")


def test_kill9_mid_writes_is_not_taken_for_damage(bus, work):
    """A plain kill -9 in the middle of permission writes, Adds and quiet-moment work leaves
    nothing the next start takes for damage: no file is set aside and nothing is said."""
    import random
    import threading
    rng = random.Random(39)
    answered = []
    for round_ in range(5):
        d = dh.start(bus)
        stop = threading.Event()
        conn = bus.new_connection()

        def writer():
            i = 0
            while not stop.is_set():
                try:
                    dh.ps(bus, "SetPermission", ("crash", True, f"r{round_}-{i}", APP, ["yes"]), "(sbssas)",
                          conn=conn)
                except Exception:
                    return
                answered.append(f"r{round_}-{i}")
                i += 1
        t = threading.Thread(target=writer)
        t.start()
        add_files(bus, work, f"k{round_}-", 10)
        time.sleep(rng.uniform(0, 1.5))
        dh.kill9(bus, d)
        stop.set()
        t.join(20)
        conn.close_sync(None)
    d = dh.start(bus)
    assert "damaged" not in d.output()
    assert not glob.glob(state(bus) + "*damaged*")
    assert served_entries(bus, answered) == answered


def test_read_only_data_directory_says_why(bus, work, tiny_data_home):
    """The data directory read-only (a full quota, a home mounted read-only after an error):
    the daemon serves what it has, and a permission change is refused with SQLite's reason,
    and no host path."""
    d = dh.start(bus)
    before = set_entries(bus, "ro", 3)
    assert d.stop() == 0
    subprocess.run(["mount", "-o", "remount,ro", tiny_data_home], check=True)
    try:
        d = dh.start(bus)
        assert served_entries(bus, before) == before
        with pytest.raises(GLib.Error) as refused:
            dh.ps(bus, "SetPermission", ("crash", True, "refused", APP, ["yes"]), "(sbssas)")
        message = refused.value.message
        assert "readonly" in message or "read-only" in message, message
        assert bus.root not in message, message
        d.stop()
    finally:
        subprocess.run(["mount", "-o", "remount,rw", tiny_data_home], check=False)


def test_a_clean_exit_is_marked_and_a_change_after_it_is_checked(bus, work):
    """A clean exit writes into documents.sqlite-checked the file's identity as it left it (a
    start then skips the page-by-page check of a file no one wrote to since); a start uses the
    mark up, and a file changed after the exit is checked and said to be."""
    d = dh.start(bus)
    ids = set_entries(bus, "mark", 20)
    assert d.stop() == 0
    mark = state(bus, "documents.sqlite-checked")
    assert size(mark) > 0
    d = dh.start(bus)
    assert size(mark) == 0
    assert served_entries(bus, ids) == ids
    assert d.stop() == 0
    st = os.stat(state(bus))
    os.utime(state(bus), ns=(st.st_atime_ns, st.st_mtime_ns + 1))
    d = dh.start(bus)
    assert "changed since the last clean exit: checking it" in d.output()
    assert served_entries(bus, ids) == ids


def test_damage_behind_a_clean_mark_is_found_and_the_copy_used(bus, work):
    """The database damaged after a clean exit with its size and time stamp kept (what the
    clean mark cannot see): the damage is found, by the load or by the check that runs after
    the start, said, and the start after it at the latest serves everything from the copy."""
    d = dh.start(bus)
    ids = set_entries(bus, "behind", 200)
    docs = add_files(bus, work, "behind", 30)
    backup = state(bus, "documents.sqlite.backup")
    settle(lambda: size(backup) > 0 and size(state(bus, "documents.sqlite-wal")) == 0)
    time.sleep(0.2)
    assert d.stop() == 0
    assert size(state(bus, "documents.sqlite-checked")) > 0
    db = state(bus)
    st = os.stat(db)
    garbage_in_the_middle(db, 16384)
    os.utime(db, ns=(st.st_atime_ns, st.st_mtime_ns))
    d = dh.start(bus, wait_mount=False)
    settle(lambda: "is damaged" in d.output())
    said = "is damaged" in d.output()
    if served_entries(bus, ids) != ids or any(served(bus, doc) != p for doc, p in docs):
        assert said
    assert d.stop() == 0
    assert said or "is damaged" in d.output()
    d = dh.start(bus)
    assert served_entries(bus, ids) == ids
    for doc, p in docs:
        assert served(bus, doc) == p
