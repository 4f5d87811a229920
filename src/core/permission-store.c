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
