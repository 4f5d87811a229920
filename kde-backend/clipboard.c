/* Limen — org.freedesktop.impl.portal.Clipboard through KWin's data-control protocol.
 *
 * Only a remote-desktop session that asked for it (RequestClipboard before Start) and was
 * started with it gets the clipboard. Reading: a pipe whose write end goes to the owner
 * of the selection. Owning: we offer the session's types; a paste elsewhere becomes
 * SelectionTransfer(serial), and SelectionWrite hands the session the paster's own pipe.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later */
#include "screencast.h"

#include <fcntl.h>
#include <gio/gunixfdlist.h>
#include <glib-unix.h>
#include <string.h>
#include <unistd.h>

#include "errors.h"
#include "option-tables.h"

#define IFACE "org.freedesktop.impl.portal.Clipboard"
#define MAX_MIME_TYPES 64
#define MAX_TRANSFERS 32

static GList *enabled;            /* started sessions with the clipboard (LimenCast) */
static LimenCast *owner;          /* whose selection KWin holds, or NULL */
static GDBusConnection *bus;

static void
emit (LimenCast *cast, const char *signal, GVariant *args)
{
  g_autoptr(GError) error = NULL;

  g_variant_ref_sink (args);
  if (bus && !g_dbus_connection_emit_signal (bus, limen_kde_session_get_sender (cast->session),
                                             LIMEN_KDE_OBJECT_PATH, IFACE, signal, args, &error))
    g_debug ("Clipboard: cannot emit %s: %s", signal, error->message);
  g_variant_unref (args);
}

static const char *
session_path (LimenCast *cast)
{
  return cast->handle;
}

static void
on_selection_changed (const char *const *mime_types, gboolean ours, gpointer user_data)
{
  if (!ours)
    owner = NULL;
  for (GList *l = enabled; l; l = l->next)
    {
      LimenCast *cast = l->data;
      GVariantBuilder options;

      g_variant_builder_init (&options, G_VARIANT_TYPE_VARDICT);
      g_variant_builder_add (&options, "{sv}", "mime_types", g_variant_new_strv (mime_types, -1));
      g_variant_builder_add (&options, "{sv}", "session_is_owner", g_variant_new_boolean (ours && owner == cast));
      emit (cast, "SelectionOwnerChanged", g_variant_new ("(oa{sv})", session_path (cast),
                                                          &options));
    }
}

void
limen_kde_clipboard_session_started (LimenCast *cast)
{
  const LimenKdeWayland *w = limen_kde_wayland_get (NULL);

  if (!w)
    return;
  cast->transfers = g_hash_table_new_full (NULL, NULL, NULL, NULL);
  enabled = g_list_prepend (enabled, cast);
  w->limen_wl_selection_watch (w->wl, on_selection_changed, NULL);
}

static gboolean
close_fd (gpointer key, gpointer value, gpointer user_data)
{
  close (GPOINTER_TO_INT (value));
  return TRUE;
}

void
limen_kde_clipboard_session_closed (LimenCast *cast)
{
  const LimenKdeWayland *w = limen_kde_wayland_get (NULL);

  if (!g_list_find (enabled, cast))
    return;
  enabled = g_list_remove (enabled, cast);
  if (owner == cast)
    {
      owner = NULL;
      if (w)
        w->limen_wl_selection_clear (w->wl);
    }
  g_hash_table_foreach_remove (cast->transfers, close_fd, NULL);
  g_clear_pointer (&cast->transfers, g_hash_table_unref);
}

/* A started session with the clipboard, of the caller; else NULL and the error answered. */
static LimenCast *
clipboard_session (GDBusMethodInvocation *invocation, const char *session_handle)
{
  g_autoptr(GError) error = NULL;
  LimenCast *cast = limen_cast_lookup (invocation, session_handle, &error);

  if (cast && !g_list_find (enabled, cast))
    {
      g_set_error_literal (&error, LIMEN_ERROR, LIMEN_ERROR_NOT_ALLOWED,
                           "The session was not started with clipboard access");
      cast = NULL;
    }
  if (!cast)
    limen_invocation_return_gerror (invocation, error);
  return cast;
}

