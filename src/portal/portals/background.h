/* Limen — org.freedesktop.portal.Background.
 * SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include "portal.h"

G_BEGIN_DECLS

/* RequestBackground: permission (store, then the Access dialog) and autostart through the backend. */
GDBusInterfaceSkeleton *limen_background_new (LimenPortalContext *context);

G_END_DECLS
