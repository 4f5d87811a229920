/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "portal.h"

#include "driver.h"
#include "prepare.h"

static void
on_low_memory_warning (GMemoryMonitor *monitor, GMemoryMonitorWarningLevel level,
                       LimenDbusPortalMemoryMonitor *object)
{
  limen_dbus_portal_memory_monitor_emit_low_memory_warning (object, (guchar) level);
}

static GMemoryMonitor *monitor;

/* GIO's monitor talks to the system bus (low-memory-monitor) as it is made, so limen-portal
 * makes it in its prepare step, beside the session bus connection, rather than on the main
 * thread while the first calls come in. It lives as long as the daemon. */
void
limen_memory_monitor_prepare (void)
{
  if (monitor == NULL)
    monitor = g_memory_monitor_dup_default ();
}

/* org.freedesktop.portal.MemoryMonitor on GMemoryMonitor (low-memory-monitor). */
GDBusInterfaceSkeleton *
limen_memory_monitor_new (LimenPortalContext *context)
{
  GDBusInterfaceSkeleton *object = limen_driver_offer (context, limen_dbus_portal_memory_monitor_skeleton_new (), 1, NULL);

  /* The interface has no state to read, only a signal. */
  limen_memory_monitor_prepare ();
  g_signal_connect_object (monitor, "low-memory-warning", G_CALLBACK (on_low_memory_warning), object, 0);
  return object;
}
