"""GLib's own portal clients, as every GTK or GLib app in a Flatpak sandbox uses them without
knowing: GIO's portal implementations of GNetworkMonitor, GProxyResolver, GMemoryMonitor and
GPowerProfileMonitor, g_file_trash() and g_app_info_launch_default_for_uri(), run inside
bwrap with a .flatpak-info, against limen-portal (with limen-documents and the dbusmock
AppChooser backend of templates/). Each must get what the portal promises, through GIO's
own calls and signal handling, not ours."""
import json
import os

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
