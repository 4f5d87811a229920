/* SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * Clipboard: no session of its own; it rides on a RemoteDesktop session whose Start the
 * person allowed with the clipboard. Everything an app sends is bounded here (number and
 * length of MIME types, serials it may answer) and the backend's signals reach only the
 * session's owner, and only when they come from the backend itself. */
#include "clipboard.h"

#include <string.h>
#include <gio/gunixfdlist.h>

#include "backend.h"
#include "cast-session.h"
#include "option-tables.h"

#define CLIPBOARD_VERSION 1
/* Transfers a session may have announced and not yet answered. */
#define MAX_PENDING_TRANSFERS 64

static LimenDbusPortalClipboard *skeleton;
static GDBusConnection *bus;

/* The caller's remote desktop session, if it may use the clipboard now. */
static LimenCast *
clipboard_session (GDBusMethodInvocation *invocation, const char *path, LimenSession **session, GError **error)
{
  LimenCast *cast = limen_cast_lookup (invocation, path, session, error);

  if (cast == NULL)
    return NULL;
  if (cast->kind != LIMEN_CAST_REMOTE_DESKTOP || cast->state != LIMEN_CAST_STARTED || !cast->clipboard_enabled)
    {
      g_set_error_literal (error, LIMEN_ERROR, LIMEN_ERROR_NOT_ALLOWED,
                           "The clipboard was not granted to this session");
      return NULL;
    }
  return cast;
}

static void
on_owner (GObject *source, GAsyncResult *result, gpointer user_data)
{
  LimenSession *session = user_data;
  g_autoptr(GVariant) reply = g_dbus_connection_call_finish (G_DBUS_CONNECTION (source), result, NULL);
  LimenCast *cast = limen_session_get_data (session);

  if (reply && cast)
    {
      g_free (cast->backend_owner);
      g_variant_get (reply, "(s)", &cast->backend_owner);
    }
  limen_session_unref (session);
}

static gboolean
handle_request_clipboard (LimenDbusPortalClipboard *object, GDBusMethodInvocation *invocation,
                          const char *session_handle, GVariant *options, LimenPortalContext *context)
{
  g_autoptr(GError) error = NULL;
  g_auto(GVariantBuilder) b = G_VARIANT_BUILDER_INIT (G_VARIANT_TYPE_VARDICT);
  g_autoptr(LimenSession) session = NULL;
  LimenCast *cast;

  if (!limen_options_filter (options, &b, &error, limen_options_clipboard_request_clipboard, NULL) ||
      (cast = limen_cast_lookup (invocation, session_handle, &session, &error)) == NULL)
    return limen_cast_return_error (invocation, g_steal_pointer (&error));
  if (cast->kind != LIMEN_CAST_REMOTE_DESKTOP || cast->state != LIMEN_CAST_READY || cast->clipboard_requested)
    return limen_cast_return_error (invocation, g_error_new_literal (LIMEN_ERROR, LIMEN_ERROR_NOT_ALLOWED,
                                                                     "The clipboard can be requested once, on a remote desktop session before it starts"));
  cast->clipboard_requested = TRUE;
  /* Who the backend is, so that only its signals are passed on to the app. */
  g_dbus_connection_call (bus, "org.freedesktop.DBus", "/org/freedesktop/DBus", "org.freedesktop.DBus",
                          "GetNameOwner", g_variant_new ("(s)", cast->backend), G_VARIANT_TYPE ("(s)"),
                          G_DBUS_CALL_FLAGS_NONE, LIMEN_BACKEND_TIMEOUT_QUICK, NULL, on_owner,
                          limen_session_ref (session));
  g_dbus_connection_call (bus, cast->backend, LIMEN_PORTAL_PATH, LIMEN_CLIPBOARD_IMPL, "RequestClipboard",
                          g_variant_new ("(o@a{sv})", session_handle, g_variant_builder_end (&b)), NULL,
                          G_DBUS_CALL_FLAGS_NO_AUTO_START, LIMEN_BACKEND_TIMEOUT_QUICK, NULL, NULL, NULL);
  limen_dbus_portal_clipboard_complete_request_clipboard (object, invocation);
  return G_DBUS_METHOD_INVOCATION_HANDLED;
}

static gboolean
handle_set_selection (LimenDbusPortalClipboard *object, GDBusMethodInvocation *invocation,
                      const char *session_handle, GVariant *options, LimenPortalContext *context)
{
  g_autoptr(GError) error = NULL;
  g_auto(GVariantBuilder) b = G_VARIANT_BUILDER_INIT (G_VARIANT_TYPE_VARDICT);
  g_autoptr(LimenSession) session = NULL;
  LimenCast *cast;

  if (!limen_options_filter (options, &b, &error, limen_options_clipboard_set_selection, NULL) ||
      (cast = clipboard_session (invocation, session_handle, &session, &error)) == NULL)
    return limen_cast_return_error (invocation, g_steal_pointer (&error));
  g_dbus_connection_call (bus, cast->backend, LIMEN_PORTAL_PATH, LIMEN_CLIPBOARD_IMPL, "SetSelection",
                          g_variant_new ("(o@a{sv})", session_handle, g_variant_builder_end (&b)), NULL,
                          G_DBUS_CALL_FLAGS_NO_AUTO_START, LIMEN_BACKEND_TIMEOUT_QUICK, NULL, NULL, NULL);
  limen_dbus_portal_clipboard_complete_set_selection (object, invocation);
  return G_DBUS_METHOD_INVOCATION_HANDLED;
}