static gboolean
on_request_clipboard (LimenDbusImplPortalClipboard *skeleton, GDBusMethodInvocation *invocation,
                      const char *session_handle, GVariant *options, gpointer user_data)
{
  g_autoptr(GError) error = NULL;
  g_auto(GVariantBuilder) filtered = G_VARIANT_BUILDER_INIT (G_VARIANT_TYPE_VARDICT);
  LimenCast *cast = NULL;

  if (!limen_options_filter (options, &filtered, &error, limen_options_clipboard_request_clipboard, NULL) ||
      !(cast = limen_cast_lookup (invocation, session_handle, &error)))
    {
    }
  else if (!cast->remote)
    g_set_error_literal (&error, LIMEN_ERROR, LIMEN_ERROR_NOT_ALLOWED,
                         "Only remote-desktop sessions can use the clipboard");
  else if (cast->state != LIMEN_CAST_NEW)
    g_set_error_literal (&error, LIMEN_ERROR, LIMEN_ERROR_FAILED, "The clipboard must be requested before Start");
  if (error)
    {
      limen_invocation_return_gerror (invocation, error);
      return G_DBUS_METHOD_INVOCATION_HANDLED;
    }
  bus = g_dbus_method_invocation_get_connection (invocation);
  cast->clipboard_requested = TRUE;
  g_dbus_method_invocation_return_value (invocation, NULL);
  return G_DBUS_METHOD_INVOCATION_HANDLED;
}

/* Someone pastes our selection: the owning session gets a serial to answer. */
static void
on_send (const char *mime_type, int fd, gpointer user_data)
{
  LimenCast *cast = owner;

  if (!cast || !cast->transfers || g_hash_table_size (cast->transfers) >= MAX_TRANSFERS)
    {
      close (fd);
      return;
    }
  /* Serials start at 1 and never repeat within a session. */
  cast->clipboard_serial++;
  g_hash_table_insert (cast->transfers, GUINT_TO_POINTER (cast->clipboard_serial), GINT_TO_POINTER (fd));
  emit (cast, "SelectionTransfer", g_variant_new ("(osu)", session_path (cast), mime_type, cast->clipboard_serial));
}

static gboolean
on_set_selection (LimenDbusImplPortalClipboard *skeleton, GDBusMethodInvocation *invocation,
                  const char *session_handle, GVariant *options, gpointer user_data)
{
  g_autoptr(GError) error = NULL;
  g_auto(GVariantBuilder) filtered = G_VARIANT_BUILDER_INIT (G_VARIANT_TYPE_VARDICT);
  g_autoptr(GVariant) opts = NULL;
  g_autoptr(GVariant) list = NULL;
  g_autofree const char **types = NULL;
  const LimenKdeWayland *w;
  LimenCast *cast = clipboard_session (invocation, session_handle);

  if (!cast)
    return G_DBUS_METHOD_INVOCATION_HANDLED;
  if (!limen_options_filter (options, &filtered, &error, limen_options_clipboard_set_selection, NULL) ||
      !(w = limen_kde_wayland_get (&error)))
    {
      limen_invocation_return_gerror (invocation, error);
      return G_DBUS_METHOD_INVOCATION_HANDLED;
    }
  opts = g_variant_ref_sink (g_variant_builder_end (&filtered));
  list = g_variant_lookup_value (opts, "mime_types", G_VARIANT_TYPE_STRING_ARRAY);
  types = list ? g_variant_get_strv (list, NULL) : NULL;
  if (!types || !types[0])
    {
      g_dbus_method_invocation_return_dbus_error (invocation, "org.freedesktop.portal.Error.InvalidArgument",
                                                  "Invalid value for option mime_types: at least one type");
      return G_DBUS_METHOD_INVOCATION_HANDLED;
    }
  owner = cast;
  if (!w->limen_wl_selection_set (w->wl, types, on_send, NULL))
    {
      owner = NULL;
      g_dbus_method_invocation_return_dbus_error (invocation, "org.freedesktop.portal.Error.Failed",
                                                  "The compositor offers no clipboard access");
      return G_DBUS_METHOD_INVOCATION_HANDLED;
    }
  g_dbus_method_invocation_return_value (invocation, NULL);
  return G_DBUS_METHOD_INVOCATION_HANDLED;
}

static gboolean
on_selection_write (LimenDbusImplPortalClipboard *skeleton, GDBusMethodInvocation *invocation,
                    GUnixFDList *in_fds, const char *session_handle, guint serial, gpointer user_data)
{
  LimenCast *cast = clipboard_session (invocation, session_handle);
  g_autoptr(GUnixFDList) fds = NULL;
  gpointer value;
  int fd;

  if (!cast)
    return G_DBUS_METHOD_INVOCATION_HANDLED;
  if (!g_hash_table_lookup_extended (cast->transfers, GUINT_TO_POINTER (serial), NULL, &value) ||
      GPOINTER_TO_INT (value) < 0)
    {
      g_dbus_method_invocation_return_dbus_error (invocation, "org.freedesktop.portal.Error.InvalidArgument",
                                                  "No transfer waits with this serial");
      return G_DBUS_METHOD_INVOCATION_HANDLED;
    }
  fd = GPOINTER_TO_INT (value);
  /* The session writes straight into the paster's pipe; we keep no copy, so the paster
   * sees the end when the session closes its end. */
  fds = g_unix_fd_list_new_from_array (&fd, 1);
  g_hash_table_insert (cast->transfers, GUINT_TO_POINTER (serial), GINT_TO_POINTER (-1));
  limen_dbus_impl_portal_clipboard_complete_selection_write (skeleton, invocation, fds, g_variant_new_handle (0));
  return G_DBUS_METHOD_INVOCATION_HANDLED;
}

