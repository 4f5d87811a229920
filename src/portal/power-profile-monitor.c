/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "power-profile-monitor.h"

static void
sync_power_saver (GPowerProfileMonitor *monitor, GParamSpec *pspec, LimenDbusPortalPowerProfileMonitor *object)
{
  limen_dbus_portal_power_profile_monitor_set_power_saver_enabled (
    object, g_power_profile_monitor_get_power_saver_enabled (monitor));
}

GDBusInterfaceSkeleton *
limen_power_profile_monitor_new (LimenPortalContext *context)
{
  LimenDbusPortalPowerProfileMonitor *object = limen_dbus_portal_power_profile_monitor_skeleton_new ();
  GPowerProfileMonitor *monitor = g_power_profile_monitor_dup_default ();

  limen_dbus_portal_power_profile_monitor_set_version (object, 1);
  g_object_set_data_full (G_OBJECT (object), "limen-monitor", monitor, g_object_unref);
  sync_power_saver (monitor, NULL, object);
  g_signal_connect_object (monitor, "notify::power-saver-enabled", G_CALLBACK (sync_power_saver), object, 0);
  return G_DBUS_INTERFACE_SKELETON (object);
}
