/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "request.h"

#include <string.h>

#include "errors.h"
#include "options.h"
#include "limen-dbus.h"

struct _LimenRequest {
  gint                    ref_count;
  char                   *path;
  char                   *sender;
  LimenAppInfo           *app_info;
  GDBusConnection        *connection;
  LimenDbusPortalRequest *skeleton;
  char                   *backend;
  GCancellable           *cancellable;
  LimenRequestClosedFunc  closed_func;
  gpointer                closed_data;
  gboolean                open;
  gboolean                unattended;   /* finishes without its caller (see below) */
  gboolean                caller_gone;  /* its caller left while it was unattended */
};

static GHashTable *requests;   /* path → LimenRequest (ref) */
static guint token_counter;

char *
limen_request_path_for (const char *kind, const char *sender, const char *token)
{
  g_autofree char *escaped = NULL;

  if (!limen_token_is_valid (token) || sender == NULL || sender[0] != ':')
    return NULL;
  escaped = g_strdup (sender + 1);
  g_strdelimit (escaped, ".", '_');
  return g_strdup_printf ("/org/freedesktop/portal/desktop/%s/%s/%s", kind, escaped, token);
}

/* The token @key of @options: NULL without error when it is absent; NULL with
 * InvalidArgument when it is not a valid token (checked as any option table checks it). */
static char *
handle_token (GVariant *options, const char *key, GError **error)
{
  const LimenOption table[] = { { key, "s", limen_validate_token, 0 }, { NULL } };
  const char *token = NULL;

  if (options == NULL || !limen_options_filter (options, NULL, error, table, NULL))
    return NULL;
  g_variant_lookup (options, key, "&s", &token);
  return g_strdup (token);
}

gboolean
limen_handle_token_check (GVariant *options, const char *key, GError **error)
{
  g_autoptr(GError) local_error = NULL;
  g_autofree char *token = handle_token (options, key, &local_error);

  if (local_error)
    {
      g_propagate_error (error, g_steal_pointer (&local_error));
      return FALSE;
    }
  return TRUE;
}

char *
limen_handle_path_from_options (GVariant *options, const char *key, const char *kind,
                                const char *sender, GError **error)
{
  g_autoptr(GError) local_error = NULL;
  g_autofree char *token = handle_token (options, key, &local_error);
  char *path;

  if (local_error)
    {
      g_propagate_error (error, g_steal_pointer (&local_error));
      return NULL;
    }
  if (token == NULL)
    token = g_strdup_printf ("limen%u", ++token_counter);
  path = limen_request_path_for (kind, sender, token);
  if (path == NULL)
    g_set_error (error, LIMEN_ERROR, LIMEN_ERROR_INVALID_ARGUMENT, "Invalid sender %s", sender ? sender : "(none)");
  return path;
}

LimenRequest *
limen_request_ref (LimenRequest *request)
{
  g_atomic_int_inc (&request->ref_count);
  return request;
}

void
limen_request_unref (LimenRequest *request)
{
  if (!g_atomic_int_dec_and_test (&request->ref_count))
    return;
  g_free (request->path);
  g_free (request->sender);
  g_clear_pointer (&request->app_info, limen_app_info_unref);
  g_clear_object (&request->skeleton);
  g_clear_object (&request->connection);
  g_clear_object (&request->cancellable);
  g_free (request->backend);
  g_free (request);
}

/* Unexport and forget; the caller holds its own reference. */
static void
request_finish (LimenRequest *request)
{
  request->open = FALSE;
  g_cancellable_cancel (request->cancellable);
  g_dbus_interface_skeleton_unexport (G_DBUS_INTERFACE_SKELETON (request->skeleton));
  g_hash_table_remove (requests, request->path);
}

static void
tell_backend_close (LimenRequest *request)
{
  if (request->backend == NULL)
    return;
  /* Fire and forget: a backend that is gone or hung must not hold us up. */
  g_dbus_connection_call (request->connection, request->backend, request->path,
                          "org.freedesktop.impl.portal.Request", "Close", NULL, NULL,
                          G_DBUS_CALL_FLAGS_NO_AUTO_START, 5000, NULL, NULL, NULL);
}

void
limen_request_close (LimenRequest *request)
{
  g_autoptr(LimenRequest) hold = NULL;

  if (!request->open)
    return;
  hold = limen_request_ref (request);
  g_debug ("Closing request %s", request->path);
  tell_backend_close (request);
  request_finish (request);
  if (request->closed_func)
    request->closed_func (request, request->closed_data);
}

static gboolean
handle_close (LimenDbusPortalRequest *skeleton, GDBusMethodInvocation *invocation, LimenRequest *request)
{
  if (g_strcmp0 (g_dbus_method_invocation_get_sender (invocation), request->sender) != 0)
    {
      g_dbus_method_invocation_return_error_literal (invocation, LIMEN_ERROR, LIMEN_ERROR_NOT_ALLOWED,
                                                     "Only the caller can close its request");
      return G_DBUS_METHOD_INVOCATION_HANDLED;
    }
  limen_request_close (request);
  limen_dbus_portal_request_complete_close (skeleton, invocation);
  return G_DBUS_METHOD_INVOCATION_HANDLED;
}

