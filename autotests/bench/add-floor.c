/* The floor under a Documents.Add for bench-documents: a GDBus service on the session bus
 * that owns org.freedesktop.portal.Documents and answers every Add (hbb) with the same
 * document id, on GDBus's worker thread, as soon as the call is read: the way
 * limen-documents answers a known caller's Add, minus all of its work (no fd check, no
 * path, no document, no journal). What a client waits for here is GDBus receiving a call
 * that carries an fd and sending its reply, and dbus-daemon passing both: no daemon built
 * on GDBus and reached through dbus-daemon can answer an Add sooner, so the reference's
 * time over this one is the highest advantage any such daemon could show in the same run.
 * Not a Documents implementation: it creates nothing and its id names nothing.
 *
 *   add-floor      (prints "ready" once it owns the name, runs until killed)
 * SPDX-License-Identifier: LGPL-2.1-or-later */
#include <gio/gio.h>
#include <stdio.h>

#define DOCS_NAME "org.freedesktop.portal.Documents"
#define DOCS_PATH "/org/freedesktop/portal/documents"
#define DOCS_IFACE "org.freedesktop.portal.Documents"

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

int
main (int argc, char **argv)
{
  g_autoptr(GDBusConnection) bus = NULL;
  g_autoptr(GVariant) owned = NULL;
  g_autoptr(GMainLoop) loop = NULL;
  g_autoptr(GError) error = NULL;
  guint32 result = 0;

  if (argc != 1)
    {
      fprintf (stderr, "usage: add-floor\n");
      return 2;
    }
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
