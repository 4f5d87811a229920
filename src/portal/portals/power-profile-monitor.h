/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once
#include "portal.h"
/* org.freedesktop.portal.PowerProfileMonitor on GPowerProfileMonitor (power-profiles-daemon). */
GDBusInterfaceSkeleton *limen_power_profile_monitor_new (LimenPortalContext *context);
