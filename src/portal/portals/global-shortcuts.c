/* SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * GlobalShortcuts: an app creates a Session, proposes shortcuts, and hears Activated /
 * Deactivated when the person presses them anywhere. The backend binds and asks; this side
 * checks every list that passes either way, and hands the backend's key events only to the
 * session's owner: key timing tells a lot about a person, and nobody else on the bus may
 * see it. The backend's impl methods here take no app_id (unlike most), so BindShortcuts
 * and ListShortcuts call it from their own run step. */
#include "portal.h"

#include <string.h>

#include "backend.h"
#include "driver.h"
#include "option-tables.h"
#include "shortcuts.h"

#define IMPL_IFACE "org.freedesktop.impl.portal.GlobalShortcuts"
#define PORTAL_IFACE "org.freedesktop.portal.GlobalShortcuts"

static GDBusConnection *connection;
static GHashTable *sessions;   /* session path → LimenSession (not owned; removed when closed) */

/* ---- signals from the backend, to the session's owner ---- */

static GVariant *
filter_key_event (GVariant *params, GError **error)
{
  g_auto(GVariantBuilder) options = G_VARIANT_BUILDER_INIT (G_VARIANT_TYPE_VARDICT);
  g_autoptr(GVariant) raw = NULL;
  const char *path, *id;
  guint64 timestamp;

  g_variant_get (params, "(&o&st@a{sv})", &path, &id, &timestamp, &raw);
  if (!limen_shortcut_id_is_valid (id))
    {
      g_set_error_literal (error, LIMEN_ERROR, LIMEN_ERROR_INVALID_ARGUMENT, "invalid shortcut id");
      return NULL;
    }
  if (!limen_options_filter (raw, &options, error, limen_options_global_shortcuts_key_event, NULL))
    return NULL;
  return g_variant_new ("(ost@a{sv})", path, id, timestamp, g_variant_builder_end (&options));
}

static GVariant *
filter_changed (GVariant *params, GError **error)
{
  g_autoptr(GVariant) list = NULL;
  GVariant *filtered;
  const char *path;

  g_variant_get (params, "(&o@a(sa{sv}))", &path, &list);
  filtered = limen_shortcuts_filter (list, limen_shortcut_result_keys, error);
  return filtered ? g_variant_new ("(o@a(sa{sv}))", path, filtered) : NULL;
}

/* Activated, Deactivated, ShortcutsChanged of an open session of @backend, checked. */
static GVariant *
relay_signal (const char *backend, const char *signal, GVariant *params, const char **destination)
{
  g_autoptr(GError) error = NULL;
  GVariant *out;
  const char *session_path;
  LimenSession *session;
  gboolean key_event = g_str_equal (signal, "Activated") || g_str_equal (signal, "Deactivated");

  if (!(key_event && g_variant_is_of_type (params, G_VARIANT_TYPE ("(osta{sv})"))) &&
      !(g_str_equal (signal, "ShortcutsChanged") && g_variant_is_of_type (params, G_VARIANT_TYPE ("(oa(sa{sv}))"))))
    return NULL;
  g_variant_get_child (params, 0, "&o", &session_path);
  session = g_hash_table_lookup (sessions, session_path);
  if (!session || !limen_session_is_open (session) || g_strcmp0 (limen_session_get_data (session), backend) != 0)
    return NULL;
  out = key_event ? filter_key_event (params, &error) : filter_changed (params, &error);
  if (!out)
    {
      g_message ("%s from %s for %s dropped: %s", signal, backend, session_path, error->message);
      return NULL;
    }
  *destination = limen_session_get_sender (session);
  return out;
}

/* The backend's impl Sessions went with it, and the keys it grabbed: the app learns that
 * its sessions are closed and may create new ones. */
static void
close_backend_sessions (const char *backend)
{
  g_autoptr(GPtrArray) gone = g_ptr_array_new_with_free_func ((GDestroyNotify) limen_session_unref);
  GHashTableIter iter;
  gpointer value;

  g_hash_table_iter_init (&iter, sessions);
  while (g_hash_table_iter_next (&iter, NULL, &value))
    if (g_strcmp0 (limen_session_get_data (value), backend) == 0)
      g_ptr_array_add (gone, limen_session_ref (value));
  for (guint i = 0; i < gone->len; i++)
    {
      g_message ("GlobalShortcuts backend %s left: closing %s", backend,
                 limen_session_get_path (g_ptr_array_index (gone, i)));
      limen_session_close (g_ptr_array_index (gone, i));
    }
}

