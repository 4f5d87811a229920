/* SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * Asynchronous all the way: a permission store that is slow to activate or a user who
 * takes a minute to decide never holds up the daemon's other callers. */
#include "access.h"

#include <glib/gi18n.h>

#include "backend.h"
#include "driver.h"
#include "permission-store.h"

#define STORE_TIMEOUT_MS 5000
#define ACCESS_IFACE "org.freedesktop.impl.portal.Access"

/* Table name → LimenAccessFormat, for tables not in the yes/no/ask form. */
static GHashTable *formats;

void
limen_access_set_format (const char *table, const LimenAccessFormat *format)
{
  if (formats == NULL)
    formats = g_hash_table_new (g_str_hash, g_str_equal);
  g_hash_table_replace (formats, (gpointer) table, (gpointer) format);
}

static const LimenAccessFormat *
format_of (const char *table)
{
  return formats ? g_hash_table_lookup (formats, table) : NULL;
}

/* The app as an Access dialog names it: "Name (app.id)" when the app has a desktop file
 * with a name, else its id; "" for a host app without an id. */
static char *
app_label (LimenAppInfo *info)
{
  const char *app_id = limen_app_info_get_id (info);
  g_autofree char *name = NULL;

  if (*app_id == '\0')
    return g_strdup ("");
  name = limen_app_id_dup_display_name (app_id);
  if (name == NULL || g_str_equal (name, app_id))
    return g_strdup (app_id);
  return g_strdup_printf ("%s (%s)", name, app_id);
}

/* The GTask's data. */
typedef struct {
  LimenPortalContext *context;
  LimenRequest       *request;
  LimenAccessMode     mode;
  LimenAccessModal    modal;
  LimenPermission     stored;   /* what the store held before asking */
  char               *parent_window;
  char               *table;
  char               *id;
  char               *title, *subtitle, *body, *grant_label, *deny_label, *icon;
} AccessCheck;

