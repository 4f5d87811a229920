/* The floor under a Documents.Add for bench-documents: a service on the session bus that
 * owns org.freedesktop.portal.Documents and answers every Add (hbb) with the same document
 * id as soon as the call is read, and does nothing else (no fd check, no path, no document,
 * no journal). What a client waits for here is the bus library receiving a call that
 * carries an fd and sending its reply, and dbus-daemon passing both.
 *
 *   add-floor            sd-bus, on the thread that polls the socket, as limen-documents
 *                        serves Documents: the reference's time over this one is the most
 *                        a daemon built that way could show in the same run
 *   add-floor --gdbus    GDBus, in a filter on its worker thread (the earliest a GDBus
 *                        service can answer): what the same daemon would show on GDBus
 *
 * It prints "ready" once it owns the name and runs until killed. Not a Documents
 * implementation: it creates nothing and its id names nothing.
 * SPDX-License-Identifier: LGPL-2.1-or-later */
#include <gio/gio.h>
#include <stdio.h>
#include <string.h>
#include <systemd/sd-bus.h>

#define DOCS_NAME "org.freedesktop.portal.Documents"
#define DOCS_PATH "/org/freedesktop/portal/documents"
#define DOCS_IFACE "org.freedesktop.portal.Documents"

static int
on_add (sd_bus_message *m, void *user_data, sd_bus_error *ret_error)
{
  return sd_bus_reply_method_return (m, "s", "00000000");
}

static const sd_bus_vtable floor_vtable[] = {
  SD_BUS_VTABLE_START (0),
  SD_BUS_METHOD ("Add", "hbb", "s", on_add, SD_BUS_VTABLE_UNPRIVILEGED),
  SD_BUS_VTABLE_END
};

static int
run_sd_bus (void)
{
  sd_bus *bus = NULL;
  int r;

  /* A user bus: sd-bus checks no caller's credentials there, as limen-documents does not. */
  if ((r = sd_bus_open_user (&bus)) < 0 ||
      (r = sd_bus_add_object_vtable (bus, NULL, DOCS_PATH, DOCS_IFACE, floor_vtable, NULL)) < 0 ||
      (r = sd_bus_request_name (bus, DOCS_NAME, 0)) < 0)
    {
      fprintf (stderr, "add-floor: cannot serve %s: %s\n", DOCS_NAME, strerror (-r));
      return 1;
    }
  printf ("ready\n");
  fflush (stdout);
  for (;;)
    {
      if ((r = sd_bus_process (bus, NULL)) < 0)
        return 1;
      if (r == 0 && sd_bus_wait (bus, UINT64_MAX) < 0)
        return 1;
    }
}

static GDBusMessage *
filter (GDBusConnection *connection, GDBusMessage *message, gboolean incoming, gpointer user_data)
{
  g_autoptr(GDBusMessage) reply = NULL;

  if (!incoming || g_dbus_message_get_message_type (message) != G_DBUS_MESSAGE_TYPE_METHOD_CALL ||
      g_strcmp0 (g_dbus_message_get_path (message), DOCS_PATH) != 0 ||
      g_strcmp0 (g_dbus_message_get_interface (message), DOCS_IFACE) != 0 ||
      g_strcmp0 (g_dbus_message_get_member (message), "Add") != 0 ||
      g_strcmp0 (g_dbus_message_get_signature (message), "hbb") != 0)
    return message;      /* GDBus answers anything else (Peer.Ping, or an unknown method error) */
  reply = g_dbus_message_new_method_reply (message);
  g_dbus_message_set_body (reply, g_variant_new ("(s)", "00000000"));
  g_dbus_connection_send_message (connection, reply, G_DBUS_SEND_MESSAGE_FLAGS_NONE, NULL, NULL);
  g_object_unref (message);      /* and with it the call's fd */
  return NULL;
}

static int
run_gdbus (void)
{
  g_autoptr(GDBusConnection) bus = NULL;
  g_autoptr(GVariant) owned = NULL;
  g_autoptr(GMainLoop) loop = NULL;
  g_autoptr(GError) error = NULL;
  guint32 result = 0;

  if (!(bus = g_bus_get_sync (G_BUS_TYPE_SESSION, NULL, &error)))
    {
      fprintf (stderr, "add-floor: %s\n", error->message);
      return 1;
    }
  g_dbus_connection_add_filter (bus, filter, NULL, NULL);
  owned = g_dbus_connection_call_sync (bus, "org.freedesktop.DBus", "/org/freedesktop/DBus", "org.freedesktop.DBus",
                                       "RequestName", g_variant_new ("(su)", DOCS_NAME, 4 /* DO_NOT_QUEUE */),
                                       G_VARIANT_TYPE ("(u)"), G_DBUS_CALL_FLAGS_NONE, -1, NULL, &error);
  if (owned)
    g_variant_get (owned, "(u)", &result);
  if (result != 1)      /* PRIMARY_OWNER */
    {
      fprintf (stderr, "add-floor: cannot own %s%s%s\n", DOCS_NAME, error ? ": " : "", error ? error->message : "");
      return 1;
    }
  printf ("ready\n");
  fflush (stdout);
  loop = g_main_loop_new (NULL, FALSE);
  g_main_loop_run (loop);
  return 0;
}

int
main (int argc, char **argv)
{
  if (argc == 1)
    return run_sd_bus ();
  if (argc == 2 && strcmp (argv[1], "--gdbus") == 0)
    return run_gdbus ();
  fprintf (stderr, "usage: add-floor [--gdbus]\n");
  return 2;
}