static const LimenBackendRelay global_shortcuts_relay = {
  .impl_interface = IMPL_IFACE,
  .portal_interface = PORTAL_IFACE,
  .signal = relay_signal,
  .vanished = close_backend_sessions,
};

/* ---- sessions ---- */

static void
on_session_closed (LimenSession *session, gpointer user_data)
{
  g_hash_table_remove (sessions, limen_session_get_path (session));
}

/* CreateSession's post-step: the session is ours, its data the backend that holds it. */
static void
remember_session (LimenCall *call, GTask *task)
{
  LimenSession *session = limen_call_get_session (call);
  g_autoptr(GError) error = NULL;
  const char *backend = limen_backend_find (limen_call_get_context (call), IMPL_IFACE, &error);

  if (!backend)
    {
      g_task_return_error (task, g_steal_pointer (&error));
      return;
    }
  limen_session_set_data (session, g_strdup (backend), g_free);
  limen_session_set_closed_func (session, on_session_closed, NULL);
  g_hash_table_replace (sessions, (gpointer) limen_session_get_path (session), session);
  limen_backend_relay (connection, &global_shortcuts_relay, backend);
  g_task_return_boolean (task, TRUE);
}

/* The driver finds any session of the caller: this must be one of ours. */
static gboolean
check_session (LimenSession *session, GError **error)
{
  if (g_hash_table_lookup (sessions, limen_session_get_path (session)) != session)
    {
      g_set_error_literal (error, LIMEN_ERROR, LIMEN_ERROR_INVALID_ARGUMENT,
                           "Invalid value for session_handle: not a global shortcuts session");
      return FALSE;
    }
  return TRUE;
}

/* ---- BindShortcuts and ListShortcuts ---- */

typedef struct {
  GVariant *shortcuts;      /* the filtered proposal, a(sa{sv}) */
  char     *parent_window;
} BindArgs;

static void
bind_args_free (BindArgs *a)
{
  g_clear_pointer (&a->shortcuts, g_variant_unref);
  g_free (a->parent_window);
  g_free (a);
}

/* Pre-step of BindShortcuts, before the handle: a bad list is the method's error. */
static void
check_bind (LimenCall *call, GTask *task)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(GVariant) list = limen_call_get_arg (call, 1);
  g_autoptr(GVariant) window = limen_call_get_arg (call, 2);
  GVariant *filtered;
  BindArgs *args;

  if (!check_session (limen_call_get_session (call), &error) ||
      !limen_check_parent_window (g_variant_get_string (window, NULL), &error) ||
      !(filtered = limen_shortcuts_filter (list, limen_shortcut_proposal_keys, &error)))
    {
      g_task_return_error (task, g_steal_pointer (&error));
      return;
    }
  args = g_new0 (BindArgs, 1);
  args->shortcuts = g_variant_ref_sink (filtered);
  args->parent_window = g_variant_dup_string (window, NULL);
  limen_call_set_data (call, args, (GDestroyNotify) bind_args_free);
  g_task_return_boolean (task, TRUE);
}

static void
check_list (LimenCall *call, GTask *task)
{
  g_autoptr(GError) error = NULL;

  if (!check_session (limen_call_get_session (call), &error))
    g_task_return_error (task, g_steal_pointer (&error));
  else
    g_task_return_boolean (task, TRUE);
}

static void
on_impl_reply (GObject *source, GAsyncResult *result, gpointer user_data)
{
  g_autoptr(GTask) task = user_data;
  LimenCall *call = g_task_get_task_data (task);
  g_autoptr(GError) error = NULL;
  g_autoptr(GVariant) results = NULL;
  g_autoptr(GVariant) reply = limen_backend_call_finish (result, NULL, &error);
  guint response;

  if (g_error_matches (error, G_IO_ERROR, G_IO_ERROR_CANCELLED))
    {
      g_task_return_error (task, g_steal_pointer (&error));
      return;
    }
  /* Two statements: @results is filled by the first. */
  response = limen_driver_reply_response (reply, &results);
  limen_call_set_results (call, response, results);
  g_task_return_boolean (task, TRUE);
}

