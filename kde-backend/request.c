/* Limen — impl Request and Session objects of limen-kde.
 *
 * The frontend creates a handle per call and, when its caller gives up, calls Close on
 * the same path at our name: that is how a dialog learns it must go away. A frontend
 * that leaves the bus takes its requests with it.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later */
#include "limen-kde.h"

#include <string.h>

#include "app-info.h"
#include "errors.h"

#define REQUEST_PREFIX "/org/freedesktop/portal/desktop/request/"
#define SESSION_PREFIX "/org/freedesktop/portal/desktop/session/"

struct _LimenKdeRequest {
  LimenDbusImplPortalRequest *skeleton;
  char                       *sender;
  char                       *handle;
  LimenKdeRequestCloseFunc    close_func;
  gpointer                    user_data;
};

struct _LimenKdeSession {
  LimenDbusImplPortalSession *skeleton;
  char                       *sender;
  char                       *handle;
  LimenKdeSessionCloseFunc    close_func;
  gpointer                    user_data;
};

static GHashTable *requests;   /* "sender\nhandle" → LimenKdeRequest */
static GHashTable *sessions;   /* "sender\nhandle" → LimenKdeSession */
static gboolean watching;

static char *
make_key (const char *sender, const char *handle)
{
  return g_strconcat (sender, "\n", handle, NULL);
}

static void
request_free (LimenKdeRequest *request)
{
  g_dbus_interface_skeleton_unexport (G_DBUS_INTERFACE_SKELETON (request->skeleton));
  g_object_unref (request->skeleton);
  g_free (request->sender);
  g_free (request->handle);
  g_free (request);
}

static void
session_free (LimenKdeSession *session)
{
  g_dbus_interface_skeleton_unexport (G_DBUS_INTERFACE_SKELETON (session->skeleton));
  g_object_unref (session->skeleton);
  g_free (session->sender);
  g_free (session->handle);
  g_free (session);
}

/* Remove from the table, run the close function, then free. */
static void
request_close (LimenKdeRequest *request)
{
  g_autofree char *key = make_key (request->sender, request->handle);

  g_hash_table_steal (requests, key);
  g_debug ("Request %s closed", request->handle);
  if (request->close_func)
    request->close_func (request, request->user_data);
  request_free (request);
}

static void
session_close_internal (LimenKdeSession *session, gboolean emit)
{
  g_autofree char *key = make_key (session->sender, session->handle);

  g_hash_table_steal (sessions, key);
  if (session->close_func)
    session->close_func (session, session->user_data);
  if (emit)
    limen_dbus_impl_portal_session_emit_closed (session->skeleton);
  session_free (session);
}

static void
on_peer_vanished (const char *unique_name, gpointer user_data)
{
  GHashTableIter iter;
  gpointer value;
  g_autoptr(GPtrArray) gone_requests = g_ptr_array_new ();
  g_autoptr(GPtrArray) gone_sessions = g_ptr_array_new ();

  g_hash_table_iter_init (&iter, requests);
  while (g_hash_table_iter_next (&iter, NULL, &value))
    if (g_str_equal (((LimenKdeRequest *) value)->sender, unique_name))
      g_ptr_array_add (gone_requests, value);
  g_hash_table_iter_init (&iter, sessions);
  while (g_hash_table_iter_next (&iter, NULL, &value))
    if (g_str_equal (((LimenKdeSession *) value)->sender, unique_name))
      g_ptr_array_add (gone_sessions, value);
  for (guint i = 0; i < gone_requests->len; i++)
    request_close (g_ptr_array_index (gone_requests, i));
  for (guint i = 0; i < gone_sessions->len; i++)
    session_close_internal (g_ptr_array_index (gone_sessions, i), FALSE);
}

static void
ensure_tables (void)
{
  if (requests)
    return;
  requests = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);
  sessions = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);
  if (!watching)
    {
      watching = TRUE;
      limen_app_info_add_vanished_watch (on_peer_vanished, NULL);
    }
}

static gboolean
on_handle_close (LimenDbusImplPortalRequest *skeleton,
                 GDBusMethodInvocation      *invocation,
                 gpointer                    user_data)
{
  LimenKdeRequest *request = user_data;

  if (g_strcmp0 (g_dbus_method_invocation_get_sender (invocation), request->sender) != 0)
    {
      g_dbus_method_invocation_return_error_literal (invocation, LIMEN_ERROR, LIMEN_ERROR_NOT_ALLOWED,
                                                     "Only the caller may close this request");
      return G_DBUS_METHOD_INVOCATION_HANDLED;
    }
  limen_dbus_impl_portal_request_complete_close (skeleton, invocation);
  request_close (request);
  return G_DBUS_METHOD_INVOCATION_HANDLED;
}

static gboolean
on_handle_session_close (LimenDbusImplPortalSession *skeleton,
                         GDBusMethodInvocation      *invocation,
                         gpointer                    user_data)
{
  LimenKdeSession *session = user_data;

  if (g_strcmp0 (g_dbus_method_invocation_get_sender (invocation), session->sender) != 0)
    {
      g_dbus_method_invocation_return_error_literal (invocation, LIMEN_ERROR, LIMEN_ERROR_NOT_ALLOWED,
                                                     "Only the caller may close this session");
      return G_DBUS_METHOD_INVOCATION_HANDLED;
    }
  limen_dbus_impl_portal_session_complete_close (skeleton, invocation);
  session_close_internal (session, FALSE);
  return G_DBUS_METHOD_INVOCATION_HANDLED;
}

