"""Mock org.freedesktop.impl.portal.DynamicLauncher (see portalmock.py for the controls).
PrepareInstall answers 0 with the name unchanged; RequestInstallToken answers the response
set for "RequestInstallToken" (0 by default)."""
import os
import sys

import dbus

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import portalmock  # noqa: E402

BUS_NAME = portalmock.BUS_NAME
MAIN_OBJ = portalmock.MAIN_OBJ
MAIN_IFACE = "org.freedesktop.impl.portal.DynamicLauncher"
SYSTEM_BUS = False


def load(mock, parameters):
    portalmock.setup(mock, parameters)
    # Both launcher kinds unless the test says otherwise (launcher_types).
    mock.AddProperties(MAIN_IFACE, {"version": dbus.UInt32(1),
                                    "SupportedLauncherTypes": dbus.UInt32(int(parameters.get("launcher_types", 3)))})


@dbus.service.method(MAIN_IFACE, in_signature="osssva{sv}", out_signature="ua{sv}", async_callbacks=("ok", "err"))
def PrepareInstall(self, handle, app_id, parent_window, name, icon_v, options, ok, err):
    portalmock.handle_request(self, "PrepareInstall", handle, app_id, options, ok, err,
                              default=(0, {"name": name}, 0))


@dbus.service.method(MAIN_IFACE, in_signature="sa{sv}", out_signature="u")
def RequestInstallToken(self, app_id, options):
    portalmock.record_args(self, "RequestInstallToken", app_id)
    return dbus.UInt32(self.limen.responses.get("RequestInstallToken", (0, {}, 0))[0])
