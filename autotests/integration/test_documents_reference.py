"""The whole document mount of limen-documents compared with the reference document
portal (Debian's xdg-document-portal 1.16), each run on a private bus of its own: modes,
link counts, sizes and listings of every kind of entry, and the errno of every operation
(create, mkdir, rename, unlink, link, symlink, mknod, setattr, xattrs) in the host view
(doc/DOCID/NAME) and an app's view (by-app/APPID/DOCID/NAME).

They must agree except where Limen is deliberately different; DIFFERENCES lists each with
both answers, and document-fuse/README.md says why. A difference that is not listed fails
the test, and so does a listed one that went away. Run as a script, it prints the table."""

import errno
import json
import os
import stat
import sys
import time

import pytest

import documents_helpers as dh
import limentest

APP = "org.example.App"
REFERENCE = "/usr/libexec/xdg-document-portal"

# key: (limen's answer, the reference's answer)
DIFFERENCES = {
    # Ownership is not changed through the mount (the reference passes a chown on to the
    # host file, so a caller running as root gives it away); a chown to its owner is a no-op.
    "host file: chown to another user": ("EPERM", "ok"),
    "app file: chown to another user": ("EPERM", "ok"),
    # The reference's daemon dies on a truncate by path (no open file): ECONNABORTED, and
    # its mount is gone. Limen truncates.
    "host truncate: truncate by path": ("ok", "ECONNABORTED"),
    "app truncate: truncate by path": ("ok", "ECONNABORTED"),
    # (after it, the dead mount answers ENOTCONN, or ENOENT once fusermount's auto_unmount
    # has taken it away: which one depends on timing)
    "host truncate: size after": (5, ("ENOTCONN", "ENOENT")),
    "app truncate: size after": (5, ("ENOTCONN", "ENOENT")),
    # Limen shows where the file is on the host in user.document-portal.host-path (newer
    # reference versions have that too).
    "host file: getxattr host path": ("ROOT/work/doc.txt", "ENODATA"),
    "app file: getxattr host path": ("ROOT/work/doc.txt", "ENODATA"),
    # statfs answers with the host filesystem's figures (df, free-space checks before a
    # save); the reference refuses it.
    "statvfs f_namemax": (255, "EPERM"),
}


def errname(fn):
    try:
        r = fn()
        return "ok" if r is None else r
    except OSError as x:
        return errno.errorcode.get(x.errno, str(x.errno))


def lstat(p):
    try:
        s = os.lstat(p)
    except OSError as x:
        return errno.errorcode[x.errno]
    return {"mode": oct(s.st_mode), "nlink": s.st_nlink, "size": s.st_size if stat.S_ISREG(s.st_mode) else "dir",
            "owner": s.st_uid == os.getuid() and s.st_gid == os.getgid()}


def dirs(ctx):
    m, doc = ctx["mnt"], ctx["doc"]
    return [("root", m), ("by-app", f"{m}/by-app"), ("by-app/APP", f"{m}/by-app/{APP}"),
            ("host doc dir", f"{m}/{doc}"), ("app doc dir", f"{m}/by-app/{APP}/{doc}")]


def phase_layout(ctx):
    m, doc, r = ctx["mnt"], ctx["doc"], {}
    for label, d in dirs(ctx):
        r[f"stat {label}"] = lstat(d)
        r[f"access {label} W"] = os.access(d, os.W_OK)
    for label, d in [("host", f"{m}/{doc}"), ("app", f"{m}/by-app/{APP}/{doc}")]:
        r[f"stat {label} file"] = lstat(f"{d}/doc.txt")
        r[f"access {label} file R"] = os.access(f"{d}/doc.txt", os.R_OK)
        r[f"access {label} file W"] = os.access(f"{d}/doc.txt", os.W_OK)
        r[f"access {label} file X"] = os.access(f"{d}/doc.txt", os.X_OK)
    r["listdir root"] = errname(lambda: sorted(x.replace(doc, "DOC") for x in os.listdir(m)))
    r["listdir by-app"] = errname(lambda: sorted(os.listdir(f"{m}/by-app")))
    r["listdir by-app/APP"] = errname(lambda: [x.replace(doc, "DOC") for x in os.listdir(f"{m}/by-app/{APP}")])
    r["listdir host doc dir"] = errname(lambda: os.listdir(f"{m}/{doc}"))
    r["listdir app doc dir"] = errname(lambda: os.listdir(f"{m}/by-app/{APP}/{doc}"))
    r["stat missing document"] = lstat(f"{m}/zzzzzzzz")
    r["stat invalid app id"] = lstat(f"{m}/by-app/not-an-app")
    r["statvfs f_namemax"] = errname(lambda: os.statvfs(m).f_namemax)
    return r