static gboolean
check_handle (const char *handle, const char *prefix, const char *what, GError **error)
{
  if (!g_variant_is_object_path (handle) || !g_str_has_prefix (handle, prefix) ||
      handle[strlen (prefix)] == '\0')
    {
      g_set_error (error, LIMEN_ERROR, LIMEN_ERROR_INVALID_ARGUMENT,
                   "Invalid %s handle: must be below %s", what, prefix);
      return FALSE;
    }
  return TRUE;
}

gboolean
limen_kde_request_check_handle (const char *handle, GError **error)
{
  return check_handle (handle, REQUEST_PREFIX, "request", error);
}

LimenKdeRequest *
limen_kde_request_new (GDBusMethodInvocation *invocation,
                       const char            *handle,
                       LimenKdeRequestCloseFunc close_func,
                       gpointer               user_data,
                       GError               **error)
{
  const char *sender = g_dbus_method_invocation_get_sender (invocation);
  g_autofree char *key = NULL;
  LimenKdeRequest *request;

  ensure_tables ();
  if (!check_handle (handle, REQUEST_PREFIX, "request", error))
    return NULL;
  key = make_key (sender, handle);
  if (g_hash_table_contains (requests, key))
    {
      g_set_error_literal (error, LIMEN_ERROR, LIMEN_ERROR_EXISTS, "A request with this handle is in progress");
      return NULL;
    }

  request = g_new0 (LimenKdeRequest, 1);
  request->skeleton = limen_dbus_impl_portal_request_skeleton_new ();
  request->sender = g_strdup (sender);
  request->handle = g_strdup (handle);
  request->close_func = close_func;
  request->user_data = user_data;
  g_signal_connect (request->skeleton, "handle-close", G_CALLBACK (on_handle_close), request);
  if (!g_dbus_interface_skeleton_export (G_DBUS_INTERFACE_SKELETON (request->skeleton),
                                         g_dbus_method_invocation_get_connection (invocation),
                                         handle, error))
    {
      g_object_unref (request->skeleton);
      g_free (request->sender);
      g_free (request->handle);
      g_free (request);
      return NULL;
    }
  g_hash_table_insert (requests, g_steal_pointer (&key), request);
  return request;
}

void
limen_kde_request_finish (LimenKdeRequest *request)
{
  g_autofree char *key = make_key (request->sender, request->handle);

  g_hash_table_steal (requests, key);
  request_free (request);
}

LimenKdeRequest *
limen_kde_request_lookup (const char *sender, const char *handle)
{
  g_autofree char *key = NULL;

  ensure_tables ();
  key = make_key (sender, handle);
  return g_hash_table_lookup (requests, key);
}

gpointer
limen_kde_request_get_data (LimenKdeRequest *request)
{
  return request->user_data;
}

LimenKdeRequestCloseFunc
limen_kde_request_get_close_func (LimenKdeRequest *request)
{
  return request->close_func;
}

void
limen_kde_request_close_all (void)
{
  if (!requests)
    return;
  while (g_hash_table_size (requests) > 0)
    {
      GHashTableIter iter;
      gpointer value;

      g_hash_table_iter_init (&iter, requests);
      g_hash_table_iter_next (&iter, NULL, &value);
      request_close (value);
    }
  while (g_hash_table_size (sessions) > 0)
    {
      GHashTableIter iter;
      gpointer value;

      g_hash_table_iter_init (&iter, sessions);
      g_hash_table_iter_next (&iter, NULL, &value);
      session_close_internal (value, TRUE);
    }
}

LimenKdeSession *
limen_kde_session_new (GDBusMethodInvocation *invocation,
                       const char            *handle,
                       LimenKdeSessionCloseFunc close_func,
                       gpointer               user_data,
                       GError               **error)
{
  const char *sender = g_dbus_method_invocation_get_sender (invocation);
  g_autofree char *key = NULL;
  LimenKdeSession *session;

  ensure_tables ();
  if (!check_handle (handle, SESSION_PREFIX, "session", error))
    return NULL;
  key = make_key (sender, handle);
  if (g_hash_table_contains (sessions, key))
    {
      g_set_error_literal (error, LIMEN_ERROR, LIMEN_ERROR_EXISTS, "A session with this handle exists");
      return NULL;
    }
  session = g_new0 (LimenKdeSession, 1);
  session->skeleton = limen_dbus_impl_portal_session_skeleton_new ();
  limen_dbus_impl_portal_session_set_version (session->skeleton, 1);
  session->sender = g_strdup (sender);
  session->handle = g_strdup (handle);
  session->close_func = close_func;
  session->user_data = user_data;
  g_signal_connect (session->skeleton, "handle-close", G_CALLBACK (on_handle_session_close), session);
  if (!g_dbus_interface_skeleton_export (G_DBUS_INTERFACE_SKELETON (session->skeleton),
                                         g_dbus_method_invocation_get_connection (invocation),
                                         handle, error))
    {
      g_object_unref (session->skeleton);
      g_free (session->sender);
      g_free (session->handle);
      g_free (session);
      return NULL;
    }
  g_hash_table_insert (sessions, g_steal_pointer (&key), session);
  return session;
}

LimenKdeSession *
limen_kde_session_lookup (const char *sender, const char *handle)
{
  g_autofree char *key = NULL;

  ensure_tables ();
  key = make_key (sender, handle);
  return g_hash_table_lookup (sessions, key);
}

void
limen_kde_session_close (LimenKdeSession *session)
{
  session_close_internal (session, TRUE);
}

gpointer
limen_kde_session_get_data (LimenKdeSession *session)
{
  return session->user_data;
}

const char *
limen_kde_session_get_sender (LimenKdeSession *session)
{
  return session->sender;
}
