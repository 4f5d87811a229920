"""limen-documents' background import of a big reference state (tens of thousands of
entries, in steps from the idle main loop) under faults: a kill -9 in the middle of it,
writes to entries it has not reached yet, and the FUSE mount used while it runs. Nothing may
be lost, nothing imported twice, and nothing the user changed brought back from the
reference's files. The table files come from test_documents_import's GVDB writer."""

import os
import time

import pytest
from gi.repository import Gio, GLib

import documents_helpers as dh
from documents_helpers import read, write
from test_documents_import import db_dir, gvdb_hash, write_table

APP = "org.example.App"
OTHER = "org.example.Other"
NF = "org.freedesktop.portal.Error.NotFound"
N_PERMS = 30000
BACKGROUND = "Importing the reference state in the background"
DONE = "The reference state is imported"
# A pause between the import's background steps (a test hook): "in the middle of the import"
# is then the same on a fast machine and a slow one, with or without a sanitizer.
PAUSE = {"LIMEN_TEST_IMPORT_STEP_PAUSE_MS": "25"}


@pytest.fixture
def work(bus):
    w = os.path.join(bus.root, "work")
    os.makedirs(w)
    return w


# ---- the reference state ------------------------------------------------------------

def file_order(keys):
    """@keys in the order the daemon reads them from a file of the test's GVDB writer (its
    items sorted by bucket, one bucket per item): the last ones are reached last."""
    keys = list(keys)
    return sorted(keys, key=lambda k: gvdb_hash(k.encode()) % len(keys))


def perm_value(i):
    return (GLib.Variant("u", i), {APP: [f"p{i}"], OTHER: ["x"]})


def perm_table(n=N_PERMS):
    """{id: (data, perms)} of the big permission table, and its file."""
    return {f"e{i}": perm_value(i) for i in range(n)}


def doc_table(work, n, real=()):
    """{id: (path, perms)} of @n documents in the reference's layout, with 8-hex ids as the
    reference makes them; the files of the ids in @real exist (with their id as content),
    the others do not (a file gone since, kept at its recorded path)."""
    folder = os.path.join(work, "docs")
    os.makedirs(folder, exist_ok=True)
    docs = {}
    for i in range(n):
        doc = f"{i:08x}"
        path = os.path.join(folder, f"f{i}.txt")
        if doc in real:
            write(path, doc)
        docs[doc] = (path, {APP: ["read", "write"]} if i % 2 else {APP: ["read"], OTHER: ["read"]})
    return docs


_ENTRY = GLib.VariantType("(va{sas})")


def fast_entry(data_text, perms):
    """entry() from the text form of its data: tens of thousands of them are made here, and
    the text is parsed in C (entry() of GLib.Variant objects takes ten times as long)."""
    return GLib.Variant.parse(_ENTRY, f"(<{data_text}>, {perms!r})", None, None)


_table_files = {}


def write_perm_table(bus, perms):
    """The big table's file (made once per run: it is the same in every test)."""
    path = os.path.join(db_dir(bus), "big")
    key = len(perms)
    if key not in _table_files:
        write_table(path, {k: fast_entry(data.print_(True), p) for k, (data, p) in perms.items()})
        with open(path, "rb") as f:
            _table_files[key] = f.read()
    else:
        os.makedirs(db_dir(bus), exist_ok=True)
        with open(path, "wb") as f:
            f.write(_table_files[key])


def write_doc_table(bus, docs, flags=None):
    """The documents' file, each in the reference's old layout, @flags {id: flags}."""
    flags = flags or {}
    st = os.stat(os.path.dirname(next(iter(docs.values()))[0]))
    assert not any("'" in path or "\\" in path for path, _ in docs.values())
    # A bytestring literal ends in a NUL, as the reference stores paths.
    write_table(os.path.join(db_dir(bus), "documents"),
                {doc: fast_entry(f"(b'{path}', uint64 {st.st_dev}, uint64 {st.st_ino}, uint32 {flags.get(doc, 0)})", p)
                 for doc, (path, p) in docs.items()})


def write_reference(bus, perms, docs):
    write_perm_table(bus, perms)
    write_doc_table(bus, docs)


# ---- the daemon ---------------------------------------------------------------------

def wait_log(d, *texts, timeout=120):
    deadline = time.monotonic() + timeout
    while not all(t in d.output() for t in texts):
        assert d.alive(), d.output()
        assert time.monotonic() < deadline, f"waited for {texts}:\n{d.output()}"
        time.sleep(0.01)


def wait_progress(d):
    """Until the import logged progress from the background."""
    deadline = time.monotonic() + 120
    while "entries looked at" not in d.output().split(BACKGROUND, 1)[-1]:
        assert d.alive() and DONE not in d.output(), d.output()
        assert time.monotonic() < deadline, d.output()
        time.sleep(0.01)


