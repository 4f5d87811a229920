/* SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * An inhibition lives as long as its Request: once the backend took it the caller gets
 * Response 0, the Request stays exported, and closing it (or the caller leaving) closes the
 * backend's impl Request, which lifts it. What an app may inhibit is capped by its entry in
 * the permission store's "inhibit" table (words logout, switch, suspend, idle). */
#include "portal.h"

#include <string.h>

#include "backend.h"
#include "driver.h"
#include "option-tables.h"
#include "session.h"
#include "permission-store.h"

#define IMPL_IFACE "org.freedesktop.impl.portal.Inhibit"
#define FLAGS_ALL (1 | 2 | 4 | 8)   /* logout, user switch, suspend, idle */

static const LimenOption monitor_options[] = {
  { "session_handle_token", "s", limen_validate_token, 0 },
  { NULL }
};

static LimenDbusPortalInhibit *skeleton;

/* Pre-step of Inhibit: the flags the specification knows, at least one. */
static void
check_flags (LimenCall *call, GTask *task)
{
  g_autoptr(GVariant) arg = limen_call_get_arg (call, 1);
  guint flags = g_variant_get_uint32 (arg);

  if (flags == 0 || (flags & ~FLAGS_ALL) != 0)
    g_task_return_new_error (task, LIMEN_ERROR, LIMEN_ERROR_INVALID_ARGUMENT,
                             "Invalid value for flags: must combine 1, 2, 4 and 8");
  else
    g_task_return_boolean (task, TRUE);
}


static guint
allowed_flags (GVariant *reply, const char *app_id)
{
  static const struct { const char *word; guint flag; } words[] = {
    { "logout", 1 }, { "switch", 2 }, { "suspend", 4 }, { "idle", 8 },
  };
  g_autoptr(GVariant) perms = NULL;
  g_autofree const char **entry = NULL;
  guint allowed = 0;

  if (reply == NULL)
    return FLAGS_ALL;
  g_variant_get_child (reply, 0, "@a{sas}", &perms);
  if (!g_variant_lookup (perms, app_id, "^a&s", &entry))
    return FLAGS_ALL;   /* nothing stored: no cap */
  for (guint i = 0; entry[i]; i++)
    for (guint j = 0; j < G_N_ELEMENTS (words); j++)
      if (g_str_equal (entry[i], words[j].word))
        allowed |= words[j].flag;
  return allowed;
}

static void
on_inhibit_permission (GObject *source, GAsyncResult *result, gpointer user_data)
{
  g_autoptr(GTask) task = user_data;
  LimenCall *call = g_task_get_task_data (task);
  g_autoptr(GVariant) reply = g_dbus_connection_call_finish (G_DBUS_CONNECTION (source), result, NULL);
  g_autoptr(GVariant) window = limen_call_get_arg (call, 0);
  g_autoptr(GVariant) arg = limen_call_get_arg (call, 1);
  guint flags = g_variant_get_uint32 (arg) &
                allowed_flags (reply, limen_app_info_get_id (limen_call_get_app_info (call)));

  if (flags == 0)
    {
      g_task_return_new_error (task, LIMEN_ERROR, LIMEN_ERROR_NOT_ALLOWED,
                               "None of these inhibitions is allowed for this app");
      return;
    }
  limen_call_set_impl_args (call, g_variant_new ("(@su)", g_steal_pointer (&window), flags), NULL);
  g_task_return_boolean (task, TRUE);
}

/* Pre-step of Inhibit: mask the flags with what the app may inhibit; none left: Response 2. */
static void
mask_flags (LimenCall *call, GTask *task)
{
  g_task_set_task_data (task, call, NULL);
  g_dbus_connection_call (limen_call_get_context (call)->connection, LIMEN_STORE_NAME, LIMEN_STORE_PATH,
                          LIMEN_STORE_NAME, "Lookup",
                          g_variant_new ("(ss)", "inhibit", "inhibit"), G_VARIANT_TYPE ("(a{sas}v)"),
                          G_DBUS_CALL_FLAGS_NONE, 5000, g_task_get_cancellable (task), on_inhibit_permission,
                          g_object_ref (task));
}

static const LimenStep inhibit_pre[] = {
  { check_flags, LIMEN_STEP_BEFORE_HANDLE },
  { mask_flags, LIMEN_STEP_AFTER_HANDLE },
  { NULL }
};

