"""Mock org.freedesktop.impl.portal.Lockdown (see portalmock.py for the controls)."""
import os
import sys

import dbus

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import portalmock  # noqa: E402

BUS_NAME = portalmock.BUS_NAME
MAIN_OBJ = portalmock.MAIN_OBJ
MAIN_IFACE = "org.freedesktop.impl.portal.Lockdown"
SYSTEM_BUS = False


def load(mock, parameters):
    portalmock.setup(mock, parameters)
    props = {k: dbus.Boolean(parameters.get(k, False)) for k in (
        "disable-printing", "disable-save-to-disk", "disable-application-handlers",
        "disable-location", "disable-camera", "disable-microphone", "disable-sound-output")}
    mock.AddProperties(MAIN_IFACE, props)
