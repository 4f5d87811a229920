/* SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * ScreenCast: the backend asks the person what to share and names PipeWire nodes; the app
 * only ever reaches those nodes through a remote we restricted (pipewire-remote.c). The
 * source types and cursor modes offered are the backend's own, read from it when this
 * portal starts (without activating it) and again whenever a session is created. */
#include "screencast.h"

#include <unistd.h>
#include <gio/gunixfdlist.h>

#include "backend.h"
#include "driver.h"
#include "option-tables.h"
#include "cast-session.h"
#include "pipewire-remote.h"
#include "restore-tokens.h"

#define SCREEN_CAST_VERSION 6
/* PipeWire connections one session may hold open through OpenPipeWireRemote. */
#define MAX_REMOTES_PER_SESSION 8

static LimenDbusPortalScreenCast *skeleton;

/* The backend's Available* properties become ours (read by backend.c without activating it). */
static void
on_backend_properties (GVariant *props, gpointer user_data)
{
  guint32 value;

  if (skeleton == NULL)
    return;
  if (g_variant_lookup (props, "AvailableSourceTypes", "u", &value))
    limen_dbus_portal_screen_cast_set_available_source_types (skeleton, value & LIMEN_SOURCE_ALL);
  if (g_variant_lookup (props, "AvailableCursorModes", "u", &value))
    limen_dbus_portal_screen_cast_set_available_cursor_modes (skeleton, value & LIMEN_CURSOR_ALL);
}

/* CreateSession, post: the backend runs now, so its Available* properties can be read. */
static void
on_session_created (LimenCall *call, GTask *task)
{
  LimenCast *cast = limen_cast_lookup_path (limen_session_get_path (limen_call_get_session (call)));

  if (cast)
    limen_backend_read_properties (limen_call_get_context (call)->connection, cast->backend,
                                   LIMEN_SCREEN_CAST_IMPL, on_backend_properties, NULL);
  g_task_return_boolean (task, TRUE);
}

/* The checks of SelectSources beyond the table: what this backend offers, what only a
 * screen cast session may ask. */
static gboolean
check_sources (LimenCast *cast, GVariant *options, GVariant *caller_options, GError **error)
{
  guint32 available_types = limen_dbus_portal_screen_cast_get_available_source_types (skeleton);
  guint32 available_cursors = limen_dbus_portal_screen_cast_get_available_cursor_modes (skeleton);
  guint32 types = LIMEN_SOURCE_MONITOR, cursor = LIMEN_CURSOR_HIDDEN;
  gboolean has_cursor = g_variant_lookup (options, "cursor_mode", "u", &cursor);

  if (g_variant_lookup (options, "types", "u", &types) && types == 0)
    types = LIMEN_SOURCE_MONITOR;      /* none asked: the default */
  if (available_types != 0 && (types & available_types) == 0)
    {
      limen_option_set_error (error, "types", "none of these source types is available");
      return FALSE;
    }
  if (has_cursor && (cursor & (cursor - 1)) != 0)
    {
      limen_option_set_error (error, "cursor_mode", "must be exactly one mode");
      return FALSE;
    }
  if (has_cursor && available_cursors != 0 && (cursor & available_cursors) == 0)
    {
      limen_option_set_error (error, "cursor_mode", "this cursor mode is not available");
      return FALSE;
    }
  if (cast->kind == LIMEN_CAST_REMOTE_DESKTOP)
    for (guint i = 0; i < 2; i++)
      {
        const char *key = i == 0 ? "persist_mode" : "restore_token";
        g_autoptr(GVariant) value = g_variant_lookup_value (caller_options, key, NULL);

        if (value)
          {
            limen_option_set_error (error, key, "a remote desktop session persists through RemoteDesktop.SelectDevices");
            return FALSE;
          }
      }
  if (cast->sources_selected)
    {
      g_set_error_literal (error, LIMEN_ERROR, LIMEN_ERROR_NOT_ALLOWED, "Sources were already selected for this session");
      return FALSE;
    }
  return TRUE;
}

/* SelectSources, before the handle: the session can take this selection, and a restore
 * token is exchanged for the backend's restore data. */
static void
check_select_sources (LimenCall *call, GTask *task)
{
  g_autoptr(GError) error = NULL;
  const char *token = NULL;
  LimenCast *cast;

  if (!limen_cast_caller_token (call, &token, &error) ||
      (cast = limen_cast_begin_select (call, &error)) == NULL ||
      !check_sources (cast, limen_call_get_options (call), limen_call_get_caller_options (call), &error))
    {
      g_task_return_error (task, g_steal_pointer (&error));
      return;
    }
  cast->multiple = FALSE;
  g_variant_lookup (limen_call_get_options (call), "multiple", "b", &cast->multiple);
  limen_cast_restore (call, cast, LIMEN_RESTORE_TABLE_SCREEN_CAST, token);
  g_task_return_boolean (task, TRUE);
}

static const LimenStep select_pre[] = { { check_select_sources, LIMEN_STEP_BEFORE_HANDLE }, { NULL } };
static const LimenStep selected_post[] = { { limen_cast_step_selected }, { NULL } };
static const LimenStep created_post[] = { { limen_cast_step_created }, { on_session_created }, { NULL } };
static const LimenStep start_pre[] = { { limen_cast_step_check_start, LIMEN_STEP_BEFORE_HANDLE }, { NULL } };
static const LimenStep started_post[] = { { limen_cast_step_started }, { NULL } };