/* Inhibit's success leaves the Request open: it is the inhibition. */
static const LimenDriverMethod inhibit_methods[] = {
  { .method = "Inhibit", .options = limen_options_inhibit_inhibit, .impl_interface = IMPL_IFACE, .impl_method = "Inhibit",
    .pre = inhibit_pre, .timeout_ms = LIMEN_BACKEND_TIMEOUT_QUICK, .flags = LIMEN_DRIVER_KEEP_OPEN },
  { .method = "CreateMonitor", .kind = LIMEN_CALL_CREATE_SESSION, .options = monitor_options,
    .impl_interface = IMPL_IFACE, .impl_method = "CreateMonitor", .timeout_ms = LIMEN_BACKEND_TIMEOUT_QUICK,
    .flags = LIMEN_DRIVER_NO_IMPL_OPTIONS },
  { NULL }
};

/* The unique name a session path was made for ("/…/session/1_23/TOKEN" → ":1.23"). */
static char *
sender_of_session_path (const char *path)
{
  const char *prefix = "/org/freedesktop/portal/desktop/session/";
  const char *slash;
  g_autofree char *part = NULL;

  if (!g_str_has_prefix (path, prefix))
    return NULL;
  slash = strchr (path + strlen (prefix), '/');
  if (slash == NULL)
    return NULL;
  part = g_strndup (path + strlen (prefix), slash - (path + strlen (prefix)));
  g_strdelimit (part, "_", '.');
  return g_strconcat (":", part, NULL);
}

static gboolean
handle_query_end_response (LimenDbusPortalInhibit *object, GDBusMethodInvocation *invocation,
                           const char *session_handle, LimenPortalContext *context)
{
  g_autoptr(LimenSession) session = limen_session_lookup (session_handle,
                                                         g_dbus_method_invocation_get_sender (invocation));
  const char *backend = limen_backend_find (context, IMPL_IFACE, NULL);

  if (session == NULL)
    {
      g_dbus_method_invocation_return_error_literal (invocation, LIMEN_ERROR, LIMEN_ERROR_NOT_FOUND,
                                                     "No such session");
      return G_DBUS_METHOD_INVOCATION_HANDLED;
    }
  if (backend)
    g_dbus_connection_call (context->connection, backend, LIMEN_PORTAL_PATH, IMPL_IFACE, "QueryEndResponse",
                            g_variant_new ("(o)", session_handle), NULL, G_DBUS_CALL_FLAGS_NONE,
                            LIMEN_BACKEND_TIMEOUT_QUICK, NULL, NULL, NULL);
  limen_dbus_portal_inhibit_complete_query_end_response (object, invocation);
  return G_DBUS_METHOD_INVOCATION_HANDLED;
}

/* StateChanged of a monitor session, from the Inhibit backend's current owner only: the
 * session's owner learns about its session, nobody else. */
static GVariant *
relay_state_changed (const char *backend, const char *signal, GVariant *parameters, const char **destination)
{
  const char *session_handle;
  g_autoptr(GVariant) state = NULL;
  g_autofree char *owner = NULL;
  g_autoptr(LimenSession) session = NULL;

  if (!g_str_equal (signal, "StateChanged") || !g_variant_is_of_type (parameters, G_VARIANT_TYPE ("(oa{sv})")))
    return NULL;
  g_variant_get (parameters, "(&o@a{sv})", &session_handle, &state);
  owner = sender_of_session_path (session_handle);
  if (owner == NULL || (session = limen_session_lookup (session_handle, owner)) == NULL ||
      !limen_session_is_open (session))
    return NULL;
  /* The session table keeps it; the name outlives this call. */
  *destination = limen_session_get_sender (session);
  return g_variant_new ("(o@a{sv})", session_handle, state);
}

static const LimenBackendRelay state_relay = {
  .impl_interface = IMPL_IFACE,
  .portal_interface = "org.freedesktop.portal.Inhibit",
  .signal = relay_state_changed,
};

/* Inhibit (the Request is the inhibition), CreateMonitor, QueryEndResponse. */
GDBusInterfaceSkeleton *
limen_inhibit_new (LimenPortalContext *context)
{
  const char *backend;

  if (!limen_backend_is_configured (context, IMPL_IFACE))
    return NULL;
  skeleton = limen_dbus_portal_inhibit_skeleton_new ();
  limen_driver_offer (context, skeleton, 3, inhibit_methods);
  g_signal_connect (skeleton, "handle-query-end-response", G_CALLBACK (handle_query_end_response), context);
  if ((backend = limen_backend_find (context, IMPL_IFACE, NULL)) != NULL)
    limen_backend_relay (context->connection, &state_relay, backend);
  return G_DBUS_INTERFACE_SKELETON (g_object_ref (skeleton));
}
