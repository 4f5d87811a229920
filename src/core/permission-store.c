/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "permission-store.h"

#include "errors.h"

#define STORE_TIMEOUT_MS 3000

static GDBusConnection *store_connection;

void
limen_permission_store_init (GDBusConnection *connection)
{
  g_set_object (&store_connection, connection);
}

const char *
limen_permission_to_string (LimenPermission permission)
{
  switch (permission)
    {
    case LIMEN_PERMISSION_NO: return "no";
    case LIMEN_PERMISSION_YES: return "yes";
    case LIMEN_PERMISSION_ASK: return "ask";
    case LIMEN_PERMISSION_UNSET:
    default: return "";
    }
}

LimenPermission
limen_permission_from_string (const char *string)
{
  if (g_strcmp0 (string, "no") == 0)
    return LIMEN_PERMISSION_NO;
  if (g_strcmp0 (string, "yes") == 0)
    return LIMEN_PERMISSION_YES;
  if (g_strcmp0 (string, "ask") == 0)
    return LIMEN_PERMISSION_ASK;
  return LIMEN_PERMISSION_UNSET;
}

char **
limen_permission_store_get_raw (const char *table, const char *id, const char *app_id)
{
  g_autoptr(GVariant) reply = NULL;
  g_autoptr(GVariant) perms = NULL;
  g_autoptr(GVariant) data = NULL;
  g_autoptr(GError) error = NULL;
  char **result = NULL;

  g_return_val_if_fail (store_connection != NULL, NULL);
  reply = g_dbus_connection_call_sync (store_connection, LIMEN_STORE_NAME, LIMEN_STORE_PATH, LIMEN_STORE_NAME, "Lookup",
                                       g_variant_new ("(ss)", table, id), G_VARIANT_TYPE ("(a{sas}v)"),
                                       G_DBUS_CALL_FLAGS_NONE, STORE_TIMEOUT_MS, NULL, &error);
  if (reply == NULL)
    {
      if (!g_dbus_error_is_remote_error (error) ||
          g_strcmp0 (g_dbus_error_get_remote_error (error), "org.freedesktop.portal.Error.NotFound") != 0)
        g_debug ("Permission lookup %s/%s failed: %s", table, id, error->message);
      return NULL;
    }
  g_variant_get (reply, "(@a{sas}v)", &perms, &data);
  g_variant_lookup (perms, app_id, "^as", &result);
  return result;
}

static void
on_lookup (GObject *source, GAsyncResult *result, gpointer user_data)
{
  g_autoptr(GTask) task = user_data;
  g_autoptr(GError) error = NULL;
  g_autoptr(GVariant) reply = g_dbus_connection_call_finish (G_DBUS_CONNECTION (source), result, &error);
  g_autoptr(GVariant) perms = NULL;
  g_autoptr(GVariant) data = NULL;
  char **stored = NULL;

  if (reply == NULL)
    g_debug ("Permission lookup failed: %s", error->message);
  else
    {
      g_variant_get (reply, "(@a{sas}v)", &perms, &data);
      g_variant_lookup (perms, g_task_get_task_data (task), "^as", &stored);
    }
  g_task_return_pointer (task, stored, (GDestroyNotify) g_strfreev);
}

void
limen_permission_store_lookup_async (const char *table, const char *id, const char *app_id,
                                     GCancellable *cancellable, GAsyncReadyCallback callback,
                                     gpointer user_data)
{
  GTask *task = g_task_new (NULL, cancellable, callback, user_data);

  g_task_set_source_tag (task, limen_permission_store_lookup_async);
  g_task_set_task_data (task, g_strdup (app_id), g_free);
  if (store_connection == NULL)
    {
      g_task_return_pointer (task, NULL, NULL);
      g_object_unref (task);
      return;
    }
  g_dbus_connection_call (store_connection, LIMEN_STORE_NAME, LIMEN_STORE_PATH, LIMEN_STORE_NAME, "Lookup",
                          g_variant_new ("(ss)", table, id), G_VARIANT_TYPE ("(a{sas}v)"),
                          G_DBUS_CALL_FLAGS_NONE, STORE_TIMEOUT_MS, cancellable, on_lookup, task);
}