def start_importing(bus, wait_mount=False):
    """A daemon whose import went to the background and logged progress."""
    d = dh.start(bus, env=PAUSE, wait_mount=wait_mount)
    wait_log(d, BACKGROUND)
    return d


def call_many(bus, iface, dest, path, method, sig, args_list):
    """Every call of @args_list at once (async, one connection), answered in order: the
    unpacked reply or the D-Bus error name."""
    conn = bus.new_connection()
    ctx = GLib.MainContext.default()
    results = [None] * len(args_list)
    left = [len(args_list)]

    def done(source, res, i):
        try:
            results[i] = source.call_finish(res).unpack()
        except GLib.Error as e:
            results[i] = Gio.DBusError.get_remote_error(e)
        left[0] -= 1

    for start in range(0, len(args_list), 500):
        for i in range(start, min(start + 500, len(args_list))):
            conn.call(dest, path, iface, method, GLib.Variant(sig, args_list[i]), None,
                      Gio.DBusCallFlags.NONE, 60000, None, done, i)
        while left[0] > len(args_list) - min(start + 500, len(args_list)):
            ctx.iteration(True)
    conn.close_sync(None)
    return results


def ps_many(bus, method, sig, args_list):
    return call_many(bus, dh.PS_IFACE, dh.PS_NAME, dh.PS_PATH, method, sig, args_list)


def docs_many(bus, method, sig, args_list):
    return call_many(bus, dh.DOCS_IFACE, dh.DOCS_NAME, dh.DOCS_PATH, method, sig, args_list)


def check_state(bus, perms, docs, only=None):
    """Every entry of @perms ({id: (data, a{sas})}) and document of @docs ({id: (path,
    a{sas})}) is listed exactly once, and nothing else is; each is served with that value
    (or only those named in @only, when given)."""
    ids = dh.ps(bus, "List", ("big",), "(s)")[0]
    assert len(ids) == len(set(ids)), "an entry listed twice"
    assert sorted(ids) == sorted(perms)
    keys = sorted(k for k in perms if only is None or k in only)
    got = ps_many(bus, "Lookup", "(ss)", [("big", k) for k in keys])
    wrong = [(k, g) for k, g in zip(keys, got)
             if g != (perms[k][1], perms[k][0].unpack())]
    assert not wrong, f"{len(wrong)} entries wrong, such as {wrong[:5]}"

    listed = dh.docs(bus, "List", ("",), "(s)")[0]
    assert sorted(listed) == sorted(docs)
    ids = dh.ps(bus, "List", ("documents",), "(s)")[0]
    assert len(ids) == len(set(ids)), "a document listed twice"
    assert sorted(ids) == sorted(docs)
    keys = sorted(k for k in docs if only is None or k in only)
    got = docs_many(bus, "Info", "(s)", [(k,) for k in keys])
    wrong = [(k, g) for k, g in zip(keys, got)
             if not isinstance(g, tuple) or (bytes(g[0]).rstrip(b"\0").decode(), g[1]) != docs[k]]
    assert not wrong, f"{len(wrong)} documents wrong, such as {wrong[:5]}"


# ---- 1. kill -9 in the middle -------------------------------------------------------

def test_a_killed_import_resumes_and_loses_nothing(bus, work):
    """kill -9 once the import went to the background and logged progress there, and again
    as soon as the next start's import goes there; the start after goes on where they stopped
    (what was read is not read again) and ends, and every entry is there exactly once with
    the reference's value."""
    perms = perm_table()
    docs = doc_table(work, 10000)
    write_reference(bus, perms, docs)

    d = start_importing(bus)
    wait_progress(d)
    dh.kill9(bus, d)
    assert DONE not in d.output(), "the import ended before the kill: make the tables bigger"

    # As soon as it goes to the background: between two steps, or in one.
    d = start_importing(bus)
    dh.kill9(bus, d)
    assert DONE not in d.output(), "the import ended before the kill: make the tables bigger"

    d = dh.start(bus, env=PAUSE, wait_mount=False)
    wait_log(d, DONE)
    out = d.output()
    # It resumed: entries recorded by the killed runs were not read again. How many depends
    # on how far the killed runs got (with the paused steps, under a sanitizer 5,000).
    resumed = [int(line.split(" read at an earlier start")[0].rsplit(", ", 1)[1])
               for line in out.splitlines() if " read at an earlier start" in line]
    assert resumed and sum(resumed) >= 1000, out
    check_state(bus, perms, docs)

    # And a later start reads nothing: every entry and file is recorded.
    dh.kill9(bus, d)
    d = dh.start(bus, env=PAUSE, wait_mount=False)
    assert dh.ps(bus, "Lookup", ("big", "e0"), "(ss)")[0] == perms["e0"][1]
    out = d.output()
    assert BACKGROUND not in out and "Reference table" not in out, out
    check_state(bus, perms, docs)


