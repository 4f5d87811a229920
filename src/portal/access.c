/* SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * Asynchronous all the way: a permission store that is slow to activate or a user who
 * takes a minute to decide never holds up the daemon's other callers. */
#include "access.h"

#include <glib/gi18n.h>

#include "backend.h"
#include "permission-store.h"

#define STORE_NAME "org.freedesktop.impl.portal.PermissionStore"
#define STORE_PATH "/org/freedesktop/impl/portal/PermissionStore"
#define STORE_TIMEOUT_MS 5000
#define ACCESS_IFACE "org.freedesktop.impl.portal.Access"

typedef struct {
  LimenPortalContext *context;
  LimenRequest       *request;
  GDBusConnection    *connection;
  char               *parent_window;
  char               *table;
  char               *id;
  char               *title, *subtitle, *body, *grant_label, *deny_label, *icon;
  gboolean            lookup_only;
  gboolean            only_no_refuses;
  gboolean            reported;
  LimenAccessFunc     func;
  gpointer            user_data;
} AccessCheck;

static void
access_check_free (AccessCheck *check)
{
  /* Every check reports exactly once, so the caller's data is always released. */
  if (!check->reported)
    {
      check->reported = TRUE;
      check->func (check->request, FALSE, check->user_data);
    }
  limen_request_unref (check->request);
  g_clear_object (&check->connection);
  g_free (check->parent_window);
  g_free (check->table);
  g_free (check->id);
  g_free (check->title);
  g_free (check->subtitle);
  g_free (check->body);
  g_free (check->grant_label);
  g_free (check->deny_label);
  g_free (check->icon);
  g_free (check);
}

static void
access_check_done (AccessCheck *check, gboolean allowed)
{
  check->reported = TRUE;
  check->func (check->request, allowed && limen_request_is_open (check->request), check->user_data);
  access_check_free (check);
}

static const char *
app_id_of (AccessCheck *check)
{
  return limen_app_info_get_id (limen_request_get_app_info (check->request));
}

static void
store_answer (AccessCheck *check, gboolean allowed)
{
  const char *perms[] = { allowed ? "yes" : "no", NULL };

  /* Fire and forget: failing to remember only means asking again next time. */
  g_dbus_connection_call (check->connection, STORE_NAME, STORE_PATH, STORE_NAME, "SetPermission",
                          g_variant_new ("(sbss^as)", check->table, TRUE, check->id, app_id_of (check), perms),
                          NULL, G_DBUS_CALL_FLAGS_NONE, STORE_TIMEOUT_MS, NULL, NULL, NULL);
}

static void
on_access_reply (LimenRequest *request, GVariant *reply, GUnixFDList *fd_list,
                 const GError *error, gpointer user_data)
{
  AccessCheck *check = user_data;
  guint response = limen_backend_reply_response (reply, NULL);

  g_debug ("Access dialog for %s/%s (%s) answered %u", check->table, check->id, app_id_of (check), response);
  if (response != LIMEN_RESPONSE_OTHER)
    store_answer (check, response == LIMEN_RESPONSE_SUCCESS);
  check->reported = TRUE;
  check->func (request, response == LIMEN_RESPONSE_SUCCESS, check->user_data);
}

static void
ask_user (AccessCheck *check)
{
  g_autoptr(GError) error = NULL;
  const char *backend = limen_backend_find (check->context, ACCESS_IFACE, &error);
  GVariantBuilder options;
  LimenRequest *request = check->request;

  if (backend == NULL)
    {
      g_message ("Refusing %s/%s to %s: %s", check->table, check->id, app_id_of (check), error->message);
      access_check_done (check, FALSE);
      return;
    }
  g_variant_builder_init (&options, G_VARIANT_TYPE_VARDICT);
  if (check->grant_label)
    g_variant_builder_add (&options, "{sv}", "grant_label", g_variant_new_string (check->grant_label));
  if (check->deny_label)
    g_variant_builder_add (&options, "{sv}", "deny_label", g_variant_new_string (check->deny_label));
  if (check->icon)
    g_variant_builder_add (&options, "{sv}", "icon", g_variant_new_string (check->icon));
  /* The check lives exactly as long as the backend call: freed by its destroy notify. */
  limen_backend_call (request, backend, ACCESS_IFACE, "AccessDialog",
                      g_variant_new ("(osssssa{sv})", limen_request_get_path (request), app_id_of (check),
                                     check->parent_window, check->title, check->subtitle, check->body,
                                     &options),
                      NULL, LIMEN_BACKEND_TIMEOUT_DIALOG, on_access_reply, check,
                      (GDestroyNotify) access_check_free);
}

