#!/usr/bin/python3
"""The document store as apps meet it, against the installed limen-documents (started by the
bus from its installed .service file): a host file exported, granted to an app, read back
through the FUSE mount (by the host and from inside a bwrap Flatpak sandbox), and deleted."""

import os
import shutil
import textwrap

from limen_installed import DOCUMENTS, SkipTest, main

APP = "org.example.Installed"
state = {}


def mount_point(s):
    if not os.path.exists("/dev/fuse"):
        raise SkipTest("no /dev/fuse")
    mount = bytes(s.call(DOCUMENTS, "org.freedesktop.portal.Documents", "GetMountPoint")[0]).rstrip(b"\0").decode()
    assert mount == os.path.join(s.runtime, "doc"), mount
    s.assert_activated_from_install(DOCUMENTS[0], "limen-documents")
    state["mount"] = mount


def need_mount():
    if "mount" not in state:
        raise SkipTest("no document mount")
    return state["mount"]


def add_and_read(s):
    mount = need_mount()
    path = os.path.join(s.home, "letter.txt")
    with open(path, "w") as f:
        f.write("dear app\n")
    fd = os.open(path, os.O_PATH)
    try:
        doc_id = s.call(DOCUMENTS, "org.freedesktop.portal.Documents", "Add", (0, True, True), "(hbb)",
                        fds=[fd])[0]
    finally:
        os.close(fd)
    state["doc"] = doc_id
    with open(os.path.join(mount, doc_id, "letter.txt")) as f:
        assert f.read() == "dear app\n"
    assert s.call(DOCUMENTS, "org.freedesktop.portal.Documents", "Lookup", (path.encode() + b"\0",),
                  "(ay)")[0] == doc_id


def grant_and_read_in_sandbox(s):
    mount = need_mount()
    doc_id = state["doc"]
    s.call(DOCUMENTS, "org.freedesktop.portal.Documents", "GrantPermissions", (doc_id, APP, ["read"]), "(ssas)")
    by_app = os.path.join(mount, "by-app", APP)
    with open(os.path.join(by_app, doc_id, "letter.txt")) as f:
        assert f.read() == "dear app\n"
    if not shutil.which("bwrap"):
        raise SkipTest("bwrap is not installed")
    script = textwrap.dedent(f'''
        import os
        print(open('/run/user/0/doc/{doc_id}/letter.txt').read(), end='')
        try:
            open('/run/user/0/doc/{doc_id}/letter.txt', 'w')
        except PermissionError:
            print('read-only')
    ''')
    r = s.bwrap_app(APP, script, binds=[(by_app, "/run/user/0/doc")])
    assert r.returncode == 0, r.stderr[-2000:]
    assert r.stdout == "dear app\nread-only\n", r.stdout


def delete(s):
    mount = need_mount()
    doc_id = state["doc"]
    s.call(DOCUMENTS, "org.freedesktop.portal.Documents", "Delete", (doc_id,), "(s)")
    assert not os.path.exists(os.path.join(mount, doc_id))
    assert os.path.exists(os.path.join(s.home, "letter.txt"))


if __name__ == "__main__":
    main([
        ("the document store is activated and mounted", mount_point),
        ("Add a host file, read it through the mount", add_and_read),
        ("GrantPermissions, read it as the app in a bwrap sandbox", grant_and_read_in_sandbox),
        ("Delete", delete),
    ], needs=("fusermount3",))