def phase_dir_ops(ctx):
    r = {}
    for label, d in dirs(ctx):
        r[f"{label}: create"] = errname(lambda: os.close(os.open(f"{d}/new.txt", os.O_CREAT | os.O_WRONLY, 0o644)))
        r[f"{label}: unlink created"] = errname(lambda: os.unlink(f"{d}/new.txt"))
        r[f"{label}: mkdir"] = errname(lambda: os.mkdir(f"{d}/newdir"))
        r[f"{label}: rmdir missing"] = errname(lambda: os.rmdir(f"{d}/newdir"))
        r[f"{label}: symlink"] = errname(lambda: os.symlink("/etc/passwd", f"{d}/sl"))
        r[f"{label}: mkfifo"] = errname(lambda: os.mkfifo(f"{d}/fifo"))
        r[f"{label}: chmod"] = errname(lambda: os.chmod(d, 0o755))
        r[f"{label}: utime"] = errname(lambda: os.utime(d))
        r[f"{label}: setxattr"] = errname(lambda: os.setxattr(d, "user.x", b"1"))
        r[f"{label}: listxattr"] = errname(lambda: os.listxattr(d))
        r[f"{label}: getxattr"] = errname(lambda: os.getxattr(d, "user.x"))
    return r


def file_ops(ctx, view):
    m, doc, work, r = ctx["mnt"], ctx["doc"], ctx["work"], {}
    d = f"{m}/{doc}" if view == "host" else f"{m}/by-app/{APP}/{doc}"
    f = f"{d}/doc.txt"
    p = f"{view} file: "
    r[p + "link"] = errname(lambda: os.link(f, f"{d}/hard"))
    r[p + "link into the root"] = errname(lambda: os.link(f, f"{m}/hard"))
    r[p + "rename out of the mount"] = errname(lambda: os.rename(f, f"{work}/out"))
    r[p + "chmod"] = errname(lambda: os.chmod(f, 0o600))
    r[p + "mode after chmod"] = errname(lambda: oct(os.stat(f).st_mode))
    r[p + "chmod back"] = errname(lambda: os.chmod(f, 0o644))
    r[p + "chown to the owner"] = errname(lambda: os.chown(f, os.getuid(), os.getgid()))
    r[p + "utime"] = errname(lambda: os.utime(f, (1, 1)))
    r[p + "setxattr user"] = errname(lambda: os.setxattr(f, "user.x", b"1"))
    r[p + "getxattr user"] = errname(lambda: os.getxattr(f, "user.x"))
    r[p + "listxattr has user.x"] = errname(lambda: "user.x" in os.listxattr(f))
    r[p + "removexattr user"] = errname(lambda: os.removexattr(f, "user.x"))
    r[p + "removexattr missing"] = errname(lambda: os.removexattr(f, "user.x"))
    r[p + "setxattr trusted"] = errname(lambda: os.setxattr(f, "trusted.x", b"1"))
    r[p + "getxattr host path"] = errname(lambda: os.getxattr(f, "user.document-portal.host-path"))
    r[p + "open O_DIRECTORY"] = errname(lambda: os.close(os.open(f, os.O_RDONLY | os.O_DIRECTORY)))
    r[p + "readlink"] = errname(lambda: os.readlink(f))
    r[p + "rmdir"] = errname(lambda: os.rmdir(f))
    r[p + "unlink missing"] = errname(lambda: os.unlink(f"{d}/missing"))
    r[p + "rename missing"] = errname(lambda: os.rename(f"{d}/missing", f"{d}/x"))
    r[p + "rmdir the document dir"] = errname(lambda: os.rmdir(d))
    r[p + "rename the document dir"] = errname(lambda: os.rename(d, d + "x"))
    r[p + "rename to another name"] = errname(lambda: os.rename(f, f"{d}/renamed"))
    r[p + "rename back"] = errname(lambda: os.rename(f"{d}/renamed", f))
    r[p + "chown to another user"] = errname(lambda: os.chown(f, 65534, 65534))
    r[p + "still readable"] = errname(lambda: open(f).read())
    return r


