/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "portal.h"

#include "driver.h"
#include "prepare.h"

static void
sync_power_saver (GPowerProfileMonitor *monitor, GParamSpec *pspec, LimenDbusPortalPowerProfileMonitor *object)
{
  limen_dbus_portal_power_profile_monitor_set_power_saver_enabled (
    object, g_power_profile_monitor_get_power_saver_enabled (monitor));
}

static GPowerProfileMonitor *monitor;

/* Made in limen-portal's prepare step, beside the session bus connection (see
 * memory-monitor.c). GIO asks power-profiles-daemon without waiting; its answer comes as a
 * property notification on the main loop. */
void
limen_power_profile_monitor_prepare (void)
{
  if (monitor == NULL)
    monitor = g_power_profile_monitor_dup_default ();
}

/* org.freedesktop.portal.PowerProfileMonitor on GPowerProfileMonitor (power-profiles-daemon). */
GDBusInterfaceSkeleton *
limen_power_profile_monitor_new (LimenPortalContext *context)
{
  GDBusInterfaceSkeleton *object = limen_driver_offer (context, limen_dbus_portal_power_profile_monitor_skeleton_new (), 1, NULL);

  limen_power_profile_monitor_prepare ();
  sync_power_saver (monitor, NULL, LIMEN_DBUS_PORTAL_POWER_PROFILE_MONITOR (object));
  g_signal_connect_object (monitor, "notify::power-saver-enabled", G_CALLBACK (sync_power_saver), object, 0);
  return object;
}
