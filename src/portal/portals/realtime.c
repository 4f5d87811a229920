/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "portal.h"

#include "pid-map.h"
#include "deferred.h"
#include "permission-store.h"

#define RTKIT_NAME "org.freedesktop.RealtimeKit1"
#define RTKIT_PATH "/org/freedesktop/RealtimeKit1"
#define RTKIT_TIMEOUT_MS 5000
/* The reference's entry, which GNOME's and Plasma 6's pages switch: "no" refuses. */
#define STORE_TABLE "realtime"
#define STORE_ID "realtime"

static GDBusConnection *system_bus;
static gboolean rtkit_present;
static gboolean rtkit_known;      /* the system bus said whether RealtimeKit is there */
static LimenDbusPortalRealtime *skeleton;

/* A call that came before RealtimeKit's presence was known: answered once it is. */
typedef struct {
  LimenDbusPortalRealtime *object;
  GDBusMethodInvocation   *invocation;
  const char              *method;
  guint64                  process;
  guint64                  thread;
  GVariant                *priority;
} Held;

static GPtrArray *held;
#define HELD_MAX 256   /* beyond, calls are refused as when RealtimeKit is absent */

static void set_rtkit_known (void);

/* Calls are never held longer than a RealtimeKit call may take. */
static gboolean
on_lookup_timeout (gpointer user_data)
{
  if (!rtkit_known)
    {
      g_message ("No answer from the system bus about RealtimeKit in time: taking it as absent");
      set_rtkit_known ();
    }
  return G_SOURCE_REMOVE;
}

typedef struct {
  LimenDbusPortalRealtime *object;
  GDBusMethodInvocation   *invocation;
  const char              *method;
  GVariant                *params;   /* floating until sent */
} Call;

static void
on_rtkit_reply (GObject *source, GAsyncResult *result, gpointer user_data)
{
  Call *call = user_data;
  g_autoptr(GError) error = NULL;
  g_autoptr(GVariant) reply = g_dbus_connection_call_finish (G_DBUS_CONNECTION (source), result, &error);

  if (reply)
    g_dbus_method_invocation_return_value (call->invocation, NULL);
  else
    g_dbus_method_invocation_return_error (call->invocation, LIMEN_ERROR, LIMEN_ERROR_FAILED,
                                           "RealtimeKit refused: %s", error->message);
  g_object_unref (call->object);
  g_free (call);
}

static void
call_rtkit (gpointer data)
{
  Call *call = data;

  g_dbus_connection_call (system_bus, RTKIT_NAME, RTKIT_PATH, "org.freedesktop.RealtimeKit1", call->method,
                          call->params, NULL, G_DBUS_CALL_FLAGS_NONE, RTKIT_TIMEOUT_MS, NULL, on_rtkit_reply, call);
}

static void
call_free (gpointer data)
{
  Call *call = data;

  g_variant_unref (g_variant_ref_sink (call->params));
  g_object_unref (call->object);
  g_free (call);
}

static gboolean
forward (LimenDbusPortalRealtime *object, GDBusMethodInvocation *invocation, const char *method,
         guint64 process, guint64 thread, GVariant *priority)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(GVariant) prio = g_variant_ref_sink (priority);
  pid_t pid = (pid_t) process, tid = (pid_t) thread;
  Call *call;

  LIMEN_GET_APP_INFO_OR_RETURN (invocation, info);
  if (!rtkit_known && (held == NULL || held->len < HELD_MAX))
    {
      Held h = { g_object_ref (object), invocation, method, process, thread, g_steal_pointer (&prio) };

      if (held == NULL)
        {
          held = g_ptr_array_new ();
          g_timeout_add (RTKIT_TIMEOUT_MS, on_lookup_timeout, NULL);
        }
      g_ptr_array_add (held, g_memdup2 (&h, sizeof h));
      limen_realtime_start ();
      return G_DBUS_METHOD_INVOCATION_HANDLED;
    }
  if (!rtkit_present)
    {
      g_dbus_method_invocation_return_error_literal (invocation, LIMEN_ERROR, LIMEN_ERROR_NOT_FOUND,
                                                     "RealtimeKit is not available");
      return G_DBUS_METHOD_INVOCATION_HANDLED;
    }
  if (process == 0 || thread == 0 || process > G_MAXINT32 || thread > G_MAXINT32)
    {
      g_dbus_method_invocation_return_error_literal (invocation, LIMEN_ERROR, LIMEN_ERROR_INVALID_ARGUMENT,
                                                     "Invalid process or thread id");
      return G_DBUS_METHOD_INVOCATION_HANDLED;
    }
  if (!limen_pid_map_to_host (info, &pid, 1, &error) ||
      !limen_pid_map_thread_to_host (info, pid, &tid, &error))
    {
      limen_invocation_return_gerror (invocation, error);
      return G_DBUS_METHOD_INVOCATION_HANDLED;
    }
  call = g_new0 (Call, 1);
  call->object = g_object_ref (object);
  call->invocation = invocation;
  call->method = method;
  call->params = g_variant_new ("(tt@*)", (guint64) pid, (guint64) tid, prio);
  /* RealtimeKit is asked only when the person did not deny it to the app. */
  limen_permission_unless_denied (STORE_TABLE, STORE_ID, limen_app_info_get_id (info), invocation,
                                  "Realtime scheduling is not allowed for this app", call_rtkit, call, call_free);
  return G_DBUS_METHOD_INVOCATION_HANDLED;
}

