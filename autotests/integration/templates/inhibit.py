"""Mock org.freedesktop.impl.portal.Inhibit (see portalmock.py for the controls)."""
import os
import sys

import dbus
from gi.repository import GLib

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import portalmock  # noqa: E402

BUS_NAME = portalmock.BUS_NAME
MAIN_OBJ = portalmock.MAIN_OBJ
MAIN_IFACE = "org.freedesktop.impl.portal.Inhibit"
SYSTEM_BUS = False


def load(mock, parameters):
    portalmock.setup(mock, parameters)


@dbus.service.method(MAIN_IFACE, in_signature="ossua{sv}", out_signature="")
def Inhibit(self, handle, app_id, window, flags, options):
    """The impl Request stays until Close, which is recorded."""
    portalmock.record_args(self, "Inhibit", flags)
    portalmock.handle_request(self, "Inhibit", handle, app_id, options, lambda r, res: None, None,
                              default=(0, {}, -1))


@dbus.service.method(MAIN_IFACE, in_signature="ooss", out_signature="u")
def CreateMonitor(self, handle, session_handle, app_id, window):
    portalmock.record_args(self, "CreateMonitor", session_handle)
    self.limen.requests.append(("CreateMonitor", str(handle), str(app_id), dbus.Dictionary({}, signature="sv")))
    response, results, _ = self.limen.responses.get("CreateMonitor", (0, {}, 0))
    if "initial-state" in results:
        # As Plasma's and upstream's test backend do: the current state right behind the reply.
        state = dbus.Dictionary({"session-state": dbus.UInt32(results["initial-state"])}, signature="sv")

        def emit():
            self.EmitSignal(MAIN_IFACE, "StateChanged", "oa{sv}", [session_handle, state])
            return False
        GLib.idle_add(emit)
    return dbus.UInt32(response)


@dbus.service.method(MAIN_IFACE, in_signature="o", out_signature="")
def QueryEndResponse(self, session_handle):
    portalmock.record_args(self, "QueryEndResponse", session_handle)


def load(mock, parameters):  # noqa: F811
    portalmock.setup(mock, parameters)
    mock.AddMethod("org.limen.MockBackend", "EmitStateChanged", "oa{sv}", "",
                   "self.EmitSignal('org.freedesktop.impl.portal.Inhibit', 'StateChanged', 'oa{sv}', args)")
    # The backend ends a session on its own: org.freedesktop.impl.portal.Session.Closed at its path.
    mock.AddMethod("org.limen.MockBackend", "CloseSession", "o", "",
                   "import dbus.lowlevel\n"
                   "self.connection.send_message(dbus.lowlevel.SignalMessage(args[0], "
                   "'org.freedesktop.impl.portal.Session', 'Closed'))")
