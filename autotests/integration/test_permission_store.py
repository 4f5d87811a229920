"""limen-documents: org.freedesktop.impl.portal.PermissionStore v2 on a private bus."""

import hashlib
import os
import shutil
import subprocess
import time

import pytest
from gi.repository import GLib

import documents_helpers as dh
import limentest


def test_round_trip_and_changed_signal(bus):
    dh.start(bus)
    seen = []
    bus.conn.signal_subscribe(dh.PS_NAME, dh.PS_IFACE, "Changed", dh.PS_PATH, None, 0,
                              lambda *a: seen.append(a[5].unpack()))
    assert dh.ps(bus, "Get" if False else "List", ("devices",), "(s)") == ([],)
    dh.ps(bus, "Set", ("devices", True, "camera", {"org.a.App": ["yes"], "org.b.App": ["no"]},
                       GLib.Variant("v", GLib.Variant("s", "x"))), "(sbsa{sas}v)")
    perms, data = dh.ps(bus, "Lookup", ("devices", "camera"), "(ss)")
    assert perms == {"org.a.App": ["yes"], "org.b.App": ["no"]}
    assert data == "x"
    dh.ps(bus, "SetPermission", ("devices", False, "camera", "org.c.App", ["ask"]), "(sbssas)")
    assert dh.ps(bus, "GetPermission", ("devices", "camera", "org.c.App"), "(sss)") == (["ask"],)
    assert dh.ps(bus, "GetPermission", ("devices", "camera", "org.none.App"), "(sss)") == ([],)
    dh.ps(bus, "DeletePermission", ("devices", "camera", "org.a.App"), "(sss)")
    dh.ps(bus, "SetValue", ("devices", False, "camera", GLib.Variant("v", GLib.Variant("u", 7))), "(sbsv)")
    perms, data = dh.ps(bus, "Lookup", ("devices", "camera"), "(ss)")
    assert perms == {"org.b.App": ["no"], "org.c.App": ["ask"]} and data == 7
    assert dh.ps(bus, "List", ("devices",), "(s)") == (["camera"],)
    dh.ps(bus, "Delete", ("devices", "camera"), "(ss)")
    assert dh.error_name(dh.ps, bus, "Lookup", ("devices", "camera"), "(ss)") == \
        "org.freedesktop.portal.Error.NotFound"
    assert limentest.wait_until(lambda: len(seen) >= 5)
    assert seen[-1][0:3] == ("devices", "camera", True)
    assert bus.get_property(dh.PS_IFACE, "version", dest=dh.PS_NAME, path=dh.PS_PATH) == 2


def test_no_permission_is_no_row(bus):
    """As in the reference, an app given an empty list of permissions (by Set or
    SetPermission) has no row in the entry: Lookup does not list it."""
    dh.start(bus)
    v = GLib.Variant("s", "z")
    dh.ps(bus, "Set", ("t", True, "id", {"org.x.App": [], "org.y.App": ["no"]}, v), "(sbsa{sas}v)")
    assert dh.ps(bus, "Lookup", ("t", "id"), "(ss)") == ({"org.y.App": ["no"]}, "z")
    assert dh.ps(bus, "GetPermission", ("t", "id", "org.x.App"), "(sss)") == ([],)
    dh.ps(bus, "SetPermission", ("t", False, "id", "org.y.App", []), "(sbssas)")
    assert dh.ps(bus, "Lookup", ("t", "id"), "(ss)") == ({}, "z")
    dh.ps(bus, "SetPermission", ("t", True, "new", "org.z.App", []), "(sbssas)")
    assert dh.ps(bus, "Lookup", ("t", "new"), "(ss)")[0] == {}
    assert sorted(dh.ps(bus, "List", ("t",), "(s)")[0]) == ["id", "new"]


@pytest.mark.parametrize("apps, ok", [
    ({"a" * 1025: ["yes"]}, False),
    ({"org.a.App": ["p" * 257]}, False),
    ({"org.a.App": ["x"] * 257}, False),
    ({"org.a.App": ["yes"], "b" * 1025: []}, False),
    ({"a" * 1024: ["p" * 256] * 256}, True),
])
def test_set_limits(bus, apps, ok):
    """Set checks every app row (length of the app id, of each permission, their number)
    and writes nothing when one is out of bounds."""
    dh.start(bus)
    v = GLib.Variant("v", GLib.Variant("b", True))
    err = dh.error_name(dh.ps, bus, "Set", ("limits", True, "id", apps, v), "(sbsa{sas}v)")
    if ok:
        assert err is None
        assert dh.ps(bus, "Lookup", ("limits", "id"), "(ss)")[0] == apps
    else:
        assert err == "org.freedesktop.portal.Error.InvalidArgument"
        assert dh.error_name(dh.ps, bus, "Lookup", ("limits", "id"), "(ss)") == \
            "org.freedesktop.portal.Error.NotFound"