# ---- 2. writes to entries the import has not reached --------------------------------

THIRD = "org.example.Third"


def write_ahead_of_import(bus, d, perms, docs):
    """Every kind of write, each on an entry the running import has not reached yet (the
    last ones of their files, while neither file is finished); returns what each entry
    must hold from then on (None: deleted)."""
    p_last = file_order(perms)[-4:]
    d_last = file_order(docs)[-5:]
    odd = [k for k in file_order(docs)[:-5] if docs[k][1] == {APP: ["read", "write"]}][-1]
    a, b, c, e = p_last
    g, h, i, j, k = d_last
    f = odd
    want_perms, want_docs = dict(perms), dict(docs)

    dh.ps(bus, "SetPermission", ("big", False, a, APP, ["new"]), "(sbssas)")
    want_perms[a] = (perms[a][0], {APP: ["new"], OTHER: ["x"]})
    dh.ps(bus, "Set", ("big", False, b, {THIRD: ["set"]}, GLib.Variant("v", GLib.Variant("s", "set"))),
          "(sbsa{sas}v)")
    want_perms[b] = (GLib.Variant("s", "set"), {THIRD: ["set"]})
    dh.ps(bus, "Delete", ("big", c), "(ss)")
    want_perms[c] = None
    dh.ps(bus, "DeletePermission", ("big", e, APP), "(sss)")
    want_perms[e] = (perms[e][0], {OTHER: ["x"]})

    dh.docs(bus, "GrantPermissions", (g, THIRD, ["read", "write"]), "(ssas)")
    want_docs[g] = (docs[g][0], {**docs[g][1], THIRD: ["read", "write"]})
    dh.docs(bus, "RevokePermissions", (f, APP, ["write"]), "(ssas)")
    want_docs[f] = (docs[f][0], {APP: ["read"]})
    dh.docs(bus, "Delete", (h,), "(s)")
    want_docs[h] = None
    # The documents table of the PermissionStore is the same store.
    dh.ps(bus, "SetPermission", ("documents", False, i, THIRD, ["read"]), "(sbssas)")
    want_docs[i] = (docs[i][0], {**docs[i][1], THIRD: ["read"]})
    dh.ps(bus, "DeletePermission", ("documents", j, APP), "(sss)")
    want_docs[j] = (docs[j][0], {kk: v for kk, v in docs[j][1].items() if kk != APP})
    dh.ps(bus, "Delete", ("documents", k), "(ss)")
    want_docs[k] = None

    # Deleted here, they stay deleted while the import runs: nothing brings them in again.
    assert dh.error_name(dh.ps, bus, "Lookup", ("big", c), "(ss)") == NF
    assert dh.error_name(dh.docs, bus, "Info", (h,), "(s)") == NF
    assert dh.error_name(dh.ps, bus, "Lookup", ("documents", k), "(ss)") == NF
    out = d.output()
    assert DONE not in out, out
    finished = [ln for ln in out.splitlines() if "Reference table" in ln and "entries looked at" not in ln]
    assert not finished, f"the import finished a table before the writes: make the tables bigger\n{out}"
    return ({kk: v for kk, v in want_perms.items() if v is not None},
            {kk: v for kk, v in want_docs.items() if v is not None},
            {a, b, c, e, f, g, h, i, j, k})


@pytest.mark.parametrize("then", ["end", "kill"])
def test_writes_ahead_of_the_import_win(bus, work, then):
    """PermissionStore Set, SetPermission, Delete and DeletePermission, Documents
    GrantPermissions, RevokePermissions and Delete on entries the import has not reached:
    what they wrote is what the entry holds once the import ended, also after a kill -9
    before it ended and after a restart (a deleted one stays deleted)."""
    perms = perm_table()
    docs = doc_table(work, 20000)
    write_reference(bus, perms, docs)

    d = start_importing(bus)
    want_perms, want_docs, written = write_ahead_of_import(bus, d, perms, docs)
    if then == "kill":
        dh.kill9(bus, d)
        d = dh.start(bus, env=PAUSE, wait_mount=False)
    wait_log(d, DONE)
    check_state(bus, want_perms, want_docs)
    if then == "end":
        # Each write brought its entry in, and each is counted once, as imported; the reads
        # of deleted ones brought nothing.
        out = d.output()
        assert "10 entries brought in first for calls" in out, out
        assert f"Reference table big: {N_PERMS} imported\n" in out, out
        assert "Reference table documents: 20000 imported\n" in out, out

    dh.kill9(bus, d)
    d = dh.start(bus, env=PAUSE, wait_mount=False)
    check_state(bus, want_perms, want_docs, only=written)


