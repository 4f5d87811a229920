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
    # Version 3 with its targets unless the test asks for an older backend (screenshot_version 2
    # has no AvailableTargets); tests change them with org.freedesktop.DBus.Mock.UpdateProperties.
    version = int(parameters.get("screenshot_version", 3))
    props = {"version": dbus.UInt32(version)}
    if version >= 3:
        props["AvailableTargets"] = dbus.UInt32(int(parameters.get("available_targets", 1 | 2 | 4 | 8)))
    mock.AddProperties(MAIN_IFACE, props)


@dbus.service.method(MAIN_IFACE, in_signature="ossa{sv}", out_signature="ua{sv}", async_callbacks=("ok", "err"))
def Screenshot(self, handle, app_id, parent_window, options, ok, err):
    portalmock.handle_request(self, "Screenshot", handle, app_id, options, ok, err,
                              default=(0, {"uri": "file:///tmp/limen-mock-screenshot.png"}, 0))


@dbus.service.method(MAIN_IFACE, in_signature="ossa{sv}", out_signature="ua{sv}", async_callbacks=("ok", "err"))
def PickColor(self, handle, app_id, parent_window, options, ok, err):
    portalmock.handle_request(self, "PickColor", handle, app_id, options, ok, err,
                              default=(0, {"color": dbus.Struct((0.5, 0.25, 1.0), signature="ddd")}, 0))
