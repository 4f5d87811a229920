"""Many files picked in the real file dialog by a bwrap-sandboxed app: a folder of N files,
the Open call from inside the sandbox, the dialog driven under Xvfb the way a person does it
(a ctrl+click in the view gives it the focus without opening a file in KDE's single-click
mode, then ctrl+a and Return), and the Response as the app sees it. Used by
test_kde_many_files.py and autotests/bench/bench-kde-many-files.py, for limen's stack
(limen-portal, limen-documents, limen-kde) and for the reference one (xdg-desktop-portal,
xdg-document-portal, xdg-desktop-portal-kde)."""

import json
import os
import shutil
import subprocess
import tempfile
import time

import kde_helpers as kh
import limentest

REF_KDE_NAME = "org.freedesktop.impl.portal.desktop.kde"

# Runs inside the sandbox: OpenFile(multiple) on the folder, then one JSON line with the
# moment (CLOCK_MONOTONIC, shared with the host) the Response arrived and what it held.
CLIENT = r'''
import json, sys, time
from gi.repository import Gio, GLib
folder, title, wait = sys.argv[1], sys.argv[2], float(sys.argv[3])
conn = Gio.bus_get_sync(Gio.BusType.SESSION, None)
sender = conn.get_unique_name()[1:].replace(".", "_")
path = "/org/freedesktop/portal/desktop/request/%s/many" % sender
out = {}
def on_response(c, s, p, i, sig, params):
    out["at"] = time.monotonic()
    out["r"] = params
conn.signal_subscribe(None, "org.freedesktop.portal.Request", "Response", path, None, 0, on_response)
opts = {"handle_token": GLib.Variant("s", "many"), "multiple": GLib.Variant("b", True),
        "current_folder": GLib.Variant("ay", folder.encode() + b"\0")}
conn.call_sync("org.freedesktop.portal.Desktop", "/org/freedesktop/portal/desktop",
               "org.freedesktop.portal.FileChooser", "OpenFile",
               GLib.Variant("(ssa{sv})", ("", title, opts)), None, 0, 60000, None)
print("CALLED", flush=True)
ctx = GLib.MainContext.default()
end = time.monotonic() + wait
while "r" not in out and time.monotonic() < end:
    ctx.iteration(True) if ctx.pending() else time.sleep(0.002)
if "r" not in out:
    print(json.dumps({"timeout": True}))
    sys.exit(0)
response, results = out["r"].unpack()
print(json.dumps({"at": out["at"], "response": response, "uris": results.get("uris", [])}))
'''


def make_folder(parent, n, prefix="f"):
    """A folder of @n empty files named f00000.dat ...; returns its path and the names."""
    d = os.path.join(parent, f"many-{n}")
    os.makedirs(d, exist_ok=True)
    width = len(str(n - 1))
    names = [f"{prefix}{i:0{width}d}.dat" for i in range(n)]
    for name in names:
        with open(os.path.join(d, name), "wb"):
            pass
    return d, names


def start_limen_stack(bus, x, env=None):
    """limen-documents, limen-kde on @x and limen-portal choosing it; returns limen-kde."""
    bus.start("limen-documents", "--verbose", wait_name="org.freedesktop.portal.Documents")
    e = {"XDG_CURRENT_DESKTOP": "KDE", "QT_LOGGING_RULES": "limen.shim.debug=true"}
    e.update(env or {})
    kde = kh.start_kde_x11(bus, x, **e)
    shutil.copy(kh.portal_file_path(), os.path.join(bus.env["XDG_DESKTOP_PORTAL_DIR"], "limen.portal"))
    conf = os.path.join(bus.config_home, "xdg-desktop-portal")
    os.makedirs(conf, exist_ok=True)
    with open(os.path.join(conf, "kde-portals.conf"), "w") as f:
        f.write("[preferred]\ndefault=limen\n")
    bus.start_portal(env={"XDG_CURRENT_DESKTOP": "KDE"})
    return kde


