/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "fast-path.h"

#include <string.h>

typedef struct {
  const char       *interface;
  const char       *member;
  const char       *signature;
  LimenFastHandler  handler;
} FastEntry;

#define MAX_ENTRIES 16

/* Written before the filter is installed, read-only afterwards. */
static FastEntry entries[MAX_ENTRIES];
static guint n_entries;

void
limen_fast_path_add (const char *interface, const char *member, const char *signature,
                     LimenFastHandler handler)
{
  g_return_if_fail (n_entries < MAX_ENTRIES);
  entries[n_entries++] = (FastEntry) { interface, member, signature, handler };
}

static GDBusMessage *
filter (GDBusConnection *connection, GDBusMessage *message, gboolean incoming, gpointer user_data)
{
  const char *iface, *member, *sig, *sender;
  g_autoptr(LimenAppInfo) info = NULL;
  GDBusMessage *reply = NULL;

  if (!incoming || g_dbus_message_get_message_type (message) != G_DBUS_MESSAGE_TYPE_METHOD_CALL ||
      (g_dbus_message_get_flags (message) & G_DBUS_MESSAGE_FLAGS_NO_REPLY_EXPECTED) ||
      g_strcmp0 (g_dbus_message_get_path (message), LIMEN_PORTAL_PATH) != 0)
    return message;
  iface = g_dbus_message_get_interface (message);
  member = g_dbus_message_get_member (message);
  sig = g_dbus_message_get_signature (message);
  sender = g_dbus_message_get_sender (message);
  if (iface == NULL || member == NULL || sender == NULL)
    return message;

  for (guint i = 0; i < n_entries; i++)
    {
      const FastEntry *e = &entries[i];

      if (strcmp (e->member, member) != 0 || strcmp (e->interface, iface) != 0 ||
          strcmp (e->signature, sig ? sig : "") != 0)
        continue;
      info = limen_app_info_lookup_cached (sender);
      if (info == NULL)
        return message;       /* first call of this peer: identify it the normal way */
      reply = e->handler (message, info);
      break;
    }
  if (reply == NULL)
    return message;
  g_dbus_connection_send_message (connection, reply, G_DBUS_SEND_MESSAGE_FLAGS_NONE, NULL, NULL);
  g_object_unref (reply);
  g_object_unref (message);
  return NULL;
}

void
limen_fast_path_install (GDBusConnection *connection)
{
  if (n_entries > 0)
    g_dbus_connection_add_filter (connection, filter, NULL, NULL);
}
