/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "portal.h"

#include "driver.h"
#include "deferred.h"

static void
on_low_memory_warning (GMemoryMonitor *monitor, GMemoryMonitorWarningLevel level,
                       LimenDbusPortalMemoryMonitor *object)
{
  limen_dbus_portal_memory_monitor_emit_low_memory_warning (object, (guchar) level);
}

static GMemoryMonitor *monitor;
static LimenDbusPortalMemoryMonitor *skeleton;

/* The interface has no state to read, only a signal; GIO's monitor lives as long as the
 * daemon. */
void
limen_memory_monitor_start (void)
{
  if (monitor != NULL || skeleton == NULL)
    return;
  monitor = g_memory_monitor_dup_default ();
  g_signal_connect_object (monitor, "low-memory-warning", G_CALLBACK (on_low_memory_warning), skeleton, 0);
}

/* org.freedesktop.portal.MemoryMonitor on GMemoryMonitor (low-memory-monitor). */
GDBusInterfaceSkeleton *
limen_memory_monitor_new (LimenPortalContext *context)
{
  GDBusInterfaceSkeleton *object = limen_driver_offer (context, limen_dbus_portal_memory_monitor_skeleton_new (), 1, NULL);

  /* Started by limen_memory_monitor_start() (deferred.h). */
  skeleton = LIMEN_DBUS_PORTAL_MEMORY_MONITOR (object);
  return object;
}