static void
access_check_free (AccessCheck *check)
{
  limen_request_unref (check->request);
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

/* Report the decision; a request closed meanwhile is always refused. */
static void
check_done (GTask *task, gboolean allowed)
{
  AccessCheck *check = g_task_get_task_data (task);

  g_task_return_boolean (task, allowed && limen_request_is_open (check->request));
  g_object_unref (task);
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
  const LimenAccessFormat *format = format_of (check->table);
  const char * const *stored = format ? (allowed ? format->granted : format->denied) : perms;

  /* Fire and forget: failing to remember only means asking again next time. */
  g_dbus_connection_call (check->context->connection, LIMEN_STORE_NAME, LIMEN_STORE_PATH, LIMEN_STORE_NAME,
                          "SetPermission",
                          g_variant_new ("(sbss^as)", check->table, TRUE, check->id, app_id_of (check), stored),
                          NULL, G_DBUS_CALL_FLAGS_NONE, STORE_TIMEOUT_MS, NULL, NULL, NULL);
}

static void
on_access_reply (GObject *source, GAsyncResult *result, gpointer user_data)
{
  GTask *task = user_data;
  AccessCheck *check = g_task_get_task_data (task);
  g_autoptr(GError) error = NULL;
  g_autoptr(GVariant) reply = limen_backend_call_finish (result, NULL, &error);
  guint response = limen_driver_reply_response (reply, NULL);

  if (reply == NULL && g_error_matches (error, G_IO_ERROR, G_IO_ERROR_CANCELLED))
    {
      check_done (task, FALSE);
      return;
    }
  g_debug ("Access dialog for %s/%s (%s) answered %u", check->table, check->id, app_id_of (check), response);
  /* Only a first answer is kept: a stored "ask" means asking every time. */
  if (response != LIMEN_RESPONSE_OTHER && check->stored == LIMEN_PERMISSION_UNSET)
    store_answer (check, response == LIMEN_RESPONSE_SUCCESS);
  check_done (task, response == LIMEN_RESPONSE_SUCCESS);
}

static void
ask_user (GTask *task)
{
  AccessCheck *check = g_task_get_task_data (task);
  g_autoptr(GError) error = NULL;
  const char *backend = limen_backend_find (check->context, ACCESS_IFACE, &error);
  GVariantBuilder options;

  if (backend == NULL)
    {
      g_message ("Refusing %s/%s to %s: %s", check->table, check->id, app_id_of (check), error->message);
      check_done (task, FALSE);
      return;
    }
  if (check->subtitle == NULL)
    check->subtitle = app_label (limen_request_get_app_info (check->request));
  /* A host app without an app id is stored under the empty id, shared by all such apps: the
   * person is told that the answer counts for them all. */
  if (*app_id_of (check) == '\0')
    {
      g_autofree char *body = check->body;

      check->body = g_strconcat (body, *body ? "\n\n" : "",
                                 _("This app could not be identified. Your answer applies to every unidentified app."),
                                 NULL);
    }
  g_variant_builder_init (&options, G_VARIANT_TYPE_VARDICT);
  if (check->grant_label)
    g_variant_builder_add (&options, "{sv}", "grant_label", g_variant_new_string (check->grant_label));
  if (check->deny_label)
    g_variant_builder_add (&options, "{sv}", "deny_label", g_variant_new_string (check->deny_label));
  if (check->icon)
    g_variant_builder_add (&options, "{sv}", "icon", g_variant_new_string (check->icon));
  if (check->modal != LIMEN_ACCESS_MODAL_UNSET)
    g_variant_builder_add (&options, "{sv}", "modal", g_variant_new_boolean (check->modal == LIMEN_ACCESS_MODAL_YES));
  limen_backend_call_async (check->context, check->request, backend, ACCESS_IFACE, "AccessDialog",
                            g_variant_new ("(osssssa{sv})", limen_request_get_path (check->request),
                                           app_id_of (check), check->parent_window, check->title,
                                           check->subtitle, check->body, &options),
                            NULL, LIMEN_BACKEND_TIMEOUT_DIALOG, on_access_reply, task);
}

static void
on_lookup (GObject *source, GAsyncResult *result, gpointer user_data)
{
  GTask *task = user_data;
  AccessCheck *check = g_task_get_task_data (task);
  g_autoptr(GError) error = NULL;
  g_autoptr(GVariant) reply = g_dbus_connection_call_finish (G_DBUS_CONNECTION (source), result, &error);
  g_autoptr(GVariant) perms = NULL;
  g_autofree const char **strv = NULL;
  LimenPermission permission = LIMEN_PERMISSION_UNSET;

  if (reply)
    {
      g_variant_get_child (reply, 0, "@a{sas}", &perms);
      const LimenAccessFormat *format = format_of (check->table);

      if (g_variant_lookup (perms, app_id_of (check), "^a&s", &strv) && strv[0])
        permission = format ? format->read ((const char * const *) strv) : limen_permission_from_string (strv[0]);
    }
  else
    g_debug ("No stored permission %s/%s: %s", check->table, check->id, error->message);
  check->stored = permission;

  if (!limen_request_is_open (check->request))
    check_done (task, FALSE);
  else if (check->mode == LIMEN_ACCESS_NOT_DENIED)
    check_done (task, permission != LIMEN_PERMISSION_NO);
  else if (check->mode == LIMEN_ACCESS_GRANT_FIRST && permission == LIMEN_PERMISSION_UNSET)
    {
      store_answer (check, TRUE);
      check_done (task, TRUE);
    }
  else if (permission == LIMEN_PERMISSION_YES || permission == LIMEN_PERMISSION_NO || check->mode == LIMEN_ACCESS_LOOKUP)
    check_done (task, permission == LIMEN_PERMISSION_YES);
  else
    ask_user (task);
}

void
limen_access_check_async (LimenPortalContext *context, LimenRequest *request, const char *parent_window,
                          const char *table, const char *id, LimenAccessMode mode,
                          const LimenAccessDialog *dialog, GAsyncReadyCallback callback, gpointer user_data)
{
  AccessCheck *check;
  GTask *task;

  g_return_if_fail (dialog != NULL || (mode != LIMEN_ACCESS_ASK && mode != LIMEN_ACCESS_GRANT_FIRST));
  check = g_new0 (AccessCheck, 1);
  task = g_task_new (NULL, NULL, callback, user_data);
  g_task_set_source_tag (task, limen_access_check_async);
  check->context = context;
  check->request = limen_request_ref (request);
  check->mode = mode;
  check->table = g_strdup (table);
  check->id = g_strdup (id);
  check->parent_window = g_strdup (parent_window ? parent_window : "");
  if (dialog)
    {
      check->title = g_strdup (dialog->title ? dialog->title : "");
      check->subtitle = g_strdup (dialog->subtitle);   /* NULL: named when asked */
      check->body = g_strdup (dialog->body ? dialog->body : "");
      check->grant_label = g_strdup (dialog->grant_label);
      check->deny_label = g_strdup (dialog->deny_label);
      check->icon = g_strdup (dialog->icon);
      check->modal = dialog->modal;
    }
  g_task_set_task_data (task, check, (GDestroyNotify) access_check_free);

  g_dbus_connection_call (context->connection, LIMEN_STORE_NAME, LIMEN_STORE_PATH, LIMEN_STORE_NAME, "Lookup",
                          g_variant_new ("(ss)", table, id), G_VARIANT_TYPE ("(a{sas}v)"),
                          G_DBUS_CALL_FLAGS_NONE, STORE_TIMEOUT_MS, limen_request_get_cancellable (request),
                          on_lookup, task);
}

gboolean
limen_access_check_finish (GAsyncResult *result, GError **error)
{
  return g_task_propagate_boolean (G_TASK (result), error);
}

static void
on_step_access (GObject *source, GAsyncResult *result, gpointer user_data)
{
  g_autoptr(GTask) task = user_data;

  if (limen_access_check_finish (result, NULL))
    g_task_return_boolean (task, TRUE);
  else
    g_task_return_new_error (task, LIMEN_ERROR, LIMEN_ERROR_NOT_ALLOWED, "not allowed");
}

void
limen_access_step (LimenCall *call, GTask *task, const char *parent_window, const char *table,
                   LimenAccessMode mode, const LimenAccessDialog *dialog)
{
  LimenAccessDialog with_modal;
  gboolean modal;

  if (dialog && g_variant_lookup (limen_call_get_options (call), "modal", "b", &modal))
    {
      with_modal = *dialog;
      with_modal.modal = modal ? LIMEN_ACCESS_MODAL_YES : LIMEN_ACCESS_MODAL_NO;
      dialog = &with_modal;
    }
  limen_access_check_async (limen_call_get_context (call), limen_call_get_request (call), parent_window,
                            table, table, mode, dialog, on_step_access, g_object_ref (task));
}
