"""A small org.freedesktop.impl.portal.Settings backend for tests.

usage: settings_backend.py BUS_NAME VALUES_GVARIANT_TEXT [--hang]
VALUES is an a{sa{sv}} in GVariant text form. Besides the impl interface it exports
org.limen.TestSettings: Change(s ns, s key, v value) emits SettingChanged, and the
property ReadAllCalls counts ReadAll calls."""
import sys

from gi.repository import Gio, GLib

XML = """
<node>
  <interface name="org.freedesktop.impl.portal.Settings">
    <method name="ReadAll"><arg type="as" direction="in"/><arg type="a{sa{sv}}" direction="out"/></method>
    <method name="Read"><arg type="s" direction="in"/><arg type="s" direction="in"/><arg type="v" direction="out"/></method>
    <signal name="SettingChanged"><arg type="s"/><arg type="s"/><arg type="v"/></signal>
    <property name="version" type="u" access="read"/>
  </interface>
  <interface name="org.limen.TestSettings">
    <method name="Change"><arg type="s" direction="in"/><arg type="s" direction="in"/><arg type="v" direction="in"/></method>
    <property name="ReadAllCalls" type="u" access="read"/>
    <property name="ReadCalls" type="u" access="read"/>
  </interface>
</node>
"""

name, values_text = sys.argv[1], sys.argv[2]
hang = "--hang" in sys.argv
calls = {"ReadAll": 0, "Read": 0}
held = []


def on_call(conn, sender, path, iface, method, params, invocation):
    if hang and iface == "org.freedesktop.impl.portal.Settings":
        held.append(invocation)  # never answered
        return
    if method == "ReadAll":
        calls["ReadAll"] += 1
        builder = GLib.VariantBuilder(GLib.VariantType("a{sa{sv}}"))
        for ns, keys in values.items():
            inner = GLib.VariantBuilder(GLib.VariantType("a{sv}"))
            for k, v in keys.items():
                inner.add_value(GLib.Variant("{sv}", (k, v)))
            builder.add_value(GLib.Variant.new_dict_entry(GLib.Variant("s", ns), inner.end()))
        invocation.return_value(GLib.Variant.new_tuple(builder.end()))
    elif method == "Read":
        calls["Read"] += 1
        ns, key = params.unpack()
        if ns in values and key in values[ns]:
            invocation.return_value(GLib.Variant("(v)", (values[ns][key],)))
        else:
            invocation.return_dbus_error("org.freedesktop.portal.Error.NotFound", "no such setting")
    elif method == "Change":
        ns, key, value = params.get_child_value(0).get_string(), params.get_child_value(1).get_string(), \
            params.get_child_value(2).get_variant()
        values.setdefault(ns, {})[key] = value
        conn.emit_signal(None, "/org/freedesktop/portal/desktop", "org.freedesktop.impl.portal.Settings",
                         "SettingChanged", GLib.Variant("(ssv)", (ns, key, value)))
        invocation.return_value(None)


def on_get(conn, sender, path, iface, prop):
    if prop == "version":
        return GLib.Variant("u", 1)
    return GLib.Variant("u", calls["ReadAll" if prop == "ReadAllCalls" else "Read"])


# Keep each value as a GVariant, with its exact type.
values = {}
parsed = GLib.Variant.parse(GLib.VariantType("a{sa{sv}}"), values_text, None, None)
for i in range(parsed.n_children()):
    entry = parsed.get_child_value(i)
    ns = entry.get_child_value(0).get_string()
    d = entry.get_child_value(1)
    values[ns] = {}
    for j in range(d.n_children()):
        kv = d.get_child_value(j)
        values[ns][kv.get_child_value(0).get_string()] = kv.get_child_value(1).get_variant()

conn = Gio.bus_get_sync(Gio.BusType.SESSION, None)
node = Gio.DBusNodeInfo.new_for_xml(XML)
for iface in node.interfaces:
    conn.register_object("/org/freedesktop/portal/desktop", iface, on_call, on_get, None)
Gio.bus_own_name_on_connection(conn, name, Gio.BusNameOwnerFlags.NONE, None, None)
GLib.MainLoop().run()
