"""Mock org.freedesktop.impl.portal.RemoteDesktop (controls: portalmock.py, castmock.py).
Notify* calls are recorded (GetArgs); ConnectToEIS answers a socket end once SetEis(true) (or the
parameter "eis") asked for it, else NotSupported."""
import os
import socket
import sys

import dbus

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import castmock  # noqa: E402
import portalmock  # noqa: E402

BUS_NAME = portalmock.BUS_NAME
MAIN_OBJ = portalmock.MAIN_OBJ
MAIN_IFACE = "org.freedesktop.impl.portal.RemoteDesktop"
SYSTEM_BUS = False


def load(mock, parameters):
    castmock.setup(mock, parameters)
    mock.cast_eis = bool((parameters or {}).get("eis", False))
    mock.AddMethods(portalmock.CONTROL_IFACE, [("SetEis", "b", "", "self.cast_eis = bool(args[0])")])
    mock.AddProperties(MAIN_IFACE, dbus.Dictionary({
        "AvailableDeviceTypes": dbus.UInt32(7),
        "version": dbus.UInt32(2),
    }, signature="sv"))


@dbus.service.method(MAIN_IFACE, in_signature="oosa{sv}", out_signature="ua{sv}", async_callbacks=("ok", "err"))
def CreateSession(self, handle, session_handle, app_id, options, ok, err):
    castmock.create_session(self, "RemoteDesktop", handle, session_handle, app_id, options, ok, err)


@dbus.service.method(MAIN_IFACE, in_signature="oosa{sv}", out_signature="ua{sv}", async_callbacks=("ok", "err"))
def SelectDevices(self, handle, session_handle, app_id, options, ok, err):
    self.cast_devices = dict(options)
    portalmock.handle_request(self, "RemoteDesktop.SelectDevices", handle, app_id, options, ok, err)


@dbus.service.method(MAIN_IFACE, in_signature="oossa{sv}", out_signature="ua{sv}", async_callbacks=("ok", "err"))
def Start(self, handle, session_handle, app_id, parent_window, options, ok, err):
    import screencast
    asked = getattr(self, "cast_devices", {})
    results = {"devices": dbus.UInt32(asked.get("types", 7)), "clipboard_enabled": True}
    if hasattr(self, "cast_select"):
        results.update(screencast.start_results(self))
    if int(asked.get("persist_mode", 0)) > 0:
        results["persist_mode"] = dbus.UInt32(asked["persist_mode"])
        results["restore_data"] = dbus.Struct(("mock", dbus.UInt32(1), dbus.UInt32(7, variant_level=1)),
                                              signature="suv")
    portalmock.handle_request(self, "RemoteDesktop.Start", handle, app_id, options, ok, err,
                              default=(0, results, 0))


def _notify(name, sig):
    # dbus-python reads the argument names, so each method gets real ones.
    n = len(list(dbus.Signature(sig)))
    names = ", ".join(f"a{i}" for i in range(n))
    scope = {"portalmock": portalmock}
    exec(f"def {name}(self, {names}):\n    portalmock.record_args(self, {name!r}, {names})\n", scope)
    return dbus.service.method(MAIN_IFACE, in_signature=sig, out_signature="")(scope[name])


NotifyPointerMotion = _notify("NotifyPointerMotion", "oa{sv}dd")
NotifyPointerMotionAbsolute = _notify("NotifyPointerMotionAbsolute", "oa{sv}udd")
NotifyPointerButton = _notify("NotifyPointerButton", "oa{sv}iu")
NotifyPointerAxis = _notify("NotifyPointerAxis", "oa{sv}dd")
NotifyPointerAxisDiscrete = _notify("NotifyPointerAxisDiscrete", "oa{sv}ui")
NotifyKeyboardKeycode = _notify("NotifyKeyboardKeycode", "oa{sv}iu")
NotifyKeyboardKeysym = _notify("NotifyKeyboardKeysym", "oa{sv}iu")
NotifyTouchDown = _notify("NotifyTouchDown", "oa{sv}uudd")
NotifyTouchMotion = _notify("NotifyTouchMotion", "oa{sv}uudd")
NotifyTouchUp = _notify("NotifyTouchUp", "oa{sv}u")


@dbus.service.method(MAIN_IFACE, in_signature="osa{sv}", out_signature="h")
def ConnectToEIS(self, session_handle, app_id, options):
    portalmock.record_args(self, "ConnectToEIS", session_handle, app_id)
    if not self.cast_eis:
        raise dbus.exceptions.DBusException("no EIS here", name="org.freedesktop.DBus.Error.NotSupported")
    a, b = socket.socketpair()
    self.cast_eis_peer = a
    fd = dbus.types.UnixFd(b.fileno())
    b.close()
    return fd