typedef struct {
  GDBusMethodInvocation *invocation;
  gboolean               write;   /* SelectionWrite, else SelectionRead */
} FdCall;

static void
on_fd_reply (GObject *source, GAsyncResult *result, gpointer user_data)
{
  FdCall *f = user_data;
  g_autoptr(GError) error = NULL;
  g_autoptr(GUnixFDList) fds = NULL;
  g_autoptr(GVariant) reply = g_dbus_connection_call_with_unix_fd_list_finish (G_DBUS_CONNECTION (source), &fds,
                                                                               result, &error);
  gint32 index = -1;

  if (reply)
    g_variant_get (reply, "(h)", &index);
  if (reply == NULL || fds == NULL || index != 0 || g_unix_fd_list_get_length (fds) != 1)
    g_dbus_method_invocation_return_error_literal (f->invocation, LIMEN_ERROR, LIMEN_ERROR_FAILED,
                                                   "The desktop did not open a clipboard transfer");
  else if (f->write)
    limen_dbus_portal_clipboard_complete_selection_write (skeleton, f->invocation, fds, g_variant_new_handle (0));
  else
    limen_dbus_portal_clipboard_complete_selection_read (skeleton, f->invocation, fds, g_variant_new_handle (0));
  g_free (f);
}

static void
call_for_fd (GDBusMethodInvocation *invocation, LimenCast *cast, const char *method, GVariant *params, gboolean write)
{
  FdCall *f = g_new0 (FdCall, 1);

  f->invocation = invocation;
  f->write = write;
  g_dbus_connection_call_with_unix_fd_list (bus, cast->backend, LIMEN_PORTAL_PATH, LIMEN_CLIPBOARD_IMPL, method,
                                            params, G_VARIANT_TYPE ("(h)"), G_DBUS_CALL_FLAGS_NO_AUTO_START,
                                            LIMEN_BACKEND_TIMEOUT_QUICK, NULL, NULL, on_fd_reply, f);
}

static gboolean
check_serial (GDBusMethodInvocation *invocation, LimenCast *cast, guint serial)
{
  if (cast->transfers && g_hash_table_contains (cast->transfers, GUINT_TO_POINTER (serial)))
    return TRUE;
  g_dbus_method_invocation_return_error_literal (invocation, LIMEN_ERROR, LIMEN_ERROR_INVALID_ARGUMENT,
                                                 "Invalid value for serial: no such transfer of this session");
  return FALSE;
}

static gboolean
handle_selection_write (LimenDbusPortalClipboard *object, GDBusMethodInvocation *invocation, GUnixFDList *in_fds,
                        const char *session_handle, guint serial, LimenPortalContext *context)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(LimenSession) session = NULL;
  LimenCast *cast = clipboard_session (invocation, session_handle, &session, &error);

  if (cast == NULL)
    return limen_cast_return_error (invocation, g_steal_pointer (&error));
  if (check_serial (invocation, cast, serial))
    call_for_fd (invocation, cast, "SelectionWrite", g_variant_new ("(ou)", session_handle, serial), TRUE);
  return G_DBUS_METHOD_INVOCATION_HANDLED;
}

static gboolean
handle_selection_write_done (LimenDbusPortalClipboard *object, GDBusMethodInvocation *invocation,
                             const char *session_handle, guint serial, gboolean success,
                             LimenPortalContext *context)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(LimenSession) session = NULL;
  LimenCast *cast = clipboard_session (invocation, session_handle, &session, &error);

  if (cast == NULL)
    return limen_cast_return_error (invocation, g_steal_pointer (&error));
  if (!check_serial (invocation, cast, serial))
    return G_DBUS_METHOD_INVOCATION_HANDLED;
  g_hash_table_remove (cast->transfers, GUINT_TO_POINTER (serial));
  g_dbus_connection_call (bus, cast->backend, LIMEN_PORTAL_PATH, LIMEN_CLIPBOARD_IMPL, "SelectionWriteDone",
                          g_variant_new ("(oub)", session_handle, serial, success), NULL,
                          G_DBUS_CALL_FLAGS_NO_AUTO_START, LIMEN_BACKEND_TIMEOUT_QUICK, NULL, NULL, NULL);
  limen_dbus_portal_clipboard_complete_selection_write_done (object, invocation);
  return G_DBUS_METHOD_INVOCATION_HANDLED;
}

