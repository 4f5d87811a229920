/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "network-monitor.h"

#include "fast-path.h"

#include <string.h>

#define CAN_REACH_TIMEOUT_S 10

static GNetworkMonitor *monitor;

/* GIO's monitor lives on the main thread; these copies are what other threads read. */
static gint state_available, state_metered, state_connectivity;

static void
sync_state (void)
{
  g_atomic_int_set (&state_available, g_network_monitor_get_network_available (monitor));
  g_atomic_int_set (&state_metered, g_network_monitor_get_network_metered (monitor));
  g_atomic_int_set (&state_connectivity, g_network_monitor_get_connectivity (monitor));
}

static GVariant *
status_dict (void)
{
  GVariantDict dict;

  g_variant_dict_init (&dict, NULL);
  g_variant_dict_insert (&dict, "available", "b", (gboolean) g_atomic_int_get (&state_available));
  g_variant_dict_insert (&dict, "metered", "b", (gboolean) g_atomic_int_get (&state_metered));
  g_variant_dict_insert (&dict, "connectivity", "u", (guint32) g_atomic_int_get (&state_connectivity));
  return g_variant_dict_end (&dict);
}

static gboolean
network_access_allowed (LimenAppInfo *info)
{
  GKeyFile *md = limen_app_info_get_metadata (info);

  switch (limen_app_info_get_kind (info))
    {
    case LIMEN_APP_KIND_HOST:
      return TRUE;
    case LIMEN_APP_KIND_FLATPAK:
      {
        g_auto(GStrv) shared = md ? g_key_file_get_string_list (md, "Context", "shared", NULL, NULL) : NULL;
        return shared && g_strv_contains ((const char * const *) shared, "network");
      }
    case LIMEN_APP_KIND_SNAP:
      return md && g_key_file_get_boolean (md, "Snap Info", "HasNetworkStatus", NULL);
    }
  return FALSE;
}

gboolean
limen_network_check_access (GDBusMethodInvocation *invocation, LimenAppInfo *info)
{
  if (network_access_allowed (info))
    return TRUE;
  g_dbus_method_invocation_return_error_literal (invocation, LIMEN_ERROR, LIMEN_ERROR_NOT_ALLOWED,
                                                 "This call is not available to applications without network access");
  return FALSE;
}

#define CHECK_ACCESS(invocation)                             \
  LIMEN_GET_APP_INFO_OR_RETURN (invocation, info);           \
  if (!limen_network_check_access (invocation, info))              \
    return G_DBUS_METHOD_INVOCATION_HANDLED

static gboolean
handle_get_available (LimenDbusPortalNetworkMonitor *object, GDBusMethodInvocation *invocation)
{
  CHECK_ACCESS (invocation);
  limen_dbus_portal_network_monitor_complete_get_available (object, invocation,
                                                            g_atomic_int_get (&state_available));
  return G_DBUS_METHOD_INVOCATION_HANDLED;
}

static gboolean
handle_get_metered (LimenDbusPortalNetworkMonitor *object, GDBusMethodInvocation *invocation)
{
  CHECK_ACCESS (invocation);
  limen_dbus_portal_network_monitor_complete_get_metered (object, invocation,
                                                          g_atomic_int_get (&state_metered));
  return G_DBUS_METHOD_INVOCATION_HANDLED;
}

static gboolean
handle_get_connectivity (LimenDbusPortalNetworkMonitor *object, GDBusMethodInvocation *invocation)
{
  CHECK_ACCESS (invocation);
  limen_dbus_portal_network_monitor_complete_get_connectivity (object, invocation,
                                                               g_atomic_int_get (&state_connectivity));
  return G_DBUS_METHOD_INVOCATION_HANDLED;
}

static gboolean
handle_get_status (LimenDbusPortalNetworkMonitor *object, GDBusMethodInvocation *invocation)
{
  CHECK_ACCESS (invocation);
  limen_dbus_portal_network_monitor_complete_get_status (object, invocation, status_dict ());
  return G_DBUS_METHOD_INVOCATION_HANDLED;
}

/* Worker-thread answers (fast-path.h); refusals are left to the main loop. */
static GDBusMessage *
fast_reply (GDBusMessage *call, LimenAppInfo *info, GVariant *body)
{
  GDBusMessage *reply;

  if (!network_access_allowed (info))
    {
      g_variant_unref (g_variant_ref_sink (body));
      return NULL;
    }
  reply = g_dbus_message_new_method_reply (call);
  g_dbus_message_set_body (reply, g_variant_new_tuple (&body, 1));
  return reply;
}

static GDBusMessage *
fast_get_status (GDBusMessage *call, LimenAppInfo *info)
{
  return fast_reply (call, info, status_dict ());
}

static GDBusMessage *
fast_get_available (GDBusMessage *call, LimenAppInfo *info)
{
  return fast_reply (call, info, g_variant_new_boolean (g_atomic_int_get (&state_available)));
}

static GDBusMessage *
fast_get_metered (GDBusMessage *call, LimenAppInfo *info)
{
  return fast_reply (call, info, g_variant_new_boolean (g_atomic_int_get (&state_metered)));
}

static GDBusMessage *
fast_get_connectivity (GDBusMessage *call, LimenAppInfo *info)
{
  return fast_reply (call, info, g_variant_new_uint32 (g_atomic_int_get (&state_connectivity)));
}

