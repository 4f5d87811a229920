"""Mock org.freedesktop.impl.portal.Wallpaper (see portalmock.py for the controls)."""
import os
import sys

import dbus

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import portalmock  # noqa: E402

BUS_NAME = portalmock.BUS_NAME
MAIN_OBJ = portalmock.MAIN_OBJ
MAIN_IFACE = "org.freedesktop.impl.portal.Wallpaper"
SYSTEM_BUS = False


def load(mock, parameters):
    portalmock.setup(mock, parameters)


@dbus.service.method(MAIN_IFACE, in_signature="osssa{sv}", out_signature="u", async_callbacks=("ok", "err"))
def SetWallpaperURI(self, handle, app_id, parent_window, uri, options, ok, err):
    portalmock.record_args(self, "SetWallpaperURI", uri)
    portalmock.handle_request(self, "SetWallpaperURI", handle, app_id, options, lambda r, res: ok(r), err)
