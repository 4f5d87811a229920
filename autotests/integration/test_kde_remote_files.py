"""Files on a server, picked and saved in limen-kde's real file dialog by a bwrap-sandboxed
app: a private sshd on 127.0.0.1, KIO's sftp worker (kio-extras) in the dialog, kio-fuse
D-Bus-activated on the private bus. The dialog hands the frontend kio-fuse's local path, the
frontend exports it as a document, and the app reads the server's bytes through the
document (FUSE over FUSE); a file saved through a document lands on the server. Without
kio-fuse the dialog offers local places only (KFile::LocalOnly, as the reference does).

libssh reads the known-hosts file and the keys of the home in the password database, not
$HOME: the test runs in a mount namespace of its own with a scratch directory over that
home, so the machine's own ~/.ssh is never read or written."""

import ctypes
import json
import os
import pwd
import shutil
import socket
import subprocess
import tempfile
import time

import pytest

import kde_helpers as kh
import limentest
import many_files as mf
from limentest import GLib

SSHD = "/usr/sbin/sshd"
KIO_FUSE = "/usr/lib/x86_64-linux-gnu/libexec/kio-fuse"
SFTP_WORKER = "/usr/lib/x86_64-linux-gnu/qt5/plugins/kf5/kio/sftp.so"
APP = "org.example.Remote"

# Runs inside the sandbox: OpenFile or SaveFile; prints one JSON line with the answer.
CLIENT = r'''
import json, sys, time
from gi.repository import Gio, GLib
method, title = sys.argv[1], sys.argv[2]
conn = Gio.bus_get_sync(Gio.BusType.SESSION, None)
sender = conn.get_unique_name()[1:].replace(".", "_")
path = "/org/freedesktop/portal/desktop/request/%s/remote" % sender
out = {}
conn.signal_subscribe(None, "org.freedesktop.portal.Request", "Response", path, None, 0,
                      lambda c, s, p, i, sig, params: out.setdefault("r", params))
opts = {"handle_token": GLib.Variant("s", "remote")}
if method == "SaveFile":
    opts["current_name"] = GLib.Variant("s", "saved.txt")
conn.call_sync("org.freedesktop.portal.Desktop", "/org/freedesktop/portal/desktop",
               "org.freedesktop.portal.FileChooser", method,
               GLib.Variant("(ssa{sv})", ("", title, opts)), None, 0, 60000, None)
ctx = GLib.MainContext.default()
end = time.monotonic() + 150
while "r" not in out and time.monotonic() < end:
    ctx.iteration(True) if ctx.pending() else time.sleep(0.01)
if "r" not in out:
    print(json.dumps({"timeout": True})); sys.exit(0)
response, results = out["r"].unpack()
print(json.dumps({"response": response, "uris": results.get("uris", [])}))
'''

# The app again (a second process, as after a restart), its view of the document store
# where a Flatpak app has it: read or write the document.
DOC_IO = r'''
import sys
mode, path = sys.argv[1], sys.argv[2]
if mode == "read":
    with open(path, "rb") as f:
        sys.stdout.write(f.read().decode())
else:
    with open(path, "wb") as f:
        f.write(sys.argv[3].encode())
'''


def _private_home():
    """A mount namespace for this test process and its children, with a scratch directory
    over the password database's home (libssh's ~/.ssh); returns that directory. Everything
    else of the home is bound back into the scratch directory (the checkout and its build
    tree may live there, as /root/limen does on a fresh machine): only ~/.ssh is the test's."""
    libc = ctypes.CDLL(None, use_errno=True)
    CLONE_NEWNS = 0x00020000
    MS_REC, MS_PRIVATE, MS_BIND = 0x4000, 0x40000, 0x1000
    if libc.unshare(CLONE_NEWNS) != 0:
        pytest.skip(f"no mount namespace: {os.strerror(ctypes.get_errno())}")
    if libc.mount(b"none", b"/", None, MS_REC | MS_PRIVATE, None) != 0:
        pytest.skip("cannot make / private")
    home = pwd.getpwuid(os.getuid()).pw_dir
    entries = [e for e in os.listdir(home) if e != ".ssh"]
    original = os.open(home, os.O_PATH | os.O_DIRECTORY)
    scratch = tempfile.mkdtemp(prefix="limen-ssh-home-")
    if libc.mount(scratch.encode(), home.encode(), None, MS_BIND, None) != 0:
        pytest.skip(f"cannot bind over {home}: {os.strerror(ctypes.get_errno())}")
    for e in entries:
        source, target = f"/proc/self/fd/{original}/{e}", os.path.join(home, e)
        if os.path.islink(source):
            os.symlink(os.readlink(source), target)
            continue
        if os.path.isdir(source):
            os.mkdir(target)
        else:
            open(target, "w").close()
        assert libc.mount(source.encode(), target.encode(), None, MS_BIND | MS_REC, None) == 0, \
            f"cannot bind {e} of {home} back: {os.strerror(ctypes.get_errno())}"
    os.close(original)
    return home


