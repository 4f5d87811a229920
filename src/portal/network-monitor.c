/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "network-monitor.h"

#include <string.h>

#define CAN_REACH_TIMEOUT_S 10

static GNetworkMonitor *monitor;

gboolean
limen_network_check_access (GDBusMethodInvocation *invocation, LimenAppInfo *info)
{
  GKeyFile *md = limen_app_info_get_metadata (info);
  gboolean ok = TRUE;

  switch (limen_app_info_get_kind (info))
    {
    case LIMEN_APP_KIND_HOST:
      break;
    case LIMEN_APP_KIND_FLATPAK:
      {
        g_auto(GStrv) shared = md ? g_key_file_get_string_list (md, "Context", "shared", NULL, NULL) : NULL;
        ok = shared && g_strv_contains ((const char * const *) shared, "network");
        break;
      }
    case LIMEN_APP_KIND_SNAP:
      ok = md && g_key_file_get_boolean (md, "Snap Info", "HasNetworkStatus", NULL);
      break;
    }
  if (!ok)
    g_dbus_method_invocation_return_error_literal (invocation, LIMEN_ERROR, LIMEN_ERROR_NOT_ALLOWED,
                                                   "This call is not available to applications without network access");
  return ok;
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
                                                            g_network_monitor_get_network_available (monitor));
  return G_DBUS_METHOD_INVOCATION_HANDLED;
}

static gboolean
handle_get_metered (LimenDbusPortalNetworkMonitor *object, GDBusMethodInvocation *invocation)
{
  CHECK_ACCESS (invocation);
  limen_dbus_portal_network_monitor_complete_get_metered (object, invocation,
                                                          g_network_monitor_get_network_metered (monitor));
  return G_DBUS_METHOD_INVOCATION_HANDLED;
}

static gboolean
handle_get_connectivity (LimenDbusPortalNetworkMonitor *object, GDBusMethodInvocation *invocation)
{
  CHECK_ACCESS (invocation);
  limen_dbus_portal_network_monitor_complete_get_connectivity (object, invocation,
                                                               g_network_monitor_get_connectivity (monitor));
  return G_DBUS_METHOD_INVOCATION_HANDLED;
}

static gboolean
handle_get_status (LimenDbusPortalNetworkMonitor *object, GDBusMethodInvocation *invocation)
{
  GVariantDict dict;

  CHECK_ACCESS (invocation);
  g_variant_dict_init (&dict, NULL);
  g_variant_dict_insert (&dict, "available", "b", g_network_monitor_get_network_available (monitor));
  g_variant_dict_insert (&dict, "metered", "b", g_network_monitor_get_network_metered (monitor));
  g_variant_dict_insert (&dict, "connectivity", "u", (guint32) g_network_monitor_get_connectivity (monitor));
  limen_dbus_portal_network_monitor_complete_get_status (object, invocation, g_variant_dict_end (&dict));
  return G_DBUS_METHOD_INVOCATION_HANDLED;
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

GDBusInterfaceSkeleton *
limen_network_monitor_new (LimenPortalContext *context)
{
  LimenDbusPortalNetworkMonitor *object = limen_dbus_portal_network_monitor_skeleton_new ();

  monitor = g_network_monitor_get_default ();
  limen_dbus_portal_network_monitor_set_version (object, 3);
  g_signal_connect (object, "handle-get-available", G_CALLBACK (handle_get_available), NULL);
  g_signal_connect (object, "handle-get-metered", G_CALLBACK (handle_get_metered), NULL);
  g_signal_connect (object, "handle-get-connectivity", G_CALLBACK (handle_get_connectivity), NULL);
  g_signal_connect (object, "handle-get-status", G_CALLBACK (handle_get_status), NULL);
  g_signal_connect (object, "handle-can-reach", G_CALLBACK (handle_can_reach), NULL);
  g_signal_connect_object (monitor, "network-changed", G_CALLBACK (on_network_changed), object, 0);
  g_signal_connect_object (monitor, "notify::network-metered", G_CALLBACK (on_network_notify), object, 0);
  g_signal_connect_object (monitor, "notify::connectivity", G_CALLBACK (on_network_notify), object, 0);
  return G_DBUS_INTERFACE_SKELETON (object);
}
