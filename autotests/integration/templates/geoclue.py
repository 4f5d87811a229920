"""Mock GeoClue2 on the system bus for the Location portal.

org.freedesktop.GeoClue2.Manager.GetClient makes /org/freedesktop/GeoClue2/Client/N
(properties DesktopId, DistanceThreshold, TimeThreshold, RequestedAccuracyLevel, Active;
Start/Stop). The test moves the device with Manager.SetLocation(d latitude, d longitude, d accuracy):
a new Location object appears and every started client emits LocationUpdated."""
import dbus

import dbusmock

BUS_NAME = "org.freedesktop.GeoClue2"
MAIN_OBJ = "/org/freedesktop/GeoClue2/Manager"
MAIN_IFACE = "org.freedesktop.GeoClue2.Manager"
SYSTEM_BUS = True
CLIENT_IFACE = "org.freedesktop.GeoClue2.Client"
LOCATION_IFACE = "org.freedesktop.GeoClue2.Location"


def load(mock, parameters):
    mock.gc_clients = []
    mock.gc_locations = 0
    mock.AddProperties(MAIN_IFACE, {"InUse": dbus.Boolean(False), "AvailableAccuracyLevel": dbus.UInt32(8)})


@dbus.service.method(MAIN_IFACE, in_signature="", out_signature="o")
def GetClient(self):
    path = f"/org/freedesktop/GeoClue2/Client/{len(self.gc_clients) + 1}"
    self.AddObject(path, CLIENT_IFACE, {
        "DesktopId": dbus.String(""), "DistanceThreshold": dbus.UInt32(0), "TimeThreshold": dbus.UInt32(0),
        "RequestedAccuracyLevel": dbus.UInt32(0), "Active": dbus.Boolean(False),
        "Location": dbus.ObjectPath("/")},
        [("Start", "", "", "self.Set('%s', 'Active', True)" % CLIENT_IFACE),
         ("Stop", "", "", "self.Set('%s', 'Active', False)" % CLIENT_IFACE)])
    self.gc_clients.append(path)
    return dbus.ObjectPath(path)


@dbus.service.method(MAIN_IFACE, in_signature="ddd", out_signature="")
def SetLocation(self, latitude, longitude, accuracy):
    self.gc_locations += 1
    path = f"/org/freedesktop/GeoClue2/Location/{self.gc_locations}"
    self.AddObject(path, LOCATION_IFACE, {
        "Latitude": dbus.Double(latitude), "Longitude": dbus.Double(longitude), "Accuracy": dbus.Double(accuracy),
        "Altitude": dbus.Double(-1.7976931348623157e308), "Speed": dbus.Double(-1), "Heading": dbus.Double(-1),
        "Description": dbus.String("mock"), "Timestamp": dbus.Struct((dbus.UInt64(1700000000), dbus.UInt64(0)),
                                                                    signature="tt")}, [])
    for c in self.gc_clients:
        obj = dbusmock.get_object(c)
        if obj.Get(CLIENT_IFACE, "Active"):
            old = obj.Get(CLIENT_IFACE, "Location")
            obj.Set(CLIENT_IFACE, "Location", dbus.ObjectPath(path))
            obj.EmitSignal(CLIENT_IFACE, "LocationUpdated", "oo", [old, dbus.ObjectPath(path)])
