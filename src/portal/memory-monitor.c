/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "memory-monitor.h"

static void
on_low_memory_warning (GMemoryMonitor *monitor, GMemoryMonitorWarningLevel level,
                       LimenDbusPortalMemoryMonitor *object)
{
  limen_dbus_portal_memory_monitor_emit_low_memory_warning (object, (guchar) level);
}

GDBusInterfaceSkeleton *
limen_memory_monitor_new (LimenPortalContext *context)
{
  LimenDbusPortalMemoryMonitor *object = limen_dbus_portal_memory_monitor_skeleton_new ();
  GMemoryMonitor *monitor = g_memory_monitor_dup_default ();

  limen_dbus_portal_memory_monitor_set_version (object, 1);
  /* The monitor lives as long as the daemon; the skeleton holds it. */
  g_object_set_data_full (G_OBJECT (object), "limen-monitor", monitor, g_object_unref);
  g_signal_connect_object (monitor, "low-memory-warning", G_CALLBACK (on_low_memory_warning), object, 0);
  return G_DBUS_INTERFACE_SKELETON (object);
}