def test_missing_entries(bus):
    dh.start(bus)
    nf = "org.freedesktop.portal.Error.NotFound"
    assert dh.error_name(dh.ps, bus, "Set", ("t", False, "x", {}, GLib.Variant("v", GLib.Variant("b", True))),
                         "(sbsa{sas}v)") == nf
    assert dh.error_name(dh.ps, bus, "SetPermission", ("t", False, "x", "org.a.App", ["yes"]), "(sbssas)") == nf
    assert dh.error_name(dh.ps, bus, "Delete", ("t", "x"), "(ss)") == nf
    assert dh.error_name(dh.ps, bus, "GetPermission", ("t", "x", "org.a.App"), "(sss)") == nf
    assert dh.error_name(dh.ps, bus, "DeletePermission", ("t", "x", "org.a.App"), "(sss)") == nf


@pytest.mark.parametrize("table", ["../../../x", "a/b", "", "..", "x" * 200, "a\nb", "/abs"])
def test_bad_table_names(bus, table):
    dh.start(bus)
    for method, args, sig in [
            ("Set", (table, True, "id", {"org.a.App": ["yes"]}, GLib.Variant("v", GLib.Variant("b", True))),
             "(sbsa{sas}v)"),
            ("SetPermission", (table, True, "id", "org.a.App", ["yes"]), "(sbssas)"),
            ("Lookup", (table, "id"), "(ss)"),
            ("List", (table,), "(s)")]:
        assert dh.error_name(dh.ps, bus, method, args, sig) == "org.freedesktop.portal.Error.InvalidArgument"
    # Nothing was written anywhere but the database, and the daemon still serves.
    assert not os.path.exists(os.path.join(bus.root, "x"))
    assert dh.ps(bus, "List", ("ok",), "(s)") == ([],)


@pytest.mark.parametrize("ident", ["", "..", "a/../b", "/etc/passwd", "x" * 5000])
def test_bad_ids(bus, ident):
    dh.start(bus)
    assert dh.error_name(dh.ps, bus, "SetPermission", ("t", True, ident, "org.a.App", ["yes"]), "(sbssas)") == \
        "org.freedesktop.portal.Error.InvalidArgument"


def test_content_type_ids_are_fine(bus):
    # desktop-used-apps uses content types as ids
    dh.start(bus)
    dh.ps(bus, "SetPermission", ("desktop-used-apps", True, "text/plain", "org.a.App", ["org.b.App", "3"]),
          "(sbssas)")
    assert dh.ps(bus, "GetPermission", ("desktop-used-apps", "text/plain", "org.a.App"), "(sss)") == \
        (["org.b.App", "3"],)


def test_sandboxed_caller_reads_only_its_own(bus):
    dh.start(bus)
    dh.ps(bus, "Set", ("devices", True, "camera", {"org.example.App": ["yes"], "org.other.App": ["no"]},
                       GLib.Variant("v", GLib.Variant("s", "secret"))), "(sbsa{sas}v)")
    dh.ps(bus, "SetPermission", ("devices", True, "microphone", "org.other.App", ["yes"]), "(sbssas)")
    out = dh.run_in_sandbox(bus, "org.example.App", r'''
out["set"] = ps("SetPermission", "(sbssas)", ("devices", True, "camera", "org.example.App", ["yes"]))
out["grant_self"] = ps("SetPermission", "(sbssas)", ("devices", True, "speaker", "org.example.App", ["yes"]))
out["delete"] = ps("Delete", "(ss)", ("devices", "camera"))
out["setvalue"] = ps("SetValue", "(sbsv)", ("devices", True, "camera", GLib.Variant("b", True)))
out["lookup"] = ps("Lookup", "(ss)", ("devices", "camera"))
out["lookup_other"] = ps("Lookup", "(ss)", ("devices", "microphone"))
out["get_other"] = ps("GetPermission", "(sss)", ("devices", "camera", "org.other.App"))
out["get_own"] = ps("GetPermission", "(sss)", ("devices", "camera", "org.example.App"))
out["list"] = ps("List", "(s)", ("devices",))
''')
    na = "org.freedesktop.portal.Error.NotAllowed"
    for k in ("set", "grant_self", "delete", "setvalue"):
        assert out[k] == ["error", na], k
    assert out["lookup"][0] == "ok"
    perms, data = out["lookup"][1]
    assert perms == {"org.example.App": ["yes"]} and data == {}
    assert out["lookup_other"] == ["error", "org.freedesktop.portal.Error.NotFound"]
    assert out["get_other"] == ["error", na]
    assert out["get_own"] == ["ok", [["yes"]]]
    assert out["list"] == ["ok", [["camera"]]]
    perms, _ = dh.ps(bus, "Lookup", ("devices", "camera"), "(ss)")
    assert perms == {"org.example.App": ["yes"], "org.other.App": ["no"]}
    assert dh.error_name(dh.ps, bus, "Lookup", ("devices", "speaker"), "(ss)") == \
        "org.freedesktop.portal.Error.NotFound"


