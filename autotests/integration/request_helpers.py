"""Helpers for the request portals' tests: dbusmock backends from templates/ and a client
that calls a request method and waits for its Response."""

import os
import time

from gi.repository import Gio, GLib

import limentest

TEMPLATES = os.path.join(os.path.dirname(os.path.abspath(__file__)), "templates")
BACKEND_NAME = "org.freedesktop.impl.portal.desktop.limentest"
MOCK_IFACE = "org.freedesktop.DBus.Mock"
CONTROL_IFACE = "org.limen.MockBackend"
REQUEST_IFACE = "org.freedesktop.portal.Request"

IMPL = {
    "filechooser": "org.freedesktop.impl.portal.FileChooser",
    "account": "org.freedesktop.impl.portal.Account",
    "access": "org.freedesktop.impl.portal.Access",
    "lockdown": "org.freedesktop.impl.portal.Lockdown",
    "appchooser": "org.freedesktop.impl.portal.AppChooser",
    "screenshot": "org.freedesktop.impl.portal.Screenshot",
    "print": "org.freedesktop.impl.portal.Print",
    "email": "org.freedesktop.impl.portal.Email",
    "inhibit": "org.freedesktop.impl.portal.Inhibit",
    "notification": "org.freedesktop.impl.portal.Notification",
    "background": "org.freedesktop.impl.portal.Background",
    "wallpaper": "org.freedesktop.impl.portal.Wallpaper",
    "dynamiclauncher": "org.freedesktop.impl.portal.DynamicLauncher",
    "secret": "org.freedesktop.impl.portal.Secret",
    "screencast": "org.freedesktop.impl.portal.ScreenCast",
    "remote_desktop": "org.freedesktop.impl.portal.RemoteDesktop",
    "globalshortcuts": "org.freedesktop.impl.portal.GlobalShortcuts",
    "input_capture": "org.freedesktop.impl.portal.InputCapture",
}


def template(name):
    return os.path.join(TEMPLATES, f"{name}.py")


def write_config(bus, names, source="limentest", dbus_name=BACKEND_NAME):
    """The .portal file (UseIn=test, which the reference 1.16 understands too) and a
    test-portals.conf choosing it."""
    bus.write_portal_file(source, dbus_name, [IMPL[n] for n in names], use_in="test")
    conf_dir = os.path.join(bus.config_home, "xdg-desktop-portal")
    os.makedirs(conf_dir, exist_ok=True)
    with open(os.path.join(conf_dir, "test-portals.conf"), "w") as f:
        f.write(f"[preferred]\ndefault={source}\n")


class Backend:
    """One dbusmock process serving the templates @names on BACKEND_NAME."""

    def __init__(self, bus, names, params=None):
        self.bus = bus
        self.names = list(names)
        self.daemon = bus.start_dbusmock_template(template(self.names[0]), params=params or {},
                                                  wait_name=BACKEND_NAME)
        for n in self.names[1:]:
            bus.call(MOCK_IFACE, "AddTemplate", (template(n), {}), "(sa{sv})", dest=BACKEND_NAME)

    def set_response(self, method, response=0, results=None, delay_ms=0):
        self.bus.call(CONTROL_IFACE, "SetResponse", (method, response, results or {}, delay_ms),
                      "(sua{sv}i)", dest=BACKEND_NAME)

    def requests(self, method=None):
        r = self.bus.call(CONTROL_IFACE, "GetRequests", dest=BACKEND_NAME)[0]
        return [x for x in r if method is None or x[0] == method]

    def closed(self):
        return self.bus.call(CONTROL_IFACE, "GetClosed", dest=BACKEND_NAME)[0]

    def args(self, method=None):
        r = self.bus.call(CONTROL_IFACE, "GetArgs", dest=BACKEND_NAME)[0]
        return [a for m, a in r if method is None or m == method]

    def kill(self):
        self.daemon.stop(sig=9)


def setup(bus, names, params=None, portal_env=None, start_backend=True):
    """Config + backend + frontend; returns the Backend (or None)."""
    write_config(bus, names)
    backend = Backend(bus, names, params) if start_backend else None
    bus.start_portal(env=portal_env)
    return backend


