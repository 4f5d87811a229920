"""Mock org.freedesktop.impl.portal.AppChooser (see portalmock.py for the controls)."""
import os
import sys

import dbus

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import portalmock  # noqa: E402

BUS_NAME = portalmock.BUS_NAME
MAIN_OBJ = portalmock.MAIN_OBJ
MAIN_IFACE = "org.freedesktop.impl.portal.AppChooser"
SYSTEM_BUS = False


def load(mock, parameters):
    portalmock.setup(mock, parameters)


@dbus.service.method(MAIN_IFACE, in_signature="ossasa{sv}", out_signature="ua{sv}", async_callbacks=("ok", "err"))
def ChooseApplication(self, handle, app_id, parent_window, choices, options, ok, err):
    """Default answer: the first choice offered."""
    portalmock.record_args(self, "ChooseApplication", dbus.Array(choices, signature="s"))
    portalmock.handle_request(self, "ChooseApplication", handle, app_id, options, ok, err,
                              default=(0, {"choice": choices[0]} if choices else {}, 0))


@dbus.service.method(MAIN_IFACE, in_signature="oas", out_signature="")
def UpdateChoices(self, handle, choices):
    portalmock.record_args(self, "UpdateChoices", handle, dbus.Array(choices, signature="s"))