char **
limen_permission_store_lookup_finish (GAsyncResult *result)
{
  return g_task_propagate_pointer (G_TASK (result), NULL);
}

gboolean
limen_permission_is_denied (const char * const *stored)
{
  return stored != NULL && g_strv_contains (stored, "no");
}

typedef struct {
  GDBusMethodInvocation *invocation;
  const char            *refusal;
  void                 (*then) (gpointer data);
  gpointer               data;
  GDestroyNotify         free_data;
} UnlessDenied;

static void
on_unless_denied (GObject *source, GAsyncResult *result, gpointer user_data)
{
  UnlessDenied *u = user_data;
  g_auto(GStrv) stored = limen_permission_store_lookup_finish (result);

  if (limen_permission_is_denied ((const char * const *) stored))
    {
      g_dbus_method_invocation_return_error_literal (u->invocation, LIMEN_ERROR, LIMEN_ERROR_NOT_ALLOWED, u->refusal);
      u->free_data (u->data);
    }
  else
    u->then (u->data);
  g_free (u);
}

void
limen_permission_unless_denied (const char *table, const char *id, const char *app_id,
                                GDBusMethodInvocation *invocation, const char *refusal,
                                void (*then) (gpointer data), gpointer data, GDestroyNotify free_data)
{
  UnlessDenied *u = g_new0 (UnlessDenied, 1);

  *u = (UnlessDenied) { invocation, refusal, then, data, free_data };
  limen_permission_store_lookup_async (table, id, app_id, NULL, on_unless_denied, u);
}

typedef struct {
  LimenPermissionChangedFunc func;
  gpointer                   user_data;
} Watch;

static void
on_changed (GDBusConnection *c, const char *sender, const char *path, const char *iface,
            const char *signal, GVariant *params, gpointer user_data)
{
  Watch *w = user_data;
  g_autoptr(GVariant) perms = NULL;
  const char *table, *id;
  gboolean deleted;

  if (!g_variant_is_of_type (params, G_VARIANT_TYPE ("(ssbva{sas})")))
    return;
  g_variant_get (params, "(&s&sbv@a{sas})", &table, &id, &deleted, NULL, &perms);
  w->func (table, id, deleted ? NULL : perms, w->user_data);
}

void
limen_permission_store_watch (GDBusConnection *connection, const char *table,
                              LimenPermissionChangedFunc func, gpointer user_data)
{
  Watch *w = g_new0 (Watch, 1);

  w->func = func;
  w->user_data = user_data;
  g_dbus_connection_signal_subscribe (connection, LIMEN_STORE_NAME, LIMEN_STORE_NAME, "Changed", LIMEN_STORE_PATH,
                                      table, G_DBUS_SIGNAL_FLAGS_NONE, on_changed, w, g_free);
}

const char **
limen_permission_row (GVariant *perms, const char *app_id)
{
  const char **row = NULL;

  if (perms)
    g_variant_lookup (perms, app_id, "^a&s", &row);
  return row;
}

gboolean
limen_permission_store_set_raw (const char *table, const char *id, const char *app_id,
                                const char * const *permissions, GError **error)
{
  g_autoptr(GVariant) reply = NULL;

  g_return_val_if_fail (store_connection != NULL, FALSE);
  reply = g_dbus_connection_call_sync (store_connection, LIMEN_STORE_NAME, LIMEN_STORE_PATH, LIMEN_STORE_NAME,
                                       "SetPermission",
                                       g_variant_new ("(sbss^as)", table, TRUE, id, app_id, permissions),
                                       NULL, G_DBUS_CALL_FLAGS_NONE, STORE_TIMEOUT_MS, NULL, error);
  return reply != NULL;
}

gboolean
limen_permission_store_set (const char *table, const char *id, const char *app_id,
                            LimenPermission permission, GError **error)
{
  const char *perms[] = { limen_permission_to_string (permission), NULL };

  return limen_permission_store_set_raw (table, id, app_id, perms, error);
}
