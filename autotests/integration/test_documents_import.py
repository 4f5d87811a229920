"""limen-documents' import of the reference's state in $XDG_DATA_HOME/flatpak/db, in every
layout the reference has written: documents as (ayttu) (Debian's reference), as (ayttu@ay)
with the file handle of their folder (upstream since 1.21.2), and longer ones a later
version may write. Debian's reference writes only the first, so the table files here come
from a small GVDB writer of our own (checked against the reference's reader below)."""

import ctypes
import hashlib
import os
import shutil
import struct
import subprocess
import time

import pytest
from gi.repository import GLib

import documents_helpers as dh
from documents_helpers import read, write
import limentest

APP = "org.example.App"
NF = "org.freedesktop.portal.Error.NotFound"
REF_PERMISSION_STORE = "/usr/libexec/xdg-permission-store"
UNIQUE, TRANSIENT, DIRECTORY = 1, 2, 4


# ---- a GVDB writer (the format GLib's gvdb-builder writes) ---------------------------

class Damaged:
    """A 'v' item whose value pointer leads outside the file."""


def gvdb_hash(key):
    h = 5381
    for c in key:
        h = (h * 33 + (c - 256 if c >= 128 else c)) & 0xffffffff
    return h


class _Gvdb:
    def __init__(self):
        self.buf = bytearray(24)

    def alloc(self, data, align):
        while len(self.buf) % align:
            self.buf.append(0)
        start = len(self.buf)
        self.buf += data
        return start, len(self.buf)

    def table(self, entries):
        """A hash table of @entries (key -> GLib.Variant, nested dict or Damaged): no bloom
        filter, one bucket per item, items in bucket order as the reader's lookup expects."""
        items = []
        for key, value in entries.items():
            k = key.encode()
            if isinstance(value, dict):
                kind, ptr = b"H", self.table(value)
            elif isinstance(value, Damaged):
                kind, ptr = b"v", (1 << 30, (1 << 30) + 16)
            else:
                kind, ptr = b"v", self.alloc(GLib.Variant.new_variant(value).get_data_as_bytes().get_data(), 8)
            key_start, _ = self.alloc(k, 1)
            items.append((gvdb_hash(k), key_start, len(k), kind, ptr))
        n_buckets = max(1, len(items))
        items.sort(key=lambda it: it[0] % n_buckets)
        counts = [0] * n_buckets
        for it in items:
            counts[it[0] % n_buckets] += 1
        buckets = [sum(counts[:b]) for b in range(min(n_buckets, 1))]
        for c in counts[:-1]:
            buckets.append(buckets[-1] + c)
        body = bytearray(struct.pack("<II", 0, n_buckets) + struct.pack(f"<{n_buckets}I", *buckets))
        for h, key_start, key_size, kind, (start, end) in items:
            body += struct.pack("<IIIHccII", h, 0xffffffff, key_start, key_size, kind, b"\0", start, end)
        return self.alloc(body, 4)


def write_table(path, main, apps=None):
    """A permission-store table file: {"main": H main, "apps": H apps}."""
    g = _Gvdb()
    start, end = g.table({"main": main, "apps": apps or {}})
    g.buf[0:24] = struct.pack("<IIIIII", 0x72615647, 0x746e6169, 0, 0, start, end)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "wb") as f:
        f.write(bytes(g.buf))


# ---- document entries as the reference writes them -------------------------------

_libc = ctypes.CDLL(None, use_errno=True)
AT_EMPTY_PATH, AT_HANDLE_FID = 0x1000, 0x200


def folder_handle(path):
    """name_to_handle_at(AT_HANDLE_FID) of the directory @path, its bytes only, as upstream
    records it; None when the kernel or filesystem gives none."""
    buf = ctypes.create_string_buffer(8 + 128)
    struct.pack_into("<Ii", buf, 0, 128, 0)
    mount_id = ctypes.c_int()
    fd = os.open(path, os.O_PATH | os.O_DIRECTORY)
    try:
        if _libc.name_to_handle_at(fd, b"", buf, ctypes.byref(mount_id), AT_EMPTY_PATH | AT_HANDLE_FID) != 0:
            return None
    finally:
        os.close(fd)
    size, _ = struct.unpack_from("<Ii", buf, 0)
    return bytes(buf.raw[8:8 + size])


def can_open_handles():
    with open("/proc/self/status") as f:
        cap = next(int(line.split()[1], 16) for line in f if line.startswith("CapEff:"))
    return bool(cap & (1 << 2))          # CAP_DAC_READ_SEARCH


