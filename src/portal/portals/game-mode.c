/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "portal.h"

#include "fd-check.h"
#include "permission-store.h"
#include "pid-map.h"

#define GAMEMODE_NAME "com.feralinteractive.GameMode"
#define GAMEMODE_PATH "/com/feralinteractive/GameMode"
#define GAMEMODE_TIMEOUT_MS 5000
/* The reference's entry, which GNOME's and Plasma 6's pages switch: "no" refuses. */
#define STORE_TABLE "gamemode"
#define STORE_ID "gamemode"

static GDBusConnection *connection;
static gboolean gamemode_present;
static LimenDbusPortalGameMode *skeleton;

typedef struct {
  LimenDbusPortalGameMode *object;
  GDBusMethodInvocation   *invocation;
  const char              *method;
  GVariant                *params;   /* floating until sent */
} Call;

static void
on_gamemode_reply (GObject *source, GAsyncResult *result, gpointer user_data)
{
  Call *call = user_data;
  g_autoptr(GError) error = NULL;
  g_autoptr(GVariant) reply = g_dbus_connection_call_finish (G_DBUS_CONNECTION (source), result, &error);

  if (reply)
    g_dbus_method_invocation_return_value (call->invocation, g_steal_pointer (&reply));
  else
    g_dbus_method_invocation_return_error (call->invocation, LIMEN_ERROR, LIMEN_ERROR_FAILED,
                                           "GameMode did not answer: %s", error->message);
  g_object_unref (call->object);
  g_free (call);
}

static void
call_gamemode (gpointer data)
{
  Call *call = data;

  g_dbus_connection_call (connection, GAMEMODE_NAME, GAMEMODE_PATH, GAMEMODE_NAME, call->method, call->params,
                          G_VARIANT_TYPE ("(i)"), G_DBUS_CALL_FLAGS_NO_AUTO_START, GAMEMODE_TIMEOUT_MS,
                          NULL, on_gamemode_reply, call);
}

static void
call_free (gpointer data)
{
  Call *call = data;

  g_variant_unref (g_variant_ref_sink (call->params));
  g_object_unref (call->object);
  g_free (call);
}

/* Pass @method (@params) on to GameMode unless the person denied it to @info's app. */
static void
call_if_permitted (LimenDbusPortalGameMode *object, GDBusMethodInvocation *invocation, LimenAppInfo *info,
                   const char *method, GVariant *params)
{
  Call *call = g_new0 (Call, 1);

  call->object = g_object_ref (object);
  call->invocation = invocation;
  call->method = method;
  call->params = params;
  limen_permission_unless_denied (STORE_TABLE, STORE_ID, limen_app_info_get_id (info), invocation,
                                  "GameMode is not allowed for this app", call_gamemode, call, call_free);
}

/* FALSE after answering NotFound when GameMode is not on the bus. */
static gboolean
check_present (GDBusMethodInvocation *invocation)
{
  if (!gamemode_present)
    g_dbus_method_invocation_return_error_literal (invocation, LIMEN_ERROR, LIMEN_ERROR_NOT_FOUND,
                                                   "GameMode is not running");
  return gamemode_present;
}

/* Translate the caller's pids and pass @method on; @n_pids pids from @pids. */
static gboolean
forward (LimenDbusPortalGameMode *object, GDBusMethodInvocation *invocation,
         const char *method, pid_t *pids, guint n_pids)
{
  g_autoptr(GError) error = NULL;
  GVariant *params;

  LIMEN_GET_APP_INFO_OR_RETURN (invocation, info);
  if (!check_present (invocation))
    return G_DBUS_METHOD_INVOCATION_HANDLED;
  for (guint i = 0; i < n_pids; i++)
    if (pids[i] <= 0)
      {
        g_dbus_method_invocation_return_error_literal (invocation, LIMEN_ERROR, LIMEN_ERROR_INVALID_ARGUMENT,
                                                       "Invalid process id");
        return G_DBUS_METHOD_INVOCATION_HANDLED;
      }
  if (!limen_pid_map_to_host (info, pids, n_pids, &error))
    {
      limen_invocation_return_gerror (invocation, error);
      return G_DBUS_METHOD_INVOCATION_HANDLED;
    }
  params = n_pids == 1 ? g_variant_new ("(i)", (gint32) pids[0]) : g_variant_new ("(ii)", (gint32) pids[0], (gint32) pids[1]);
  call_if_permitted (object, invocation, info, method, params);
  return G_DBUS_METHOD_INVOCATION_HANDLED;
}

#define PID_HANDLER(fn, method)                                                            \
  static gboolean fn (LimenDbusPortalGameMode *o, GDBusMethodInvocation *inv, gint pid)    \
  {                                                                                        \
    pid_t pids[1] = { pid };                                                               \
    return forward (o, inv, method, pids, 1);                                              \
  }
#define PID2_HANDLER(fn, method)                                                           \
  static gboolean fn (LimenDbusPortalGameMode *o, GDBusMethodInvocation *inv,              \
                      gint target, gint requester)                                         \
  {                                                                                        \
    pid_t pids[2] = { target, requester };                                                 \
    return forward (o, inv, method, pids, 2);                                              \
  }

PID_HANDLER (handle_query_status, "QueryStatus")
PID_HANDLER (handle_register_game, "RegisterGame")
PID_HANDLER (handle_unregister_game, "UnregisterGame")
PID2_HANDLER (handle_query_status_by_pid, "QueryStatusByPid")
PID2_HANDLER (handle_register_game_by_pid, "RegisterGameByPid")
PID2_HANDLER (handle_unregister_game_by_pid, "UnregisterGameByPid")