def test_twenty_thousand_apps(bus):
    """A big entry goes through the store's one-walk serializer and its background frees:
    the Changed signal, Lookup and a restart all give back what was Set (an app given an
    empty list has no row, as in the reference)."""
    d = dh.start(bus)
    seen = []
    bus.conn.signal_subscribe(dh.PS_NAME, dh.PS_IFACE, "Changed", dh.PS_PATH, None, 0,
                              lambda *a: seen.append(a[5].unpack()))
    shapes = (["yes"], [], ["ask", "x" * 200], ["p"] * 40)
    apps = {f"org.example.App{i}" + ("" if i % 7 else ".Longer.Name"): shapes[i % 4] for i in range(20000)}
    t0 = time.monotonic()
    dh.ps(bus, "Set", ("big", True, "entry", apps, GLib.Variant("v", GLib.Variant("b", True))), "(sbsa{sas}v)",
          timeout=60000)
    t1 = time.monotonic()
    perms, _ = dh.ps(bus, "Lookup", ("big", "entry"), "(ss)", timeout=60000)
    t2 = time.monotonic()
    rows = {app: p for app, p in apps.items() if p}
    assert perms == rows and len(rows) == 15000
    assert limentest.wait_until(lambda: seen)
    assert seen[0][:3] == ("big", "entry", False) and seen[0][4] == rows
    dh.ps(bus, "SetPermission", ("big", False, "entry", "org.example.App5", ["no"]), "(sbssas)")
    perms2, _ = dh.ps(bus, "Lookup", ("big", "entry"), "(ss)")
    assert perms2 == dict(rows, **{"org.example.App5": ["no"]})
    assert d.stop() == 0
    bus.wait_for_name_gone(dh.PS_NAME)
    dh.start(bus)
    perms3, data = dh.ps(bus, "Lookup", ("big", "entry"), "(ss)", timeout=60000)
    assert perms3 == perms2 and data is True
    print(f"Set 20000 apps: {(t1 - t0) * 1000:.1f} ms, Lookup: {(t2 - t1) * 1000:.1f} ms")


def test_persistence_across_restart(bus):
    d = dh.start(bus)
    dh.ps(bus, "SetPermission", ("notifications", True, "notification", "org.a.App", ["yes"]), "(sbssas)")
    assert d.stop() == 0
    bus.wait_for_name_gone(dh.PS_NAME)
    dh.start(bus)
    assert dh.ps(bus, "GetPermission", ("notifications", "notification", "org.a.App"), "(sss)") == (["yes"],)


def flatpak(bus, *args):
    return subprocess.run(["flatpak", *args], env=bus.env, capture_output=True, text=True, timeout=30)


def test_flatpak_cli(bus):
    dh.start(bus)
    r = flatpak(bus, "permission-set", "devices", "camera", "org.example.App", "yes")
    assert r.returncode == 0, r.stderr
    r = flatpak(bus, "permissions", "devices")
    assert "org.example.App" in r.stdout and "camera" in r.stdout and "yes" in r.stdout
    assert dh.ps(bus, "GetPermission", ("devices", "camera", "org.example.App"), "(sss)") == (["yes"],)
    # Without a table the CLI lists the tables it finds in $XDG_DATA_HOME/flatpak/db.
    r = flatpak(bus, "permission-show", "org.example.App")
    assert "camera" in r.stdout and "yes" in r.stdout, r.stdout + r.stderr
    r = flatpak(bus, "permissions")
    assert "devices" in r.stdout and "camera" in r.stdout, r.stdout + r.stderr
    r = flatpak(bus, "permission-reset", "org.example.App")
    assert r.returncode == 0, r.stderr
    assert dh.ps(bus, "GetPermission", ("devices", "camera", "org.example.App"), "(sss)") == ([],)
    r = flatpak(bus, "permission-set", "devices", "camera", "org.example.App", "yes")
    r = flatpak(bus, "permission-remove", "devices", "camera", "org.example.App")
    assert r.returncode == 0, r.stderr
    assert dh.ps(bus, "GetPermission", ("devices", "camera", "org.example.App"), "(sss)") == ([],)
    r = flatpak(bus, "permission-remove", "devices", "camera")
    assert r.returncode == 0, r.stderr
    assert dh.ps(bus, "List", ("devices",), "(s)") == ([],)