def _free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="module")
def ssh_home():
    for need in (SSHD, KIO_FUSE, SFTP_WORKER, "/dev/fuse"):
        if not os.path.exists(need):
            pytest.skip(f"{need} missing (openssh-server, kio-fuse, kio-extras)")
    return _private_home()


@pytest.fixture
def server(ssh_home, bus):
    """sshd on 127.0.0.1:PORT serving this test's files over SFTP, our key authorized and
    its host key known in the (private) home's known_hosts; yields (port, served folder)."""
    d = os.path.join(bus.root, "sshd")
    os.makedirs(d)
    subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", os.path.join(d, "host_key")], check=True)
    ssh_dir = os.path.join(ssh_home, ".ssh")
    os.makedirs(ssh_dir, mode=0o700, exist_ok=True)
    key = os.path.join(ssh_dir, "id_ed25519")
    if not os.path.exists(key):
        subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", key], check=True)
    shutil.copy(key + ".pub", os.path.join(d, "authorized_keys"))
    port = _free_port()
    with open(os.path.join(d, "host_key.pub")) as f:
        host_pub = " ".join(f.read().split()[:2])
    with open(os.path.join(ssh_dir, "known_hosts"), "w") as f:
        f.write(f"[127.0.0.1]:{port} {host_pub}\n")
    os.makedirs("/run/sshd", exist_ok=True)
    proc = bus.start([SSHD, "-D", "-e", "-f", "/dev/null", "-o", "ListenAddress=127.0.0.1", "-o", f"Port={port}",
                      "-o", f"HostKey={d}/host_key", "-o", f"AuthorizedKeysFile={d}/authorized_keys",
                      "-o", "PermitRootLogin=prohibit-password", "-o", "StrictModes=no",
                      "-o", f"PidFile={d}/pid", "-o", "Subsystem=sftp internal-sftp"])
    deadline = time.monotonic() + 20
    while True:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            break
        except OSError:
            assert proc.alive() and time.monotonic() < deadline, proc.output()[-2000:]
            time.sleep(0.05)
    served = os.path.join(bus.root, "served")
    os.makedirs(served)
    return port, served


def kio_fuse_activatable(bus):
    """org.kde.KIOFuse activatable on the private bus, as in a Plasma session."""
    with open(os.path.join(bus.services_dir, "org.kde.KIOFuse.service"), "w") as f:
        f.write(f"[D-BUS Service]\nName=org.kde.KIOFuse\nExec={KIO_FUSE} -f\n")


def stop_kio_fuse(bus):
    """End the kio-fuse the bus activated for this test (by its pid) and its mount."""
    try:
        pid = bus.call("org.freedesktop.DBus", "GetConnectionUnixProcessID", ("org.kde.KIOFuse",), "(s)",
                       dest="org.freedesktop.DBus", path="/org/freedesktop/DBus")
        pid = pid[0] if isinstance(pid, tuple) else pid
    except Exception:
        pid = None
    for m in os.listdir(bus.runtime_dir):
        if m.startswith("kio-fuse-"):
            subprocess.run(["fusermount3", "-u", "-z", os.path.join(bus.runtime_dir, m)], check=False)
    if pid:
        try:
            os.kill(pid, 15)
        except ProcessLookupError:
            pass


@pytest.fixture
def stack(bus, x, server):
    kio_fuse_activatable(bus)
    kde = mf.start_limen_stack(bus, x)
    yield kde
    stop_kio_fuse(bus)


def sandboxed(bus, argv, binds=()):
    """@argv run as the Flatpak app APP under bwrap (a Popen, output into a file)."""
    r, w = os.pipe()
    os.write(w, limentest.FLATPAK_INFO.format(app_id=APP).encode())
    os.close(w)
    full = limentest.bwrap_argv(bus) + list(binds) + ["--ro-bind-data", str(r), "/.flatpak-info"] + argv
    out = tempfile.TemporaryFile("w+", dir=bus.root)
    proc = subprocess.Popen(full, env={"PATH": "/usr/bin:/bin", "LANG": "C.UTF-8"}, stdout=out,
                            stderr=subprocess.STDOUT, pass_fds=(r,), text=True)
    os.close(r)
    proc.out = out
    return proc


def output(proc, timeout=180):
    proc.wait(timeout=timeout)
    proc.out.seek(0)
    return proc.out.read()


def run_client(bus, method, title):
    return sandboxed(bus, ["/usr/bin/python3", "-c", CLIENT, method, title])


