/* SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * Clipboard: no session of its own; it rides on a RemoteDesktop session, or on an
 * InputCapture session made by CreateSession2 (version 2 of that portal), whose Start the
 * person allowed with the clipboard. Everything an app sends is bounded here (number and
 * length of MIME types, serials it may answer) and the backend's signals reach only the
 * session's owner, and only when they come from that session's backend itself. */
#include "clipboard.h"

#include <string.h>
#include <gio/gunixfdlist.h>

#include "backend.h"
#include "cast-session.h"
#include "portals/input-capture.h"
#include "option-tables.h"

#define CLIPBOARD_VERSION 1
/* Transfers a session may have announced and not yet answered. */
#define MAX_PENDING_TRANSFERS 64

static LimenDbusPortalClipboard *skeleton;
static GDBusConnection *bus;

/* The clipboard side of a session that can have one, whichever portal made it: pointers
 * into that portal's own state, good while a handler or signal runs. */
typedef struct {
  LimenSession *session;        /* not owned */
  const char   *backend;
  gboolean      can_request;    /* in the state where RequestClipboard belongs (before Start) */
  gboolean      started;
  gboolean     *requested;
  gboolean     *enabled;
  GHashTable  **transfers;
} Host;

/* The clipboard host of the open session at @path (whoever owns it); FALSE for a session
 * of a kind that has no clipboard (ScreenCast, GlobalShortcuts, ...) or no session. */
static gboolean
host_of_path (const char *path, Host *host)
{
  LimenCast *cast = limen_cast_lookup_path (path);
  LimenCapture *capture;

  if (cast && cast->kind == LIMEN_CAST_REMOTE_DESKTOP)
    {
      *host = (Host) { cast->session, cast->backend, cast->state == LIMEN_CAST_READY,
                       cast->state == LIMEN_CAST_STARTED, &cast->clipboard_requested, &cast->clipboard_enabled,
                       &cast->transfers };
      return TRUE;
    }
  /* Only a session of CreateSession2 waits for Start (CreateSession's starts at once). */
  if (cast == NULL && (capture = limen_input_capture_lookup (path)) != NULL)
    {
      *host = (Host) { capture->session, capture->backend, capture->state == LIMEN_CAPTURE_NEW,
                       capture->state == LIMEN_CAPTURE_STARTED, &capture->clipboard_requested,
                       &capture->clipboard_enabled, &capture->transfers };
      return TRUE;
    }
  return FALSE;
}

/* The caller's session @path as a clipboard host (a session reference in @session), or
 * FALSE + InvalidArgument naming session_handle: no session of this caller, or one of a
 * kind without a clipboard. */
static gboolean
host_lookup (GDBusMethodInvocation *invocation, const char *path, Host *host, LimenSession **session,
             GError **error)
{
  g_autoptr(LimenSession) found = limen_driver_lookup_session (invocation, path, error);

  if (found == NULL)
    return FALSE;
  if (!host_of_path (path, host) || host->session != found)
    {
      g_set_error_literal (error, LIMEN_ERROR, LIMEN_ERROR_INVALID_ARGUMENT,
                           "Invalid value for session_handle: not a remote desktop or input capture session");
      return FALSE;
    }
  *session = g_steal_pointer (&found);
  return TRUE;
}

/* The caller's session, if it may use the clipboard now (started, clipboard granted). */
static gboolean
granted_host (GDBusMethodInvocation *invocation, const char *path, Host *host, LimenSession **session,
              GError **error)
{
  if (!host_lookup (invocation, path, host, session, error))
    return FALSE;
  if (!host->started || !*host->enabled)
    {
      g_clear_pointer (session, limen_session_unref);
      g_set_error_literal (error, LIMEN_ERROR, LIMEN_ERROR_NOT_ALLOWED,
                           "The clipboard was not granted to this session");
      return FALSE;
    }
  return TRUE;
}

static const LimenBackendRelay clipboard_relay;   /* below, with the signals it passes on */

