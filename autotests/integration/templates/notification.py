"""Mock org.freedesktop.impl.portal.Notification (see portalmock.py for the controls).
org.limen.MockBackend.InvokeAction(s app_id, s id, s action) emits ActionInvoked.
An icon or sound passed as ("file-descriptor", <h>) is recorded as ("file-descriptor", <ay>)
with the fd's contents from its current offset, or as ("file-descriptor-unsealed", <ay>) when the fd is not sealed
against every change. Parameter "supported_options" (an object of string lists, or strings) is the
SupportedOptions property."""
import fcntl
import json
import os
import sys

import dbus

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import portalmock  # noqa: E402

BUS_NAME = portalmock.BUS_NAME
MAIN_OBJ = portalmock.MAIN_OBJ
MAIN_IFACE = "org.freedesktop.impl.portal.Notification"
SYSTEM_BUS = False


def load(mock, parameters):
    portalmock.setup(mock, parameters)
    # The impl interface's version (parameter "version"; 0: no such property, as in 1.16).
    version = int((parameters or {}).get("version", 2))
    if version:
        mock.AddProperty(MAIN_IFACE, "version", dbus.UInt32(version))
    options = (parameters or {}).get("supported_options")
    if isinstance(options, str):
        options = json.loads(options)
    if options is not None:
        mock.AddProperty(MAIN_IFACE, "SupportedOptions",
                         dbus.Dictionary({k: dbus.Array(v, signature="s") if isinstance(v, list) else v
                                          for k, v in options.items()}, signature="sv"))
    mock.AddMethod("org.limen.MockBackend", "InvokeAction", "sss", "",
                   "self.EmitSignal('org.freedesktop.impl.portal.Notification', 'ActionInvoked', 'sssav', "
                   "[args[0], args[1], args[2], dbus.Array([], signature='v')])")


SEALS = 0x0002 | 0x0004 | 0x0008   # F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_WRITE


def read_fd_media(value):
    """("file-descriptor", fd) → ("file-descriptor[-unsealed]", contents)."""
    if not (isinstance(value, dbus.Struct) and len(value) == 2 and value[0] == "file-descriptor"):
        return value
    fd = value[1].take()
    try:
        seals = fcntl.fcntl(fd, 1034)   # F_GET_SEALS
        # Read from where the fd stands, as a backend would: an fd handed over at its end
        # reads as empty.
        data = b""
        while chunk := os.read(fd, 1024 * 1024):
            data += chunk
    finally:
        os.close(fd)
    kind = "file-descriptor" if seals & SEALS == SEALS else "file-descriptor-unsealed"
    return dbus.Struct((kind, dbus.ByteArray(data)), signature="sv")


@dbus.service.method(MAIN_IFACE, in_signature="ssa{sv}", out_signature="")
def AddNotification(self, app_id, id, notification):
    n = {k: read_fd_media(v) if k in ("icon", "sound") else v for k, v in notification.items()}
    portalmock.record_args(self, "AddNotification", app_id, id, dbus.Dictionary(n, signature="sv"))


@dbus.service.method(MAIN_IFACE, in_signature="ss", out_signature="")
def RemoveNotification(self, app_id, id):
    portalmock.record_args(self, "RemoveNotification", app_id, id)
