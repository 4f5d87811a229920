"""Mock org.freedesktop.impl.portal.Inhibit (see portalmock.py for the controls)."""
import os
import sys

import dbus

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
    return dbus.UInt32(self.limen.responses.get("CreateMonitor", (0, {}, 0))[0])


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
