/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "session.h"

#include "errors.h"
#include "request.h"
#include "limen-dbus.h"

struct _LimenSession {
  gint                    ref_count;
  char                   *path;
  char                   *sender;
  LimenAppInfo           *app_info;
  GDBusConnection        *connection;
  LimenDbusPortalSession *skeleton;
  char                   *backend;
  gpointer                data;
  GDestroyNotify          data_destroy;
  LimenSessionClosedFunc  closed_func;
  gpointer                closed_data;
  gboolean                open;
};

static GHashTable *sessions;   /* path → LimenSession (ref) */

LimenSession *
limen_session_ref (LimenSession *session)
{
  g_atomic_int_inc (&session->ref_count);
  return session;
}

void
limen_session_unref (LimenSession *session)
{
  if (!g_atomic_int_dec_and_test (&session->ref_count))
    return;
  if (session->data_destroy)
    session->data_destroy (session->data);
  g_free (session->path);
  g_free (session->sender);
  g_clear_pointer (&session->app_info, limen_app_info_unref);
  g_clear_object (&session->skeleton);
  g_clear_object (&session->connection);
  g_free (session->backend);
  g_free (session);
}

/* @notify: tell the caller with Closed. Not when it closed the session itself, when it has
 * left the bus, or when the call that made the session failed: the reference does not
 * either, and a client tearing a session down can take a Closed it did not wait for as
 * the portal ending one it still uses. */
static void
session_close (LimenSession *session, gboolean notify)
{
  g_autoptr(LimenSession) hold = NULL;

  if (!session->open)
    return;
  hold = limen_session_ref (session);
  session->open = FALSE;
  g_debug ("Closing session %s", session->path);
  if (session->backend)
    g_dbus_connection_call (session->connection, session->backend, session->path,
                            "org.freedesktop.impl.portal.Session", "Close", NULL, NULL,
                            G_DBUS_CALL_FLAGS_NO_AUTO_START, 5000, NULL, NULL, NULL);
  if (notify)
    g_dbus_connection_emit_signal (session->connection, session->sender, session->path,
                                   "org.freedesktop.portal.Session", "Closed",
                                   g_variant_new ("(@a{sv})", g_variant_new_array (G_VARIANT_TYPE ("{sv}"), NULL, 0)),
                                   NULL);
  g_dbus_interface_skeleton_unexport (G_DBUS_INTERFACE_SKELETON (session->skeleton));
  g_hash_table_remove (sessions, session->path);
  if (session->closed_func)
    session->closed_func (session, session->closed_data);
}

void
limen_session_close (LimenSession *session)
{
  session_close (session, TRUE);
}

void
limen_session_discard (LimenSession *session)
{
  session_close (session, FALSE);
}

static gboolean
handle_close (LimenDbusPortalSession *skeleton, GDBusMethodInvocation *invocation, LimenSession *session)
{
  if (g_strcmp0 (g_dbus_method_invocation_get_sender (invocation), session->sender) != 0)
    {
      g_dbus_method_invocation_return_error_literal (invocation, LIMEN_ERROR, LIMEN_ERROR_NOT_ALLOWED,
                                                     "Only the caller can close its session");
      return G_DBUS_METHOD_INVOCATION_HANDLED;
    }
  session_close (session, FALSE);
  limen_dbus_portal_session_complete_close (skeleton, invocation);
  return G_DBUS_METHOD_INVOCATION_HANDLED;
}

/* Every session of @sender (NULL: of everyone, at shutdown, with Closed). */
static void
close_matching (const char *sender)
{
  g_autoptr(GPtrArray) gone = g_ptr_array_new_with_free_func ((GDestroyNotify) limen_session_unref);
  GHashTableIter iter;
  LimenSession *session;

  if (sessions == NULL)
    return;
  g_hash_table_iter_init (&iter, sessions);
  while (g_hash_table_iter_next (&iter, NULL, (gpointer *) &session))
    if (sender == NULL || g_str_equal (session->sender, sender))
      g_ptr_array_add (gone, limen_session_ref (session));
  for (guint i = 0; i < gone->len; i++)
    session_close (g_ptr_array_index (gone, i), sender == NULL);
}

static void
on_peer_vanished (const char *name, gpointer user_data)
{
  close_matching (name);
}

