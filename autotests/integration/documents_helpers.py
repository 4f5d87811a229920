"""Helpers for the limen-documents tests: start the daemon, call Documents and the
PermissionStore, and a prelude for scripts that run inside a bwrap sandbox."""

import os
import signal
import subprocess
import threading
import time

import limentest
from gi.repository import Gio, GLib

DOCS_NAME = "org.freedesktop.portal.Documents"
DOCS_PATH = "/org/freedesktop/portal/documents"
DOCS_IFACE = "org.freedesktop.portal.Documents"
FT_IFACE = "org.freedesktop.portal.FileTransfer"
PS_NAME = "org.freedesktop.impl.portal.PermissionStore"
PS_PATH = "/org/freedesktop/impl/portal/PermissionStore"
PS_IFACE = "org.freedesktop.impl.portal.PermissionStore"

FLAG_REUSE, FLAG_PERSISTENT, FLAG_AS_NEEDED, FLAG_DIRECTORY = 1, 2, 4, 8


def write(path, data):
    """Write the text @data to @path (created or truncated)."""
    with open(path, "w") as f:
        f.write(data)


def read(path):
    """The text in @path."""
    with open(path) as f:
        return f.read()


def mountpoint(bus):
    return os.path.join(bus.runtime_dir, "doc")


def is_mounted(path):
    with open("/proc/self/mountinfo") as f:
        return any(line.split()[4] == path for line in f)


def start(bus, *args, env=None, wait_mount=True):
    """limen-documents on @bus. With @wait_mount, asks where the filesystem is, as flatpak
    does before it starts an app (the first call on Documents mounts it), and returns once
    it is mounted."""
    d = bus.start("limen-documents", "--verbose", *args, env=env, wait_name=DOCS_NAME)
    # The Documents name is taken on the sd-bus connection at once, the PermissionStore name
    # on the GDBus one a moment later: a test calling the permission store first waits for it.
    bus.wait_for_name(PS_NAME, daemon=d)
    if wait_mount:
        get_mount_point(bus)
        deadline = time.time() + 10
        while not is_mounted(mountpoint(bus)):
            if time.time() > deadline:
                raise TimeoutError("document filesystem not mounted:\n" + d.output())
            time.sleep(0.01)
    return d


def get_mount_point(bus):
    """Documents.GetMountPoint: the mount point, once the filesystem is up."""
    return bytes(docs(bus, "GetMountPoint")[0]).rstrip(b"\0").decode()


def docs(bus, method, args=None, sig=None, fds=None, conn=None, timeout=10000):
    return bus.call(DOCS_IFACE, method, args, sig, dest=DOCS_NAME, path=DOCS_PATH, fds=fds, conn=conn,
                    timeout=timeout)


def ps(bus, method, args=None, sig=None, conn=None, timeout=10000):
    return bus.call(PS_IFACE, method, args, sig, dest=PS_NAME, path=PS_PATH, conn=conn, timeout=timeout)


def add(bus, path, reuse=True, persistent=True, flags=os.O_PATH):
    fd = os.open(path, flags)
    try:
        return docs(bus, "Add", (0, reuse, persistent), "(hbb)", fds=[fd])[0]
    finally:
        os.close(fd)


def add_full(bus, paths, flags, app_id, perms):
    fds = [os.open(p, os.O_PATH) for p in paths]
    try:
        return docs(bus, "AddFull", (list(range(len(fds))), flags, app_id, perms), "(ahusas)", fds=fds)
    finally:
        for fd in fds:
            os.close(fd)


def error_name(fn, *args, **kwargs):
    """The D-Bus error name fn raises, or None when it succeeds."""
    try:
        fn(*args, **kwargs)
    except GLib.Error as e:
        return Gio.DBusError.get_remote_error(e)
    return None


# Code run first inside a sandbox: call(iface_method, signature, args, fds) -> prints nothing,
# returns ("ok", value) or ("error", name).
SANDBOX_PRELUDE = r'''
import json, os, sys, errno
from gi.repository import Gio, GLib
conn = Gio.bus_get_sync(Gio.BusType.SESSION, None)
def call(method, sig=None, args=(), fds=None, iface="org.freedesktop.portal.Documents",
         dest="org.freedesktop.portal.Documents", path="/org/freedesktop/portal/documents"):
    params = GLib.Variant(sig, tuple(args)) if sig else None
    try:
        if fds is not None:
            fl = Gio.UnixFDList.new()
            for fd in fds:
                fl.append(fd)
            r, _ = conn.call_with_unix_fd_list_sync(dest, path, iface, method, params, None, 0, 10000, fl, None)
        else:
            r = conn.call_sync(dest, path, iface, method, params, None, 0, 10000, None)
        return ["ok", r.unpack()]
    except GLib.Error as e:
        return ["error", Gio.DBusError.get_remote_error(e)]
def ps(method, sig=None, args=()):
    return call(method, sig, args, iface="org.freedesktop.impl.portal.PermissionStore",
                dest="org.freedesktop.impl.portal.PermissionStore",
                path="/org/freedesktop/impl/portal/PermissionStore")
def try_io(fn):
    try:
        return ["ok", fn()]
    except OSError as e:
        return ["errno", errno.errorcode.get(e.errno, str(e.errno))]
out = {}
'''