def test_documents_table_is_the_document_store(bus, tmp_path):
    """The "documents" table is served by the document store: ids, rights and the
    reference's data "(ayttu)"; a change of rights through it reaches the documents at once
    (by-app views included), a document's data and its making stay the Documents API's."""
    dh.start(bus)
    seen = []
    bus.conn.signal_subscribe(dh.PS_NAME, dh.PS_IFACE, "Changed", dh.PS_PATH, None, 0,
                              lambda *a: seen.append(a[5].unpack()))
    f = tmp_path / "a.txt"
    f.write_text("a")
    doc = dh.add_full(bus, [str(f)], 3, "org.a.App", ["read", "write"])[0][0]      # reuse, persistent
    dh.docs(bus, "GrantPermissions", (doc, "org.b.App", ["read"]), "(ssas)")
    t = tmp_path / "t.txt"
    t.write_text("t")
    session_doc = dh.add_full(bus, [str(t)], 0, "org.b.App", ["read"])[0][0]     # unique, this session's
    st = os.stat(f)
    assert sorted(dh.ps(bus, "List", ("documents",), "(s)")[0]) == sorted([doc, session_doc])
    perms, data = dh.ps(bus, "Lookup", ("documents", doc), "(ss)")
    assert perms == {"org.a.App": ["read", "write"], "org.b.App": ["read"]}
    assert (bytes(data[0]).rstrip(b"\0").decode(), data[1], data[2], data[3]) == (str(f), st.st_dev, st.st_ino, 0)
    assert dh.ps(bus, "Lookup", ("documents", session_doc), "(ss)")[1][3] == 1 | 2
    assert dh.ps(bus, "GetPermission", ("documents", doc, "org.b.App"), "(sss)") == (["read"],)
    view = os.path.join(dh.mountpoint(bus), "by-app", "org.b.App", doc, "a.txt")
    assert dh.read(view) == "a"

    # DeletePermission and SetPermission change the document's rights.
    dh.ps(bus, "DeletePermission", ("documents", doc, "org.b.App"), "(sss)")
    assert dh.docs(bus, "Info", (doc,), "(s)")[1] == {"org.a.App": ["read", "write"]}
    with pytest.raises(OSError):
        dh.read(view)
    dh.ps(bus, "SetPermission", ("documents", False, doc, "org.c.App", ["read", "grant-permissions"]), "(sbssas)")
    assert dh.docs(bus, "Info", (doc,), "(s)")[1]["org.c.App"] == ["read", "grant-permissions"]
    # Set with the data Lookup gave (the flatpak CLI's reset): exactly these rights.
    data = GLib.Variant("(ayttu)", data)
    dh.ps(bus, "Set", ("documents", True, doc, {"org.c.App": ["read"]}, data), "(sbsa{sas}v)")
    assert dh.docs(bus, "Info", (doc,), "(s)")[1] == {"org.c.App": ["read"]}

    # What only the Documents API does: the data, and making a document.
    other = GLib.Variant("(ayttu)", (b"/etc/passwd\0", 1, 2, 0))
    for method, args, sig in [
            ("Set", ("documents", False, doc, {"org.c.App": ["read"]}, other), "(sbsa{sas}v)"),
            ("SetValue", ("documents", False, doc, data), "(sbsv)"),
            ("SetPermission", ("documents", True, "abcdefgh", "org.c.App", ["read"]), "(sbssas)")]:
        assert dh.error_name(dh.ps, bus, method, args, sig) == "org.freedesktop.portal.Error.NotAllowed", method
    assert dh.error_name(dh.ps, bus, "SetPermission", ("documents", False, doc, "org.c.App", ["yes"]),
                         "(sbssas)") == "org.freedesktop.portal.Error.InvalidArgument"
    assert dh.error_name(dh.ps, bus, "Lookup", ("documents", "nosuchdoc"), "(ss)") == \
        "org.freedesktop.portal.Error.NotFound"
    assert dh.docs(bus, "Info", (doc,), "(s)")[1] == {"org.c.App": ["read"]}
    assert limentest.wait_until(lambda: len(seen) >= 3)
    assert seen[-1][0:3] == ("documents", doc, False)

    # Delete deletes the document.
    dh.ps(bus, "Delete", ("documents", doc), "(ss)")
    assert dh.error_name(dh.docs, bus, "Info", (doc,), "(s)") == "org.freedesktop.portal.Error.NotFound"
    assert dh.ps(bus, "List", ("documents",), "(s)") == ([session_doc],)


