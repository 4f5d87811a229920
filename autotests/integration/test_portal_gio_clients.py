"""GLib's and Qt's own portal clients, as every GTK, GLib or Qt app in a Flatpak sandbox uses
them without knowing: GIO's portal implementations of GNetworkMonitor, GProxyResolver,
GMemoryMonitor and GPowerProfileMonitor, g_file_trash(), g_app_info_launch_default_for_uri()
and Qt 5's and Qt 6's QDesktopServices, run inside bwrap with a .flatpak-info, against
limen-portal (with limen-documents and the dbusmock AppChooser backend of templates/). Each must get what the
portal promises, through the toolkit's own calls and signal handling, not ours."""
import importlib.util
import json
import os
import shutil

import pytest

import limentest
import request_helpers as rh
from test_portal_dropin_requests import install_app, write_mime_cache

APP = "org.example.GioApp"
INFO = ("[Application]\nname=" + APP + "\n\n[Context]\nshared=network;ipc;\n\n"
        "[Instance]\ninstance-id=1234567890\n")

MONITORS = r'''
import json
from gi.repository import Gio, GLib
out = {}
net = Gio.NetworkMonitor.get_default()
# GIO asks the portal for the status in the background: the answer comes with the main loop.
ctx = GLib.MainContext.default()
changed = []
net.connect("network-changed", lambda *a: changed.append(1))
GLib.timeout_add_seconds(3, lambda: changed.append(0) or False)
while not changed:
    ctx.iteration(True)
out["network"] = [type(net).__name__, net.get_network_available(), int(net.get_connectivity()),
                  net.get_network_metered()]
proxy = Gio.ProxyResolver.get_default()
out["proxy"] = [type(proxy).__name__, proxy.lookup("https://example.org/", None)]
mem = Gio.MemoryMonitor.dup_default()
out["memory"] = type(mem).__name__
power = Gio.PowerProfileMonitor.dup_default()
out["power"] = [type(power).__name__, power.get_power_saver_enabled()]
print(json.dumps(out))
'''

TRASH = r'''
import json, sys
from gi.repository import Gio
f = Gio.File.new_for_path(sys.argv[1])
try:
    print(json.dumps({"trashed": f.trash(None)}))
except Exception as e:
    print(json.dumps({"error": str(e)}))
'''

LAUNCH = r'''
import json, sys
from gi.repository import Gio, GLib
loop = GLib.MainLoop()
out = {}
def done(source, result, data):
    try:
        out["launched"] = Gio.AppInfo.launch_default_for_uri_finish(result)
    except Exception as e:
        out["error"] = str(e)
    loop.quit()
Gio.AppInfo.launch_default_for_uri_async(sys.argv[1], None, None, done, None)
GLib.timeout_add_seconds(20, loop.quit)
loop.run()
print(json.dumps(out))
'''


def run(bus, script, *args, binds=()):
    code = f"import sys; sys.argv[1:] = {list(args)!r}\n" + script
    r = limentest.run_sandboxed(bus, APP, code, binds=binds, flatpak_info=INFO)
    lines = [line for line in r.stdout.splitlines() if line.startswith("{")]
    assert lines, (r.returncode, r.stdout, r.stderr)
    return json.loads(lines[-1])


def test_gio_monitors_use_the_portal(bus):
    bus.start_portal()
    got = run(bus, MONITORS)
    host = bus.call("org.freedesktop.portal.NetworkMonitor", "GetStatus", None, None)[0]
    name, available, connectivity, metered = got["network"]
    assert name == "GNetworkMonitorPortal"
    assert (available, connectivity, metered) == (host["available"], host["connectivity"], host["metered"])
    assert got["proxy"][0] == "GProxyResolverPortal" and got["proxy"][1]
    assert got["memory"] == "GMemoryMonitorPortal"
    name, saver = got["power"]
    assert name == "GPowerProfileMonitorPortal"
    assert saver == bus.get_property("org.freedesktop.portal.PowerProfileMonitor", "power-saver-enabled")


def test_g_file_trash_goes_through_the_portal(bus):
    bus.start_portal()
    folder = os.path.join(bus.root, "shared")
    os.makedirs(folder)
    doomed = os.path.join(folder, "old-notes.txt")
    with open(doomed, "w") as f:
        f.write("x")
    got = run(bus, TRASH, doomed, binds=(folder,))
    assert got == {"trashed": True}
    assert not os.path.exists(doomed)
    trash = os.path.join(bus.data_home, "Trash")
    assert os.listdir(os.path.join(trash, "files")) == ["old-notes.txt"]
    with open(os.path.join(trash, "info", "old-notes.txt.trashinfo")) as f:
        assert f"Path={doomed}" in f.read()


def test_launch_default_for_uri_opens_the_host_handler(bus):
    log = os.path.join(bus.root, "opened.log")
    open(log, "w").close()
    t = "x-scheme-handler/https"
    install_app(bus, "org.example.Browser", [t], log)
    write_mime_cache(bus, {t: ["org.example.Browser"]}, {t: "org.example.Browser"})
    rh.setup(bus, ["appchooser"])
    rh.start_documents(bus)
    got = run(bus, LAUNCH, "https://example.org/agenda")
    assert got == {"launched": True}, got
    assert limentest.wait_until(lambda: "org.example.Browser https://example.org/agenda" in open(log).read(), 10)