typedef struct {
  LimenDbusPortalNetworkMonitor *object;
  GDBusMethodInvocation         *invocation;
  GCancellable                  *timeout_cancellable;
  guint                          timeout_id;
} CanReachData;

static gboolean
on_can_reach_timeout (gpointer user_data)
{
  CanReachData *data = user_data;

  data->timeout_id = 0;
  g_cancellable_cancel (data->timeout_cancellable);
  return G_SOURCE_REMOVE;
}

static void
on_can_reach_done (GObject *source, GAsyncResult *result, gpointer user_data)
{
  CanReachData *data = user_data;
  g_autoptr(GError) error = NULL;
  gboolean reachable = g_network_monitor_can_reach_finish (monitor, result, &error);

  if (data->timeout_id)
    g_source_remove (data->timeout_id);
  /* Unreachable and unresolvable are both a plain "no"; only our own timeout is noted. */
  if (error && !g_error_matches (error, G_IO_ERROR, G_IO_ERROR_CANCELLED))
    g_debug ("CanReach: %s", error->message);
  limen_dbus_portal_network_monitor_complete_can_reach (data->object, data->invocation, reachable);
  g_object_unref (data->timeout_cancellable);
  g_object_unref (data->object);
  g_free (data);
}

static gboolean
handle_can_reach (LimenDbusPortalNetworkMonitor *object, GDBusMethodInvocation *invocation,
                  const char *hostname, guint port)
{
  g_autoptr(GSocketConnectable) address = NULL;
  CanReachData *data;

  CHECK_ACCESS (invocation);
  if (port == 0 || port > 65535 || *hostname == '\0' || strlen (hostname) > 1024 ||
      !g_utf8_validate (hostname, -1, NULL))
    {
      g_dbus_method_invocation_return_error_literal (invocation, LIMEN_ERROR, LIMEN_ERROR_INVALID_ARGUMENT,
                                                     port == 0 || port > 65535 ? "Invalid port" : "Invalid hostname");
      return G_DBUS_METHOD_INVOCATION_HANDLED;
    }
  address = g_network_address_new (hostname, (guint16) port);
  data = g_new0 (CanReachData, 1);
  data->object = g_object_ref (object);
  data->invocation = invocation;
  data->timeout_cancellable = g_cancellable_new ();
  data->timeout_id = g_timeout_add_seconds (CAN_REACH_TIMEOUT_S, on_can_reach_timeout, data);
  g_network_monitor_can_reach_async (monitor, address, data->timeout_cancellable, on_can_reach_done, data);
  return G_DBUS_METHOD_INVOCATION_HANDLED;
}

static guint changed_idle;

static gboolean
emit_changed (gpointer user_data)
{
  changed_idle = 0;
  limen_dbus_portal_network_monitor_emit_changed (user_data);
  return G_SOURCE_REMOVE;
}

/* GIO reports availability through network-changed but metered and connectivity only as
 * property notifications; apps want one "changed" for any of them, once per burst. */
static void
queue_changed (LimenDbusPortalNetworkMonitor *object)
{
  sync_state ();
  if (changed_idle == 0)
    changed_idle = g_idle_add (emit_changed, object);
}

static void
on_network_changed (GNetworkMonitor *m, gboolean available, LimenDbusPortalNetworkMonitor *object)
{
  queue_changed (object);
}

static void
on_network_notify (GNetworkMonitor *m, GParamSpec *pspec, LimenDbusPortalNetworkMonitor *object)
{
  queue_changed (object);
}

void
limen_network_monitor_prepare (void)
{
  monitor = g_network_monitor_get_default ();
}

GDBusInterfaceSkeleton *
limen_network_monitor_new (LimenPortalContext *context)
{
  LimenDbusPortalNetworkMonitor *object = limen_dbus_portal_network_monitor_skeleton_new ();
  limen_app_info_gate_skeleton (G_DBUS_INTERFACE_SKELETON (object));

  if (monitor == NULL)
    limen_network_monitor_prepare ();
  sync_state ();
  limen_dbus_portal_network_monitor_set_version (object, 3);
  g_signal_connect (object, "handle-get-available", G_CALLBACK (handle_get_available), NULL);
  g_signal_connect (object, "handle-get-metered", G_CALLBACK (handle_get_metered), NULL);
  g_signal_connect (object, "handle-get-connectivity", G_CALLBACK (handle_get_connectivity), NULL);
  g_signal_connect (object, "handle-get-status", G_CALLBACK (handle_get_status), NULL);
  g_signal_connect (object, "handle-can-reach", G_CALLBACK (handle_can_reach), NULL);
  g_signal_connect_object (monitor, "network-changed", G_CALLBACK (on_network_changed), object, 0);
  g_signal_connect_object (monitor, "notify::network-metered", G_CALLBACK (on_network_notify), object, 0);
  g_signal_connect_object (monitor, "notify::connectivity", G_CALLBACK (on_network_notify), object, 0);
  limen_fast_path_add ("org.freedesktop.portal.NetworkMonitor", "GetStatus", "", fast_get_status);
  limen_fast_path_add ("org.freedesktop.portal.NetworkMonitor", "GetAvailable", "", fast_get_available);
  limen_fast_path_add ("org.freedesktop.portal.NetworkMonitor", "GetMetered", "", fast_get_metered);
  limen_fast_path_add ("org.freedesktop.portal.NetworkMonitor", "GetConnectivity", "", fast_get_connectivity);
  return G_DBUS_INTERFACE_SKELETON (object);
}