class Client:
    """A connection of its own calling request methods of the frontend."""

    def __init__(self, bus, conn=None):
        self.bus = bus
        self.conn = conn or bus.new_connection()
        self.unique = self.conn.get_unique_name()
        self.counter = 0

    def handle_path(self, token):
        return self._object_path("request", token)

    def session_path(self, token):
        return self._object_path("session", token)

    def _object_path(self, kind, token):
        return "/org/freedesktop/portal/desktop/%s/%s/%s" % (kind, self.unique[1:].replace(".", "_"), token)

    def start(self, iface, method, args, signature, token=None, fds=None, options_index=-1):
        """Call; returns (handle, pending) where pending.wait() gives (response, results)."""
        self.counter += 1
        token = token or f"t{self.counter}"
        args = list(args)
        opts = dict(args[options_index])
        opts.setdefault("handle_token", GLib.Variant("s", token))
        args[options_index] = opts
        pending = Pending(self.conn, self.handle_path(opts["handle_token"].unpack()))
        try:
            handle = self.bus.call(iface, method, args, signature, conn=self.conn, fds=fds)[0]
        except GLib.Error:
            pending.cancel()
            raise
        if handle != pending.path:
            pending.cancel()
            pending = Pending(self.conn, handle)
        return handle, pending

    def request(self, iface, method, args, signature, timeout=10, **kw):
        handle, pending = self.start(iface, method, args, signature, **kw)
        return pending.wait(timeout)

    def close(self):
        self.conn.close_sync(None)


def object_exported(bus, dest, path):
    """Whether @dest has an object with an interface at @path."""
    xml = bus.call("org.freedesktop.DBus.Introspectable", "Introspect", dest=dest, path=path)[0]
    return "<interface " in xml


class Pending:
    def __init__(self, conn, path):
        self.conn = conn
        self.path = path
        self.result = None
        self.raw = None          # the Response's parameters as sent, types and all
        self.sub = conn.signal_subscribe(None, REQUEST_IFACE, "Response", path, None,
                                         Gio.DBusSignalFlags.NONE, self._on_response)

    def _on_response(self, conn, sender, path, iface, signal, params):
        self.raw = params
        self.result = params.unpack()
        self.time = time.monotonic()

    def wait(self, timeout=10):
        limentest.wait_until(lambda: self.result is not None, timeout)
        self.cancel()
        if self.result is None:
            raise TimeoutError(f"no Response on {self.path}")
        return self.result

    def got(self):
        ctx = GLib.MainContext.default()
        while ctx.pending():
            ctx.iteration(False)
        return self.result is not None

    def cancel(self):
        if self.sub:
            self.conn.signal_unsubscribe(self.sub)
            self.sub = 0

    def close_request(self, bus):
        bus.call(REQUEST_IFACE, "Close", path=self.path, conn=self.conn)


def v(sig, value):
    return GLib.Variant(sig, value)


def error_name(excinfo):
    return limentest.dbus_error_name(excinfo.value)


SANDBOX_CLIENT = r'''
import sys
from gi.repository import Gio, GLib
conn = Gio.bus_get_sync(Gio.BusType.SESSION, None)
iface, method, sig, text, token, close_after, read_back = %r
args = GLib.Variant.parse(GLib.VariantType(sig), text, None, None)
result = []
conn.signal_subscribe(None, "org.freedesktop.portal.Request", "Response", None, None, 0,
                      lambda *a: result.append((a[2], a[5])))
GLib.timeout_add(100, lambda: True)
import time
t0 = time.monotonic()
try:
    h = conn.call_sync("org.freedesktop.portal.Desktop", "/org/freedesktop/portal/desktop", iface, method,
                       args, None, 0, 10000, None)
except GLib.Error as e:
    print("ERROR " + (Gio.DBusError.get_remote_error(e) or "") + " " + e.message)
    sys.exit(0)
if close_after:
    sys.exit(0)
handle = h.unpack()[0]
ctx = GLib.MainContext.default()
import time
end = time.time() + 30
def mine():
    return [r for p, r in result if p == handle]
while not mine() and time.time() < end:
    ctx.iteration(True)
print("ELAPSED %%f" %% (time.monotonic() - t0))
if read_back and mine():
    res = mine()[0].unpack()[1]
    for uri in res.get("uris", []) + [res[k] for k in ("uri", "image") if k in res]:
        try:
            with open(GLib.filename_from_uri(uri)[0], "rb") as f:
                print("READ " + f.read().hex())
        except OSError as e:
            print("READ-ERROR %%d" %% e.errno)
print("RESPONSE " + (mine()[0].print_(True) if mine() else "none"))
'''


