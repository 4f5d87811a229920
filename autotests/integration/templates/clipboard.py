"""Mock org.freedesktop.impl.portal.Clipboard (controls: portalmock.py, castmock.py, and
EmitTransfer(o session, s mime, u serial) / EmitOwnerChanged(o session, a{sv} options) to send
the backend's signals). SelectionRead answers a pipe carrying b"mock clipboard"."""
import os
import sys

import dbus

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import castmock  # noqa: E402
import portalmock  # noqa: E402

BUS_NAME = portalmock.BUS_NAME
MAIN_OBJ = portalmock.MAIN_OBJ
MAIN_IFACE = "org.freedesktop.impl.portal.Clipboard"
SYSTEM_BUS = False


def load(mock, parameters):
    castmock.setup(mock, parameters)
    mock.AddProperties(MAIN_IFACE, dbus.Dictionary({"version": dbus.UInt32(1)}, signature="sv"))
    mock.AddMethods(portalmock.CONTROL_IFACE, [
        ("EmitTransfer", "osu", "",
         f"self.EmitSignal('{MAIN_IFACE}', 'SelectionTransfer', 'osu', args)"),
        ("EmitOwnerChanged", "oa{sv}", "",
         f"self.EmitSignal('{MAIN_IFACE}', 'SelectionOwnerChanged', 'oa{{sv}}', args)"),
    ])


@dbus.service.method(MAIN_IFACE, in_signature="oa{sv}", out_signature="")
def RequestClipboard(self, session_handle, options):
    portalmock.record_args(self, "RequestClipboard", session_handle, options)


@dbus.service.method(MAIN_IFACE, in_signature="oa{sv}", out_signature="")
def SetSelection(self, session_handle, options):
    portalmock.record_args(self, "SetSelection", session_handle, options)


@dbus.service.method(MAIN_IFACE, in_signature="ou", out_signature="h")
def SelectionWrite(self, session_handle, serial):
    portalmock.record_args(self, "SelectionWrite", session_handle, serial)
    r, w = os.pipe()
    self.clip_written = r
    fd = dbus.types.UnixFd(w)
    os.close(w)
    return fd


@dbus.service.method(MAIN_IFACE, in_signature="oub", out_signature="")
def SelectionWriteDone(self, session_handle, serial, success):
    portalmock.record_args(self, "SelectionWriteDone", session_handle, serial, success)


@dbus.service.method(MAIN_IFACE, in_signature="os", out_signature="h")
def SelectionRead(self, session_handle, mime_type):
    portalmock.record_args(self, "SelectionRead", session_handle, mime_type)
    r, w = os.pipe()
    os.write(w, b"mock clipboard")
    os.close(w)
    fd = dbus.types.UnixFd(r)
    os.close(r)
    return fd