def client_result(proc):
    text = output(proc)
    lines = [line for line in text.splitlines() if line.startswith("{")]
    assert lines, text[-3000:]
    return json.loads(lines[-1])


def doc_io(bus, uri, mode, data=""):
    """Read (or write @data to) the document @uri from inside the sandbox, through the
    app's own view of the store (by-app/APP bound where the URI points)."""
    doc = os.path.join(bus.runtime_dir, "doc")
    prefix = "file://" + doc + "/"
    assert uri.startswith(prefix), uri
    proc = sandboxed(bus, ["/usr/bin/python3", "-c", DOC_IO, mode, uri[len("file://"):], data],
                     binds=["--bind", os.path.join(doc, "by-app", APP), doc])
    text = output(proc, 120)
    assert proc.returncode == 0, text[-3000:]
    return text


def pick(x, proc, title, url, shot=None):
    try:
        wid = x.wait_window(title, timeout=60)
    except TimeoutError:
        if proc is None:
            raise
        proc.out.seek(0)
        raise AssertionError(f"no dialog; the app said: {proc.out.read()[-2000:]}")
    time.sleep(0.5)
    x.focus(wid)
    # The Name field has the focus: select what it holds, type the server's URL, Return.
    x.run("xdotool", "key", "ctrl+a")
    x.type_text(url)
    time.sleep(0.3)
    x.run("xdotool", "key", "Return")
    if shot:
        time.sleep(0.3)
        x.screenshot(shot)


def test_sandboxed_app_reads_a_remote_file_through_its_document(bus, x, stack, server):
    port, served = server
    with open(os.path.join(served, "remote.txt"), "w") as f:
        f.write("bytes from the server\n")
    proc = run_client(bus, "OpenFile", "Open remote")
    pick(x, proc, "Open remote", f"sftp://root@127.0.0.1:{port}{served}/remote.txt")
    res = client_result(proc)
    assert res.get("response") == 0, (res, stack.output()[-3000:])
    assert len(res["uris"]) == 1 and res["uris"][0].endswith("/remote.txt")
    assert res["uris"][0].startswith("file://" + os.path.join(bus.runtime_dir, "doc") + "/")
    assert doc_io(bus, res["uris"][0], "read") == "bytes from the server\n"


def test_sandboxed_app_saves_to_the_server_through_its_document(bus, x, stack, server):
    port, served = server
    os.makedirs(os.path.join(served, "out"))
    proc = run_client(bus, "SaveFile", "Save remote")
    pick(x, proc, "Save remote", f"sftp://root@127.0.0.1:{port}{served}/out/saved.txt")
    res = client_result(proc)
    assert res.get("response") == 0, (res, stack.output()[-3000:])
    doc_io(bus, res["uris"][0], "write", "written by the app\n")
    target = os.path.join(served, "out", "saved.txt")
    # kio-fuse uploads when the file is closed: bounded wait for it on the server's side.
    limentest.wait_until(lambda: os.path.exists(target) and open(target).read() == "written by the app\n", 60)
    with open(target) as f:
        assert f.read() == "written by the app\n"


def start_kde_alone(bus, x, kio_fuse=True, look=("", "1")):
    """limen-kde by itself (a host app's view: its impl answer is what the app gets), with
    kio-fuse activatable or not, in the language and scale of @look."""
    if kio_fuse:
        kio_fuse_activatable(bus)
    return kh.start_kde_x11(bus, x, LANGUAGE=look[0], QT_SCALE_FACTOR=look[1],
                            LIMEN_LOCALEDIR=os.path.join(limentest.BUILD_DIR, "locale"))


@pytest.fixture
def kde_alone(bus, x, server):
    kde = start_kde_alone(bus, x)
    yield kde
    stop_kio_fuse(bus)


def impl_call(bus, method, title, opts):
    handle = kh.new_handle(bus)
    return kh.AsyncCall(bus, "FileChooser", method, (handle, "org.example.Host", "", title, opts), "(osssa{sv})",
                        timeout=150000)


def open_folder(x, title, url):
    """Choose a folder the way a person does: click into the location bar (its free space
    right of the breadcrumbs turns it editable), type the server's URL, Return to go there,
    then Return in the empty Name field: the folder shown."""
    wid = x.wait_window(title, timeout=60)
    time.sleep(0.5)
    x.focus(wid)
    wx, wy, w, h = x.geometry(wid)
    x.run("xdotool", "mousemove", "--sync", str(wx + int(w * 0.85)), str(wy + int(h * 0.111)), "click", "1")
    time.sleep(0.5)
    x.run("xdotool", "key", "ctrl+a")
    x.type_text(url)
    x.run("xdotool", "key", "Return")
    time.sleep(2)
    x.screenshot(f"{title.replace(' ', '-').lower()}.png")
    x.run("xdotool", "key", "alt+n")
    time.sleep(0.2)
    x.run("xdotool", "key", "Return")