def editor_and_browser(bus):
    """Host handlers org.example.Editor (text/plain) and org.example.Browser (https), each
    the default, writing what they open to a log; and a file of text for the app to open.
    (log path, the file's folder, the file)."""
    log = os.path.join(bus.root, "opened.log")
    open(log, "w").close()
    install_app(bus, "org.example.Editor", ["text/plain"], log)
    install_app(bus, "org.example.Browser", ["x-scheme-handler/https"], log)
    write_mime_cache(bus, {"text/plain": ["org.example.Editor"], "x-scheme-handler/https": ["org.example.Browser"]},
                     {"text/plain": "org.example.Editor", "x-scheme-handler/https": "org.example.Browser"})
    folder = os.path.join(bus.root, "shared")
    os.makedirs(folder)
    notes = os.path.join(folder, "notes.txt")
    with open(notes, "w") as f:
        f.write("x")
    return log, folder, notes


QT_OPEN = r'''
import importlib, json, sys
core, gui = (importlib.import_module(QT + m) for m in (".QtCore", ".QtGui"))
QTimer, QUrl = core.QTimer, core.QUrl
QDesktopServices, QGuiApplication = gui.QDesktopServices, gui.QGuiApplication
app = QGuiApplication(sys.argv[:1])
out = {}
def run():
    out["opened"] = [QDesktopServices.openUrl(QUrl(u) if "://" in u else QUrl.fromLocalFile(u)) for u in sys.argv[1:]]
    QTimer.singleShot(1500, app.quit)
QTimer.singleShot(0, run)
app.exec()
print(json.dumps(out))
'''


@pytest.mark.skipif(shutil.which("Xvfb") is None, reason="xvfb missing")
@pytest.mark.parametrize("qt", ["PyQt5", "PyQt6"])
def test_qt_opens_files_and_links_through_the_portal(bus, x, qt):
    """Qt 5's and Qt 6's own portal client (QDesktopServices in a Flatpak sandbox): a local file goes as
    OpenFile with an O_PATH fd and "writable" (which Qt always asks), here of a file the app
    may only read, and opens read-only in the host's handler for its type, as with the
    reference; a link goes as OpenURI."""
    if importlib.util.find_spec(qt) is None:
        pytest.skip(f"{qt} missing")
    log, folder, notes = editor_and_browser(bus)
    rh.setup(bus, ["appchooser"])
    rh.start_documents(bus)
    code = f"import sys; sys.argv[1:] = {[notes, 'https://example.org/qt']!r}; QT = {qt!r}\n" + QT_OPEN
    x11 = "/tmp/.X11-unix/X" + x.display.lstrip(":")
    # Qt looks for the Flatpak marker where Flatpak also puts it: $XDG_RUNTIME_DIR/flatpak-info.
    info = os.path.join(bus.root, "flatpak-info")
    with open(info, "w") as f:
        f.write(INFO)
    r = limentest.run_sandboxed(bus, APP, code, ro_binds=(folder,), flatpak_info=INFO,
                                extra_args=["--bind", x11, x11, "--setenv", "DISPLAY", x.display,
                                            "--ro-bind", info, "/run/user/0/flatpak-info",
                                            "--setenv", "XDG_RUNTIME_DIR", "/run/user/0",
                                            "--setenv", "QT_QPA_PLATFORM", "xcb"])
    got = [json.loads(line) for line in r.stdout.splitlines() if line.startswith("{")]
    assert got == [{"opened": [True, True]}], (r.stdout, r.stderr[-2000:])
    assert limentest.wait_until(lambda: f"org.example.Editor {notes}" in open(log).read() and
                                "org.example.Browser https://example.org/qt" in open(log).read(), 10), open(log).read()


XDG_UTILS = "/usr/libexec/flatpak-xdg-utils"


@pytest.mark.skipif(not os.path.exists(XDG_UTILS + "/xdg-open"), reason="flatpak-xdg-utils missing")
def test_flatpak_xdg_open_and_xdg_email(bus):
    """The xdg-open and xdg-email every Flatpak runtime puts on an app's PATH: they call
    OpenFile / OpenURI / ComposeEmail and exit without waiting for the Response. A file or
    link that opens without a question still opens after the caller left, as with the
    reference (a file did not, before: its request was closed with its caller)."""
    log, folder, notes = editor_and_browser(bus)
    backend = rh.setup(bus, ["appchooser", "email"])
    rh.start_documents(bus)
    for argv in ([XDG_UTILS + "/xdg-open", notes], [XDG_UTILS + "/xdg-open", "https://example.org/fxu"],
                 [XDG_UTILS + "/xdg-email", "--subject", "Hi", "--body", "Text", "--cc", "c@example.org",
                  "a@example.org"]):
        code = f"import subprocess; print(subprocess.run({argv!r}).returncode)"
        r = limentest.run_sandboxed(bus, APP, code, ro_binds=(folder,), flatpak_info=INFO)
        assert r.stdout.strip() == "0", (argv, r.stdout, r.stderr)
    assert limentest.wait_until(lambda: f"org.example.Editor {notes}" in open(log).read(), 10), open(log).read()
    assert "org.example.Browser https://example.org/fxu" in open(log).read()
    assert limentest.wait_until(lambda: backend.requests("ComposeEmail"), 10)
    assert backend.requests("ComposeEmail")[-1][3] == {"addresses": ["a@example.org"], "cc": ["c@example.org"],
                                                        "subject": "Hi", "body": "Text"}