/* The pidfd variants: the fds name processes directly, whatever namespace they live in. */
static gboolean
forward_pidfds (LimenDbusPortalGameMode *object, GDBusMethodInvocation *invocation,
                GUnixFDList *fd_list, GVariant *target, GVariant *requester, const char *method)
{
  g_autoptr(GError) error = NULL;
  g_autofd int tfd = -1;
  g_autofd int rfd = -1;
  pid_t pids[2];

  LIMEN_GET_APP_INFO_OR_RETURN (invocation, info);
  if (!check_present (invocation))
    return G_DBUS_METHOD_INVOCATION_HANDLED;
  tfd = limen_fd_list_get (fd_list, g_variant_get_handle (target), "target", &error);
  if (tfd >= 0)
    rfd = limen_fd_list_get (fd_list, g_variant_get_handle (requester), "requester", &error);
  if (tfd < 0 || rfd < 0 ||
      (pids[0] = limen_pidfd_get_pid (tfd)) <= 0 || (pids[1] = limen_pidfd_get_pid (rfd)) <= 0)
    {
      if (error)
        limen_invocation_return_gerror (invocation, error);
      else
        g_dbus_method_invocation_return_error_literal (invocation, LIMEN_ERROR, LIMEN_ERROR_INVALID_ARGUMENT,
                                                       "Not a pidfd of a running process");
      return G_DBUS_METHOD_INVOCATION_HANDLED;
    }
  /* GameMode's own pidfd API is the pid one once we know the host pids. */
  call_if_permitted (object, invocation, info, method, g_variant_new ("(ii)", (gint32) pids[0], (gint32) pids[1]));
  return G_DBUS_METHOD_INVOCATION_HANDLED;
}

#define PIDFD_HANDLER(fn, method)                                                          \
  static gboolean fn (LimenDbusPortalGameMode *o, GDBusMethodInvocation *inv,              \
                      GUnixFDList *fds, GVariant *t, GVariant *r)                          \
  {                                                                                        \
    return forward_pidfds (o, inv, fds, t, r, method);                                     \
  }

PIDFD_HANDLER (handle_query_status_by_pidfd, "QueryStatusByPid")
PIDFD_HANDLER (handle_register_game_by_pidfd, "RegisterGameByPid")
PIDFD_HANDLER (handle_unregister_game_by_pidfd, "UnregisterGameByPid")

static void
on_gamemode_appeared (GDBusConnection *c, const char *name, const char *owner, gpointer user_data)
{
  g_autoptr(GVariant) reply = NULL;

  gamemode_present = TRUE;
  reply = g_dbus_connection_call_sync (c, GAMEMODE_NAME, GAMEMODE_PATH, "org.freedesktop.DBus.Properties",
                                       "Get", g_variant_new ("(ss)", GAMEMODE_NAME, "ClientCount"),
                                       G_VARIANT_TYPE ("(v)"), G_DBUS_CALL_FLAGS_NO_AUTO_START, 1000, NULL, NULL);
  if (reply)
    {
      g_autoptr(GVariant) v = NULL;

      g_variant_get (reply, "(v)", &v);
      if (g_variant_is_of_type (v, G_VARIANT_TYPE_INT32))
        limen_dbus_portal_game_mode_set_active (skeleton, g_variant_get_int32 (v) > 0);
    }
}

static void
on_gamemode_vanished (GDBusConnection *c, const char *name, gpointer user_data)
{
  gamemode_present = FALSE;
  limen_dbus_portal_game_mode_set_active (skeleton, FALSE);
}

/* org.freedesktop.portal.GameMode v4, forwarded to GameMode's com.feralinteractive.GameMode
 * with pids translated out of the caller's sandbox. */
GDBusInterfaceSkeleton *
limen_game_mode_new (LimenPortalContext *context)
{
  connection = context->connection;
  skeleton = limen_dbus_portal_game_mode_skeleton_new ();
  limen_app_info_gate_skeleton (G_DBUS_INTERFACE_SKELETON (skeleton));
  limen_dbus_portal_game_mode_set_version (skeleton, 4);
  g_signal_connect (skeleton, "handle-query-status", G_CALLBACK (handle_query_status), NULL);
  g_signal_connect (skeleton, "handle-register-game", G_CALLBACK (handle_register_game), NULL);
  g_signal_connect (skeleton, "handle-unregister-game", G_CALLBACK (handle_unregister_game), NULL);
  g_signal_connect (skeleton, "handle-query-status-by-pid", G_CALLBACK (handle_query_status_by_pid), NULL);
  g_signal_connect (skeleton, "handle-register-game-by-pid", G_CALLBACK (handle_register_game_by_pid), NULL);
  g_signal_connect (skeleton, "handle-unregister-game-by-pid", G_CALLBACK (handle_unregister_game_by_pid), NULL);
  g_signal_connect (skeleton, "handle-query-status-by-pidfd", G_CALLBACK (handle_query_status_by_pidfd), NULL);
  g_signal_connect (skeleton, "handle-register-game-by-pidfd", G_CALLBACK (handle_register_game_by_pidfd), NULL);
  g_signal_connect (skeleton, "handle-unregister-game-by-pidfd", G_CALLBACK (handle_unregister_game_by_pidfd), NULL);
  /* Watching, not waiting: calls fail promptly until GameMode shows up. */
  g_bus_watch_name_on_connection (connection, GAMEMODE_NAME, G_BUS_NAME_WATCHER_FLAGS_NONE,
                                  on_gamemode_appeared, on_gamemode_vanished, NULL, NULL);
  return G_DBUS_INTERFACE_SKELETON (skeleton);
}