def phase_host_file(ctx):
    return file_ops(ctx, "host")


def phase_app_file(ctx):
    return file_ops(ctx, "app")


def truncate(ctx, view):
    m, doc = ctx["mnt"], ctx["doc"]
    f = f"{m}/{doc}/doc.txt" if view == "host" else f"{m}/by-app/{APP}/{doc}/doc.txt"
    return {f"{view} truncate: truncate by path": errname(lambda: os.truncate(f, 5)),
            f"{view} truncate: size after": errname(lambda: os.stat(f).st_size)}


def phase_host_truncate(ctx):
    return truncate(ctx, "host")


def phase_app_truncate(ctx):
    return truncate(ctx, "app")


PHASES = [phase_layout, phase_dir_ops, phase_host_file, phase_app_file, phase_host_truncate, phase_app_truncate]


def session(which, phase):
    """@phase on a fresh bus with @which serving, one document (rw for APP) in it."""
    bus = limentest.Bus()
    try:
        if which == "limen":
            dh.start(bus)
        else:
            bus.start(["/usr/libexec/xdg-permission-store", "--replace"], wait_name=dh.PS_NAME)
            bus.start([REFERENCE, "--replace"], wait_name=dh.DOCS_NAME)
            deadline = time.time() + 10
            while not dh.is_mounted(dh.mountpoint(bus)):
                assert time.time() < deadline, "reference mount did not appear"
                time.sleep(0.01)
        work = os.path.join(bus.root, "work")
        os.makedirs(work)
        f = os.path.join(work, "doc.txt")
        with open(f, "w") as fh:
            fh.write("hello, world")
        os.chmod(f, 0o644)
        doc = dh.add(bus, f)
        dh.docs(bus, "GrantPermissions", (doc, APP, ["read", "write"]), "(ssas)")
        r = phase({"bus": bus, "mnt": dh.mountpoint(bus), "doc": doc, "work": work})
        return json.loads(json.dumps(r, default=lambda o: o.decode() if isinstance(o, bytes) else str(o)).replace(doc, "DOC").replace(bus.root, "ROOT"))
    finally:
        bus.close()


def compare():
    rows = []
    for phase in PHASES:
        ours, ref = session("limen", phase), session("reference", phase)
        for k in ours:
            rows.append((k, ours[k], ref.get(k)))
    return rows


@pytest.mark.skipif(not os.path.exists(REFERENCE), reason="no reference document portal installed")
def test_mount_matches_the_reference():
    rows = compare()
    def listed(k, a, b):
        want = DIFFERENCES.get(k)
        return want is not None and want[0] == a and (b in want[1] if isinstance(want[1], tuple) else want[1] == b)

    unexpected = [f"{k}: limen {a!r}, reference {b!r}" for k, a, b in rows if a != b and not listed(k, a, b)]
    gone = [k for k, a, b in rows if k in DIFFERENCES and a == b]
    assert not unexpected, "differences from the reference:\n" + "\n".join(unexpected)
    assert not gone, "listed differences that are gone (update DIFFERENCES and the README): " + ", ".join(gone)
    assert {k for k, _, _ in rows} >= set(DIFFERENCES)


if __name__ == "__main__":
    for k, a, b in compare():
        mark = "  " if a == b else ("ok" if DIFFERENCES.get(k) == (a, b) else "!!")
        print(f"{mark} {k:44} limen={a}  reference={b}")