LimenSession *
limen_session_new (GDBusMethodInvocation *invocation, LimenAppInfo *app_info,
                   GVariant *options, GError **error)
{
  g_autoptr(LimenSession) session = NULL;
  const char *sender = g_dbus_method_invocation_get_sender (invocation);

  if (sessions == NULL)
    sessions = g_hash_table_new_full (g_str_hash, g_str_equal, NULL, (GDestroyNotify) limen_session_unref);
  limen_app_info_add_vanished_watch (on_peer_vanished, NULL);

  session = g_new0 (LimenSession, 1);
  session->ref_count = 1;
  session->path = limen_handle_path_from_options (options, "session_handle_token", "session", sender, error);
  if (session->path == NULL)
    return NULL;
  if (g_hash_table_contains (sessions, session->path))
    {
      g_set_error_literal (error, LIMEN_ERROR, LIMEN_ERROR_INVALID_ARGUMENT,
                           "Invalid value for option session_handle_token: a session with this token is still open");
      return NULL;
    }
  session->sender = g_strdup (sender);
  session->app_info = limen_app_info_ref (app_info);
  session->connection = g_object_ref (g_dbus_method_invocation_get_connection (invocation));
  session->skeleton = limen_dbus_portal_session_skeleton_new ();
  limen_dbus_portal_session_set_version (session->skeleton, 1);
  g_signal_connect (session->skeleton, "handle-close", G_CALLBACK (handle_close), session);
  if (!g_dbus_interface_skeleton_export (G_DBUS_INTERFACE_SKELETON (session->skeleton),
                                         session->connection, session->path, error))
    return NULL;
  session->open = TRUE;
  g_hash_table_insert (sessions, session->path, limen_session_ref (session));
  return g_steal_pointer (&session);
}

LimenSession *
limen_session_lookup (const char *path, const char *sender)
{
  LimenSession *session = sessions ? g_hash_table_lookup (sessions, path) : NULL;

  if (session == NULL || g_strcmp0 (session->sender, sender) != 0)
    return NULL;
  return limen_session_ref (session);
}

const char *limen_session_get_path (LimenSession *session) { return session->path; }
const char *limen_session_get_sender (LimenSession *session) { return session->sender; }
LimenAppInfo *limen_session_get_app_info (LimenSession *session) { return session->app_info; }
gboolean limen_session_is_open (LimenSession *session) { return session->open; }
gpointer limen_session_get_data (LimenSession *session) { return session->data; }

/* The backend ended a session on its own (org.freedesktop.impl.portal.Session.Closed at the
 * session's path): the app's Session ends too, with Closed. Only the session's backend may
 * end it; the signal's sender is checked against the backend name's owner. */
typedef struct {
  char *path;
  char *sender;
} BackendClosed;

static void
backend_closed_free (BackendClosed *bc)
{
  g_free (bc->path);
  g_free (bc->sender);
  g_free (bc);
}

static void
close_for_backend (const char *path, const char *sender)
{
  LimenSession *session = sessions ? g_hash_table_lookup (sessions, path) : NULL;

  if (session == NULL || !session->open)
    return;
  g_debug ("Backend %s closed session %s", sender, path);
  g_clear_pointer (&session->backend, g_free);   /* nothing to tell it: it ended the session */
  limen_session_close (session);
}

static void
on_backend_owner (GObject *source, GAsyncResult *result, gpointer user_data)
{
  BackendClosed *bc = user_data;
  g_autoptr(GVariant) reply = g_dbus_connection_call_finish (G_DBUS_CONNECTION (source), result, NULL);
  const char *owner = NULL;

  if (reply)
    g_variant_get (reply, "(&s)", &owner);
  if (owner && g_str_equal (owner, bc->sender))
    close_for_backend (bc->path, bc->sender);
  backend_closed_free (bc);
}

static void
on_impl_session_closed (GDBusConnection *connection, const char *sender, const char *path, const char *iface,
                        const char *signal, GVariant *parameters, gpointer user_data)
{
  LimenSession *session = sessions ? g_hash_table_lookup (sessions, path) : NULL;
  BackendClosed *bc;

  if (session == NULL || session->backend == NULL || sender == NULL)
    return;
  if (g_str_equal (sender, session->backend))
    {
      close_for_backend (path, sender);
      return;
    }
  bc = g_new0 (BackendClosed, 1);
  bc->path = g_strdup (path);
  bc->sender = g_strdup (sender);
  g_dbus_connection_call (connection, "org.freedesktop.DBus", "/org/freedesktop/DBus", "org.freedesktop.DBus",
                          "GetNameOwner", g_variant_new ("(s)", session->backend), G_VARIANT_TYPE ("(s)"),
                          G_DBUS_CALL_FLAGS_NONE, 5000, NULL, on_backend_owner, bc);
}

void
limen_session_set_backend (LimenSession *session, const char *backend_name)
{
  static GDBusConnection *subscribed;

  g_free (session->backend);
  session->backend = g_strdup (backend_name);
  if (subscribed == NULL)
    {
      subscribed = session->connection;
      g_dbus_connection_signal_subscribe (session->connection, NULL, "org.freedesktop.impl.portal.Session",
                                          "Closed", NULL, NULL, G_DBUS_SIGNAL_FLAGS_NONE,
                                          on_impl_session_closed, NULL, NULL);
    }
}

void
limen_session_set_data (LimenSession *session, gpointer data, GDestroyNotify destroy)
{
  if (session->data_destroy)
    session->data_destroy (session->data);
  session->data = data;
  session->data_destroy = destroy;
}

void
limen_session_set_closed_func (LimenSession *session, LimenSessionClosedFunc func, gpointer user_data)
{
  session->closed_func = func;
  session->closed_data = user_data;
}

guint
limen_session_count_open (void)
{
  return sessions ? g_hash_table_size (sessions) : 0;
}

void
limen_session_close_all (void)
{
  close_matching (NULL);
}