static gboolean
handle_make_realtime (LimenDbusPortalRealtime *object, GDBusMethodInvocation *invocation,
                      guint64 process, guint64 thread, guint priority)
{
  return forward (object, invocation, "MakeThreadRealtimeWithPID", process, thread,
                  g_variant_new_uint32 (priority));
}

static gboolean
handle_make_high_priority (LimenDbusPortalRealtime *object, GDBusMethodInvocation *invocation,
                           guint64 process, guint64 thread, gint priority)
{
  return forward (object, invocation, "MakeThreadHighPriorityWithPID", process, thread,
                  g_variant_new_int32 (priority));
}

/* RealtimeKit's presence is known now (or given up on): answer the calls that waited for
 * it, in order. */
static void
set_rtkit_known (void)
{
  g_autoptr(GPtrArray) calls = g_steal_pointer (&held);

  rtkit_known = TRUE;
  for (guint i = 0; calls && i < calls->len; i++)
    {
      Held *h = g_ptr_array_index (calls, i);

      forward (h->object, h->invocation, h->method, h->process, h->thread, h->priority);
      g_variant_unref (h->priority);
      g_object_unref (h->object);
      g_free (h);
    }
}

static void
on_properties (GObject *source, GAsyncResult *result, gpointer user_data)
{
  g_autoptr(GVariant) reply = g_dbus_connection_call_finish (G_DBUS_CONNECTION (source), result, NULL);
  g_autoptr(GVariant) props = NULL;
  gint32 i;
  gint64 x;

  if (reply == NULL)
    return;
  props = g_variant_get_child_value (reply, 0);
  if (g_variant_lookup (props, "MaxRealtimePriority", "i", &i))
    limen_dbus_portal_realtime_set_max_realtime_priority (skeleton, i);
  if (g_variant_lookup (props, "MinNiceLevel", "i", &i))
    limen_dbus_portal_realtime_set_min_nice_level (skeleton, i);
  if (g_variant_lookup (props, "RTTimeUSecMax", "x", &x))
    limen_dbus_portal_realtime_set_rttime_usec_max (skeleton, x);
}

static void
on_rtkit_appeared (GDBusConnection *c, const char *name, const char *owner, gpointer user_data)
{
  rtkit_present = TRUE;
  set_rtkit_known ();
  g_dbus_connection_call (c, RTKIT_NAME, RTKIT_PATH, "org.freedesktop.DBus.Properties", "GetAll",
                          g_variant_new ("(s)", "org.freedesktop.RealtimeKit1"), G_VARIANT_TYPE ("(a{sv})"),
                          G_DBUS_CALL_FLAGS_NO_AUTO_START, RTKIT_TIMEOUT_MS, NULL, on_properties, NULL);
}

static void
on_rtkit_vanished (GDBusConnection *c, const char *name, gpointer user_data)
{
  rtkit_present = FALSE;
  set_rtkit_known ();
}

static void
on_system_bus (GObject *source, GAsyncResult *result, gpointer user_data)
{
  g_autoptr(GError) error = NULL;

  system_bus = g_bus_get_finish (result, &error);
  if (system_bus == NULL)
    {
      g_debug ("No system bus, so no RealtimeKit: %s", error->message);
      set_rtkit_known ();
      return;
    }
  /* RealtimeKit is activatable on real systems; watch with auto-start so it comes up. */
  g_bus_watch_name_on_connection (system_bus, RTKIT_NAME, G_BUS_NAME_WATCHER_FLAGS_AUTO_START,
                                  on_rtkit_appeared, on_rtkit_vanished, NULL, NULL);
}

/* Looks for RealtimeKit on the system bus, once: started shortly after the daemon serves
 * (deferred.h), or by the first Realtime call, which then waits for the answer. */
void
limen_realtime_start (void)
{
  static gboolean started;

  if (!started)
    g_bus_get (G_BUS_TYPE_SYSTEM, NULL, on_system_bus, NULL);
  started = TRUE;
}

/* org.freedesktop.portal.Realtime, forwarded to RealtimeKit on the system bus with the
 * caller's process and thread ids translated out of its sandbox. */
GDBusInterfaceSkeleton *
limen_realtime_new (LimenPortalContext *context)
{
  skeleton = limen_dbus_portal_realtime_skeleton_new ();
  limen_app_info_gate_skeleton (G_DBUS_INTERFACE_SKELETON (skeleton));
  limen_dbus_portal_realtime_set_version (skeleton, 1);
  g_signal_connect (skeleton, "handle-make-thread-realtime-with-pid", G_CALLBACK (handle_make_realtime), NULL);
  g_signal_connect (skeleton, "handle-make-thread-high-priority-with-pid",
                    G_CALLBACK (handle_make_high_priority), NULL);
  return G_DBUS_INTERFACE_SKELETON (skeleton);
}
