"""A D-Bus client over a raw socket (no GDBus worker thread), so that the connection can
outlive the process that opened it — the shape of a pid-reuse attack."""
import os
import socket

from gi.repository import Gio, GLib


def connect(path):
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.connect(path)
    uid = str(os.getuid()).encode().hex().encode()
    s.sendall(b"\0AUTH EXTERNAL " + uid + b"\r\n")
    line = s.recv(4096)
    if not line.startswith(b"OK"):
        raise RuntimeError(f"auth failed: {line!r}")
    s.sendall(b"BEGIN\r\n")
    return s


def _recv_exact(s, n):
    buf = b""
    while len(buf) < n:
        chunk = s.recv(n - len(buf))
        if not chunk:
            raise EOFError
        buf += chunk
    return buf


def recv_message(s):
    head = _recv_exact(s, 16)
    total = Gio.DBusMessage.bytes_needed(head)
    blob = head + _recv_exact(s, total - 16)
    return Gio.DBusMessage.new_from_blob(blob, Gio.DBusCapabilityFlags.NONE)


def call(s, serial, dest, path, iface, method, body=None):
    """Send a call and return (error_name or None, body) of its reply."""
    m = Gio.DBusMessage.new_method_call(dest, path, iface, method)
    if body is not None:
        m.set_body(body)
    m.set_serial(serial)
    s.sendall(m.to_blob(Gio.DBusCapabilityFlags.NONE))
    while True:
        r = recv_message(s)
        if r.get_reply_serial() != serial:
            continue
        if r.get_message_type() == Gio.DBusMessageType.ERROR:
            return r.get_error_name(), r.get_body()
        return None, r.get_body()


def hello(s):
    err, body = call(s, 1, "org.freedesktop.DBus", "/org/freedesktop/DBus", "org.freedesktop.DBus", "Hello")
    if err:
        raise RuntimeError(err)
    return body.unpack()[0]