/* The run step of both: call the backend with (handle, session_handle[, ...]). */
static void
call_backend (LimenCall *call, GTask *task, const char *method, GVariant *parameters, int timeout_ms)
{
  LimenSession *session = limen_call_get_session (call);

  g_task_set_task_data (task, call, NULL);
  limen_backend_call_async (limen_call_get_context (call), limen_call_get_request (call),
                            limen_session_get_data (session), IMPL_IFACE, method, parameters, NULL, timeout_ms,
                            on_impl_reply, g_object_ref (task));
}

static void
run_bind (LimenCall *call, GTask *task)
{
  BindArgs *args = limen_call_get_data (call);

  call_backend (call, task, "BindShortcuts",
                g_variant_new ("(oo@a(sa{sv})s@a{sv})", limen_request_get_path (limen_call_get_request (call)),
                               limen_session_get_path (limen_call_get_session (call)), args->shortcuts,
                               args->parent_window, limen_call_get_options (call)),
                LIMEN_BACKEND_TIMEOUT_DIALOG);
}

static void
run_list (LimenCall *call, GTask *task)
{
  call_backend (call, task, "ListShortcuts",
                g_variant_new ("(oo)", limen_request_get_path (limen_call_get_request (call)),
                               limen_session_get_path (limen_call_get_session (call))),
                LIMEN_BACKEND_TIMEOUT_QUICK);
}

static gboolean
proposal_has (GVariant *proposal, const char *id)
{
  for (gsize i = 0; i < g_variant_n_children (proposal); i++)
    {
      const char *pid;

      g_variant_get_child (proposal, i, "(&s@a{sv})", &pid, NULL);
      if (g_str_equal (pid, id))
        return TRUE;
    }
  return FALSE;
}

/* Post-step of both: the backend's list is checked like the app's, and a bind answers only
 * shortcuts the app proposed. */
static void
filter_results (LimenCall *call, GTask *task)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(GVariant) list = NULL;
  g_autoptr(GVariant) filtered = NULL;
  GVariant *results = limen_call_get_results (call);
  BindArgs *args = limen_call_get_data (call);
  g_auto(GVariantBuilder) kept = G_VARIANT_BUILDER_INIT (G_VARIANT_TYPE ("a(sa{sv})"));

  list = results ? g_variant_lookup_value (results, "shortcuts", G_VARIANT_TYPE ("a(sa{sv})")) : NULL;
  if (list && !(filtered = limen_shortcuts_filter (list, limen_shortcut_result_keys, &error)))
    {
      g_message ("GlobalShortcuts backend answered a bad list: %s", error->message);
      limen_call_set_results (call, LIMEN_RESPONSE_OTHER, NULL);
      g_task_return_boolean (task, TRUE);
      return;
    }
  if (filtered)
    g_variant_ref_sink (filtered);
  for (gsize i = 0; filtered && i < g_variant_n_children (filtered); i++)
    {
      g_autoptr(GVariant) entry = g_variant_get_child_value (filtered, i);
      const char *id;

      g_variant_get_child (entry, 0, "&s", &id);
      if (args && !proposal_has (args->shortcuts, id))
        continue;
      g_variant_builder_add_value (&kept, entry);
    }
  limen_call_set_results (call, LIMEN_RESPONSE_SUCCESS,
                          g_variant_new_parsed ("{'shortcuts': <%@a(sa{sv})>}", g_variant_builder_end (&kept)));
  g_task_return_boolean (task, TRUE);
}

static const LimenStep create_post[] = { { remember_session }, { NULL } };
static const LimenStep bind_pre[] = { { check_bind, LIMEN_STEP_BEFORE_HANDLE }, { NULL } };
static const LimenStep list_pre[] = { { check_list, LIMEN_STEP_BEFORE_HANDLE }, { NULL } };
static const LimenStep results_post[] = { { filter_results }, { NULL } };

