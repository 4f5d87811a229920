/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once
#include "portal.h"
/* org.freedesktop.portal.MemoryMonitor on GMemoryMonitor (low-memory-monitor). */
GDBusInterfaceSkeleton *limen_memory_monitor_new (LimenPortalContext *context);
