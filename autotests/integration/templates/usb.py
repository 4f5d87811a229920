"""Mock org.freedesktop.impl.portal.Usb (see portalmock.py for the controls).
With no SetResponse for AcquireDevices it allows every device as asked; SetResponse
results {"deny": true} answer 0 with no device, any other results are sent as they are."""
import os
import sys

import dbus

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import portalmock  # noqa: E402

BUS_NAME = portalmock.BUS_NAME
MAIN_OBJ = portalmock.MAIN_OBJ
MAIN_IFACE = "org.freedesktop.impl.portal.Usb"
SYSTEM_BUS = False


def load(mock, parameters):
    portalmock.setup(mock, parameters)


@dbus.service.method(MAIN_IFACE, in_signature="ossa(sa{sv}a{sv})a{sv}", out_signature="ua{sv}",
                     async_callbacks=("ok", "err"))
def AcquireDevices(self, handle, parent_window, app_id, devices, options, ok, err):
    portalmock.record_args(self, "AcquireDevices", parent_window, devices)
    asked = dbus.Array([dbus.Struct((d[0], d[2]), signature="sa{sv}") for d in devices], signature="(sa{sv})")

    def results(res):
        if not res:
            return {"devices": asked}
        if res.get("deny"):
            return {"devices": dbus.Array([], signature="(sa{sv})")}
        return res

    portalmock.handle_request(self, "AcquireDevices", handle, app_id, options, ok, err,
                              default=(0, {}, 0), results_func=results)