# ---- 3. the mount while the import runs ---------------------------------------------

def test_the_mount_finds_documents_the_import_has_not_reached(bus, work):
    """An app started right at login, after the switch from the reference, opens its files
    through the mount while the import runs: a document the import has not reached is
    brought in for the lookup of its id (DOCID/NAME and by-app/APP/DOCID/NAME), and the
    import still ends with everything in place."""
    perms = perm_table()
    all_docs = doc_table(work, 20000)
    targets = file_order(all_docs)[-3:]
    docs = doc_table(work, 20000, real=targets)
    write_reference(bus, perms, docs)
    d = start_importing(bus, wait_mount=True)
    mnt = dh.mountpoint(bus)
    names = {doc: os.path.basename(docs[doc][0]) for doc in targets}

    t0 = time.monotonic()
    assert read(f"{mnt}/{targets[0]}/{names[targets[0]]}") == targets[0]
    assert read(f"{mnt}/by-app/{APP}/{targets[1]}/{names[targets[1]]}") == targets[1]
    assert os.listdir(f"{mnt}/by-app/{APP}/{targets[2]}") == [names[targets[2]]]
    elapsed = time.monotonic() - t0
    out = d.output()
    finished = [ln for ln in out.splitlines() if "Reference table documents: " in ln and "looked at" not in ln]
    assert DONE not in out and not finished, f"the import finished the documents first: make them more\n{out}"
    # No wait for the rest of the import: a step at most.
    assert elapsed < 5, elapsed

    wait_log(d, DONE)
    check_state(bus, perms, docs, only=targets)
    for doc in targets:
        assert read(f"{mnt}/by-app/{APP}/{doc}/{names[doc]}") == doc


def test_a_recorded_path_on_the_mount_does_not_hold_up_the_import(bus, work):
    """The import opens the paths the reference recorded, on the main thread; one recorded
    on our own mount, in the folder of a document the import has not reached, is a lookup
    that must not wait for the main thread (which is the one asking): the import goes on at
    once, and the mount keeps answering."""
    docs = doc_table(work, 20000)
    order = file_order(docs)
    on_mount, target = order[-2], order[-1]
    mnt = dh.mountpoint(bus)
    write(docs[target][0], target)
    # The reference never records such a path; a file written by hand could.
    docs[on_mount] = (f"{mnt}/{target}/{os.path.basename(docs[target][0])}", docs[on_mount][1])
    write_reference(bus, perm_table(), docs)
    d = start_importing(bus, wait_mount=True)
    wait_log(d, DONE, timeout=60)
    out = d.output()
    assert "answered as missing" not in out, out
    assert read(docs[on_mount][0]) == target
    check_state(bus, perm_table(), docs, only=(on_mount, target))


def test_a_path_ahead_of_the_import_finds_the_shared_document(bus, work):
    """Lookup and Add with reuse_existing of a file whose document the import has not
    reached find it, as they would after the import: the document made with reuse, not one
    made unique or for a session only at the same path (which a path never finds)."""
    docs = doc_table(work, 20000)
    order = file_order(docs)
    shared, unique, session = order[-3], order[-2], order[-1]
    shared2, session2 = order[-5], order[-4]
    p1, p2 = os.path.join(work, "one.txt"), os.path.join(work, "two.txt")
    write(p1, "one")
    write(p2, "two")
    docs[shared] = (p1, {APP: ["read"]})
    docs[shared2] = (p2, {APP: ["read"]})
    perms = perm_table()
    written = dict(docs)
    for doc, path in ((unique, p1), (session, p1), (session2, p2)):
        written[doc] = (path, docs[doc][1])
    write_perm_table(bus, perms)
    write_doc_table(bus, written, {unique: 1, session: 2, session2: 2})
    d = start_importing(bus, wait_mount=True)

    assert dh.docs(bus, "Lookup", (p1.encode() + b"\0",), "(ay)") == (shared,)
    assert dh.add(bus, p2) == shared2
    out = d.output()
    finished = [ln for ln in out.splitlines() if "Reference table documents: " in ln and "looked at" not in ln]
    assert DONE not in out and not finished, f"the import finished the documents first: make them more\n{out}"

    wait_log(d, DONE)
    del docs[session], docs[session2]
    docs[unique] = (p1, docs[unique][1])
    check_state(bus, perms, docs, only=(shared, shared2, unique))
    assert dh.docs(bus, "Lookup", (p1.encode() + b"\0",), "(ay)") == (shared,)
