/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "portal.h"

#include "driver.h"
#include "deferred.h"

static void
sync_power_saver (GPowerProfileMonitor *monitor, GParamSpec *pspec, LimenDbusPortalPowerProfileMonitor *object)
{
  limen_dbus_portal_power_profile_monitor_set_power_saver_enabled (
    object, g_power_profile_monitor_get_power_saver_enabled (monitor));
}

static GPowerProfileMonitor *monitor;
static LimenDbusPortalPowerProfileMonitor *skeleton;

/* Until GIO's monitor hears from power-profiles-daemon (which it asks without waiting)
 * power-saver-enabled is FALSE; its answer comes as a property notification. */
void
limen_power_profile_monitor_start (void)
{
  if (monitor != NULL || skeleton == NULL)
    return;
  monitor = g_power_profile_monitor_dup_default ();
  sync_power_saver (monitor, NULL, skeleton);
  g_signal_connect_object (monitor, "notify::power-saver-enabled", G_CALLBACK (sync_power_saver), skeleton, 0);
}

/* org.freedesktop.portal.PowerProfileMonitor on GPowerProfileMonitor (power-profiles-daemon). */
GDBusInterfaceSkeleton *
limen_power_profile_monitor_new (LimenPortalContext *context)
{
  GDBusInterfaceSkeleton *object = limen_driver_offer (context, limen_dbus_portal_power_profile_monitor_skeleton_new (), 1, NULL);

  /* Started by limen_power_profile_monitor_start() (deferred.h). */
  skeleton = LIMEN_DBUS_PORTAL_POWER_PROFILE_MONITOR (object);
  return object;
}
