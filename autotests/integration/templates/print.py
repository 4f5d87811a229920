"""Mock org.freedesktop.impl.portal.Print (see portalmock.py for the controls)."""
import os
import sys

import dbus

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import portalmock  # noqa: E402

BUS_NAME = portalmock.BUS_NAME
MAIN_OBJ = portalmock.MAIN_OBJ
MAIN_IFACE = "org.freedesktop.impl.portal.Print"
SYSTEM_BUS = False


def load(mock, parameters):
    portalmock.setup(mock, parameters)


@dbus.service.method(MAIN_IFACE, in_signature="osssa{sv}a{sv}a{sv}", out_signature="ua{sv}",
                     async_callbacks=("ok", "err"))
def PreparePrint(self, handle, app_id, parent_window, title, settings, page_setup, options, ok, err):
    portalmock.record_args(self, "PreparePrint", settings, page_setup)
    portalmock.handle_request(self, "PreparePrint", handle, app_id, options, ok, err,
                              default=(0, {"settings": settings, "page-setup": page_setup,
                                           "token": dbus.UInt32(7)}, 0))


@dbus.service.method(MAIN_IFACE, in_signature="osssha{sv}", out_signature="ua{sv}", async_callbacks=("ok", "err"))
def Print(self, handle, app_id, parent_window, title, fd, options, ok, err):
    f = fd.take()
    data = os.read(f, 4096)
    os.close(f)
    portalmock.record_args(self, "Print", dbus.ByteArray(data))
    portalmock.handle_request(self, "Print", handle, app_id, options, ok, err)
