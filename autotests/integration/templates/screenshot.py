"""Mock org.freedesktop.impl.portal.Screenshot (see portalmock.py for the controls)."""
import os
import sys

import dbus

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import portalmock  # noqa: E402

BUS_NAME = portalmock.BUS_NAME
MAIN_OBJ = portalmock.MAIN_OBJ
MAIN_IFACE = "org.freedesktop.impl.portal.Screenshot"
SYSTEM_BUS = False


def load(mock, parameters):
    portalmock.setup(mock, parameters)


@dbus.service.method(MAIN_IFACE, in_signature="ossa{sv}", out_signature="ua{sv}", async_callbacks=("ok", "err"))
def Screenshot(self, handle, app_id, parent_window, options, ok, err):
    portalmock.handle_request(self, "Screenshot", handle, app_id, options, ok, err,
                              default=(0, {"uri": "file:///tmp/limen-mock-screenshot.png"}, 0))


@dbus.service.method(MAIN_IFACE, in_signature="ossa{sv}", out_signature="ua{sv}", async_callbacks=("ok", "err"))
def PickColor(self, handle, app_id, parent_window, options, ok, err):
    portalmock.handle_request(self, "PickColor", handle, app_id, options, ok, err,
                              default=(0, {"color": dbus.Struct((0.5, 0.25, 1.0), signature="ddd")}, 0))
