/* SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * An inhibition lives as long as its Request: the Request is never answered, and closing
 * it (or the caller leaving) closes the backend's impl Request, which lifts it. */
#include "inhibit.h"

#include <string.h>

#include "backend.h"
#include "session.h"

#define IMPL_IFACE "org.freedesktop.impl.portal.Inhibit"
#define FLAGS_ALL (1 | 2 | 4 | 8)   /* logout, user switch, suspend, idle */

static const LimenOption inhibit_options[] = {
  { "reason", "s", limen_validate_string_length, 1024 },
  { NULL }
};

static const LimenOption monitor_options[] = {
  { "session_handle_token", "s", limen_validate_token, 0 },
  { NULL }
};

static LimenDbusPortalInhibit *skeleton;

static void
on_inhibited (LimenRequest *request, GVariant *reply, GUnixFDList *fd_list, const GError *error, gpointer user_data)
{
  /* Success leaves the Request open: it is the inhibition. */
  if (reply == NULL)
    limen_request_respond (request, LIMEN_RESPONSE_OTHER, NULL);
}

static gboolean
handle_inhibit (LimenDbusPortalInhibit *object, GDBusMethodInvocation *invocation, const char *window,
                guint flags, GVariant *options, LimenPortalContext *context)
{
  g_autoptr(GError) error = NULL;
  g_auto(GVariantBuilder) b = G_VARIANT_BUILDER_INIT (G_VARIANT_TYPE_VARDICT);
  g_autoptr(LimenRequest) request = NULL;
  const char *backend;

  LIMEN_GET_APP_INFO_OR_RETURN (invocation, info);
  if (flags == 0 || (flags & ~FLAGS_ALL) != 0)
    {
      g_dbus_method_invocation_return_error_literal (invocation, LIMEN_ERROR, LIMEN_ERROR_INVALID_ARGUMENT,
                                                     "Invalid value for flags: must combine 1, 2, 4 and 8");
      return G_DBUS_METHOD_INVOCATION_HANDLED;
    }
  if (!limen_options_filter (options, &b, &error, inhibit_options, NULL) ||
      (backend = limen_backend_find (context, IMPL_IFACE, &error)) == NULL ||
      (request = limen_backend_start_request (invocation, info, options, backend, &error)) == NULL)
    {
      limen_invocation_return_gerror (invocation, error);
      return G_DBUS_METHOD_INVOCATION_HANDLED;
    }
  limen_backend_call (request, backend, IMPL_IFACE, "Inhibit",
                      limen_backend_build_parameters (request, g_variant_new ("(su)", window, flags),
                                                      g_variant_builder_end (&b)),
                      NULL, LIMEN_BACKEND_TIMEOUT_QUICK, on_inhibited, NULL, NULL);
  return G_DBUS_METHOD_INVOCATION_HANDLED;
}

static void
on_monitor_created (LimenRequest *request, GVariant *reply, GUnixFDList *fd_list, const GError *error,
                    gpointer user_data)
{
  LimenSession *session = user_data;
  guint response = LIMEN_RESPONSE_OTHER;

  if (reply && g_variant_is_of_type (reply, G_VARIANT_TYPE ("(u)")))
    g_variant_get (reply, "(u)", &response);
  if (response != LIMEN_RESPONSE_SUCCESS)
    {
      limen_session_close (session);
      limen_request_respond (request, MIN (response, LIMEN_RESPONSE_OTHER), NULL);
      return;
    }
  limen_request_respond (request, LIMEN_RESPONSE_SUCCESS,
                         g_variant_new_parsed ("{'session_handle': <%o>}", limen_session_get_path (session)));
}

static gboolean
handle_create_monitor (LimenDbusPortalInhibit *object, GDBusMethodInvocation *invocation, const char *window,
                       GVariant *options, LimenPortalContext *context)
{
  g_autoptr(GError) error = NULL;
  g_auto(GVariantBuilder) b = G_VARIANT_BUILDER_INIT (G_VARIANT_TYPE_VARDICT);
  g_autoptr(LimenRequest) request = NULL;
  g_autoptr(LimenSession) session = NULL;
  const char *backend;

  LIMEN_GET_APP_INFO_OR_RETURN (invocation, info);
  if (!limen_options_filter (options, &b, &error, monitor_options, NULL) ||
      (backend = limen_backend_find (context, IMPL_IFACE, &error)) == NULL ||
      (session = limen_session_new (invocation, info, options, &error)) == NULL)
    {
      limen_invocation_return_gerror (invocation, error);
      return G_DBUS_METHOD_INVOCATION_HANDLED;
    }
  if ((request = limen_backend_start_request (invocation, info, options, backend, &error)) == NULL)
    {
      limen_session_close (session);
      limen_invocation_return_gerror (invocation, error);
      return G_DBUS_METHOD_INVOCATION_HANDLED;
    }
  limen_session_set_backend (session, backend);
  limen_backend_call (request, backend, IMPL_IFACE, "CreateMonitor",
                      g_variant_new ("(ooss)", limen_request_get_path (request), limen_session_get_path (session),
                                     limen_app_info_get_id (info), window),
                      NULL, LIMEN_BACKEND_TIMEOUT_QUICK, on_monitor_created, limen_session_ref (session),
                      (GDestroyNotify) limen_session_unref);
  return G_DBUS_METHOD_INVOCATION_HANDLED;
}

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
  LimenSession *session = limen_session_lookup (session_handle, g_dbus_method_invocation_get_sender (invocation));
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

static void
on_state_changed (GDBusConnection *connection, const char *sender, const char *path, const char *iface,
                  const char *signal, GVariant *parameters, gpointer user_data)
{
  const char *session_handle;
  g_autoptr(GVariant) state = NULL;
  g_autofree char *owner = NULL;

  if (!g_variant_is_of_type (parameters, G_VARIANT_TYPE ("(oa{sv})")))
    return;
  g_variant_get (parameters, "(&o@a{sv})", &session_handle, &state);
  owner = sender_of_session_path (session_handle);
  if (owner == NULL || limen_session_lookup (session_handle, owner) == NULL)
    return;
  /* Only the session's owner learns about its session. */
  g_dbus_connection_emit_signal (connection, owner, LIMEN_PORTAL_PATH, "org.freedesktop.portal.Inhibit",
                                 "StateChanged", g_variant_new ("(o@a{sv})", session_handle, state), NULL);
}

GDBusInterfaceSkeleton *
limen_inhibit_new (LimenPortalContext *context)
{
  if (!limen_backend_is_configured (context, IMPL_IFACE))
    return NULL;
  skeleton = limen_dbus_portal_inhibit_skeleton_new ();
  limen_app_info_gate_skeleton (G_DBUS_INTERFACE_SKELETON (skeleton));
  limen_dbus_portal_inhibit_set_version (skeleton, 3);
  g_signal_connect (skeleton, "handle-inhibit", G_CALLBACK (handle_inhibit), context);
  g_signal_connect (skeleton, "handle-create-monitor", G_CALLBACK (handle_create_monitor), context);
  g_signal_connect (skeleton, "handle-query-end-response", G_CALLBACK (handle_query_end_response), context);
  g_dbus_connection_signal_subscribe (context->connection, NULL, IMPL_IFACE, "StateChanged", LIMEN_PORTAL_PATH,
                                      NULL, G_DBUS_SIGNAL_FLAGS_NONE, on_state_changed, NULL, NULL);
  return G_DBUS_INTERFACE_SKELETON (g_object_ref (skeleton));
}
