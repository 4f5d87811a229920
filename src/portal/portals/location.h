/* Limen — org.freedesktop.portal.Location.
 * SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include "portal.h"

G_BEGIN_DECLS

/* CreateSession/Start through GeoClue2 on the system bus, after the app's location
 * permission; without GeoClue, Start answers 2 at once and says so in the log. */
GDBusInterfaceSkeleton *limen_location_new (LimenPortalContext *context);

G_END_DECLS