def start_reference_stack(bus, x, folder):
    """xdg-permission-store, xdg-document-portal, xdg-desktop-portal-kde on @x and
    xdg-desktop-portal 1.16 using it (its own kde.portal, copied where the frontend looks)."""
    bus.start(["/usr/libexec/xdg-permission-store", "--replace"],
              wait_name="org.freedesktop.impl.portal.PermissionStore")
    bus.start(["/usr/libexec/xdg-document-portal", "--replace"], wait_name="org.freedesktop.portal.Documents")
    # Its dialog opens in its working directory: current_folder does not reach it from a
    # sandboxed caller through xdg-desktop-portal 1.16 (seen here), so start it in @folder.
    cwd = os.getcwd()
    os.chdir(folder)
    try:
        kde = bus.start([kh.REF_KDE], env=dict(x.env(), QT_QPA_PLATFORM="xcb", XDG_CURRENT_DESKTOP="KDE"),
                        wait_name=REF_KDE_NAME, timeout=30)
    finally:
        os.chdir(cwd)
    portals = bus.env["XDG_DESKTOP_PORTAL_DIR"]
    shutil.copy("/usr/share/xdg-desktop-portal/portals/kde.portal", os.path.join(portals, "kde.portal"))
    bus.start([kh.REF_FRONTEND, "--verbose"], env={"XDG_CURRENT_DESKTOP": "KDE"},
              wait_name="org.freedesktop.portal.Desktop")
    return kde


def start_client(bus, app_id, folder, title, wait):
    """The sandboxed app (bwrap, /.flatpak-info for @app_id) calling OpenFile on @folder.
    Its output goes to a file (a pipe would fill up with 100,000 URIs while we wait)."""
    info = limentest.FLATPAK_INFO.format(app_id=app_id)
    fd, info_path = tempfile.mkstemp(dir=bus.root, prefix="flatpak-info-")
    os.write(fd, info.encode())
    os.close(fd)
    argv = limentest.bwrap_argv(bus) + ["--ro-bind", info_path, "/.flatpak-info",
                                        "/usr/bin/python3", "-c", CLIENT, folder, title, str(wait)]
    out_path = os.path.join(bus.root, f"client-{os.getpid()}-{time.monotonic_ns()}.out")
    with open(out_path, "w") as out:
        proc = subprocess.Popen(argv, env={"PATH": "/usr/bin:/bin", "LANG": "C.UTF-8"},
                                stdout=out, stderr=subprocess.STDOUT, text=True)
    proc.out_path = out_path
    deadline = time.monotonic() + 60
    while not client_output(proc).startswith("CALLED"):
        if proc.poll() is not None or time.monotonic() > deadline:
            proc.kill()
            proc.wait()
            raise RuntimeError(f"sandboxed client failed: {client_output(proc)[-3000:]}")
        time.sleep(0.02)
    return proc


def client_output(proc):
    with open(proc.out_path) as f:
        return f.read()


def client_result(proc, timeout):
    proc.wait(timeout=timeout)
    out = client_output(proc)
    lines = [l for l in out.splitlines() if l.startswith("{")]
    if not lines:
        raise RuntimeError(f"sandboxed client said nothing: {out[-3000:]}")
    return json.loads(lines[-1])


def select_all_in_view(x, wid):
    """Focus the file view with a ctrl+click in it (no file opens, in single- or
    double-click mode), then select everything."""
    x.focus(wid, 0.3)
    wx, wy, w, h = x.geometry(wid)
    # Right of the places panel, below the toolbar and location bar, above the Name field.
    x.run("xdotool", "mousemove", "--sync", str(wx + int(w * 0.62)), str(wy + int(h * 0.42)))
    x.run("xdotool", "keydown", "ctrl", "click", "1", "keyup", "ctrl")
    time.sleep(0.3)
    x.run("xdotool", "key", "ctrl+a")


def press_open(x):
    """Return, as Open; the moment (CLOCK_MONOTONIC) it was sent."""
    t = time.monotonic()
    x.run("xdotool", "key", "Return")
    return t


def wait_listed(daemon, n, timeout):
    """Ours: until limen-kde's dialog says its view lists @n files (limen.shim debug)."""
    marker = f"file list loaded: {n} files"
    deadline = time.monotonic() + timeout
    while marker not in daemon.output():
        if time.monotonic() > deadline:
            raise TimeoutError(marker + "\n" + daemon.output()[-3000:])
        time.sleep(0.05)


def doc_names(uris, runtime_dir):
    """The file names of document URIs (file://RUNTIME/doc/ID/NAME), checking the form."""
    prefix = "file://" + os.path.join(runtime_dir, "doc") + "/"
    names = []
    for u in uris:
        assert u.startswith(prefix), u
        rest = u[len(prefix):].split("/")
        assert len(rest) == 2, u
        names.append(rest[1])
    return names
