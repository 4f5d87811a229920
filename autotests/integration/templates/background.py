"""Mock org.freedesktop.impl.portal.Background (see portalmock.py for the controls).
EnableAutostart records its arguments and answers true."""
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


@dbus.service.method(MAIN_IFACE, in_signature="", out_signature="a{sv}")
def GetAppState(self):
    return dbus.Dictionary({}, signature="sv")


@dbus.service.method(MAIN_IFACE, in_signature="oss", out_signature="ua{sv}", async_callbacks=("ok", "err"))
def NotifyBackground(self, handle, app_id, name, ok, err):
    portalmock.handle_request(self, "NotifyBackground", handle, app_id, {}, ok, err)


@dbus.service.method(MAIN_IFACE, in_signature="sbasu", out_signature="b")
def EnableAutostart(self, app_id, enable, commandline, flags):
    portalmock.record_args(self, "EnableAutostart", app_id, enable, dbus.Array(commandline, signature="s"), flags)
    return True