def answer(x, call, kde, shot):
    """The impl call's (response, results); a screenshot @shot when none comes."""
    try:
        return call.wait(timeout=120)
    except AssertionError:
        x.screenshot(shot)
        raise AssertionError("no answer: " + kde.output()[-3000:])


def kio_fuse_path(bus, uri):
    """The local path of a file:// URI that lies in kio-fuse's mount."""
    assert uri.startswith("file://" + bus.runtime_dir + "/kio-fuse-"), uri
    return uri[len("file://"):]


def test_host_app_gets_kio_fuse_paths_for_a_file_and_a_folder(bus, x, kde_alone, server):
    port, served = server
    os.makedirs(os.path.join(served, "photos"))
    with open(os.path.join(served, "photos", "a.txt"), "w") as f:
        f.write("in the folder\n")
    call = impl_call(bus, "OpenFile", "Open remote file", {})
    x.wait_window("Open remote file", timeout=60)
    time.sleep(1)
    # With kio-fuse the Places panel offers Network, as before (compare the local-only shots).
    x.screenshot("file-dialog-with-kio-fuse-en-100.png")
    pick(x, None, "Open remote file", f"sftp://root@127.0.0.1:{port}{served}/photos/a.txt")
    response, results = answer(x, call, kde_alone, "remote-host-file-failed.png")
    assert response == 0, kde_alone.output()[-3000:]
    path = kio_fuse_path(bus, results["uris"][0])
    with open(path) as f:
        assert f.read() == "in the folder\n"

    call = impl_call(bus, "OpenFile", "Open remote folder", {"directory": GLib.Variant("b", True)})
    open_folder(x, "Open remote folder", f"sftp://root@127.0.0.1:{port}{served}/photos")
    response, results = answer(x, call, kde_alone, "remote-host-folder-failed.png")
    assert response == 0, kde_alone.output()[-3000:]
    folder = kio_fuse_path(bus, results["uris"][0])
    assert sorted(os.listdir(folder)) == ["a.txt"]


def test_host_app_saves_files_into_a_remote_folder(bus, x, kde_alone, server):
    port, served = server
    os.makedirs(os.path.join(served, "drop"))
    opts = {"files": GLib.Variant("aay", [b"one.txt\0", b"two.txt\0"])}
    call = impl_call(bus, "SaveFiles", "Save remote files", opts)
    open_folder(x, "Save remote files", f"sftp://root@127.0.0.1:{port}{served}/drop")
    response, results = answer(x, call, kde_alone, "remote-host-save-files-failed.png")
    assert response == 0, kde_alone.output()[-3000:]
    paths = [kio_fuse_path(bus, u) for u in results["uris"]]
    assert [os.path.basename(p) for p in paths] == ["one.txt", "two.txt"]
    for p in paths:
        with open(p, "w") as f:
            f.write(os.path.basename(p))
    for name in ("one.txt", "two.txt"):
        target = os.path.join(served, "drop", name)
        limentest.wait_until(lambda: os.path.exists(target) and open(target).read() == name, 60)
        with open(target) as f:
            assert f.read() == name


@pytest.mark.parametrize("look", [("", "1"), ("de", "2")], ids=["en-100", "de-200"])
def test_without_kio_fuse_only_local_places(bus, x, server, look):
    """No org.kde.KIOFuse on the bus: the Places panel offers no Network and no servers; a
    server's URL typed into the dialog anyway is refused with a message that says why, and
    the app gets nothing remote; the Trash's files (trash:/, a local protocol) still come."""
    port, served = server
    with open(os.path.join(served, "remote.txt"), "w") as f:
        f.write("x")
    kde = start_kde_alone(bus, x, kio_fuse=False, look=look)
    tag = f"{look[0] or 'en'}-{look[1]}00"
    call = impl_call(bus, "OpenFile", "Local only", {})
    wid = x.wait_window("Local only", timeout=60)
    time.sleep(1)
    x.screenshot(f"file-dialog-local-only-{tag}.png")
    pick(x, None, "Local only", f"sftp://root@127.0.0.1:{port}{served}/remote.txt")
    title = "Nicht auf diesem Rechner" if look[0] == "de" else "Not on This Computer"
    try:
        box = x.wait_window(title, timeout=60)
    finally:
        time.sleep(0.3)
        x.screenshot(f"file-dialog-remote-refused-{tag}.png")
    x.press(box, "Return")
    x.press(wid, "Escape")
    response, results = call.wait(timeout=60)
    assert response == 1, (response, results, kde.output()[-2000:])
    assert kde.alive()
