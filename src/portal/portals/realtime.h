/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once
#include "portal.h"
/* org.freedesktop.portal.Realtime, forwarded to RealtimeKit on the system bus with the
 * caller's process and thread ids translated out of its sandbox. */
GDBusInterfaceSkeleton *limen_realtime_new (LimenPortalContext *context);
