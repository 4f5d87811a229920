/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "portal.h"

#include "driver.h"

static void
sync_power_saver (GPowerProfileMonitor *monitor, GParamSpec *pspec, LimenDbusPortalPowerProfileMonitor *object)
{
  limen_dbus_portal_power_profile_monitor_set_power_saver_enabled (
    object, g_power_profile_monitor_get_power_saver_enabled (monitor));
}

/* Made on the first main-loop turn, off the startup path (see memory-monitor.c). A
 * property Get is dispatched on the main loop too, behind this idle, so no caller can
 * read power-saver-enabled before it is synced. */
static gboolean
create_monitor (gpointer user_data)
{
  LimenDbusPortalPowerProfileMonitor *object = user_data;
  GPowerProfileMonitor *monitor = g_power_profile_monitor_dup_default ();

  g_object_set_data_full (G_OBJECT (object), "limen-monitor", monitor, g_object_unref);
  sync_power_saver (monitor, NULL, object);
  g_signal_connect_object (monitor, "notify::power-saver-enabled", G_CALLBACK (sync_power_saver), object, 0);
  return G_SOURCE_REMOVE;
}

/* org.freedesktop.portal.PowerProfileMonitor on GPowerProfileMonitor (power-profiles-daemon). */
GDBusInterfaceSkeleton *
limen_power_profile_monitor_new (LimenPortalContext *context)
{
  GDBusInterfaceSkeleton *object = limen_driver_offer (context, limen_dbus_portal_power_profile_monitor_skeleton_new (), 1, NULL);

  g_idle_add_full (G_PRIORITY_DEFAULT, create_monitor, g_object_ref (object), g_object_unref);
  return object;
}
