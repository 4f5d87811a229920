"""Mock org.freedesktop.impl.portal.Notification (see portalmock.py for the controls).
org.limen.MockBackend.InvokeAction(s app_id, s id, s action) emits ActionInvoked."""
import os
import sys

import dbus

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import portalmock  # noqa: E402

BUS_NAME = portalmock.BUS_NAME
MAIN_OBJ = portalmock.MAIN_OBJ
MAIN_IFACE = "org.freedesktop.impl.portal.Notification"
SYSTEM_BUS = False


def load(mock, parameters):
    portalmock.setup(mock, parameters)
    # The impl interface's version (parameter "version"; 0: no such property, as in 1.16).
    version = int((parameters or {}).get("version", 2))
    if version:
        mock.AddProperty(MAIN_IFACE, "version", dbus.UInt32(version))
    mock.AddMethod("org.limen.MockBackend", "InvokeAction", "sss", "",
                   "self.EmitSignal('org.freedesktop.impl.portal.Notification', 'ActionInvoked', 'sssav', "
                   "[args[0], args[1], args[2], dbus.Array([], signature='v')])")


@dbus.service.method(MAIN_IFACE, in_signature="ssa{sv}", out_signature="")
def AddNotification(self, app_id, id, notification):
    portalmock.record_args(self, "AddNotification", app_id, id, dbus.Dictionary(notification, signature="sv"))


@dbus.service.method(MAIN_IFACE, in_signature="ss", out_signature="")
def RemoveNotification(self, app_id, id):
    portalmock.record_args(self, "RemoveNotification", app_id, id)
