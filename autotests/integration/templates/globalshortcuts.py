"""Mock org.freedesktop.impl.portal.GlobalShortcuts (see portalmock.py for the controls).

Extra controls on the main object (org.limen.MockBackend):
  EmitKey(s signal, o session, s id, t timestamp, a{sv} options)  Activated / Deactivated
  EmitChanged(o session, a(sa{sv}) shortcuts)                       ShortcutsChanged
Impl Sessions are exported at their handle; their Close is recorded (GetClosed)."""
import os
import sys

import dbus
import dbus.service

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import portalmock  # noqa: E402

BUS_NAME = portalmock.BUS_NAME
MAIN_OBJ = portalmock.MAIN_OBJ
MAIN_IFACE = "org.freedesktop.impl.portal.GlobalShortcuts"
SESSION_IFACE = "org.freedesktop.impl.portal.Session"
SYSTEM_BUS = False


class ImplSession(dbus.service.Object):
    def __init__(self, mock, path):
        dbus.service.Object.__init__(self, mock.bus_name, path)
        self.methods = {}
        self.interface = SESSION_IFACE
        self.mock = mock
        self.path = path

    @dbus.service.method(SESSION_IFACE, in_signature="", out_signature="")
    def Close(self):
        self.mock.limen.closed.append(self.path)
        self.remove_from_connection()


@dbus.service.method(MAIN_IFACE, in_signature="oosa{sv}", out_signature="ua{sv}")
def CreateSession(self, handle, session_handle, app_id, options):
    self.limen.requests.append(("CreateSession", str(session_handle), str(app_id),
                                dbus.Dictionary(options, signature="sv")))
    ImplSession(self, str(session_handle))
    response, results, _ = self.limen.responses.get("CreateSession", (0, {}, 0))
    return dbus.UInt32(response), dbus.Dictionary(results, signature="sv")


@dbus.service.method(MAIN_IFACE, in_signature="ooa(sa{sv})sa{sv}", out_signature="ua{sv}",
                     async_callbacks=("ok", "err"))
def BindShortcuts(self, handle, session_handle, shortcuts, parent_window, options, ok, err):
    portalmock.record_args(self, "BindShortcuts", session_handle, shortcuts, parent_window, options)
    portalmock.handle_request(self, "BindShortcuts", handle, "", options, ok, err)


@dbus.service.method(MAIN_IFACE, in_signature="oo", out_signature="ua{sv}", async_callbacks=("ok", "err"))
def ListShortcuts(self, handle, session_handle, ok, err):
    portalmock.handle_request(self, "ListShortcuts", handle, "", {}, ok, err)


@dbus.service.method(MAIN_IFACE, in_signature="osa{sv}", out_signature="")
def ConfigureShortcuts(self, session_handle, parent_window, options):
    portalmock.record_args(self, "ConfigureShortcuts", session_handle, parent_window, options)


def load(mock, parameters):
    portalmock.setup(mock, parameters)
    mock.AddProperty(MAIN_IFACE, "version", dbus.UInt32(2))
    mock.AddMethod(portalmock.CONTROL_IFACE, "EmitKey", "sosta{sv}", "",
                   "self.EmitSignal('%s', args[0], 'osta{sv}', args[1:])" % MAIN_IFACE)
    mock.AddMethod(portalmock.CONTROL_IFACE, "EmitChanged", "oa(sa{sv})", "",
                   "self.EmitSignal('%s', 'ShortcutsChanged', 'oa(sa{sv})', args)" % MAIN_IFACE)