SANDBOX_EPILOGUE = "\nprint(json.dumps(out, default=lambda o: o.decode('utf-8', 'replace') if isinstance(o, bytes) else str(o)))\n"


def run_in_sandbox(bus, app_id, body, **kwargs):
    """Run @body (after the prelude) as Flatpak app @app_id; returns the dict it left in `out`."""
    import json
    r = limentest.run_sandboxed(bus, app_id, SANDBOX_PRELUDE + body + SANDBOX_EPILOGUE, **kwargs)
    assert r.returncode == 0, f"sandbox failed ({r.returncode}):\n{r.stderr}\n{r.stdout}"
    return json.loads(r.stdout.strip().splitlines()[-1])


def sigterm_during_fd_flood(bus, work, peers, calls):
    """Starts the daemon, floods it from @peers connections with @calls fd-carrying Add calls
    each (not waited for), sends SIGTERM mid-flood; returns (status or None if it did not
    exit within 5 s, seconds to exit, the daemon's output)."""
    d = start(bus)
    files = []
    for i in range(calls):
        p = os.path.join(work, f"f{i}")
        with open(p, "w") as f:
            f.write("x")
        files.append(p)
    stop = threading.Event()

    def load():
        conn = bus.new_connection()
        for p in files:
            if stop.is_set():
                return
            fd = os.open(p, os.O_PATH)
            fl = Gio.UnixFDList.new()
            fl.append(fd)
            os.close(fd)
            conn.call_with_unix_fd_list(DOCS_NAME, DOCS_PATH, DOCS_IFACE, "Add",
                                        GLib.Variant("(hbb)", (0, False, True)), None, 0, 5000, fl, None, None)
    threads = [threading.Thread(target=load) for _ in range(peers)]
    for t in threads:
        t.start()
    time.sleep(0.2)
    t0 = time.monotonic()
    d.signal(signal.SIGTERM)
    try:
        status = d.wait(timeout=5)
    except subprocess.TimeoutExpired:
        status = None
    elapsed = time.monotonic() - t0
    stop.set()
    for t in threads:
        t.join(10)
    return status, elapsed, d.output()


# ---- an installed Flatpak app (local repo, no network) ------------------------------

def run(bus, *argv, check=True):
    """@argv with the bus's environment; raises with its stderr when it fails."""
    r = subprocess.run(list(argv), env=bus.env, capture_output=True, text=True, timeout=120)
    if check and r.returncode != 0:
        raise RuntimeError(f"{argv}: {r.stderr.strip()}")
    return r


def install_flatpak_app(bus, root, app_id, system=False):
    """A runtime and @app_id exported to a local repo and installed (no [Context] of its own)."""
    repo = os.path.join(root, "repo")
    rt = os.path.join(root, "rt")
    if not os.path.isdir(rt):
        os.makedirs(os.path.join(rt, "files"))
        os.makedirs(os.path.join(rt, "usr"))
        with open(os.path.join(rt, "metadata"), "w") as f:
            f.write("[Runtime]\nname=org.example.Platform\nruntime=org.example.Platform/x86_64/1\n"
                    "sdk=org.example.Platform/x86_64/1\n")
        run(bus, "flatpak", "build-export", "--runtime", repo, rt, "1")
    app = os.path.join(root, app_id)
    os.makedirs(os.path.join(app, "files", "bin"))
    os.makedirs(os.path.join(app, "export"))
    with open(os.path.join(app, "metadata"), "w") as f:
        f.write(f"[Application]\nname={app_id}\nruntime=org.example.Platform/x86_64/1\ncommand=true\n")
    run(bus, "flatpak", "build-export", repo, app, "stable")
    where = "--system" if system else "--user"
    if run(bus, "flatpak", where, "remotes", check=False).stdout.find("local") < 0:
        run(bus, "flatpak", where, "remote-add", "--no-gpg-verify", "local", f"file://{repo}")
    run(bus, "flatpak", where, "install", "-y", "--noninteractive", "local", f"{app_id}//stable")


def kill9(bus, d):
    """limen-documents @d killed by SIGKILL, its names gone, its mount lazily unmounted."""
    d.signal(signal.SIGKILL)
    d.stop()
    bus.wait_for_name_gone(DOCS_NAME)
    subprocess.run(["fusermount3", "-u", "-z", mountpoint(bus)], stdout=subprocess.DEVNULL,
                   stderr=subprocess.DEVNULL)
