"""Mock org.freedesktop.impl.portal.ScreenCast (controls: portalmock.py, castmock.py).
Start answers what SetResponse("ScreenCast.Start", ...) set; by default one monitor stream on
node 42 (parameter "node"), persisting what was asked with restore data ("mock", 1, <node>)."""
import os
import sys

import dbus

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import castmock  # noqa: E402
import portalmock  # noqa: E402

BUS_NAME = portalmock.BUS_NAME
MAIN_OBJ = portalmock.MAIN_OBJ
MAIN_IFACE = "org.freedesktop.impl.portal.ScreenCast"
SYSTEM_BUS = False


def load(mock, parameters):
    castmock.setup(mock, parameters)
    mock.cast_node = int((parameters or {}).get("node", 42))
    mock.AddProperties(MAIN_IFACE, dbus.Dictionary({
        "AvailableSourceTypes": dbus.UInt32((parameters or {}).get("source-types", 3)),
        "AvailableCursorModes": dbus.UInt32((parameters or {}).get("cursor-modes", 3)),
        "version": dbus.UInt32(5),
    }, signature="sv"))


@dbus.service.method(MAIN_IFACE, in_signature="oosa{sv}", out_signature="ua{sv}", async_callbacks=("ok", "err"))
def CreateSession(self, handle, session_handle, app_id, options, ok, err):
    castmock.create_session(self, "ScreenCast", handle, session_handle, app_id, options, ok, err)


@dbus.service.method(MAIN_IFACE, in_signature="oosa{sv}", out_signature="ua{sv}", async_callbacks=("ok", "err"))
def SelectSources(self, handle, session_handle, app_id, options, ok, err):
    self.cast_select = dict(options)
    portalmock.handle_request(self, "ScreenCast.SelectSources", handle, app_id, options, ok, err)


def start_results(mock):
    node = dbus.UInt32(mock.cast_node)
    results = {"streams": dbus.Array([dbus.Struct((node, dbus.Dictionary({
        "id": "0", "position": dbus.Struct((0, 0), signature="ii"), "size": dbus.Struct((1280, 800), signature="ii"),
        "source_type": dbus.UInt32(1), "mapping_id": "mock-output-0"}, signature="sv")), signature="ua{sv}")],
        signature="(ua{sv})")}
    select = getattr(mock, "cast_select", {})
    if int(select.get("persist_mode", 0)) > 0:
        results["persist_mode"] = dbus.UInt32(select["persist_mode"])
        results["restore_data"] = dbus.Struct(("mock", dbus.UInt32(1), dbus.UInt32(node, variant_level=1)),
                                              signature="suv")
    return results


@dbus.service.method(MAIN_IFACE, in_signature="oossa{sv}", out_signature="ua{sv}", async_callbacks=("ok", "err"))
def Start(self, handle, session_handle, app_id, parent_window, options, ok, err):
    portalmock.handle_request(self, "ScreenCast.Start", handle, app_id, options, ok, err,
                              default=(0, start_results(self), 0))