static void
on_lookup (GObject *source, GAsyncResult *result, gpointer user_data)
{
  AccessCheck *check = user_data;
  g_autoptr(GError) error = NULL;
  g_autoptr(GVariant) reply = g_dbus_connection_call_finish (G_DBUS_CONNECTION (source), result, &error);
  g_autoptr(GVariant) perms = NULL;
  g_autofree const char **strv = NULL;
  LimenPermission permission = LIMEN_PERMISSION_UNSET;

  if (reply)
    {
      g_variant_get_child (reply, 0, "@a{sas}", &perms);
      if (g_variant_lookup (perms, app_id_of (check), "^a&s", &strv) && strv[0])
        permission = limen_permission_from_string (strv[0]);
    }
  else
    g_debug ("No stored permission %s/%s: %s", check->table, check->id, error->message);

  if (!limen_request_is_open (check->request))
    access_check_done (check, FALSE);
  else if (check->only_no_refuses)
    access_check_done (check, permission != LIMEN_PERMISSION_NO);
  else if (permission == LIMEN_PERMISSION_YES || permission == LIMEN_PERMISSION_NO || check->lookup_only)
    access_check_done (check, permission == LIMEN_PERMISSION_YES);
  else
    ask_user (check);
}

static void
start (AccessCheck *check)
{
  LimenAppInfo *info = limen_request_get_app_info (check->request);

  /* Unsandboxed callers could do it all themselves; asking them would protect nothing. */
  if (limen_app_info_is_host (info))
    {
      access_check_done (check, TRUE);
      return;
    }
  g_dbus_connection_call (check->connection, STORE_NAME, STORE_PATH, STORE_NAME, "Lookup",
                          g_variant_new ("(ss)", check->table, check->id), G_VARIANT_TYPE ("(a{sas}v)"),
                          G_DBUS_CALL_FLAGS_NONE, STORE_TIMEOUT_MS, limen_request_get_cancellable (check->request),
                          on_lookup, check);
}

static AccessCheck *
check_new (LimenPortalContext *context, LimenRequest *request, const char *table, const char *id,
           LimenAccessFunc func, gpointer user_data)
{
  AccessCheck *check = g_new0 (AccessCheck, 1);

  check->context = context;
  check->request = limen_request_ref (request);
  check->connection = g_object_ref (context->connection);
  check->table = g_strdup (table);
  check->id = g_strdup (id);
  check->func = func;
  check->user_data = user_data;
  return check;
}

void
limen_access_check (LimenPortalContext *context, LimenRequest *request, const char *parent_window,
                    const char *table, const char *id, const LimenAccessDialog *dialog,
                    LimenAccessFunc func, gpointer user_data)
{
  AccessCheck *check = check_new (context, request, table, id, func, user_data);

  check->parent_window = g_strdup (parent_window ? parent_window : "");
  check->title = g_strdup (dialog->title ? dialog->title : "");
  check->subtitle = g_strdup (dialog->subtitle ? dialog->subtitle : "");
  check->body = g_strdup (dialog->body ? dialog->body : "");
  check->grant_label = g_strdup (dialog->grant_label);
  check->deny_label = g_strdup (dialog->deny_label);
  check->icon = g_strdup (dialog->icon);
  start (check);
}

void
limen_access_lookup (LimenPortalContext *context, LimenRequest *request, const char *table, const char *id,
                     LimenAccessFunc func, gpointer user_data)
{
  AccessCheck *check = check_new (context, request, table, id, func, user_data);

  check->lookup_only = TRUE;
  start (check);
}

void
limen_access_lookup_stored (LimenPortalContext *context, LimenRequest *request, const char *table,
                            const char *id, LimenAccessFunc func, gpointer user_data)
{
  AccessCheck *check = check_new (context, request, table, id, func, user_data);

  check->lookup_only = TRUE;
  check->only_no_refuses = TRUE;
  start (check);
}
