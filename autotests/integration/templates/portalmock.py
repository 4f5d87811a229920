"""Shared machinery of Limen's dbusmock portal backends (not a template itself).

Each impl method of a template calls handle_request(); what it answers is set by the test
through org.limen.MockBackend on the mock's main object:
  SetResponse(s method, u response, a{sv} results, i delay_ms)  delay -1: wait for Close
  GetRequests() -> a(sssa{sv})   (method, handle, app_id, options) of every call so far
  GetClosed() -> as              impl Request paths whose Close was called
  GetArgs() -> a(sav)            (method, other arguments) of every call, in order
Every call exports an impl Request at its handle until it is answered or closed."""

import dbus
import dbus.service
from gi.repository import GLib

CONTROL_IFACE = "org.limen.MockBackend"
REQUEST_IFACE = "org.freedesktop.impl.portal.Request"
BUS_NAME = "org.freedesktop.impl.portal.desktop.limentest"
MAIN_OBJ = "/org/freedesktop/portal/desktop"


class State:
    def __init__(self):
        self.responses = {}
        self.requests = []
        self.closed = []
        self.args = []
        self.live = {}


class ImplRequest(dbus.service.Object):
    def __init__(self, mock, path):
        dbus.service.Object.__init__(self, mock.bus_name, path)
        # dbusmock's method lookup replaces dbus-python's for every object and expects these.
        self.methods = {}
        self.interface = REQUEST_IFACE
        self.on_close = None

    @dbus.service.method(REQUEST_IFACE, in_signature="", out_signature="")
    def Close(self):
        if self.on_close:
            self.on_close()


def setup(mock, parameters=None):
    if hasattr(mock, "limen"):
        return
    mock.limen = State()
    mock.AddMethods(CONTROL_IFACE, [
        ("SetResponse", "sua{sv}i", "",
         "self.limen.responses[args[0]] = (int(args[1]), args[2], int(args[3]))"),
        ("GetRequests", "", "a(sssa{sv})", "ret = self.limen.requests"),
        ("GetClosed", "", "as", "ret = self.limen.closed"),
        ("GetArgs", "", "a(sav)", "ret = self.limen.args"),
    ])
    for method, spec in (parameters or {}).get("responses", {}).items():
        mock.limen.responses[method] = tuple(spec)





def handle_request(mock, method, handle, app_id, options, ok, err, default=(0, {}, 0), results_func=None):
    """Answer @method's call at @handle as the test asked (or @default)."""
    st = mock.limen
    st.requests.append((method, str(handle), str(app_id), dbus.Dictionary(options, signature="sv")))
    response, results, delay = st.responses.get(method, default)
    if results_func:
        results = results_func(results)
    handle = str(handle)
    old = st.live.pop(handle, None)
    if old is not None:
        old.answer(2, {})
    req = ImplRequest(mock, handle)
    state = {"done": False}

    def answer(resp, res):
        if state["done"]:
            return False
        state["done"] = True
        st.live.pop(handle, None)
        req.remove_from_connection()
        ok(dbus.UInt32(resp), dbus.Dictionary(res, signature="sv"))
        return False

    def on_close():
        st.closed.append(handle)
        answer(2, {})

    req.on_close = on_close
    req.answer = answer
    st.live[handle] = req
    if delay < 0:
        return
    if delay == 0:
        answer(response, results)
    else:
        GLib.timeout_add(delay, answer, response, results)


def record_args(mock, method, *args):
    """Keep the arguments of a call that has no Request (AddNotification, ...)."""
    mock.limen.args.append((method, dbus.Array(list(args), signature="v")))