static gboolean
handle_selection_read (LimenDbusPortalClipboard *object, GDBusMethodInvocation *invocation, GUnixFDList *in_fds,
                       const char *session_handle, const char *mime_type, LimenPortalContext *context)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(LimenSession) session = NULL;
  LimenCast *cast = clipboard_session (invocation, session_handle, &session, &error);

  if (cast == NULL)
    return limen_cast_return_error (invocation, g_steal_pointer (&error));
  if (!limen_mime_type_is_valid (mime_type))
    return limen_cast_return_error (invocation, g_error_new_literal (LIMEN_ERROR, LIMEN_ERROR_INVALID_ARGUMENT,
                                                                     "Invalid value for mime_type: not a MIME type"));
  call_for_fd (invocation, cast, "SelectionRead", g_variant_new ("(os)", session_handle, mime_type), FALSE);
  return G_DBUS_METHOD_INVOCATION_HANDLED;
}

/* The session a backend signal names, if it came from that session's backend and the
 * clipboard was granted. */
static LimenCast *
signal_session (const char *sender, const char *path, LimenSession **session)
{
  LimenCast *cast = limen_cast_lookup_path (path);

  if (cast == NULL)
    return NULL;
  *session = limen_session_ref (cast->session);
  if (cast->backend_owner == NULL || g_strcmp0 (sender, cast->backend_owner) != 0 ||
      cast->state != LIMEN_CAST_STARTED || !cast->clipboard_enabled)
    return NULL;
  return cast;
}

static void
on_backend_signal (GDBusConnection *connection, const char *sender, const char *object_path,
                   const char *interface, const char *signal, GVariant *parameters, gpointer user_data)
{
  g_autoptr(LimenSession) session = NULL;
  const char *path;
  LimenCast *cast;

  if (g_str_equal (signal, "SelectionOwnerChanged") && g_variant_is_of_type (parameters, G_VARIANT_TYPE ("(oa{sv})")))
    {
      g_autoptr(GVariant) options = NULL;
      g_auto(GVariantBuilder) b = G_VARIANT_BUILDER_INIT (G_VARIANT_TYPE_VARDICT);

      g_variant_get (parameters, "(&o@a{sv})", &path, &options);
      if ((cast = signal_session (sender, path, &session)) == NULL ||
          !limen_options_filter (options, &b, NULL, limen_options_clipboard_selection_owner_changed, NULL))
        return;
      g_dbus_connection_emit_signal (connection, limen_session_get_sender (session), LIMEN_PORTAL_PATH,
                                     "org.freedesktop.portal.Clipboard", signal,
                                     g_variant_new ("(o@a{sv})", path, g_variant_builder_end (&b)), NULL);
    }
  else if (g_str_equal (signal, "SelectionTransfer") && g_variant_is_of_type (parameters, G_VARIANT_TYPE ("(osu)")))
    {
      const char *mime;
      guint32 serial;

      g_variant_get (parameters, "(&o&su)", &path, &mime, &serial);
      if ((cast = signal_session (sender, path, &session)) == NULL || !limen_mime_type_is_valid (mime))
        return;
      if (cast->transfers == NULL)
        cast->transfers = g_hash_table_new (NULL, NULL);
      if (g_hash_table_size (cast->transfers) >= MAX_PENDING_TRANSFERS)
        g_hash_table_remove_all (cast->transfers);   /* the app stopped answering: old ones lapse */
      g_hash_table_add (cast->transfers, GUINT_TO_POINTER (serial));
      g_dbus_connection_emit_signal (connection, limen_session_get_sender (session), LIMEN_PORTAL_PATH,
                                     "org.freedesktop.portal.Clipboard", signal,
                                     g_variant_new ("(osu)", path, mime, serial), NULL);
    }
}

GDBusInterfaceSkeleton *
limen_clipboard_new (LimenPortalContext *context)
{
  if (!limen_backend_is_configured (context, LIMEN_CLIPBOARD_IMPL))
    return NULL;
  bus = context->connection;
  skeleton = limen_dbus_portal_clipboard_skeleton_new ();
  limen_app_info_gate_skeleton (G_DBUS_INTERFACE_SKELETON (skeleton));
  limen_dbus_portal_clipboard_set_version (skeleton, CLIPBOARD_VERSION);
  g_signal_connect (skeleton, "handle-request-clipboard", G_CALLBACK (handle_request_clipboard), context);
  g_signal_connect (skeleton, "handle-set-selection", G_CALLBACK (handle_set_selection), context);
  g_signal_connect (skeleton, "handle-selection-write", G_CALLBACK (handle_selection_write), context);
  g_signal_connect (skeleton, "handle-selection-write-done", G_CALLBACK (handle_selection_write_done), context);
  g_signal_connect (skeleton, "handle-selection-read", G_CALLBACK (handle_selection_read), context);
  /* The sender is checked per signal against the session's backend. */
  g_dbus_connection_signal_subscribe (context->connection, NULL, LIMEN_CLIPBOARD_IMPL, NULL, LIMEN_PORTAL_PATH,
                                      NULL, G_DBUS_SIGNAL_FLAGS_NONE, on_backend_signal, NULL, NULL);
  return G_DBUS_INTERFACE_SKELETON (g_object_ref (skeleton));
}
