"""Shared machinery of the screen-cast mocks (screencast.py, remote_desktop.py,
clipboard.py; not a template itself). Controls on the mock's main object, besides
portalmock's (org.limen.MockBackend):
  GetSessions() -> a(sss)        (kind, session_handle, app_id) of every CreateSession
  GetClosedSessions() -> as      impl Session paths whose Close was called
  SetProperty(s iface, s name, v value)
Every CreateSession exports an impl Session at its session_handle."""

import dbus
import dbus.service

import portalmock

SESSION_IFACE = "org.freedesktop.impl.portal.Session"


class ImplSession(dbus.service.Object):
    def __init__(self, mock, path):
        dbus.service.Object.__init__(self, mock.bus_name, path)
        self.methods = {}
        self.interface = SESSION_IFACE
        self.mock = mock
        self.path = path

    @dbus.service.method(SESSION_IFACE, in_signature="", out_signature="")
    def Close(self):
        self.mock.cast_closed.append(self.path)
        self.remove_from_connection()


def setup(mock, parameters=None):
    portalmock.setup(mock, parameters)
    if hasattr(mock, "cast_sessions"):
        return
    mock.cast_sessions = []
    mock.cast_closed = []
    mock.cast_objects = {}
    mock.AddMethods(portalmock.CONTROL_IFACE, [
        ("GetSessions", "", "a(sss)", "ret = self.cast_sessions"),
        ("GetClosedSessions", "", "as", "ret = self.cast_closed"),
        ("SetProperty", "ssv", "", "self.UpdateProperties(args[0], {args[1]: args[2]})"),
    ])


def create_session(mock, kind, handle, session_handle, app_id, options, ok, err):
    session_handle = str(session_handle)
    mock.cast_sessions.append((kind, session_handle, str(app_id)))
    if session_handle not in mock.cast_objects:
        mock.cast_objects[session_handle] = ImplSession(mock, session_handle)
    portalmock.handle_request(mock, kind + ".CreateSession", handle, app_id, options, ok, err,
                              default=(0, {"session_id": "mock"}, 0))
