"""Mock org.freedesktop.impl.portal.InputCapture, version 2 (controls: portalmock.py,
castmock.py). A small compositor: one zone set (SetZones changes it, serial bumped by 7),
barriers refused unless they lie on an outer edge of a zone, Enable/Disable/Release recorded
(GetArgs), ConnectToEIS answers one end of a socketpair whose other end has sent b"EIS!"
(SetEis(false) or the parameter "eis": False make it answer an error instead; "eis-pipe": True
makes it answer a pipe). Parameters: "version" (default 2; 1 has no CreateSession2),
"supported" (SupportedCapabilities, default 7). With templates/clipboard.py loaded beside it,
Start of a session whose impl Clipboard.RequestClipboard came first answers clipboard_enabled
true, as a compositor that allows it does.
Signals are sent by the test with dbusmock's EmitSignal on the main object."""
import os
import socket
import sys

import dbus
import dbus.service

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import castmock  # noqa: E402
import portalmock  # noqa: E402

BUS_NAME = portalmock.BUS_NAME
MAIN_OBJ = portalmock.MAIN_OBJ
MAIN_IFACE = "org.freedesktop.impl.portal.InputCapture"
SYSTEM_BUS = False


def load(mock, parameters):
    parameters = parameters or {}
    castmock.setup(mock, parameters)
    mock.ic_zones = [(1280, 800, 0, 0), (1024, 768, 1280, 0)]
    mock.ic_zone_set = 100
    mock.ic_eis = bool(parameters.get("eis", True))
    mock.ic_peers = []
    mock.ic_supported = int(parameters.get("supported", 7))
    mock.ic_version = int(parameters.get("version", 2))
    mock.ic_eis_pipe = bool(parameters.get("eis-pipe", False))
    mock.AddMethods(portalmock.CONTROL_IFACE, [
        ("SetEis", "b", "", "self.ic_eis = bool(args[0])"),
        ("SetZones", "a(uuii)", "", "self.ic_zones = [tuple(z) for z in args[0]]; self.ic_zone_set += 7"),
    ])
    mock.AddProperties(MAIN_IFACE, dbus.Dictionary({
        "SupportedCapabilities": dbus.UInt32(mock.ic_supported),
        "version": dbus.UInt32(mock.ic_version),
    }, signature="sv"))


def _session(mock, session_handle, app_id, kind):
    session_handle = str(session_handle)
    mock.cast_sessions.append((kind, session_handle, str(app_id)))
    if session_handle not in mock.cast_objects:
        mock.cast_objects[session_handle] = castmock.ImplSession(mock, session_handle)


def _granted(mock, options):
    return dbus.UInt32(int(options.get("capabilities", 0)) & mock.ic_supported)


@dbus.service.method(MAIN_IFACE, in_signature="oossa{sv}", out_signature="ua{sv}", async_callbacks=("ok", "err"))
def CreateSession(self, handle, session_handle, app_id, parent_window, options, ok, err):
    _session(self, session_handle, app_id, "InputCapture")
    portalmock.handle_request(self, "InputCapture.CreateSession", handle, app_id, options, ok, err,
                              default=(0, {"capabilities": _granted(self, options)}, 0))


@dbus.service.method(MAIN_IFACE, in_signature="osa{sv}", out_signature="a{sv}")
def CreateSession2(self, session_handle, app_id, options):
    if self.ic_version < 2:
        raise dbus.exceptions.DBusException("No such method", name="org.freedesktop.DBus.Error.UnknownMethod")
    _session(self, session_handle, app_id, "InputCapture2")
    portalmock.record_args(self, "CreateSession2", session_handle, app_id, dbus.Dictionary(options, signature="sv"))
    return dbus.Dictionary({}, signature="sv")


@dbus.service.method(MAIN_IFACE, in_signature="oossa{sv}", out_signature="ua{sv}", async_callbacks=("ok", "err"))
def Start(self, handle, session_handle, app_id, parent_window, options, ok, err):
    results = {"capabilities": _granted(self, options)}
    if any(m == "RequestClipboard" and str(a[0]) == str(session_handle) for m, a in self.limen.args):
        results["clipboard_enabled"] = dbus.Boolean(True)
    if int(options.get("persist_mode", 0)) > 0:
        results["persist_mode"] = dbus.UInt32(options["persist_mode"])
        results["restore_data"] = dbus.Struct(("mock", dbus.UInt32(1), dbus.UInt32(results["capabilities"],
                                                                                     variant_level=1)),
                                              signature="suv")
    portalmock.handle_request(self, "InputCapture.Start", handle, app_id, options, ok, err, default=(0, results, 0))


@dbus.service.method(MAIN_IFACE, in_signature="oosa{sv}", out_signature="ua{sv}", async_callbacks=("ok", "err"))
def GetZones(self, handle, session_handle, app_id, options, ok, err):
    zones = dbus.Array([dbus.Struct(z, signature="uuii") for z in self.ic_zones], signature="(uuii)")
    portalmock.handle_request(self, "InputCapture.GetZones", handle, app_id, options, ok, err,
                              default=(0, {"zones": zones, "zone_set": dbus.UInt32(self.ic_zone_set)}, 0))


def _on_edge(zones, x1, y1, x2, y2):
    """Whether the line lies on the outer edge of one zone (as a compositor would check)."""
    for w, h, x, y in zones:
        if x1 == x2 and x1 in (x, x + w) and y <= min(y1, y2) and max(y1, y2) <= y + h - 1:
            return True
        if y1 == y2 and y1 in (y, y + h) and x <= min(x1, x2) and max(x1, x2) <= x + w - 1:
            return True
    return False


@dbus.service.method(MAIN_IFACE, in_signature="oosa{sv}aa{sv}u", out_signature="ua{sv}",
                     async_callbacks=("ok", "err"))
def SetPointerBarriers(self, handle, session_handle, app_id, options, barriers, zone_set, ok, err):
    portalmock.record_args(self, "SetPointerBarriers", session_handle, dbus.Array(barriers, signature="a{sv}"),
                           dbus.UInt32(zone_set))
    failed = [dbus.UInt32(b["barrier_id"]) for b in barriers
              if zone_set != self.ic_zone_set or not _on_edge(self.ic_zones, *b["position"])]
    portalmock.handle_request(self, "InputCapture.SetPointerBarriers", handle, app_id, options, ok, err,
                              default=(0, {"failed_barriers": dbus.Array(failed, signature="u")}, 0))


def _plain(name):
    def method(self, session_handle, app_id, options):
        portalmock.record_args(self, name, session_handle, app_id, dbus.Dictionary(options, signature="sv"))
        return dbus.UInt32(0), dbus.Dictionary({}, signature="sv")
    method.__name__ = name
    return dbus.service.method(MAIN_IFACE, in_signature="osa{sv}", out_signature="ua{sv}")(method)


Enable = _plain("Enable")
Disable = _plain("Disable")
Release = _plain("Release")


@dbus.service.method(MAIN_IFACE, in_signature="osa{sv}", out_signature="h")
def ConnectToEIS(self, session_handle, app_id, options):
    portalmock.record_args(self, "ConnectToEIS", session_handle, app_id)
    if not self.ic_eis:
        raise dbus.exceptions.DBusException("no EIS here", name="org.freedesktop.DBus.Error.NotSupported")
    if self.ic_eis_pipe:
        r, w = os.pipe()
        os.close(w)
        fd = dbus.types.UnixFd(r)
        os.close(r)
        return fd
    a, b = socket.socketpair()
    a.sendall(b"EIS!")
    self.ic_peers.append(a)
    fd = dbus.types.UnixFd(b.fileno())
    b.close()
    return fd