/* Close the requests of @sender, or all of them for NULL. */
static void
close_matching (const char *sender)
{
  g_autoptr(GPtrArray) gone = g_ptr_array_new_with_free_func ((GDestroyNotify) limen_request_unref);
  GHashTableIter iter;
  LimenRequest *request;

  if (requests == NULL)
    return;
  g_hash_table_iter_init (&iter, requests);
  while (g_hash_table_iter_next (&iter, NULL, (gpointer *) &request))
    if (sender != NULL && request->unattended && g_str_equal (request->sender, sender))
      request->caller_gone = TRUE;
    else if (sender == NULL || g_str_equal (request->sender, sender))
      g_ptr_array_add (gone, limen_request_ref (request));
  for (guint i = 0; i < gone->len; i++)
    limen_request_close (g_ptr_array_index (gone, i));
}

static void
on_peer_vanished (const char *name, gpointer user_data)
{
  close_matching (name);
}

gboolean
limen_request_set_unattended (LimenRequest *request, gboolean unattended)
{
  request->unattended = unattended;
  if (!unattended && request->caller_gone)
    {
      g_debug ("Request %s: its caller left before anyone had to be asked", request->path);
      limen_request_close (request);
    }
  return request->open;
}

LimenRequest *
limen_request_new (GDBusMethodInvocation *invocation, LimenAppInfo *app_info,
                   GVariant *options, GError **error)
{
  g_autoptr(LimenRequest) request = NULL;
  const char *sender = g_dbus_method_invocation_get_sender (invocation);

  if (requests == NULL)
    requests = g_hash_table_new_full (g_str_hash, g_str_equal, NULL, (GDestroyNotify) limen_request_unref);
  limen_app_info_add_vanished_watch (on_peer_vanished, NULL);

  request = g_new0 (LimenRequest, 1);
  request->ref_count = 1;
  request->path = limen_handle_path_from_options (options, "handle_token", "request", sender, error);
  if (request->path == NULL)
    return NULL;
  if (g_hash_table_contains (requests, request->path))
    {
      g_set_error_literal (error, LIMEN_ERROR, LIMEN_ERROR_INVALID_ARGUMENT,
                           "Invalid value for option handle_token: a request with this token is still open");
      return NULL;
    }
  request->sender = g_strdup (sender);
  request->app_info = limen_app_info_ref (app_info);
  request->connection = g_object_ref (g_dbus_method_invocation_get_connection (invocation));
  request->cancellable = g_cancellable_new ();
  request->skeleton = limen_dbus_portal_request_skeleton_new ();
  g_signal_connect (request->skeleton, "handle-close", G_CALLBACK (handle_close), request);
  if (!g_dbus_interface_skeleton_export (G_DBUS_INTERFACE_SKELETON (request->skeleton),
                                         request->connection, request->path, error))
    return NULL;
  request->open = TRUE;
  g_hash_table_insert (requests, request->path, limen_request_ref (request));
  return g_steal_pointer (&request);
}

const char *limen_request_get_path (LimenRequest *request) { return request->path; }
const char *limen_request_get_sender (LimenRequest *request) { return request->sender; }
LimenAppInfo *limen_request_get_app_info (LimenRequest *request) { return request->app_info; }
GCancellable *limen_request_get_cancellable (LimenRequest *request) { return request->cancellable; }
gboolean limen_request_is_open (LimenRequest *request) { return request->open; }

void
limen_request_set_backend (LimenRequest *request, const char *backend_name)
{
  g_free (request->backend);
  request->backend = g_strdup (backend_name);
}

void
limen_request_set_closed_func (LimenRequest *request, LimenRequestClosedFunc func, gpointer user_data)
{
  request->closed_func = func;
  request->closed_data = user_data;
}

void
limen_request_respond (LimenRequest *request, guint response, GVariant *results)
{
  g_autoptr(LimenRequest) hold = NULL;
  g_autoptr(GError) error = NULL;

  if (results == NULL)
    results = g_variant_new_array (G_VARIANT_TYPE ("{sv}"), NULL, 0);
  g_variant_ref_sink (results);
  if (!request->open)
    {
      g_variant_unref (results);
      return;
    }
  hold = limen_request_ref (request);
  /* Unicast: the answer is the caller's business alone. */
  if (!g_dbus_connection_emit_signal (request->connection, request->sender, request->path,
                                      "org.freedesktop.portal.Request", "Response",
                                      g_variant_new ("(u@a{sv})", response, results), &error))
    g_debug ("Response to %s not sent: %s", request->sender, error->message);
  g_variant_unref (results);
  request_finish (request);
}

void
limen_request_emit_response_keep_open (LimenRequest *request, guint response, GVariant *results)
{
  g_autoptr(GError) error = NULL;

  if (results == NULL)
    results = g_variant_new_array (G_VARIANT_TYPE ("{sv}"), NULL, 0);
  g_variant_ref_sink (results);
  if (request->open &&
      !g_dbus_connection_emit_signal (request->connection, request->sender, request->path,
                                      "org.freedesktop.portal.Request", "Response",
                                      g_variant_new ("(u@a{sv})", response, results), &error))
    g_debug ("Response to %s not sent: %s", request->sender, error->message);
  g_variant_unref (results);
}

guint
limen_request_count_open (void)
{
  return requests ? g_hash_table_size (requests) : 0;
}

void
limen_request_close_all (void)
{
  close_matching (NULL);
}
