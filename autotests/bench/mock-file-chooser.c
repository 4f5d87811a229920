/* A FileChooser backend for benchmarks that answers every call at once.
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * dbusmock costs about a millisecond per call in Python, which hides the frontend's own
 * cost; this one costs a few microseconds, so the bench measures the frontends.
 * usage: mock-file-chooser BUS_NAME */
#include <gio/gio.h>

static const char xml[] =
  "<node><interface name='org.freedesktop.impl.portal.FileChooser'>"
  "<method name='OpenFile'><arg type='o' direction='in'/><arg type='s' direction='in'/>"
  "<arg type='s' direction='in'/><arg type='s' direction='in'/><arg type='a{sv}' direction='in'/>"
  "<arg type='u' direction='out'/><arg type='a{sv}' direction='out'/></method>"
  "</interface></node>";

static void
on_call (GDBusConnection *connection, const char *sender, const char *path, const char *iface,
         const char *method, GVariant *parameters, GDBusMethodInvocation *invocation, gpointer user_data)
{
  g_dbus_method_invocation_return_value (invocation, g_variant_new_parsed ("(uint32 0, {'uris': <@as []>})"));
}

static const GDBusInterfaceVTable vtable = { on_call, NULL, NULL, { 0 } };

int
main (int argc, char **argv)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(GDBusConnection) connection = NULL;
  g_autoptr(GDBusNodeInfo) info = g_dbus_node_info_new_for_xml (xml, NULL);
  g_autoptr(GMainLoop) loop = g_main_loop_new (NULL, FALSE);
  g_autoptr(GVariant) reply = NULL;

  if (argc != 2)
    {
      g_printerr ("usage: %s BUS_NAME\n", argv[0]);
      return 2;
    }
  connection = g_bus_get_sync (G_BUS_TYPE_SESSION, NULL, &error);
  if (connection == NULL ||
      !g_dbus_connection_register_object (connection, "/org/freedesktop/portal/desktop", info->interfaces[0],
                                          &vtable, NULL, NULL, &error))
    {
      g_printerr ("%s\n", error->message);
      return 1;
    }
  reply = g_dbus_connection_call_sync (connection, "org.freedesktop.DBus", "/org/freedesktop/DBus",
                                       "org.freedesktop.DBus", "RequestName", g_variant_new ("(su)", argv[1], 4),
                                       G_VARIANT_TYPE ("(u)"), G_DBUS_CALL_FLAGS_NONE, -1, NULL, &error);
  if (reply == NULL)
    {
      g_printerr ("%s\n", error->message);
      return 1;
    }
  g_main_loop_run (loop);
  return 0;
}
