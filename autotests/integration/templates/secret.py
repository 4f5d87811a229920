"""Mock org.freedesktop.impl.portal.Secret (see portalmock.py for the controls)."""
import os
import sys

import dbus

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import portalmock  # noqa: E402

BUS_NAME = portalmock.BUS_NAME
MAIN_OBJ = portalmock.MAIN_OBJ
MAIN_IFACE = "org.freedesktop.impl.portal.Secret"
SYSTEM_BUS = False


def load(mock, parameters):
    portalmock.setup(mock, parameters)


@dbus.service.method(MAIN_IFACE, in_signature="osha{sv}", out_signature="ua{sv}", async_callbacks=("ok", "err"))
def RetrieveSecret(self, handle, app_id, fd, options, ok, err):
    """Writes "secret-of-APPID" into the pipe."""
    f = fd.take()
    os.write(f, ("secret-of-" + str(app_id)).encode())
    os.close(f)
    portalmock.handle_request(self, "RetrieveSecret", handle, app_id, options, ok, err)
