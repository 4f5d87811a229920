#!/usr/bin/python3
"""The permission store, against the installed limen-documents (started by the bus from the
installed org.freedesktop.impl.portal.PermissionStore.service): set, look up, the Changed
signal, list, delete."""

import time

from limen_installed import PERMISSION_STORE, GLib, main, remote_error

IFACE = "org.freedesktop.impl.portal.PermissionStore"
TABLE = "limen-installed-test"


def set_and_lookup(s):
    s.call(PERMISSION_STORE, IFACE, "SetPermission", (TABLE, True, "res1", "org.example.App", ["yes"]), "(sbssas)")
    s.assert_activated_from_install(PERMISSION_STORE[0], "limen-documents")
    perms, data = s.call(PERMISSION_STORE, IFACE, "Lookup", (TABLE, "res1"), "(ss)")
    assert perms == {"org.example.App": ["yes"]}, perms


def changed_signal(s):
    seen = []
    sub = s.conn.signal_subscribe(PERMISSION_STORE[0], IFACE, "Changed", PERMISSION_STORE[1], None, 0,
                                  lambda *a: seen.append(a[5].unpack()))
    try:
        s.call(PERMISSION_STORE, IFACE, "SetPermission", (TABLE, True, "res1", "org.example.Other", ["no"]),
               "(sbssas)")
        ctx = GLib.MainContext.default()
        deadline = time.monotonic() + 10
        while not seen and time.monotonic() < deadline:
            while ctx.pending():
                ctx.iteration(False)
            time.sleep(0.01)
    finally:
        s.conn.signal_unsubscribe(sub)
    table, resource, deleted, data, perms = seen[0]
    assert (table, resource, deleted) == (TABLE, "res1", False)
    assert perms == {"org.example.App": ["yes"], "org.example.Other": ["no"]}, perms


def list_and_delete(s):
    assert s.call(PERMISSION_STORE, IFACE, "List", (TABLE,), "(s)")[0] == ["res1"]
    s.call(PERMISSION_STORE, IFACE, "Delete", (TABLE, "res1"), "(ss)")
    try:
        s.call(PERMISSION_STORE, IFACE, "Lookup", (TABLE, "res1"), "(ss)")
    except GLib.Error as e:
        assert remote_error(e) == "org.freedesktop.portal.Error.NotFound", e.message
    else:
        raise AssertionError("a deleted resource was found")


if __name__ == "__main__":
    main([
        ("SetPermission and Lookup, activated", set_and_lookup),
        ("Changed", changed_signal),
        ("List and Delete", list_and_delete),
    ])
