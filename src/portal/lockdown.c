/* SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * Asked at each call rather than cached: an administrator's switch must take effect for
 * the next request, and one Properties.Get is cheap next to a dialog. */
#include "lockdown.h"

#include "backend.h"

#define LOCKDOWN_IFACE "org.freedesktop.impl.portal.Lockdown"
#define LOCKDOWN_TIMEOUT_MS 2000

static void
on_get (GObject *source, GAsyncResult *result, gpointer user_data)
{
  g_autoptr(GTask) task = user_data;
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
    g_debug ("Lockdown %s unknown: %s", (const char *) g_task_get_task_data (task), error->message);
  g_task_return_boolean (task, locked);
}

void
limen_lockdown_query_async (LimenPortalContext *context, const char *key, GAsyncReadyCallback callback,
                            gpointer user_data)
{
  const char *backend = limen_backend_find (context, LOCKDOWN_IFACE, NULL);
  g_autoptr(GTask) task = g_task_new (NULL, NULL, callback, user_data);

  g_task_set_source_tag (task, limen_lockdown_query_async);
  g_task_set_task_data (task, g_strdup (key), g_free);
  if (backend == NULL)
    {
      g_task_return_boolean (task, FALSE);
      return;
    }
  g_dbus_connection_call (context->connection, backend, LIMEN_PORTAL_PATH, "org.freedesktop.DBus.Properties",
                          "Get", g_variant_new ("(ss)", LOCKDOWN_IFACE, key), G_VARIANT_TYPE ("(v)"),
                          G_DBUS_CALL_FLAGS_NONE, LOCKDOWN_TIMEOUT_MS, NULL, on_get, g_steal_pointer (&task));
}

gboolean
limen_lockdown_query_finish (GAsyncResult *result)
{
  return g_task_propagate_boolean (G_TASK (result), NULL);
}

typedef struct {
  GTask *task;
  char  *message;
} StepQuery;

static void
on_step_query (GObject *source, GAsyncResult *result, gpointer user_data)
{
  StepQuery *q = user_data;

  if (limen_lockdown_query_finish (result))
    g_task_return_new_error (q->task, LIMEN_ERROR, LIMEN_ERROR_NOT_ALLOWED, "%s", q->message);
  else
    g_task_return_boolean (q->task, TRUE);
  g_object_unref (q->task);
  g_free (q->message);
  g_free (q);
}

void
limen_lockdown_step (LimenCall *call, GTask *task, const char *key, const char *message)
{
  StepQuery *q = g_new0 (StepQuery, 1);

  q->task = g_object_ref (task);
  q->message = g_strdup (message);
  limen_lockdown_query_async (limen_call_get_context (call), key, on_step_query, q);
}