def doc_data(path, flags=0, layout="old", folder=None):
    """The data of a document entry: (ayttu) or (ayttu@ay), or a longer one ("longer": one
    more member of a type no version has yet)."""
    folder = folder or (path if flags & DIRECTORY else os.path.dirname(path))
    st = os.stat(folder)
    members = [GLib.Variant("ay", path.encode() + b"\0"), GLib.Variant("t", st.st_dev),
               GLib.Variant("t", st.st_ino), GLib.Variant("u", flags)]
    if layout in ("new", "longer"):
        members.append(GLib.Variant("ay", folder_handle(folder) or b""))
    if layout == "longer":
        members.append(GLib.Variant("as", ["from", "a", "later", "version"]))
    return GLib.Variant.new_tuple(*members)


def entry(data, perms, extra=()):
    """A main-table value: (v data, a{sas} permissions) and any later members."""
    return GLib.Variant.new_tuple(GLib.Variant("v", data), GLib.Variant("a{sas}", perms), *extra)


def db_dir(bus):
    return os.path.join(bus.data_home, "flatpak", "db")


def digests(bus):
    d = db_dir(bus)
    return {n: hashlib.sha256(open(os.path.join(d, n), "rb").read()).hexdigest() for n in os.listdir(d)}


def restart(bus, daemon):
    daemon.stop()
    bus.wait_for_name_gone(dh.DOCS_NAME)
    subprocess.run(["fusermount3", "-u", "-z", dh.mountpoint(bus)], stderr=subprocess.DEVNULL)
    return dh.start(bus)


def info(bus, doc):
    path, perms = dh.docs(bus, "Info", (doc,), "(s)")
    return bytes(path).rstrip(b"\0").decode(), perms


def by_app(bus, doc, name):
    return read(f"{dh.mountpoint(bus)}/by-app/{APP}/{doc}/{name}")


@pytest.fixture
def work(bus):
    w = os.path.join(bus.root, "work")
    os.makedirs(w)
    return w


def test_every_layout_is_imported_and_nothing_twice(bus, work):
    files = {n: os.path.join(work, n) for n in ("old.txt", "new.txt", "longer.txt", "wide.txt", "session.txt")}
    for n, p in files.items():
        write(p, f"content of {n}")
    folder = os.path.join(work, "folder")
    os.makedirs(folder)
    write(os.path.join(folder, "inside.txt"), "in the folder")
    rw = {APP: ["read", "write"]}
    main = {
        "docold": entry(doc_data(files["old.txt"]), rw),
        "docnew": entry(doc_data(files["new.txt"], layout="new"), {APP: ["read"], "org.other.App": ["read"]}),
        "doclonger": entry(doc_data(files["longer.txt"], UNIQUE, layout="longer"), rw),
        # A later version's entry with one more member around the data too.
        "docwide": entry(doc_data(files["wide.txt"], layout="new"), rw, (GLib.Variant("u", 7),)),
        "docfolder": entry(doc_data(folder, DIRECTORY, layout="new"), rw),
        "docsession": entry(doc_data(files["session.txt"], TRANSIENT, layout="new"), rw),
        # Not readable by this version: a layout it does not know, an impossible path, a
        # value outside the file.
        "docunknown": entry(GLib.Variant("a{sv}", {"path": GLib.Variant("s", files["old.txt"])}), rw),
        "docrelative": entry(GLib.Variant("(ayttuay)", (b"relative/x.txt\0", 1, 2, 0, b"")), rw),
        "docdamaged": Damaged(),
    }
    write_table(os.path.join(db_dir(bus), "documents"), main, {APP: GLib.Variant("as", list(main))})
    write_table(os.path.join(db_dir(bus), "devices"), {
        "camera": entry(GLib.Variant("s", "cam"), {APP: ["yes"]}),
        "speakers": entry(GLib.Variant("s", "spk"), {APP: ["no"]}, (GLib.Variant("s", "later"),)),
    })
    before = digests(bus)

    d = dh.start(bus)
    out = d.output()
    assert info(bus, "docold") == (files["old.txt"], rw)
    assert info(bus, "docnew") == (files["new.txt"], {APP: ["read"], "org.other.App": ["read"]})
    assert info(bus, "doclonger") == (files["longer.txt"], rw)
    assert info(bus, "docwide") == (files["wide.txt"], rw)
    assert info(bus, "docfolder") == (folder, rw)
    # Lookup finds what was made with reuse (the unique one is never found by its path).
    assert dh.docs(bus, "Lookup", (files["new.txt"].encode() + b"\0",), "(ay)") == ("docnew",)
    assert dh.docs(bus, "Lookup", (files["longer.txt"].encode() + b"\0",), "(ay)") == ("",)
    for doc, name in (("docold", "old.txt"), ("docnew", "new.txt"), ("doclonger", "longer.txt"),
                      ("docwide", "wide.txt")):
        assert by_app(bus, doc, name) == f"content of {name}"
    assert by_app(bus, "docfolder", "folder/inside.txt") == "in the folder"
    for doc in ("docsession", "docunknown", "docrelative", "docdamaged"):
        assert dh.error_name(dh.docs, bus, "Info", (doc,), "(s)") == NF, doc
    assert dh.ps(bus, "Lookup", ("devices", "camera"), "(ss)") == ({APP: ["yes"]}, "cam")
    assert dh.ps(bus, "Lookup", ("devices", "speakers"), "(ss)") == ({APP: ["no"]}, "spk")
    # The log says what was imported and what was not, why, and which ids.
    assert "documents: 5 imported, 1 session-only documents left out, 3 not imported\n" in out, out
    assert "in a layout this version does not know; tried again at the next start: docunknown (document data" \
        " of type a{sv})" in out, out
    assert "docrelative (its path is not an absolute file name)" in out and \
        "docdamaged (its value cannot be read)" in out, out
    extra = out.split("2 documents read with members or flags this version leaves out: ")[1].split("\n")[0]
    assert sorted(extra.split(", ")) == ["doclonger", "docwide"], out
    assert "devices: 2 imported\n" in out, out

    # What the user changes here stays changed: nothing is imported twice.
    dh.docs(bus, "Delete", ("docold",), "(s)")
    dh.docs(bus, "RevokePermissions", ("docnew", "org.other.App", ["read"]), "(ssas)")
    dh.ps(bus, "SetPermission", ("devices", False, "camera", APP, ["no"]), "(sbssas)")
    d = restart(bus, d)
    assert dh.error_name(dh.docs, bus, "Info", ("docold",), "(s)") == NF
    assert info(bus, "docnew")[1] == {APP: ["read"]}
    assert dh.ps(bus, "GetPermission", ("devices", "camera", APP), "(sss)") == (["no"],)
    assert sorted(dh.docs(bus, "List", ("",), "(s)")[0]) == ["docfolder", "doclonger", "docnew", "docwide"]
    # Only the three entries it could not read are tried again, and still not imported.
    out = d.output()
    assert "documents: 0 imported, 6 read at an earlier start, 3 not imported\n" in out, out
    assert "Reference table devices" not in out, out
    # The reference's files are never written (the only new file is none: all were there).
    assert digests(bus) == before


