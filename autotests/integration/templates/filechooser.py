"""Mock org.freedesktop.impl.portal.FileChooser (see portalmock.py for the controls).
Answers response 0 with results {} unless told otherwise."""
import os
import sys

import dbus

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import portalmock  # noqa: E402

BUS_NAME = portalmock.BUS_NAME
MAIN_OBJ = portalmock.MAIN_OBJ
MAIN_IFACE = "org.freedesktop.impl.portal.FileChooser"
SYSTEM_BUS = False


def load(mock, parameters):
    portalmock.setup(mock, parameters)


@dbus.service.method(MAIN_IFACE, in_signature="osssa{sv}", out_signature="ua{sv}",
                     async_callbacks=("ok", "err"))
def OpenFile(self, handle, app_id, parent_window, title, options, ok, err):
    portalmock.handle_request(self, "OpenFile", handle, app_id, options, ok, err)


@dbus.service.method(MAIN_IFACE, in_signature="osssa{sv}", out_signature="ua{sv}",
                     async_callbacks=("ok", "err"))
def SaveFile(self, handle, app_id, parent_window, title, options, ok, err):
    portalmock.handle_request(self, "SaveFile", handle, app_id, options, ok, err)


@dbus.service.method(MAIN_IFACE, in_signature="osssa{sv}", out_signature="ua{sv}",
                     async_callbacks=("ok", "err"))
def SaveFiles(self, handle, app_id, parent_window, title, options, ok, err):
    portalmock.handle_request(self, "SaveFiles", handle, app_id, options, ok, err)
