"""Mock org.freedesktop.impl.portal.Email (see portalmock.py for the controls)."""
import os
import sys

import dbus

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import portalmock  # noqa: E402

BUS_NAME = portalmock.BUS_NAME
MAIN_OBJ = portalmock.MAIN_OBJ
MAIN_IFACE = "org.freedesktop.impl.portal.Email"
SYSTEM_BUS = False


def load(mock, parameters):
    portalmock.setup(mock, parameters)


@dbus.service.method(MAIN_IFACE, in_signature="ossa{sv}", out_signature="ua{sv}", async_callbacks=("ok", "err"))
def ComposeEmail(self, handle, app_id, parent_window, options, ok, err):
    portalmock.handle_request(self, "ComposeEmail", handle, app_id, options, ok, err)