static const LimenDriverMethod methods[] = {
  { .method = "CreateSession", .kind = LIMEN_CALL_CREATE_SESSION, .options = limen_options_screen_cast_create_session,
    .impl_interface = LIMEN_SCREEN_CAST_IMPL, .impl_method = "CreateSession", .post = created_post,
    .timeout_ms = LIMEN_BACKEND_TIMEOUT_QUICK },
  { .method = "SelectSources", .kind = LIMEN_CALL_IN_SESSION, .options = limen_options_screen_cast_select_sources,
    .impl_interface = LIMEN_SCREEN_CAST_IMPL, .impl_method = "SelectSources", .pre = select_pre,
    .post = selected_post, .timeout_ms = LIMEN_BACKEND_TIMEOUT_QUICK },
  { .method = "Start", .kind = LIMEN_CALL_IN_SESSION, .options = limen_options_screen_cast_start,
    .impl_interface = LIMEN_SCREEN_CAST_IMPL, .impl_method = "Start", .pre = start_pre, .post = started_post },
  { NULL }
};

typedef struct {
  GDBusMethodInvocation *invocation;
  LimenSession          *session;
} RemoteCall;

static void
on_remote_opened (GObject *source, GAsyncResult *result, gpointer user_data)
{
  RemoteCall *r = user_data;
  g_autoptr(GError) error = NULL;
  g_autoptr(GUnixFDList) fds = NULL;
  LimenCast *cast = limen_cast_lookup_path (limen_session_get_path (r->session));
  guint64 client = 0;
  int fd = limen_pipewire_remote_open_finish (result, &client, &error);
  int index = -1;

  if (cast && cast->session == r->session)
    cast->remotes_pending--;
  if (fd >= 0 && (cast == NULL || cast->session != r->session))
    {
      /* Closed while PipeWire was asked. Nobody else holds this socket, so closing it ends
       * the PipeWire client itself; only the bookkeeping is left to drop. */
      limen_pipewire_remote_revoke (client, NULL, 0);
      close (fd);
      fd = -1;
      g_set_error_literal (&error, LIMEN_ERROR, LIMEN_ERROR_NOT_ALLOWED, "The session was closed");
    }
  if (fd >= 0)
    {
      g_array_append_val (cast->remotes, client);
      fds = g_unix_fd_list_new ();
      index = g_unix_fd_list_append (fds, fd, &error);
      close (fd);
    }
  if (index < 0)
    limen_invocation_return_gerror (r->invocation, error);
  else
    limen_dbus_portal_screen_cast_complete_open_pipewire_remote (skeleton, r->invocation, fds,
                                                                 g_variant_new_handle (index));
  limen_session_unref (r->session);
  g_free (r);
}

static gboolean
handle_open_pipewire_remote (LimenDbusPortalScreenCast *object, GDBusMethodInvocation *invocation,
                             GUnixFDList *in_fds, const char *session_handle, GVariant *options,
                             LimenPortalContext *context)
{
  g_autoptr(GError) error = NULL;
  g_auto(GVariantBuilder) b = G_VARIANT_BUILDER_INIT (G_VARIANT_TYPE_VARDICT);
  g_autoptr(LimenSession) session = NULL;
  LimenCast *cast;
  RemoteCall *r;

  if (!limen_options_filter (options, &b, &error, limen_options_screen_cast_open_pipewire_remote, NULL) ||
      (cast = limen_cast_lookup (invocation, session_handle, &session, &error)) == NULL)
    return limen_cast_return_error (invocation, g_steal_pointer (&error));
  if (cast->state != LIMEN_CAST_STARTED || cast->nodes->len == 0)
    return limen_cast_return_error (invocation, g_error_new_literal (LIMEN_ERROR, LIMEN_ERROR_NOT_ALLOWED,
                                                                     "The session has no started streams"));
  if (cast->remotes->len + cast->remotes_pending >= MAX_REMOTES_PER_SESSION)
    return limen_cast_return_error (invocation, g_error_new (LIMEN_ERROR, LIMEN_ERROR_NOT_ALLOWED,
                                                             "A session may open at most %d PipeWire remotes",
                                                             MAX_REMOTES_PER_SESSION));
  r = g_new0 (RemoteCall, 1);
  r->invocation = invocation;
  r->session = g_steal_pointer (&session);
  cast->remotes_pending++;
  limen_pipewire_remote_open_async ((const guint32 *) (gpointer) cast->nodes->data, cast->nodes->len,
                                    on_remote_opened, r);
  return G_DBUS_METHOD_INVOCATION_HANDLED;
}

GDBusInterfaceSkeleton *
limen_screen_cast_new (LimenPortalContext *context)
{

  if (!limen_backend_is_configured (context, LIMEN_SCREEN_CAST_IMPL))
    return NULL;
  limen_restore_tokens_init (context->connection);
  limen_cast_watch_store (context->connection);
  skeleton = limen_dbus_portal_screen_cast_skeleton_new ();
  limen_app_info_gate_skeleton (G_DBUS_INTERFACE_SKELETON (skeleton));
  limen_dbus_portal_screen_cast_set_version (skeleton, SCREEN_CAST_VERSION);
  limen_driver_export (G_DBUS_INTERFACE_SKELETON (skeleton), context, methods);
  g_signal_connect (skeleton, "handle-open-pipewire-remote", G_CALLBACK (handle_open_pipewire_remote), context);
  limen_backend_watch_properties (context, LIMEN_SCREEN_CAST_IMPL, on_backend_properties, NULL);
  return G_DBUS_INTERFACE_SKELETON (g_object_ref (skeleton));
}