/* The tokens are read by the driver; checked by the tables too, so a bad one is refused
 * before anything else happens (and never closes the session a call names). */
static const LimenDriverMethod global_shortcuts_methods[] = {
  { .method = "CreateSession", .kind = LIMEN_CALL_CREATE_SESSION,
    .options = limen_options_global_shortcuts_create_session,
    .impl_interface = IMPL_IFACE, .impl_method = "CreateSession", .post = create_post,
    .timeout_ms = LIMEN_BACKEND_TIMEOUT_QUICK },
  { .method = "BindShortcuts", .kind = LIMEN_CALL_IN_SESSION, .options = limen_options_global_shortcuts_request,
    .impl_interface = IMPL_IFACE, .pre = bind_pre, .run = run_bind, .post = results_post },
  { .method = "ListShortcuts", .kind = LIMEN_CALL_IN_SESSION, .options = limen_options_global_shortcuts_request,
    .impl_interface = IMPL_IFACE, .pre = list_pre, .run = run_list, .post = results_post },
  { NULL }
};

/* ---- ConfigureShortcuts: no Request; answered once the backend shows its dialog ---- */

static void
on_configured (GObject *source, GAsyncResult *result, gpointer user_data)
{
  g_autoptr(GDBusMethodInvocation) invocation = user_data;
  g_autoptr(GError) error = NULL;
  g_autoptr(GVariant) reply = g_dbus_connection_call_finish (G_DBUS_CONNECTION (source), result, &error);

  if (!reply)
    {
      g_dbus_error_strip_remote_error (error);
      g_dbus_method_invocation_return_error (g_steal_pointer (&invocation), LIMEN_ERROR, LIMEN_ERROR_FAILED,
                                             "The shortcut settings could not be shown: %s", error->message);
      return;
    }
  g_dbus_method_invocation_return_value (g_steal_pointer (&invocation), NULL);
}

static gboolean
handle_configure (LimenDbusPortalGlobalShortcuts *object, GDBusMethodInvocation *invocation,
                  const char *session_handle, const char *parent_window, GVariant *options,
                  LimenPortalContext *context)
{
  g_auto(GVariantBuilder) b = G_VARIANT_BUILDER_INIT (G_VARIANT_TYPE_VARDICT);
  g_autoptr(GError) error = NULL;
  LimenSession *session = NULL;

  LIMEN_GET_APP_INFO_OR_RETURN (invocation, info);
  if (!limen_options_filter (options, &b, &error, limen_options_global_shortcuts_configure, NULL) ||
      !(session = limen_driver_lookup_session (invocation, session_handle, &error)) ||
      !check_session (session, &error) || !limen_check_parent_window (parent_window, &error))
    {
      limen_invocation_return_gerror (invocation, error);
      return G_DBUS_METHOD_INVOCATION_HANDLED;
    }
  g_dbus_connection_call (context->connection, limen_session_get_data (session), LIMEN_PORTAL_PATH, IMPL_IFACE,
                          "ConfigureShortcuts",
                          g_variant_new ("(os@a{sv})", session_handle, parent_window, g_variant_builder_end (&b)),
                          NULL, G_DBUS_CALL_FLAGS_NO_AUTO_START, LIMEN_BACKEND_TIMEOUT_QUICK, NULL, on_configured,
                          g_object_ref (invocation));
  return G_DBUS_METHOD_INVOCATION_HANDLED;
}

/* Sessions of shortcuts bound by the GlobalShortcuts backend; key events to their owners. */
GDBusInterfaceSkeleton *
limen_global_shortcuts_new (LimenPortalContext *context)
{
  GDBusInterfaceSkeleton *object;

  if (!limen_backend_is_configured (context, IMPL_IFACE))
    return NULL;
  connection = context->connection;
  sessions = g_hash_table_new (g_str_hash, g_str_equal);
  object = limen_driver_offer (context, limen_dbus_portal_global_shortcuts_skeleton_new (), 2,
                               global_shortcuts_methods);
  g_signal_connect (object, "handle-configure-shortcuts", G_CALLBACK (handle_configure), context);
  return object;
}