def test_an_unreadable_table_and_unread_entries_are_tried_again(bus, work):
    f = os.path.join(work, "a.txt")
    g = os.path.join(work, "b.txt")
    write(f, "first")
    write(g, "second")
    table = os.path.join(db_dir(bus), "documents")
    main = {"doca": entry(doc_data(f, layout="new"), {APP: ["read"]})}
    write_table(table, main)
    # First start: the file is cut short, as a copy taken while the reference wrote it.
    full = open(table, "rb").read()
    with open(table, "wb") as out:
        out.write(full[:len(full) // 2])
    d = dh.start(bus)
    assert dh.error_name(dh.docs, bus, "Info", ("doca",), "(s)") == NF
    first = d.output()

    # Readable now, with an entry in a layout this version does not know.
    main["docb"] = entry(GLib.Variant("(sttu)", (g, 1, 2, 0)), {APP: ["read"]})
    write_table(table, main)
    d = restart(bus, d)
    assert info(bus, "doca") == (f, {APP: ["read"]})
    assert by_app(bus, "doca", "a.txt") == "first"
    assert "Cannot read the reference table" in first and "tried again at the next start" in first, first
    assert dh.error_name(dh.docs, bus, "Info", ("docb",), "(s)") == NF
    dh.docs(bus, "Delete", ("doca",), "(s)")

    # The reference rewrote the table (the user went back to it for a while): the entry it
    # did not read is read now, the one deleted here is not brought back.
    main["docb"] = entry(doc_data(g, layout="new"), {APP: ["read", "write"]})
    write_table(table, main)
    d = restart(bus, d)
    assert info(bus, "docb") == (g, {APP: ["read", "write"]})
    assert by_app(bus, "docb", "b.txt") == "second"
    assert dh.error_name(dh.docs, bus, "Info", ("doca",), "(s)") == NF
    # Fully read and unchanged since: not read again (no log line about it at all).
    d = restart(bus, d)
    assert "Reference table documents" not in d.output()


@pytest.mark.skipif(not can_open_handles(), reason="open_by_handle_at needs CAP_DAC_READ_SEARCH")
def test_a_moved_folder_is_found_by_its_handle(bus, work):
    old_folder = os.path.join(work, "Projects")
    os.makedirs(old_folder)
    f = os.path.join(old_folder, "plan.txt")
    write(f, "the plan")
    if folder_handle(old_folder) is None:
        pytest.skip("no AT_HANDLE_FID identifiers on this kernel or filesystem")
    gone_folder = os.path.join(work, "Gone")
    os.makedirs(gone_folder)
    lost = os.path.join(gone_folder, "lost.txt")
    write(lost, "lost")
    stays = os.path.join(work, "stays.txt")
    write(stays, "moved after the import")
    main = {"docmoved": entry(doc_data(f, layout="new"), {APP: ["read"]}),
            "doclost": entry(doc_data(lost, layout="new"), {APP: ["read"]}),
            "docstays": entry(doc_data(stays, layout="new"), {APP: ["read"]})}
    write_table(os.path.join(db_dir(bus), "documents"), main)
    # After the reference recorded them: one folder renamed, the other deleted.
    new_folder = os.path.join(work, "Archive", "Projects-2024")
    os.makedirs(os.path.dirname(new_folder))
    os.rename(old_folder, new_folder)
    shutil.rmtree(gone_folder)

    d = dh.start(bus)
    assert info(bus, "docmoved") == (os.path.join(new_folder, "plan.txt"), {APP: ["read"]})
    assert by_app(bus, "docmoved", "plan.txt") == "the plan"
    # Not found anywhere: kept with its recorded path (a drive that is not mounted comes back).
    assert info(bus, "doclost") == (lost, {APP: ["read"]})
    out = d.output()
    assert "1 documents found again through the file handle of their folder, which moved: docmoved" in out, out
    assert "not at their recorded path, kept with it (on a drive not mounted now?): doclost" in out, out
    # An imported document carries its file's own handle, as ours do: moved on the host
    # after the import (before anything opened it), it is still found.
    os.makedirs(os.path.join(work, "elsewhere"))
    os.rename(stays, os.path.join(work, "elsewhere", "stays.txt"))
    assert by_app(bus, "docstays", "stays.txt") == "moved after the import"
    assert info(bus, "docstays")[0] == os.path.join(work, "elsewhere", "stays.txt")


@pytest.mark.skipif(not os.path.exists(REF_PERMISSION_STORE), reason="no reference permission store installed")
def test_the_writer_writes_what_the_reference_reads(bus, work):
    """The test's GVDB writer is checked by the reference's own reader."""
    f = os.path.join(work, "x.txt")
    write(f, "x")
    data = doc_data(f, layout="new")
    write_table(os.path.join(db_dir(bus), "documents"), {"docx": entry(data, {APP: ["read"]}),
                                                         "docy": entry(doc_data(f), {})})
    ref = subprocess.Popen([REF_PERMISSION_STORE, "--replace"], env=bus.env, stdout=subprocess.DEVNULL,
                           stderr=subprocess.DEVNULL)
    try:
        bus.wait_for_name(dh.PS_NAME)
        perms, value = dh.ps(bus, "Lookup", ("documents", "docx"), "(ss)")
        assert perms == {APP: ["read"]}
        assert value == data.unpack()
        assert sorted(dh.ps(bus, "List", ("documents",), "(s)")[0]) == ["docx", "docy"]
    finally:
        ref.terminate()
        ref.wait(10)


def test_a_long_import_says_how_far_it_got(bus, work):
    """The one-time import of a big table (years of use leave tens of thousands of entries)
    logs its progress as it goes; every entry is served at once, also while the import still
    runs in steps from the main loop (a call brings in the entry it asks for)."""
    n = 30000   # more than the import takes in before the names are owned
    write_table(os.path.join(db_dir(bus), "big"),
                {f"e{i}": entry(GLib.Variant("b", True), {APP: ["yes"]}) for i in range(n)})
    # An imported entry was there before (read lazily): no Changed for it; a write is one.
    changed = []
    bus.conn.signal_subscribe(None, dh.PS_IFACE, "Changed", dh.PS_PATH, None, 0,
                              lambda *a: changed.append(a[5].unpack()[:2]))
    # Paused steps (a test hook): most of the import runs after the names are owned.
    d = dh.start(bus, env={"LIMEN_TEST_IMPORT_STEP_PAUSE_MS": "25"}, wait_mount=False)
    for i in (n - 1, 0, n // 2):
        assert dh.ps(bus, "Lookup", ("big", f"e{i}"), "(ss)")[0] == {APP: ["yes"]}
    dh.ps(bus, "SetPermission", ("big", False, "e7", "org.example.Other", ["no"]), "(sbssas)")
    # A listing waits for the rest of its table.
    assert len(dh.ps(bus, "List", ("big",), "(s)")[0]) == n
    deadline = time.monotonic() + 120
    while ("in the background" in d.output() and "The reference state is imported" not in d.output()
           and time.monotonic() < deadline):
        time.sleep(0.05)
    assert f"Reference table big: {n} entries looked at" in d.output()
    assert f"Reference table big: {n} imported" in d.output()
    limentest.pump(0.5)
    assert changed == [("big", "e7")], changed[:5]