def test_flatpak_cli_resets_an_apps_documents(bus, tmp_path):
    """flatpak permission-show lists an app's documents and permission-reset (as uninstall
    --delete-data does) takes them away at once."""
    if shutil.which("flatpak") is None:
        pytest.skip("flatpak CLI not installed")
    dh.start(bus)
    f = tmp_path / "shared.txt"
    f.write_text("s")
    doc = dh.add_full(bus, [str(f)], 2, "org.example.App", ["read"])[0][0]
    dh.docs(bus, "GrantPermissions", (doc, "org.other.App", ["read"]), "(ssas)")
    r = flatpak(bus, "permission-show", "org.example.App")
    assert r.returncode == 0 and doc in r.stdout and "shared.txt" in r.stdout, r.stdout + r.stderr
    r = flatpak(bus, "permission-reset", "org.example.App")
    assert r.returncode == 0, r.stderr
    assert dh.docs(bus, "Info", (doc,), "(s)")[1] == {"org.other.App": ["read"]}
    assert os.listdir(os.path.join(dh.mountpoint(bus), "by-app", "org.example.App")) == []
    assert doc not in flatpak(bus, "permission-show", "org.example.App").stdout


def test_import_from_reference_permission_store(bus):
    """State written by Debian's xdg-permission-store is imported once, read-only."""
    ref = subprocess.Popen(["/usr/libexec/xdg-permission-store", "--replace"], env=bus.env,
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        bus.wait_for_name(dh.PS_NAME)
        dh.ps(bus, "Set", ("devices", True, "camera", {"org.example.App": ["yes"], "org.other.App": ["no"]},
                           GLib.Variant("v", GLib.Variant("a{sv}", {"k": GLib.Variant("u", 1)}))),
              "(sbsa{sas}v)")
        dh.ps(bus, "SetPermission", ("notifications", True, "notification", "org.example.App", ["no"]),
              "(sbssas)")
    finally:
        ref.terminate()
        ref.wait(10)
    bus.wait_for_name_gone(dh.PS_NAME)
    db = os.path.join(bus.data_home, "flatpak", "db")
    with open(os.path.join(db, "broken"), "wb") as f:
        f.write(b"GVariant\0\0\0\0garbage")
    digests = {n: hashlib.sha256(open(os.path.join(db, n), "rb").read()).hexdigest() for n in os.listdir(db)}
    d = dh.start(bus)
    perms, data = dh.ps(bus, "Lookup", ("devices", "camera"), "(ss)")
    assert perms == {"org.example.App": ["yes"], "org.other.App": ["no"]} and data == {"k": 1}
    assert dh.ps(bus, "GetPermission", ("notifications", "notification", "org.example.App"), "(sss)") == (["no"],)
    assert "broken" in d.output()
    # The reference files are untouched (the only new one is the empty "documents" table the
    # flatpak CLI finds the document store's rights by), and the import runs only once.
    assert digests == {n: hashlib.sha256(open(os.path.join(db, n), "rb").read()).hexdigest()
                       for n in digests}
    assert set(os.listdir(db)) - set(digests) == {"documents"}
    dh.ps(bus, "Delete", ("devices", "camera"), "(ss)")
    d.stop()
    bus.wait_for_name_gone(dh.PS_NAME)
    dh.start(bus)
    assert dh.error_name(dh.ps, bus, "Lookup", ("devices", "camera"), "(ss)") == \
        "org.freedesktop.portal.Error.NotFound"


def test_published_tables_are_empty_for_the_reference(bus):
    """The empty table files written for the flatpak CLI read as empty in the reference."""
    d = dh.start(bus)
    dh.ps(bus, "SetPermission", ("devices", True, "camera", "org.example.App", ["yes"]), "(sbssas)")
    d.stop()
    bus.wait_for_name_gone(dh.PS_NAME)
    assert os.path.exists(os.path.join(bus.data_home, "flatpak", "db", "devices"))
    ref = subprocess.Popen(["/usr/libexec/xdg-permission-store", "--replace"], env=bus.env,
                           stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        bus.wait_for_name(dh.PS_NAME)
        assert dh.ps(bus, "List", ("devices",), "(s)") == ([],)
        assert dh.error_name(dh.ps, bus, "Lookup", ("devices", "camera"), "(ss)") == \
            "org.freedesktop.portal.Error.NotFound"
    finally:
        ref.terminate()
        ref.wait(10)
