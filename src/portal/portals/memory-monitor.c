/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "portal.h"

#include "driver.h"

static void
on_low_memory_warning (GMemoryMonitor *monitor, GMemoryMonitorWarningLevel level,
                       LimenDbusPortalMemoryMonitor *object)
{
  limen_dbus_portal_memory_monitor_emit_low_memory_warning (object, (guchar) level);
}

/* GIO's monitor talks to the system bus (low-memory-monitor) as it is made; that is
 * startup cost no caller waits for, so it is made on the first main-loop turn, while the
 * bus processes our name request. The interface has no state to read, only a signal. */
static gboolean
create_monitor (gpointer user_data)
{
  LimenDbusPortalMemoryMonitor *object = user_data;
  GMemoryMonitor *monitor = g_memory_monitor_dup_default ();

  /* The monitor lives as long as the daemon; the skeleton holds it. */
  g_object_set_data_full (G_OBJECT (object), "limen-monitor", monitor, g_object_unref);
  g_signal_connect_object (monitor, "low-memory-warning", G_CALLBACK (on_low_memory_warning), object, 0);
  return G_SOURCE_REMOVE;
}

/* org.freedesktop.portal.MemoryMonitor on GMemoryMonitor (low-memory-monitor). */
GDBusInterfaceSkeleton *
limen_memory_monitor_new (LimenPortalContext *context)
{
  GDBusInterfaceSkeleton *object = limen_driver_offer (context, limen_dbus_portal_memory_monitor_skeleton_new (), 1, NULL);

  g_idle_add_full (G_PRIORITY_DEFAULT, create_monitor, g_object_ref (object), g_object_unref);
  return object;
}
