/* SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * Asked at each call rather than cached: an administrator's switch must take effect for
 * the next request, and one Properties.Get is cheap next to a dialog. */
#include "lockdown.h"

#include "backend.h"

#define LOCKDOWN_IFACE "org.freedesktop.impl.portal.Lockdown"
#define LOCKDOWN_TIMEOUT_MS 2000

typedef struct {
  char             *key;
  LimenLockdownFunc func;
  gpointer          user_data;
} Query;

static void
on_get (GObject *source, GAsyncResult *result, gpointer user_data)
{
  Query *q = user_data;
  g_autoptr(GError) error = NULL;
  g_autoptr(GVariant) reply = g_dbus_connection_call_finish (G_DBUS_CONNECTION (source), result, &error);
  g_autoptr(GVariant) value = NULL;
  gboolean locked = FALSE;

  if (reply)
    {
      g_variant_get (reply, "(v)", &value);
      if (g_variant_is_of_type (value, G_VARIANT_TYPE_BOOLEAN))
        locked = g_variant_get_boolean (value);
    }
  else
    g_debug ("Lockdown %s unknown: %s", q->key, error->message);
  q->func (locked, q->user_data);
  g_free (q->key);
  g_free (q);
}

void
limen_lockdown_query (LimenPortalContext *context, const char *key, LimenLockdownFunc func, gpointer user_data)
{
  const char *backend = limen_backend_find (context, LOCKDOWN_IFACE, NULL);
  Query *q;

  if (backend == NULL)
    {
      func (FALSE, user_data);
      return;
    }
  q = g_new0 (Query, 1);
  q->key = g_strdup (key);
  q->func = func;
  q->user_data = user_data;
  g_dbus_connection_call (context->connection, backend, LIMEN_PORTAL_PATH, "org.freedesktop.DBus.Properties",
                          "Get", g_variant_new ("(ss)", LOCKDOWN_IFACE, key), G_VARIANT_TYPE ("(v)"),
                          G_DBUS_CALL_FLAGS_NONE, LOCKDOWN_TIMEOUT_MS, NULL, on_get, q);
}
