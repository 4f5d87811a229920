"""Mock org.freedesktop.impl.portal.Background (see portalmock.py for the controls).
EnableAutostart records its arguments and answers true. GetAppState answers what the control
method SetAppState (a{sv}, b) set last (nothing: no app has windows); with b true that also
emits RunningApplicationsChanged."""
import os
import sys

import dbus

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import portalmock  # noqa: E402

BUS_NAME = portalmock.BUS_NAME
MAIN_OBJ = portalmock.MAIN_OBJ
MAIN_IFACE = "org.freedesktop.impl.portal.Background"
SYSTEM_BUS = False


def load(mock, parameters):
    portalmock.setup(mock, parameters)
    mock.limen_app_states = {}
    mock.AddMethods(portalmock.CONTROL_IFACE, [
        ("SetAppState", "a{sv}b", "",
         "self.limen_app_states = dict(args[0])\n"
         "if args[1]:\n"
         "    self.EmitSignal('%s', 'RunningApplicationsChanged', '', [])" % MAIN_IFACE),
    ])


@dbus.service.method(MAIN_IFACE, in_signature="", out_signature="a{sv}")
def GetAppState(self):
    return dbus.Dictionary(getattr(self, "limen_app_states", {}), signature="sv")


@dbus.service.method(MAIN_IFACE, in_signature="oss", out_signature="ua{sv}", async_callbacks=("ok", "err"))
def NotifyBackground(self, handle, app_id, name, ok, err):
    portalmock.handle_request(self, "NotifyBackground", handle, app_id, {}, ok, err)


@dbus.service.method(MAIN_IFACE, in_signature="sbasu", out_signature="b")
def EnableAutostart(self, app_id, enable, commandline, flags):
    portalmock.record_args(self, "EnableAutostart", app_id, enable, dbus.Array(commandline, signature="s"), flags)
    return True