static gboolean
handle_request_clipboard (LimenDbusPortalClipboard *object, GDBusMethodInvocation *invocation,
                          const char *session_handle, GVariant *options, LimenPortalContext *context)
{
  g_autoptr(GError) error = NULL;
  g_auto(GVariantBuilder) b = G_VARIANT_BUILDER_INIT (G_VARIANT_TYPE_VARDICT);
  g_autoptr(LimenSession) session = NULL;
  Host host;

  if (!limen_options_filter (options, &b, &error, limen_options_clipboard_request_clipboard, NULL) ||
      !host_lookup (invocation, session_handle, &host, &session, &error))
    return limen_cast_return_error (invocation, g_steal_pointer (&error));
  if (!host.can_request || *host.requested)
    return limen_cast_return_error (invocation,
                                    g_error_new_literal (LIMEN_ERROR, LIMEN_ERROR_NOT_ALLOWED,
                                                         "The clipboard can be requested once per session, before "
                                                         "its Start (on an input capture session: one of "
                                                         "CreateSession2)"));
  *host.requested = TRUE;
  /* Only that backend's signals are passed on to the app. */
  limen_backend_relay (bus, &clipboard_relay, host.backend);
  g_dbus_connection_call (bus, host.backend, LIMEN_PORTAL_PATH, LIMEN_CLIPBOARD_IMPL, "RequestClipboard",
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
  Host host;

  if (!limen_options_filter (options, &b, &error, limen_options_clipboard_set_selection, NULL) ||
      !granted_host (invocation, session_handle, &host, &session, &error))
    return limen_cast_return_error (invocation, g_steal_pointer (&error));
  g_dbus_connection_call (bus, host.backend, LIMEN_PORTAL_PATH, LIMEN_CLIPBOARD_IMPL, "SetSelection",
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
call_for_fd (GDBusMethodInvocation *invocation, const Host *host, const char *method, GVariant *params,
             gboolean write)
{
  FdCall *f = g_new0 (FdCall, 1);

  f->invocation = invocation;
  f->write = write;
  g_dbus_connection_call_with_unix_fd_list (bus, host->backend, LIMEN_PORTAL_PATH, LIMEN_CLIPBOARD_IMPL, method,
                                            params, G_VARIANT_TYPE ("(h)"), G_DBUS_CALL_FLAGS_NO_AUTO_START,
                                            LIMEN_BACKEND_TIMEOUT_QUICK, NULL, NULL, on_fd_reply, f);
}

static gboolean
check_serial (GDBusMethodInvocation *invocation, const Host *host, guint serial)
{
  if (*host->transfers && g_hash_table_contains (*host->transfers, GUINT_TO_POINTER (serial)))
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
  Host host;

  if (!granted_host (invocation, session_handle, &host, &session, &error))
    return limen_cast_return_error (invocation, g_steal_pointer (&error));
  if (check_serial (invocation, &host, serial))
    call_for_fd (invocation, &host, "SelectionWrite", g_variant_new ("(ou)", session_handle, serial), TRUE);
  return G_DBUS_METHOD_INVOCATION_HANDLED;
}

static gboolean
handle_selection_write_done (LimenDbusPortalClipboard *object, GDBusMethodInvocation *invocation,
                             const char *session_handle, guint serial, gboolean success,
                             LimenPortalContext *context)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(LimenSession) session = NULL;
  Host host;

  if (!granted_host (invocation, session_handle, &host, &session, &error))
    return limen_cast_return_error (invocation, g_steal_pointer (&error));
  if (!check_serial (invocation, &host, serial))
    return G_DBUS_METHOD_INVOCATION_HANDLED;
  g_hash_table_remove (*host.transfers, GUINT_TO_POINTER (serial));
  g_dbus_connection_call (bus, host.backend, LIMEN_PORTAL_PATH, LIMEN_CLIPBOARD_IMPL, "SelectionWriteDone",
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
  Host host;

  if (!granted_host (invocation, session_handle, &host, &session, &error))
    return limen_cast_return_error (invocation, g_steal_pointer (&error));
  if (!limen_clipboard_type_is_valid (mime_type))
    return limen_cast_return_error (invocation, g_error_new_literal (LIMEN_ERROR, LIMEN_ERROR_INVALID_ARGUMENT,
                                                                     "Invalid value for mime_type: not a clipboard type"));
  call_for_fd (invocation, &host, "SelectionRead", g_variant_new ("(os)", session_handle, mime_type), FALSE);
  return G_DBUS_METHOD_INVOCATION_HANDLED;
}

/* The session a backend signal names, if @backend holds it and granted it the clipboard. */
static gboolean
signal_host (const char *backend, const char *path, Host *host)
{
  return host_of_path (path, host) && g_strcmp0 (host->backend, backend) == 0 && host->started && *host->enabled;
}

/* SelectionOwnerChanged and SelectionTransfer, checked; a transfer's serial becomes one the
 * app may answer. */
static GVariant *
relay_signal (const char *backend, const char *signal, GVariant *parameters, const char **destination)
{
  const char *path;
  Host host;

  if (g_str_equal (signal, "SelectionOwnerChanged") && g_variant_is_of_type (parameters, G_VARIANT_TYPE ("(oa{sv})")))
    {
      g_autoptr(GVariant) options = NULL;
      g_auto(GVariantBuilder) b = G_VARIANT_BUILDER_INIT (G_VARIANT_TYPE_VARDICT);

      g_variant_get (parameters, "(&o@a{sv})", &path, &options);
      if (!signal_host (backend, path, &host) ||
          !limen_options_filter (options, &b, NULL, limen_options_clipboard_selection_owner_changed, NULL))
        return NULL;
      *destination = limen_session_get_sender (host.session);
      return g_variant_new ("(o@a{sv})", path, g_variant_builder_end (&b));
    }
  if (g_str_equal (signal, "SelectionTransfer") && g_variant_is_of_type (parameters, G_VARIANT_TYPE ("(osu)")))
    {
      const char *mime;
      guint32 serial;

      g_variant_get (parameters, "(&o&su)", &path, &mime, &serial);
      if (!signal_host (backend, path, &host) || !limen_clipboard_type_is_valid (mime))
        return NULL;
      if (*host.transfers == NULL)
        *host.transfers = g_hash_table_new (NULL, NULL);
      if (g_hash_table_size (*host.transfers) >= MAX_PENDING_TRANSFERS)
        g_hash_table_remove_all (*host.transfers);   /* the app stopped answering: old ones lapse */
      g_hash_table_add (*host.transfers, GUINT_TO_POINTER (serial));
      *destination = limen_session_get_sender (host.session);
      return g_variant_new ("(osu)", path, mime, serial);
    }
  return NULL;
}

/* The sessions themselves end with their own portal (RemoteDesktop, InputCapture). */
static const LimenBackendRelay clipboard_relay = {
  .impl_interface = LIMEN_CLIPBOARD_IMPL,
  .portal_interface = "org.freedesktop.portal.Clipboard",
  .signal = relay_signal,
};

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
  return G_DBUS_INTERFACE_SKELETON (g_object_ref (skeleton));
}
