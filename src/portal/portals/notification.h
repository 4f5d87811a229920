/* Limen — org.freedesktop.portal.Notification.
 * SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include "portal.h"

G_BEGIN_DECLS

/* AddNotification/RemoveNotification with every field checked (icons by the separate
 * limen-validate-icon process), ActionInvoked routed back to the app alone. */
GDBusInterfaceSkeleton *limen_notification_new (LimenPortalContext *context);

G_END_DECLS