def sandboxed_request(bus, app_id, iface, method, signature, args_text, token="sbx", close_after=False,
                      read_back=False, **kw):
    """Call @method from a bwrap sandbox as Flatpak app @app_id; returns ("RESPONSE", (u, a{sv}))
    or ("ERROR", name) or ("EXIT", None) with close_after (the caller exits right away)."""
    script = SANDBOX_CLIENT % ((iface, method, signature, args_text, token, close_after, read_back),)
    if read_back:
        # The app's view of the document store, in both places today's Flatpak puts it.
        doc = os.path.join(bus.runtime_dir, "doc")
        view = os.path.join(doc, "by-app", app_id)
        kw["extra_args"] = list(kw.get("extra_args", ())) + ["--bind", view, doc, "--bind", view, "/run/flatpak/doc"]
    r = limentest.run_sandboxed(bus, app_id, script, **kw)
    out = r.stdout.strip().splitlines()
    if not out:
        if close_after and r.returncode == 0:
            return ("EXIT", None)
        raise RuntimeError(f"sandboxed client failed ({r.returncode}): {r.stderr}")
    # Contents read back inside the sandbox (bytes), or ("error", errno).
    sandboxed_request.reads = [bytes.fromhex(l[5:]) if l.startswith("READ ") else ("error", int(l.split()[1]))
                               for l in out if l.startswith("READ")]
    for line in out:
        if line.startswith("ELAPSED "):
            kw_elapsed = float(line.split()[1])
            sandboxed_request.last_elapsed = kw_elapsed
    kind, _, rest = out[-1].partition(" ")
    if kind == "RESPONSE" and rest == "none":
        return ("TIMEOUT", None)
    if kind == "RESPONSE":
        return (kind, GLib.Variant.parse(None, rest, None, None).unpack())
    return (kind, rest.split(" ")[0])


STORE = "org.freedesktop.impl.portal.PermissionStore"
STORE_PATH = "/org/freedesktop/impl/portal/PermissionStore"


def set_permission(bus, table, id, app, perms):
    bus.call(STORE, "SetPermission", (table, True, id, app, perms), "(sbssas)", dest=STORE, path=STORE_PATH)


def lookup_permissions(bus, table, id):
    """{app: [strings]} of (table, id); {} when the table does not exist."""
    try:
        return bus.call(STORE, "Lookup", (table, id), "(ss)", dest=STORE, path=STORE_PATH)[0]
    except GLib.Error:
        return {}


def start_documents(bus):
    """A document store for exports: ours when built, else Debian's reference pair."""
    try:
        ours = limentest.binary("limen-documents")
    except FileNotFoundError:
        ours = None
    if ours and os.environ.get("LIMEN_REQUESTS_REFERENCE_DOCUMENTS") != "1":
        d = bus.start(ours, "--verbose", wait_name="org.freedesktop.portal.Documents")
        # Both names are requested at once; the tests use the store as soon as this returns.
        bus.wait_for_name("org.freedesktop.impl.portal.PermissionStore", daemon=d)
        # As flatpak does before it binds by-app/APP into a sandbox: answered once mounted.
        bus.call("org.freedesktop.portal.Documents", "GetMountPoint", dest="org.freedesktop.portal.Documents",
                 path="/org/freedesktop/portal/documents")
        return d
    bus.write_service_file("org.freedesktop.impl.portal.PermissionStore", "/usr/libexec/xdg-permission-store")
    return bus.start(["/usr/libexec/xdg-document-portal", "--replace"], wait_name="org.freedesktop.portal.Documents")