static gboolean
on_selection_write_done (LimenDbusImplPortalClipboard *skeleton, GDBusMethodInvocation *invocation,
                         const char *session_handle, guint serial, gboolean success, gpointer user_data)
{
  LimenCast *cast = clipboard_session (invocation, session_handle);
  gpointer value;

  if (!cast)
    return G_DBUS_METHOD_INVOCATION_HANDLED;
  if (!g_hash_table_lookup_extended (cast->transfers, GUINT_TO_POINTER (serial), NULL, &value))
    {
      g_dbus_method_invocation_return_dbus_error (invocation, "org.freedesktop.portal.Error.InvalidArgument",
                                                  "No transfer waits with this serial");
      return G_DBUS_METHOD_INVOCATION_HANDLED;
    }
  if (GPOINTER_TO_INT (value) >= 0)
    close (GPOINTER_TO_INT (value));   /* never written: the paster gets nothing */
  g_hash_table_remove (cast->transfers, GUINT_TO_POINTER (serial));
  g_debug ("Clipboard: transfer %u of %s done (%s)", serial, cast->app_id, success ? "written" : "failed");
  g_dbus_method_invocation_return_value (invocation, NULL);
  return G_DBUS_METHOD_INVOCATION_HANDLED;
}

static gboolean
on_selection_read (LimenDbusImplPortalClipboard *skeleton, GDBusMethodInvocation *invocation,
                   GUnixFDList *in_fds, const char *session_handle, const char *mime_type, gpointer user_data)
{
  g_autoptr(GError) error = NULL;
  LimenCast *cast = clipboard_session (invocation, session_handle);
  g_autoptr(GUnixFDList) fds = NULL;
  const LimenKdeWayland *w;
  int pipe_fds[2];

  if (!cast)
    return G_DBUS_METHOD_INVOCATION_HANDLED;
  if (!limen_clipboard_type_is_valid (mime_type))
    {
      g_dbus_method_invocation_return_dbus_error (invocation, "org.freedesktop.portal.Error.InvalidArgument",
                                                  "Not a clipboard type");
      return G_DBUS_METHOD_INVOCATION_HANDLED;
    }
  if (!(w = limen_kde_wayland_get (&error)) || !g_unix_open_pipe (pipe_fds, FD_CLOEXEC, &error))
    {
      limen_invocation_return_gerror (invocation, error);
      return G_DBUS_METHOD_INVOCATION_HANDLED;
    }
  if (!w->limen_wl_selection_receive (w->wl, mime_type, pipe_fds[1]))
    {
      close (pipe_fds[0]);
      g_dbus_method_invocation_return_dbus_error (invocation, "org.freedesktop.portal.Error.NotFound",
                                                  "The clipboard holds nothing of this type");
      return G_DBUS_METHOD_INVOCATION_HANDLED;
    }
  fds = g_unix_fd_list_new_from_array (&pipe_fds[0], 1);
  limen_dbus_impl_portal_clipboard_complete_selection_read (skeleton, invocation, fds, g_variant_new_handle (0));
  return G_DBUS_METHOD_INVOCATION_HANDLED;
}

GDBusInterfaceSkeleton *
limen_kde_clipboard_new (void)
{
  LimenDbusImplPortalClipboard *skeleton = limen_dbus_impl_portal_clipboard_skeleton_new ();

  limen_dbus_impl_portal_clipboard_set_version (skeleton, 1);
  g_signal_connect (skeleton, "handle-request-clipboard", G_CALLBACK (on_request_clipboard), NULL);
  g_signal_connect (skeleton, "handle-set-selection", G_CALLBACK (on_set_selection), NULL);
  g_signal_connect (skeleton, "handle-selection-write", G_CALLBACK (on_selection_write), NULL);
  g_signal_connect (skeleton, "handle-selection-write-done", G_CALLBACK (on_selection_write_done), NULL);
  g_signal_connect (skeleton, "handle-selection-read", G_CALLBACK (on_selection_read), NULL);
  return G_DBUS_INTERFACE_SKELETON (skeleton);
}
